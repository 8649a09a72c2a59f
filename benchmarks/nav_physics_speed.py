"""Env-only stepping rate of each navigation task under each physics, measured side by side in one process.

    python benchmarks/nav_physics_speed.py [--envs 16] [--steps 200] [--out benchmarks/results/nav-physics-speed.md]

For each task and physics: one jitted program that resets ``--envs`` environments and steps them ``--steps`` times
under uniform random actions (vmapped over environments, a ``lax.scan`` over steps); compiled and run once, then
timed over three runs (the median is reported).  MuJoCo's rows step the host library through the callback of
``saferl.envs.mujoco_host``, on this process's threads.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

import jax

from saferl.envs.base import make, make_env_params

TASKS = ("PointGoal1", "PointPush1", "CarButton1", "RacecarCircle1")
PHYSICS = ("planar", "mujoco")


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


def measure(task: str, physics: str, envs: int, steps: int) -> dict:
    env = make(task)
    program = rollout_program(env, make_env_params(env, {"physics": physics}), envs, steps)
    start = time.perf_counter()
    jax.block_until_ready(program(jax.random.PRNGKey(0)))
    compile_and_first = time.perf_counter() - start
    seconds = []
    for run in range(3):
        start = time.perf_counter()
        jax.block_until_ready(program(jax.random.PRNGKey(run + 1)))
        seconds.append(time.perf_counter() - start)
    median = statistics.median(seconds)
    return {"task": task, "physics": physics, "sps": envs * steps / median, "first_s": compile_and_first}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=16)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/nav-physics-speed.md"))
    args = parser.parse_args(argv)
    rows = [measure(task, physics, args.envs, args.steps) for task in TASKS for physics in PHYSICS]
    lines = [
        "# Navigation tasks: env-only steps/s under each physics",
        "",
        f"`python benchmarks/nav_physics_speed.py --envs {args.envs} --steps {args.steps}`, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, "
        f"{len(os.sched_getaffinity(0))} cores, load average {os.getloadavg()[0]:.1f}, JAX {jax.__version__}, "
        f"backend {jax.default_backend()}. Random actions, {args.envs} environments vmapped, median of three runs "
        "after the compile.",
        "",
        "| task | planar env-steps/s | mujoco env-steps/s | planar / mujoco | first run (compile) planar, mujoco |",
        "|---|---|---|---|---|",
    ]
    for task in TASKS:
        planar, mujoco = (next(r for r in rows if r["task"] == task and r["physics"] == p) for p in PHYSICS)
        lines.append(
            f"| {task} | {planar['sps']:,.0f} | {mujoco['sps']:,.0f} | {planar['sps'] / mujoco['sps']:,.0f} | "
            f"{planar['first_s']:.1f} s, {mujoco['first_s']:.1f} s |"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
