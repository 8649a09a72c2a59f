"""Wall time of an in-program sweep against one program per value.

    python benchmarks/sweep_speed.py swept|separate OUT_DIR [--steps N] [--seeds S]

trains canary-fig5's grid (Canary on IcyLake, rho 15, eps in 0.01, 0.05, 0.1, 0.2, 64x64 networks) either as one
swept run (saferl.training.in_program_sweep: one compile, points x seeds runners vmapped) or as one run per eps in
this process, as canary-fig5 did before the sweep (one compile per eps).  Time the two modes as whole processes,
paired, e.g. with ``/usr/bin/time -v`` alternating A B A B; docs/results/measurements.md records the measurement.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from saferl.reproduce.deep_rl import SMALL_NETS
from saferl.training import config, runs

EPSILONS = [0.01, 0.05, 0.1, 0.2]


def base(steps: int, seeds: int, eps: float) -> dict:
    return {
        "algo": "canary",
        "env": "IcyLake",
        "total_steps": steps,
        "seeds": seeds,
        "network": SMALL_NETS,
        "constraint": {"type": "var", "rho": 15.0, "epsilon": eps, "gamma_c": 1.0},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("swept", "separate"))
    parser.add_argument("out")
    parser.add_argument("--steps", type=int, default=30_000)
    parser.add_argument("--seeds", type=int, default=8)
    args = parser.parse_args()
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    start = time.time()
    if args.mode == "swept":
        cfg = config.resolve({**base(args.steps, args.seeds, EPSILONS[0]), "sweep": {"constraint.epsilon": EPSILONS}})
        summaries = [runs.train(cfg, out / "sweep", show_progress=False)]
    else:
        summaries = [
            runs.train(config.resolve(base(args.steps, args.seeds, eps)), out / f"eps_{eps:g}", show_progress=False)
            for eps in EPSILONS
        ]
    compile_s = sum(s["compile_seconds"] for s in summaries)
    print(f"{args.mode}: {time.time() - start:.1f} s in train, of which compile {compile_s:.1f} s")


if __name__ == "__main__":
    main()
