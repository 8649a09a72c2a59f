"""The claims vocabulary (saferl.analysis.verdicts), case by case against hand-computed answers.

Each rule is checked on intervals small enough to judge by eye: equal intervals, touching ends, one point against
another, "never" (inf) against "never", missing ends; then the agreement counts and the budget sentence.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from saferl.analysis import verdicts

INF, NAN = math.inf, math.nan


def row(lo, hi, key="q", label="a", point=None):
    return {"label": label, key: (lo + hi) / 2 if point is None else point, f"{key}_lo": lo, f"{key}_hi": hi}


# --------------------------------------------------------------------------- readings of intervals


@pytest.mark.parametrize(
    "lo, hi, expected",
    [
        (10.0, 25.0, "probably_safe"),  # the upper end on the limit is at or below it
        (25.0, 30.0, "undecided"),  # the lower end on the limit is not above it
        (25.5, 30.0, "probably_unsafe"),
        (30.0, INF, "probably_unsafe"),  # an infinite end is a value
        (-INF, 20.0, "probably_safe"),
        (10.0, INF, "undecided"),
        (NAN, 20.0, "undecided"),  # a missing end decides nothing
        (None, None, "undecided"),
    ],
)
def test_safety_verdict(lo, hi, expected):
    assert verdicts.safety_verdict(lo, hi, 25.0) == expected


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ((3, 4), (1, 2), "above"),
        ((1, 2), (3, 4), "below"),
        ((1, 2), (1, 2), "overlapping"),  # equal intervals
        ((1, 2), (2, 3), "overlapping"),  # touching ends
        ((0, 0), (0, 0), "overlapping"),  # one point, both sides
        ((INF, INF), (INF, INF), "overlapping"),  # never against never: one point
        ((INF, INF), (5, 9), "above"),  # never lies after every finite time
        ((5, INF), (3, 9), "overlapping"),
        ((NAN, 1), (0, 1), None),
    ],
)
def test_order(a, b, expected):
    assert verdicts.order(*a, *b) == expected
    assert verdicts.interval_order(row(*a), row(*b), "q") == expected


def test_interval_order_of_a_missing_row_or_end_is_none():
    assert verdicts.interval_order(None, row(0, 1), "q") is None
    assert verdicts.interval_order({"q": 1.0, "q_lo": 0.0}, row(0, 1), "q") is None


def test_paired_order_reads_the_mean_difference_of_paired_seeds():
    # every seed 1 above its pair: the differences are all 1, their interval [1, 1] lies above 0
    assert verdicts.paired_order([2.0, 3.0, 4.0, 5.0], [1.0, 2.0, 3.0, 4.0]) == "above"
    # the same two samples unpaired overlap: pairing is what tells them apart
    assert verdicts.order(2.0, 5.0, 1.0, 4.0) == "overlapping"
    assert verdicts.paired_order([1.0, 2.0], [2.0, 3.0]) == "below"
    # differences of both signs straddle 0
    assert verdicts.paired_order([1.0, 3.0, 1.0, 3.0], [2.0, 2.0, 2.0, 2.0]) == "overlapping"
    # both never on a seed is a tie on that seed (difference 0), never against a time is +inf
    assert verdicts.paired_order([INF, INF], [INF, INF]) == "overlapping"
    assert verdicts.paired_order([INF, INF, INF], [0.5, 0.6, 0.7]) == "above"
    # a missing value drops its pair; fewer than two pairs decide nothing
    assert verdicts.paired_order([1.0, NAN], [0.0, 0.0]) is None
    with pytest.raises(ValueError, match="one value a side per seed"):
        verdicts.paired_order([1.0], [1.0, 2.0])


def test_bootstrap_mean_keeps_never_and_drops_missing():
    mean, lo, hi = verdicts.bootstrap_mean([1.0, 2.0, None, NAN, 3.0])
    assert mean == 2.0 and 1.0 <= lo <= 2.0 <= hi <= 3.0
    # every seed never: the mean and both ends are inf
    assert verdicts.bootstrap_mean([INF, INF, INF]) == (INF, INF, INF)
    # one seed never of 4: the mean is inf; resamples without it (share (3/4)^4 = 0.32) keep the lower end finite
    mean, lo, hi = verdicts.bootstrap_mean([0.1, 0.2, 0.3, INF], reps=4000)
    assert mean == INF and math.isfinite(lo) and hi == INF
    assert all(math.isnan(v) for v in verdicts.bootstrap_mean([INF, -INF]))
    assert all(math.isnan(v) for v in verdicts.bootstrap_mean([None, NAN]))


# --------------------------------------------------------------------------- verdicts on a claim


@pytest.mark.parametrize(
    "a, b, relation, expected",
    [
        ((1, 2), (3, 4), "<", "reproduced"),
        ((3, 4), (1, 2), "<", "not_reproduced"),
        ((1, 3), (2, 4), "<", "undecided"),  # overlapping is never agreement
        ((1, 2), (1, 2), "<", "undecided"),  # equal intervals: no order shown
        ((1, 2), (2, 3), "<", "undecided"),  # touching ends: not wholly below
        ((2, 3), (1, 2), "<", "not_reproduced"),  # touching from above: a is not below
        ((0, 0), (0, 0), "<", "not_reproduced"),  # a tie refutes a strict claim
        ((INF, INF), (INF, INF), "<", "not_reproduced"),  # never against never: not sooner
        ((INF, INF), (INF, INF), ">", "not_reproduced"),
        ((0.2, 0.4), (INF, INF), "<", "reproduced"),  # safe at some point against never
        ((INF, INF), (0.2, 0.4), "<", "not_reproduced"),  # never is not sooner than anything
        ((0.2, INF), (INF, INF), "<", "undecided"),  # some resamples never: not shown
        ((3, 4), (1, 2), ">", "reproduced"),
        ((1, 2), (2, 3), ">", "not_reproduced"),
        ((NAN, 2), (3, 4), "<", "undecided"),
    ],
)
def test_ordered(a, b, relation, expected):
    assert verdicts.ordered(row(*a), row(*b), "q", relation) == expected


def test_ordered_takes_strict_relations_only():
    with pytest.raises(ValueError, match="relation must be < or >"):
        verdicts.ordered(row(0, 1), row(2, 3), "q", "<=")


@pytest.mark.parametrize(
    "a, b, margin, expected",
    [
        # difference interval [a_lo - b_hi, a_hi - b_lo]
        ((10, 11), (10, 11), 1.0, "reproduced"),  # [-1, 1] within +-1
        ((10, 11), (10, 11), 0.5, "undecided"),  # equal intervals wider than the margin decide nothing
        ((10, 12), (11, 13), 1.0, "undecided"),  # overlapping: [-3, 1]
        ((0, 10), (4, 6), 6.0, "reproduced"),  # [-6, 6]: a wide interval around a narrow one
        ((20, 21), (10, 11), 5.0, "not_reproduced"),  # [9, 11] wholly above 5
        ((10, 11), (20, 21), 5.0, "not_reproduced"),  # [-11, -9] wholly below -5
        ((20, 21), (10, 11), 9.0, "undecided"),  # [9, 11] straddles 9 (the lower end on it is not beyond)
        ((INF, INF), (INF, INF), 0.0, "reproduced"),  # never and never are equal
        ((INF, INF), (1, 2), 5.0, "not_reproduced"),
        ((1, INF), (1, 2), 5.0, "undecided"),
        ((NAN, 1), (1, 2), 5.0, "undecided"),
    ],
)
def test_equal_within(a, b, margin, expected):
    assert verdicts.equal_within(row(*a), row(*b), "q", margin) == expected


@pytest.mark.parametrize(
    "a, b, margin, higher_is_better, expected",
    [
        ((9, 10), (10, 11), 2.0, True, "reproduced"),  # a - b in [-2, 0]: not worse by more than 2
        ((9, 10), (10, 11), 1.0, True, "undecided"),  # [-2, 0] straddles -1
        ((5, 6), (10, 11), 2.0, True, "not_reproduced"),  # [-6, -4] wholly below -2
        ((20, 30), (10, 11), 0.0, True, "reproduced"),  # better is not worse
        ((10, 11), (9, 10), 2.0, False, "reproduced"),  # lower is better: b - a in [-2, 0]
        ((15, 16), (9, 10), 2.0, False, "not_reproduced"),
        ((INF, INF), (INF, INF), 0.0, True, "reproduced"),
    ],
)
def test_not_worse_within(a, b, margin, higher_is_better, expected):
    assert verdicts.not_worse_within(row(*a), row(*b), "q", margin, higher_is_better) == expected


def test_margins_must_be_numbers_at_least_zero():
    for rule in (verdicts.equal_within, verdicts.not_worse_within):
        with pytest.raises(ValueError, match="margin must be a number >= 0"):
            rule(row(0, 1), row(0, 1), "q", -1.0)
        with pytest.raises(ValueError, match="margin must be a number >= 0"):
            rule(row(0, 1), row(0, 1), "q", NAN)


def test_all_of_and_the_boolean_and_safety_claims():
    assert verdicts.all_of("reproduced", "reproduced") == "reproduced"
    assert verdicts.all_of("reproduced", "undecided") == "undecided"
    assert verdicts.all_of("undecided", "not_reproduced") == "not_reproduced"
    assert verdicts.all_of() == "undecided"  # nothing shown is nothing reproduced
    assert [verdicts.as_claim(v) for v in (True, False, None)] == ["reproduced", "not_reproduced", "undecided"]
    assert verdicts.safety_as_claim({"safety": "probably_safe"}) == "reproduced"
    assert verdicts.safety_as_claim({"safety": "probably_unsafe"}) == "not_reproduced"
    assert verdicts.safety_as_claim({}) == "undecided"


def test_best_of_names_a_best_row_only_when_its_interval_is_separated():
    a, b, c = row(8, 10, label="A", point=9), row(5, 7, label="B", point=6), row(1, 2, label="C", point=1.5)
    assert verdicts.best_of([b, a, c], "q") == "A"
    assert verdicts.best_of([b, a, c], "q", highest=False) == "C"
    close = row(6.5, 8.5, label="D", point=7.5)
    assert verdicts.best_of([b, a, close], "q") == "not separated: A, D"
    # every row at 0 (no cost regret anywhere): no best
    zeros = [row(0, 0, label=x, point=0.0) for x in "XYZ"]
    assert verdicts.best_of(zeros, "q", highest=False) == "not separated: X, Y, Z"
    assert verdicts.best_of([], "q") is None


# --------------------------------------------------------------------------- agreement with the paper


@pytest.mark.parametrize(
    "ours, paper, expected",
    [
        ("above", "above", "agree"),
        ("above", "below", "disagree"),
        ("overlapping", "overlapping", "undecided"),  # overlap against overlap is never agreement
        ("overlapping", "below", "undecided"),
        ("undecided", "undecided", "undecided"),
        ("probably_safe", "probably_unsafe", "disagree"),
        ("reproduced", "reproduced", "agree"),
        ("P3O", "P3O", "agree"),
        ("P3O", "CPO", "disagree"),
        ("not separated: P3O, CPO", "P3O", "undecided"),
        (None, "above", "undecided"),
        (True, True, "agree"),
        (False, True, "disagree"),
    ],
)
def test_agreement(ours, paper, expected):
    assert verdicts.agreement(ours, paper) == expected
    assert verdicts.claim_entry(ours, paper) == {"ours": ours, "paper": paper, "agreement": expected}


def test_agreement_counts_report_the_three_apart():
    counts = verdicts.agreement_counts(["agree"] * 6 + ["disagree"] * 3 + ["undecided"] * 31)
    assert counts == {"agree": 6, "disagree": 3, "undecided": 31, "total": 40}
    assert verdicts.counts_sentence(counts) == "of 40 claims: 6 agree, 3 disagree, 31 undecided"
    with pytest.raises(ValueError, match="an agreement is one of"):
        verdicts.agreement_counts(["agree", True])


# --------------------------------------------------------------------------- budget


def test_budget_sentence_gives_the_share_of_the_papers_steps_and_the_seeds():
    b = verdicts.budget(800_000, 10_000_000, 5, 5)
    assert b["fraction"] == pytest.approx(0.08)
    assert b["sentence"] == "at 800k steps per seed (8% of the paper's 10M), 5 seeds"
    b = verdicts.budget(1_638_400, 3_200_000, 4, 10)
    assert b["sentence"] == "at 1.64M steps per seed (51% of the paper's 3.2M), 4 seeds (the paper's 10)"
    assert (
        verdicts.budget(120_000, 10_000_000, 5)["sentence"]
        == "at 120k steps per seed (1.2% of the paper's 10M), 5 seeds"
    )
    none = verdicts.budget(3_276_800, None, 4)
    assert none["fraction"] is None
    assert none["sentence"] == "at 3.28M steps per seed (the paper states no budget), 4 seeds"
    assert verdicts.budget(None, None, 1)["sentence"] == "1 seed"
    assert np.isclose(verdicts.budget(20_000_000, 10_000_000, 5)["fraction"], 2.0)
