"""Lagrange multipliers for expected-cost constraints (Ray et al. 2019; Stooke et al. 2020).

``LagrangeState`` is a pytree so it lives inside the compiled training state.
The update ascends the dual: lambda <- max(0, lambda + lr * (J_c - b)), with plain
gradient ascent (Ray et al.) or Adam on the loss -lambda (J_c - b) (OmniSafe's choice).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

from saferl import struct


@struct.dataclass
class LagrangeState:
    multiplier: jax.Array
    opt_state: optax.OptState


def _optimizer(kind: str, lr: float) -> optax.GradientTransformation:
    if kind == "adam":
        return optax.adam(lr)
    if kind == "sgd":
        return optax.sgd(lr)
    raise ValueError(f"lagrange optimizer must be 'adam' or 'sgd', got {kind!r}")


def init(initial: float, kind: str = "adam", lr: float = 0.035) -> LagrangeState:
    multiplier = jnp.asarray(max(float(initial), 0.0), jnp.float32)
    return LagrangeState(multiplier, _optimizer(kind, lr).init(multiplier))


def update(state: LagrangeState, cost_estimate: jax.Array, limit: jax.Array, kind: str = "adam", lr: float = 0.035):
    """One dual ascent step on the violation ``cost_estimate - limit``; projects onto lambda >= 0."""
    grad = -(cost_estimate - limit)  # d/d lambda of the loss -lambda (J_c - b)
    updates, opt_state = _optimizer(kind, lr).update(grad, state.opt_state, state.multiplier)
    multiplier = jnp.maximum(state.multiplier + updates, 0.0)
    return LagrangeState(multiplier, opt_state)


@struct.dataclass
class PIDLagrangeState:
    multiplier: jax.Array
    integral: jax.Array
    previous_cost: jax.Array
    smoothed_delta: jax.Array


def pid_init() -> PIDLagrangeState:
    z = jnp.zeros((), jnp.float32)
    return PIDLagrangeState(z, z, z, z)


def pid_update(state: PIDLagrangeState, cost_estimate, limit, kp: float, ki: float, kd: float, delta_ema: float = 0.95):
    """PID Lagrangian (Stooke et al. 2020, Alg. 2): lambda = [Kp e + Ki sum e + Kd (dJ_c)_+]_+."""
    error = cost_estimate - limit
    integral = jnp.maximum(state.integral + ki * error, 0.0)
    smoothed = delta_ema * state.smoothed_delta + (1 - delta_ema) * (cost_estimate - state.previous_cost)
    multiplier = jnp.maximum(kp * error + integral + kd * jnp.maximum(smoothed, 0.0), 0.0)
    return PIDLagrangeState(multiplier, integral, cost_estimate, smoothed)
