"""The equivalence rule of saferl.analysis.equivalence against simulated experiments with a known answer.

Each simulation runs 400 experiments (1,000 resamples each), so a share is known to about 3 binomial standard errors
of ``sqrt(p (1 - p) / 400)``: 0.045 at p = 0.9, 0.06 at p = 0.8.
"""

import math

import numpy as np
import pytest

from saferl.analysis import equivalence

EXPERIMENTS = 400
REPS = 1000


def _binomial_slack(p: float, k: float = 3.0) -> float:
    return k * math.sqrt(p * (1 - p) / EXPERIMENTS)


def _gamma(rng, mean, cv, n):
    """Gamma-distributed episodes with the given mean and coefficient of variation (skewed, positive)."""
    shape = 1.0 / cv**2
    return rng.gamma(shape, mean / shape, n)


def _zero_inflated(rng, mean, n, zeros=0.5):
    """A cost most episodes do not incur: 0 with probability ``zeros``, else exponential; mean ``mean``."""
    return (rng.random(n) >= zeros) * rng.exponential(mean / (1 - zeros), n)


def _misses(draw, true, level, interval=equivalence.ratio_of_means_interval):
    rng = np.random.default_rng(2024)
    below = above = 0
    for e in range(EXPERIMENTS):
        ours, theirs = draw(rng)
        _, lower, upper = interval(ours, theirs, reps=REPS, seed=e, level=level)
        below += upper < true
        above += lower > true
    return below / EXPERIMENTS, above / EXPERIMENTS


@pytest.mark.parametrize(
    "name, draw, level",
    [
        ("gamma, cv 0.7", lambda rng: (_gamma(rng, 1.5, 0.7, 30), _gamma(rng, 1.0, 0.7, 30)), 0.95),
        ("zero-inflated", lambda rng: (_zero_inflated(rng, 1.5, 30), _zero_inflated(rng, 1.0, 30)), 0.90),
        ("unequal n, cv 1", lambda rng: (_gamma(rng, 1.5, 1.0, 20), _gamma(rng, 1.0, 1.0, 50)), 0.90),
    ],
)
def test_the_ratio_interval_covers_a_known_ratio_at_its_level(name, draw, level):
    below, above = _misses(draw, 1.5, level)
    coverage = 1 - below - above
    assert abs(coverage - level) <= _binomial_slack(level), (name, coverage)
    # and not by trading one tail for the other: each end misses about (1 - level) / 2 of the time
    for tail in (below, above):
        assert abs(tail - (1 - level) / 2) <= _binomial_slack((1 - level) / 2), (name, below, above)


def test_the_difference_interval_covers_a_known_difference():
    def draw(rng):
        return rng.normal(0.3, 1.0, 30), rng.normal(0.0, 2.0, 40)

    below, above = _misses(draw, 0.3, 0.90, interval=equivalence.difference_of_means_interval)
    assert abs(1 - below - above - 0.90) <= _binomial_slack(0.90)


def _scipy_interval(samples, statistic, level, n, method):
    """scipy's bootstrap interval at the level whose normal quantile is the expanded z of ``n`` episodes."""
    from statistics import NormalDist

    from scipy import stats

    expanded = 2 * NormalDist().cdf(equivalence._expanded_z(level, n)) - 1
    ci = stats.bootstrap(
        samples, statistic, confidence_level=expanded, method=method, n_resamples=40_000, random_state=1
    ).confidence_interval
    return ci.low, ci.high


