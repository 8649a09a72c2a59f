"""TRPO-Lagrangian (Ray et al. 2019): TRPO on the Lagrangian with a learned multiplier.

Before the step the multiplier ascends the dual on the batch's episode cost J_c:
lambda <- [lambda + lr (J_c - b)]_+ (Adam by default, as OmniSafe); the policy then
takes a TRPO step on the advantage (A_r - lambda A_c) / (1 + lambda).  One constraint
(the first cost channel).
"""

from __future__ import annotations

from saferl.algos.base import register
from saferl.algos.trpo import TRPO
from saferl.core import lagrange


@register
class TRPOLag(TRPO):
    name = "trpo_lag"
    description = "TRPO-Lagrangian (Ray et al. 2019): TRPO with a learned Lagrange multiplier on the expected cost."
    constraint_kinds = ("expected",)
    defaults = dict(TRPO.defaults, lagrange_init=0.0, lagrange_lr=0.035, lagrange_optimizer="adam")

    def init_extra(self, constraint):
        return {"lagrange": lagrange.init(self.hp["lagrange_init"], self.hp["lagrange_optimizer"], self.hp["lagrange_lr"])}

    def before_update(self, agent, batch):
        cost, limit = self.constraint_data(agent, batch)
        state = lagrange.update(agent.extra["lagrange"], cost[0], limit[0],
                                self.hp["lagrange_optimizer"], self.hp["lagrange_lr"])
        agent = agent.replace(extra={**agent.extra, "lagrange": state})
        return agent, {"lagrange_multiplier": state.multiplier, "cost_estimate": cost[0]}

    def reward_advantage(self, agent, batch, adv_r, adv_c):
        lam = agent.extra["lagrange"].multiplier
        return (adv_r - lam * adv_c[:, 0]) / (1.0 + lam)

    def metrics_names(self):
        return ("lagrange_multiplier", "cost_estimate") + super().metrics_names()
