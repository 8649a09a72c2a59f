"""``saferl.analysis.metrics``' IQM and stratified bootstrap against rliable (Agarwal et al., 2021), the reference.

What should agree, and does:

* the point estimates: ``iqm`` is rliable's ``aggregate_iqm`` (``scipy.stats.trim_mean(x, 0.25,
  axis=None)``: ``floor(n / 4)`` scores cut from each end of all runs of all tasks pooled).  On
  integer-valued scores every sum is exact, so the two are bit-for-bit equal; on real-valued scores
  they differ only by the order of summation (scipy averages a partitioned array, saferl a sorted one),
  which a bound of the rounding error of a sum covers;
* the intervals: ``stratified_bootstrap_ci`` is rliable's ``get_interval_estimates`` with its defaults
  (``method="percentile"``, ``task_bootstrap=False``: runs resampled with replacement within each task).
  Both are Monte-Carlo estimates of the same percentiles of the same bootstrap distribution, so they
  differ by Monte-Carlo error only.  The tolerance is that error itself, measured: saferl's interval
  is computed with K independent seeds, and rliable's bound must lie within a Student-t quantile (family
  error 1e-3 over every bound compared, Bonferroni) of their mean, in units of their standard deviation
  times sqrt(1 + 1/K) (the spread of one estimate from rliable plus that of the mean of K from saferl).
  That this tolerance is tight enough to see a real difference is checked too: an unstratified
  bootstrap (runs resampled from all tasks pooled) lies hundreds of such units away.

rliable draws its resamples from numpy's global random state (``np.random.choice``), whatever its
``random_state`` argument; the tests seed that state and restore it afterwards.
"""

import numpy as np
import pytest
import rliable.library as rliable_library  # the reference (test extra)
import rliable.metrics as rliable_metrics
from scipy import stats

from saferl.analysis import metrics

REPS = 10_000  # per interval, on both sides
K = 16  # saferl's independent repeats: its Monte-Carlo spread
CONFIDENCE = 0.95


def _matrices():
    """(name, scores) pairs: task effects much larger than the run-to-run spread, a heavy tail, an odd
    number of scores (floor(n / 4) trimming), a single task."""
    rng = np.random.default_rng(2021)
    return [
        ("10x5 tasks apart", rng.normal(size=(10, 5)) + 3.0 * np.arange(5)),
        ("7x3 heavy tail", rng.standard_t(df=2, size=(7, 3)) * np.array([1.0, 10.0, 0.1])),
        ("13x1 one task", rng.exponential(size=(13, 1))),
    ]


STATISTICS = [("iqm", metrics.iqm, rliable_metrics.aggregate_iqm), ("mean", np.mean, rliable_metrics.aggregate_mean)]
COMPARED = len(_matrices()) * len(STATISTICS) * 2  # lower and upper bounds
FAMILY_ERROR = 1e-3
T_LIMIT = stats.t.ppf(1.0 - FAMILY_ERROR / (2 * COMPARED), df=K - 1)


def _rliable_interval(scores, aggregate, seed):
    state = np.random.get_state()
    try:
        np.random.seed(seed)
        point, interval = rliable_library.get_interval_estimates(
            {"x": scores}, lambda x: np.array([aggregate(x)]), reps=REPS, confidence_interval_size=CONFIDENCE
        )
    finally:
        np.random.set_state(state)
    return float(point["x"][0]), interval["x"][:, 0]


def _ours(scores, statistic):
    """K intervals from independent seeds: (point estimate, (K, 2) bounds)."""
    results = [
        metrics.stratified_bootstrap_ci(scores, statistic=statistic, reps=REPS, confidence=CONFIDENCE, seed=1000 + k)
        for k in range(K)
    ]
    return results[0].estimate, np.array([[r.lower, r.upper] for r in results])


def _t_units(value, repeats):
    """(value - mean of repeats) in units of the standard deviation of that difference."""
    return (value - repeats.mean(axis=0)) / (repeats.std(axis=0, ddof=1) * np.sqrt(1.0 + 1.0 / K))


def _summation_bound(scores) -> float:
    """How far two ways of averaging (some of) the n scores may round apart: each mean of m <= n terms is
    within (m - 1) eps max|x| of the exact one (a mean of task means too), so the two within 2 n eps max|x|."""
    flat = np.abs(np.asarray(scores, float).ravel())
    return 2.0 * flat.size * np.finfo(float).eps * flat.max()


@pytest.mark.parametrize("runs", range(1, 13))
@pytest.mark.parametrize("tasks", [1, 2, 3, 5])
def test_iqm_equals_rliable_bit_for_bit_on_integer_scores(runs, tasks):
    rng = np.random.default_rng(runs * 100 + tasks)
    scores = rng.integers(-1000, 1000, size=(runs, tasks)).astype(float)
    assert metrics.iqm(scores) == float(rliable_metrics.aggregate_iqm(scores))


def test_iqm_equals_rliable_up_to_summation_order():
    rng = np.random.default_rng(7)
    for _ in range(300):
        scores = rng.normal(size=(rng.integers(1, 15), rng.integers(1, 7))) * rng.exponential(100.0)
        ours, theirs = metrics.iqm(scores), float(rliable_metrics.aggregate_iqm(scores))
        assert abs(ours - theirs) <= _summation_bound(scores), (scores.shape, ours, theirs)


@pytest.mark.parametrize("name, scores", _matrices(), ids=[m[0] for m in _matrices()])
@pytest.mark.parametrize("statistic_name, statistic, aggregate", STATISTICS, ids=[s[0] for s in STATISTICS])
def test_stratified_bootstrap_interval_agrees_with_rliable(name, scores, statistic_name, statistic, aggregate):
    point, repeats = _ours(scores, statistic)
    their_point, their_bounds = _rliable_interval(scores, aggregate, seed=sum(map(ord, name + statistic_name)))
    assert abs(point - their_point) <= _summation_bound(scores)
    units = _t_units(their_bounds, repeats)
    assert np.all(np.abs(units) <= T_LIMIT), (units, T_LIMIT, their_bounds, repeats.mean(axis=0))


def test_the_tolerance_sees_an_unstratified_bootstrap():
    """Resampling runs from all tasks pooled (what stratification avoids) is far outside the tolerance."""
    name, scores = _matrices()[0]
    _, repeats = _ours(scores, metrics.iqm)
    flat = scores.ravel()
    rng = np.random.default_rng(3)
    pooled = np.array([metrics.iqm(flat[rng.integers(0, flat.size, flat.size)]) for _ in range(REPS)])
    alpha = 100.0 * (1.0 - CONFIDENCE) / 2.0
    bounds = np.percentile(pooled, [alpha, 100.0 - alpha])
    assert np.all(np.abs(_t_units(bounds, repeats)) > 10 * T_LIMIT)
