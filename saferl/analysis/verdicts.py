"""The claims vocabulary: how every results table reads its intervals, judges a paper's claim and counts agreement.

The papers judge results by bootstrap intervals, and so does every results table here. A row holds a quantity
``q`` as ``q`` (the point estimate), ``q_lo`` and ``q_hi`` (its 95% interval).

Statistics of the seeds' values
  :func:`bootstrap_mean` and :func:`iqm_interval`: the mean or the interquartile mean ("Deep Reinforcement Learning
  at the Edge of the Statistical Precipice", arXiv:2108.13264) and its 95% percentile-bootstrap interval over seeds.

Readings of intervals (what the data say, before any claim)
  * :func:`safety_verdict`: a cost interval against a limit, ``probably_safe`` (at or below it), ``probably_unsafe``
    (wholly above) or ``undecided`` (the C-TRPO paper's reading of Fig. 3);
  * :func:`interval_order`: two rows' intervals of one quantity, ``above`` / ``below`` / ``overlapping``;
    :func:`paired_order` the same from seeds paired across the two rows (one seed's two runs share their random
    stream), by the interval of the mean per-seed difference against 0.

Verdicts on a paper's claim: ``reproduced`` / ``not_reproduced`` / ``undecided``
  * an order, "a's q < b's" or ">" (:func:`ordered`): reproduced when a's interval lies wholly on the claimed side
    of b's, not reproduced when it lies on the other side or the two are one and the same point (a tie refutes a
    strict claim), undecided otherwise: overlapping intervals are never agreement;
  * an equality, "a's q is like b's" (:func:`equal_within`): judged by an equivalence margin ``m``, never by
    overlap. The interval of the difference ``a - b`` is taken as ``[a_lo - b_hi, a_hi - b_lo]`` (every difference
    of a value in one interval and a value in the other; wider than the difference's own interval, so
    conservative): reproduced when it lies within ``[-m, m]``, not reproduced when it lies wholly outside,
    undecided otherwise;
  * "a's q not below b's by more than m" (:func:`not_worse_within`): the one-sided form (non-inferiority), on the
    same interval of the difference;
  * :func:`safety_as_claim` (a row's safety verdict as "the method meets the limit") and :func:`all_of` (a claim
    made of parts).

Infinite and missing values
  ``inf`` is a value: "never" (never safe, never reached), larger than every number and equal to itself; a
  missing value (None or NaN) is no value. A missing end makes every reading None or ``undecided``. Infinite ends
  compare as numbers do, so "never" lies above every finite time; two intervals that are both exactly ``[inf,
  inf]`` (both never) are one point: overlapping as an order, a tie (not reproduced) for a strict claim, equal for
  an equality claim. :func:`bootstrap_mean` keeps infinite values (a seed that never reached makes the mean
  ``inf``) and drops missing ones.

Agreement with the paper
  :func:`agreement` of our reading of a claim and the paper's: ``agree`` (both decisive and the same),
  ``disagree`` (both decisive and different) or ``undecided`` (either undecided: :data:`UNDECIDED_READINGS`,
  overlapping intervals, a best method not separated from the next). :func:`agreement_counts` and
  :func:`counts_sentence` report the three apart, never one number of "agreements".

Budget
  :func:`budget` and :func:`budget_sentence`: the steps per seed as a fraction of the paper's, and the seeds, that
  every verdict sentence carries.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from saferl.analysis import metrics

SAFETY_VERDICTS = ("probably_safe", "undecided", "probably_unsafe")
ORDERS = ("above", "below", "overlapping")
CLAIM_VERDICTS = ("reproduced", "undecided", "not_reproduced")
AGREEMENTS = ("agree", "disagree", "undecided")
#: readings that decide nothing: a missing reading, an undecided verdict or safety reading, overlapping intervals
UNDECIDED_READINGS = (None, "undecided", "overlapping", "inconclusive")
#: how :func:`best_of` begins a reading whose best row is not separated from another candidate by intervals
NOT_SEPARATED = "not separated"
CONFIDENCE = 0.95


# --------------------------------------------------------------------------- statistics of the seeds' values


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or bool(np.isnan(value))


def order_statistic_interval(sorted_samples) -> tuple[float, float]:
    """The 95% percentile interval of sorted resampled statistics as order statistics (no interpolation, so
    ``inf`` keeps its meaning): the ``floor(a (R - 1))``-th and ``ceil((1 - a) (R - 1))``-th, a = 0.025."""
    reps = len(sorted_samples)
    alpha = (1.0 - CONFIDENCE) / 2.0
    lower = sorted_samples[int(math.floor(alpha * (reps - 1)))]
    upper = sorted_samples[int(math.ceil((1.0 - alpha) * (reps - 1)))]
    return float(lower), float(upper)


def bootstrap_mean(values, reps: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """The mean of ``values`` and its 95% percentile-bootstrap interval over the values resampled with replacement.

    Missing values (None, NaN) are dropped. Infinite ones are kept: a resample holding one has an infinite mean, and
    the interval's ends are then order statistics of the resampled means (no interpolation between ``inf`` and a
    number). NaNs where no value is left, or where ``+inf`` and ``-inf`` meet."""
    kept = np.asarray([v for v in values if not _missing(v)], float)
    if kept.size == 0:
        return math.nan, math.nan, math.nan
    if np.all(np.isfinite(kept)):
        ci = metrics.stratified_bootstrap_ci(kept[:, None], statistic=np.mean, reps=reps, seed=seed)
        return float(kept.mean()), float(ci.lower), float(ci.upper)
    if np.isposinf(kept).any() and np.isneginf(kept).any():
        return math.nan, math.nan, math.nan
    idx = np.random.default_rng(seed).integers(0, kept.size, size=(reps, kept.size))
    lower, upper = order_statistic_interval(np.sort(kept[idx].mean(axis=1)))
    return float(kept.mean()), lower, upper


def iqm_interval(values, reps: int) -> tuple[float, float, float]:
    """IQM of the finite ``values`` and its 95% percentile-bootstrap interval (NaNs where none is finite)."""
    values = np.asarray(values, float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return float("nan"), float("nan"), float("nan")
    ci = metrics.stratified_bootstrap_ci(values[:, None], reps=reps)
    return ci.estimate, ci.lower, ci.upper


# --------------------------------------------------------------------------- readings of intervals


def interval(row: dict | None, key: str) -> tuple[float, float]:
    """``row``'s interval of ``key`` (NaN for a missing end or row)."""
    if row is None:
        return math.nan, math.nan
    lo, hi = row.get(f"{key}_lo"), row.get(f"{key}_hi")
    return (math.nan if _missing(lo) else float(lo)), (math.nan if _missing(hi) else float(hi))


