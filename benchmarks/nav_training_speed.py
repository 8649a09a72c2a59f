"""CPO training throughput of each navigation task under each physics, measured side by side in one process.

    python benchmarks/nav_training_speed.py [--seeds 5] [--envs 8] [--iterations 2]
        [--out benchmarks/results/nav-training-speed.md]

For each task and physics: ``saferl.training.runs.train`` of CPO (its defaults) with ``--seeds`` seeds vmapped,
``--envs`` environments each, for ``--iterations`` iterations; the run's ``steps_per_second`` (env steps of all
seeds over the time spent stepping and learning, the compile excluded) and its compile time.  The planar rows
are the fast default; the MuJoCo rows step the host library through ``saferl.envs.mujoco_host``'s callback.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import jax

from saferl.training import config, runs

TASKS = ("PointGoal1", "PointPush1", "CarButton1", "RacecarCircle1")
PHYSICS = ("planar", "mujoco")
ROLLOUT_STEPS = 1000  # env steps per environment per iteration: one episode of the 1000-step tasks


def measure(task: str, physics: str, seeds: int, envs: int, iterations: int, out: Path) -> dict:
    cfg = config.resolve(
        {
            "algo": "cpo",
            "env": task,
            "env_params": {"physics": physics},
            "seeds": seeds,
            "num_envs": envs,
            "rollout_steps": ROLLOUT_STEPS,
            "total_steps": iterations * envs * ROLLOUT_STEPS,
        }
    )
    summary = runs.train(cfg, out / f"{task}-{physics}", show_progress=False)
    return {
        "task": task,
        "physics": physics,
        "sps": summary["steps_per_second"],  # all seeds
        "compile_s": summary["compile_seconds"],
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/nav-training-speed.md"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        rows = [
            measure(task, physics, args.seeds, args.envs, args.iterations, Path(folder))
            for task in TASKS
            for physics in PHYSICS
        ]
    lines = [
        "# Navigation tasks: CPO training env-steps/s under each physics",
        "",
        f"`python benchmarks/nav_training_speed.py --seeds {args.seeds} --envs {args.envs} --iterations "
        f"{args.iterations}`, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, "
        f"{len(os.sched_getaffinity(0))} cores, load average {os.getloadavg()[0]:.1f}, JAX {jax.__version__}, "
        f"backend {jax.default_backend()}. CPO with its defaults, {args.seeds} seeds x {args.envs} environments "
        f"vmapped, {ROLLOUT_STEPS} steps each per iteration; env steps of all seeds per second, compile excluded.",
        "",
        "| task | planar env-steps/s | mujoco env-steps/s | planar / mujoco | compile planar, mujoco |",
        "|---|---|---|---|---|",
    ]
    for task in TASKS:
        planar, mujoco = (next(r for r in rows if r["task"] == task and r["physics"] == p) for p in PHYSICS)
        lines.append(
            f"| {task} | {planar['sps']:,.0f} | {mujoco['sps']:,.0f} | {planar['sps'] / mujoco['sps']:,.1f} | "
            f"{planar['compile_s']:.0f} s, {mujoco['compile_s']:.0f} s |"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
