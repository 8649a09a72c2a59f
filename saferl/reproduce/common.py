"""Shared pieces of the deep-RL reproduce targets: train several methods, tabulate, plot.

``compare_algorithms`` trains each method (all seeds vmapped in one program)
into ``out/runs/<label>``, resuming an interrupted run whose config matches and
reusing a finished one, then returns rows with the paper's metrics and their
bootstrap confidence intervals, and draws the learning curves.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from saferl import config as configlib
from saferl import metrics, plotting, runs


def per_seed_series(rows: list[dict], metric: str, seeds: list[int]) -> np.ndarray:
    """``(seeds, iterations)`` array of ``metric`` from progress rows (NaN where missing)."""
    iterations = sorted({r["iteration"] for r in rows})
    index = {it: i for i, it in enumerate(iterations)}
    out = np.full((len(seeds), len(iterations)), np.nan)
    seed_index = {s: i for i, s in enumerate(seeds)}
    for r in rows:
        if r["seed"] in seed_index and metric in r:
            out[seed_index[r["seed"]], index[r["iteration"]]] = r[metric]
    return out


def bootstrap_mean(values, reps: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    values = np.asarray([v for v in values if v is not None and np.isfinite(v)], float)
    if values.size == 0:
        return float("nan"), float("nan"), float("nan")
    ci = metrics.stratified_bootstrap_ci(values[:, None], statistic=np.mean, reps=reps, seed=seed)
    return float(values.mean()), float(ci.lower), float(ci.upper)


def train_or_resume(cfg: dict, run_dir: Path, show_progress: bool) -> dict:
    run_dir = Path(run_dir)
    if (run_dir / "config.yaml").is_file():
        # resolved again, so a run written before a new config key existed compares equal: say so
        existing = runs.load_run_config(run_dir)
        filled = sorted(set(_flat_keys(existing)) - set(_flat_keys(configlib.load_yaml(run_dir / "config.yaml"))))
        legacy = {".".join(path) for path in runs.LEGACY_VALUES}
        if existing == cfg and filled:
            said = [k + (" (the value it was trained with)" if k in legacy else "") for k in filled]
            print(f"note: reusing {run_dir}, written before {', '.join(said)} existed; it is taken to have "
                  "had today's defaults for them (move it away to retrain)", file=sys.stderr)
        if existing != cfg:
            raise runs.RunError(f"{run_dir} holds a run with another config; choose another --out")
        summary_path = run_dir / "summary.json"
        if summary_path.is_file():
            summary = json.loads(summary_path.read_text())
            if not summary.get("interrupted"):
                return summary
        if (run_dir / runs.CHECKPOINT).is_file():
            return runs.train(cfg, run_dir, resume=True, show_progress=show_progress)
    return runs.train(cfg, run_dir, show_progress=show_progress)


def _flat_keys(node, prefix=""):
    if not isinstance(node, dict):
        return [prefix.rstrip(".")]
    return [k for key, value in node.items() for k in _flat_keys(value, f"{prefix}{key}.")]


def compare_algorithms(methods: list[tuple[str, str, dict]], env: str, out: Path, base: dict,
                       show_progress: bool = True) -> dict:
    """Train ``methods`` = [(label, algo, config overrides)] on ``env``; rows + curves figure."""
    out = Path(out)
    rows, run_dirs = [], []
    for label, algo, overrides in methods:
        user = configlib.merge(configlib.merge(base, {"algo": algo, "env": env}), overrides)
        cfg = configlib.resolve(user)
        run_dir = out / "runs" / label
        summary = train_or_resume(cfg, run_dir, show_progress)
        run_dirs.append(run_dir)
        progress = runs.read_progress(run_dir)
        seeds = runs.seed_ids(cfg)
        row = {"method": label, "algo": cfg["algo"]}
        final_return = summary["final"]["episode_return"]["per_seed"]
        final_cost = summary["final"]["episode_cost"]["per_seed"]
        row["final_return"], row["final_return_lo"], row["final_return_hi"] = bootstrap_mean(final_return)
        row["final_cost"], row["final_cost_lo"], row["final_cost_hi"] = bootstrap_mean(final_cost)
        if cfg["constraint"]["type"] == "expected":
            limit = cfg["constraint"]["limit"]
            costs = per_seed_series(progress, "episode_cost", seeds)
            costs = np.where(np.isnan(costs), limit, costs)  # no finished episode: no evidence of violation
            regrets = [metrics.cost_regret(c, limit) for c in costs]
            row["cost_regret"], row["cost_regret_lo"], row["cost_regret_hi"] = bootstrap_mean(regrets)
            row["cost_limit"] = limit
            row["within_limit"] = bool(row["final_cost"] <= 1.1 * limit)
        if "violation_probability" in summary["final"]:
            vp = summary["final"]["violation_probability"]["per_seed"]
            row["violation_probability"], _, _ = bootstrap_mean(vp)
        row["seeds"] = cfg["seeds"]
        row["env_steps_per_seed"] = summary["env_steps"]
        row["wall_seconds"] = summary["wall_seconds"]
        row["steps_per_second"] = summary["steps_per_second"]
        rows.append(row)
    figure = plotting.plot_runs(run_dirs, out / "curves.png")
    return {"rows": rows, "figures": [figure.name], "env": env}
