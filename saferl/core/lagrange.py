"""Lagrange multipliers for expected-cost constraints (Ray et al. 2019; Stooke et al. 2020).

``LagrangeState`` is a pytree so it lives inside the compiled training state.
The update ascends the dual: lambda <- max(0, lambda + lr * (J_c - b)), with plain
gradient ascent (Ray et al.) or Adam on the loss -lambda (J_c - b) (OmniSafe's choice);
or the PID Lagrangian of Stooke et al., whose proportional and derivative terms damp the
oscillation of the integral-only (gradient ascent) multiplier.

With ``m`` constraints every state holds one multiplier per constraint (shape ``(m,)``; ``init`` and
``pid_init`` take the ``shape``) and every rule acts on each channel separately, lambda_i from
J_c,i - b_i alone: the dual of ``max J_r s.t. J_c,i <= b_i (i = 1..m)`` separates over the channels.
One constraint keeps the scalar state (shape ``()``) it always had.

References: Ray, Achiam, Amodei 2019, "Benchmarking Safe Exploration in Deep Reinforcement
Learning" (OpenAI); Stooke, Achiam, Abbeel 2020, "Responsive Safety in Reinforcement Learning by
PID Lagrangian Methods", arXiv:2007.03964.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

from saferl.foundation import struct


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


def init(initial: float, kind: str = "adam", lr: float = 0.035, shape: tuple[int, ...] = ()) -> LagrangeState:
    """Multipliers of shape ``shape`` (``()``: one constraint; ``(m,)``: one per constraint), all ``initial``."""
    multiplier = jnp.full(shape, jnp.maximum(jnp.asarray(initial, jnp.float32), 0.0), jnp.float32)  # traced in a sweep
    return LagrangeState(multiplier, _optimizer(kind, lr).init(multiplier))


def update(state: LagrangeState, cost_estimate: jax.Array, limit: jax.Array, kind: str = "adam", lr: float = 0.035):
    """One dual ascent step on the violation ``cost_estimate - limit`` (per channel: adam and sgd are
    elementwise); projects onto lambda >= 0.  ``cost_estimate`` and ``limit`` have the multiplier's shape."""
    grad = -(cost_estimate - limit)  # d/d lambda of the loss -lambda (J_c - b)
    updates, opt_state = _optimizer(kind, lr).update(grad, state.opt_state, state.multiplier)
    multiplier = jnp.maximum(state.multiplier + updates, 0.0)
    return LagrangeState(multiplier, opt_state)


@struct.dataclass
class PIDLagrangeState:
    multiplier: jax.Array
    integral: jax.Array  # I = [I + Ki e]_+
    smoothed_error: jax.Array  # EMA of e = J_c - b (the proportional term)
    cost_history: jax.Array  # (d_delay,) EMA-smoothed J_c of the last updates, oldest first
    started: jax.Array  # False until the first J_c arrived


def pid_init(initial: float = 0.0, d_delay: int = 10, shape: tuple[int, ...] = ()) -> PIDLagrangeState:
    """A PID state with one controller per entry of ``shape`` (``()``: one constraint); the cost
    history has shape ``(d_delay,) + shape``."""
    if int(d_delay) < 1:
        raise ValueError(f"pid_d_delay must be an integer >= 1, got {d_delay!r}")
    z = jnp.zeros(shape, jnp.float32)
    return PIDLagrangeState(
        jnp.full(shape, jnp.maximum(jnp.asarray(initial, jnp.float32), 0.0), jnp.float32),
        z,
        z,
        jnp.zeros((int(d_delay),) + tuple(shape), jnp.float32),
        jnp.zeros(shape, bool),
    )


def pid_update(
    state: PIDLagrangeState,
    cost_estimate,
    limit,
    kp: float,
    ki: float,
    kd: float,
    p_ema: float = 0.95,
    d_ema: float = 0.95,
    max_multiplier: float = 100.0,
) -> PIDLagrangeState:
    """PID Lagrangian (Stooke, Achiam, Abbeel 2020, Alg. 2), with the EMA smoothing of their Sec. 5:

        e = J_c - b,   P = EMA_p(e),   I = [I + Ki e]_+,   D = [EMA_d(J_c)_now - EMA_d(J_c)_{d_delay ago}]_+,
        lambda = clip(Kp P + I + Kd D, 0, max_multiplier).

    The derivative looks back ``len(cost_history) - 1`` updates; the first J_c fills the history (no kick
    from a zero start).  ``cost_estimate`` NaN (no finished episode) leaves the state unchanged.  With
    ``m`` constraints every term is per channel (``cost_estimate`` and ``limit`` of shape ``(m,)``)."""
    cost = jnp.asarray(cost_estimate, jnp.float32)
    error = cost - limit
    first = ~state.started
    smoothed_error = jnp.where(first, error, p_ema * state.smoothed_error + (1.0 - p_ema) * error)
    previous = jnp.where(first, cost, state.cost_history[-1])
    smoothed_cost = d_ema * previous + (1.0 - d_ema) * cost
    history = jnp.where(first, jnp.full_like(state.cost_history, cost), state.cost_history)
    history = jnp.concatenate([history[1:], smoothed_cost[None]])
    derivative = jnp.maximum(smoothed_cost - history[0], 0.0)
    integral = jnp.maximum(state.integral + ki * error, 0.0)
    multiplier = jnp.clip(kp * smoothed_error + integral + kd * derivative, 0.0, max_multiplier)
    new = PIDLagrangeState(multiplier, integral, smoothed_error, history, jnp.ones_like(state.started))
    return jax.tree.map(lambda a, b: jnp.where(jnp.isfinite(cost), a, b), new, state)
