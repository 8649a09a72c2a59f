"""ToyReach: a one-dimensional constrained reach task, small enough for fast tests.

The agent moves along a line x in [-1, 1] (x <- clip(x + step_size * a)); each step
it earns reward x and pays cost 1 while x > ``cost_threshold``.  An unconstrained
policy runs to x = 1 and pays almost every step; a constrained one must stop
at the threshold and enter the costly region only as often as the limit allows.
Observation: (x, t / max_steps).  Episodes last ``max_steps`` steps (truncation).

ToyReach2 is the same task with two cost channels, for tests of several constraints: channel 0
pays 1 while x > ``far_threshold`` (0.8), channel 1 while x > ``cost_threshold`` (0.5).  Its default
limits, 20 on channel 0 and 10 on channel 1, make only the second constraint bind: a policy that
meets it rarely passes 0.5 and so pays nearly nothing on channel 0, while a policy held to channel
0's limit alone spends most steps beyond 0.5 and pays several times 10 on channel 1 (the
unconstrained policy, at full speed to x = 1, pays on about 42 and 45 of the 50 steps).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from saferl.envs.base import Box, Environment, EnvParams, register
from saferl.foundation import struct


@struct.dataclass
class ToyReachParams(EnvParams):
    step_size: float = 0.1
    cost_threshold: float = 0.5
    action_noise: float = 0.0
    max_steps: int = struct.field(static=True, default=50, kw_only=True)


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


@struct.dataclass
class ToyReach2Params(ToyReachParams):
    far_threshold: float = 0.8


@register("ToyReach2", "ToyReach with two cost channels: x > 0.8 (limit 20) and x > 0.5 (limit 10); for tests")
class ToyReach2(ToyReach):
    description = "ToyReach with two cost channels: x > 0.8 (limit 20) and x > 0.5 (limit 10); for tests"
    cost_shape = (2,)
    config_defaults = {**ToyReach.config_defaults, "constraint": {"type": "expected", "limit": [20.0, 10.0]}}

    def default_params(self):
        return ToyReach2Params()

    def step(self, state, action, params):
        state, obs, reward, near, terminated, truncated, info = super().step(state, action, params)
        far = (state.x > params.far_threshold).astype(jnp.float32)
        return state, obs, reward, jnp.stack([far, near]), terminated, truncated, info
