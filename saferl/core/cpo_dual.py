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

Several constraints: recovery (:func:`cpo_dual_multi`, :func:`min_norm_hull_weights`)
-------------------------------------------------------------------------------------
With ``m`` constraints and no x meeting all linearised constraints inside the trust region,
the recovery step acts on the violated set ``V = {i : c_i > 0}``.  It is

    x = -sqrt(2 delta / (w*^T G w*)) H^-1 B_V^T w*,   w* = argmin_{w in simplex(V)} w^T G w,   G = B_V H^-1 B_V^T,

``H^-1 B_V^T w*`` the minimum-norm point (in the ``H^-1`` metric) of the convex hull of the violated
constraints' gradients.  It solves ``min_x max_{i in V} b_i^T x  s.t.  x^T H x / 2 <= delta``
(by minimax duality, ``max_{|x|_H <= R} min_i -b_i^T x = min_{w in simplex} R |B_V^T w|_{H^-1}``):
the step whose worst linearised change among the violated constraints is the lowest.  The
optimality conditions of the simplex problem, ``(G w*)_i >= w*^T G w*`` for every ``i in V``, give
``b_i^T x = -sqrt(2 delta / (w*^T G w*)) (G w*)_i < 0`` for every violated constraint whenever
``w*^T G w* > 0`` -- that is, whenever some step decreases all of them (0 is outside the hull
exactly when such a direction exists).  The alternative, the step minimising the *sum* of the
violated constraints (``w = 1_V``), can raise one violated constraint to lower another, which
is why it is not used; it remains the fallback when 0 lies in the hull (numerically:
``w*^T G w* <= 100 eps max_i G_ii``), where no step lowers all of them.  For ``m = 1`` both are
CPO's recovery step ``-sqrt(2 delta / s) H^-1 b``.

PCPO with several constraints (:func:`pcpo_projection_multi`)
-------------------------------------------------------------
The KL projection of the reward step ``x_r`` onto the intersection of the linearised
constraints, ``min_x (x - x_r)^T H (x - x_r) / 2  s.t.  B x + c <= 0``, has the solution
``x = x_r - H^-1 B^T mu`` with ``mu >= 0`` the solution of the m-dimensional dual
``min_{mu >= 0} mu^T S mu / 2 - mu^T (B x_r + c)``, ``S = B H^-1 B^T``; it is found by enumerating
the active sets, as :func:`cpo_dual_multi` does, and for ``m = 1`` is PCPO's closed form
(Projection-Based Constrained Policy Optimization, arXiv:2010.03152, eq. 4-5).

References: Achiam, Held, Tamar, Abbeel 2017, "Constrained Policy Optimization", arXiv:1705.10528;
Yang, Rosca, Narasimhan, Ramadge 2020, "Projection-Based Constrained Policy Optimization",
arXiv:2010.03152.
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
    inside the trust region, and the recovery step acts on the violated
    constraints ``V = {i : c_i > 0}`` (the largest ``c_i`` when, numerically,
    none is positive): ``x = -sqrt(2 delta / (w^T S w)) H^-1 B^T w`` with ``w``
    the weights of the minimum-norm point of the hull of their gradients
    (:func:`min_norm_hull_weights`; the module docstring says why), which lowers
    every violated linearised constraint whenever some step lowers all of them.
    For ``m = 1`` this is CPO's recovery step ``-sqrt(2 delta / s) H^-1 b``.
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
    w, _ = recovery_weights(S, violated)
    rec_len = jnp.sqrt(2.0 * delta / jnp.maximum(w @ S @ w, tiny))

    return CPOMultiDual(
        lam=jnp.where(feasible, lam[best], 0.0),
        nu=jnp.where(feasible, nu[best], rec_len * w),
        active=jnp.where(feasible, masks[best], violated),
        feasible=feasible,
        coef_g=jnp.where(feasible, alpha[best], 0.0),
        coef_b=jnp.where(feasible, beta[best], -rec_len * w),
    )


