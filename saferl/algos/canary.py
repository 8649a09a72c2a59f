"""Canary (Cantelli VaR-constrained policy optimisation), Algorithm 1 of the Canary paper.

CPO whose one constraint is Cantelli's surrogate of the VaR constraint
P(C(tau) >= rho) <= eps:

* augmented state x_t = (s_t, y_t / rho, gamma_c^t) and augmented cost
  c~_t = gamma_c^t c_t^2 + 2 y_t c_t (eqs. 23-27), three critics V, V^C, V^C~
  (:class:`saferl.envs.risk.RiskAugmentation`, surrogate ``cantelli``);
* Monte-Carlo mu = E[C], mu~ = E[C^2] from the batch's finished episodes; the constraint
  value c = J_C (eq. 36) and gradient b = beta grad L_mu~ + (2 rho - 2 mu / eps) grad L_mu
  (eq. 37), both divided by rho^2, fed to the shared CPO solver (eq. 38);
* recovery (Sec. 4.5, eq. 34) while mu >= rho: the plain CPO step with L_mu <= rho.

All of this is the shared machinery (:mod:`saferl.algos.risk` writes the constraint,
:mod:`saferl.algos.cpo` steps); this file holds only Canary's defaults (App. D).
App. D's "80 critic epochs" is read as 80 critic gradient steps per update (5 passes of 16
minibatches): 80 full passes of three 3x256 critics over a 16k batch would cost ~100 s per
update on a 2-core CPU.  ``--set hparams.critic_epochs=80`` gives the other reading.

Theorem 4.2 as metrics (``theorem42_*``, :func:`saferl.algos.cantelli_theory.theorem42_metrics`): after each
update, the change of J_C that L_C (eq. 31) predicts for the new policy and eq. 33's worst-case bound on how far
the measured J_C may land from it; the ``canary-theorem42`` target compares them with the next iteration's J_C.
"""

from __future__ import annotations

import jax.numpy as jnp

from saferl.algos.base import register
from saferl.algos.cantelli_theory import theorem42_metrics
from saferl.algos.cpo import CPO
from saferl.algos.risk import var_surrogate
from saferl.algos.second_order import mean_episode_length
from saferl.foundation.hparams import declare


@register
@var_surrogate("cantelli")
class Canary(CPO):
    name = "canary"
    description = "Canary: CPO on Cantelli's two-moment surrogate of a VaR constraint, with recovery (Canary Alg. 1)."
    defaults = declare(
        CPO.defaults,
        target_kl=0.01,  # delta
        gamma=0.99,
        gae_lambda=0.95,
        critic_lr=3e-4,
        max_grad_norm=0.5,
        critic_epochs=5,
        critic_minibatches=16,
        # b per sample (s = 1), c per episode, as OmniSafe's CPO (the evidence:
        # docs/decisions/025-cost-surrogate-scale.md)
        cost_scale="per_sample",
    )
    config_defaults = {
        # value normalisation (PopArt) is ours: the augmented-cost critic's targets are ~C^2 (10^4 at
        # rho = 100), which plain MSE + Adam at 3e-4 cannot fit in a few epochs
        # (docs/decisions/063-canary-popart.md)
        "network": {
            "actor_hidden": [256, 256, 256],
            "critic_hidden": [256, 256, 256],
            "activation": "tanh",
            "value_normalization": True,
        },
    }

    def update(self, agent, batch, key):
        new_agent, metrics = super().update(agent, batch, key)
        return new_agent, {**metrics, **self.theorem42_terms(agent, new_agent, batch)}

    def theorem42_terms(self, agent, new_agent, batch):
        """Theorem 4.2's terms of the step agent -> new_agent, from the raw batch (its channels 1 and 2 are
        the GAE advantages of c and c~ under pi_k); one extra actor pass over the batch."""
        if not self.is_risk:
            return {}
        constraint = agent.constraint
        dist = self.actor.distribution(new_agent.actor_params, batch.obs)
        ratio = jnp.exp(self.actor.log_prob(dist, batch.action) - batch.log_prob)
        length = mean_episode_length(batch)  # none finished: the rollout's length
        return theorem42_metrics(
            ratio,
            batch.advantages[:, 1],
            batch.advantages[:, 2],
            batch.timestep,
            length,
            batch.episodes["discounted_cost"][0],
            batch.episodes["discounted_cost_sq"][0],
            constraint.limit,
            constraint.epsilon,
            self.hp["target_kl"],
            constraint.gamma_c,
        )
