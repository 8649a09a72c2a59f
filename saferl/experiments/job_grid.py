"""``saferl sweep GRID.yaml``: a grid of training jobs, resumable, on Ray or one after another in this process.

A grid file names the algorithms, environments, seeds and steps of a benchmark and the config overrides
of its jobs::

    name: ctrpo-benchmark          # optional: the default output directory runs/sweep/NAME
    algos: [ctrpo, cpo, ppo_lag]
    envs: [PointGoal1, CarButton1]
    seeds: 5                       # seeds per job, vmapped inside its one program
    steps: 10000000                # environment steps per seed
    set:                           # overrides for every job, nested as in a config file; a LIST of
      - {constraint: {limit: 25}}  # mappings gives one job per entry
      - {constraint: {limit: 10}}

The jobs are algos x envs x set entries (an entry's ``seeds``/``total_steps`` win over the grid's); each
job is one :func:`saferl.training.runs.train` call, one process and one run directory
``OUT/runs/<algo>__<env>__<label>``, the label being the overrides that tell the entry from the others
when short (``limit=25``), else its index.  Everything is checked before anything is written or any Ray process
starts: unknown keys, algorithms and environments, and every job's resolved config
(:func:`saferl.training.config.resolve`); a run directory that holds a run with another config is refused.

:func:`run_jobs` runs (run_dir, resolved config) jobs and returns one status dict per job: a finished run
is skipped; an interrupted one with a checkpoint is resumed, a new one trained
(:func:`saferl.training.reuse.train_or_resume`); a job that fails is reported with its error and
retried (once by default), without stopping the others.  ``OUT/sweep.json`` (written atomically, after
every job) lists every job: run directory, config hash, status (trained, resumed, skipped, failed or, while
the sweep runs, pending), error and the final return and cost per seed from its summary.json.  So an
interrupted sweep (Ctrl-C, a killed driver or node) is restarted with the same command and continues where
it stopped.  The Ray scheduling is :mod:`saferl.experiments.ray_runner` (Ray's task API: one task per job, no Tune:
the jobs are fixed up front, so Tune's search and trial schedulers have nothing to do).

What matches OmniSafe's ``ExperimentGrid`` (``omnisafe/common/experiment_grid.py``): a grid as data,
the product of its axes, one run directory per variant, named by the values that vary.  What differs and
why: the seeds of a job stay one vmapped program (OmniSafe's seeds are a grid key, one process each, in a
``ProcessPoolExecutor``); the axes are algorithms, environments and whole override entries (not a product
over every key: a benchmark's variants are a few named entries, and an in-program product over traced
values is the config's ``sweep`` section, :mod:`saferl.training.in_program_sweep`); an existing output directory is
continued (OmniSafe's ``run`` refuses it), so a sweep survives a killed driver or node; and jobs go to a Ray
cluster instead of one machine's process pool.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from saferl.algos import base as algos
from saferl.envs import base as envs
from saferl.experiments import ray_runner
from saferl.foundation.atomic_files import write_json_atomic
from saferl.foundation.errors import MissingExtraError, require
from saferl.training import config as configlib
from saferl.training import provenance, reuse

#: the keys of a grid file
GRID_KEYS = ("name", "algos", "envs", "seeds", "steps", "set")
_REQUIRED = ("algos", "envs", "seeds", "steps")
#: the longest override label used as a run directory's suffix (longer: the entry's index)
MAX_LABEL = 40
_LABEL_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-+=,")
STATUSES = ("trained", "resumed", "skipped", "failed", "pending")


class GridError(configlib.ConfigError):
    """A bad grid file; the message names the bad value and what is allowed."""


# --------------------------------------------------------------------------- the grid file


def load_grid(path: str | Path) -> dict:
    """The grid file at ``path``, checked: ``{"name", "algos", "envs", "seeds", "steps", "entries"}`` with
    ``entries`` the list of override mappings (one mapping when ``set`` is one, ``[{}]`` without ``set``)."""
    path = Path(path)
    raw = configlib.load_yaml(path)  # one-line ConfigError for an unreadable or non-mapping file
    where = f"grid file {str(path)!r}"
    unknown = sorted(set(raw) - set(GRID_KEYS))
    if unknown:
        raise GridError(f"{where}: unknown key {unknown[0]!r}; allowed: {', '.join(GRID_KEYS)}")
    missing = [k for k in _REQUIRED if k not in raw]
    if missing:
        raise GridError(
            f"{where}: missing {missing[0]!r} (a grid file gives {', '.join(_REQUIRED)}, optionally name and set)"
        )
    grid = {"name": _name(raw.get("name", path.stem), where)}
    grid["algos"] = []
    for algo in _names(raw["algos"], "algos", where):
        try:
            name = algos.get(algo).name
        except ValueError:
            _unknown("algorithm", algo, sorted(algos.registered()), where)
        if name in grid["algos"]:
            raise GridError(f"{where}: algos lists {name} twice (as {algo!r})")
        grid["algos"].append(name)
    known_envs = sorted(envs.registered())
    grid["envs"] = []
    for env in _names(raw["envs"], "envs", where):
        if env.startswith("gym:"):
            raise GridError(
                f"{where}: envs entry {env!r}: Gymnasium environments train through the host bridge, "
                f"which saferl sweep does not run; use a compiled environment: {', '.join(known_envs)}"
            )
        grid["envs"].append(env if env in known_envs else _unknown("environment", env, known_envs, where))
    for key in ("seeds", "steps"):
        grid[key] = _whole(raw[key], key, where)
    grid["entries"] = _entries({} if raw.get("set") is None else raw["set"], where)
    return grid


def _unknown(what: str, name: str, known: list[str], where: str):
    raise GridError(f"{where}: unknown {what} {name!r}; known: {', '.join(known)}")


def _name(value, where: str) -> str:
    text = str(value)
    if not text or not set(text) <= (_LABEL_CHARS - set("=,+")) | {"_"} or text.startswith("."):
        raise GridError(f"{where}: name must be letters, digits, '.', '-' or '_' (a directory name), got {value!r}")
    return text


def _names(value, key: str, where: str) -> list[str]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) and v for v in values):
        raise GridError(f"{where}: {key} must be a name or a non-empty list of names, got {value!r}")
    if len(set(values)) != len(values):
        raise GridError(f"{where}: {key} lists {next(v for v in values if values.count(v) > 1)!r} twice")
    return list(values)


def _whole(value, key: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not float(value).is_integer() or value < 1:
        raise GridError(f"{where}: {key} must be a whole number >= 1, got {value!r}")
    return int(value)


def _entries(value, where: str) -> list[dict]:
    entries = [value] if isinstance(value, dict) else value
    if not isinstance(entries, list) or not entries:
        raise GridError(f"{where}: set must be a mapping of overrides or a non-empty list of them, got {value!r}")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise GridError(f"{where}: set entry {i} must be a mapping of overrides, got {entry!r}")
        axes = sorted(set(entry) & {"algo", "env"})
        if axes:
            raise GridError(f"{where}: set entry {i} sets {axes[0]!r}; the grid's algos and envs give it")
    return entries


def flat_overrides(entry: dict, prefix: str = "") -> dict[str, object]:
    """``{"constraint": {"limit": 10}}`` -> ``{"constraint.limit": 10}`` (dotted key -> leaf value)."""
    out = {}
    for key, value in entry.items():
        if isinstance(value, dict) and value:
            out.update(flat_overrides(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def override_label(pairs: dict[str, object]) -> str:
    """``{"constraint.limit": 10, "seed": 3}`` -> ``"limit=10,seed=3"`` (leaf names; lists joined by ``+``;
    characters other than letters, digits and ``.-+=,`` as ``_``)."""

    def text(value):
        if isinstance(value, list):
            return "+".join(text(v) for v in value)
        if isinstance(value, float):
            return f"{value:g}"
        return str(value).lower() if isinstance(value, bool) else str(value)

    label = ",".join(f"{key.rsplit('.', 1)[-1]}={text(value)}" for key, value in pairs.items())
    return "".join(c if c in _LABEL_CHARS else "_" for c in label)


def entry_labels(entries: list[dict]) -> list[str]:
    """One run-directory suffix per entry: the overrides it does not share with every other entry
    (:func:`override_label`) when that is not empty, at most :data:`MAX_LABEL` characters and unique among the
    entries; else its index."""
    flat = [flat_overrides(e) for e in entries]
    shared = {k: v for k, v in flat[0].items() if all(k in f and f[k] == v for f in flat)}  # one entry: all
    labels = [override_label({k: v for k, v in f.items() if k not in shared}) for f in flat]
    return [
        label if label and len(label) <= MAX_LABEL and labels.count(label) == 1 else str(i)
        for i, label in enumerate(labels)
    ]


def grid_jobs(grid: dict, out: Path) -> list[tuple[Path, dict]]:
    """``(run_dir, resolved config)`` per job, algos x envs x entries in that order; every config resolved (a bad
    override raises a one-line :class:`GridError` naming the job) and no two alike."""
    out = Path(out)
    labels = entry_labels(grid["entries"])
    jobs, seen = [], {}
    for algo in grid["algos"]:
        for env in grid["envs"]:
            for i, (entry, label) in enumerate(zip(grid["entries"], labels)):
                user = configlib.merge(
                    {"algo": algo, "env": env, "seeds": grid["seeds"], "total_steps": grid["steps"]}, entry
                )
                try:
                    cfg = configlib.resolve(user)
                except ValueError as err:
                    raise GridError(f"set entry {i} for {algo} on {env}: {err}") from None
                name = f"{algo}__{env}__{label}"
                digest = provenance.config_hash(cfg)
                if digest in seen:
                    raise GridError(
                        f"set entries {seen[digest]} and {i} give {algo} on {env} the same config; drop one"
                    )
                seen[digest] = i
                jobs.append((out / "runs" / name, cfg))
    return jobs


# --------------------------------------------------------------------------- running jobs


def job_result(
    run_dir: Path, cfg: dict, status: str, summary: dict | None = None, error: str | None = None, attempts: int = 0
) -> dict:
    """A job's entry of sweep.json: what it is, how it went and, when it has a summary, its final numbers (per
    seed; an in-program sweep's per grid point too)."""

    def per_seed(final: dict) -> dict:
        return {f"final_{m}": (final.get(f"episode_{m}") or {}).get("per_seed") for m in ("return", "cost")}

    summary = summary or {}
    result = {
        "run_dir": str(run_dir),
        "algo": cfg["algo"],
        "env": cfg["env"],
        "seeds": cfg["seeds"],
        "config_hash": provenance.config_hash(cfg),
        "status": status,
        "error": error,
        "attempts": attempts,
        "env_steps": summary.get("env_steps"),
        "training_seconds": summary.get("training_seconds", summary.get("wall_seconds")),
        **per_seed(summary.get("final") or {}),
    }
    if summary.get("grid"):
        result["grid"] = [{"label": point["label"], **per_seed(point["final"])} for point in summary["grid"]]
    return result