def test_the_interval_is_scipys_bca_at_the_expanded_level_and_not_the_percentile_interval():
    """On skewed episodes BCa's ends move away from the percentile interval's; ours follow scipy's BCa (its
    jackknife acceleration equals the influence-value one for means), not the percentile ends."""
    rng = np.random.default_rng(3)
    ours = rng.exponential(1.5, 30)
    mine = equivalence.difference_of_means_interval(ours, [0.0] * 30, reps=40_000, level=0.90)
    bca = _scipy_interval((ours,), np.mean, 0.90, 30, "BCa")
    pct = _scipy_interval((ours,), np.mean, 0.90, 30, "percentile")
    assert mine.estimate == pytest.approx(ours.mean())
    assert (mine.lower, mine.upper) == pytest.approx(bca, rel=0.005)
    assert abs(mine.upper - pct[1]) > 3 * abs(mine.upper - bca[1])

    def ratio(a, b, axis=-1):
        return a.mean(axis) / b.mean(axis)

    ours, theirs = rng.exponential(1.5, 20), rng.exponential(1.0, 20)
    mine = equivalence.ratio_of_means_interval(ours, theirs, reps=40_000, level=0.90)
    bca = _scipy_interval((ours, theirs), ratio, 0.90, 20, "BCa")
    assert (mine.lower, mine.upper) == pytest.approx(bca, rel=0.015)
    assert mine.estimate == pytest.approx(ours.mean() / theirs.mean())
    assert mine.lower <= mine.estimate <= mine.upper


def test_two_samples_of_one_distribution_are_equivalent_with_enough_episodes_and_inconclusive_with_few():
    n = equivalence.episodes_for_equivalence(0.5, 0.5, 0.1)
    rng = np.random.default_rng(0)
    big = equivalence.equivalence_verdict(_gamma(rng, 10.0, 0.5, 3 * n), _gamma(rng, 10.0, 0.5, 3 * n), margin=0.1)
    assert big["verdict"] == "equivalent" and big["scale"] == "ratio"
    assert big["band"] == pytest.approx([1 / 1.1, 1.1])
    assert big["band"][0] <= big["lower"] <= big["ratio"] <= big["upper"] <= big["band"][1]
    # 30 episodes of the same distribution: no evidence either way, and the rule says so
    small = equivalence.equivalence_verdict(_gamma(rng, 10.0, 0.5, 30), _gamma(rng, 10.0, 0.5, 30), margin=0.1)
    assert small["verdict"] == "inconclusive"
    assert small["episodes_needed"] == pytest.approx(n, rel=0.5)


def test_a_ratio_of_1_5_is_different_with_enough_episodes_and_inconclusive_with_3():
    rng = np.random.default_rng(1)
    many = equivalence.equivalence_verdict(_gamma(rng, 15.0, 0.5, 200), _gamma(rng, 10.0, 0.5, 200))
    assert many["verdict"] == "different"
    assert many["band"][1] < many["lower"] < 1.5 < many["upper"]
    few = equivalence.equivalence_verdict(_gamma(rng, 15.0, 0.5, 3), _gamma(rng, 10.0, 0.5, 3))
    assert few["verdict"] == "inconclusive"
    # over many 3-episode experiments: mostly inconclusive, never equivalent (with 3 episodes the interval is about
    # the range of the resampled ratios; "different" needs every episode of one side beyond the other's by 10%)
    counts = {v: 0 for v in equivalence.EQUIVALENCE_VERDICTS}
    for e in range(EXPERIMENTS):
        r = equivalence.equivalence_verdict(_gamma(rng, 15.0, 0.5, 3), _gamma(rng, 10.0, 0.5, 3), reps=REPS, seed=e)
        counts[r["verdict"]] += 1
    assert counts["equivalent"] == 0
    assert counts["inconclusive"] >= 0.75 * EXPERIMENTS, counts


@pytest.mark.parametrize("n", [30, 200])
def test_at_the_band_edge_each_wrong_verdict_has_at_most_the_tests_size(n):
    """A true ratio of exactly 1 + margin: "equivalent" and "different" are each wrong, and each is one of the two
    one-sided tests at alpha = (1 - level) / 2 = 0.05 (Schuirmann 1987), so each is reached at most ~5% of the
    time."""
    rng = np.random.default_rng(n)
    counts = {v: 0 for v in equivalence.EQUIVALENCE_VERDICTS}
    for e in range(EXPERIMENTS):
        r = equivalence.equivalence_verdict(_gamma(rng, 1.1, 0.5, n), _gamma(rng, 1.0, 0.5, n), reps=REPS, seed=e)
        counts[r["verdict"]] += 1
    for wrong in ("equivalent", "different"):
        assert counts[wrong] / EXPERIMENTS <= 0.05 + _binomial_slack(0.05), counts


