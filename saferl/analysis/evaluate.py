"""``saferl eval``: run a trained policy for N episodes per seed (frozen observation statistics).

Each seed's episodes run in the environment parameters of that seed's next rollout
(:meth:`saferl.algos.base.Algorithm.rollout_env_params`): a VaR constraint's augmented state reads its
y / rho with the run's rho (and eta), as in training, not the environment's default."""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from saferl.envs.wrappers import NormalizeObservation, VecEnv
from saferl.training import in_program_sweep, run_directory
from saferl.training.trainer import Trainer

MAX_EVAL_STEPS = 100_000


def episode_env_params(trainer, agent):
    """The environment parameters one seed's evaluation episodes run in: its next rollout's
    (:meth:`saferl.algos.base.Algorithm.rollout_env_params`, a VaR constraint's rho and eta)."""
    return trainer.algo.rollout_env_params(agent, trainer.env_params)


def evaluate_agents(trainer, agents, stats, episodes: int, deterministic: bool = False, key: int = 12345):
    """``(returns, costs)``, each ``(runners, episodes)``: ``episodes`` episodes of each runner's actor (``agents``,
    stacked over runners as a checkpoint holds them) on ``trainer``'s environment, its observations normalised with
    the frozen ``stats`` where training normalised them; runner ``i`` draws its episodes with key ``i`` of
    ``PRNGKey(key)`` split per runner."""
    cfg = trainer.config
    venv = NormalizeObservation(VecEnv(trainer.venv.env, episodes), enabled=cfg["normalize_observations"])
    actor = trainer.actor

    def one_seed(agent, stats, k):
        actor_params, env_params = agent.actor_params, episode_env_params(trainer, agent)
        k_reset, k_loop = jax.random.split(k)
        state, obs = venv.reset(k_reset, env_params, stats=stats, update=False)
        zeros = jnp.zeros((episodes,), jnp.float32)
        carry = (state, obs, k_loop, jnp.zeros((episodes,), bool), zeros, zeros, jnp.zeros((), jnp.int32))

        def cond(c):
            return (~jnp.all(c[3])) & (c[6] < MAX_EVAL_STEPS)

        def body(c):
            state, obs, k, finished, ret, cost, t = c
            k, k_act = jax.random.split(k)
            dist = actor.distribution(actor_params, obs)
            action = actor.mode(dist) if deterministic else actor.sample(dist, k_act)
            state, obs, _, _, _, _, info = venv.step(state, action, env_params)
            first = info["episode_done"] & ~finished
            ret = jnp.where(first, info["episode_return"], ret)
            cost = jnp.where(first, info["episode_cost"].reshape(episodes, -1)[:, 0], cost)
            return state, obs, k, finished | info["episode_done"], ret, cost, t + 1

        out = jax.lax.while_loop(cond, body, carry)
        return out[4], out[5]

    runners = jax.tree.leaves(agents)[0].shape[0]
    keys = jax.random.split(jax.random.PRNGKey(key), runners)
    returns, costs = jax.jit(jax.vmap(one_seed))(agents, stats, keys)
    return np.asarray(returns), np.asarray(costs)


def evaluate_run(run_dir: Path, episodes: int, deterministic: bool = False, key: int = 12345) -> dict:
    cfg = run_directory.load_run_config(run_dir)
    trainer = Trainer(cfg)
    runners, _ = run_directory.load_checkpoint(
        run_dir, trainer.init_shapes()
    )  # the shapes are enough: nothing compiled
    returns, costs = evaluate_agents(trainer, runners.agent, runners.env_state.stats, episodes, deterministic, key)
    columns = run_directory.runner_columns(cfg)  # one per runner: its seed (and a swept run's grid point)
    per_seed = [
        {
            **{k: v for k, v in col.items() if k != "seed"},
            "episode_return": float(r.mean()),
            "episode_cost": float(c.mean()),
        }
        for col, r, c in zip(columns, returns, costs)
    ]
    result = {
        "seeds": [col["seed"] for col in columns],
        "per_seed": per_seed,
        "episode_return": float(returns.mean()),
        "episode_cost": float(costs.mean()),
    }
    if cfg["constraint"]["type"] == "var":  # the fraction of episodes whose cost reaches rho, P(C >= rho)
        rho = np.asarray([col.get("constraint.rho", cfg["constraint"]["rho"]) for col in columns], float)
        breached = costs >= rho[:, None]
        for entry, seed_breached in zip(per_seed, breached):
            entry["violation_probability"] = float(seed_breached.mean())
        result["violation_probability"] = float(breached.mean())
    if cfg.get("sweep"):  # means per grid point
        result["grid"] = []
        for g, point in enumerate(in_program_sweep.points(cfg)):
            mine = [e for e in per_seed if e[in_program_sweep.POINT_COLUMN] == g]
            entry = {"index": g, "point": point, "label": in_program_sweep.label(point)}
            for name in ("episode_return", "episode_cost", "violation_probability"):
                if name in mine[0]:
                    entry[name] = float(np.mean([e[name] for e in mine]))
            result["grid"].append(entry)
    return result
