"""The run directory: its files, how they are written and read back, and the checkpoint.

A run directory holds

* ``config.yaml`` -- the fully resolved config;
* ``progress.csv`` -- one row per logged iteration per seed (a swept run, :mod:`saferl.training.in_program_sweep`:
  per grid point and seed, with the point's index ``sweep_point`` and its coordinates, e.g. ``constraint.limit``);
* ``summary.json`` -- algo, env, seeds, env_steps, timings and the ``final`` statistics
  (mean, std and per-seed values over the last 10% of training); a swept run has them per grid point
  under ``grid`` (``[{"index", "point", "label", "final"}]``) and an empty ``final``;
* ``checkpoints/latest.npz`` -- the whole vmapped training state as a plain ``.npz``
  (no pickle), with a JSON manifest inside that must match the config to load;
* with the config's ``logger`` (:mod:`saferl.training.loggers`), ``tensorboard/`` and ``wandb/``: the same
  scalars as progress.csv for TensorBoard and Weights & Biases.

Every file is written atomically, so a crash or Ctrl-C never leaves a
half-written file, and ``--resume`` continues from the last checkpoint with
the same result as an uninterrupted run.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import jax
import numpy as np

from saferl.envs import base as envs
from saferl.envs.safety_nav.engine import NavTask
from saferl.foundation.atomic_files import write_bytes_atomic, write_json_atomic, write_text_atomic
from saferl.training import config as configlib
from saferl.training import in_program_sweep as gridlib
from saferl.training import provenance

CHECKPOINT = Path("checkpoints") / "latest.npz"
FIXED_COLUMNS = ["iteration", "env_steps", "seed"]
FINAL_FRACTION = 0.1


class RunError(ValueError):
    """A missing, corrupted or mismatched run directory."""


# --------------------------------------------------------------------------- checkpoints


def save_checkpoint(run_dir: Path, runners, chunk: int) -> None:
    path_leaves, treedef = jax.tree_util.tree_flatten_with_path(runners)
    arrays = {f"leaf_{i:05d}": np.asarray(leaf) for i, (_, leaf) in enumerate(path_leaves)}
    meta = {
        "chunk": int(chunk),
        "num_leaves": len(path_leaves),
        "treedef": str(treedef),
        "paths": [jax.tree_util.keystr(path) for path, _ in path_leaves],
    }
    arrays["manifest"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    write_bytes_atomic(Path(run_dir) / CHECKPOINT, buffer.getvalue())


def load_checkpoint(run_dir: Path, template):
    """Load the checkpoint into the structure of ``template``; returns ``(runners, chunk)``."""
    path = Path(run_dir) / CHECKPOINT
    if not path.is_file():
        raise RunError(f"no checkpoint at {path}")
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(bytes(data["manifest"]).decode())
            leaves = [data[f"leaf_{i:05d}"] for i in range(meta["num_leaves"])]
    except Exception as err:  # zip, key or JSON errors: a damaged file
        raise RunError(f"checkpoint {path} is corrupted or unreadable ({type(err).__name__})") from None
    template_path_leaves, treedef = jax.tree_util.tree_flatten_with_path(template)
    template_leaves = [leaf for _, leaf in template_path_leaves]
    if meta["treedef"] != str(treedef) and _only_logged_state_missing(meta, template_path_leaves):
        saved = dict(zip(meta["paths"], leaves))
        leaves = [
            saved[key] if key in saved else _empty_like(key, leaf)
            for key, leaf in ((jax.tree_util.keystr(path), leaf) for path, leaf in template_path_leaves)
        ]
    elif meta["treedef"] != str(treedef) or len(leaves) != len(template_leaves):
        raise RunError(
            f"checkpoint {path} does not match the run's config ({_structure_difference(meta, template_path_leaves)})"
        )
    for saved, expected in zip(leaves, template_leaves):
        if saved.shape != expected.shape or saved.dtype != expected.dtype:
            raise RunError(
                f"checkpoint {path} does not match the run's config: array {saved.shape} vs {expected.shape}"
            )
    return jax.tree.unflatten(treedef, [jax.numpy.asarray(x) for x in leaves]), int(meta["chunk"])


#: state entries a checkpoint written before they existed may lack: they only feed logged statistics (the return
#: window of ``episode_return_window``), and a resumed run starts them empty (the window refills within 50 episodes)
LOGGED_ONLY_STATE = ("['return_window']", "['windowed_return']")


def _only_logged_state_missing(meta: dict, template_path_leaves) -> bool:
    saved = meta.get("paths")
    if saved is None:
        return False
    expected = [jax.tree_util.keystr(path) for path, _ in template_path_leaves]
    missing = set(expected) - set(saved)
    return (
        not set(saved) - set(expected)
        and bool(missing)
        and all(any(part in key for part in LOGGED_ONLY_STATE) for key in missing)
    )


def _empty_like(key: str, leaf) -> np.ndarray:
    """A logged-only entry as it starts (:func:`saferl.core.rollout.initial_episodes`): the statistic unknown (NaN),
    the window empty (zeros)."""
    fill = np.nan if key.endswith("['windowed_return']") else 0
    return np.full(leaf.shape, fill, np.dtype(leaf.dtype))


def _structure_difference(meta: dict, template_path_leaves) -> str:
    """Say which state entries differ between a saved checkpoint and the current program."""
    expected = [jax.tree_util.keystr(path) for path, _ in template_path_leaves]
    saved = meta.get("paths")
    if saved is None:  # checkpoints written before paths were recorded
        return (
            f"{meta['num_leaves']} saved arrays vs {len(expected)} expected: a different algorithm, "
            "network size or saferl version wrote it"
        )
    missing = [p for p in expected if p not in set(saved)]
    extra = [p for p in saved if p not in set(expected)]
    parts = []
    if missing:
        parts.append("lacks " + ", ".join(missing[:3]) + (" ..." if len(missing) > 3 else ""))
    if extra:
        parts.append("has unexpected " + ", ".join(extra[:3]) + (" ..." if len(extra) > 3 else ""))
    return "; ".join(parts) or "same entries, different static settings (e.g. constraint type)"


# --------------------------------------------------------------------------- progress and summary


def progress_rows(metrics: dict, first_iteration: int, steps_per_iteration: int, seeds: list) -> list[dict]:
    """Turn a chunk's metrics ``{name: (runners, iterations, ...)}`` into CSV rows; ``seeds`` names each runner: a
    seed id, or the runner's fixed columns (:func:`runner_columns`)."""
    host = {k: np.asarray(v) for k, v in metrics.items()}
    n_iter = next(iter(host.values())).shape[1]
    fixed = [seed if isinstance(seed, dict) else {"seed": seed} for seed in seeds]
    rows = []
    for i in range(n_iter):
        iteration = first_iteration + i + 1
        for s, columns in enumerate(fixed):
            row = {"iteration": iteration, "env_steps": iteration * steps_per_iteration, **columns}
            for name, value in host.items():
                v = value[s, i]
                row[name] = float(v) if np.ndim(v) == 0 else float(np.ravel(v)[0])
            rows.append(row)
    return rows