def test_a_true_ratio_of_1_is_seldom_called_different_even_with_3_episodes():
    rng = np.random.default_rng(3)
    different = sum(
        equivalence.equivalence_verdict(_gamma(rng, 1.0, 0.5, 3), _gamma(rng, 1.0, 0.5, 3), reps=REPS, seed=e)[
            "verdict"
        ]
        == "different"
        for e in range(EXPERIMENTS)
    )
    assert different / EXPERIMENTS <= 0.05 + _binomial_slack(0.05)


# --------------------------------------------------------------------------- means at or near zero


def test_a_quantity_zero_in_every_episode_on_both_sides():
    both = equivalence.equivalence_verdict([0.0] * 30, [0.0] * 30)
    assert both["scale"] == "both_zero" and both["verdict"] == "equivalent"
    assert math.isnan(both["ratio"]) and both["estimate"] == 0.0
    # the rule of three: 29 zeros bound the share of nonzero episodes below 10% at 95% one-sided; 10 do not
    assert both["episodes_needed"] == 29 == math.ceil(math.log(0.05) / math.log(0.9))
    assert equivalence.equivalence_verdict([0.0] * 10, [0.0] * 10)["verdict"] == "inconclusive"
    assert equivalence.equivalence_verdict([0.0] * 29, [0.0] * 40)["verdict"] == "equivalent"
    # constants that differ: as different as can be, once there are enough of them
    assert equivalence.equivalence_verdict([5.0] * 30, [0.0] * 30)["verdict"] == "different"
    assert equivalence.equivalence_verdict([5.0] * 30, [4.0] * 30)["verdict"] == "different"
    same = equivalence.equivalence_verdict([1000.0] * 30, [1000.0] * 30)
    assert same["scale"] == "constant" and same["verdict"] == "equivalent" and same["estimate"] == 1.0


def test_the_ratio_has_no_bounded_interval_when_the_originals_mean_is_not_told_apart_from_zero():
    rng = np.random.default_rng(4)
    ci = equivalence.ratio_of_means_interval(rng.exponential(1.0, 30), [0.0] * 30)
    assert math.isnan(ci.estimate) and ci.lower == -math.inf and ci.upper == math.inf
    noisy_zero = rng.normal(0.0, 1.0, 30)
    noisy_zero += 0.05 - noisy_zero.mean()  # a mean of 0.05 against a standard error of about 0.18
    ci = equivalence.ratio_of_means_interval(rng.normal(0.05, 1.0, 30), noisy_zero)
    assert np.isfinite(ci.estimate) and (ci.lower, ci.upper) == (-math.inf, math.inf)
    # a mean well away from zero: bounded
    ci = equivalence.ratio_of_means_interval(rng.normal(5.0, 1.0, 30), rng.normal(5.0, 1.0, 30))
    assert np.isfinite(ci.lower) and np.isfinite(ci.upper)


def test_means_near_zero_are_compared_on_the_difference_scale_with_a_tenth_of_the_pooled_sd():
    rng = np.random.default_rng(6)
    # the original zero in every episode, the port not: a difference, with the band from the pooled spread
    ours = np.where(rng.random(30) < 0.2, 8.0, 0.0)
    r = equivalence.equivalence_verdict(ours, [0.0] * 30)
    assert r["scale"] == "difference" and r["verdict"] != "equivalent"
    pooled = math.sqrt((ours.std(ddof=1) ** 2 + 0.0) / 2)
    assert r["band"] == pytest.approx([-0.1 * pooled, 0.1 * pooled])
    assert r["estimate"] == pytest.approx(ours.mean())
    # a port that is mostly nonzero against an original that never is: different
    assert equivalence.equivalence_verdict(rng.exponential(5.0, 30), [0.0] * 30)["verdict"] == "different"
    # returns centred on zero on both sides: equivalent with the difference scale's episodes, not with 30
    needed = equivalence.equivalence_verdict(rng.normal(0, 1, 30), rng.normal(0, 1, 30))["episodes_needed"]
    z = 1.6448536269514722 + 1.2815515655446004
    assert needed == math.ceil(2 * z**2 / 0.1**2) == 1713
    centred = rng.normal(0, 1, 3 * needed)
    big = equivalence.equivalence_verdict(rng.normal(0, 1, 3 * needed), centred - centred.mean())  # mean exactly 0
    assert big["scale"] == "difference" and big["verdict"] == "equivalent"


