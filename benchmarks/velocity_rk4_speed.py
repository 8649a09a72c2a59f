"""Env-only steps/s of the velocity tasks whose RK4 moves a free joint, under each ``rk4_orientation``.

    JAX_PLATFORMS=cpu python benchmarks/velocity_rk4_speed.py [--envs 16] [--steps 200] [--rounds 2] \
        > benchmarks/results/velocity-rk4-speed.md

``"uncorrected"`` (the default: MuJoCo 2.3.3's rule, an RK4 step written on MuJoCo's forward dynamics,
``saferl.envs.mujoco_rk4``) against ``"munthe-kaas"`` (MuJoCo 4.0's ``mj_step``), alternated in one process for
``--rounds`` rounds so that both see the same machine; uniform random actions, ``--envs`` environments vmapped,
``--steps`` env steps per timed call after one untimed call (the compile)."""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import jax

from saferl.envs.base import make

TASKS = ("SafetyAntVelocity", "SafetyHumanoidVelocity")
RULES = ("munthe-kaas", "uncorrected")


def rate(env, rule: str, envs: int, steps: int) -> float:
    params = env.default_params().replace(rk4_orientation=rule)
    states, _ = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(jax.random.PRNGKey(0), envs), params)
    actions = env.action_space(params).shape[0]

    def run(states, key):
        def body(states, k):
            action = jax.random.uniform(k, (envs, actions), minval=-1.0, maxval=1.0)
            return jax.vmap(env.step, in_axes=(0, 0, None))(states, action, params)[0], None

        return jax.lax.scan(body, states, jax.random.split(key, steps))[0]

    program = jax.jit(run)
    jax.block_until_ready(program(states, jax.random.PRNGKey(1)))
    start = time.perf_counter()
    jax.block_until_ready(program(states, jax.random.PRNGKey(2)))
    return envs * steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=16)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print("# Velocity tasks: env-only steps/s by RK4 rule\n")
    print(
        f"`python benchmarks/velocity_rk4_speed.py --envs {args.envs} --steps {args.steps} --rounds {args.rounds}` "
        f"({platform.processor() or platform.machine()}, {jax.devices()[0].platform}); each rule's rounds, "
        "alternated in one process, and the median ratio.\n"
    )
    print("| task | munthe-kaas (mj_step) | uncorrected (default) | uncorrected / munthe-kaas |")
    print("|---|---|---|---|")
    for name in TASKS:
        env = make(name)
        rates = {rule: [] for rule in RULES}
        for _ in range(args.rounds):
            for rule in RULES:
                rates[rule].append(rate(env, rule, args.envs, args.steps))
        ratio = statistics.median(u / m for u, m in zip(rates["uncorrected"], rates["munthe-kaas"]))
        cells = [", ".join(f"{r:,.0f}" for r in rates[rule]) for rule in RULES]
        print(f"| {name} | {cells[0]} | {cells[1]} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
