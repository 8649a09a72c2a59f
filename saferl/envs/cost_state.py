"""The cumulative-cost state: the observation augmented with the episode's cost so far.

SCPO's augmented state (Mhamed & Gu, "SCPO: Safe Reinforcement Learning with Safety Critic Policy
Optimization", arXiv:2311.00880, Sec. 4.2): with q_t the cost accumulated in the episode before step t
(undiscounted, q_0 = 0) and c0 the cost limit, the agent observes

    s'_t = (s_t, q_t^clip),    q_t^clip = clip(q_t / c0, 0, 1 + Delta),

one entry per cost channel (each over its own limit).  Delta > 0 keeps a state past the limit
(q_t > c0, unsafe) distinguishable from one at the limit (q_t = c0, still safe); the authors' code
(SafeRL-Lab/SCPO) clips at 1 (Delta = 0).  The cost signal passes through unchanged.

The limit is an environment parameter (:class:`CostStateParams`): an algorithm sets it before every
rollout from its traced constraint (``Algorithm.rollout_env_params``), so sweeping the cost limit never
recompiles; ``default_limit`` (the config's) is what the stack's default parameters carry (evaluation).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp

from saferl.envs.base import Box, Environment, Wrapper
from saferl.foundation import struct


def cost_state_feature(cumulative_cost, limit, delta: float):
    """q^clip = clip(q / c0, 0, 1 + Delta) (Sec. 4.2), elementwise (a limit of 0: 0 until the first cost)."""
    return jnp.clip(cumulative_cost / jnp.maximum(limit, 1e-12), 0.0, 1.0 + delta)


@struct.dataclass
class CostStateParams:
    inner: Any
    limit: jax.Array  # c0, one per cost channel


@struct.dataclass
class CostStateState:
    inner: Any
    cumulative_cost: jax.Array  # q_t, one per cost channel


class CostStateAugmentation(Wrapper):
    """Appends clip(q_t / c0, 0, 1 + ``delta``) per cost channel to the observation."""

    def __init__(self, env: Environment, delta: float = 0.0, default_limit: Any = 1.0):
        super().__init__(env)
        if not delta >= 0.0:
            raise ValueError(f"the cost-state clip margin Delta must be >= 0, got {delta}")
        self.delta = float(delta)
        self.channels = math.prod(env.cost_shape) if env.cost_shape else 1
        self.default_limit = default_limit

    def default_params(self) -> CostStateParams:
        return self.lift_params(self.env.unwrapped.default_params())

    def lift_params(self, base_params, limit=None) -> CostStateParams:
        limit = self.default_limit if limit is None else limit
        return CostStateParams(
            self.env.lift_params(base_params), jnp.broadcast_to(jnp.asarray(limit, jnp.float32), (self.channels,))
        )

    def _augment(self, obs, cumulative_cost, params: CostStateParams):
        feature = cost_state_feature(cumulative_cost, params.limit, self.delta)
        return jnp.concatenate([obs, feature.astype(obs.dtype)])

    def reset(self, key, params: CostStateParams):
        inner, obs = self.env.reset(key, params.inner)
        q = jnp.zeros((self.channels,), jnp.float32)
        return CostStateState(inner, q), self._augment(obs, q, params)

    def step(self, state: CostStateState, action, params: CostStateParams):
        inner, obs, reward, cost, term, trunc, info = self.env.step(state.inner, action, params.inner)
        q = state.cumulative_cost + jnp.reshape(cost, (self.channels,)).astype(jnp.float32)
        return CostStateState(inner, q), self._augment(obs, q, params), reward, cost, term, trunc, info

    def observation_space(self, params: CostStateParams):
        space = self.env.observation_space(params.inner)
        return Box(-jnp.inf, jnp.inf, (space.shape[0] + self.channels,))

    def action_space(self, params: CostStateParams):
        return self.env.action_space(params.inner)