def _sym_pinv_indefinite(a, eps):
    """Pseudo-inverse of a symmetric (possibly indefinite) matrix via ``eigh``."""
    w, v = jnp.linalg.eigh(a)
    cutoff = 10.0 * a.shape[-1] * eps * jnp.max(jnp.abs(w))
    keep = jnp.abs(w) > cutoff
    w_inv = jnp.where(keep, 1.0 / jnp.where(keep, w, 1.0), 0.0)
    return (v * w_inv) @ v.T


def min_norm_hull_weights(G, mask):
    """``w* = argmin_{w in simplex(mask)} w^T G w``: the weights of the minimum-norm point of the convex hull
    of the vectors whose Gram matrix is ``G`` (``G = B H^-1 B^T``: the gradients b_i in the ``H^-1`` metric),
    over the entries where ``mask`` holds (at least one).  Returns ``(w*, w*^T G w*)``, ``w*`` of shape
    ``(m,)`` with zeros outside ``mask``.

    Every support ``T`` (a non-empty subset of the ``m <= MAX_MULTI_CONSTRAINTS`` entries, all ``2^m - 1`` at
    once) gives the minimiser of ``w^T G w`` on the affine hull ``{sum_T w = 1, w = 0 off T}`` from the
    bordered system ``[[G_TT, 1], [1^T, 0]] (w_T, -mu) = (0, 1)`` (pseudo-inverse: singular ``G_TT`` is
    fine); clipped at 0 and renormalised it is a point of the simplex.  The optimum is the candidate of
    least value among those with ``T`` inside ``mask`` (a minimal support of the optimum is among them,
    and there the affine minimiser is unique and non-negative); ties go to the smaller support.
    """
    G = jnp.asarray(G)
    m = G.shape[-1]
    if m > MAX_MULTI_CONSTRAINTS or m < 1:
        raise ValueError(
            f"min_norm_hull_weights enumerates 2^m supports; m must be in 1..{MAX_MULTI_CONSTRAINTS}, got {m}"
        )
    dtype = jnp.result_type(G, float)
    G = G.astype(dtype)
    eps, tiny, _ = _consts(dtype)
    mask = jnp.asarray(mask, bool)
    supports = jnp.asarray(_active_sets(m)[1:])  # non-empty, fewer entries first
    rhs = jnp.zeros((m + 1,), dtype).at[m].set(1.0)

    def candidate(support):
        tf = support.astype(dtype)
        border = jnp.zeros((m + 1, m + 1), dtype)
        border = border.at[:m, :m].set(G * tf[:, None] * tf[None, :] + jnp.diag(1.0 - tf))
        border = border.at[:m, m].set(tf).at[m, :m].set(tf)
        w = jnp.maximum((_sym_pinv_indefinite(border, eps) @ rhs)[:m] * tf, 0.0)
        total = jnp.sum(w)
        w = w / jnp.maximum(total, tiny)
        ok = jnp.all(mask | ~support) & (total > tiny)
        return ok, w @ G @ w, w

    ok, value, w = jax.vmap(candidate)(supports)
    best = jnp.argmin(jnp.where(ok, value, jnp.inf))
    return w[best], value[best]


def recovery_weights(S, violated):
    """The weights ``w`` of the several-constraint recovery direction ``-H^-1 B^T w`` (the module docstring):
    the minimum-norm point of the hull of the violated constraints' gradients, or -- where that point is
    numerically 0 (``w^T S w <= 100 eps max_{i in V} S_ii``: no step lowers every violated constraint) -- the
    sum of the violated constraints, ``w = 1_V``.  Returns ``(w, used_min_norm)``."""
    S = jnp.asarray(S)
    dtype = jnp.result_type(S, float)
    S = S.astype(dtype)
    eps, _, _ = _consts(dtype)
    violated = jnp.asarray(violated, bool)
    w, value = min_norm_hull_weights(S, violated)
    scale = jnp.max(jnp.where(violated, jnp.diagonal(S), 0.0))
    min_norm = value > 100.0 * eps * scale
    return jnp.where(min_norm, w, violated.astype(dtype)), min_norm


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


