"""Wrappers around the functional CMDP API.

Per-environment wrappers (stack them around one environment, innermost first):

* :class:`ClipAction` -- clip continuous actions to the action box.
* :class:`EpisodeStatistics` -- return, undiscounted and discounted cost return and length,
  reported in ``info`` on the step an episode ends.
* :class:`AutoReset` -- resets finished episodes; the last observation of a finished
  episode is kept in ``info["final_obs"]`` so truncated episodes can be bootstrapped.

Batch-level wrappers (around a :class:`VecEnv`):

* :class:`VecEnv` -- ``num_envs`` copies vmapped in one step (a :class:`BatchedEnv`).
* :class:`NormalizeObservation` -- running mean/variance over everything seen,
  kept in the (vector) environment state, hence saved with checkpoints.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from saferl.envs.base import Box, Environment, Wrapper
from saferl.foundation import struct


class ClipAction(Wrapper):
    def step(self, state, action, params):
        space = self.env.action_space(params)
        if isinstance(space, Box):
            action = jnp.clip(action, space.low, space.high)
        return self.env.step(state, action, params)


# --------------------------------------------------------------------------- episode bookkeeping


@struct.dataclass
class EpisodeStatisticsState:
    inner: Any
    episode_return: jax.Array
    episode_cost: jax.Array  # undiscounted, one entry per cost channel
    discounted_cost: jax.Array
    cost_discount: jax.Array  # gamma_c^t
    length: jax.Array


class EpisodeStatistics(Wrapper):
    """Accumulates per-episode statistics and reports them when an episode ends.

    ``info`` gains ``episode_done`` (bool) and, valid where ``episode_done``,
    ``episode_return``, ``episode_cost`` (undiscounted, shape ``cost_shape``),
    ``episode_discounted_cost`` (discount ``gamma_c``) and ``episode_length``.
    Put it *inside* cost augmentations so it reports the environment's own costs.
    """

    def __init__(self, env: Environment, gamma_c: float = 1.0):
        super().__init__(env)
        self.gamma_c = float(gamma_c)

    def reset(self, key, params):
        inner, obs = self.env.reset(key, params)
        zeros = jnp.zeros(self.cost_shape, jnp.float32)
        scalar = jnp.zeros((), jnp.float32)
        state = EpisodeStatisticsState(inner, scalar, zeros, zeros, jnp.ones(()), jnp.zeros((), jnp.int32))
        return state, obs

    def step(self, state, action, params):
        inner, obs, reward, cost, term, trunc, info = self.env.step(state.inner, action, params)
        ep_return = state.episode_return + reward
        ep_cost = state.episode_cost + cost
        ep_disc = state.discounted_cost + state.cost_discount * cost
        length = state.length + 1
        done = jnp.logical_or(term, trunc)
        info = dict(
            info,
            episode_done=done,
            episode_return=ep_return,
            episode_cost=ep_cost,
            episode_discounted_cost=ep_disc,
            episode_length=length,
        )
        discount = state.cost_discount * self.gamma_c
        new_state = EpisodeStatisticsState(inner, ep_return, ep_cost, ep_disc, discount, length)
        return new_state, obs, reward, cost, term, trunc, info


@struct.dataclass
class AutoResetState:
    inner: Any
    key: jax.Array
    pool: Any = None  # (pool_size, ...) pre-computed reset states and observations
    pool_index: Any = None


class AutoReset(Wrapper):
    """Resets an episode as soon as it terminates or is truncated.

    The observation returned on the last step is the first of the next episode;
    the true last observation is ``info["final_obs"]``.

    With ``pool_size = 0`` (default) a fresh reset is computed on every step and
    selected where an episode ended: exact, but it pays for a reset per step, which
    dominates for environments whose reset is dearer than their step (PointGoal1's
    rejection-sampled layouts).  With ``pool_size = k > 0`` the wrapper keeps ``k``
    fresh resets per environment, drawn by :meth:`refresh` (the trainer calls it once
    per rollout), and consumes them in turn.  Each episode still starts from an
    independent fresh reset as long as no environment ends more than ``k`` episodes
    in one rollout; beyond that the pool is reused cyclically.  Use it only where
    episodes are at least ``rollout_steps / k`` long (PointGoal1: 1000-step episodes).
    """

    def __init__(self, env: Environment, pool_size: int = 0):
        super().__init__(env)
        if pool_size < 0:
            raise ValueError(f"reset pool size must be >= 0, got {pool_size}")
        self.pool_size = int(pool_size)

    def _make_pool(self, key, params):
        keys = jax.random.split(key, self.pool_size)
        return jax.vmap(self.env.reset, in_axes=(0, None))(keys, params)

    def reset(self, key, params):
        key, sub, pool_key = jax.random.split(key, 3)
        inner, obs = self.env.reset(sub, params)
        if self.pool_size == 0:
            return AutoResetState(inner, key), obs
        return AutoResetState(inner, key, self._make_pool(pool_key, params), jnp.zeros((), jnp.int32)), obs

    def refresh(self, state: AutoResetState, params) -> AutoResetState:
        """Draw a new pool of resets (no-op without a pool)."""
        if self.pool_size == 0:
            return state
        key, pool_key = jax.random.split(state.key)
        return AutoResetState(state.inner, key, self._make_pool(pool_key, params), jnp.zeros((), jnp.int32))

    def step(self, state, action, params):
        inner, obs, reward, cost, term, trunc, info = self.env.step(state.inner, action, params)
        done = jnp.logical_or(term, trunc)
        if self.pool_size == 0:
            key, sub = jax.random.split(state.key)
            reset_inner, reset_obs = self.env.reset(sub, params)
            pool, index = None, None
        else:
            key, pool, index = state.key, state.pool, state.pool_index
            slot = index % self.pool_size
            reset_inner, reset_obs = jax.tree.map(lambda x: x[slot], pool)
            index = index + done.astype(jnp.int32)
        inner = jax.tree.map(lambda a, b: jnp.where(done, a, b), reset_inner, inner)
        info = dict(info)
        info["final_obs"] = obs
        obs = jnp.where(done, reset_obs, obs)
        return AutoResetState(inner, key, pool, index), obs, reward, cost, term, trunc, info


# --------------------------------------------------------------------------- vectorised


class BatchedEnv:
    """A batch of ``num_envs`` copies of one (wrapped) environment ``env``: its spaces and cost shape, per copy."""

    env: Environment
    num_envs: int

    def observation_space(self, params):
        return self.env.observation_space(params)

    def action_space(self, params):
        return self.env.action_space(params)

    @property
    def cost_shape(self):
        return self.env.cost_shape


class VecEnv(BatchedEnv):
    """``num_envs`` copies of a (wrapped) environment stepped together with ``jax.vmap``.

    ``params`` is shared by all copies.  ``reset(key, params)`` and
    ``step(state, actions, params)`` mirror the single-env API with a leading
    batch axis on everything.
    """

    def __init__(self, env: Environment, num_envs: int):
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self.env = env
        self.num_envs = int(num_envs)

    def reset(self, key, params):
        keys = jax.random.split(key, self.num_envs)
        return jax.vmap(self.env.reset, in_axes=(0, None))(keys, params)

    def step(self, state, action, params):
        return jax.vmap(self.env.step, in_axes=(0, 0, None))(state, action, params)

    def refresh(self, state, params):
        """Let an outermost :class:`AutoReset` draw its pool of resets for the next rollout."""
        if not hasattr(self.env, "refresh"):
            return state
        return jax.vmap(self.env.refresh, in_axes=(0, None))(state, params)


@struct.dataclass
class RunningStatistics:
    """Mean and variance of everything seen so far (parallel Welford/Chan update)."""

    mean: jax.Array
    var: jax.Array
    count: jax.Array

    @classmethod
    def create(cls, shape):
        return cls(jnp.zeros(shape), jnp.ones(shape), jnp.asarray(1e-4, jnp.float32))

    def update(self, batch: jax.Array) -> "RunningStatistics":
        batch_mean = jnp.mean(batch, axis=0)
        batch_var = jnp.var(batch, axis=0)
        batch_count = batch.shape[0]
        delta = batch_mean - self.mean
        total = self.count + batch_count
        mean = self.mean + delta * batch_count / total
        m2 = self.var * self.count + batch_var * batch_count + delta**2 * self.count * batch_count / total
        return RunningStatistics(mean, m2 / total, total)

    def normalize(self, x: jax.Array, clip: float = 10.0) -> jax.Array:
        return jnp.clip((x - self.mean) / jnp.sqrt(self.var + 1e-8), -clip, clip)


def normalization_step(stats: RunningStatistics, obs, final_obs, clip: float, enabled: bool, update=True):
    """One step of running observation normalisation: update the statistics on the new observations
    ``obs`` (where ``update``), then normalise them and ``final_obs`` (the observations before any
    auto-reset; may be None).  :class:`NormalizeObservation` and the Gymnasium bridge both use it.
    Returns ``(stats, obs, final_obs)``."""
    if not enabled:
        return stats, obs, final_obs
    updated = stats.update(obs)
    stats = jax.tree.map(lambda new, old: jnp.where(update, new, old), updated, stats)
    final = None if final_obs is None else stats.normalize(final_obs, clip)
    return stats, stats.normalize(obs, clip), final


@struct.dataclass
class NormalizeState:
    inner: Any
    stats: RunningStatistics
    update: jax.Array  # bool: False freezes the statistics (evaluation)


class NormalizeObservation(BatchedEnv):
    """Running observation normalisation over a :class:`VecEnv` batch."""

    def __init__(self, venv: VecEnv, clip: float = 10.0, enabled: bool = True):
        self.venv = venv
        self.env = venv.env
        self.num_envs = venv.num_envs
        self.clip = float(clip)
        self.enabled = bool(enabled)

    def _normalize(self, stats: RunningStatistics, x: jax.Array) -> jax.Array:
        return stats.normalize(x, self.clip) if self.enabled else x

    def reset(self, key, params, stats: RunningStatistics | None = None, update: bool = True):
        inner, obs = self.venv.reset(key, params)
        if stats is None:
            stats = RunningStatistics.create(obs.shape[1:]).update(obs)
        state = NormalizeState(inner, stats, jnp.asarray(update and self.enabled))
        return state, self._normalize(state.stats, obs)

    def step(self, state, action, params):
        inner, obs, reward, cost, term, trunc, info = self.venv.step(state.inner, action, params)
        info = dict(info)
        stats, obs, final_obs = normalization_step(
            state.stats, obs, info.get("final_obs"), self.clip, self.enabled, state.update
        )
        if "final_obs" in info:
            info["final_obs"] = final_obs
        return NormalizeState(inner, stats, state.update), obs, reward, cost, term, trunc, info

    def refresh(self, state, params):
        return state.replace(inner=self.venv.refresh(state.inner, params))
