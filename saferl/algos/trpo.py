"""TRPO (Schulman et al. 2015): natural-gradient step to the KL trust region, then backtracking.

    x = sqrt(2 delta / g^T H^-1 g) H^-1 g            (Schulman et al. App. C; C-TRPO eq. 19)

with H the Fisher (Hessian of the mean KL) and H^-1 g by conjugate gradients.  The
line search accepts the first ``decay**j x`` with mean KL <= delta whose reward
surrogate does not decrease.  The constraint is ignored.
"""

from __future__ import annotations

from saferl.algos.base import register
from saferl.algos.second_order import TrustRegionAlgorithm, natural_step


@register
class TRPO(TrustRegionAlgorithm):
    name = "trpo"
    description = "TRPO (Schulman et al. 2015): KL trust-region natural-gradient step; ignores the constraint."
    constraint_kinds = ("expected", "var")
    needs_cost_estimate = False  # it ignores the constraint; TRPO-Lag sets it True
    ignores_constraint = True  # no risk augmentation of the state under a VaR constraint

    def reward_advantage(self, agent, batch, adv_r, adv_c):
        return adv_r

    def policy_step(self, agent, batch):
        delta = self.hp["target_kl"]
        adv_r, adv_c = self.scaled_advantages(agent, batch)
        adv = self.reward_advantage(agent, batch, adv_r, adv_c)
        grads = self.gradients(agent, batch, adv, adv_c[:, :0])  # no cost rows needed
        hinv_g = self.solve(self.fisher_matvec(agent, batch), grads.g[None])[0]
        step = natural_step(grads.g, hinv_g, delta)

        def accept(m, m0):
            return (m["kl"] <= delta) & (m["reward"] >= m0["reward"])

        params, metrics = self.line_search(agent, batch, adv, adv_c[:, :0], grads.scale, step, accept)
        agent, stats_metrics = self.with_batch_returns(agent.replace(actor_params=params), batch)
        return agent, {**metrics, **stats_metrics}
