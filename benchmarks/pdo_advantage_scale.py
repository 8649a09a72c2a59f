"""PDO's multiplier under the two advantage scalings, on the SCPO targets' settings: does it act?

    python benchmarks/pdo_advantage_scale.py [--task SafetyBallRun] [--iterations 30] [--seeds 4] [--out DIR]

Trains PDO as ``scpo-fig5`` configures it (RL-Safety-Algorithms' settings, 16 x 2000 steps an iteration, the task's
cost limit) twice, ``advantage_scale: return_std`` (the reference's reward scaling, saferl's default since) and
``standardised`` (the trust-region family's, what the committed SCPO tables trained), one run directory each under
``--out`` (reused when finished), and prints a Markdown table per iteration of the mean over seeds: the multiplier,
the episode cost, the return and, for return_std, the running return std. The ratio that decides whether lambda
acts is lambda A_c against A_r: standardised A_r have unit spread; A_r over the return std have the spread of the
advantages over that of whole returns, which the table's last column lets one read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from saferl import api
from saferl.reproduce.deep_rl import per_seed_series
from saferl.reproduce.scpo.common import COST_LIMITS, METHODS
from saferl.training import config as configlib
from saferl.training import run_directory

SCALINGS = ("return_std", "standardised")


def pdo_config(task: str, iterations: int, seeds: int, scaling: str) -> dict:
    (overrides,) = [over for label, _, over in METHODS if label == "PDO"]
    batch = overrides["num_envs"] * overrides["rollout_steps"]
    base = {
        "algo": "pdo",
        "env": task,
        "seeds": seeds,
        "total_steps": iterations * batch,
        "constraint": {"type": "expected", "limit": COST_LIMITS[task]},
    }
    return configlib.merge(configlib.merge(base, overrides), {"hparams": {"advantage_scale": scaling}})


def train(task: str, iterations: int, seeds: int, out: Path) -> dict[str, Path]:
    dirs = {}
    for scaling in SCALINGS:
        run_dir = out / f"pdo-{task}-{scaling}"
        if not (run_dir / "summary.json").is_file():
            api.train(None, None, steps=None, config=pdo_config(task, iterations, seeds, scaling), out=run_dir)
        dirs[scaling] = run_dir
    return dirs


def series(run_dir: Path, column: str) -> np.ndarray:
    cfg = run_directory.load_run_config(run_dir)
    rows = run_directory.read_progress(run_dir)
    if not rows or column not in rows[0]:
        return np.full(1, np.nan)
    return np.nanmean(per_seed_series(rows, column, run_directory.seed_ids(cfg)), axis=0)


def table(dirs: dict[str, Path], limit: float) -> str:
    columns = {
        s: {c: series(d, c) for c in ("lagrange_multiplier", "episode_cost", "episode_return")} for s, d in dirs.items()
    }
    std = series(dirs["return_std"], "return_std")
    lines = [
        f"| iteration | lambda: return_std / standardised | cost (limit {limit:g}) | return | return std |",
        "|---|---|---|---|---|",
    ]
    a, b = columns["return_std"], columns["standardised"]
    for i in range(len(a["episode_cost"])):
        lines.append(
            f"| {i + 1} | {a['lagrange_multiplier'][i]:.4f} / {b['lagrange_multiplier'][i]:.4f} | "
            f"{a['episode_cost'][i]:.1f} / {b['episode_cost'][i]:.1f} | "
            f"{a['episode_return'][i]:.1f} / {b['episode_return'][i]:.1f} | {std[i]:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="SafetyBallRun", choices=sorted(COST_LIMITS))
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--out", type=Path, default=Path("runs/pdo-advantage-scale"))
    args = parser.parse_args(argv)
    if args.iterations < 1 or args.seeds < 1:
        parser.error(f"--iterations and --seeds must be at least 1, got {args.iterations} and {args.seeds}")
    dirs = train(args.task, args.iterations, args.seeds, args.out)
    print(table(dirs, COST_LIMITS[args.task]), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
