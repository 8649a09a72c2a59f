"""The compiled training loop.

``Trainer(config)`` builds the environment stack, networks and algorithm from a
resolved config.  One training *iteration* is

    rollout (lax.scan over steps, vmapped over envs) -> critics on the block ->
    GAE for the reward and every cost channel -> algorithm.update

and a *chunk* is a ``lax.scan`` over iterations.  ``train_chunk`` is jitted once
and vmapped over seeds, so S seeds run as one program; Python only runs
between chunks (logging, checkpoints, progress).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from saferl import struct
from saferl.algos import base as algos
from saferl.core import constraints, networks
from saferl.core.rollout import Batch, collect, episode_estimates, initial_episodes, make_batch
from saferl.envs import base as envs
from saferl.envs.wrappers import AutoReset, ClipAction, EpisodeStatistics, NormalizeObservation, VecEnv


@struct.dataclass
class RunnerState:
    agent: algos.AgentState
    env_state: Any
    obs: jax.Array
    key: jax.Array
    episodes: dict  # running estimate: means over the last batch with finished episodes
    iteration: jax.Array
    env_steps: jax.Array


def make_env_params(env, overrides: dict):
    params = env.default_params()
    if not overrides:
        return params
    names = {f for f in getattr(params, "__dataclass_fields__", {})}
    changes = {}
    for key, value in overrides.items():
        if key not in names:
            raise ValueError(f"unknown env_params.{key} for {env.name}; allowed: {', '.join(sorted(names))}")
        old = getattr(params, key)
        if isinstance(old, (int, float, bool, str, tuple)):
            changes[key] = type(old)(value) if not isinstance(old, tuple) else tuple(value)
        else:
            new = jnp.asarray(value, dtype=jnp.asarray(old).dtype)
            if new.shape != jnp.shape(old):
                raise ValueError(f"env_params.{key} must have shape {jnp.shape(old)}, got {new.shape}")
            changes[key] = new
    return params.replace(**changes)


class Trainer:
    def __init__(self, config: dict):
        self.config = config
        net = config["network"]
        self.constraint = constraints.from_config(config["constraint"])
        base_env = envs.make(config["env"])
        self.env_params = make_env_params(base_env, config.get("env_params", {}))
        algo_cls = algos.get(config["algo"])
        env_cost_channels = int(np.prod(base_env.cost_shape)) if base_env.cost_shape else 1
        self.env_cost_channels = env_cost_channels
        env = EpisodeStatistics(ClipAction(base_env), gamma_c=float(self.constraint.gamma_c))
        # the algorithm wraps before networks are sized: augmentations change the observation
        # and may add cost channels (a VaR surrogate's, saferl.envs.risk)
        probe = algo_cls(config["hparams"], None, None, self.constraint.kind, self.constraint.surrogate)
        env = AutoReset(probe.wrap_env(env, config["constraint"]), pool_size=config["reset_pool"])
        self.env_params = env.lift_params(self.env_params)
        wrapped_channels = int(np.prod(env.cost_shape)) if env.cost_shape else 1
        num_channels = algo_cls.cost_channels(wrapped_channels)
        self.venv = NormalizeObservation(VecEnv(env, config["num_envs"]), enabled=config["normalize_observations"])
        obs_dim = int(np.prod(env.observation_space(self.env_params).shape))
        self.actor = networks.make_actor(obs_dim, env.action_space(self.env_params), net["actor_hidden"],
                                         net["activation"], net.get("init_log_std", -0.5))
        self.critics = networks.Critics(obs_dim, 1 + num_channels, tuple(net["critic_hidden"]), net["activation"],
                                        normalize=bool(net.get("value_normalization", False)))
        self.algo = algo_cls(config["hparams"], self.actor, self.critics, self.constraint.kind,
                             self.constraint.surrogate)
        gammas = list(self.algo.channel_gammas())
        if self.constraint.kind == "var":  # the risk channels accumulate C(tau) with the constraint's discount
            gammas[1:] = [float(self.constraint.gamma_c)] * (len(gammas) - 1)
        self.gammas = jnp.asarray(gammas, jnp.float32)
        # a finite-horizon VaR constraint: the risk channels' return C(tau) ends at the time limit
        self.end_at_truncation = None
        if self.constraint.kind == "var" and config["constraint"].get("finite_horizon", False):
            self.end_at_truncation = jnp.asarray([0.0] + [1.0] * (len(gammas) - 1), jnp.float32)
        self.num_steps = int(config["rollout_steps"])
        self.steps_per_iteration = self.num_steps * int(config["num_envs"])
        iterations = max(1, math.ceil(config["total_steps"] / self.steps_per_iteration))
        chunk = int(config["iterations_per_chunk"]) or max(1, min(iterations, math.ceil(iterations / 25)))
        self.iterations_per_chunk = chunk
        self.num_chunks = math.ceil(iterations / chunk)
        self.total_iterations = self.num_chunks * chunk
        self._chunk_fn = None

    # ------------------------------------------------------------------ pure functions
    def init(self, key: jax.Array) -> RunnerState:
        k_agent, k_env, k_run = jax.random.split(key, 3)
        agent = self.algo.init(k_agent, self.constraint)
        env_state, obs = self.venv.reset(k_env, self.algo.rollout_env_params(agent, self.env_params))
        episodes = initial_episodes(self.env_cost_channels, self.constraint.kind == "var",
                                    constraints.window(self.config["constraint"]))
        return RunnerState(agent, env_state, obs, k_run, episodes, jnp.zeros((), jnp.int32), jnp.zeros((), jnp.float32))

    def rollout_batch(self, runner: RunnerState, key: jax.Array):
        """One rollout with the runner's policy, its GAE batch and the episode estimates:
        ``(env_state, obs, batch)`` with ``batch.episodes`` filled."""
        agent = runner.agent
        env_params = self.algo.rollout_env_params(agent, self.env_params)
        env_state, obs, traj = collect(self.venv, env_params, self.actor, agent.actor_params,
                                       runner.env_state, runner.obs, key, self.num_steps)
        batch = make_batch(traj, self.critics, agent.critic_params, self.gammas, self.algo.hp["gae_lambda"],
                           self.end_at_truncation)
        # With no finished episode in the batch, zeros stand in for the (NaN) initial estimate.
        previous = jax.tree.map(lambda x: jnp.nan_to_num(x, nan=0.0), runner.episodes)
        levels = self.algo.risk_levels(agent)
        return env_state, obs, batch.replace(episodes=episode_estimates(batch, previous, *(levels or ())))

    def iteration(self, runner: RunnerState):
        key, k_roll, k_upd = jax.random.split(runner.key, 3)
        agent = runner.agent
        env_state, obs, batch = self.rollout_batch(runner, k_roll)
        estimate = batch.episodes
        # PopArt: move the value normalisation to this batch's targets (values unchanged)
        agent = agent.replace(critic_params=self.critics.update_normalizer(agent.critic_params, batch.returns))
        agent, algo_metrics = self.algo.update(agent, batch, k_upd)
        metrics = self.iteration_metrics(batch, agent)
        metrics.update(algo_metrics)
        runner = RunnerState(agent, env_state, obs, key, estimate, runner.iteration + 1,
                             runner.env_steps + self.steps_per_iteration)
        return runner, metrics

    def iteration_metrics(self, batch: Batch, agent) -> dict:
        done = batch.episode_done.astype(jnp.float32)
        n = jnp.sum(done)
        nan = jnp.asarray(jnp.nan, jnp.float32)

        def mean(x):
            return jnp.where(n > 0, jnp.sum(x * done) / jnp.maximum(n, 1.0), nan)

        cost = batch.episode_discounted_cost[:, 0]
        metrics = {
            "episode_return": mean(batch.episode_return),
            "episode_cost": mean(batch.episode_cost[:, 0]),
            "episode_discounted_cost": mean(cost),
            "episode_length": mean(batch.episode_length.astype(jnp.float32)),
            "episodes": n,
        }
        for i in range(1, self.env_cost_channels):
            metrics[f"episode_cost_{i}"] = mean(batch.episode_cost[:, i])
        if self.constraint.kind == "var":
            # empirical P(C(tau) >= rho) over the episodes finished in this iteration
            metrics["violation_probability"] = mean((cost >= agent.constraint.limit).astype(jnp.float32))
        return metrics

    def chunk(self, runner: RunnerState):
        def body(r, _):
            return self.iteration(r)

        return jax.lax.scan(body, runner, None, length=self.iterations_per_chunk)

    # ------------------------------------------------------------------ compiled, all seeds
    def seed_keys(self) -> jax.Array:
        return jax.random.split(jax.random.PRNGKey(self.config["seed"]), self.config["seeds"])

    def init_all(self) -> RunnerState:
        return jax.jit(jax.vmap(self.init))(self.seed_keys())

    def train_chunk(self, runners: RunnerState):
        if self._chunk_fn is None:
            self._chunk_fn = jax.jit(jax.vmap(self.chunk))
        return self._chunk_fn(runners)
