"""Equivalence of two sides: whether a port's episodes have the original's mean within a margin.

The fidelity rule of the environments (``benchmarks/fidelity``): :func:`equivalence_verdict` gives
``equivalent`` / ``different`` / ``inconclusive`` from the BCa interval of the ratio of the two sides' means
(:func:`ratio_of_means_interval`; :func:`difference_of_means_interval` near zero) against the band, two one-sided
tests in interval form; :func:`episodes_for_equivalence`: the episodes a side at which ``equivalent`` is reachable.
The verdicts of results tables (a cost against a limit, two methods' order, a paper's claim) are
:mod:`saferl.analysis.verdicts`'.
"""

from __future__ import annotations

import math

import numpy as np

from saferl.analysis import metrics

EQUIVALENCE_VERDICTS = ("equivalent", "inconclusive", "different")
#: the interval level of an equivalence verdict: the 1 - 2 alpha interval of two one-sided tests at alpha = 0.05
EQUIVALENCE_LEVEL = 0.90


def _finite(values) -> np.ndarray:
    return np.asarray([v for v in values if v is not None and np.isfinite(v)], float)


def _z(level: float) -> float:
    """The standard normal quantile at ``(1 + level) / 2``."""
    from statistics import NormalDist

    return NormalDist().inv_cdf((1.0 + level) / 2.0)


def _expanded_z(level: float, n: int) -> float:
    """The nominal z of a two-sided ``level`` interval from ``n`` values, expanded for small samples as Hesterberg's
    expanded percentile interval ("What Teachers Should Know About the Bootstrap", 2015): ``sqrt(n / (n - 1))
    t_{(1 + level) / 2, n - 1}``. A bootstrap interval of a mean is too narrow by about that factor over z (the
    plug-in variance divides by n, and the normal quantile stands in for Student's); 1.05 at n = 30, 1.45 at n = 5,
    2.2 at n = 3."""
    from scipy import stats

    return math.sqrt(n / (n - 1.0)) * float(stats.t.ppf((1.0 + level) / 2.0, n - 1))


def _two_sample_bca(x: np.ndarray, y: np.ndarray, scale: str, reps: int, seed: int, level: float):
    """The BCa interval of ``mean(x) / mean(y)`` (``scale="ratio"``) or ``mean(x) - mean(y)`` (``"difference"``),
    resampling ``x`` and ``y`` independently, at the expanded level of :func:`_expanded_z` (the smaller side's n).

    Returns the point estimate, the interval's ends and ``y``'s resampled means. The bias correction is
    ``z0 = Phi^-1(share of resampled statistics below the estimate)``, ties counted half; the acceleration is that of
    several independent samples from the empirical influence values ``l`` (Davison & Hinkley, "Bootstrap Methods and
    their Application", 1997, section 5.3): ``a = sum_g n_g^-3 sum l^3 / (6 (sum_g n_g^-2 sum l^2)^(3/2))``, with
    ``l_x = (x - mean x) / mean y`` and ``l_y = -R (y - mean y) / mean y`` for the ratio R, ``l_x = x - mean x`` and
    ``l_y = -(y - mean y)`` for the difference. The interval's ends are the resampled statistics' quantiles at
    ``Phi(z0 + (z0 + z) / (1 - a (z0 + z)))`` for ``z = -/+ z_level`` (Efron & Tibshirani, "An Introduction to the
    Bootstrap", 1993, chapter 14)."""
    from statistics import NormalDist

    normal = NormalDist()
    rng = np.random.default_rng(seed)
    mx, my = float(x.mean()), float(y.mean())
    boot_x = x[rng.integers(0, x.size, size=(reps, x.size))].mean(axis=1)
    boot_y = y[rng.integers(0, y.size, size=(reps, y.size))].mean(axis=1)
    if scale == "ratio":
        estimate = mx / my
        with np.errstate(divide="ignore", invalid="ignore"):
            boot = boot_x / boot_y
        # a resample whose two means are both zero has no ratio: it counts as infinite, against equivalence
        boot = np.where(np.isnan(boot), np.inf, boot)
        lx, ly = (x - mx) / my, -estimate * (y - my) / my
    else:
        estimate = mx - my
        boot = boot_x - boot_y
        lx, ly = x - mx, -(y - my)
    spread = np.sum(lx**2) / x.size**2 + np.sum(ly**2) / y.size**2
    skew = np.sum(lx**3) / x.size**3 + np.sum(ly**3) / y.size**3
    a = float(skew / (6.0 * spread**1.5)) if spread > 0 else 0.0
    below = (np.sum(boot < estimate) + 0.5 * np.sum(boot == estimate)) / reps
    z0 = normal.inv_cdf(min(max(below, 0.5 / reps), 1.0 - 0.5 / reps))
    z = _expanded_z(level, min(x.size, y.size))
    quantiles = []
    for end in (-z, z):
        w = z0 + end
        denominator = 1.0 - a * w
        quantiles.append(normal.cdf(z0 + w / denominator) if denominator > 0 else (0.0 if end < 0 else 1.0))
    lower, upper = np.quantile(boot, quantiles, method="inverted_cdf")
    return float(estimate), float(lower), float(upper), boot_y


