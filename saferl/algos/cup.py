"""CUP (Yang et al. 2022, "Constrained Update Projection Approach to Safe Policy Optimization",
arXiv:2202.07565), a C-TRPO baseline.

Each update has two first-order stages on the same batch (CUP Algorithm 1):

1. performance improvement: PPO's clipped surrogate on the reward alone, pi_k -> pi_{k+1/2};
2. projection: back towards the cost constraint, minimising over theta

       E_s[ nu (1 - gamma lambda) / (1 - gamma) E_a[r A_c] + D_KL(pi_theta || pi_{k+1/2})[s] ]        (eq. 10)

   with r = pi_theta / pi_k (the batch's policy) and (1 - gamma lambda) / (1 - gamma) the GAE
   factor of CUP's bound (Theorem 1), until, after an epoch, the mean over the whole batch of
   KL(pi_{k+1/2} || pi_theta)[s] exceeds ``target_kl``.

Both stages stop as OmniSafe's: after each epoch, once the full-batch mean KL(pi_ref || pi_theta) exceeds
``target_kl`` itself (no factor), with pi_ref = pi_k in the first stage and pi_{k+1/2} in the second.

The multiplier nu ascends the dual on J_c - b before the stages (Adam, initial 0.001, capped at 2,
as the CUP authors' OmniSafe implementation); A_r is standardised, A_c only centred (OmniSafe
standardises it too; docs/decisions/038-first-order-baselines.md says why not here).

Several constraints J_c,i <= b_i: one multiplier nu_i per constraint, each ascending on its own
J_c,i - b_i, and the projection's cost term is (1 - gamma lambda) / (1 - gamma) E_a[r sum_i nu_i A_c,i].
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from saferl.algos.base import register
from saferl.algos.lagrangian import weighted_cost_advantage
from saferl.algos.ppo import centred_cost_advantage, normalize
from saferl.algos.ppo_lag import PPOLag
from saferl.foundation.hparams import declare, integer, real


@register
class CUP(PPOLag):
    name = "cup"
    description = "CUP (Yang et al. 2022): a PPO improvement step, then a KL projection towards the cost constraint."
    defaults = declare(
        PPOLag.defaults,
        lagrange_init=0.001,
        target_kl=0.01,
        multiplier_max=real(2.0, "(0, inf)", "upper bound of the multiplier nu"),
        projection_epochs=integer(10, "[1, inf)", "passes of the projection stage"),
        # as PKU-Alignment/omnisafe, omnisafe/algorithms/on_policy/first_order/cup.py: both stages
        # compare the full-batch KL after each epoch with target_kl itself
        kl_stop_estimate="full_batch",
        kl_stop_factor=1.0,
    )

    def projection_coefficient(self):
        """(1 - gamma_c lambda) / (1 - gamma_c), the GAE factor of CUP's bound."""
        gamma = self.hp["cost_gamma"]
        return (1.0 - gamma * self.hp["gae_lambda"]) / (1.0 - gamma)

    def projection_loss(self, agent, dist, log_prob, mb):
        """Eq. 10 on a minibatch, and its mean KL(pi_theta || pi_{k+1/2}) for the early stop."""
        ratio = jnp.exp(log_prob - mb["log_prob"])
        kl = self.actor.kl(dist, mb["mid_dist"])
        weight = agent.extra["lagrange"].multiplier * self.projection_coefficient()
        if jnp.ndim(weight) == 0:  # one constraint
            cost = weight * ratio * mb["cost_advantage"]
        else:  # r sum_i nu_i coef A_c,i
            cost = ratio * weighted_cost_advantage(weight, mb["cost_advantage"])
        return jnp.mean(cost + kl), jnp.mean(kl)

    def update(self, agent, batch, key):
        agent, batch, risk_metrics = self.prepare_batch(agent, batch)
        agent, metrics = self.before_update(agent, batch)
        k_improve, k_project = jax.random.split(key)
        reward_adv = normalize(batch.advantages[:, 0])
        agent, improve = self.ppo_epochs(agent, batch, reward_adv, k_improve)
        inputs = {
            "mid_dist": self.actor.distribution(agent.actor_params, batch.obs),  # pi_{k+1/2}
            "cost_advantage": centred_cost_advantage(batch),
        }
        agent, project = self.ppo_epochs(
            agent,
            batch,
            reward_adv,
            k_project,
            loss=self.projection_loss,
            inputs=inputs,
            fit_critics=False,
            epochs=self.hp["projection_epochs"],
            kl_reference=inputs["mid_dist"],
        )
        return self.count_update(agent), {
            **risk_metrics,
            **metrics,
            **improve,
            "projection_kl": project["approx_kl"],
            "projection_epochs_run": project["epochs_run"],
        }