def pcpo_projection_multi(reward_step, cost_grads, c, hinv_cost_grads, *, tol: float = 1e-4):
    """Project a reward step onto the intersection of ``m`` linearised constraints in the KL metric.

        x = argmin_x (x - x_r)^T H (x - x_r) / 2   s.t.   B x + c <= 0        (rows b_i^T x + c_i <= 0)

    (PCPO eq. 4 with several constraints).  ``cost_grads`` = B and ``hinv_cost_grads`` = H^-1 B have shape
    ``(m, n)``, ``c`` shape ``(m,)``.  Stationarity gives ``x = x_r - H^-1 B^T mu``, ``mu >= 0``; for an
    active set ``K``, ``mu_K = S_KK^+ v_K`` (``S = B H^-1 B^T``, ``v = B x_r + c``, zero off ``K``) makes
    the constraints of ``K`` tight, and ``|x - x_r|_H^2 = mu^T S mu`` and ``B x + c = v - S mu`` follow
    from ``S`` and ``v`` alone.  The problem is convex, so the projection is the candidate nearest to
    ``x_r`` among the primal feasible ones (constraint ``i`` within ``tol`` times its scale; all ``2^m``
    active sets at once, ``m <= MAX_MULTI_CONSTRAINTS``); ties go to the smaller active set.  A
    constraint with ``b_i^T H^-1 b_i ~ 0`` cannot be moved by any step and is left out of the
    feasibility test (as :func:`pcpo_projection` skips it).  When the linearised constraints have no
    common point the candidate with the least largest (scaled) violation is taken.  For ``m = 1``
    this is :func:`pcpo_projection` with ``norm="kl"``.
    """
    B = jnp.asarray(cost_grads)
    hinv_B = jnp.asarray(hinv_cost_grads)
    c = jnp.asarray(c)
    m = B.shape[0]
    if m > MAX_MULTI_CONSTRAINTS or m < 1:
        raise ValueError(
            f"pcpo_projection_multi enumerates 2^m active sets; m must be in 1..{MAX_MULTI_CONSTRAINTS}, got {m}"
        )
    dtype = jnp.result_type(reward_step, B, c, float)
    x_r, B, hinv_B, c = (jnp.asarray(a, dtype) for a in (reward_step, B, hinv_B, c))
    eps, tiny, _ = _consts(dtype)
    S = B @ hinv_B.T
    S = 0.5 * (S + S.T)
    along = B @ x_r
    v = along + c
    relevant = jnp.diagonal(S) > tiny
    masks = jnp.asarray(_active_sets(m))

    def candidate(mask):
        mf = mask.astype(dtype)
        S_K = S * mf[:, None] * mf[None, :] + jnp.diag(1.0 - mf)
        mu = (_sym_pinv(S_K, eps) * mf[:, None] * mf[None, :]) @ v
        cons = v - S @ mu
        scale = jnp.abs(c) + jnp.abs(along) + jnp.abs(S) @ jnp.abs(mu) + tiny
        violation = jnp.where(relevant, cons / scale, -jnp.inf)
        return jnp.all(violation <= tol), mu @ S @ mu, jnp.max(violation), mu

    ok, dist, worst, mu = jax.vmap(candidate)(masks)
    best = jnp.where(jnp.any(ok), jnp.argmin(jnp.where(ok, dist, jnp.inf)), jnp.argmin(worst))
    return x_r - mu[best] @ hinv_B


def pcpo_step(g, hinv_g, cost_grad, hinv_cost_grad, c, delta, *, norm: str = "kl"):
    """Full PCPO update: reward step ``x_r = sqrt(2 delta / g^T H^-1 g) H^-1 g`` then :func:`pcpo_projection`."""
    dtype = jnp.result_type(g, hinv_g, float)
    _, tiny, _ = _consts(dtype)
    q = jnp.maximum(jnp.vdot(g, hinv_g), tiny)
    x_r = jnp.sqrt(2.0 * delta / q) * hinv_g
    return pcpo_projection(x_r, cost_grad, c, hinv_cost_grad=hinv_cost_grad, norm=norm)