def _bounded_away_from_zero(y: np.ndarray, boot_y: np.ndarray, level: float) -> bool:
    """Whether ``y``'s mean is told apart from zero: at most ``(1 - level') / 2`` of its resampled means lie at zero
    or on the other side, ``level'`` the expanded level of :func:`_expanded_z`. Where it is not, no interval of a
    ratio over it is bounded (Fieller, "Some Problems in Interval Estimation", 1954: the confidence set of a ratio is
    the whole line, or two rays, when its denominator is not significantly different from zero)."""
    from statistics import NormalDist

    my = float(y.mean())
    if my == 0.0:
        return False
    tail = NormalDist().cdf(-_expanded_z(level, y.size))
    wrong_side = np.mean(boot_y <= 0.0) if my > 0 else np.mean(boot_y >= 0.0)
    return bool(wrong_side <= tail)


def _told_apart_from_zero(values: np.ndarray, reps: int, seed: int, level: float) -> bool:
    """:func:`_bounded_away_from_zero` for ``values`` resampled on their own."""
    rng = np.random.default_rng(seed)
    boot = values[rng.integers(0, values.size, size=(reps, values.size))].mean(axis=1)
    return _bounded_away_from_zero(values, boot, level)


def ratio_of_means_interval(ours, theirs, reps: int = 2000, seed: int = 0, level: float = 0.95) -> metrics.BootstrapCI:
    """``mean(ours) / mean(theirs)`` of the finite values and its two-sided ``level`` bootstrap interval.

    Each side is resampled independently (its episodes are independent of the other side's), ``reps`` times with
    numpy's ``default_rng(seed)``; the interval is the bias-corrected and accelerated (BCa) one of Efron & Tibshirani
    ("An Introduction to the Bootstrap", 1993, chapter 14; Efron, "Better Bootstrap Confidence Intervals", 1987)
    at the small-sample expanded level of Hesterberg (2015). BCa and not the percentile interval: a ratio's
    bootstrap distribution is skewed (the denominator's error enters as 1 / mean) and per-episode costs are skewed
    and often zero-inflated; the percentile interval is first-order accurate and takes that skew as it comes, BCa
    corrects the median bias and the skew to second order (coverage in 400 simulated experiments each of exponential,
    gamma and zero-inflated episodes, true ratio 1.5, 30 a side, nominal 95%: percentile 0.905-0.935, BCa
    0.92-0.94, BCa expanded 0.94-0.95; at 5 a side 0.855-0.93, 0.86-0.945, 0.95-0.99). Both are
    transformation-respecting, so the interval of the log ratio is the log of this one.

    Means near zero: the ratio scale needs the original's mean told apart from zero. When more than the tail share of
    ``theirs``' resampled means lies at zero or across it (always when every value of ``theirs`` is 0), the ratio
    has no bounded interval (Fieller 1954) and the interval returned is ``(-inf, inf)``, with the point ratio NaN
    where ``mean(theirs)`` is 0; :func:`equivalence_verdict` then compares on the difference scale. NaNs where a
    side has fewer than two finite values.
    """
    x, y = _finite(ours), _finite(theirs)
    if x.size < 2 or y.size < 2:
        return metrics.BootstrapCI(math.nan, math.nan, math.nan)
    if y.mean() == 0:
        return metrics.BootstrapCI(math.nan, -math.inf, math.inf)
    estimate, lower, upper, boot_y = _two_sample_bca(x, y, "ratio", reps, seed, level)
    if not _bounded_away_from_zero(y, boot_y, level):
        return metrics.BootstrapCI(estimate, -math.inf, math.inf)
    return metrics.BootstrapCI(estimate, lower, upper)


