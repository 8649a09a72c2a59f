"""ToyReach: a one-dimensional constrained reach task, small enough for fast tests.

The agent moves along a line x in [-1, 1] (x <- clip(x + step_size * a)); each step
it earns reward x and pays cost 1 while x > ``cost_threshold``.  An unconstrained
policy runs to x = 1 and pays almost every step; a constrained one must stop
at the threshold and enter the costly region only as often as the limit allows.
Observation: (x, t / max_steps).  Episodes last ``max_steps`` steps (truncation).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from saferl import struct
from saferl.envs.base import Box, Environment, register


@struct.dataclass
class ToyReachParams:
    step_size: float = 0.1
    cost_threshold: float = 0.5
    action_noise: float = 0.0
    max_steps: int = struct.field(static=True, default=50)


@struct.dataclass
class ToyReachState:
    x: jax.Array
    time: jax.Array
    key: jax.Array


@register("ToyReach", "1-D reach task: reward x, cost 1 beyond x > 0.5; 50-step episodes (tests, tutorials)")
class ToyReach(Environment):
    description = "1-D reach task: reward x, cost 1 beyond x > 0.5; 50-step episodes (tests, tutorials)"

    def default_params(self):
        return ToyReachParams()

    def _obs(self, state, params):
        return jnp.stack([state.x, state.time / params.max_steps]).astype(jnp.float32)

    def reset(self, key, params):
        state = ToyReachState(jnp.zeros((), jnp.float32), jnp.zeros((), jnp.int32), key)
        return state, self._obs(state, params)

    def step(self, state, action, params):
        key, noise_key = jax.random.split(state.key)
        a = jnp.clip(jnp.reshape(action, ()), -1.0, 1.0) + params.action_noise * jax.random.normal(noise_key)
        x = jnp.clip(state.x + params.step_size * a, -1.0, 1.0)
        time = state.time + 1
        new_state = ToyReachState(x, time, key)
        reward = x
        cost = (x > params.cost_threshold).astype(jnp.float32)
        truncated = time >= params.max_steps
        return new_state, self._obs(new_state, params), reward, cost, jnp.asarray(False), truncated, {}

    def observation_space(self, params):
        return Box(-1.0, 1.0, (2,))

    def action_space(self, params):
        return Box(-1.0, 1.0, (1,))
