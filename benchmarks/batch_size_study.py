"""Does a larger batch make CPO's and Canary's cost gradient b informative?

    python benchmarks/batch_size_study.py --out runs/batch-size-study [--steps 2000000] [--seeds 5]
        [--multipliers 1,4,16] [--algos cpo,canary] [--rollouts 4]

Trains the units-consistent CPO (PointGoal1, expected cost <= 25, as ``ctrpo-pointgoal``) and Canary
(PointGoal1, P(C >= 100) <= 0.05, 64x64 networks, as ``canary-table1``), both with ``cost_scale: length``,
at 1x, 4x and 16x the environments per seed (so 4x and 16x the episodes per batch) for the same total
steps, then measures at the final policy of every seed the split-half agreement of the gradients
(:func:`gradient_agreement.agreement`: corr(g), corr(b) in the natural metric and the share of
s = b^T H^-1 b the two halves agree on) and reports it beside the final cost, return and breach rate.
Runs resume (``saferl.reproduce.deep_rl.train_or_resume``); the table goes to OUT/table.md and OUT/table.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gradient_agreement import agreement  # noqa: E402

from saferl.analysis import metrics
from saferl.reproduce.deep_rl import SMALL_NETS, per_seed_series, train_or_resume  # noqa: E402
from saferl.training import config as configlib  # noqa: E402
from saferl.training import (
    run_directory,  # noqa: E402
)
from saferl.training.trainer import Trainer  # noqa: E402

BASE_ENVS = 16  # PointGoal1's default environments per seed
SETTINGS = {
    "cpo": {"constraint": {"type": "expected", "limit": 25.0}},
    "canary": {"constraint": {"type": "var", "rho": 100.0, "epsilon": 0.05, "gamma_c": 1.0}, "network": SMALL_NETS},
}


def study_config(algo: str, multiplier: int, steps: int, seeds: int) -> dict:
    user = {
        "algo": algo,
        "env": "PointGoal1",
        "total_steps": steps,
        "seeds": seeds,
        "num_envs": BASE_ENVS * multiplier,
        "hparams": {"cost_scale": "length"},
        **SETTINGS[algo],
    }
    return configlib.resolve(user)


def measure(run_dir: Path, cfg: dict, rollouts: int) -> dict:
    """Split-half agreement at every seed's final policy (means over seeds and ``rollouts`` fresh batches)."""
    trainer = Trainer(cfg)
    runners, _ = run_directory.load_checkpoint(run_dir, trainer.init_all())
    per_seed = []
    for index in range(cfg["seeds"]):
        runner = jax.tree.map(lambda x, i=index: x[i], runners)
        fn = jax.jit(lambda k, r=runner: agreement(trainer, r, k))
        batches = [jax.device_get(fn(k)) for k in jax.random.split(jax.random.PRNGKey(1 + index), rollouts)]
        per_seed.append({name: float(np.mean([float(b[name]) for b in batches])) for name in batches[0]})
    return {name: float(np.mean([s[name] for s in per_seed])) for name in per_seed[0]}


def outcome(run_dir: Path, cfg: dict, summary: dict) -> dict:
    final = summary["final"]
    row = {
        "final_cost": final["episode_cost"]["mean"],
        "final_return": final["episode_return"]["mean"],
        "iterations": summary.get("iterations"),
    }
    if cfg["constraint"]["type"] == "var":
        progress = run_directory.read_progress(run_dir)
        seeds = run_directory.seed_ids(cfg)
        violation = per_seed_series(progress, "violation_probability", seeds)
        episodes = per_seed_series(progress, "episodes", seeds)
        row["P_hat"] = float(np.nanmean(metrics.breach_rate(violation, np.nan_to_num(episodes))))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--steps", type=int, default=2_000_000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--multipliers", default="1,4,16")
    parser.add_argument("--algos", default="cpo,canary")
    parser.add_argument("--rollouts", type=int, default=4)
    args = parser.parse_args()
    out = Path(args.out)
    algos = [a for a in args.algos.split(",") if a]
    unknown = [a for a in algos if a not in SETTINGS]
    if unknown:
        parser.error(f"--algos: {', '.join(unknown)} not in {', '.join(SETTINGS)}")
    table = []
    for algo in algos:
        for multiplier in (int(m) for m in args.multipliers.split(",")):
            cfg = study_config(algo, multiplier, args.steps, args.seeds)
            run_dir = out / f"{algo}-x{multiplier}"
            summary = train_or_resume(cfg, run_dir, show_progress=True)
            row = {
                "algo": algo,
                "envs_per_seed": cfg["num_envs"],
                "episodes_per_batch": cfg["num_envs"],
                **outcome(run_dir, cfg, summary),
                **measure(run_dir, cfg, args.rollouts),
            }
            table.append(row)
            print(json.dumps(row), flush=True)
    (out / "table.json").write_text(json.dumps(table, indent=2))
    columns = [
        "algo",
        "envs_per_seed",
        "corr_g",
        "corr_b",
        "signal_share_of_s",
        "s",
        "final_cost",
        "final_return",
        "P_hat",
    ]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in table:
        cells = [f"{row[c]:.3g}" if isinstance(row.get(c), float) else str(row.get(c, "")) for c in columns]
        lines.append("| " + " | ".join(cells) + " |")
    (out / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