def run_jobs(
    jobs: list[tuple[Path, dict]],
    *,
    address: str | None = None,
    use_ray: bool = True,
    retries: int = 1,
    show_progress: bool = False,
    on_update=None,
) -> list[dict]:
    """Run ``jobs`` = [(run_dir, resolved config)]; one status dict per job (:func:`job_result`), in their order.

    Finished runs are skipped (checked here, before any Ray process starts: a run directory that holds another
    config raises :class:`saferl.training.run_directory.RunError` and nothing runs); the rest run on Ray (``use_ray``:
    a local Ray instance, or the cluster at ``address``) or one after another in this process.  A failing job is retried
    ``retries`` times (resuming from its checkpoint when it has one) and then reported ``failed`` with its error
    (a job that succeeded on a retry keeps the error of the attempt before in ``error``).
    ``on_update(results)`` is called after the skip check and after every finished job (``saferl sweep`` writes
    sweep.json there).  Inside a reproduce target every run is recorded (:func:`saferl.reproduce.framework.record_run`).
    """
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ValueError(f"retries must be a whole number >= 0, got {retries!r}")
    jobs = [(Path(run_dir), cfg) for run_dir, cfg in jobs]
    summaries = [reuse.finished_summary(run_dir, cfg) for run_dir, cfg in jobs]  # refuses a clash before anything runs
    results = []
    for (run_dir, cfg), summary in zip(jobs, summaries):
        results.append(job_result(run_dir, cfg, "pending" if summary is None else "skipped", summary))
        if summary is not None:
            reuse.record_run(run_dir, cfg, summary, "reused")
    todo = [i for i, r in enumerate(results) if r["status"] == "pending"]
    notify = on_update or (lambda results: None)
    notify(results)

    def finish(i: int, outcome: tuple[str, dict] | None, error: str | None, attempts: int, recorded: bool) -> None:
        run_dir, cfg = jobs[i]
        if outcome is None:
            results[i] = job_result(run_dir, cfg, "failed", error=error, attempts=attempts)
        else:
            status, summary = outcome
            results[i] = job_result(run_dir, cfg, status, summary, error=error, attempts=attempts)
            if not recorded:
                reuse.record_run(run_dir, cfg, summary, {"skipped": "reused"}.get(status, status))
        notify(results)

    if not todo:
        return results
    if use_ray:
        ray_runner.run(jobs, todo, finish, address=address, retries=retries, show_progress=show_progress)
        return results
    for i in todo:
        run_dir, cfg = jobs[i]
        errors = []
        for attempt in range(1, retries + 2):
            try:
                outcome = ray_runner.train_job(run_dir, cfg, show_progress)
            except Exception as err:  # a failing job is reported and retried; the others still run
                errors.append(ray_runner.error_text(err))
                continue
            finish(i, outcome, errors[-1] if errors else None, attempt, recorded=True)  # train_or_resume recorded it
            break
        else:
            finish(i, None, errors[-1], retries + 1, recorded=True)
    return results


