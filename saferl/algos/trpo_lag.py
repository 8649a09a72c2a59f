"""TRPO-Lagrangian (Ray et al. 2019): TRPO on the Lagrangian with a learned multiplier.

Before the step the multiplier ascends the dual on the batch's episode cost J_c
(:mod:`saferl.algos.lagrangian`); the policy then takes a TRPO step on the advantage
(A_r - lambda A_c) / (1 + lambda).  With m cost channels: one multiplier per channel and
(A_r - sum_i lambda_i A_c,i) / (1 + sum_i lambda_i).  The multipliers see the limit lowered by
the learned margin when ``cost_margin_lr`` > 0 (:mod:`saferl.algos.second_order`).

The advantages are the trust-region family's (A_r standardised, A_c centred; OmniSafe standardises both);
``advantage_scale: return_std`` divides A_r by a running return SD and leaves A_c raw instead, as
RL-Safety-Algorithms' ``lag-trpo`` (on ``iwpg.py``) does (:mod:`saferl.algos.return_scaled`).
"""

from __future__ import annotations

from saferl.algos.base import register
from saferl.algos.lagrangian import LAGRANGE_DEFAULTS, Lagrangian
from saferl.algos.return_scaled import ReturnScaledAdvantages, advantage_scale_param
from saferl.algos.trpo import TRPO
from saferl.foundation.hparams import declare


@register
class TRPOLag(ReturnScaledAdvantages, Lagrangian, TRPO):
    name = "trpo_lag"
    description = "TRPO-Lagrangian (Ray et al. 2019): TRPO with a learned Lagrange multiplier on the expected cost."
    constraint_kinds = ("expected", "var")
    needs_cost_estimate = True  # the multiplier reads the batch's J_c
    ignores_constraint = False  # unlike TRPO, it enforces a VaR constraint
    defaults = declare(
        TRPO.defaults,
        LAGRANGE_DEFAULTS,
        advantage_scale=advantage_scale_param("standardised", "the family's, as OmniSafe's TRPOLag"),
    )

    def before_update(self, agent, batch):
        return self.update_multiplier(agent, *self.constraint_data(agent, batch))

    def reward_advantage(self, agent, batch, adv_r, adv_c):
        return self.lagrangian_advantage(agent, adv_r, adv_c[:, 0] if adv_c.shape[1] == 1 else adv_c)
