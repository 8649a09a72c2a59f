"""P3O (Zhang et al. 2022, "Penalized Proximal Policy Optimization for Safe Reinforcement
Learning", arXiv:2205.11814), a C-TRPO baseline.

The constrained trust-region problem becomes one unconstrained loss through an exact (ReLU)
penalty, with PPO's clipping standing in for the trust region on both surrogates (P3O eq. 11):

    L(theta) = -E[min(r A_r, clip(r) A_r)] + kappa max{0, E[max(r A_c, clip(r) A_c)] + (1 - gamma_c)(J_c - b)}

r = pi_theta / pi_k; the cost surrogate is the pessimistic (max) clip.  (1 - gamma_c)(J_c - b) is the
constraint's slack in the surrogate's units (J_c(pi) - J_c(pi_k) ~ E[r A_c] / (1 - gamma_c)).  Both
advantages are standardised (the paper's normalisation trick, with which a fixed kappa works across
tasks); kappa = 20.  ``cost_advantage: centred`` only centres A_c (its scale kept), as the C-TRPO authors'
P3O (milosen/ctrpo baselines/p3o.py, A_c from SafePO's buffer, which only centres it) with kappa 10 there.

Several constraints J_c,i <= b_i: one exact penalty per constraint, each with its own slack,

    L(theta) = -E[min(r A_r, clip(r) A_r)]
               + sum_i kappa max{0, E[max(r A_c,i, clip(r) A_c,i)] + (1 - gamma_c)(J_c,i - b_i)}

every A_c,i standardised on its own (the paper's multi-constraint form of eq. 11, with one kappa for all).
"""

from __future__ import annotations

import jax.numpy as jnp

from saferl.algos.base import channel_metrics, register
from saferl.algos.ppo import PPO, PenalisedPPO, centred_cost_advantage, normalize
from saferl.foundation.hparams import choice, declare, real


def exact_penalty_cost_loss(ratio, cost_advantage, slack, clip, kappa):
    """kappa * max(0, E[max(r A_c, clip(r, 1 - eps, 1 + eps) A_c)] + slack), slack = (1 - gamma_c)(J_c - b).

    With m constraints (``cost_advantage`` of shape ``(B, m)``, ``slack`` of shape ``(m,)``) the sum over
    the constraints of their penalties."""
    clipped = jnp.clip(ratio, 1.0 - clip, 1.0 + clip)
    if jnp.ndim(cost_advantage) == 1:  # one constraint
        surrogate = jnp.mean(jnp.maximum(ratio * cost_advantage, clipped * cost_advantage))
        return kappa * jnp.maximum(surrogate + slack, 0.0)
    ratio, clipped = ratio[:, None], clipped[:, None]
    surrogate = jnp.mean(jnp.maximum(ratio * cost_advantage, clipped * cost_advantage), axis=0)
    return jnp.sum(kappa * jnp.maximum(surrogate + slack, 0.0))


@register
class P3O(PenalisedPPO):
    name = "p3o"
    description = "P3O (Zhang et al. 2022): PPO with an exact ReLU penalty on the clipped cost surrogate."
    defaults = declare(
        PPO.defaults,
        kappa=real(20.0, "(0, inf)", "kappa, the penalty factor of eq. 11"),
        cost_advantage=choice(
            "standardised",
            ("standardised", "centred"),
            "A_c of the penalty: standardised (the P3O paper) or only centred",
        ),
    )

    def slack(self, agent, batch):
        cost, limit = self.constraint_values(agent, batch)
        return (1.0 - self.hp["cost_gamma"]) * (cost - limit)

    def before_update(self, agent, batch):
        return agent, {
            **channel_metrics("cost_slack", self.slack(agent, batch)),
            **channel_metrics("cost_estimate", self.constraint_values(agent, batch)[0]),
        }

    def loss_inputs(self, agent, batch):
        size = batch.obs.shape[0]
        slack = self.slack(agent, batch)
        if self.hp["cost_advantage"] == "centred":  # every channel centred, its scale kept
            cost_advantage = centred_cost_advantage(batch)
        elif batch.advantages.shape[1] == 2:  # one constraint
            cost_advantage = normalize(batch.advantages[:, 1])
        else:  # every channel standardised on its own
            adv = batch.advantages[:, 1:]
            cost_advantage = (adv - jnp.mean(adv, axis=0)) / (jnp.std(adv, axis=0) + 1e-8)
        return {"cost_advantage": cost_advantage, "slack": jnp.broadcast_to(slack, (size,) + slack.shape)}

    def policy_loss(self, agent, dist, log_prob, mb):
        reward_loss, kl = super().policy_loss(agent, dist, log_prob, mb)
        ratio = jnp.exp(log_prob - mb["log_prob"])
        cost_loss = exact_penalty_cost_loss(
            ratio, mb["cost_advantage"], mb["slack"][0], self.hp["clip"], self.hp["kappa"]
        )
        return reward_loss + cost_loss, kl
