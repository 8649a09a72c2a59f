"""FOCOPS (Zhang, Vuong, Ross 2020, "First Order Constrained Optimization in Policy Space",
arXiv:2002.06506), a C-TRPO baseline.

FOCOPS solves the trust-region problem in the space of policies in closed form,

    pi*(a|s) ∝ pi_k(a|s) exp((A_r(s, a) - nu A_c(s, a)) / lambda)                     (eq. 8)

and projects it back onto the parametric family by minimising, per minibatch,

    L(theta) = E_s[ (D_KL(pi_theta || pi_k)[s] - (1/lambda) E_a[r (A_r - nu A_c)]) 1{D_KL[s] <= eta} ]   (eq. 10-11)

with r = pi_theta / pi_k: the per-state indicator drops states that already moved more than
eta.  The cost multiplier takes one projected gradient step per update before the epochs,
nu <- clip(nu + alpha_nu (J_c - b), 0, nu_max) (Sec. 5; :mod:`saferl.algos.lagrangian` with
``lagrange_optimizer: sgd``, capped by ``multiplier_max``), and the epochs stop once, after an epoch,
the mean over the whole batch of KL(pi_theta || pi_k)[s] exceeds delta (``target_kl``), as the authors'
code.  Defaults are the paper's (Table 3): lambda 1.5, eta = delta = 0.02, alpha_nu 0.01, nu_max 2.
Advantages as PPO-Lag: A_r standardised, A_c centred.  ``advantage_scaling: one_plus_nu`` divides
A_r - nu A_c by 1 + nu, as the C-TRPO authors' FOCOPS (milosen/ctrpo baselines/focops.py, SafePO's: there
also an Adam multiplier at rate 0.035, ``lagrange_optimizer: adam``).

Several constraints J_c,i <= b_i: the Lagrangian of the trust-region problem has one multiplier
nu_i per constraint, so eq. 8 becomes pi* ∝ pi_k exp((A_r - sum_i nu_i A_c,i) / lambda), eq. 10-11
weigh r (A_r - sum_i nu_i A_c,i), and each nu_i takes its projected step on J_c,i - b_i.

``indicator_scope: in_bound_fraction`` is the loss the C-TRPO paper's FOCOPS runs minimised
(milosen/ctrpo ``algorithms/baselines/focops.py``, SafePO's): there the per-state KL has shape
(B, 1) and ``ratio * adv`` shape (B,), so ``(temp_kl - ratio * adv / lambda) * indicator``
broadcasts to (B, B) and its mean is

    mean_s(D_KL[s] 1{D_KL[s] <= eta}) - (fraction of states within eta) mean_(s,a)(r A) / lambda,

the surrogate taken over every state, scaled by the in-bound fraction, instead of only over the
states within eta.  The default ``per_state`` is eq. 10-11.  docs/decisions/062-ctrpo-harness-methods-as-run.md.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from saferl.algos.base import register
from saferl.algos.lagrangian import weighted_cost_advantage
from saferl.algos.ppo import centred_cost_advantage, normalize
from saferl.algos.ppo_lag import PPOLag
from saferl.foundation.hparams import choice, declare, real

#: the choices of ``hparams.indicator_scope`` (module docstring)
INDICATOR_SCOPES = ("per_state", "in_bound_fraction")


@register
class FOCOPS(PPOLag):
    name = "focops"
    description = "FOCOPS (Zhang et al. 2020): first-order projection of the optimal nonparametric policy."
    defaults = declare(
        PPOLag.defaults,
        lagrange_optimizer="sgd",
        lagrange_lr=0.01,
        target_kl=0.02,
        multiplier_max=real(2.0, "(0, inf)", "nu_max, the multiplier's upper bound"),
        temperature=real(1.5, "(0, inf)", "lambda, the temperature of eq. 10"),
        state_kl_bound=real(0.02, "(0, inf)", "the per-state KL bound of the indicator in eq. 10"),
        # as ymzhang01/focops, focops_main.py: after each epoch the full-batch KL(pi_theta || pi_k)
        # (gaussian_kl(new, old)) against delta itself
        kl_stop_estimate="full_batch_reverse",
        kl_stop_factor=1.0,
        advantage_scaling=choice(
            "none", ("none", "one_plus_nu"), "A_r - nu A_c as eq. 8 (none) or divided by 1 + nu (SafePO's FOCOPS)"
        ),
        indicator_scope=choice(
            "per_state",
            INDICATOR_SCOPES,
            "eq. 10's indicator on each state's term (per_state) or, on the "
            "surrogate, the fraction of states within eta (the C-TRPO paper's runs)",
        ),
    )

    def policy_advantage(self, agent, batch):
        """A_r - sum_i nu_i A_c,i, the exponent of eq. 8 (not divided by 1 + nu as in PPO-Lag)."""
        nu = agent.extra["lagrange"].multiplier
        advantage = normalize(batch.advantages[:, 0]) - weighted_cost_advantage(nu, centred_cost_advantage(batch))
        if self.hp["advantage_scaling"] == "one_plus_nu":
            advantage = advantage / (1.0 + jnp.sum(nu))
        return advantage

    def policy_loss(self, agent, dist, log_prob, mb):
        """Eq. 10-11: per-state KL(pi_theta || pi_k) minus the weighted surrogate, on the states within eta."""
        state_kl = self.actor.kl(dist, mb["dist"])
        ratio = jnp.exp(log_prob - mb["log_prob"])
        inside = jax.lax.stop_gradient(state_kl <= self.hp["state_kl_bound"]).astype(state_kl.dtype)
        surrogate = ratio * mb["advantage"] / self.hp["temperature"]
        if self.hp["indicator_scope"] == "in_bound_fraction":  # the broadcast (B, 1) - (B,) of SafePO's focops.py
            loss = jnp.mean(state_kl * inside) - jnp.mean(inside) * jnp.mean(surrogate)
        else:
            loss = jnp.mean((state_kl - surrogate) * inside)
        return loss, jnp.mean(state_kl)
