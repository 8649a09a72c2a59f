"""TRPO-Lagrangian (Ray et al. 2019): TRPO on the Lagrangian with a learned multiplier.

Before the step the multiplier ascends the dual on the batch's episode cost J_c
(:mod:`saferl.algos.lagrangian`); the policy then takes a TRPO step on the advantage
(A_r - lambda A_c) / (1 + lambda).  One constraint (the first cost channel).
"""

from __future__ import annotations

from saferl.algos.base import register
from saferl.algos.lagrangian import LAGRANGE_DEFAULTS, Lagrangian
from saferl.algos.risk import RiskConstrained
from saferl.algos.trpo import TRPO


@register
class TRPOLag(Lagrangian, TRPO):
    name = "trpo_lag"
    description = "TRPO-Lagrangian (Ray et al. 2019): TRPO with a learned Lagrange multiplier on the expected cost."
    constraint_kinds = ("expected", "var")
    is_risk = RiskConstrained.is_risk  # unlike TRPO, it enforces a VaR constraint
    defaults = dict(TRPO.defaults, **LAGRANGE_DEFAULTS)

    def before_update(self, agent, batch):
        cost, limit = self.constraint_data(agent, batch)
        return self.update_multiplier(agent, cost[0], limit[0])

    def reward_advantage(self, agent, batch, adv_r, adv_c):
        return self.lagrangian_advantage(agent, adv_r, adv_c[:, 0])