# --------------------------------------------------------------------------- the command


#: ``saferl sweep``'s help line, and its GRID.yaml argument's
SWEEP_HELP = "train a grid of jobs (GRID.yaml) on Ray or one after another; resumable: finished runs are skipped"
GRID_HELP = "algos, envs, seeds, steps, set (overrides; a list: one job per entry), optionally name"


def add_parser(subparsers) -> None:
    """Register ``saferl sweep`` on an argparse ``subparsers`` object."""
    p = subparsers.add_parser("sweep", help=SWEEP_HELP)
    p.add_argument("grid", metavar="GRID.yaml", help=GRID_HELP)
    p.add_argument("--out", help="output directory: runs/ and sweep.json (default runs/sweep/NAME)")
    p.add_argument("--address", help="join the Ray cluster at this address (default: start a local Ray instance)")
    p.add_argument("--local", action="store_true", help="no Ray: run the jobs one after another in this process")
    p.add_argument("--retries", type=int, default=1, help="retries of a failing job (default 1)")
    p.add_argument("--progress", action="store_true", help="show every run's progress lines")
    p.set_defaults(func=command)


def command(args) -> int:
    """``saferl sweep``: exit status 0 when every job finished, 1 when one failed, 2 on bad input (one line on
    stderr, nothing written, no Ray process started)."""
    try:
        if args.local and args.address:
            raise ValueError(f"--local runs without Ray; --address {args.address} names a Ray cluster: give one")
        if args.retries < 0:
            raise ValueError(f"--retries must be >= 0, got {args.retries}")
        grid = load_grid(args.grid)
        out = Path(args.out) if args.out else Path("runs") / "sweep" / grid["name"]
        jobs = grid_jobs(grid, out)
        for run_dir, cfg in jobs:
            reuse.finished_summary(run_dir, cfg)  # another config in a run directory: refused now
        if not args.local:
            require("ray", "ray", "saferl sweep (without --local)")
    except (ValueError, MissingExtraError) as err:
        print(f"saferl: error: {err}", file=sys.stderr)
        return 2
    start, printed = time.time(), set()
    header = {
        "name": grid["name"],
        "grid_file": str(args.grid),
        "git_commit": provenance.git_commit(),
        "grid": {k: grid[k] for k in ("algos", "envs", "seeds", "steps")} | {"set": grid["entries"]},
    }

    def on_update(results):
        write_sweep_json(out, header, results, time.time() - start)
        for i, r in enumerate(results):
            if r["status"] != "pending" and i not in printed:
                printed.add(i)
                _print_job(i, len(results), out, r)

    try:
        results = run_jobs(
            jobs,
            address=args.address,
            use_ray=not args.local,
            retries=args.retries,
            show_progress=args.progress,
            on_update=on_update,
        )
    except KeyboardInterrupt:
        print(f"saferl: sweep interrupted; the same command continues it ({out / 'sweep.json'})", file=sys.stderr)
        return 130
    counts = count_statuses(results)
    print(
        f"sweep: {len(results)} jobs: {counts['trained']} trained, {counts['resumed']} resumed, "
        f"{counts['skipped']} skipped (finished before), {counts['failed']} failed; {out / 'sweep.json'}"
    )
    return 1 if counts["failed"] else 0


