"""Second-order trust-region machinery shared by TRPO, TRPO-Lag, CPO, PCPO, C-TRPO and Canary.

Every function here is pure, jittable and vmappable: there is no Python control
flow on traced values, loops are ``jax.lax.while_loop`` and choices are
``jnp.where``.  They are meant to run inside ``jax.lax.scan`` over training
iterations and ``jax.vmap`` over seeds.

The trust-region update of TRPO (Schulman et al. 2015) and of its constrained
relatives (C-TRPO paper, eq. 19-21) is

    theta_{k+1} = theta_k + alpha^j * sqrt(2 delta / (g^T H^-1 g)) * H^-1 g,

where ``H`` is the Hessian of the mean divergence at ``theta_k`` (the Fisher
information for the KL), ``H^-1 g`` is found by conjugate gradients using only
Hessian-vector products, and ``alpha^j`` is chosen by backtracking line search.

Contents
--------
* :func:`fisher_vector_product` -- ``(H + damping I) v`` on pytrees, forward-over-reverse.
* :func:`flat_fisher_vector_product`, :func:`make_fisher_matvec` -- the same on flat vectors.
* :func:`conjugate_gradient` -- ``x ~ A^-1 b`` with a fixed iteration cap and early stop.
* :func:`backtracking_line_search` -- all candidates at once with ``jax.vmap``.
* :func:`backtracking_line_search_sequential` -- the same choice with ``lax.while_loop`` (``sequential=True``).
* :func:`diag_gaussian_kl`, :func:`categorical_kl` -- closed-form KLs from distribution params.
* :func:`diag_gaussian_fisher`, :func:`categorical_fisher` -- the Fisher of the output
  distribution w.r.t. its own parameters (for tests and dense checks).
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree

PyTree = Any


# --------------------------------------------------------------------------- Fisher-vector products


def fisher_vector_product(kl_fn: Callable[[PyTree], jax.Array], params: PyTree, vector: PyTree, damping=0.0) -> PyTree:
    """``(H + damping * I) v`` with ``H = d^2/dtheta^2 kl_fn(theta)`` at ``theta = params``.

    ``kl_fn(params) -> scalar`` is the mean divergence between the fixed old
    policy and the policy at ``params``, e.g.
    ``mean_s KL(pi_old(.|s) || pi_params(.|s))`` with the old distribution
    parameters passed through ``jax.lax.stop_gradient``.  At
    ``params = theta_old`` its Hessian is the Fisher information
    ``F = E_s E_{a~pi}[grad log pi grad log pi^T]`` (both KL directions agree to
    second order).

    Forward-over-reverse: ``jax.jvp(jax.grad(kl_fn), (params,), (vector,))``;
    one backward and one forward-mode pass, no dense matrix.  ``vector`` has the
    structure of ``params``; so does the result.
    """
    _, hv = jax.jvp(jax.grad(kl_fn), (params,), (vector,))
    return jax.tree_util.tree_map(lambda h, v: h + damping * v, hv, vector)


def flat_fisher_vector_product(
    kl_fn: Callable[[PyTree], jax.Array], params: PyTree, vector: jax.Array, damping=0.0
) -> jax.Array:
    """:func:`fisher_vector_product` for a flat ``vector`` (``ravel_pytree`` order of ``params``)."""
    _, unravel = ravel_pytree(params)
    hv = fisher_vector_product(kl_fn, params, unravel(vector), damping)
    return ravel_pytree(hv)[0]


def make_fisher_matvec(kl_fn: Callable[[PyTree], jax.Array], params: PyTree, damping=0.0, *, linearize: bool = True):
    """Return ``(matvec, flat_params, unravel)`` with ``matvec(v) = (H + damping I) v`` on flat vectors.

    With ``linearize=True`` the gradient of ``kl_fn`` is linearised once with
    ``jax.linearize``; every ``matvec`` call (e.g. each CG iteration) then costs
    one forward-mode pass over the stored residuals instead of recomputing the
    forward and backward pass: faster, at the price of keeping the
    linearisation's intermediates in memory for the whole CG loop.  With
    ``linearize=False`` each call is a fresh ``jax.jvp`` of ``jax.grad``.
    """
    flat_params, unravel = ravel_pytree(params)
    if linearize:
        _, hvp = jax.linearize(jax.grad(kl_fn), params)

        def matvec(v):
            return ravel_pytree(hvp(unravel(v)))[0] + damping * v

    else:

        def matvec(v):
            return flat_fisher_vector_product(kl_fn, params, v, damping)

    return matvec, flat_params, unravel


# --------------------------------------------------------------------------- conjugate gradient


class CGInfo(NamedTuple):
    iterations: jax.Array  # number of matvecs performed
    residual_sq: jax.Array  # ||b - A x||^2 as tracked by the recursion


def conjugate_gradient(
    matvec: Callable[[jax.Array], jax.Array],
    b: jax.Array,
    iters: int = 10,
    residual_tol: float = 1e-10,
    *,
    return_info: bool = False,
):
    """Solve ``A x = b`` for symmetric positive-definite ``A`` given only ``matvec(v) = A v``.

    Standard CG (Hestenes & Stiefel) started at ``x_0 = 0``::

        r_0 = p_0 = b
        alpha_i = r_i^T r_i / p_i^T A p_i
        x_{i+1} = x_i + alpha_i p_i;   r_{i+1} = r_i - alpha_i A p_i
        p_{i+1} = r_{i+1} + (r_{i+1}^T r_{i+1} / r_i^T r_i) p_i

    Runs at most ``iters`` iterations (static) and stops early once
    ``r^T r < residual_tol`` (squared residual norm, absolute).  Implemented with
    ``lax.while_loop``; under ``vmap`` the loop runs until every batch member is
    done, the finished ones unchanged.  Degenerate curvature (``p^T A p <= 0``)
    or an exactly zero residual freeze the iterate instead of producing NaN.

    ``b`` is a flat vector.  Returns ``x`` or, with ``return_info=True``,
    ``(x, CGInfo)``.
    """
    b = jnp.asarray(b)
    tiny = jnp.finfo(b.dtype).tiny

    def cond(state):
        i, _, _, _, rr, stalled = state
        return (i < iters) & (rr >= residual_tol) & (~stalled)

    def body(state):
        i, x, r, p, rr, _ = state
        ap = matvec(p)
        pap = jnp.vdot(p, ap)
        ok = pap > tiny
        alpha = jnp.where(ok, rr / jnp.where(ok, pap, 1.0), 0.0)
        x = x + alpha * p
        r = r - alpha * ap
        rr_new = jnp.vdot(r, r)
        beta = jnp.where(rr > tiny, rr_new / jnp.where(rr > tiny, rr, 1.0), 0.0)
        p = r + beta * p
        # A non-positive curvature direction means A is not SPD along p: stop there.
        return i + 1, x, r, p, rr_new, ~ok

    init = (jnp.asarray(0, jnp.int32), jnp.zeros_like(b), b, b, jnp.vdot(b, b), jnp.asarray(False))
    i, x, _, _, rr, _ = jax.lax.while_loop(cond, body, init)
    if return_info:
        return x, CGInfo(i, rr)
    return x


# --------------------------------------------------------------------------- line search


class LineSearchResult(NamedTuple):
    step: PyTree  # decay**index * full_step, or zeros if nothing was accepted
    index: jax.Array  # first accepted j, or max_backtracks if none
    accepted: jax.Array  # bool


def _scale(step: PyTree, frac) -> PyTree:
    return jax.tree_util.tree_map(lambda s: frac * s, step)


def backtracking_line_search(
    evaluate: Callable[[PyTree], dict],
    full_step: PyTree,
    *,
    accept: Callable[[dict], jax.Array],
    decay: float = 0.8,
    max_backtracks: int = 15,
    return_metrics: bool = False,
    sequential: bool = False,
):
    """Backtracking line search that evaluates all candidates at once.

    Candidates are ``step_j = decay**j * full_step`` for ``j = 0..max_backtracks-1``;
    ``evaluate(step) -> dict of scalars`` (surrogate, kl, cost surrogate, ...)
    is ``jax.vmap``-ed over them and ``accept(metrics) -> bool`` (e.g.
    ``kl <= delta & surrogate improved & linearised cost constraint holds``,
    with the baselines closed over) is applied to each.  The first accepted
    ``j`` wins.

    Returns :class:`LineSearchResult` ``(step, index, accepted)``: the chosen
    step (zeros with the structure of ``full_step`` when nothing is accepted),
    its index ``j`` (``max_backtracks`` when nothing is accepted) and a bool.
    With ``return_metrics=True`` returns ``(result, metrics)`` where ``metrics``
    are those of the chosen candidate (of the smallest candidate if none).

    With ``sequential=True`` it is :func:`backtracking_line_search_sequential`,
    which tries the candidates one at a time.  Trade-off: this version
    always does ``max_backtracks`` evaluations, but as one batched call, so on
    an accelerator it costs about one evaluation of latency; its memory is
    ``max_backtracks`` times the evaluation's intermediates (a batch of
    rollout data times the network activations, per candidate).  Use the
    sequential one when that memory matters or evaluations are expensive and
    usually accepted at ``j = 0``.
    """
    search = _first_accepted if sequential else _all_candidates
    result, metrics = search(evaluate, full_step, accept, decay, max_backtracks)
    if return_metrics:
        return result, metrics
    return result


def backtracking_line_search_sequential(evaluate: Callable[[PyTree], dict], full_step: PyTree, **options):
    """Same contract, keywords and result as :func:`backtracking_line_search`, one candidate at a time.

    A ``lax.while_loop`` tries ``j = 0, 1, ...`` and stops at the first
    accepted candidate, so it needs the memory of a single evaluation and
    usually only one or two evaluations; but each iteration is a separate,
    serial evaluation (kernel-launch latency on accelerators) and under
    ``jax.vmap`` over seeds the loop runs until the slowest seed accepts.
    """
    return backtracking_line_search(evaluate, full_step, sequential=True, **options)


def _all_candidates(evaluate, full_step, accept, decay, max_backtracks):
    """The batched search: ``(result, metrics of the chosen candidate, or of the smallest if none)``."""
    fracs = decay ** jnp.arange(max_backtracks, dtype=jnp.result_type(float))
    steps = jax.tree_util.tree_map(
        lambda s: fracs.reshape((-1,) + (1,) * jnp.ndim(s)).astype(jnp.result_type(s)) * s, full_step
    )
    metrics = jax.vmap(evaluate)(steps)
    ok = jax.vmap(accept)(metrics).astype(bool)
    accepted = jnp.any(ok)
    first = jnp.argmax(ok).astype(jnp.int32)  # argmax returns the first True
    index = jnp.where(accepted, first, jnp.int32(max_backtracks))
    chosen = jax.tree_util.tree_map(lambda s: jnp.where(accepted, s[first], jnp.zeros_like(s[first])), steps)
    pick = jnp.where(accepted, first, max_backtracks - 1)
    return LineSearchResult(chosen, index, accepted), jax.tree_util.tree_map(lambda m: m[pick], metrics)


def _first_accepted(evaluate, full_step, accept, decay, max_backtracks):
    """The sequential search: ``(result, metrics of the last candidate evaluated)``: the chosen one, or the
    smallest if none."""
    dtype = jnp.result_type(float)
    metrics_shape = jax.eval_shape(evaluate, full_step)
    zero_metrics = jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), metrics_shape)

    def cond(state):
        j, done, _ = state
        return (~done) & (j < max_backtracks)

    def body(state):
        j, _, _ = state
        frac = jnp.asarray(decay, dtype) ** j
        m = evaluate(_scale(full_step, frac))
        ok = jnp.asarray(accept(m)).astype(bool)
        return jnp.where(ok, j, j + 1), ok, m

    j, accepted, metrics = jax.lax.while_loop(cond, body, (jnp.int32(0), jnp.asarray(False), zero_metrics))
    frac = jnp.where(accepted, jnp.asarray(decay, dtype) ** j, 0.0)
    chosen = jax.tree_util.tree_map(lambda s: (frac * s).astype(jnp.result_type(s)), full_step)
    return LineSearchResult(chosen, j, accepted), metrics


# --------------------------------------------------------------------------- distributions


def diag_gaussian_kl(mean_p, log_std_p, mean_q, log_std_q) -> jax.Array:
    """``KL(N(mean_p, diag sigma_p^2) || N(mean_q, diag sigma_q^2))`` summed over the last axis.

        KL = sum_i [ log sigma_q,i - log sigma_p,i
                     + (sigma_p,i^2 + (mu_p,i - mu_q,i)^2) / (2 sigma_q,i^2) - 1/2 ]

    ``log_std`` may be state-independent (shape ``(act_dim,)``); it broadcasts.
    """
    log_std_p = jnp.broadcast_to(log_std_p, jnp.shape(mean_p))
    log_std_q = jnp.broadcast_to(log_std_q, jnp.shape(mean_q))
    var_ratio = jnp.exp(2.0 * (log_std_p - log_std_q))
    maha = jnp.square((mean_p - mean_q) * jnp.exp(-log_std_q))
    return jnp.sum(log_std_q - log_std_p + 0.5 * (var_ratio + maha) - 0.5, axis=-1)


def categorical_kl(logits_p, logits_q) -> jax.Array:
    """``KL(Cat(softmax logits_p) || Cat(softmax logits_q)) = sum_a p_a (log p_a - log q_a)`` over the last axis."""
    logp = jax.nn.log_softmax(logits_p, axis=-1)
    logq = jax.nn.log_softmax(logits_q, axis=-1)
    return jnp.sum(jnp.exp(logp) * (logp - logq), axis=-1)


def diag_gaussian_fisher(mean, log_std) -> jax.Array:
    """Fisher information of a diagonal Gaussian w.r.t. its parameters ``(mean, log_std)``.

    For one state the parameter vector is ``[mu_1..mu_d, log sigma_1..log sigma_d]``
    and ``F = diag(1/sigma_1^2, ..., 1/sigma_d^2, 2, ..., 2)``.  Returns an
    array of shape ``batch + (2d, 2d)``.
    """
    log_std = jnp.broadcast_to(log_std, jnp.shape(mean))
    diag = jnp.concatenate([jnp.exp(-2.0 * log_std), 2.0 * jnp.ones_like(log_std)], axis=-1)
    return diag[..., :, None] * jnp.eye(diag.shape[-1], dtype=diag.dtype)


def categorical_fisher(logits) -> jax.Array:
    """Fisher information of a categorical w.r.t. its logits: ``F = diag(p) - p p^T`` (rank ``K - 1``)."""
    p = jax.nn.softmax(logits, axis=-1)
    return p[..., :, None] * jnp.eye(p.shape[-1], dtype=p.dtype) - p[..., :, None] * p[..., None, :]
