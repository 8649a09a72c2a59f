"""P3O (Zhang et al. 2022, "Penalized Proximal Policy Optimization for Safe Reinforcement
Learning"), a C-TRPO baseline.

The constrained trust-region problem becomes one unconstrained loss through an exact (ReLU)
penalty, with PPO's clipping standing in for the trust region on both surrogates (P3O eq. 11):

    L(theta) = -E[min(r A_r, clip(r) A_r)] + kappa max{0, E[max(r A_c, clip(r) A_c)] + (1 - gamma_c)(J_c - b)}

r = pi_theta / pi_k; the cost surrogate is the pessimistic (max) clip.  (1 - gamma_c)(J_c - b) is the
constraint's slack in the surrogate's units (J_c(pi) - J_c(pi_k) ~ E[r A_c] / (1 - gamma_c)).  Both
advantages are standardised (the paper's normalisation trick, with which a fixed kappa works across
tasks); kappa = 20.
"""

from __future__ import annotations

import jax.numpy as jnp

from saferl.algos.base import register
from saferl.algos.ppo import PPO, cost_and_limit, normalize


def exact_penalty_cost_loss(ratio, cost_advantage, slack, clip, kappa):
    """kappa * max(0, E[max(r A_c, clip(r, 1 - eps, 1 + eps) A_c)] + slack), slack = (1 - gamma_c)(J_c - b)."""
    clipped = jnp.clip(ratio, 1.0 - clip, 1.0 + clip)
    surrogate = jnp.mean(jnp.maximum(ratio * cost_advantage, clipped * cost_advantage))
    return kappa * jnp.maximum(surrogate + slack, 0.0)


@register
class P3O(PPO):
    name = "p3o"
    description = "P3O (Zhang et al. 2022): PPO with an exact ReLU penalty on the clipped cost surrogate."
    defaults = dict(PPO.defaults, kappa=20.0)

    def slack(self, agent, batch):
        cost, limit = cost_and_limit(self, agent, batch)
        return (1.0 - float(self.hp["cost_gamma"])) * (cost - limit)

    def before_update(self, agent, batch):
        return agent, {"cost_slack": self.slack(agent, batch), "cost_estimate": cost_and_limit(self, agent, batch)[0]}

    def loss_inputs(self, agent, batch):
        size = batch.obs.shape[0]
        return {"cost_advantage": normalize(batch.advantages[:, 1]),
                "slack": jnp.broadcast_to(self.slack(agent, batch), (size,))}

    def policy_loss(self, agent, dist, log_prob, mb):
        reward_loss, kl = super().policy_loss(agent, dist, log_prob, mb)
        ratio = jnp.exp(log_prob - mb["log_prob"])
        cost_loss = exact_penalty_cost_loss(ratio, mb["cost_advantage"], mb["slack"][0], self.hp["clip"],
                                            self.hp["kappa"])
        return reward_loss + cost_loss, kl

    def metrics_names(self):
        return ("cost_slack", "cost_estimate") + super().metrics_names()
