"""Why SCPO's SafetyBallRun cost crossed the limit after ~1M steps: the two settings saferl ran it with, one at a time.

    python benchmarks/scpo_run_crossing.py [--out DIR] [--steps N] [--seeds N] [--markdown PATH]

The committed scpo-fig5 and scpo-fig15 tables (trained before :data:`saferl.reproduce.scpo.common.AUTHORS_SCPO`)
ran SCPO with saferl's defaults: the actor's initial log-std -0.5 and normalised observations.  The authors' code
(SafeRL-Lab/SCPO) starts SB3's actor at log-std 0 and normalises nothing; both bootstrap a time-limit truncation
from the value, so that is not a difference.  Run to fig15's 3.2M steps, the old configuration's cost crossed the
limit around 1M steps and ended probably unsafe, while the authors' published Run curve stays at cost 2-10.

This trains the 2 x 2 design on SafetyBallRun, each cell SCPO with its SafetyBallRun defaults and 4 seeds: the
initial log-std in {-0.5, 0} x observations in {normalised, raw}; the corner (0, raw) is AUTHORS_SCPO.  Per cell:
the final cost (mean of the last 10% of iterations, seeds' mean with a 95% bootstrap interval) at half the budget
and at the end, its safety verdict at each, the highest cost of the across-seed mean curve (smoothed over 5
iterations) after the first 10% of training, and the step from which that curve stays above the limit ("never" if
it does not).  Runs go to ``--out`` (default runs/scpo-run-crossing; finished ones are reused, interrupted ones
resumed).  Where it stands: ``docs/results/scpo-fig15-cpu/run-crossing.md``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from saferl.analysis import verdicts
from saferl.reproduce import deep_rl
from saferl.reproduce.scpo.common import COST_LIMITS
from saferl.reproduce.scpo.stats import final_window
from saferl.training import run_directory

TASK = "SafetyBallRun"
#: (label, overrides) of the 2 x 2 design; the last is the authors' (AUTHORS_SCPO)
CELLS = [
    ("log-std -0.5, normalised obs (the committed tables')", {"network": {"init_log_std": -0.5}}),
    ("log-std -0.5, raw obs", {"network": {"init_log_std": -0.5}, "normalize_observations": False}),
    ("log-std 0, normalised obs", {"network": {"init_log_std": 0.0}, "normalize_observations": True}),
    ("log-std 0, raw obs (the authors')", {"network": {"init_log_std": 0.0}, "normalize_observations": False}),
]
SMOOTH = 5


def final_at(costs: np.ndarray, upto: int) -> tuple[float, float, float]:
    """Seeds' mean [95% bootstrap] of each seed's mean over the last 10% of the first ``upto`` iterations."""
    window = final_window(upto)
    per_seed = np.nanmean(costs[:, upto - window : upto], axis=1)
    return verdicts.bootstrap_mean(per_seed.tolist())


def crossing(costs: np.ndarray, steps: np.ndarray, limit: float) -> tuple[float, str]:
    """The highest smoothed across-seed mean cost after the first 10% of iterations, and the first step from which
    the smoothed curve stays above ``limit`` to the end ("never" if the last point is not above it)."""
    mean = np.nanmean(costs, axis=0)
    smooth = np.convolve(mean, np.ones(SMOOTH) / SMOOTH, mode="valid")
    steps = steps[SMOOTH - 1 :]
    start = max(1, len(smooth) // 10)
    peak = float(np.max(smooth[start:]))
    above = smooth > limit
    if not above[-1]:
        return peak, "never"
    below = np.nonzero(~above)[0]
    first = 0 if below.size == 0 else below[-1] + 1
    return peak, f"{int(steps[first]):,}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/scpo-run-crossing"))
    parser.add_argument("--steps", type=int, default=3_200_000, help="env steps per seed (default fig15's 3.2M)")
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    args = parser.parse_args(argv)
    if args.steps < 100_000 or args.seeds < 2:
        parser.error(f"--steps {args.steps} / --seeds {args.seeds}: at least 100,000 steps and 2 seeds")
    limit = COST_LIMITS[TASK]
    base = {"constraint": {"type": "expected", "limit": limit}, "total_steps": args.steps, "seeds": args.seeds}
    methods = [(label, "scpo", overrides) for label, overrides in CELLS]
    lines = [
        f"SCPO on {TASK}, {args.steps:,} steps x {args.seeds} seeds per cell, cost limit {limit:g}; final cost = "
        "seeds' mean [95% bootstrap] of each seed's mean over the last 10% of iterations; peak = highest 5-iteration "
        "smoothed across-seed mean after the first 10%; above from = the step from which that curve stays above the "
        "limit.",
        "",
        "| SCPO cell | cost at half budget | verdict | final cost | verdict | final return | peak | above from |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (label, _, _), (run_dir, cfg) in zip(methods, deep_rl.plan_runs(methods, TASK, args.out, base)):
        deep_rl.train_or_resume(cfg, run_dir, show_progress=True)
        rows = run_directory.read_progress(run_dir)
        seeds = run_directory.seed_ids(cfg)
        costs = deep_rl.per_seed_series(rows, "episode_cost", seeds)
        returns = deep_rl.per_seed_series(rows, "episode_return", seeds)
        steps = np.array(sorted({r["env_steps"] for r in rows}), float)
        n = costs.shape[1]
        half = final_at(costs, n // 2)
        end = final_at(costs, n)
        ret = final_at(returns, n)
        peak, above = crossing(costs, steps, limit)
        cells = [
            f"{half[0]:.1f} [{half[1]:.1f}, {half[2]:.1f}]",
            verdicts.safety_verdict(half[1], half[2], limit),
            f"{end[0]:.1f} [{end[1]:.1f}, {end[2]:.1f}]",
            verdicts.safety_verdict(end[1], end[2], limit),
            f"{ret[0]:.0f} [{ret[1]:.0f}, {ret[2]:.0f}]",
            f"{peak:.1f}",
            above,
        ]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
