"""The Lagrangian relaxation shared by PPO-Lag, TRPO-Lag, CPPO-PID, FOCOPS and CUP (Ray et al. 2019).

A mixin: the algorithm keeps a multiplier in ``agent.extra["lagrange"]``, lets it ascend
the dual on the batch's episode cost J_c before the policy update,
lambda <- [lambda + lr (J_c - b)]_+ (Adam by default, as in OmniSafe; ``sgd``: Ray et al.),
or sets it by the PID rule of Stooke et al. 2020 (``lagrange_optimizer: pid``, gains ``pid_kp``,
``pid_ki``, ``pid_kd``; :func:`saferl.core.lagrange.pid_update`), and optimises the advantage
(A_r - lambda A_c) / (1 + lambda).

Several constraints J_c,i <= b_i (i = 1..m, one per cost channel): the Lagrangian
J_r - sum_i lambda_i (J_c,i - b_i) has one multiplier per constraint, each ascending on its own
violation J_c,i - b_i (the multiplier state has shape ``(m,)``; adam, sgd and pid act per channel),
and the policy optimises

    (A_r - sum_i lambda_i A_c,i) / (1 + sum_i lambda_i)                   (:func:`penalised_advantage`)

(FOCOPS and CUP use sum_i nu_i A_c,i, :func:`weighted_cost_advantage`, in their own losses).  One
constraint keeps the scalar multiplier state it always had, and computes what it always computed.
"""

from __future__ import annotations

import jax.numpy as jnp

from saferl.algos.base import channel_metrics
from saferl.core import lagrange
from saferl.foundation.hparams import choice, declare, integer, real

OPTIMIZERS = ("adam", "sgd", "pid")
LAGRANGE_DEFAULTS = declare(
    lagrange_init=real(0.0, "[0, inf)", "initial multiplier lambda_0"),
    lagrange_lr=real(0.035, "(0, inf)", "multiplier learning rate (adam, sgd); OmniSafe's 0.035"),
    lagrange_optimizer=choice("adam", OPTIMIZERS, "adam (OmniSafe), sgd (dual ascent) or pid (Stooke et al. 2020)"),
    # the PID Lagrangian's gains (lagrange_optimizer: pid) are OmniSafe's CPPO-PID ones, in units of J_c
    pid_kp=real(0.1, "[0, inf)", "PID proportional gain"),
    pid_ki=real(0.01, "[0, inf)", "PID integral gain"),
    pid_kd=real(0.01, "[0, inf)", "PID derivative gain"),
    pid_d_delay=integer(10, "[1, inf)", "iterations back the derivative term looks"),
    pid_p_ema=real(0.95, "[0, 1)", "EMA factor of the proportional term"),
    pid_d_ema=real(0.95, "[0, 1)", "EMA factor of the derivative term"),
    pid_max=real(100.0, "(0, inf)", "upper bound of the PID multiplier"),
)


def weighted_cost_advantage(weights, cost_advantage):
    """sum_i w_i A_c,i per sample: ``weights`` of shape ``()`` with ``cost_advantage`` of shape ``(B,)`` (one
    constraint), or ``(m,)`` with ``(B, m)``."""
    weights, cost_advantage = jnp.asarray(weights), jnp.asarray(cost_advantage)
    if cost_advantage.shape[1:] != weights.shape:
        raise ValueError(
            f"{weights.shape} multipliers for cost advantages of shape {cost_advantage.shape}: "
            "one multiplier per cost channel"
        )
    if weights.ndim == 0:
        return weights * cost_advantage
    return jnp.sum(cost_advantage * weights, axis=-1)


def penalised_advantage(reward_advantage, cost_advantage, weights):
    """(A_r - sum_i w_i A_c,i) / (1 + sum_i w_i): the Lagrangian's advantage, rescaled so that its size
    stays that of A_r however large the multipliers grow (shapes as :func:`weighted_cost_advantage`)."""
    weights = jnp.asarray(weights)
    total = weights if weights.ndim == 0 else jnp.sum(weights)
    return (reward_advantage - weighted_cost_advantage(weights, cost_advantage)) / (1.0 + total)


class Lagrangian:
    def multiplier_shape(self) -> tuple[int, ...]:
        """``()`` for one constraint (the state one constraint always had), ``(m,)`` for m."""
        m = self.num_constraints
        return () if m == 1 else (m,)

    def init_extra(self, constraint):
        kind = self.hp["lagrange_optimizer"]
        shape = self.multiplier_shape()
        if kind == "pid":
            multiplier = lagrange.pid_init(self.hp["lagrange_init"], int(self.hp["pid_d_delay"]), shape)
        else:
            multiplier = lagrange.init(self.hp["lagrange_init"], kind, self.hp["lagrange_lr"], shape)
        return {**super().init_extra(constraint), "lagrange": multiplier}

    def update_multiplier(self, agent, cost_estimate, limit):
        """One step of every multiplier on its J_c,i - b_i; ``cost_estimate`` and ``limit`` have shape ``(m,)``
        (:meth:`~saferl.algos.base.Algorithm.cost_and_limit`) or the multipliers' shape."""
        hp = self.hp
        shape = jnp.shape(agent.extra["lagrange"].multiplier)
        cost_estimate, limit = jnp.reshape(cost_estimate, shape), jnp.reshape(limit, shape)
        if hp["lagrange_optimizer"] == "pid":
            state = lagrange.pid_update(
                agent.extra["lagrange"],
                cost_estimate,
                limit,
                hp["pid_kp"],
                hp["pid_ki"],
                hp["pid_kd"],
                hp["pid_p_ema"],
                hp["pid_d_ema"],
                hp["pid_max"],
            )
        else:
            state = lagrange.update(
                agent.extra["lagrange"], cost_estimate, limit, hp["lagrange_optimizer"], hp["lagrange_lr"]
            )
        if "multiplier_max" in hp:  # FOCOPS' nu_max, CUP's upper bound
            state = state.replace(multiplier=jnp.minimum(state.multiplier, hp["multiplier_max"]))
        agent = agent.replace(extra={**agent.extra, "lagrange": state})
        return agent, {
            **channel_metrics("lagrange_multiplier", state.multiplier),
            **channel_metrics("cost_estimate", cost_estimate),
        }

    @staticmethod
    def lagrangian_advantage(agent, reward_advantage, cost_advantage):
        """(A_r - sum_i lambda_i A_c,i) / (1 + sum_i lambda_i) (:func:`penalised_advantage`)."""
        return penalised_advantage(reward_advantage, cost_advantage, agent.extra["lagrange"].multiplier)