def count_statuses(results: list[dict]) -> dict[str, int]:
    return {s: sum(r["status"] == s for r in results) for s in STATUSES}


def write_sweep_json(out: Path, header: dict, results: list[dict], wall_seconds: float) -> None:
    """OUT/sweep.json, atomically: ``header`` (name, grid, commit), the counts and every job (run directories
    relative to ``out``)."""
    jobs = [{**r, "run_dir": os.path.relpath(r["run_dir"], out)} for r in results]
    write_json_atomic(
        Path(out) / "sweep.json",
        {**header, "wall_seconds": wall_seconds, "counts": count_statuses(results), "jobs": jobs},
    )


def _print_job(i: int, total: int, out: Path, r: dict) -> None:
    name = os.path.relpath(r["run_dir"], out)
    if r["status"] == "failed":
        print(f"[{i + 1}/{total}] failed {name} after {r['attempts']} attempts: {r['error']}", file=sys.stderr)
        return

    def mean(values):
        values = [v for v in values or [] if v is not None]
        return f"{sum(values) / len(values):.3f}" if values else "n/a"

    print(
        f"[{i + 1}/{total}] {r['status']} {name}: return {mean(r['final_return'])}, cost {mean(r['final_cost'])}",
        flush=True,
    )


if __name__ == "__main__":
    import argparse

    from saferl.foundation import jaxsetup

    parser = argparse.ArgumentParser(prog="saferl")
    add_parser(parser.add_subparsers(dest="command", required=True))
    parsed = parser.parse_args(["sweep", *sys.argv[1:]])
    jaxsetup.setup_process(driver=jaxsetup.is_ray_driver(parsed))  # as the command line
    sys.exit(parsed.func(parsed))
