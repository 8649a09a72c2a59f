"""CPPO (Ying, Zhou, Su, Yan, Chen, Zhu 2022, "Towards Safe Reinforcement Learning via Constraining
Conditional Value-at-Risk", IJCAI): PPO-Lagrangian on a CVaR constraint, the Canary paper's
"CPPO" baseline (Canary Sec. 6.1).

Ying et al. constrain CVaR_alpha of the loss -D(xi) (the negative reward return) by beta; here
the loss is the cost return C(tau) = sum_t gamma_c^t c_t, their tail 1 - alpha is our epsilon and
their beta is rho, so the problem is (Rockafellar-Uryasev form, Canary eq. 15)

    max_{theta, eta}  J_r(theta)   s.t.   eta + E[(C - eta)^+] / eps <= rho,

with Lagrangian  L(theta, eta, lambda) = -J_r(theta) + lambda (eta + E[(C - eta)^+] / eps - rho)
(their nu is our eta), solved by alternating three steps, each a (projected) gradient step on L
(their CPPO algorithm; we had their code but not the paper's text, so the steps are named by what
they compute, not by equation number):

* lambda, dual ascent on  dL/dlambda = eta + E[(C - eta)^+] / eps - rho   (divided by rho here:
  :mod:`saferl.algos.risk` writes the constraint as J = (eta + mean (C - eta)^+ / eps) / rho <= 1,
  the batch's finished episodes, and :class:`saferl.algos.ppo_lag.PPOLag` ascends on J - 1);
* theta, PPO on the penalised objective, whose penalty gradient is
  dL/dtheta contains (lambda / eps) E[(C - eta)^+ grad log P_theta(tau)]: the clipped surrogate of
  (A_r - lambda A_x) / (1 + lambda) with A_x the GAE advantage of the per-step excess
  ((y_{t+1} - eta)^+ - (y_t - eta)^+) / gamma_c^t, which telescopes to (C - eta)^+
  (:class:`saferl.envs.risk.RiskAugmentation`, surrogate "cvar"), divided by eps rho;
* eta, a gradient step on the Rockafellar-Uryasev objective (:func:`eta_step`):
      d/d eta [eta + E[(C - eta)^+] / eps] = 1 - P(C > eta) / eps,
      eta <- max(0, eta - eta_lr * rho * (1 - P_hat(C > eta) / eps)),
  P_hat over the batch's finished episodes (eta is kept when none finished).  Its fixed point is
  the (1 - eps)-quantile of C, the VaR, where the constraint value equals CVaR_eps.

Deviations from Ying et al. (their code, github.com/yingchengyang/CPPO, src/spinup/algos/pytorch/cppo):

* their penalty is applied per step as lambda / (1 - alpha) * (nu - D_hat_t)^+ with D_hat_t the
  reward accumulated so far plus V(s_t), subtracted from the reward advantage (and clipped at
  cvar_clip_ratio |V(s_t)|); that weight depends on s_t only, so its expected policy gradient is
  zero.  We use the GAE advantage of the excess channel instead: a critic (on the augmented
  state (s, y / rho, gamma_c^t)) estimates E[(C - eta)^+ | x_t, a_t] - E[(C - eta)^+ | x_t], the
  causal, baselined form of the same score-function term;
* their d/d nu carries the factor lambda, lambda (1 - P / (1 - alpha)); we drop it (it only
  rescales the step, and would freeze eta while lambda = 0), and scale the step by rho so that
  ``eta_lr`` is unit-free; their code replaces this step by a heuristic (nu = nu_delay * mean
  D_hat) and clips lambda to [0.001, 0.1] -- neither is used here;
* lambda follows the shared Lagrangian (Adam on the dual, lr ``lagrange_lr``, as OmniSafe's
  PPO-Lag) rather than plain gradient ascent; ``--set hparams.lagrange_optimizer=sgd`` gives theirs;
* lambda starts at 10 (``lagrange_init``), as in the public JAX CPPO below (10-100).  The CVaR
  penalty's advantage, A_x / (eps rho), is non-zero only on the rare steps past eta, so lambda
  must be O(10) before it weighs against the standardised reward advantage, and Adam moves it
  by ~``lagrange_lr`` per iteration: from 0, CPPO did not constrain in 2M PointGoal1 steps
  (P_hat 0.115 at lr 0.035, 0.087 at lr 0.14, return ~24.5, like PPO's); from 10, P_hat 0.043,
  return 7.4 (5 seeds, rho 100, eps 0.05) -- the paper's CPPO: 0.025, return 6.5;
* eta starts at rho (theirs: the hparam nu_start); the critic of the excess channel does not
  see eta, which moves between rollouts (slowly: at most eta_lr (1 / eps - 1) rho up and
  eta_lr rho down per iteration).
* a public JAX CPPO next to EcoAnt / FrozenLake code (possibly the Canary authors' baseline)
  differs again (nu: the mean of the worst eps of y_t + V_c(s_t); lambda starting at 10-100), so
  Canary's Table 1 numbers for CPPO need not transfer.
"""

from __future__ import annotations

import jax.numpy as jnp

from saferl.algos.base import register
from saferl.algos.ppo_lag import PPOLag
from saferl.algos.risk import var_surrogate
from saferl.core import risk
from saferl.foundation.hparams import declare, real


def eta_step(eta, costs, mask, epsilon, lr, scale):
    """One gradient step on eta + E[(C - eta)^+] / eps over the samples ``costs`` where ``mask``
    holds: eta - lr * scale * (1 - P_hat(C > eta) / eps), floored at 0 (C >= 0); ``eta`` where
    ``mask`` selects nothing.  Returns (new eta, P_hat(C > eta))."""
    tail = risk.masked_mean((costs > eta).astype(jnp.float32), mask)
    new = jnp.maximum(eta - lr * scale * (1.0 - tail / epsilon), 0.0)
    return jnp.where(jnp.sum(mask) > 0, new, eta), tail


@register
@var_surrogate("cvar")
class CPPO(PPOLag):
    name = "cppo"
    description = (
        "CPPO (Ying et al. 2022): PPO-Lagrangian on the CVaR (Rockafellar-Uryasev) surrogate of a VaR "
        "constraint, eta by a gradient step (Canary Sec. 6.1 baseline)."
    )
    defaults = declare(
        PPOLag.defaults, eta_lr=real(0.01, "[0, inf)", "step of eta, in units of rho per iteration"), lagrange_init=10.0
    )

    def next_eta(self, agent, batch):
        eta, _ = eta_step(
            agent.extra["eta"],
            batch.episode_discounted_cost[:, 0],
            batch.episode_done,
            agent.constraint.epsilon,
            self.hp["eta_lr"],
            jnp.asarray(agent.constraint.limit, jnp.float32),
        )
        return eta
