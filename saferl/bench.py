"""``saferl bench``: env-steps/s of the environment alone and of full training, plus peak memory.

Numbers are measured in one process, after compilation, on whatever JAX
backend is active.  Compare ratios measured in one run: machines are noisy.
"""

from __future__ import annotations

import json
import resource
import time
from pathlib import Path

import jax
import jax.numpy as jnp

from saferl import config as configlib
from saferl.envs import base as envs
from saferl.envs.wrappers import AutoReset, EpisodeStatistics, VecEnv


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def env_only(env_name: str, num_envs: int, seeds: int, steps: int = 1000) -> float:
    """Random-action steps/s of ``seeds x num_envs`` auto-resetting environments."""
    env = envs.make(env_name)
    params = env.default_params()
    pool = configlib.ENV_DEFAULTS.get(env_name, {}).get("reset_pool", 0)
    venv = VecEnv(AutoReset(EpisodeStatistics(env), pool_size=pool), num_envs)
    space = env.action_space(params)

    def run(key):
        state, obs = venv.reset(key, params)
        state = venv.refresh(state, params)  # as the trainer does once per rollout

        def body(carry, k):
            state = carry
            actions = jax.vmap(space.sample)(jax.random.split(k, num_envs))
            state, *_ = venv.step(state, actions, params)
            return state, None

        state, _ = jax.lax.scan(body, state, jax.random.split(key, steps))
        return state

    fn = jax.jit(jax.vmap(run))
    keys = jax.random.split(jax.random.PRNGKey(0), seeds)
    jax.block_until_ready(fn(keys))
    start = time.perf_counter()
    jax.block_until_ready(fn(keys))
    return seeds * num_envs * steps / (time.perf_counter() - start)


def training(algo: str, env_name: str, num_envs: int, seeds: int, chunks: int = 2, **overrides) -> dict:
    """Full-training env-steps/s (rollout + GAE + update), all seeds together."""
    from saferl.train import Trainer

    user = {"algo": algo, "env": env_name, "num_envs": num_envs, "seeds": seeds, "iterations_per_chunk": 1,
            "total_steps": 10**9}
    user = configlib.merge(user, overrides)
    cfg = configlib.resolve(user)
    trainer = Trainer(cfg)
    runners = trainer.init_all()
    start = time.perf_counter()
    compiled = jax.jit(jax.vmap(trainer.chunk)).lower(runners).compile()
    compile_s = time.perf_counter() - start
    runners, _ = compiled(runners)
    jax.block_until_ready(runners)
    start = time.perf_counter()
    for _ in range(chunks):
        runners, _ = compiled(runners)
    jax.block_until_ready(runners)
    elapsed = time.perf_counter() - start
    steps = chunks * trainer.steps_per_iteration * seeds
    return {"algo": algo, "env": env_name, "num_envs": num_envs, "seeds": seeds,
            "rollout_steps": cfg["rollout_steps"], "steps_per_second": steps / elapsed,
            "compile_seconds": compile_s, "peak_rss_mb": peak_rss_mb()}


def main(env: str = "PointGoal1", algo: str = "ppo_lag", quick: bool = False, out: Path | None = None) -> dict:
    if env not in envs.registered():
        raise ValueError(f"unknown environment {env!r}; known environments: {', '.join(envs.registered())}")
    results = {"backend": jax.default_backend(), "devices": [str(d) for d in jax.devices()], "env_only": [],
               "training": []}
    env_grid = [(64, 1), (1024, 1)] if quick else [(1, 1), (64, 1), (1024, 1), (256, 8)]
    print(f"backend: {results['backend']}")
    print("environment only (random actions):")
    for num_envs, seeds in env_grid:
        sps = env_only(env, num_envs, seeds, steps=200 if quick else 1000)
        results["env_only"].append({"num_envs": num_envs, "seeds": seeds, "steps_per_second": sps})
        print(f"  {env} envs={num_envs:<5} seeds={seeds:<3} {sps:>14,.0f} env-steps/s")
    train_grid = [(16, 1)] if quick else [(16, 1), (16, 5), (64, 1)]
    for name in algo.split(","):
        print(f"full training ({name}):")
        for num_envs, seeds in train_grid:
            r = training(name, env, num_envs, seeds, chunks=1 if quick else 2)
            results["training"].append(r)
            print(f"  {name} envs={num_envs:<4} seeds={seeds:<3} {r['steps_per_second']:>10,.0f} env-steps/s  "
                  f"(compile {r['compile_seconds']:.1f}s)")
    results["peak_rss_mb"] = peak_rss_mb()
    print(f"peak memory (RSS): {results['peak_rss_mb']:.0f} MB")
    if out is not None:
        from saferl.runio import write_json_atomic

        write_json_atomic(out, results)
    return results