def write_progress(run_dir: Path, rows: list[dict]) -> None:
    if not rows:
        return
    # the union of all rows' keys: a run resumed by a newer saferl may log a metric the older rows lack
    names = {k for row in rows for k in row}
    fixed = [k for k in FIXED_COLUMNS if k in names]
    coordinates = ([gridlib.POINT_COLUMN] if gridlib.POINT_COLUMN in names else []) + sorted(
        k for k in names if "." in k
    )
    columns = fixed + coordinates + sorted(names - set(fixed) - set(coordinates))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns)
    writer.writeheader()
    for row in rows:
        values = {k: row.get(k, "") for k in columns}
        writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in values.items()})
    write_text_atomic(Path(run_dir) / "progress.csv", out.getvalue())


def read_progress(run_dir: Path) -> list[dict]:
    path = Path(run_dir) / "progress.csv"
    if not path.is_file():
        return []
    with open(path, newline="") as fh:
        rows = []
        for row in csv.DictReader(fh):
            parsed = {}
            for k, v in row.items():
                parsed[k] = (
                    int(v)
                    if k in ("iteration", "seed", gridlib.POINT_COLUMN)
                    else float(v)
                    if v not in ("", None)
                    else math.nan
                )
            rows.append(parsed)
        return rows


def final_statistics(rows: list[dict], metric: str, seeds: list[int]) -> dict | None:
    """Mean, std and per-seed values of ``metric`` over the last 10% of iterations."""
    if not rows or metric not in rows[0]:
        return None
    last = max(r["iteration"] for r in rows)
    cutoff = last - max(1, math.ceil(FINAL_FRACTION * last))
    per_seed = []
    for seed in seeds:
        values = [r[metric] for r in rows if r["seed"] == seed and r["iteration"] > cutoff]
        values = [v for v in values if not math.isnan(v)]
        per_seed.append(float(np.mean(values)) if values else math.nan)
    arr = np.asarray(per_seed)
    valid = arr[~np.isnan(arr)]
    return {
        "mean": float(valid.mean()) if valid.size else None,
        "std": float(valid.std()) if valid.size else None,
        "per_seed": [None if math.isnan(v) else v for v in per_seed],
    }