def difference_of_means_interval(
    ours, theirs, reps: int = 2000, seed: int = 0, level: float = 0.95
) -> metrics.BootstrapCI:
    """``mean(ours) - mean(theirs)`` of the finite values and its two-sided ``level`` interval, resampled and
    computed as :func:`ratio_of_means_interval`'s (BCa, each side resampled independently, expanded level)."""
    x, y = _finite(ours), _finite(theirs)
    if x.size < 2 or y.size < 2:
        return metrics.BootstrapCI(math.nan, math.nan, math.nan)
    estimate, lower, upper, _ = _two_sample_bca(x, y, "difference", reps, seed, level)
    return metrics.BootstrapCI(estimate, lower, upper)


def _episodes_needed(relative_variance: float, half_band: float, level: float, power: float) -> int | None:
    """``ceil(v (z_level + z_power)^2 / h^2)``: the n per side at which an interval ``estimate +- z_level sqrt(v / n)``
    lies inside ``[-h, h]`` with probability ``power`` when the true value is 0 (derivation: see
    :func:`episodes_for_equivalence`); None where ``v`` is not finite or ``h`` is 0."""
    if not np.isfinite(relative_variance) or half_band <= 0:
        return None
    return max(2, math.ceil(relative_variance * (_z(level) + _z(power)) ** 2 / half_band**2))


def episodes_for_equivalence(
    cv_ours: float, cv_theirs: float, margin: float, level: float = EQUIVALENCE_LEVEL, power: float = 0.8
) -> int | None:
    """Episodes per side at which :func:`equivalence_verdict` reaches "equivalent" with probability ``power`` when
    the true ratio of means is 1, for episodes with coefficients of variation (sd / |mean|) ``cv_ours`` and
    ``cv_theirs``.

    Derivation. By the delta method the log of the ratio of the two n-episode means has variance
    ``s^2 / n`` with ``s^2 = cv_ours^2 + cv_theirs^2``; with a true ratio of 1 it is about ``N(0, s^2 / n)``. The
    interval is about ``log R +- z_a s / sqrt(n)``, ``z_a = Phi^-1((1 + level) / 2)``, and the band is
    ``[-L, L]`` on the log scale, ``L = log(1 + margin)``. The interval lies inside the band when
    ``|log R| <= L - z_a s / sqrt(n)``, which happens with probability ``2 Phi(L sqrt(n) / s - z_a) - 1``. Setting
    that to ``power``::

        n = (cv_ours^2 + cv_theirs^2) (z_a + z_b)^2 / log(1 + margin)^2,   z_b = Phi^-1((1 + power) / 2),

    rounded up: two one-sided tests' sample size for a ratio (Schuirmann, "A Comparison of the Two One-Sided Tests
    Procedure and the Power Approach for Assessing the Equivalence of Average Bioavailability", 1987; cf. Julious,
    "Sample Sizes for Clinical Trials with Normal Data", 2004, whose log-normal form has ``log(1 + cv^2)`` for
    ``cv^2``). With the defaults (90%, power 0.8) ``(z_a + z_b)^2 = 8.56``; margin 0.1 and cv 0.3 a side give 170
    episodes, cv 1 a side 1,886. It ignores the small-sample expansion of the interval (a factor 1.05 at n = 30),
    so it is a little optimistic below about 30 episodes. None where a cv is not finite (a mean of 0).
    """
    return _episodes_needed(cv_ours**2 + cv_theirs**2, math.log1p(margin), level, power)


