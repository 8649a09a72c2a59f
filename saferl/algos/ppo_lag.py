"""PPO-Lagrangian (Ray et al. 2019): PPO on the Lagrangian with a learned multiplier.

Before each policy update the multiplier ascends the dual on the batch's mean
episode cost J_c (:mod:`saferl.algos.lagrangian`); the policy then maximises the
clipped surrogate of (A_r - lambda A_c) / (1 + lambda).  With m cost channels (a
vector ``constraint.limit``) there is one multiplier per channel and the advantage is
(A_r - sum_i lambda_i A_c,i) / (1 + sum_i lambda_i).
"""

from __future__ import annotations

from saferl.algos.base import register
from saferl.algos.lagrangian import LAGRANGE_DEFAULTS, Lagrangian
from saferl.algos.ppo import PPO, centred_cost_advantage, normalize
from saferl.algos.risk import RiskConstrained
from saferl.foundation.hparams import declare


@register
class PPOLag(Lagrangian, RiskConstrained, PPO):
    name = "ppo_lag"
    description = "PPO-Lagrangian (Ray et al. 2019): PPO with a learned Lagrange multiplier on the expected cost."
    constraint_kinds = ("expected", "var")
    needs_cost_estimate = True  # the multiplier reads the batch's J_c
    defaults = declare(PPO.defaults, LAGRANGE_DEFAULTS)

    def before_update(self, agent, batch):
        # J_c: mean cost (discount gamma_c of the constraint) of the episodes completed in the batch
        return self.update_multiplier(agent, *self.cost_and_limit(agent, batch))

    def policy_advantage(self, agent, batch):
        return self.lagrangian_advantage(agent, normalize(batch.advantages[:, 0]), centred_cost_advantage(batch))
