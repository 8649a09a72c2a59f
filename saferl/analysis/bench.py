"""``saferl bench``: env-steps/s of the environment alone and of full training, plus peak memory.

Numbers are measured in one process, after compilation, on whatever JAX
backend is active.  Compare ratios measured in one run: machines are noisy.
``--env`` takes one environment, several separated by commas, or a group name
(:data:`ENV_GROUPS`: ``ctrpo-benchmark``, the C-TRPO paper's eight tasks).
"""

from __future__ import annotations

import resource
import time
from pathlib import Path

import jax

from saferl.envs import base as envs
from saferl.envs import suites
from saferl.envs.wrappers import AutoReset, EpisodeStatistics, VecEnv
from saferl.foundation.atomic_files import write_json_atomic
from saferl.training import config as configlib
from saferl.training.trainer import Trainer


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def env_only(env_name: str, num_envs: int, seeds: int, steps: int = 1000, env_params: dict | None = None) -> float:
    """Random-action steps/s of ``seeds x num_envs`` auto-resetting environments (``env_params`` override the
    environment's parameters, as the training config's do)."""
    env = envs.make(env_name)
    params = envs.make_env_params(env, env_params or {})
    pool = envs.config_defaults(env_name).get("reset_pool", 0)
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
    user = {
        "algo": algo,
        "env": env_name,
        "num_envs": num_envs,
        "seeds": seeds,
        "iterations_per_chunk": 1,
        "total_steps": 10**9,
    }
    user = configlib.merge(user, overrides)
    cfg = configlib.resolve(user)
    trainer = Trainer(cfg)
    runners = trainer.init_all()
    start = time.perf_counter()
    compiled = trainer.compile_chunk(runners, reuse=False)
    compile_s = time.perf_counter() - start
    runners, _ = compiled(runners)
    jax.block_until_ready(runners)
    start = time.perf_counter()
    for _ in range(chunks):
        runners, _ = compiled(runners)
    jax.block_until_ready(runners)
    elapsed = time.perf_counter() - start
    steps = chunks * trainer.steps_per_iteration * seeds
    return {
        "algo": algo,
        "env": env_name,
        "num_envs": num_envs,
        "seeds": seeds,
        "rollout_steps": cfg["rollout_steps"],
        "steps_per_second": steps / elapsed,
        "compile_seconds": compile_s,
        "peak_rss_mb": peak_rss_mb(),
    }


DEFAULT_ENV_GRID = "1x1,64x1,1024x1,256x8"
#: names ``--env`` accepts for several environments at once
ENV_GROUPS = suites.SUITES
DEFAULT_TRAIN_GRID = "16x1,16x8,64x1"
QUICK_ENV_GRID, QUICK_TRAIN_GRID = "64x1,1024x1", "16x1"


def parse_grid(text: str) -> list[tuple[int, int]]:
    """``"16x1,64x8"`` -> ``[(16, 1), (64, 8)]`` (environments per seed x seeds)."""
    grid = []
    for item in str(text).split(","):
        parts = item.strip().lower().split("x")
        try:
            num_envs, seeds = (int(p) for p in parts)
        except ValueError:
            raise ValueError(f"bad grid entry {item.strip()!r}: expected ENVSxSEEDS such as 16x1 or 1024x8") from None
        if num_envs < 1 or seeds < 1:
            raise ValueError(f"bad grid entry {item.strip()!r}: environments and seeds must be >= 1")
        grid.append((num_envs, seeds))
    return grid


def parse_envs(text: str) -> list[str]:
    """``"PointGoal1,PointPush1"`` or a group of :data:`ENV_GROUPS` -> the environment names, each checked."""
    names = []
    for item in str(text).split(","):
        item = item.strip()
        names.extend(ENV_GROUPS.get(item, (item,)))
    known = envs.registered()
    for name in names:
        if name not in known:
            raise ValueError(
                f"unknown environment {name!r}; known environments: {', '.join(known)}; groups: {', '.join(ENV_GROUPS)}"
            )
    return names


