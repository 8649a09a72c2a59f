"""The Lagrangian relaxation shared by PPO-Lag and TRPO-Lag (Ray et al. 2019).

A mixin: the algorithm keeps a multiplier in ``agent.extra["lagrange"]``, lets it ascend
the dual on the batch's episode cost J_c before the policy update,
lambda <- [lambda + lr (J_c - b)]_+ (Adam by default, as in OmniSafe; ``sgd``: Ray et al.),
or sets it by the PID rule of Stooke et al. 2020 (``lagrange_optimizer: pid``, gains ``pid_kp``,
``pid_ki``, ``pid_kd``; :func:`saferl.core.lagrange.pid_update`), and optimises the advantage
(A_r - lambda A_c) / (1 + lambda).  One constraint: the first cost channel.
"""

from __future__ import annotations

import jax.numpy as jnp

from saferl.core import lagrange

LAGRANGE_DEFAULTS = dict(lagrange_init=0.0, lagrange_lr=0.035, lagrange_optimizer="adam",
                         # PID Lagrangian (lagrange_optimizer: pid): OmniSafe's CPPO-PID gains, in units of J_c
                         pid_kp=0.1, pid_ki=0.01, pid_kd=0.01, pid_d_delay=10, pid_p_ema=0.95, pid_d_ema=0.95,
                         pid_max=100.0)
OPTIMIZERS = ("adam", "sgd", "pid")


class Lagrangian:
    def init_extra(self, constraint):
        kind = self.hp["lagrange_optimizer"]
        if kind not in OPTIMIZERS:
            raise ValueError(f"hparams.lagrange_optimizer must be one of {', '.join(OPTIMIZERS)}, got {kind!r}")
        if kind == "pid":
            multiplier = lagrange.pid_init(self.hp["lagrange_init"], int(self.hp["pid_d_delay"]))
        else:
            multiplier = lagrange.init(self.hp["lagrange_init"], kind, self.hp["lagrange_lr"])
        return {**super().init_extra(constraint), "lagrange": multiplier}

    def update_multiplier(self, agent, cost_estimate, limit):
        hp = self.hp
        if hp["lagrange_optimizer"] == "pid":
            state = lagrange.pid_update(agent.extra["lagrange"], cost_estimate, limit, float(hp["pid_kp"]),
                                        float(hp["pid_ki"]), float(hp["pid_kd"]), float(hp["pid_p_ema"]),
                                        float(hp["pid_d_ema"]), float(hp["pid_max"]))
        else:
            state = lagrange.update(agent.extra["lagrange"], cost_estimate, limit, hp["lagrange_optimizer"],
                                    hp["lagrange_lr"])
        if "multiplier_max" in hp:  # FOCOPS' nu_max, CUP's upper bound
            state = state.replace(multiplier=jnp.minimum(state.multiplier, float(hp["multiplier_max"])))
        agent = agent.replace(extra={**agent.extra, "lagrange": state})
        return agent, {"lagrange_multiplier": state.multiplier, "cost_estimate": cost_estimate}

    @staticmethod
    def lagrangian_advantage(agent, reward_advantage, cost_advantage):
        lam = agent.extra["lagrange"].multiplier
        return (reward_advantage - lam * cost_advantage) / (1.0 + lam)

    def metrics_names(self):
        return ("lagrange_multiplier", "cost_estimate") + super().metrics_names()
