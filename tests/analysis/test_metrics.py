"""saferl.analysis.metrics against hand-computed examples (derivations in the comments)."""

import numpy as np
import pytest
import scipy.stats

from saferl.analysis import metrics as M

# --------------------------------------------------------------------------- cost regret (C-TRPO eq. 2)


def test_cost_regret_single_constraint():
    # V_c = [1, 3, 2, 5], b = 2 -> [V_c - b]_+ = [0, 1, 0, 3] -> sum 4 (slack at k=0, 2 does not offset)
    assert M.cost_regret([1.0, 3.0, 2.0, 5.0], 2.0) == pytest.approx(4.0)
    np.testing.assert_allclose(M.cost_regret([1.0, 3.0, 2.0, 5.0], 2.0, cumulative=True), [0, 1, 1, 4])


def test_cost_regret_several_constraints():
    # V = [[1, 10], [4, 8], [3, 12]], b = [2, 9]
    # k=0: [0, 1] -> 1;  k=1: [2, 0] -> 2;  k=2: [1, 3] -> 4;  total 7
    v = [[1.0, 10.0], [4.0, 8.0], [3.0, 12.0]]
    assert M.cost_regret(v, [2.0, 9.0]) == pytest.approx(7.0)
    np.testing.assert_allclose(M.cost_regret(v, [2.0, 9.0], cumulative=True), [1, 3, 7])
    # a scalar limit applies to every constraint: b = 5 -> k=0: [0, 5]; k=1: [0, 3]; k=2: [0, 7] -> 15
    assert M.cost_regret(v, 5.0) == pytest.approx(15.0)
    with pytest.raises(ValueError, match="limits"):
        M.cost_regret(v, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="expected_costs"):
        M.cost_regret(np.zeros((2, 2, 2)), 1.0)


# --------------------------------------------------------------------------- Canary Table 1


def test_violation_probability_counts_ties():
    # C = [0, 5, 10, 15, 20], rho = 15: C >= 15 for {15, 20} -> 2/5 (">" would give 1/5)
    assert M.violation_probability([0.0, 5.0, 10.0, 15.0, 20.0], 15.0) == pytest.approx(0.4)
    # per iteration, NaN = no episode: [0, 15, NaN] -> 1/2; all NaN -> NaN
    p = M.violation_probability([[0.0, 15.0, np.nan], [np.nan] * 3, [20.0, 30.0, 1.0]], 15.0)
    np.testing.assert_allclose(p, [0.5, np.nan, 2 / 3])


def test_breach_rate_second_half():
    # K = 4 -> iterations 2, 3: seed 0 (0.1 + 0.3) / 2 = 0.2; seed 1 (0 + 0) / 2 = 0
    p = np.array([[0.9, 0.5, 0.1, 0.3], [0.2, 0.2, 0.0, 0.0]])
    np.testing.assert_allclose(M.breach_rate(p), [0.2, 0.0])
    assert M.worst_seed_breach(p) == pytest.approx(0.2)
    # odd K = 5 -> iterations 2, 3, 4 (K // 2 = 2): (0.3 + 0.1 + 0.2) / 3 = 0.2
    assert M.breach_rate([1.0, 1.0, 0.3, 0.1, 0.2]) == pytest.approx(0.2)
    # a NaN iteration is left out: (0.4) / 1
    assert M.breach_rate([0.9, 0.9, np.nan, 0.4]) == pytest.approx(0.4)
    # episode-count weights pool the episodes: (2 * 0.5 + 8 * 0.0) / 10 = 0.1 (unweighted: 0.25)
    assert M.breach_rate([0.9, 0.9, 0.5, 0.0], weights=[1, 1, 2, 8]) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="probabilities"):
        M.breach_rate([0.5, 1.5])
    with pytest.raises(ValueError, match="weights"):
        M.breach_rate([0.5, 0.5], weights=[1.0])


def test_worst_seed_breach_needs_seeds():
    with pytest.raises(ValueError, match="seeds"):
        M.worst_seed_breach([0.1, 0.2])


EPS = 0.05


