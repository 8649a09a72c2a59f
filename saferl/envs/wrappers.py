"""Wrappers around the functional CMDP API.

Per-environment wrappers (stack them around one environment, innermost first):

* :class:`ClipAction` -- clip continuous actions to the action box.
* :class:`CantelliAugmentation` -- Canary's augmented state x_t = (s_t, y_t, gamma_c^t)
  (Canary eqs. 23, 27) and augmented cost c~_t (eq. 25) as an extra cost channel.
* :class:`CumulativeCostAugmentation` -- SCPO's clip(q_t / c0, 0, 1 + Delta) (SCPO Sec. 4.2).
* :class:`EpisodeStatistics` -- return, undiscounted and discounted cost return and length,
  reported in ``info`` on the step an episode ends.
* :class:`AutoReset` -- resets finished episodes; the last observation of a finished
  episode is kept in ``info["final_obs"]`` so truncated episodes can be bootstrapped.

Batch-level wrappers (around a :class:`VecEnv`):

* :class:`VecEnv` -- ``num_envs`` copies vmapped in one step.
* :class:`NormalizeObservation` -- running mean/variance over everything seen,
  kept in the (vector) environment state, hence saved with checkpoints.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from saferl import struct
from saferl.envs.base import Box, Environment, Wrapper


class ClipAction(Wrapper):
    def step(self, state, action, params):
        space = self.env.action_space(params)
        if isinstance(space, Box):
            action = jnp.clip(action, space.low, space.high)
        return self.env.step(state, action, params)


# --------------------------------------------------------------------------- augmentation


@struct.dataclass
class CantelliState:
    inner: Any
    accumulated_cost: jax.Array  # y_t = sum_{k<t} gamma_c^k c_k  (Canary eq. 23)
    cost_discount: jax.Array  # gamma_c^t


class CantelliAugmentation(Wrapper):
    """Canary's state augmentation (eqs. 23-27).

    Observation: ``concat(s_t, [y_t / scale, gamma_c^t])``.  Cost: a vector
    ``[c_t, c~_t]`` with ``c~_t = gamma_c^t c_t^2 + 2 y_t c_t`` (eq. 25), so that
    ``sum_t gamma_c^t c~_t = C(tau)^2`` (eq. 24) and a critic on the second channel
    estimates mu~ = E[C(tau)^2] (eq. 26).  ``scale`` only rescales the observed
    y_t (e.g. by the cost limit rho); it does not change the costs.
    """

    def __init__(self, env: Environment, gamma_c: float = 1.0, scale: float = 1.0):
        super().__init__(env)
        if env.cost_shape != ():
            raise ValueError("CantelliAugmentation needs a single-cost environment")
        if not 0.0 < gamma_c <= 1.0:
            raise ValueError(f"gamma_c must be in (0, 1], got {gamma_c}")
        self.gamma_c = float(gamma_c)
        self.scale = float(scale)

    @property
    def cost_shape(self):
        return (2,)

    def _augment(self, obs, y, disc):
        return jnp.concatenate([obs, jnp.stack([y / self.scale, disc]).astype(obs.dtype)])

    def reset(self, key, params):
        inner, obs = self.env.reset(key, params)
        zero, one = jnp.zeros((), jnp.float32), jnp.ones((), jnp.float32)
        return CantelliState(inner, zero, one), self._augment(obs, zero, one)

    def step(self, state, action, params):
        inner, obs, reward, cost, term, trunc, info = self.env.step(state.inner, action, params)
        y, disc = state.accumulated_cost, state.cost_discount
        augmented_cost = disc * cost**2 + 2.0 * y * cost  # eq. 25
        y_next = y + disc * cost  # eq. 23
        disc_next = disc * self.gamma_c
        new_state = CantelliState(inner, y_next, disc_next)
        costs = jnp.stack([cost, augmented_cost])
        return new_state, self._augment(obs, y_next, disc_next), reward, costs, term, trunc, info

    def observation_space(self, params):
        space = self.env.observation_space(params)
        return Box(-jnp.inf, jnp.inf, (space.shape[0] + 2,))


@struct.dataclass
class CumulativeCostState:
    inner: Any
    cumulative_cost: jax.Array  # q_t


class CumulativeCostAugmentation(Wrapper):
    """SCPO's augmentation (Sec. 4.2): observation gains q_clip = clip(q_t / c0, 0, 1 + Delta)."""

    def __init__(self, env: Environment, cost_limit: float, delta: float = 0.01):
        super().__init__(env)
        if cost_limit <= 0:
            raise ValueError(f"cost_limit (c0) must be positive, got {cost_limit}")
        self.cost_limit = float(cost_limit)
        self.delta = float(delta)

    def _augment(self, obs, q):
        q_clip = jnp.clip(q / self.cost_limit, 0.0, 1.0 + self.delta)
        return jnp.concatenate([obs, q_clip[None].astype(obs.dtype)])

    def reset(self, key, params):
        inner, obs = self.env.reset(key, params)
        q = jnp.zeros((), jnp.float32)
        return CumulativeCostState(inner, q), self._augment(obs, q)

    def step(self, state, action, params):
        inner, obs, reward, cost, term, trunc, info = self.env.step(state.inner, action, params)
        q = state.cumulative_cost + jnp.sum(cost)
        return CumulativeCostState(inner, q), self._augment(obs, q), reward, cost, term, trunc, info

    def observation_space(self, params):
        space = self.env.observation_space(params)
        return Box(-jnp.inf, jnp.inf, (space.shape[0] + 1,))


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
        info = dict(info)
        info.update(
            episode_done=done,
            episode_return=ep_return,
            episode_cost=ep_cost,
            episode_discounted_cost=ep_disc,
            episode_length=length,
        )
        new_state = EpisodeStatisticsState(inner, ep_return, ep_cost, ep_disc, state.cost_discount * self.gamma_c, length)
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


class VecEnv:
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

    def observation_space(self, params):
        return self.env.observation_space(params)

    def action_space(self, params):
        return self.env.action_space(params)

    @property
    def cost_shape(self):
        return self.env.cost_shape


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


@struct.dataclass
class NormalizeState:
    inner: Any
    stats: RunningStatistics
    update: jax.Array  # bool: False freezes the statistics (evaluation)


class NormalizeObservation:
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
        updated = state.stats.update(obs)
        stats = jax.tree.map(lambda new, old: jnp.where(state.update, new, old), updated, state.stats)
        info = dict(info)
        if "final_obs" in info:
            info["final_obs"] = self._normalize(stats, info["final_obs"])
        return NormalizeState(inner, stats, state.update), self._normalize(stats, obs), reward, cost, term, trunc, info

    def refresh(self, state, params):
        return state.replace(inner=self.venv.refresh(state.inner, params))

    def observation_space(self, params):
        return self.venv.observation_space(params)

    def action_space(self, params):
        return self.venv.action_space(params)

    @property
    def cost_shape(self):
        return self.venv.cost_shape
