"""Verdicts from intervals: where a final cost lies against the limit, how two rows' intervals lie, a paper's claim.

The papers judge results by bootstrap intervals, and so does every results table here:

* :func:`bootstrap_mean` and :func:`iqm_interval` give a statistic of the seeds' values and its 95% percentile
  bootstrap interval (:func:`saferl.analysis.metrics.stratified_bootstrap_ci`: the mean, and the interquartile
  mean of "Deep Reinforcement Learning at the Edge of the Statistical Precipice", arXiv:2108.13264);
* :func:`safety_verdict`: ``probably_safe`` when the final cost's interval lies at or below the limit,
  ``probably_unsafe`` wholly above it, ``undecided`` otherwise;
* :func:`interval_order`: ``above`` / ``below`` / ``overlapping`` for two rows' intervals of one quantity;
* :func:`compare` and :func:`both`: a claim "a's quantity < / <= / > b's" as ``reproduced`` (a's interval on the
  claimed side of b's), ``not_reproduced`` (on the other side) or ``undecided`` (overlapping, or unknown).
  Overlapping intervals are never agreement.

A row holds a quantity ``q`` as ``q`` (the point estimate), ``q_lo`` and ``q_hi`` (its interval).
"""

from __future__ import annotations

import math

import numpy as np

from saferl.analysis import metrics

VERDICTS = ("probably_safe", "undecided", "probably_unsafe")
CLAIM_VERDICTS = ("reproduced", "undecided", "not_reproduced")


def bootstrap_mean(values, reps: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """The mean of the finite ``values`` and its 95% percentile-bootstrap interval (NaNs where none is finite)."""
    values = np.asarray([v for v in values if v is not None and np.isfinite(v)], float)
    if values.size == 0:
        return float("nan"), float("nan"), float("nan")
    ci = metrics.stratified_bootstrap_ci(values[:, None], statistic=np.mean, reps=reps, seed=seed)
    return float(values.mean()), float(ci.lower), float(ci.upper)


def iqm_interval(values, reps: int) -> tuple[float, float, float]:
    """IQM of the finite ``values`` and its 95% percentile-bootstrap interval (NaNs where none is finite)."""
    values = np.asarray(values, float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return float("nan"), float("nan"), float("nan")
    ci = metrics.stratified_bootstrap_ci(values[:, None], reps=reps)
    return ci.estimate, ci.lower, ci.upper


def safety_verdict(lower: float, upper: float, limit: float) -> str:
    """The C-TRPO paper's reading (Fig. 3) of a 95% interval of final cost against the limit: ``probably_safe``
    when its upper end is at or below the limit, ``probably_unsafe`` when its lower end is above it,
    ``undecided`` otherwise (and when the interval is unknown)."""
    if not (np.isfinite(lower) and np.isfinite(upper)):
        return "undecided"
    if upper <= limit:
        return "probably_safe"
    if lower > limit:
        return "probably_unsafe"
    return "undecided"


def interval(row: dict, key: str) -> tuple[float, float]:
    """``row``'s interval of ``key`` (NaN for a missing end)."""
    lo, hi = row.get(f"{key}_lo"), row.get(f"{key}_hi")
    return (math.nan if lo is None else float(lo)), (math.nan if hi is None else float(hi))


def interval_order(a: dict, b: dict, name: str) -> str | None:
    """``above`` / ``below`` when ``a``'s interval of ``name`` lies wholly above / below ``b``'s, else
    ``overlapping`` (None where a row or an interval is missing)."""
    if a is None or b is None:
        return None
    a_lo, a_hi, b_lo, b_hi = a.get(f"{name}_lo"), a.get(f"{name}_hi"), b.get(f"{name}_lo"), b.get(f"{name}_hi")
    if any(v is None or not np.isfinite(v) for v in (a_lo, a_hi, b_lo, b_hi)):
        return None
    return "above" if a_lo > b_hi else "below" if a_hi < b_lo else "overlapping"


def compare(a: dict, b: dict, key: str, relation: str) -> str:
    """Verdict on "a's ``key`` ``relation`` b's" (``<``, ``<=`` or ``>``) from the two rows' 95% intervals:
    reproduced when a's interval lies on the claimed side of b's, not_reproduced when it lies on the other,
    undecided when they overlap (or one is unknown)."""
    (a_lo, a_hi), (b_lo, b_hi) = interval(a, key), interval(b, key)
    if any(math.isnan(v) for v in (a_lo, a_hi, b_lo, b_hi)):
        return "undecided"
    if relation == "<":
        holds, fails = a_hi < b_lo, a_lo >= b_hi
    elif relation == "<=":
        holds, fails = a_hi <= b_lo, a_lo > b_hi
    elif relation == ">":
        holds, fails = a_lo > b_hi, a_hi <= b_lo
    else:
        raise ValueError(f"relation must be <, <= or >, got {relation!r}")
    return "reproduced" if holds else "not_reproduced" if fails else "undecided"


def both(*verdicts: str) -> str:
    """All parts reproduced: reproduced; any not: not_reproduced; else undecided."""
    if "not_reproduced" in verdicts:
        return "not_reproduced"
    return "reproduced" if all(v == "reproduced" for v in verdicts) else "undecided"


def safety_as_claim(row: dict) -> str:
    """A row's :func:`safety_verdict` as a claim "the method meets the limit": probably_safe -> reproduced,
    probably_unsafe -> not_reproduced, else undecided."""
    return {"probably_safe": "reproduced", "probably_unsafe": "not_reproduced"}.get(row.get("safety"), "undecided")