def test_t_safe_cases():
    assert M.t_safe([0.5] * 10, EPS) == 100.0  # never safe
    assert M.t_safe([0.01] * 10, EPS) == 0.0  # always safe
    assert M.t_safe([0.5] * 5 + [0.01] * 5, EPS) == 50.0  # safe from iteration 5 of 10
    assert M.t_safe([0.0] * 9 + [0.1], EPS) == 100.0  # unsafe at the end: never settled
    # late relapse at iteration 7 of 10: k* = 8 -> 80 (it would be 20 without the relapse)
    relapse = [0.5, 0.5] + [0.0] * 5 + [0.2] + [0.0] * 2
    assert M.t_safe(relapse, EPS) == 80.0
    assert M.t_safe([0.5, 0.5] + [0.0] * 8, EPS) == 20.0
    # "<= eps" is safe: p = eps from iteration 1 of 4 -> 25
    assert M.t_safe([0.5, EPS, EPS, EPS], EPS) == 25.0
    # per seed
    np.testing.assert_allclose(M.t_safe([[0.5] * 4, [0.0] * 4, [0.5, 0.5, 0.0, 0.0]], EPS), [100, 0, 50])


def test_t_safe_nan_carries_last_value():
    # [0.5, 0, NaN, NaN] -> [0.5, 0, 0, 0] -> safe from 1 of 4 -> 25
    assert M.t_safe([0.5, 0.0, np.nan, np.nan], EPS) == 25.0
    # [0, 0.5, NaN, NaN] -> [0, 0.5, 0.5, 0.5] -> never settles -> 100
    assert M.t_safe([0.0, 0.5, np.nan, np.nan], EPS) == 100.0
    # leading NaN (nothing observed yet) count as not safe: safe from 2 of 4 -> 50
    assert M.t_safe([np.nan, np.nan, 0.0, 0.0], EPS) == 50.0
    # no observation at all -> NaN
    assert np.isnan(M.t_safe([np.nan] * 3, EPS))


def test_t_safe_validates_epsilon():
    for bad in (0.0, 1.0, -0.1, 2.0):
        with pytest.raises(ValueError, match="epsilon"):
            M.t_safe([0.1, 0.2], bad)
    with pytest.raises(ValueError, match="shape"):
        M.t_safe(np.zeros((2, 2, 2)), 0.1)


def test_mean_and_se():
    # x = 1..5: mean 3; sum of squared deviations 4+1+0+1+4 = 10
    # ddof=1: var = 10/4 = 2.5, se = sqrt(2.5)/sqrt(5) = sqrt(0.5) = 0.70711
    mean, se = M.mean_and_se([1.0, 2.0, 3.0, 4.0, 5.0])
    assert mean == pytest.approx(3.0) and se == pytest.approx(np.sqrt(0.5))
    # ddof=0: var = 10/5 = 2, se = sqrt(2)/sqrt(5) = 0.63246
    assert M.mean_and_se([1.0, 2.0, 3.0, 4.0, 5.0], ddof=0)[1] == pytest.approx(np.sqrt(0.4))
    # NaN seeds are left out: [1, 3, NaN] -> mean 2, var (1 + 1)/1 = 2, se = sqrt(2)/sqrt(2) = 1
    assert M.mean_and_se([1.0, 3.0, np.nan]) == pytest.approx((2.0, 1.0))
    # one seed: the mean, SE undefined
    mean, se = M.mean_and_se([4.0])
    assert mean == 4.0 and np.isnan(se)
    # columns: (seeds, metrics)
    mean, se = M.mean_and_se([[1.0, 10.0], [3.0, 10.0]])
    np.testing.assert_allclose(mean, [2.0, 10.0])
    np.testing.assert_allclose(se, [1.0, 0.0])


# --------------------------------------------------------------------------- IQM and the stratified bootstrap


def test_iqm_hand_examples():
    # n = 8: cut floor(0.25 * 8) = 2 from each end -> mean(3, 4, 5, 6) = 4.5
    assert M.iqm([8, 1, 7, 2, 6, 3, 5, 4]) == pytest.approx(4.5)
    assert M.iqm([1, 2, 3, 4, 5, 6, 7, 1000]) == pytest.approx(4.5)  # robust to the outlier
    # n = 10: cut floor(2.5) = 2 -> mean(2..7) = 4.5
    assert M.iqm(np.arange(10)) == pytest.approx(4.5)
    # n = 3: cut 0 -> plain mean
    assert M.iqm([0.0, 1.0, 5.0]) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        M.iqm([])
    with pytest.raises(ValueError, match="NaN"):
        M.iqm([1.0, np.nan])