def safety_verdict(lower: float, upper: float, limit: float) -> str:
    """A 95% interval of the final cost against the limit: ``probably_safe`` when its upper end is at or below the
    limit, ``probably_unsafe`` when its lower end is above it, ``undecided`` otherwise and when an end is missing
    (an infinite end is a value: ``[30, inf]`` against 25 is probably unsafe)."""
    if _missing(lower) or _missing(upper):
        return "undecided"
    if upper <= limit:
        return "probably_safe"
    if lower > limit:
        return "probably_unsafe"
    return "undecided"


def order(a_lo: float, a_hi: float, b_lo: float, b_hi: float) -> str | None:
    """``above`` when ``[a_lo, a_hi]`` lies wholly above ``[b_lo, b_hi]``, ``below`` wholly below, ``overlapping``
    otherwise (equal intervals, touching ends, both ``[inf, inf]``); None when an end is missing."""
    if any(_missing(v) for v in (a_lo, a_hi, b_lo, b_hi)):
        return None
    return "above" if a_lo > b_hi else "below" if a_hi < b_lo else "overlapping"


def interval_order(a: dict | None, b: dict | None, name: str) -> str | None:
    """:func:`order` of two rows' intervals of ``name`` (None where a row or an end is missing)."""
    return order(*interval(a, name), *interval(b, name))


def paired_order(a_values, b_values, reps: int = 2000, seed: int = 0) -> str | None:
    """The order of two methods from seeds paired across them (``a_values[i]`` and ``b_values[i]`` one seed):
    :func:`order` of the 95% bootstrap interval of the mean per-seed difference ``a - b`` against 0. A pair where
    both are the same infinity differs by 0 (both never); one infinite side differs by that infinity. None with
    fewer than two complete pairs or where ``+inf`` and ``-inf`` differences meet."""
    if len(a_values) != len(b_values):
        raise ValueError(f"paired_order needs one value a side per seed, got {len(a_values)} and {len(b_values)}")
    diffs = []
    for a, b in zip(a_values, b_values):
        if _missing(a) or _missing(b):
            continue
        a, b = float(a), float(b)
        diffs.append(0.0 if (math.isinf(a) and a == b) else a - b)
    if len(diffs) < 2:
        return None
    _, lo, hi = bootstrap_mean(diffs, reps=reps, seed=seed)
    return order(lo, hi, 0.0, 0.0)


