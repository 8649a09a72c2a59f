"""Stepping and training rates of each navigation task under each physics, measured side by side in one process.

    python benchmarks/nav_physics_speed.py [--envs 16] [--steps 200] [--out benchmarks/results/nav-physics-speed.md]
    python benchmarks/nav_physics_speed.py --train [--seeds 5] [--envs 8] [--iterations 2]
        [--out benchmarks/results/nav-training-speed.md]

Env-only (the default): for each task and physics, one jitted program that resets ``--envs`` environments and steps
them ``--steps`` times under uniform random actions (vmapped over environments, a ``lax.scan`` over steps); compiled
and run once, then timed over three runs (the median is reported).

``--train``: for each task and physics, ``saferl.training.runs.train`` of CPO (its defaults) with ``--seeds`` seeds
vmapped, ``--envs`` environments each, for ``--iterations`` iterations of 1000 steps per environment; the run's
``steps_per_second`` (env steps of all seeds over the time spent stepping and learning, the compile excluded).

MuJoCo's rows step the host library through the callback of ``saferl.envs.mujoco_host``, on this process's threads.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import jax

from saferl.envs.base import make, make_env_params
from saferl.training import config, runs

TASKS = ("PointGoal1", "PointPush1", "CarButton1", "RacecarCircle1")
PHYSICS = ("planar", "mujoco")
ROLLOUT_STEPS = 1000  # --train: env steps per environment per iteration, one episode of the 1000-step tasks


def rollout_program(env, params, envs: int, steps: int):
    def run(key):
        reset_keys, action_key = jax.random.split(key)
        states, _ = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(reset_keys, envs), params)
        actions = jax.random.uniform(action_key, (steps, envs, 2), minval=-1.0, maxval=1.0)

        def body(states, action):
            states, obs, reward, cost, *_ = jax.vmap(env.step, in_axes=(0, 0, None))(states, action, params)
            return states, reward.sum() + cost.sum() + obs.sum()

        return jax.lax.scan(body, states, actions)[1].sum()

    return jax.jit(run)


def stepping_rate(task: str, physics: str, args) -> dict:
    env = make(task)
    program = rollout_program(env, make_env_params(env, {"physics": physics}), args.envs, args.steps)
    start = time.perf_counter()
    jax.block_until_ready(program(jax.random.PRNGKey(0)))
    compile_and_first = time.perf_counter() - start
    seconds = []
    for run in range(3):
        start = time.perf_counter()
        jax.block_until_ready(program(jax.random.PRNGKey(run + 1)))
        seconds.append(time.perf_counter() - start)
    return {"sps": args.envs * args.steps / statistics.median(seconds), "first_s": compile_and_first}


def training_rate(task: str, physics: str, args) -> dict:
    cfg = config.resolve(
        {
            "algo": "cpo",
            "env": task,
            "env_params": {"physics": physics},
            "seeds": args.seeds,
            "num_envs": args.envs,
            "rollout_steps": ROLLOUT_STEPS,
            "total_steps": args.iterations * args.envs * ROLLOUT_STEPS,
        }
    )
    with tempfile.TemporaryDirectory() as folder:
        summary = runs.train(cfg, Path(folder) / "run", show_progress=False)
    return {"sps": summary["steps_per_second"], "first_s": summary["compile_seconds"]}  # all seeds' steps


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", action="store_true", help="CPO training rates instead of env-only stepping")
    parser.add_argument("--envs", type=int, default=None, help="environments (default 16; --train: 8 per seed)")
    parser.add_argument("--steps", type=int, default=200, help="env steps of each timed run (not --train)")
    parser.add_argument("--seeds", type=int, default=5, help="--train: seeds vmapped")
    parser.add_argument("--iterations", type=int, default=2, help="--train: iterations of each run")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    args.envs = args.envs or (8 if args.train else 16)
    measure = training_rate if args.train else stepping_rate
    rows = {(task, physics): measure(task, physics, args) for task in TASKS for physics in PHYSICS}
    if args.train:
        command = f"--train --seeds {args.seeds} --envs {args.envs} --iterations {args.iterations}"
        title, what = "CPO training env-steps/s", "compile"
        method = (
            f"CPO with its defaults, {args.seeds} seeds x {args.envs} environments vmapped, {ROLLOUT_STEPS} steps "
            "each per iteration; env steps of all seeds per second, compile excluded."
        )
    else:
        command = f"--envs {args.envs} --steps {args.steps}"
        title, what = "env-only steps/s", "first run (compile)"
        method = f"Random actions, {args.envs} environments vmapped, median of three runs after the compile."
    lines = [
        f"# Navigation tasks: {title} under each physics",
        "",
        f"`python benchmarks/nav_physics_speed.py {command}`, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores, load average {os.getloadavg()[0]:.1f}, JAX "
        f"{jax.__version__}, backend {jax.default_backend()}. {method}",
        "",
        f"| task | planar env-steps/s | mujoco env-steps/s | planar / mujoco | {what} planar, mujoco |",
        "|---|---|---|---|---|",
    ]
    for task in TASKS:
        planar, mujoco = rows[task, "planar"], rows[task, "mujoco"]
        lines.append(
            f"| {task} | {planar['sps']:,.0f} | {mujoco['sps']:,.0f} | {planar['sps'] / mujoco['sps']:,.1f} | "
            f"{planar['first_s']:.1f} s, {mujoco['first_s']:.1f} s |"
        )
    default = "nav-training-speed.md" if args.train else "nav-physics-speed.md"
    out = args.out or Path("benchmarks/results") / default
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
