"""Closed-form and small-dual solvers for CPO (Achiam et al. 2017) and PCPO (Yang et al. 2020).

All solvers work on the scalars/small matrices left after conjugate gradients
and are branch-free (``jnp.where`` over every case), so they jit, vmap over
seeds and run inside ``lax.scan``.  None of them produces NaN for degenerate
input (tiny ``s``, ``c = 0``, ``g`` parallel to ``b``, ``g = 0``).

Sign convention (maximisation, as in CPO's main text)
-----------------------------------------------------
``g`` is the gradient of the *reward* surrogate (to be increased), ``b`` the
gradient of the *cost* surrogate, ``c = J_C(pi_k) - limit`` and ``H`` the
Fisher (KL Hessian).  The local CPO problem (Achiam et al. 2017, eq. 10 / App. 10.2) is

    max_x  g^T x   s.t.   b^T x + c <= 0,   (1/2) x^T H x <= delta.                  (P)

With ``q = g^T H^-1 g``, ``r = g^T H^-1 b``, ``s = b^T H^-1 b`` the Lagrangian
``g^T x - lam (x^T H x / 2 - delta) - nu (b^T x + c)`` is maximised by

    x(lam, nu) = (H^-1 g - nu H^-1 b) / lam,                                          (S)

and the dual problem is ``min_{lam > 0, nu >= 0} (q - 2 nu r + nu^2 s) / (2 lam) + lam delta - nu c``.
For fixed ``lam`` the best ``nu`` is ``nu(lam) = max(0, (r + lam c) / s)``, which leaves
the one-dimensional convex problem ``min_lam phi(lam)`` with

    phi_a(lam) = (A / lam + B lam) / 2 - r c / s    on  Lambda_a = {lam > 0 : r + lam c > 0}   (nu > 0)
    phi_b(lam) = (q / lam + 2 delta lam) / 2       on  Lambda_b = {lam > 0 : r + lam c <= 0}  (nu = 0)
    A = q - r^2 / s  (>= 0 by Cauchy-Schwarz),    B = 2 delta - c^2 / s.

The minimiser is the better of ``clip(sqrt(A/B), Lambda_a)`` and
``clip(sqrt(q / (2 delta)), Lambda_b)``.  (Achiam et al. write the same
solution with ``r`` of the opposite sign, because their ``g`` is the gradient
of the loss; then ``nu = (lam c - r)/s``.  Here ``r`` is always ``g^T H^-1 b``
with ``g`` the ascent direction, and the formulas above are the ones that
satisfy the KKT conditions of (P).)

Optimisation cases (the numbering of Achiam's reference code and OmniSafe)
--------------------------------------------------------------------------
* 0: infeasible -- ``c > 0`` and ``B < 0``: the half-space misses the trust region.
  Recovery step ``x = -sqrt(2 delta / s) H^-1 b`` (minimises ``b^T x`` in the trust region).
* 1: ``c >= 0`` and ``B >= 0``: ``x = 0`` is infeasible, part of the trust region is feasible.
* 2: ``c < 0`` and ``B >= 0``: ``x = 0`` is feasible, the boundary cuts the trust region.
* 3: ``c < 0`` and ``B < 0``: the whole trust region is feasible -> TRPO step ``sqrt(2 delta/q) H^-1 g``.
* 4: ``s <= s_tol`` and ``c <= 0``: the cost gradient vanishes, the constraint is irrelevant -> TRPO step.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

CASE_INFEASIBLE = 0
CASE_PARTIAL_INFEASIBLE_ORIGIN = 1
CASE_PARTIAL_FEASIBLE_ORIGIN = 2
CASE_WHOLE_REGION_FEASIBLE = 3
CASE_CONSTRAINT_IRRELEVANT = 4

MAX_MULTI_CONSTRAINTS = 8


def _consts(dtype):
    fi = jnp.finfo(dtype)
    # sqrt(tiny) so that squares of guarded quantities do not underflow to 0.
    # "big" = 1/sqrt(tiny) bounds multipliers so that products with O(1) numbers cannot overflow.
    return jnp.asarray(fi.eps, dtype), jnp.asarray(np.sqrt(fi.tiny), dtype), jnp.asarray(1.0 / np.sqrt(fi.tiny), dtype)


def _safe_div(num, den, tiny):
    return num / jnp.maximum(den, tiny)


# --------------------------------------------------------------------------- single constraint (CPO)


class CPODual(NamedTuple):
    """Solution of (P): ``x = coef_g * H^-1 g + coef_b * H^-1 b`` (see :func:`cpo_step`)."""

    lam: jax.Array  # trust-region multiplier (0 in the recovery case)
    nu: jax.Array  # constraint multiplier (recovery: the step length sqrt(2 delta / s))
    case: jax.Array  # int32 in 0..4, see the module docstring
    coef_g: jax.Array  # 1 / lam, or 0 when recovering
    coef_b: jax.Array  # -nu / lam, or -sqrt(2 delta / s) when recovering


def cpo_scalars(g, b, hinv_g, hinv_b):
    """``(q, r, s) = (g^T H^-1 g, g^T H^-1 b, b^T H^-1 b)`` from flat vectors."""
    return jnp.vdot(g, hinv_g), jnp.vdot(g, hinv_b), jnp.vdot(b, hinv_b)


def cpo_dual(q, r, s, c, delta, *, s_tol: float = 1e-8) -> CPODual:
    """Solve CPO's dual (Achiam et al. 2017, App. 10.2) in closed form, branch-free.

    Arguments are scalars (``q, r, s`` from :func:`cpo_scalars`,
    ``c = J_C(pi_k) - limit``, ``delta`` the KL radius); ``s_tol`` is the
    threshold on ``s = b^T H^-1 b`` below which a satisfied constraint is
    treated as irrelevant (case 4).

    Safeguards: ``q`` and ``s`` are floored at ``sqrt(tiny)``; ``A`` is
    floored at ``eps * q`` (``g`` parallel to ``b`` makes ``A -> 0`` and the
    constraint-active multiplier ``lam_a = sqrt(A/B) -> 0``; the floor keeps
    ``1/lam`` finite while the part of the step it multiplies,
    ``H^-1 g - (r/s) H^-1 b``, has ``H``-norm ``sqrt(A)``, so the trust region
    is never exceeded); ``B`` is floored at ``sqrt(tiny)`` inside ``sqrt(A/B)``.
    """
    q, r, s, c, delta = jnp.broadcast_arrays(*map(jnp.asarray, (q, r, s, c, delta)))
    dtype = jnp.result_type(q, r, s, c, delta, float)
    q, r, s, c, delta = (x.astype(dtype) for x in (q, r, s, c, delta))
    eps, tiny, big = _consts(dtype)

    q_safe = jnp.maximum(q, tiny)
    s_safe = jnp.maximum(s, tiny)
    A = jnp.maximum(q_safe - _safe_div(r * r, s, tiny), eps * q_safe)
    B = 2.0 * delta - _safe_div(c * c, s, tiny)

    irrelevant = (s <= s_tol) & (c <= 0)
    case = jnp.where(
        irrelevant,
        CASE_CONSTRAINT_IRRELEVANT,
        jnp.where(
            c < 0,
            jnp.where(B < 0, CASE_WHOLE_REGION_FEASIBLE, CASE_PARTIAL_FEASIBLE_ORIGIN),
            jnp.where(B < 0, CASE_INFEASIBLE, CASE_PARTIAL_INFEASIBLE_ORIGIN),
        ),
    ).astype(jnp.int32)

    # ---- cases 3 and 4: plain trust-region (TRPO) step, nu = 0.
    lam_tr = jnp.sqrt(q_safe / (2.0 * delta))

    # ---- cases 1 and 2: one-dimensional dual over lam, split at lam_c = -r/c.
    c_pos = c >= 0  # c == 0 behaves as c -> 0+: Lambda_a = all lam if r > 0, else empty
    c_safe = jnp.where(c_pos, jnp.maximum(c, tiny), jnp.minimum(c, -tiny))
    lam_c = jnp.clip(-r / c_safe, 0.0, big)
    lo_a, hi_a = jnp.where(c_pos, lam_c, 0.0), jnp.where(c_pos, big, lam_c)
    lo_b, hi_b = jnp.where(c_pos, 0.0, lam_c), jnp.where(c_pos, lam_c, big)
    lam_floor = jnp.sqrt(eps) * lam_tr
    lam_a = jnp.maximum(jnp.clip(jnp.sqrt(A / jnp.maximum(B, tiny)), lo_a, hi_a), lam_floor)
    lam_b = jnp.maximum(jnp.clip(lam_tr, lo_b, hi_b), lam_floor)

    def phi(lam):
        in_a = r + lam * c > 0
        phi_a = 0.5 * (A / lam + B * lam) - r * c / s_safe
        phi_b = 0.5 * (q_safe / lam + 2.0 * delta * lam)
        return jnp.where(in_a, phi_a, phi_b)

    lam_partial = jnp.where(phi(lam_a) <= phi(lam_b), lam_a, lam_b)
    # nu/lam = max(0, r/lam + c)/s, computed without forming r + lam c for huge lam.
    nu_over_lam = jnp.maximum(0.0, r / lam_partial + c) / s_safe
    nu_partial = jnp.minimum(lam_partial * nu_over_lam, big)

    trpo = case >= CASE_WHOLE_REGION_FEASIBLE
    recover = case == CASE_INFEASIBLE
    recovery_len = jnp.sqrt(2.0 * delta / s_safe)
    lam = jnp.where(recover, 0.0, jnp.where(trpo, lam_tr, lam_partial))
    nu = jnp.where(recover, recovery_len, jnp.where(trpo, 0.0, nu_partial))
    coef_g = jnp.where(recover, 0.0, 1.0 / jnp.where(recover, 1.0, lam))
    coef_b = jnp.where(recover, -recovery_len, jnp.where(trpo, 0.0, -nu_over_lam))
    return CPODual(lam, nu, case, coef_g, coef_b)


def cpo_step(dual: CPODual, hinv_g, hinv_b):
    """Assemble the step ``x = (H^-1 g - nu H^-1 b) / lam`` (eq. S); in case 0 ``x = -sqrt(2 delta / s) H^-1 b``.

    Works for flat vectors and, leaf by leaf, for pytrees of ``H^-1 g`` and ``H^-1 b``.
    """
    return jax.tree_util.tree_map(lambda xg, xb: dual.coef_g * xg + dual.coef_b * xb, hinv_g, hinv_b)


# --------------------------------------------------------------------------- several constraints


class CPOMultiDual(NamedTuple):
    """Solution of (P_m): ``x = coef_g * H^-1 g + sum_i coef_b[i] * H^-1 b_i`` (see :func:`cpo_multi_step`)."""

    lam: jax.Array  # trust-region multiplier (0 when recovering)
    nu: jax.Array  # (m,) constraint multipliers (recovery: the weights of the recovery direction)
    active: jax.Array  # (m,) bool, the active set of the chosen KKT point (recovery: the violated set)
    feasible: jax.Array  # bool; False -> recovery step
    coef_g: jax.Array
    coef_b: jax.Array  # (m,)


def _sym_pinv(a, eps):
    """Pseudo-inverse of a symmetric PSD matrix via ``eigh`` (cheaper to compile than an SVD)."""
    w, v = jnp.linalg.eigh(a)
    cutoff = 10.0 * a.shape[-1] * eps * jnp.max(jnp.abs(w))
    w_inv = jnp.where(w > cutoff, 1.0 / jnp.where(w > cutoff, w, 1.0), 0.0)
    return (v * w_inv) @ v.T


def _active_sets(m: int) -> np.ndarray:
    masks = [np.array(bits, bool) for bits in itertools.product((False, True), repeat=m)]
    masks.sort(key=lambda mk: int(mk.sum()))  # fewer active constraints first (tie-break)
    return np.stack(masks)


def cpo_dual_multi(q, r, S, c, delta, *, tol: float = 1e-4) -> CPOMultiDual:
    """Solve the CPO subproblem with ``m`` linear constraints by enumerating active sets.

        max_x g^T x   s.t.   B^T x + c <= 0  (m rows b_i^T x + c_i <= 0),   (1/2) x^T H x <= delta.   (P_m)

    Inputs: ``q = g^T H^-1 g`` (scalar), ``r = B^T H^-1 g`` (m,),
    ``S = B^T H^-1 B`` (m, m), ``c`` (m,), ``delta``.  ``m`` is static and at
    most :data:`MAX_MULTI_CONSTRAINTS` (all ``2^m`` active sets are solved as
    one batch).

    For an active set ``K`` with the trust region active, stationarity
    ``x = H^-1 (g - B_K nu_K) / lam`` and ``B_K^T x + c_K = 0`` give

        nu_K = S_KK^+ (r_K + lam c_K),
        x^T H x = 2 delta  =>  lam = sqrt(A_K / B_K),
        A_K = q - r_K^T S_KK^+ r_K,   B_K = 2 delta - c_K^T S_KK^+ c_K,

    the vector analogue of the single-constraint ``A`` and ``B``; the step is
    ``x = (H^-1 g - H^-1 B_K S_KK^+ r_K) / lam - H^-1 B_K S_KK^+ c_K``.  Every
    candidate's objective, constraint values and ``x^T H x`` follow from
    ``q, r, S`` alone.  (P_m) is convex, so its solution is the candidate with
    the largest objective among those that are primal feasible (constraint
    ``i`` within ``tol * (|c_i| + sqrt(2 delta S_ii))``, trust region within a
    factor ``1 + tol``); no dual sign test is needed.  Ties go to the
    smallest active set.  ``A_K`` is floored at ``eps * q`` (``g`` in the span
    of ``B_K``), which keeps ``lam > 0``.

    If no candidate is feasible the linearised constraints cannot be met
    inside the trust region and the recovery step minimises the sum of the
    violated constraints ``V = {i : c_i > 0}`` within it:
    ``x = -sqrt(2 delta / (1_V^T S 1_V)) H^-1 B 1_V`` (for ``m = 1`` this is
    CPO's recovery step).
    """
    r = jnp.asarray(r)
    S = jnp.asarray(S)
    c = jnp.asarray(c)
    m = r.shape[-1]
    if m > MAX_MULTI_CONSTRAINTS or m < 1:
        raise ValueError(f"cpo_dual_multi enumerates 2^m active sets; m must be in 1..{MAX_MULTI_CONSTRAINTS}, got {m}")
    dtype = jnp.result_type(q, r, S, c, delta, float)
    q, r, S, c, delta = (jnp.asarray(x, dtype) for x in (q, r, S, c, delta))
    eps, tiny, _ = _consts(dtype)
    q_safe = jnp.maximum(q, tiny)
    masks = jnp.asarray(_active_sets(m))  # (2^m, m)
    eye = jnp.eye(m, dtype=dtype)
    diag_s = jnp.maximum(jnp.diagonal(S), 0.0)
    scale = jnp.abs(c) + jnp.sqrt(2.0 * delta * diag_s) + tiny

    def candidate(mask):
        mf = mask.astype(dtype)
        S_K = S * mf[:, None] * mf[None, :] + jnp.diag(1.0 - mf)  # block-diag(S_KK, I)
        P = _sym_pinv(S_K, eps) * mf[:, None] * mf[None, :]  # S_KK^+ padded with zeros
        Sr, Sc = P @ r, P @ c
        A_K = jnp.maximum(q_safe - r @ Sr, eps * q_safe)
        B_K = 2.0 * delta - c @ Sc
        lam = jnp.sqrt(A_K / jnp.maximum(B_K, tiny))
        alpha = 1.0 / lam
        # x = alpha u - w with u = H^-1 g - H^-1 B Sr, w = H^-1 B Sc.
        uHu = q - 2.0 * r @ Sr + Sr @ S @ Sr
        uHw = r @ Sc - Sr @ S @ Sc
        wHw = Sc @ S @ Sc
        xHx = alpha**2 * uHu - 2.0 * alpha * uHw + wHw
        cons = alpha * (r - S @ Sr) + (c - S @ Sc)  # B^T x + c
        obj = alpha * (q - r @ Sr) - r @ Sc  # g^T x
        ok = (B_K > 0) & jnp.all(cons <= tol * scale) & (xHx <= 2.0 * delta * (1.0 + tol))
        nu = Sr + lam * Sc
        return ok, obj, lam, nu, alpha, -alpha * Sr - Sc

    ok, obj, lam, nu, alpha, beta = jax.vmap(candidate)(masks)
    feasible = jnp.any(ok)
    best = jnp.argmax(jnp.where(ok, obj, -jnp.inf))
    best = jnp.where(feasible, best, 0)

    violated = c > 0
    violated = jnp.where(jnp.any(violated), violated, c >= jnp.max(c))
    w = violated.astype(dtype)
    rec_len = jnp.sqrt(2.0 * delta / jnp.maximum(w @ S @ w, tiny))

    return CPOMultiDual(
        lam=jnp.where(feasible, lam[best], 0.0),
        nu=jnp.where(feasible, nu[best], rec_len * w),
        active=jnp.where(feasible, masks[best], violated),
        feasible=feasible,
        coef_g=jnp.where(feasible, alpha[best], 0.0),
        coef_b=jnp.where(feasible, beta[best], -rec_len * w),
    )


def cpo_multi_scalars(g, B, hinv_g, hinv_B):
    """``(q, r, S) = (g^T H^-1 g, B^T H^-1 g, B^T H^-1 B)``; ``B`` and ``hinv_B`` are stacked rows, shape ``(m, n)``."""
    return jnp.vdot(g, hinv_g), B @ hinv_g, B @ hinv_B.T


def cpo_multi_step(dual: CPOMultiDual, hinv_g, hinv_B):
    """``x = coef_g H^-1 g + sum_i coef_b[i] H^-1 b_i``; ``hinv_B`` has shape ``(m, n)``."""
    return dual.coef_g * hinv_g + dual.coef_b @ hinv_B


# --------------------------------------------------------------------------- PCPO


def pcpo_projection(reward_step, cost_grad, c, *, hinv_cost_grad=None, norm: str = "kl"):
    """Project a reward step onto the linearised constraint set (PCPO, Yang et al. 2020, eq. 4-5).

        x = x_r - max(0, (b^T x_r + c) / (b^T L^-1 b)) L^-1 b,

    the minimiser of ``(x - x_r)^T L (x - x_r)`` over ``{x : b^T x + c <= 0}``
    with ``L = H`` (``norm="kl"``, needs ``hinv_cost_grad = H^-1 b``) or
    ``L = I`` (``norm="l2"``).  ``b`` is the cost-surrogate gradient and
    ``c = J_C(pi_k) - limit``.  With ``b^T L^-1 b ~ 0`` the projection is
    skipped (``x = x_r``).  ``norm`` is static.
    """
    if norm == "kl":
        if hinv_cost_grad is None:
            raise ValueError("norm='kl' needs hinv_cost_grad = H^-1 b")
        direction = hinv_cost_grad
    elif norm == "l2":
        direction = cost_grad
    else:
        raise ValueError(f"norm must be 'kl' or 'l2', got {norm!r}")
    dtype = jnp.result_type(reward_step, cost_grad, c, float)
    _, tiny, _ = _consts(dtype)
    denom = jnp.vdot(cost_grad, direction)
    violation = jnp.vdot(cost_grad, reward_step) + c
    coef = jnp.where(denom > tiny, jnp.maximum(0.0, violation) / jnp.maximum(denom, tiny), 0.0)
    return reward_step - coef * direction


def pcpo_step(g, hinv_g, cost_grad, hinv_cost_grad, c, delta, *, norm: str = "kl"):
    """Full PCPO update: reward step ``x_r = sqrt(2 delta / g^T H^-1 g) H^-1 g`` then :func:`pcpo_projection`."""
    dtype = jnp.result_type(g, hinv_g, float)
    _, tiny, _ = _consts(dtype)
    q = jnp.maximum(jnp.vdot(g, hinv_g), tiny)
    x_r = jnp.sqrt(2.0 * delta / q) * hinv_g
    return pcpo_projection(x_r, cost_grad, c, hinv_cost_grad=hinv_cost_grad, norm=norm)
