"""Canary's theory as run diagnostics: Prop. 4.1 (the variance floor) and Theorem 4.2 (the worst-case bound).

Paper: "Canary: Value-at-Risk constraints via Cantelli's inequality" (arXiv:2601.22993), Sec. 4.1 and 4.4,
App. A.1 and A.5.  beta = 1/eps - 1 throughout.

Prop. 4.1 (eq. 22).  Cantelli's bound (eq. 19) certifies P(C >= rho) <= eps iff mu < rho and
J_C = beta sigma^2 - (rho - mu)^2 <= 0 (eq. 20, App. A.1), i.e. iff

    sigma^2 <= (rho - mu)^2 / beta          (the largest variance at the current mean, mu < rho)

and, costs being non-negative (mu >= 0), only if sigma <= rho / sqrt(beta) (eq. 22):

    sigma^2 <= rho^2 / beta = eps rho^2 / (1 - eps)      (the "variance floor" of Prop. 4.1)

A policy whose cost-return variance exceeds rho^2 / beta cannot be certified by Cantelli at any mean;
if the environment's irreducible variance does, the regime (rho, eps) is out of Cantelli's reach.
:func:`floor_metrics` gives the per-iteration metrics every VaR run with the ``cantelli`` surrogate logs
(:meth:`saferl.algos.risk.RiskConstrained.risk_terms`); :func:`saferl.analysis.diagnostics.variance_floor_warning`
reads them back from a run directory (``saferl train --resume`` prints it).

Theorem 4.2 (eq. 33).  A policy pi_{k+1} in the trust region (mean KL <= delta) satisfies

    J_C(pi_{k+1}) - L_C(pi_{k+1}) <= K (beta a~ + 2 rho a + (2 a / eps) M),
    K = sqrt(2 delta) gamma_c / (1 - gamma_c)^2,   M = mu(pi_k) + a / (1 - gamma_c),

with a = max_x |E_{a~pi_{k+1}} A^C_{pi_k}(x, a)| and a~ the same for the augmented cost C~ (App. A.5 bounds
|J_C - L_C| term by term, so the bound holds for the absolute error too); with L_C(pi_{k+1}) <= 0, the
step's linearised constraint (problem 32), it reads J_C(pi_{k+1}) <= bound.  Because L_C(pi_k) = J_C(pi_k),
the error J_C(pi_{k+1}) - L_C(pi_{k+1}) is the measured change of J_C minus the change L_C predicts.
K is infinite at gamma_c = 1 (the paper's experiments): the bound is then void.
:func:`theorem42_metrics` estimates the predicted change and the bound from one batch (proxies below).
"""

from __future__ import annotations

import jax.numpy as jnp

from saferl.core import risk

# --------------------------------------------------------------------------- Prop. 4.1


def variance_floor(rho, epsilon):
    """rho^2 / beta = eps rho^2 / (1 - eps): eq. 22 squared, the largest cost-return variance a policy
    with 0 <= mu < rho may have and satisfy eq. 20 (floats, numpy or jax arrays)."""
    return rho**2 / risk.cantelli_beta(epsilon)


def sd_floor(rho, epsilon):
    """rho / sqrt(beta): eq. 22, the bound on the standard deviation."""
    return rho / risk.cantelli_beta(epsilon) ** 0.5


def max_variance_at_mean(mu, rho, epsilon):
    """(rho - mu)^2 / beta where mu < rho, else 0: eq. 20 solved for sigma^2 at the mean mu (eq. 19
    needs mu < rho, Sec. 4.5)."""
    gap = jnp.asarray(rho, jnp.float32) - mu
    return jnp.where(gap > 0, gap**2 / risk.cantelli_beta(epsilon), 0.0)


def floor_feasible(variance, rho, epsilon):
    """Prop. 4.1's necessary condition at a measured variance: sigma^2 <= rho^2 / beta."""
    return jnp.asarray(variance) <= variance_floor(rho, epsilon)


def floor_metrics(mu, mu2, rho, epsilon) -> dict:
    """The per-iteration Prop. 4.1 metrics from the batch's moments mu = E[C], mu2 = E[C^2] (scalars):

    * ``cantelli_variance``: sigma^2 = mu2 - mu^2, the measured variance of the cost return;
    * ``cantelli_variance_floor``: rho^2 / beta, the largest variance Prop. 4.1 allows at any mean;
    * ``cantelli_variance_max``: (rho - mu)^2 / beta (0 if mu >= rho), the largest at the current mean;
    * ``cantelli_feasible``: 1 where sigma^2 <= rho^2 / beta, else 0 (Cantelli cannot certify the
      regime with this variance whatever the mean)."""
    variance = jnp.maximum(mu2 - mu**2, 0.0)
    floor = jnp.asarray(variance_floor(rho, epsilon), jnp.float32)
    return {
        "cantelli_variance": variance,
        "cantelli_variance_floor": floor,
        "cantelli_variance_max": max_variance_at_mean(mu, rho, epsilon),
        "cantelli_feasible": (variance <= floor).astype(jnp.float32),
    }


