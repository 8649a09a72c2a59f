"""The Lagrangian relaxation shared by PPO-Lag and TRPO-Lag (Ray et al. 2019).

A mixin: the algorithm keeps a multiplier in ``agent.extra["lagrange"]``, lets it ascend
the dual on the batch's episode cost J_c before the policy update,
lambda <- [lambda + lr (J_c - b)]_+ (Adam by default, as in OmniSafe), and optimises
the advantage (A_r - lambda A_c) / (1 + lambda).  One constraint: the first cost channel.
"""

from __future__ import annotations

import jax.numpy as jnp

from saferl.core import lagrange

LAGRANGE_DEFAULTS = dict(lagrange_init=0.0, lagrange_lr=0.035, lagrange_optimizer="adam")


class Lagrangian:
    def init_extra(self, constraint):
        multiplier = lagrange.init(self.hp["lagrange_init"], self.hp["lagrange_optimizer"], self.hp["lagrange_lr"])
        return {**super().init_extra(constraint), "lagrange": multiplier}

    def update_multiplier(self, agent, cost_estimate, limit):
        state = lagrange.update(agent.extra["lagrange"], cost_estimate, limit,
                                self.hp["lagrange_optimizer"], self.hp["lagrange_lr"])
        agent = agent.replace(extra={**agent.extra, "lagrange": state})
        return agent, {"lagrange_multiplier": state.multiplier, "cost_estimate": cost_estimate}

    @staticmethod
    def lagrangian_advantage(agent, reward_advantage, cost_advantage):
        lam = agent.extra["lagrange"].multiplier
        return (reward_advantage - lam * cost_advantage) / (1.0 + lam)

    def metrics_names(self):
        return ("lagrange_multiplier", "cost_estimate") + super().metrics_names()


def first(x):
    return jnp.ravel(x)[0]