def final_of(rows: list[dict], seeds: list[int]) -> dict:
    """The ``final`` statistics of return, cost and (VaR) violation probability of ``rows``."""
    final = {}
    for metric in ("episode_return", "episode_cost", "violation_probability"):
        stats = final_statistics(rows, metric, seeds)
        if stats is not None:
            final[metric] = stats
    return final


def grid_summary(cfg: dict, rows: list[dict]) -> list[dict]:
    """Per grid point of a swept run: its index, values, label and ``final`` statistics."""
    seeds = seed_ids(cfg)
    return [
        {
            "index": g,
            "point": point,
            "label": gridlib.label(point),
            "final": final_of([r for r in rows if r.get(gridlib.POINT_COLUMN) == g], seeds),
        }
        for g, point in enumerate(gridlib.points(cfg))
    ]


def write_summary(run_dir: Path, cfg: dict, rows: list[dict], timings: dict, interrupted: bool) -> dict:
    seeds = seed_ids(cfg)
    swept = bool(cfg.get("sweep"))
    final = {} if swept else final_of(rows, seeds)
    env_steps = max((r["env_steps"] for r in rows), default=0)
    summary = {
        "algo": cfg["algo"],
        "env": cfg["env"],
        "seeds": cfg["seeds"],
        "env_steps": int(env_steps),
        "env_steps_all_seeds": int(env_steps) * cfg["seeds"],
        "wall_seconds": timings.get("wall_seconds", 0.0),
        "compile_seconds": timings.get("compile_seconds", 0.0),
        "steps_per_second": timings.get("steps_per_second", 0.0),
        "interrupted": interrupted,
        "constraint": cfg["constraint"],
        "final": final,
        **({"grid": grid_summary(cfg, rows)} if swept else {}),
        **provenance_fields(run_dir, cfg, timings.get("wall_seconds", 0.0), resumed=bool(timings.get("resumed"))),
    }
    write_json_atomic(Path(run_dir) / "summary.json", summary)
    return summary


def provenance_fields(run_dir: Path, cfg: dict, wall_seconds: float, resumed: bool) -> dict:
    """``config_hash``, the code's ``git_commit`` and, across the sittings of a resumed run,
    ``training_seconds`` (their total wall time) and ``git_commits`` (each sitting's, in order)."""
    commit = provenance.git_commit()
    seconds, commits = float(wall_seconds), [commit]
    path = Path(run_dir) / "summary.json"
    if resumed and path.is_file():
        try:
            previous = json.loads(path.read_text())
            seconds += float(previous.get("training_seconds", previous.get("wall_seconds", 0.0)))
            commits = [c for c in previous.get("git_commits", [previous.get("git_commit")])] + commits
        except (ValueError, TypeError):
            pass  # an unreadable earlier summary: this sitting's numbers only
    distinct = [c for i, c in enumerate(commits) if i == 0 or c != commits[i - 1]]
    return {
        "config_hash": provenance.config_hash(cfg),
        "git_commit": commit,
        "git_commits": distinct,
        "training_seconds": seconds,
    }


def seed_ids(cfg: dict) -> list[int]:
    return [cfg["seed"] + i for i in range(cfg["seeds"])]