# --------------------------------------------------------------------------- verdicts on a claim


def ordered(a: dict | None, b: dict | None, key: str, relation: str) -> str:
    """Verdict on the strict claim "a's ``key`` ``relation`` b's" (``<`` or ``>``) from the rows' intervals:
    reproduced when a's interval lies wholly on the claimed side of b's; not reproduced when it lies on the other
    side, touching included, or both are one point (a tie: both ``[0, 0]``, both ``[inf, inf]``); undecided when
    they overlap or an end is missing."""
    if relation not in ("<", ">"):
        raise ValueError(f"relation must be < or >, got {relation!r}")
    (a_lo, a_hi), (b_lo, b_hi) = interval(a, key), interval(b, key)
    if any(math.isnan(v) for v in (a_lo, a_hi, b_lo, b_hi)):
        return "undecided"
    if relation == "<":
        holds, fails = a_hi < b_lo, a_lo >= b_hi
    else:
        holds, fails = a_lo > b_hi, a_hi <= b_lo
    return "reproduced" if holds else "not_reproduced" if fails else "undecided"


def _difference_interval(a: dict | None, b: dict | None, key: str) -> tuple[float, float] | None:
    """``[a_lo - b_hi, a_hi - b_lo]``, every difference of a value of a's interval and one of b's; ``(0, 0)`` when
    both are the same infinite point; None when an end is missing or an end's difference is inf - inf."""
    (a_lo, a_hi), (b_lo, b_hi) = interval(a, key), interval(b, key)
    ends = (a_lo, a_hi, b_lo, b_hi)
    if any(math.isnan(v) for v in ends):
        return None
    if all(math.isinf(v) for v in ends) and len(set(ends)) == 1:
        return 0.0, 0.0
    lower, upper = a_lo - b_hi, a_hi - b_lo
    if math.isnan(lower) or math.isnan(upper):
        return None
    return lower, upper


def equal_within(a: dict | None, b: dict | None, key: str, margin: float) -> str:
    """Verdict on the equality claim "a's ``key`` is b's, within ``margin``" (module docstring): reproduced when the
    interval of the difference lies within ``[-margin, margin]``, not reproduced when it lies wholly outside,
    undecided otherwise (overlapping intervals wider than the margin decide nothing)."""
    if not margin >= 0:
        raise ValueError(f"margin must be a number >= 0, got {margin!r}")
    diff = _difference_interval(a, b, key)
    if diff is None:
        return "undecided"
    lower, upper = diff
    if -margin <= lower and upper <= margin:
        return "reproduced"
    if lower > margin or upper < -margin:
        return "not_reproduced"
    return "undecided"


def not_worse_within(a: dict | None, b: dict | None, key: str, margin: float, higher_is_better: bool = True) -> str:
    """Verdict on "a's ``key`` is not worse than b's by more than ``margin``" (non-inferiority): reproduced when
    the whole interval of the difference lies on the better side of ``-margin`` (``a - b >= -margin`` where higher
    is better), not reproduced when it lies wholly beyond it, undecided otherwise."""
    if not margin >= 0:
        raise ValueError(f"margin must be a number >= 0, got {margin!r}")
    diff = _difference_interval(a, b, key) if higher_is_better else _difference_interval(b, a, key)
    if diff is None:
        return "undecided"
    lower, upper = diff
    if lower >= -margin:
        return "reproduced"
    if upper < -margin:
        return "not_reproduced"
    return "undecided"


def all_of(*verdicts: str) -> str:
    """A claim made of parts: any part not reproduced: not_reproduced; every part reproduced: reproduced; else
    undecided (also with no parts)."""
    if "not_reproduced" in verdicts:
        return "not_reproduced"
    return "reproduced" if verdicts and all(v == "reproduced" for v in verdicts) else "undecided"


def safety_as_claim(row: dict) -> str:
    """A row's :func:`safety_verdict` as a claim "the method meets the limit": probably_safe -> reproduced,
    probably_unsafe -> not_reproduced, else undecided."""
    return {"probably_safe": "reproduced", "probably_unsafe": "not_reproduced"}.get(row.get("safety"), "undecided")


def as_claim(holds: bool | None) -> str:
    """A decided boolean reading as a claim verdict: True -> reproduced, False -> not_reproduced, None ->
    undecided."""
    return "undecided" if holds is None else "reproduced" if holds else "not_reproduced"


