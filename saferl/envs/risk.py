"""The risk augmentation: Canary's augmented state and the per-step costs of the VaR surrogates.

Observation x_t = (s_t, y_t / rho, gamma_c^t) (Canary eqs. 23, 27), with y_t the discounted
cost accumulated so far ((y_t - eta) / rho for the CVaR surrogate, whose cost depends on y - eta).  The cost
becomes a vector of the surrogate's channels (:data:`saferl.core.risk.CHANNELS`):

* ``cantelli``  -> ``[c_t, c~_t]`` with c~_t = gamma_c^t c_t^2 + 2 y_t c_t (eq. 25);
* ``indicator`` -> ``[1(y_t < rho <= y_{t+1}) / gamma_c^t]`` (sums to I(tau), eq. 13);
* ``cvar``      -> ``[((y_{t+1} - eta)^+ - (y_t - eta)^+) / gamma_c^t]`` (sums to (C - eta)^+).

With ``finite_horizon`` (``constraint.finite_horizon``) the observation also holds t / max_steps
(max_steps of the innermost environment's parameters): with gamma_c = 1, gamma_c^t is constant,
and the cost still to come before the time limit -- what the risk critics predict when C(tau)
ends there -- depends on t.

rho and eta are environment parameters (:class:`RiskParams`), set by the algorithm before
every rollout from its traced state (``Algorithm.rollout_env_params``), so sweeping the
cost limit or learning eta never recompiles.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from saferl.core import risk
from saferl.envs.base import Box, Environment, Wrapper
from saferl.foundation import struct


@struct.dataclass
class RiskParams:
    inner: Any
    rho: jax.Array  # cost limit of the VaR constraint
    eta: jax.Array  # the CVaR auxiliary variable (Rockafellar-Uryasev eta)


@struct.dataclass
class RiskState:
    inner: Any
    accumulated_cost: jax.Array  # y_t (eq. 23)
    cost_discount: jax.Array  # gamma_c^t
    time: jax.Array  # t, steps since reset


class RiskAugmentation(Wrapper):
    def __init__(self, env: Environment, surrogate: str, gamma_c: float = 1.0, finite_horizon: bool = False):
        super().__init__(env)
        self.finite_horizon = bool(finite_horizon)
        if surrogate not in risk.SURROGATES:
            raise ValueError(f"risk surrogate must be one of {', '.join(risk.SURROGATES)}, got {surrogate!r}")
        if env.cost_shape != ():
            raise ValueError(
                "a VaR constraint needs an environment with a single cost signal, "
                f"{env.name} has cost shape {env.cost_shape}"
            )
        if not 0.0 < gamma_c <= 1.0:
            raise ValueError(f"gamma_c must be in (0, 1], got {gamma_c}")
        self.surrogate = surrogate
        self.gamma_c = float(gamma_c)

    @property
    def cost_shape(self):
        return (len(risk.CHANNELS[self.surrogate]),)

    def default_params(self) -> RiskParams:
        return self.lift_params(self.env.unwrapped.default_params())

    def lift_params(self, base_params, rho=1.0, eta=0.0) -> RiskParams:
        f32 = lambda x: jnp.asarray(x, jnp.float32)  # noqa: E731
        return RiskParams(self.env.lift_params(base_params), f32(rho), f32(eta))

    def _augment(self, obs, y, disc, time, params: RiskParams):
        # CVaR's per-step cost depends on y - eta, and eta moves every iteration: observe that
        level = y - params.eta if self.surrogate == "cvar" else y
        extra = [level / params.rho, disc]
        if self.finite_horizon:
            extra.append(time / jnp.maximum(_max_steps(params.inner), 1).astype(jnp.float32))
        return jnp.concatenate([obs, jnp.stack(extra).astype(obs.dtype)])

    def reset(self, key, params: RiskParams):
        inner, obs = self.env.reset(key, params.inner)
        zero, one = jnp.zeros((), jnp.float32), jnp.ones((), jnp.float32)
        return RiskState(inner, zero, one, zero), self._augment(obs, zero, one, zero, params)

    def step(self, state: RiskState, action, params: RiskParams):
        inner, obs, reward, cost, term, trunc, info = self.env.step(state.inner, action, params.inner)
        cost = cost.astype(jnp.float32)
        y, disc = state.accumulated_cost, state.cost_discount
        y_next = y + disc * cost  # eq. 23
        if self.surrogate == "cantelli":
            costs = jnp.stack([cost, risk.augmented_cost(cost, y, disc)])  # eq. 25
        elif self.surrogate == "indicator":
            costs = (risk.indicator_cost(y, y_next, params.rho) / disc)[None]
        else:
            costs = (risk.cvar_excess_cost(y, y_next, params.eta) / disc)[None]
        new_state = RiskState(inner, y_next, disc * self.gamma_c, state.time + 1.0)
        obs = self._augment(obs, y_next, disc * self.gamma_c, state.time + 1.0, params)
        return new_state, obs, reward, costs, term, trunc, info

    def observation_space(self, params: RiskParams):
        space = self.env.observation_space(params.inner)
        return Box(-jnp.inf, jnp.inf, (space.shape[0] + 2 + int(self.finite_horizon),))

    def action_space(self, params: RiskParams):
        return self.env.action_space(params.inner)


def _max_steps(params):
    """The time limit ``max_steps`` of the innermost parameters that have one."""
    node = params
    while not hasattr(node, "max_steps") and hasattr(node, "inner"):
        node = node.inner
    if not hasattr(node, "max_steps"):
        raise ValueError("constraint.finite_horizon needs an environment with a max_steps parameter")
    return jnp.asarray(node.max_steps)