def runner_columns(cfg: dict) -> list[dict]:
    """Each runner's fixed progress columns, in the trainer's runner order: ``seed``, and on a swept run the grid
    point's index (``sweep_point``) and coordinates before it."""
    seeds = seed_ids(cfg)
    if not cfg.get("sweep"):
        return [{"seed": s} for s in seeds]
    return [{gridlib.POINT_COLUMN: g, **point, "seed": s} for g, point in enumerate(gridlib.points(cfg)) for s in seeds]


def load_run_config(run_dir: Path) -> dict:
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise RunError(f"run directory {str(run_dir)!r} does not exist")
    path = run_dir / "config.yaml"
    if not path.is_file():
        raise RunError(f"{str(run_dir)!r} is not a run directory: no config.yaml")
    try:
        raw = with_renamed_values(configlib.load_yaml(path))
        return with_legacy_values(raw, configlib.resolve(raw))
    except configlib.ConfigError as err:
        raise RunError(f"config.yaml of {str(run_dir)!r} is invalid: {err}") from None


# Config keys added after runs existed whose default is not what the code did before the key existed:
# a config.yaml without the key gets this value (what its run was trained with), not today's default,
# so that resuming keeps the run's behaviour and a reproduce target does not mistake it for today's config.
LEGACY_VALUES = {
    # every trust-region method before the key existed (added in commit c387f74; the value then named "episode");
    # CPO's default is per_sample since commit cc5e350
    ("hparams", "cost_scale"): "effective_horizon",
    # PDO before its advantages followed RL-Safety-Algorithms' reward scaling (saferl.algos.pdo, step 5)
    ("hparams", "advantage_scale"): "standardised",
}

#: ``env_params.physics`` of a navigation task's config.yaml written before configs recorded the physics: every
#: navigation run then stepped the planar model (MuJoCo physics came later, and PointPush1, RacecarCircle1 and
#: CarButton1 default to it since: docs/decisions/065)
LEGACY_NAVIGATION_PHYSICS = "planar"

#: ``env_params.rk4_orientation`` of a velocity task's config.yaml written before configs recorded it, on
#: ``physics: mujoco``: MuJoCo 4.0's own ``mj_step`` (saferl's MJX RK4 was always uncorrected: docs/decisions/066)
LEGACY_RK4_ORIENTATION = "munthe-kaas"

# Values renamed after runs were written with them: old name -> today's (the computation is the same).
RENAMED_VALUES = {
    ("hparams", "cost_scale"): {"episode": "effective_horizon"},
}


def _is_navigation(env_name: str) -> bool:
    return isinstance(envs.make(env_name), NavTask)


def with_renamed_values(raw):
    """``raw`` with every renamed value of :data:`RENAMED_VALUES` under today's name (a copy; raw kept)."""
    if not isinstance(raw, dict):
        return raw
    out = dict(raw)
    for path, names in RENAMED_VALUES.items():
        node = out
        for key in path[:-1]:
            if not isinstance(node.get(key), dict):
                break
            node[key] = dict(node[key])
            node = node[key]
        else:
            value = node.get(path[-1])
            if isinstance(value, str) and value in names:
                node[path[-1]] = names[value]
    return out


def with_legacy_values(raw: dict, resolved: dict) -> dict:
    env_params = resolved.get("env_params")
    raw_env_params = raw.get("env_params") or {}
    if isinstance(env_params, dict) and "physics" in env_params and "physics" not in raw_env_params:
        if _is_navigation(resolved["env"]):
            env_params["physics"] = LEGACY_NAVIGATION_PHYSICS
    if isinstance(env_params, dict) and "rk4_orientation" in env_params and "rk4_orientation" not in raw_env_params:
        if env_params.get("physics") == "mujoco":
            env_params["rk4_orientation"] = LEGACY_RK4_ORIENTATION
    for path, value in LEGACY_VALUES.items():
        node_raw, node = raw, resolved
        for key in path[:-1]:
            node_raw, node = (node_raw or {}).get(key), node.get(key)
            if not isinstance(node, dict):
                break
        else:
            if path[-1] in node and path[-1] not in (node_raw or {}):
                node[path[-1]] = value
    return resolved


# --------------------------------------------------------------------------- the driver


def write_config(run_dir: Path, cfg: dict) -> None:
    """Create the run directory with its config.  Called only once the program compiled: a rejected
    value (checked at resolve or at trace time) leaves no directory behind."""
    run_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(run_dir / "config.yaml", configlib.dump(cfg))