def best_of(rows: list[dict], name: str, highest: bool = True) -> str | None:
    """The best row by ``name`` as a reading: its ``label`` when its interval lies wholly beyond (above, or below
    for ``highest=False``) every other row's; ``"not separated: A, B"`` otherwise, the rows whose intervals reach
    the best point estimate's row's, best first (:func:`agreement` counts it undecided). None with no rows."""
    rows = [r for r in rows if not _missing(r.get(name))]
    if not rows:
        return None
    sign = 1.0 if highest else -1.0
    ranked = sorted(rows, key=lambda r: -sign * float(r[name]))
    best = ranked[0]
    wanted = "above" if highest else "below"
    tied = [r for r in ranked[1:] if interval_order(best, r, name) != wanted]
    if not tied:
        return best["label"]
    return f"{NOT_SEPARATED}: " + ", ".join(r["label"] for r in [best, *tied])


# --------------------------------------------------------------------------- agreement with the paper


def is_decisive(reading) -> bool:
    """Whether a reading decides its claim: not one of :data:`UNDECIDED_READINGS` and not a best row
    :data:`NOT_SEPARATED` from the next."""
    if isinstance(reading, str) and reading.startswith(NOT_SEPARATED):
        return False
    return not any(reading is u or reading == u for u in UNDECIDED_READINGS)


def agreement(ours, paper) -> str:
    """``agree`` when both readings are decisive and the same, ``disagree`` when both are decisive and differ,
    ``undecided`` when either is not (overlap against overlap is undecided, never agreement)."""
    if not (is_decisive(ours) and is_decisive(paper)):
        return "undecided"
    return "agree" if ours == paper else "disagree"


def claim_entry(ours, paper) -> dict:
    """A check's entry for one claim read on both sides: ``ours``, ``paper`` and their :func:`agreement`."""
    return {"ours": ours, "paper": paper, "agreement": agreement(ours, paper)}


def agreement_counts(agreements: Iterable[str]) -> dict[str, int]:
    """How many of ``agreements`` (values of :func:`agreement`) agree, disagree and are undecided, and the total."""
    counts = {a: 0 for a in AGREEMENTS}
    for a in agreements:
        if a not in counts:
            raise ValueError(f"an agreement is one of {', '.join(AGREEMENTS)}, got {a!r}")
        counts[a] += 1
    counts["total"] = sum(counts[a] for a in AGREEMENTS)
    return counts


def counts_sentence(counts: dict[str, int], what: str = "claims") -> str:
    """``"of 40 claims: 6 agree, 3 disagree, 31 undecided"`` from :func:`agreement_counts`."""
    return (
        f"of {counts['total']} {what}: {counts['agree']} agree, {counts['disagree']} disagree, "
        f"{counts['undecided']} undecided"
    )


# --------------------------------------------------------------------------- budget


def steps_text(steps: float) -> str:
    """Environment steps in k/M units: 800k, 1.6M, 10M."""
    steps = float(steps)
    if abs(steps) >= 1e6:
        return f"{steps / 1e6:.3g}M"
    if abs(steps) >= 1e3:
        return f"{steps / 1e3:.3g}k"
    return f"{steps:g}"


def budget(steps: int | None, paper_steps: int | None, seeds: int | None, paper_seeds: int | None = None) -> dict:
    """The budget a verdict was judged at: ``steps`` per seed, the paper's, their ratio ``fraction`` (None where
    either is unknown), ``seeds`` and the paper's, and :func:`budget_sentence`."""
    fraction = steps / paper_steps if steps and paper_steps else None
    out = {"steps": steps, "paper_steps": paper_steps, "fraction": fraction, "seeds": seeds, "paper_seeds": paper_seeds}
    out["sentence"] = budget_sentence(out)
    return out


def budget_sentence(b: dict) -> str:
    """``"at 800k steps per seed (8% of the paper's 10M), 5 seeds (the paper's 10)"`` from :func:`budget`."""
    parts = []
    if b.get("steps"):
        text = f"at {steps_text(b['steps'])} steps per seed"
        if b.get("fraction") is not None:
            percent = 100.0 * b["fraction"]
            share_text = f"{percent:.0f}%" if percent >= 10 else f"{percent:.2g}%"
            text += f" ({share_text} of the paper's {steps_text(b['paper_steps'])})"
        elif b.get("paper_steps") is None:
            text += " (the paper states no budget)"
        parts.append(text)
    if b.get("seeds"):
        seeds = f"{b['seeds']} seed{'s' if b['seeds'] != 1 else ''}"
        if b.get("paper_seeds") and b["paper_seeds"] != b["seeds"]:
            seeds += f" (the paper's {b['paper_seeds']})"
        parts.append(seeds)
    return ", ".join(parts)
