"""Evaluation metrics of the safe-RL papers saferl reproduces (numpy, pure functions).

Canary (Cantelli-bounded VaR CPO), Table 1 and Figs. 3-5:

* ``violation_probability``: empirical ``P(C(tau) >= rho)`` over episodes;
* ``breach_rate`` (``P_hat``): per-seed mean violation probability over the second half of
  training; ``worst_seed_breach`` (``P_hat_max``): its maximum over seeds;
* ``t_safe``: % of training before the violation probability is permanently ``<= eps``;
* ``mean_and_se``: mean +- standard error over seeds ("the seed, not the episode, is the
  unit of replication").

C-TRPO (constrained trust regions), eq. 2 and Fig. 3:

* ``cost_regret``: ``sum_i sum_k [V_{c_i}^{pi_k} - b_i]_+``;
* ``iqm`` and ``stratified_bootstrap_ci``: the interquartile mean and its stratified
  bootstrap confidence interval of Agarwal et al. (2021), "Deep RL at the edge of the
  statistical precipice" (rliable);
* ``normalized_cost`` / ``normalized_score``: the Fig. 3 normalisations.

Array conventions: a leading ``seeds`` axis, then ``iters`` (training iterations), then
``episodes`` where it applies.  ``NaN`` marks a missing value (an iteration in which no
episode finished), never a zero.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

__all__ = [
    "BootstrapCI",
    "breach_rate",
    "cost_regret",
    "iqm",
    "mean_and_se",
    "normalized_cost",
    "normalized_score",
    "stratified_bootstrap_ci",
    "stratified_bootstrap_samples",
    "t_safe",
    "violation_probability",
    "worst_seed_breach",
]


# --------------------------------------------------------------------------- helpers


def _as_float(x, name: str) -> np.ndarray:
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be a numeric array: {err}") from None


def _check_probabilities(p: np.ndarray, name: str) -> None:
    finite = p[~np.isnan(p)]
    if np.any((finite < 0.0) | (finite > 1.0)):
        raise ValueError(f"{name} must be probabilities in [0, 1] (NaN for missing); got values outside")


def _check_epsilon(epsilon: float) -> float:
    epsilon = float(epsilon)
    if not 0.0 < epsilon < 1.0:
        raise ValueError(f"epsilon must lie in the open interval (0, 1), got {epsilon}")
    return epsilon


def _per_seed(p, name: str) -> tuple[np.ndarray, bool]:
    """``(iters,)`` or ``(seeds, iters)`` -> ``(seeds, iters)`` and whether it was 1-d."""
    p = _as_float(p, name)
    if p.ndim not in (1, 2):
        raise ValueError(f"{name} must have shape (iters,) or (seeds, iters), got {p.shape}")
    if p.shape[-1] == 0:
        raise ValueError(f"{name} has no iterations")
    _check_probabilities(p, name)
    return np.atleast_2d(p), p.ndim == 1


# --------------------------------------------------------------------------- C-TRPO


def cost_regret(expected_costs, limits, *, cumulative: bool = False):
    """Cost regret, C-TRPO eq. 2: ``CostReg_+ = sum_{i} sum_{k=0}^{K-1} [V_{c_i}^{pi_k} - b_i]_+``.

    Args:
      expected_costs: ``V_{c_i}^{pi_k}``, the expected cost return of the policy of each
        training iteration: shape ``(K,)`` (one constraint) or ``(K, m)``.
      limits: the thresholds ``b_i``: a scalar or shape ``(m,)``.
      cumulative: return the running regret after each iteration, shape ``(K,)``, instead
        of the total (the last entry equals the total).

    Only violations count (``[x]_+ = max(0, x)``): slack below the threshold does not offset
    a violation at another iteration or in another constraint.
    """
    v = _as_float(expected_costs, "expected_costs")
    b = _as_float(limits, "limits")
    if v.ndim not in (1, 2) or v.shape[0] == 0:
        raise ValueError(f"expected_costs must have shape (K,) or (K, m) with K >= 1, got {v.shape}")
    if v.ndim == 1:
        v = v[:, None]
    if b.ndim > 1 or (b.ndim == 1 and b.shape[0] != v.shape[1]):
        raise ValueError(f"limits must be a scalar or have shape ({v.shape[1]},), got {b.shape}")
    if np.any(np.isnan(v)) or np.any(np.isnan(b)):
        raise ValueError("expected_costs and limits must not contain NaN")
    per_iter = np.maximum(v - b, 0.0).sum(axis=1)  # sum over constraints i
    return np.cumsum(per_iter) if cumulative else float(per_iter.sum())


def normalized_cost(costs, limits):
    """Threshold-normalised cost centred at zero, C-TRPO Fig. 3: ``(V_c - b) / b``.

    Negative means below the threshold ("probably safe"), ``0`` on it, ``1`` at twice it.
    ``limits`` broadcasts against ``costs`` (e.g. ``(tasks,)`` against ``(runs, tasks)``)
    and must be non-zero.
    """
    c = _as_float(costs, "costs")
    b = _as_float(limits, "limits")
    if np.any(b == 0):
        raise ValueError("limits must be non-zero to normalise by them")
    return (c - b) / b


def normalized_score(scores, reference, baseline=0.0):
    """``(x - baseline) / (reference - baseline)``, broadcasting per task.

    C-TRPO Fig. 3 normalises the reward return by unconstrained PPO's (``reference`` = PPO's
    return per task, ``baseline = 0``: a plain ratio) and the cost regret by CPO's
    (``reference`` = CPO's regret per task).  With ``baseline`` a random policy's score this
    is the usual Atari-style normalisation of Agarwal et al. (2021).
    """
    x = _as_float(scores, "scores")
    ref = _as_float(reference, "reference")
    base = _as_float(baseline, "baseline")
    denom = ref - base
    if np.any(denom == 0):
        raise ValueError("reference must differ from baseline for every task")
    return (x - base) / denom


# --------------------------------------------------------------------------- Canary


def violation_probability(cost_returns, rho):
    """Empirical VaR violation probability ``P_hat(C(tau) >= rho)`` over episodes.

    Canary's VaR constraint is ``P(C(tau) >= rho) <= eps`` (the definition after its
    eq. 14); the figures' captions write ``P(C(tau) > rho)``.  We follow the definition: an
    episode whose cost return *equals* ``rho`` counts as a violation.

    Args:
      cost_returns: episode cost returns, shape ``(..., episodes)``; the last axis is
        reduced.  ``NaN`` entries are missing episodes (padding) and are ignored.
      rho: the cost-return threshold (a scalar, or broadcastable to ``cost_returns[..., 0]``).

    Returns:
      The fraction of (non-NaN) episodes with ``C >= rho``, shape ``cost_returns.shape[:-1]``
      (a float for 1-d input); ``NaN`` where there is no episode.
    """
    c = _as_float(cost_returns, "cost_returns")
    if c.ndim == 0:
        raise ValueError("cost_returns must have an episodes axis (the last one)")
    r = _as_float(rho, "rho")
    if np.any(np.isnan(r)):
        raise ValueError("rho must not be NaN")
    r = r[..., None] if r.ndim else r
    valid = ~np.isnan(c)
    hits = np.where(valid, c >= r, False).sum(axis=-1)
    count = valid.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(count > 0, hits / np.maximum(count, 1), np.nan)
    return float(p) if p.ndim == 0 else p


def breach_rate(violation_prob_per_iter, weights=None):
    """Converged per-seed breach rate ``P_hat``, Canary Table 1.

    The mean of the per-iteration violation probability over the second half of training:
    iterations ``k >= K // 2`` of ``K`` (for odd ``K`` the middle iteration is included).

    Args:
      violation_prob_per_iter: shape ``(seeds, iters)`` or ``(iters,)``; ``NaN`` marks an
        iteration without a finished episode, which is left out.
      weights: optional non-negative weights of the same shape, normally the number of
        episodes behind each iteration's probability; the weighted mean is then the pooled
        fraction of violating episodes over the second half.

    Returns:
      ``(seeds,)`` (a float for 1-d input); ``NaN`` for a seed with no data in the second half.
    """
    p, one_d = _per_seed(violation_prob_per_iter, "violation_prob_per_iter")
    if weights is None:
        w = np.ones_like(p)
    else:
        w = np.atleast_2d(_as_float(weights, "weights"))
        if w.shape != p.shape:
            raise ValueError(f"weights must have the shape of violation_prob_per_iter {p.shape}, got {w.shape}")
        if np.any(np.isnan(w)) or np.any(w < 0):
            raise ValueError("weights must be non-negative and not NaN")
    half = p.shape[1] // 2
    p, w = p[:, half:], w[:, half:]
    w = np.where(np.isnan(p), 0.0, w)
    total = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(total > 0, (w * np.nan_to_num(p)).sum(axis=1) / np.where(total > 0, total, 1.0), np.nan)
    return float(out[0]) if one_d else out


def worst_seed_breach(violation_prob_per_iter, weights=None) -> float:
    """Worst-seed breach ``P_hat_max = max_s P_hat^(s)``, Canary Table 1.

    ``violation_prob_per_iter`` has shape ``(seeds, iters)``; seeds without data (NaN
    ``P_hat``) are ignored.  See ``breach_rate`` for ``weights``.
    """
    p = _as_float(violation_prob_per_iter, "violation_prob_per_iter")
    if p.ndim != 2:
        raise ValueError(f"violation_prob_per_iter must have shape (seeds, iters), got {p.shape}")
    per_seed = breach_rate(p, weights)
    if np.all(np.isnan(per_seed)):
        return float("nan")
    return float(np.nanmax(per_seed))


def _forward_fill(p: np.ndarray) -> np.ndarray:
    """Replace each NaN by the last non-NaN value before it along the last axis (leading NaN stay)."""
    idx = np.where(np.isnan(p), 0, np.arange(p.shape[-1]))
    idx = np.maximum.accumulate(idx, axis=-1)
    filled = np.take_along_axis(p, idx, axis=-1)
    # positions before the first observation took index 0, which may itself be NaN: keep NaN there
    seen = np.maximum.accumulate(~np.isnan(p), axis=-1)
    return np.where(seen, filled, np.nan)


def t_safe(violation_prob_per_iter, epsilon):
    """Time to permanent safety ``t_safe``, Canary Table 1, in % of training.

    "% of training before the empirical violation probability is permanently <= eps": with
    per-iteration probabilities ``p_0 .. p_{K-1}``, let ``k*`` be the smallest ``k`` with
    ``p_j <= eps`` for every ``j >= k``; ``t_safe = 100 * k* / K``.  So ``0`` if the seed is
    always safe, ``100`` if it is unsafe at the last iteration (never settles), and any
    relapse above ``eps`` moves ``t_safe`` past that relapse.  Training progress is
    measured in iterations (equal environment steps per iteration).

    ``NaN`` iterations (no finished episode) carry the last observed value forward; NaN
    before the first observation count as not (yet) safe.  A seed with no observation at
    all gives ``NaN``.

    Args:
      violation_prob_per_iter: shape ``(seeds, iters)`` or ``(iters,)``.
      epsilon: the violation threshold, in ``(0, 1)``.

    Returns:
      ``(seeds,)`` percentages (a float for 1-d input).
    """
    epsilon = _check_epsilon(epsilon)
    p, one_d = _per_seed(violation_prob_per_iter, "violation_prob_per_iter")
    filled = _forward_fill(p)
    unsafe = ~(filled <= epsilon)  # NaN (nothing observed yet) counts as unsafe
    n_iters = p.shape[1]
    # k* = 1 + index of the last unsafe iteration (0 when none is unsafe)
    last_unsafe = np.where(unsafe.any(axis=1), n_iters - 1 - np.argmax(unsafe[:, ::-1], axis=1), -1)
    out = 100.0 * (last_unsafe + 1) / n_iters
    out = np.where(np.isnan(p).all(axis=1), np.nan, out)
    return float(out[0]) if one_d else out


def mean_and_se(x, axis=0, ddof: int = 1):
    """Mean and standard error over seeds, Canary Table 1: ``SE = std / sqrt(n)``.

    ``std`` is the sample standard deviation with ``ddof = 1`` (Bessel's correction) by
    default; ``n`` is the number of seeds along ``axis``.  ``NaN`` entries (seeds without
    data) are left out of both, and ``SE`` is ``NaN`` when fewer than ``ddof + 1`` remain.

    Returns ``(mean, se)``: floats for 1-d input, else arrays without ``axis``.
    """
    x = _as_float(x, "x")
    if x.ndim == 0 or x.shape[axis] == 0:
        raise ValueError(f"x needs a non-empty axis {axis}, got shape {x.shape}")
    n = (~np.isnan(x)).sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.nansum(x, axis=axis) / np.where(n > 0, n, 1)
        mean = np.where(n > 0, mean, np.nan)
        dev = np.where(np.isnan(x), 0.0, x - np.expand_dims(mean, axis))
        var = (dev**2).sum(axis=axis) / np.where(n > ddof, n - ddof, 1)
        se = np.where(n > ddof, np.sqrt(var) / np.sqrt(np.maximum(n, 1)), np.nan)
    if np.ndim(mean) == 0:
        return float(mean), float(se)
    return mean, se


# --------------------------------------------------------------------------- rliable-style aggregates


def iqm(x) -> float:
    """Interquartile mean (Agarwal et al., 2021): the mean of the middle 50% of all scores.

    All runs of all tasks are pooled (flattened), sorted, ``floor(0.25 * n)`` scores are cut
    from each end, and the rest averaged: ``scipy.stats.trim_mean(x, 0.25, axis=None)``, which
    rliable's ``aggregate_iqm`` uses on a ``(runs, tasks)`` matrix (the same scores averaged; the
    sum's order, and so its last bit, may differ: tests/analysis/test_metrics_rliable.py).
    """
    flat = _as_float(x, "x").reshape(-1)
    if flat.size == 0:
        raise ValueError("iqm of an empty array")
    if np.any(np.isnan(flat)):
        raise ValueError("iqm of an array containing NaN")
    cut = int(0.25 * flat.size)
    return float(np.sort(flat)[cut : flat.size - cut].mean())


def _iqm_batched(samples: np.ndarray) -> np.ndarray:
    """IQM of each ``samples[r]`` (each flattened); vectorised form of ``iqm``."""
    flat = np.sort(samples.reshape(samples.shape[0], -1), axis=1)
    cut = int(0.25 * flat.shape[1])
    return flat[:, cut : flat.shape[1] - cut].mean(axis=1)


class BootstrapCI(NamedTuple):
    estimate: float  # the statistic on the observed scores
    lower: float
    upper: float


def _scores_matrix(scores) -> np.ndarray:
    s = _as_float(scores, "scores")
    if s.ndim == 1:
        s = s[:, None]
    if s.ndim != 2 or s.shape[0] == 0 or s.shape[1] == 0:
        raise ValueError(f"scores must have shape (runs, tasks) or (runs,), got {np.shape(scores)}")
    if np.any(np.isnan(s)):
        raise ValueError("scores must not contain NaN")
    return s


def stratified_bootstrap_samples(scores, reps: int = 2000, seed: int = 0) -> np.ndarray:
    """Stratified bootstrap resamples of a ``(runs, tasks)`` score matrix, shape ``(reps, runs, tasks)``.

    Each resample draws, independently for every task, ``runs`` runs of *that task* with
    replacement (Agarwal et al., 2021, Sec. 4: "stratified bootstrap", resampling runs
    within tasks), so every resample keeps the per-task run count and never mixes tasks.
    """
    s = _scores_matrix(scores)
    if reps < 1:
        raise ValueError(f"reps must be >= 1, got {reps}")
    n_runs, n_tasks = s.shape
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n_runs, size=(reps, n_runs, n_tasks))
    return s[idx, np.arange(n_tasks)[None, None, :]]


def stratified_bootstrap_ci(
    scores,
    statistic: Callable[[np.ndarray], float] = iqm,
    reps: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapCI:
    """Point estimate and stratified-bootstrap percentile interval (Agarwal et al., 2021).

    Args:
      scores: ``(runs, tasks)`` matrix (a 1-d array is one task).
      statistic: maps a ``(runs, tasks)`` matrix to a scalar; default ``iqm``.
      reps: number of bootstrap resamples (rliable's default is 2000 for point estimates).
      confidence: coverage of the interval, in ``(0, 1)``.
      seed: seed of numpy's ``default_rng`` for the resampling.

    Returns:
      ``BootstrapCI(estimate, lower, upper)``: ``statistic(scores)`` and the
      ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` percentiles of the statistic over
      the resamples (the percentile bootstrap).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    s = _scores_matrix(scores)
    samples = stratified_bootstrap_samples(s, reps=reps, seed=seed)
    if statistic is iqm:
        stats = _iqm_batched(samples)
    else:
        stats = np.array([float(statistic(sample)) for sample in samples])
    alpha = 100.0 * (1.0 - confidence) / 2.0
    lower, upper = np.percentile(stats, [alpha, 100.0 - alpha])
    return BootstrapCI(float(statistic(s)), float(lower), float(upper))