def _rule_of_three_episodes(margin: float, level: float) -> int:
    """The fewest n at which n equal values bound the share of other values below ``margin`` at one-sided
    ``(1 + level) / 2`` confidence: ``1 - ((1 - level) / 2)^(1/n) <= margin`` (the rule of three, Hanley &
    Lippman-Hand, "If Nothing Goes Wrong, Is Everything All Right?", 1983: about 3 / n at 95%)."""
    return math.ceil(math.log((1.0 - level) / 2.0) / math.log1p(-margin))


def equivalence_verdict(
    ours,
    theirs,
    margin: float = 0.1,
    level: float = EQUIVALENCE_LEVEL,
    reps: int = 2000,
    seed: int = 0,
    power: float = 0.8,
) -> dict:
    """Whether the mean of ``ours`` (the port's episodes) equals the mean of ``theirs`` (the original's) within
    ``margin``: an equivalence test by the interval-inclusion form of two one-sided tests (TOST; Schuirmann 1987,
    see :func:`episodes_for_equivalence`), the rule of average bioequivalence, here with the band
    ``[1 / (1 + margin), 1 + margin]``.

    * Ratio scale (both sides' means told apart from zero, each by its own resampled means as in
      :func:`ratio_of_means_interval`): the ``level`` BCa interval of ``R = mean(ours) / mean(theirs)`` against the
      band ``[1 / (1 + margin), 1 + margin]`` (symmetric on the log scale, as the bioequivalence band [0.80, 1.25]
      is for margin 0.25). Both means, not only the denominator, since a ratio of means either of which may be zero
      or of either sign is unstable. With the denominator alone checked, equal means drawn from PointGoal1's random
      returns (mean -0.1, standard deviation 0.7) were called different in 17 of the 89 (of 400) simulated
      experiments that took the ratio scale.
    * Difference scale (either mean within its own noise of zero; for the original's, no interval of the ratio is
      bounded): the BCa interval of ``mean(ours) - mean(theirs)`` against ``+- margin s_p``, ``s_p`` the pooled episode
      standard deviation ``sqrt((s_ours^2 + s_theirs^2) / 2)``: an equivalence bound on the standardized mean
      difference (Cohen's d; Lakens, "Equivalence Tests: A Practical Primer for t Tests, Correlations, and
      Meta-Analyses", 2017). Near zero a share of the mean means nothing; a tenth of the episodes' spread does.
    * Both sides constant (every episode the same value on each side; both zero is the case met in practice, a
      cost no episode incurs): no interval has width, so the verdict is the point's (inside the band: equivalent,
      outside: different; on the difference scale with ``s_p = 0`` any difference is outside) once each side has
      at least the rule-of-three count (:func:`_rule_of_three_episodes`: n with ``1 - ((1 - level) / 2)^(1/n) <=
      margin``, 29 for 10% at 90%), which bounds the share of episodes departing from the constant below the margin;
      with fewer it is inconclusive.

    "equivalent" when the whole interval lies inside the band (ends included), "different" when it lies wholly
    outside, "inconclusive" otherwise (also with fewer than two finite values a side). ``level`` 0.90 is TOST at
    alpha 0.05 a side; "different" then rejects "within the band" at 0.05.

    Calibration. On simulated gamma and zero-inflated episodes the interval keeps its level and each wrong verdict
    at the band's edge stays within 0.05 (tests/analysis/test_equivalence.py). Heavy tails are harder for any
    interval built from the sample: a sample that misses the few long or costly episodes looks precise. Drawing
    both sides from one original's own 30 episodes of the fidelity benchmark (400 experiments for each of 68
    quantities, equal means by construction), "different" came out in 1.2% of experiments for the scripted
    controller's quantities (at most 4.8%), 4.9% for the random policy's, and 10-13% where the mean rests on two or
    three episodes (AntVelocity's random episode lengths, PointPush1's and RacecarCircle1's random costs). A single
    "different" on such a quantity is weaker evidence than its level says.

    Returns a dict: ``verdict``, ``scale`` (``ratio``, ``difference``, ``both_zero``, ``constant`` or ``none``),
    ``ratio`` (the point ratio of means, NaN when the original's mean is 0), ``estimate``, ``lower``, ``upper`` and
    ``band`` on that scale, ``mean_ours``, ``mean_theirs``, ``n_ours``, ``n_theirs``, ``margin``, ``level``, and
    ``episodes_needed``: episodes per side at which "equivalent" is reached with probability ``power`` if the true
    means were equal, at the samples' spread (:func:`episodes_for_equivalence` on the ratio scale;
    ``2 (z_a + z_b)^2 / margin^2`` on the difference scale, whatever the spread, since the band scales with it;
    the rule-of-three count for constants; None where it cannot be reached: a side's mean of 0 on the ratio scale).
    """
    x, y = _finite(ours), _finite(theirs)
    out = {
        "verdict": "inconclusive",
        "scale": "none",
        "ratio": math.nan,
        "estimate": math.nan,
        "lower": math.nan,
        "upper": math.nan,
        "band": [math.nan, math.nan],
        "mean_ours": float(x.mean()) if x.size else math.nan,
        "mean_theirs": float(y.mean()) if y.size else math.nan,
        "n_ours": int(x.size),
        "n_theirs": int(y.size),
        "margin": margin,
        "level": level,
        "episodes_needed": None,
    }
    if x.size < 2 or y.size < 2:
        return out
    mx, my = out["mean_ours"], out["mean_theirs"]
    sx, sy = float(x.std(ddof=1)), float(y.std(ddof=1))
    out["ratio"] = mx / my if my != 0 else math.nan
    ratio_band = [1.0 / (1.0 + margin), 1.0 + margin]
    pooled = math.sqrt((sx**2 + sy**2) / 2.0)
    if sx == 0 and sy == 0:
        enough = min(x.size, y.size) >= _rule_of_three_episodes(margin, level)
        on_ratio = my != 0
        point = mx / my if on_ratio else mx - my
        band = ratio_band if on_ratio else [0.0, 0.0]
        inside = band[0] <= point <= band[1]
        out.update(
            scale="both_zero" if mx == my == 0 else "constant",
            estimate=point,
            lower=point,
            upper=point,
            band=band,
            episodes_needed=_rule_of_three_episodes(margin, level),
            verdict=("equivalent" if inside else "different") if enough else "inconclusive",
        )
        return out
    ratio_ci = ratio_of_means_interval(x, y, reps=reps, seed=seed, level=level)
    if _told_apart_from_zero(x, reps, seed + 1, level) and np.isfinite(ratio_ci.lower) and np.isfinite(ratio_ci.upper):
        band, (estimate, lower, upper) = ratio_band, ratio_ci
        cv = (sx / abs(mx) if mx != 0 else math.inf), sy / abs(my)
        needed = episodes_for_equivalence(*cv, margin, level, power)
        scale = "ratio"
    else:
        band = [-margin * pooled, margin * pooled]
        estimate, lower, upper = difference_of_means_interval(x, y, reps=reps, seed=seed, level=level)
        needed = _episodes_needed(2.0, margin, level, power)
        scale = "difference"
    if band[0] <= lower and upper <= band[1]:
        verdict = "equivalent"
    elif upper < band[0] or lower > band[1]:
        verdict = "different"
    else:
        verdict = "inconclusive"
    out.update(
        verdict=verdict, scale=scale, estimate=estimate, lower=lower, upper=upper, band=band, episodes_needed=needed
    )
    return out