# --------------------------------------------------------------------------- Theorem 4.2


def theorem42_bound(alpha_c, alpha_tilde, mu_k, rho, epsilon, delta, gamma_c):
    """The right-hand side of eq. 33: K (beta a~ + 2 rho a + (2 a / eps) M); inf at gamma_c = 1."""
    gamma_c = jnp.asarray(gamma_c, jnp.float32)
    beta = risk.cantelli_beta(epsilon)
    one_minus = jnp.where(gamma_c < 1.0, 1.0 - gamma_c, 1.0)  # a safe denominator; gamma_c = 1 -> inf below
    k = jnp.sqrt(2.0 * delta) * gamma_c / one_minus**2
    m = mu_k + alpha_c / one_minus
    bound = k * (beta * alpha_tilde + 2.0 * rho * alpha_c + (2.0 * alpha_c / epsilon) * m)
    return jnp.where(gamma_c < 1.0, bound, jnp.inf)


def theorem42_metrics(ratio, adv_c, adv_tilde, timestep, length, mu, mu2, rho, epsilon, delta, gamma_c) -> dict:
    """Theorem 4.2's terms for one update pi_k -> pi_{k+1} from the batch pi_k collected.

    ``ratio`` (B,) is pi_{k+1}(a_t|x_t) / pi_k(a_t|x_t); ``adv_c``, ``adv_tilde`` (B,) the GAE advantages of
    the cost and augmented-cost channels under pi_k (centred here, as the CPO step uses them); ``length``
    the mean episode length L; mu, mu2 the batch's E[C], E[C^2].

    * Z = L mean(gamma_c^t (ratio - 1) A^C) estimates (1 / (1 - gamma_c)) E_{x~d^c_k, a~pi_{k+1}}[A^C]
      in its per-episode form (eq. 9, :mod:`saferl.algos.risk`), Z~ likewise for C~ (eq. 29);
      ``theorem42_predicted_change`` = L_C(pi_{k+1}) - J_C(pi_k) (eq. 31 with eq. 30 minus eq. 28).
    * ``theorem42_alpha_c`` / ``theorem42_alpha_tilde``: a = max_x |E_{a~pi_{k+1}} A(x, a)| estimated by
      max_t |(ratio_t - 1) A_t| over the batch (one importance-weighted sample per visited state, using
      E_{a~pi_k} A = 0); ``theorem42_bound`` is eq. 33 with them and delta = the trust-region radius.
    * ``theorem42_bound_max_adv``: eq. 33 with a = max_t |A^C_t|, a~ = max_t |A^C~_t| (|E_a A(x, a)| <=
      max_a |A(x, a)|: an upper proxy over the visited pairs), the more conservative bound.

    Proxies: the max runs over the batch's states only, and A is the GAE estimate of the advantage.
    """
    adv_c = adv_c - jnp.mean(adv_c)
    adv_tilde = adv_tilde - jnp.mean(adv_tilde)
    weights = jnp.asarray(gamma_c, jnp.float32) ** timestep.astype(jnp.float32)
    change = ratio - 1.0
    z = length * jnp.mean(weights * change * adv_c)
    z_tilde = length * jnp.mean(weights * change * adv_tilde)
    predicted = risk.cantelli_surrogate(mu, mu2, z, z_tilde, rho, epsilon) - risk.cantelli_value(mu, mu2, rho, epsilon)
    alpha_c = jnp.max(jnp.abs(change * adv_c))
    alpha_tilde = jnp.max(jnp.abs(change * adv_tilde))
    return {
        "theorem42_predicted_change": predicted,
        "theorem42_alpha_c": alpha_c,
        "theorem42_alpha_tilde": alpha_tilde,
        "theorem42_bound": theorem42_bound(alpha_c, alpha_tilde, mu, rho, epsilon, delta, gamma_c),
        "theorem42_bound_max_adv": theorem42_bound(
            jnp.max(jnp.abs(adv_c)), jnp.max(jnp.abs(adv_tilde)), mu, rho, epsilon, delta, gamma_c
        ),
    }


# --------------------------------------------------------------------------- the start-up warning
