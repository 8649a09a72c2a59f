"""Risk (Value-at-Risk) surrogates: the mathematics shared by Canary, CPO-VaR, CPPO and CVaR-CPO.

The VaR constraint P(C(tau) >= rho) <= epsilon (Canary eq. 12) on the cost return
C(tau) = sum_t gamma_c^t c_t is replaced by one of three surrogates:

* ``cantelli`` -- Cantelli's inequality on the first two moments (Canary Sec. 4):
      J_C = (1/eps - 1) sigma^2 - (rho - mu)^2 <= 0                         (eq. 20)
          = beta mu~ + 2 rho mu - l,   l = mu^2 / eps + rho^2               (eq. 28)
  with mu = E[C], mu~ = E[C^2] (eq. 26), estimated from the cost channel c and the
  augmented cost channel c~ (eq. 25) of :class:`saferl.envs.risk.RiskAugmentation`.
* ``indicator`` -- the expectation of I(tau) = 1(C(tau) >= rho) (eq. 13-14) <= epsilon; its
  per-step cost is 1 on the step where the accumulated cost first reaches rho.
* ``cvar`` -- the Rockafellar-Uryasev form (eq. 15):
      CVaR_eps = min_eta  eta + E[(C - eta)^+] / eps <= rho,
  whose per-step cost (y_{t+1} - eta)^+ - (y_t - eta)^+ telescopes to (C - eta)^+.

Everything here is a pure function of arrays (jittable), plus estimators on samples of
episode costs that the tests and the relative-variance study (canary-fig2) share.
"""

from __future__ import annotations

import jax.numpy as jnp

SURROGATES = ("cantelli", "indicator", "cvar")

#: the cost channels each surrogate adds to the critics (after the env's own cost)
CHANNELS = {"cantelli": ("cost", "cantelli"), "indicator": ("indicator",), "cvar": ("cvar",)}


# --------------------------------------------------------------------------- Cantelli


def cantelli_beta(epsilon):
    return 1.0 / epsilon - 1.0


def cantelli_value(mu, mu2, rho, epsilon):
    """J_C of eq. 28 from the moments mu = E[C], mu2 = E[C^2] (equals eq. 20)."""
    ell = mu**2 / epsilon + rho**2
    return cantelli_beta(epsilon) * mu2 + 2.0 * rho * mu - ell


def cantelli_bound(mu, variance, rho):
    """Cantelli's upper bound on P(C >= rho) (eq. 19); 1 where mu >= rho (the bound is void)."""
    gap = rho - mu
    bound = variance / jnp.maximum(variance + gap**2, jnp.finfo(jnp.float32).tiny)
    return jnp.where(gap > 0, jnp.minimum(bound, 1.0), 1.0)


def cantelli_surrogate(mu, mu2, z, z_tilde, rho, epsilon):
    """L_C of eq. 31 with eqs. 9, 29, 30: z = L_mu - mu and z_tilde = L_mu~ - mu~ are the
    (scaled) surrogate changes of the cost and augmented-cost returns.

        L_C = beta (mu~ + z~) + 2 rho (mu + z) - [ l + (2 mu z + z^2) / eps ]

    At z = z~ = 0 it equals J_C (eq. 36); its gradient there is eq. 37:
    beta grad z~ + (2 rho - 2 mu / eps) grad z."""
    ell_hat = mu**2 / epsilon + rho**2 + (2.0 * mu * z + z**2) / epsilon  # eq. 30
    return cantelli_beta(epsilon) * (mu2 + z_tilde) + 2.0 * rho * (mu + z) - ell_hat


def cantelli_gradient_weights(mu, rho, epsilon):
    """(w_c, w_c~): b = w_c grad L_mu + w_c~ grad L_mu~ (eq. 37)."""
    return 2.0 * rho - 2.0 * mu / epsilon, cantelli_beta(epsilon)


# --------------------------------------------------------------------------- per-step risk costs


def augmented_cost(cost, accumulated, cost_discount):
    """c~_t = gamma_c^t c_t^2 + 2 y_t c_t (eq. 25)."""
    return cost_discount * cost**2 + 2.0 * accumulated * cost


def indicator_cost(accumulated, accumulated_next, rho):
    """1 on the step where y first reaches rho: sum_t of it is I(tau) (eq. 13).

    With gamma_c < 1 :class:`saferl.envs.risk.RiskAugmentation` divides it by gamma_c^t so
    that the critics' discounted sum is still I(tau)."""
    return ((accumulated < rho) & (accumulated_next >= rho)).astype(jnp.float32)


def cvar_excess_cost(accumulated, accumulated_next, eta):
    """(y_{t+1} - eta)^+ - (y_t - eta)^+: telescopes to (C(tau) - eta)^+ - (0 - eta)^+."""
    return jnp.maximum(accumulated_next - eta, 0.0) - jnp.maximum(accumulated - eta, 0.0)


# --------------------------------------------------------------------------- estimators on samples


def masked_mean(x, mask):
    mask = mask.astype(x.dtype)
    return jnp.sum(x * mask) / jnp.maximum(jnp.sum(mask), 1.0)


def masked_quantile(x, mask, q):
    """The empirical q-quantile (lower, 'inverted CDF') of x over the entries where mask is true.

    NaN where mask has no true entry."""
    mask = mask.astype(bool)
    n = jnp.sum(mask)
    ordered = jnp.sort(jnp.where(mask, x, jnp.inf))
    index = jnp.clip(jnp.ceil(q * n).astype(jnp.int32) - 1, 0, x.shape[0] - 1)
    return jnp.where(n > 0, ordered[index], jnp.nan)


def violation_rate(costs, mask, rho):
    """Empirical P(C >= rho) over the finished episodes (the indicator estimator, eq. 41)."""
    return masked_mean((costs >= rho).astype(jnp.float32), mask)


def cvar_estimate(costs, mask, epsilon, eta=None):
    """Rockafellar-Uryasev estimate eta + mean((C - eta)^+) / eps (eq. 47); eta defaults to the
    empirical (1 - eps)-quantile, the minimiser of the empirical objective."""
    if eta is None:
        eta = masked_quantile(costs, mask, 1.0 - epsilon)
    return eta + masked_mean(jnp.maximum(costs - eta, 0.0), mask) / epsilon


def cantelli_estimate(costs, mask, rho, epsilon):
    """J_C from the empirical moments (eq. 55 into eq. 54)."""
    return cantelli_value(masked_mean(costs, mask), masked_mean(costs**2, mask), rho, epsilon)
