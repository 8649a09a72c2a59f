"""CUP (Yang et al. 2022, "Constrained Update Projection Approach to Safe Policy Optimization"),
a C-TRPO baseline.

Each update has two first-order stages on the same batch (CUP Algorithm 1):

1. performance improvement: PPO's clipped surrogate on the reward alone, pi_k -> pi_{k+1/2};
2. projection: back towards the cost constraint, minimising over theta

       E_s[ nu (1 - gamma lambda) / (1 - gamma) E_a[r A_c] + D_KL(pi_theta || pi_{k+1/2})[s] ]        (eq. 10)

   with r = pi_theta / pi_k (the batch's policy) and (1 - gamma lambda) / (1 - gamma) the GAE
   factor of CUP's bound (Theorem 1), until the mean KL from pi_{k+1/2} exceeds ``target_kl``.

The multiplier nu ascends the dual on J_c - b before the stages (Adam, initial 0.001, capped at 2,
as the CUP authors' OmniSafe implementation); A_r is standardised, A_c only centred (OmniSafe
standardises it too; docs/design.md says why not here).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from saferl.algos.base import register
from saferl.algos.ppo import centred_cost_advantage, normalize
from saferl.algos.ppo_lag import PPOLag


@register
class CUP(PPOLag):
    name = "cup"
    description = "CUP (Yang et al. 2022): a PPO improvement step, then a KL projection towards the cost constraint."
    defaults = dict(PPOLag.defaults, lagrange_init=0.001, multiplier_max=2.0, target_kl=0.01, projection_epochs=10)

    def projection_coefficient(self):
        """(1 - gamma_c lambda) / (1 - gamma_c), the GAE factor of CUP's bound."""
        gamma = float(self.hp["cost_gamma"])
        return (1.0 - gamma * float(self.hp["gae_lambda"])) / (1.0 - gamma)

    def projection_loss(self, agent, dist, log_prob, mb):
        """Eq. 10 on a minibatch, and its mean KL(pi_theta || pi_{k+1/2}) for the early stop."""
        ratio = jnp.exp(log_prob - mb["log_prob"])
        kl = self.actor.kl(dist, mb["mid_dist"])
        weight = agent.extra["lagrange"].multiplier * self.projection_coefficient()
        return jnp.mean(weight * ratio * mb["cost_advantage"] + kl), jnp.mean(kl)

    def update(self, agent, batch, key):
        agent, batch, risk_metrics = self.prepare_batch(agent, batch)
        agent, metrics = self.before_update(agent, batch)
        k_improve, k_project = jax.random.split(key)
        reward_adv = normalize(batch.advantages[:, 0])
        agent, improve = self.ppo_epochs(agent, batch, reward_adv, k_improve)
        inputs = {"mid_dist": self.actor.distribution(agent.actor_params, batch.obs),  # pi_{k+1/2}
                  "cost_advantage": centred_cost_advantage(batch)}
        agent, project = self.ppo_epochs(agent, batch, reward_adv, k_project, loss=self.projection_loss,
                                         inputs=inputs, fit_critics=False, epochs=self.hp["projection_epochs"],
                                         kl_stop_factor=1.0)
        return agent, {**risk_metrics, **metrics, **improve, "projection_kl": project["approx_kl"],
                       "projection_epochs_run": project["epochs_run"]}

    def metrics_names(self):
        return super().metrics_names() + ("projection_kl", "projection_epochs_run")