def seed_scaling(rows: list[dict]) -> list[dict]:
    """For each (algo, num_envs) measured with 1 seed and with S > 1 seeds: how S vmapped seeds
    compare with S separate one-seed runs (steady state, compile excluded, and for a 1M-step run
    per seed with compile included)."""
    out = []
    for r in rows:
        if r["seeds"] == 1:
            continue
        single = next(
            (
                q
                for q in rows
                if q["algo"] == r["algo"]
                and q["env"] == r["env"]
                and q["num_envs"] == r["num_envs"]
                and q["seeds"] == 1
            ),
            None,
        )
        if single is None:
            continue
        steps = 1_000_000
        together = r["compile_seconds"] + r["seeds"] * steps / r["steps_per_second"]
        apart = r["seeds"] * (single["compile_seconds"] + steps / single["steps_per_second"])
        out.append(
            {
                "algo": r["algo"],
                "env": r["env"],
                "num_envs": r["num_envs"],
                "seeds": r["seeds"],
                "throughput_ratio": r["steps_per_second"] / single["steps_per_second"],
                "time_ratio_1M_steps": together / apart,
            }
        )
    return out


def device_peak_memory_mb() -> float | None:
    """Peak accelerator memory of the first device (None on CPU, where RSS is the measure)."""
    stats = jax.devices()[0].memory_stats() if jax.default_backend() != "cpu" else None
    if not stats:
        return None
    return stats.get("peak_bytes_in_use", stats.get("bytes_in_use", 0)) / 2**20


def main(
    env: str = "PointGoal1",
    algo: str = "ppo_lag",
    quick: bool = False,
    out: Path | None = None,
    grid: str | None = None,
    env_grid: str | None = None,
    overrides: dict | None = None,
    chunks: int | None = None,
) -> dict:
    env_names = parse_envs(env)
    env_cells = parse_grid(env_grid or (QUICK_ENV_GRID if quick else DEFAULT_ENV_GRID))
    train_cells = parse_grid(grid or (QUICK_TRAIN_GRID if quick else DEFAULT_TRAIN_GRID))
    chunks = chunks or (1 if quick else 2)
    results = {
        "backend": jax.default_backend(),
        "devices": [str(d) for d in jax.devices()],
        "env_only": [],
        "training": [],
        "overrides": overrides or {},
    }
    print(f"backend: {results['backend']}")
    for env_name in env_names:
        print(f"{env_name}, environment only (random actions):")
        for num_envs, seeds in env_cells:
            sps = env_only(
                env_name, num_envs, seeds, steps=200 if quick else 1000, env_params=(overrides or {}).get("env_params")
            )
            results["env_only"].append({"env": env_name, "num_envs": num_envs, "seeds": seeds, "steps_per_second": sps})
            print(f"  envs={num_envs:<5} seeds={seeds:<3} {sps:>14,.0f} env-steps/s")
        for name in algo.split(","):
            print(f"{env_name}, full training ({name}):")
            for num_envs, seeds in train_cells:
                r = training(name, env_name, num_envs, seeds, chunks=chunks, **(overrides or {}))
                r["device_peak_mb"] = device_peak_memory_mb()
                results["training"].append(r)
                memory = f", device peak {r['device_peak_mb']:.0f} MB" if r["device_peak_mb"] is not None else ""
                print(
                    f"  {name} envs={num_envs:<4} seeds={seeds:<3} {r['steps_per_second']:>10,.0f} env-steps/s  "
                    f"(compile {r['compile_seconds']:.1f}s{memory})"
                )
    results["seed_scaling"] = seed_scaling(results["training"])
    for s in results["seed_scaling"]:
        print(
            f"  {s['algo']} {s['env']} envs={s['num_envs']}: {s['seeds']} vmapped seeds give "
            f"{s['throughput_ratio']:.2f}x the env-steps/s of one seed; 1M steps per seed take "
            f"{s['time_ratio_1M_steps']:.2f}x the time of {s['seeds']} separate runs (compiles included)"
        )
    results["peak_rss_mb"] = peak_rss_mb()
    print(f"peak memory (RSS): {results['peak_rss_mb']:.0f} MB")
    if out is not None:
        write_json_atomic(out, results)
    return results