@pytest.mark.parametrize("shape", [(5, 3), (10, 8), (7,), (4, 1), (13, 5)])
def test_iqm_matches_scipy_trim_mean(shape):
    x = np.random.default_rng(0).standard_normal(shape) ** 3
    assert M.iqm(x) == pytest.approx(scipy.stats.trim_mean(x, 0.25, axis=None), rel=1e-12)


def test_bootstrap_ci_contains_estimate_and_shrinks():
    rng = np.random.default_rng(1)
    small = rng.standard_normal((10, 4)) + np.arange(4)
    large = rng.standard_normal((200, 4)) + np.arange(4)
    ci_small = M.stratified_bootstrap_ci(small, reps=1000)
    ci_large = M.stratified_bootstrap_ci(large, reps=1000)
    for ci, scores in ((ci_small, small), (ci_large, large)):
        assert ci.estimate == pytest.approx(M.iqm(scores))
        assert ci.lower <= ci.estimate <= ci.upper
    # the width scales like 1/sqrt(runs): 200 vs 10 runs -> about sqrt(20) ~ 4.5 times narrower
    assert (ci_large.upper - ci_large.lower) < 0.5 * (ci_small.upper - ci_small.lower)
    # reproducible, and a higher confidence gives a wider interval
    assert M.stratified_bootstrap_ci(small, reps=1000) == ci_small
    ci99 = M.stratified_bootstrap_ci(small, reps=1000, confidence=0.99)
    assert ci99.lower <= ci_small.lower and ci99.upper >= ci_small.upper


def test_bootstrap_hand_example():
    # one task, runs [0, 1], statistic mean: resample means are 0 (1/4), 0.5 (1/2), 1 (1/4),
    # so the 2.5% and 97.5% percentiles of 2000 resamples are 0 and 1
    ci = M.stratified_bootstrap_ci([0.0, 1.0], statistic=np.mean, reps=2000)
    assert ci == (0.5, 0.0, 1.0)
    # constant scores -> a degenerate interval at the constant
    assert M.stratified_bootstrap_ci(np.full((6, 2), 3.0)) == (3.0, 3.0, 3.0)


def test_bootstrap_is_stratified():
    # task j's runs are 100 * j + run, so every value names its task
    runs, tasks = 6, 3
    scores = 100.0 * np.arange(tasks)[None, :] + np.arange(runs)[:, None]
    samples = M.stratified_bootstrap_samples(scores, reps=500, seed=3)
    assert samples.shape == (500, runs, tasks)
    for j in range(tasks):
        # each resample has exactly `runs` draws of task j in column j, none from another task
        assert np.isin(samples[:, :, j], scores[:, j]).all()
    # runs are drawn with replacement: some resample repeats a run
    assert any(len(np.unique(s[:, 0])) < runs for s in samples)


def test_bootstrap_fast_iqm_matches_generic_statistic():
    scores = np.random.default_rng(2).standard_normal((9, 5))
    fast = M.stratified_bootstrap_ci(scores, reps=300, seed=4)
    slow = M.stratified_bootstrap_ci(scores, statistic=lambda x: M.iqm(x), reps=300, seed=4)
    assert fast == pytest.approx(slow)


def test_bootstrap_validation():
    with pytest.raises(ValueError, match="confidence"):
        M.stratified_bootstrap_ci(np.ones((3, 2)), confidence=1.0)
    with pytest.raises(ValueError, match="scores"):
        M.stratified_bootstrap_ci(np.ones((3, 2, 2)))
    with pytest.raises(ValueError, match="NaN"):
        M.stratified_bootstrap_ci([1.0, np.nan])


# --------------------------------------------------------------------------- C-TRPO Fig. 3 normalisations


def test_normalisations():
    # threshold-normalised, centred at zero: (c - b) / b with b = 25
    np.testing.assert_allclose(M.normalized_cost([20.0, 25.0, 30.0], 25.0), [-0.2, 0.0, 0.2])
    # reward / PPO's reward per task, (runs, tasks) against (tasks,)
    np.testing.assert_allclose(
        M.normalized_score([[50.0, 10.0], [100.0, 30.0]], [200.0, 20.0]), [[0.25, 0.5], [0.5, 1.5]]
    )
    # with a baseline: (x - 10) / (110 - 10)
    assert M.normalized_score(60.0, 110.0, baseline=10.0) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        M.normalized_cost([1.0], 0.0)
    with pytest.raises(ValueError):
        M.normalized_score([1.0], 0.0)
