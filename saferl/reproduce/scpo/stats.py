"""The SCPO targets' statistics of the training curves and the verdicts read from their intervals.

What :mod:`~saferl.reproduce.scpo.fig5`'s docstring defines, shared by the three SCPO targets: the curve columns
of a row (``training_cost``, ``training_cost_episode_sd``, ``training_cost_sd``, ``safe_from`` with their intervals;
:func:`curve_columns`),
the interval comparisons of the claims (:func:`comparable`, :func:`similar`, :func:`safe_sooner_entry`) and
:func:`claim`, one check with the paper's sentence.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from saferl.analysis import verdicts
from saferl.training import run_directory

#: "comparable" / "similar" return: within 10% of the other method's |mean final return| (our choice)
RETURN_MARGIN = 0.1
REPS, CONFIDENCE = 2000, 0.95

# --------------------------------------------------------------------------- statistics of the training curves


def safe_from(mean_curves, limit) -> np.ndarray:
    """Fraction of training before the first iteration from which every later mean cost is <= ``limit``:
    ``mean_curves`` (..., K) -> (...,), 0 when the whole curve is at or below the limit, ``inf`` when its last
    value is above (NaN, no finished episode, counts as above)."""
    m = np.asarray(mean_curves, float)
    above = ~(m <= limit)
    k = m.shape[-1]
    last_above = np.where(above.any(-1), k - 1 - np.argmax(above[..., ::-1], axis=-1), -1)
    first_safe = last_above + 1
    return np.where(first_safe >= k, np.inf, first_safe / k)


def final_window(k: int) -> int:
    """The iterations "final" averages over: the last 10%, at least one (run_directory.final_statistics)."""
    return max(1, math.ceil(run_directory.FINAL_FRACTION * k))


def curve_bootstrap(curves, statistic, reps: int = REPS, seed: int = 0) -> tuple[float, float, float]:
    """``statistic`` of the across-seed mean of ``curves`` (seeds, K) and its 95% interval over seeds resampled
    with replacement; ``statistic`` maps (R, K) mean curves to (R,).  Percentiles are order statistics (no
    interpolation), so an ``inf`` statistic keeps its meaning; NaN where a statistic is NaN."""
    c = np.asarray(curves, float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN iterations
        point = float(statistic(np.nanmean(c, axis=0)[None])[0])
        idx = np.random.default_rng(seed).integers(0, c.shape[0], size=(reps, c.shape[0]))
        samples = np.sort(statistic(np.nanmean(c[idx], axis=1)))
    if np.isnan(samples).any():
        return point, math.nan, math.nan
    return (point, *verdicts.order_statistic_interval(samples))


def mean_seed_sd(curves, reps: int = REPS, seed: int = 0) -> tuple[float, float, float]:
    """The across-seed SD (ddof 1) per iteration averaged over iterations, and its interval over seed resamples
    (NaN with fewer than 2 seeds)."""
    c = np.asarray(curves, float)
    if c.shape[0] < 2:
        return math.nan, math.nan, math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        point = float(np.nanmean(np.nanstd(c, axis=0, ddof=1)))
        idx = np.random.default_rng(seed).integers(0, c.shape[0], size=(reps, c.shape[0]))
        samples = np.nanmean(np.nanstd(c[idx], axis=1, ddof=1), axis=-1)
    lo, hi = np.nanpercentile(samples, [100 * (1 - CONFIDENCE) / 2, 100 * (1 + CONFIDENCE) / 2])
    return point, float(lo), float(hi)


def curve_columns(cost, limit: float, steps_per_iteration: int, episode_sd=None) -> dict:
    """A row's training-curve columns from its per-seed cost curves (seeds, K) and, where the run logged it, the
    per-seed curves of each iteration's spread of episode costs (``episode_cost_sd``, (seeds, K))."""
    out = {}
    out["training_cost"], out["training_cost_lo"], out["training_cost_hi"] = verdicts.bootstrap_mean(
        np.nanmean(cost, axis=1)
    )
    if episode_sd is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a seed with no finished episode in any iteration
            per_seed = np.nanmean(np.asarray(episode_sd, float), axis=1)
        out["training_cost_episode_sd"], out["training_cost_episode_sd_lo"], out["training_cost_episode_sd_hi"] = (
            verdicts.bootstrap_mean(per_seed)
        )
    out["training_cost_sd"], out["training_cost_sd_lo"], out["training_cost_sd_hi"] = mean_seed_sd(cost)
    out["safe_from"], out["safe_from_lo"], out["safe_from_hi"] = curve_bootstrap(cost, lambda m: safe_from(m, limit))
    first = out["safe_from"] * cost.shape[1]
    out["safe_from_iteration"] = None if math.isinf(first) else int(round(first)) + 1
    out["safe_from_env_steps"] = None if math.isinf(first) else int(round(first)) * steps_per_iteration
    out["iterations"] = int(cost.shape[1])
    return out


# --------------------------------------------------------------------------- verdicts from intervals


def _margin(b: dict) -> float:
    return RETURN_MARGIN * abs(float(b["final_return"]))


def comparable(a: dict, b: dict) -> str:
    """ "At comparable return": a's final return not below b's by more than the margin (10% of b's |mean|), a
    non-inferiority claim (:func:`saferl.analysis.verdicts.not_worse_within`)."""
    return verdicts.not_worse_within(a, b, "final_return", _margin(b))


def similar(a: dict, b: dict) -> str:
    """ "The final return is similar": an equality claim within the margin (10% of b's |mean|), judged by
    :func:`saferl.analysis.verdicts.equal_within`, never by overlap."""
    return verdicts.equal_within(a, b, "final_return", _margin(b))


def span(row: dict, key: str) -> list:
    return [row.get(key), row.get(f"{key}_lo"), row.get(f"{key}_hi")]


def claim(key: str, reading: str, entries: dict, claims: dict) -> dict:
    """A check: the paper's sentence and where it is (``claims[key]``), our reading of it, and the verdicts."""
    text, where = claims[key]
    return {"paper": text, "where": where, "reading": reading, **entries}


def safe_sooner_entry(scpo: dict, other: dict) -> dict:
    """ "SCPO finds a safe policy at a faster rate": SCPO's ``safe_from`` interval below the other's (a strict
    claim: two methods safe from the start, or both never safe, are a tie and do not reproduce it), at comparable
    return."""
    parts = {"sooner": verdicts.ordered(scpo, other, "safe_from", "<"), "comparable_return": comparable(scpo, other)}
    return {
        "verdict": verdicts.all_of(*parts.values()),
        **parts,
        "safe_from": {scpo["method"]: span(scpo, "safe_from"), other["method"]: span(other, "safe_from")},
        "safe_from_iteration": {r["method"]: r.get("safe_from_iteration") for r in (scpo, other)},
        "final_return": {r["method"]: span(r, "final_return") for r in (scpo, other)},
    }


def by_task(rows: list[dict]) -> dict:
    """{task: {label: row}} in row order (labels are unique within a task)."""
    out: dict = {}
    for row in rows:
        out.setdefault(row["env"], {})[row["label"]] = row
    return out


SAFE_SOONER = (
    "the first iteration from which the across-seed mean cost stays <= the limit, as a fraction of training "
    "(inf: never); SCPO's interval wholly below the other's (equal points, both never included, are a tie), and "
    f"SCPO's final return not below the other's by more than {RETURN_MARGIN:.0%} of its |mean| (the interval of "
    "the difference)"
)
