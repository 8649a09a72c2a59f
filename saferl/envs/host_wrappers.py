"""saferl's JAX wrappers around a host-stepped (Gymnasium) environment.

An algorithm's ``wrap_env`` (a VaR constraint's cost-state augmentation,
:class:`saferl.envs.risk.RiskAugmentation`) wraps a JAX environment.  To apply the same wrappers
around an environment stepped on the host, :class:`HostStepLeaf` stands in for the environment at
the bottom of the stack: its ``step`` returns the host step's outcome, passed in as the "action",
and its ``reset`` returns the first observation, passed in through its parameters.  The wrappers
above it run unchanged, jitted and vmapped over the environments, so the augmented observations
and per-step costs are computed by the code the compiled rollout runs.

:class:`HostWrappers` keeps the wrapper state of ``N`` host environments and turns each host step
(:class:`saferl.envs.gym_bridge.HostStep`) into the augmented observations, final observations and
costs, resetting the wrappers of the environments whose episode ended (as ``AutoReset`` does).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from saferl.envs.base import Environment, EnvParams
from saferl.foundation import struct


@struct.dataclass
class HostOutcome:
    """What a host environment's step returned, for one environment."""

    obs: jax.Array
    reward: jax.Array
    cost: jax.Array  # () the environment's single cost
    terminated: jax.Array
    truncated: jax.Array


@struct.dataclass
class HostStepParams(EnvParams):
    first_obs: Any = None  # the observation reset returns (set per environment before each reset)


class HostStepLeaf(Environment):
    """The bottom of a JAX wrapper stack whose environment is stepped on the host."""

    cost_shape = ()

    def __init__(self, observation_space, action_space, max_steps: int = 0):
        self._observation_space, self._action_space, self.max_steps = observation_space, action_space, int(max_steps)

    def default_params(self) -> HostStepParams:
        return HostStepParams(max_steps=self.max_steps, first_obs=jnp.zeros(self._observation_space.shape, jnp.float32))

    def reset(self, key, params: HostStepParams):
        return jnp.zeros((), jnp.int32), params.first_obs

    def step(self, state, outcome: HostOutcome, params: HostStepParams):
        return state, outcome.obs, outcome.reward, outcome.cost, outcome.terminated, outcome.truncated, {}

    def observation_space(self, params):
        return self._observation_space

    def action_space(self, params):
        return self._action_space


class HostWrappers:
    """``wrapped`` (a wrapper stack around ``leaf``) applied to ``num_envs`` host environments.

    ``params_of(leaf_params)`` gives the wrapped stack's parameters for a rollout (the algorithm's
    ``rollout_env_params`` applied to ``wrapped.lift_params``); it is traced, so pass the traced agent
    through a closure or partial as the caller needs.
    """

    def __init__(self, wrapped: Environment, leaf: HostStepLeaf, num_envs: int):
        if wrapped.cost_shape not in ((), (1,)) and len(wrapped.cost_shape) != 1:
            raise ValueError(f"unsupported wrapped cost shape {wrapped.cost_shape}")
        self.wrapped, self.leaf, self.num_envs = wrapped, leaf, int(num_envs)
        self.cost_channels = int(np.prod(wrapped.cost_shape)) if wrapped.cost_shape else 1
        probe = wrapped.lift_params(leaf.default_params())
        self.obs_dim = int(np.prod(wrapped.observation_space(probe).shape))

    def _params(self, params_of, first_obs):
        return params_of(self.wrapped.lift_params(self.leaf.default_params().replace(first_obs=first_obs)))

    def reset(self, params_of, raw_obs):
        """Wrapper states and augmented observations for the first observations ``raw_obs`` (N, D)."""
        keys = jax.random.split(jax.random.PRNGKey(0), self.num_envs)  # the leaf ignores them
        return jax.vmap(lambda k, o: self.wrapped.reset(k, self._params(params_of, o)))(keys, raw_obs)

    def step(self, params_of, states, raw_final_obs, reward, cost, terminated, truncated, raw_next_obs, done):
        """``(states, obs, final_obs, costs)``: the wrappers stepped on one host step, reset where ``done``."""

        def one(state, final_obs, r, c, term, trunc, next_obs, d):
            params = self._params(params_of, next_obs)
            outcome = HostOutcome(final_obs, r, c[0], term, trunc)
            stepped, obs, _, costs, *_ = self.wrapped.step(state, outcome, params)
            fresh, first = self.wrapped.reset(jax.random.PRNGKey(0), params)
            state = jax.tree.map(lambda a, b: jnp.where(d, a, b), fresh, stepped)
            return state, jnp.where(d, first, obs), obs, jnp.reshape(costs, (-1,)).astype(jnp.float32)

        return jax.vmap(one)(states, raw_final_obs, reward, cost, terminated, truncated, raw_next_obs, done)