def test_a_zero_inflated_cost_with_a_clear_mean_stays_on_the_ratio_scale():
    """Half the episodes cost 0, the rest exponential: cv^2 = 2 / 0.5 - 1 = 3 a side, so a 25% band needs
    6 * 8.56 / log(1.25)^2 = 1,032 episodes; 3,000 reach it, and a doubled cost is different at 300."""
    rng = np.random.default_rng(8)
    n = equivalence.episodes_for_equivalence(math.sqrt(3), math.sqrt(3), 0.25)
    assert n == 1032
    same = equivalence.equivalence_verdict(
        _zero_inflated(rng, 10.0, 3000), _zero_inflated(rng, 10.0, 3000), margin=0.25
    )
    assert same["scale"] == "ratio" and same["verdict"] == "equivalent"
    assert same["episodes_needed"] == pytest.approx(n, rel=0.2)
    worse = equivalence.equivalence_verdict(_zero_inflated(rng, 20.0, 300), _zero_inflated(rng, 10.0, 300), margin=0.25)
    assert worse["scale"] == "ratio" and worse["verdict"] == "different"


def test_fewer_than_two_values_a_side_is_inconclusive():
    r = equivalence.equivalence_verdict([1.0], [1.0, 2.0, float("nan")])
    assert r["verdict"] == "inconclusive" and r["scale"] == "none"
    assert all(math.isnan(v) for v in equivalence.ratio_of_means_interval([1.0], [1.0, 2.0]))


# --------------------------------------------------------------------------- episodes for equivalence


def test_episodes_for_equivalence_is_the_stated_formula():
    z = 1.6448536269514722 + 1.2815515655446004  # 90% two-sided and power 0.8
    assert equivalence.episodes_for_equivalence(0.3, 0.3, 0.1) == math.ceil(0.18 * z**2 / math.log(1.1) ** 2) == 170
    assert equivalence.episodes_for_equivalence(1.0, 1.0, 0.1) == 1886
    # more spread or a narrower band need more episodes; a mean of 0 (cv inf) never gets there on this scale
    assert (
        equivalence.episodes_for_equivalence(0.6, 0.3, 0.1) > 170 > equivalence.episodes_for_equivalence(0.3, 0.3, 0.2)
    )
    assert equivalence.episodes_for_equivalence(math.inf, 0.3, 0.1) is None


def test_at_the_stated_episodes_equivalence_is_reached_at_about_the_stated_power():
    margin, cv = 0.25, 0.5
    n = equivalence.episodes_for_equivalence(cv, cv, margin)  # power 0.8
    assert n == 86
    rng = np.random.default_rng(9)

    def share(episodes):
        hits = 0
        for e in range(EXPERIMENTS):
            ours, theirs = _gamma(rng, 3.0, cv, episodes), _gamma(rng, 3.0, cv, episodes)
            hits += equivalence.equivalence_verdict(ours, theirs, margin=margin, reps=REPS, seed=e)["verdict"] == (
                "equivalent"
            )
        return hits / EXPERIMENTS

    assert abs(share(n) - 0.8) <= _binomial_slack(0.8)
    # at half the episodes the same derivation gives 2 Phi(2.926 / sqrt(2) - 1.645) - 1 = 0.33
    assert abs(share(n // 2) - 0.33) <= _binomial_slack(0.33) + 0.03
