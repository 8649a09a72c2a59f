"""Tabulate committed C-TRPO tables again from their carried runs, with today's tabulation, and list what changed.

    python benchmarks/retabulate_carried.py [--carried DIR] [--write] [--report PATH]

The runs behind ``docs/results/ctrpo-table1-cpu`` and ``ctrpo-fig3-cpu`` are kept in ``benchmarks/carried/
ctrpo-table1-cpu`` (config.yaml, progress.csv, summary.json per run; :mod:`benchmarks.carry_runs`).  This reads
them -- nothing is trained, and every run's config must be the one today's plan resolves -- and tabulates both
targets with the checked-out code (:func:`saferl.reproduce.ctrpo.table1.tabulate_table1`,
:func:`saferl.reproduce.ctrpo.fig3.tabulate_fig3`), their checks judged as ``saferl reproduce`` judges them.

Prints every row value and check that changed.  ``--write`` replaces each results.json's rows, settings, figures
and checks and records ``retabulated_by`` (this commit) and ``retabulated_from`` (the carried folder); the runs'
``git_commit`` (the commit that trained them) and ``runs`` stay.  ``--report PATH`` writes the changes as Markdown.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

import saferl.reproduce  # noqa: F401  (declares every target)
from saferl.analysis import logger_statistics
from saferl.foundation.atomic_files import write_json_atomic
from saferl.reproduce import deep_rl, framework
from saferl.reproduce.ctrpo import fig3, table1
from saferl.training import provenance, run_directory
from saferl.training.provenance import training_config

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from rejudge import _as_json, _text, changes  # noqa: E402

#: target -> (its tabulation from Table 1's entries, the committed folder it replaces)
TABLES = {
    "ctrpo-table1": (table1.tabulate_table1, "ctrpo-table1-cpu"),
    "ctrpo-fig3": (fig3.tabulate_fig3, "ctrpo-fig3-cpu"),
}


#: (setting, value in the kept runs, value today) -> the runs that differ so: the tables describe the runs as trained
CONFIG_DIFFERENCES: dict[tuple[str, str, str], list[str]] = {}


def _flat(config: dict, prefix: str = "") -> dict[str, object]:
    out = {}
    for key, value in config.items():
        out.update(_flat(value, f"{prefix}{key}.") if isinstance(value, dict) else {f"{prefix}{key}": value})
    return out


def carried_summary(cfg: dict, run_dir: Path) -> dict:
    """The kept run's summary.json; where its config differs from the one today's plan resolves (a default changed
    since it was trained), the difference is noted in :data:`CONFIG_DIFFERENCES`."""
    if not (run_dir / "summary.json").is_file():
        raise SystemExit(f"retabulate_carried: error: {run_dir} holds no finished run (no summary.json)")
    kept, today = _flat(training_config(run_directory.load_run_config(run_dir))), _flat(training_config(cfg))
    for key in sorted(set(kept) | set(today)):
        if kept.get(key) != today.get(key):
            noted = CONFIG_DIFFERENCES.setdefault((key, str(kept.get(key, "-")), str(today.get(key, "-"))), [])
            noted.append(f"{run_dir.parent.parent.name}/{run_dir.name}")
    return json.loads((run_dir / "summary.json").read_text())


def row_changes(before: list[dict], after: list[dict]) -> list[tuple[str, object, object]]:
    """``(row / field, before, after)`` for every number or word of a row that changed (rows matched by their
    method and task), rounded to 4 significant digits."""

    def key(row):
        return (row.get("env"), row.get("method"), row.get("label"))

    def rounded(value):
        return float(f"{value:.4g}") if isinstance(value, float) and np.isfinite(value) else value

    old = {key(r): r for r in before}
    out = []
    for row in after:
        previous = old.get(key(row), {})
        for field, value in row.items():
            if field in previous and rounded(previous[field]) != rounded(value):
                out.append((f"{row.get('env')} / {row.get('label')} / {field}", previous[field], value))
    return out


def added_fields(before: list[dict], after: list[dict]) -> list[str]:
    """The row fields the new tabulation has and the old one had in no row."""
    old = {field for row in before for field in row}
    return sorted({field for row in after for field in row} - old)


def retabulate(carried: Path, name: str, commit: str | None, write: bool) -> list[str]:
    tabulate, folder = TABLES[name]
    path = ROOT / "docs" / "results" / folder / "results.json"
    result = json.loads(path.read_text())
    target = framework.get(name)
    scale = target.scales[result["scale"]]
    entries = table1.train_grid(scale, carried, summary_of=carried_summary)
    with tempfile.TemporaryDirectory() as scratch:
        for task in result["settings"]["tasks"]:
            (Path(scratch) / task).mkdir()
        fresh = _as_json(tabulate(entries, scale, Path(scratch)))
        checks = _as_json(target.judge(fresh["rows"], result.get("runs") or []))
        if write:
            for figure in fresh["figures"]:
                (path.parent / figure).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(Path(scratch) / figure, path.parent / figure)
    changed_rows = row_changes(result["rows"], fresh["rows"])
    changed_checks = changes(result.get("checks") or {}, checks)
    lines = [f"## docs/results/{folder} ({name}, {result['scale']})", ""]
    lines += [f"{len(changed_rows)} row values and {len(changed_checks)} checks changed.", ""]
    added = added_fields(result["rows"], fresh["rows"])
    if added:
        lines += ["New row fields: " + ", ".join(f"`{field}`" for field in added) + ".", ""]
    for title, changed in (("row value", changed_rows), ("check", changed_checks)):
        if changed:
            lines += [f"| {title} | before | after |", "|---|---|---|"]
            lines += [f"| {what} | {_text(_as_json(a))} | {_text(_as_json(b))} |" for what, a, b in changed]
            lines.append("")
    print(f"{path.relative_to(ROOT)}: {len(changed_rows)} row values, {len(changed_checks)} checks changed")
    if write:
        result.update(rows=fresh["rows"], settings=fresh["settings"], figures=fresh["figures"], checks=checks)
        result.update(checks_judged_by=commit, retabulated_by=commit, retabulated_from=str(carried.relative_to(ROOT)))
        write_json_atomic(path, result)
    return lines


def reconstruction_error(carried: Path) -> str:
    """How far :func:`logger_statistics.windowed_iteration_means` is from the logged statistic where a run logged
    both: the cost (``episode_cost_window`` against ``episode_cost`` and ``episodes``), at each seed's last
    iteration, over every kept run whose cost estimate is the undiscounted window."""
    errors = []
    for run_dir in sorted(carried.glob("*/runs/*")):
        if not (run_dir / "progress.csv").is_file():
            continue
        cfg = run_directory.load_run_config(run_dir)
        rows = run_directory.read_progress(run_dir)
        if not rows or "episode_cost_window" not in rows[0] or cfg["constraint"].get("gamma_c", 1.0) != 1.0:
            continue
        seeds = run_directory.seed_ids(cfg)
        logged = deep_rl.per_seed_series(rows, "episode_cost_window", seeds)[:, -1]
        means = deep_rl.per_seed_series(rows, "episode_cost", seeds)
        counts = deep_rl.per_seed_series(rows, "episodes", seeds)
        for seed, value in enumerate(logged):
            errors.append(logger_statistics.windowed_iteration_means(means[seed], counts[seed])[-1] - value)
    errors = np.asarray(errors)
    return (
        f"V_c reconstructed from the iteration means minus V_c logged, at the last iteration, over {errors.size} "
        f"seeds of the kept runs: mean {errors.mean():+.3f}, SD {errors.std(ddof=1):.3f}, median |error| "
        f"{np.median(np.abs(errors)):.3f}, 95th percentile |error| {np.percentile(np.abs(errors), 95):.3f}, "
        f"largest |error| {np.abs(errors).max():.3f} (cost units; limit 25)"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--carried", type=Path, default=ROOT / "benchmarks" / "carried" / "ctrpo-table1-cpu")
    parser.add_argument("--targets", default=",".join(TABLES), help=f"comma-separated, of {', '.join(TABLES)}")
    parser.add_argument("--write", action="store_true", help="replace the committed results.json and figures")
    parser.add_argument("--report", type=Path, help="also write the changes as Markdown here")
    args = parser.parse_args(argv)
    names = [n for n in args.targets.split(",") if n]
    unknown = [n for n in names if n not in TABLES]
    if unknown:
        parser.error(f"--targets {','.join(unknown)}: not one of {', '.join(TABLES)}")
    if not args.carried.is_dir():
        parser.error(f"--carried {args.carried}: no such folder")
    commit = provenance.git_commit()
    lines = [
        f"# C-TRPO tables tabulated again from their carried runs (commit {(commit or '?')[:7]})",
        "",
        "`python benchmarks/retabulate_carried.py`: the carried runs read, nothing trained; every row value and "
        "check that changed, before -> after (`-`: absent).",
        "",
    ]
    check = reconstruction_error(args.carried.resolve())
    print(check)
    lines += ["## The reconstruction, checked where both are logged", "", check + ".", ""]
    for name in names:
        lines += retabulate(args.carried.resolve(), name, commit, args.write)
    if CONFIG_DIFFERENCES:
        lines += ["## Settings of the kept runs that today's defaults no longer give", ""]
        lines += ["| setting | in the runs | today | runs |", "|---|---|---|---|"]
        for (key, kept, today), where in CONFIG_DIFFERENCES.items():
            tasks = sorted({run.split("/")[0] for run in where})
            lines.append(f"| {key} | {kept} | {today} | {len(where) // len(names)} runs on {', '.join(tasks)} |")
            print(f"kept runs differ from today's plan: {key} = {kept} (today {today}) in {len(where) // len(names)}")
    if args.report:
        args.report.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
