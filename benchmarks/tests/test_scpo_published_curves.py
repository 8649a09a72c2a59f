"""The committed digitization of the SCPO authors' plots (benchmarks/scpo_published_curves.py) and the table that
sets scpo-fig5-cpu beside it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from bench_scripts import load_benchmark_script

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"


@pytest.fixture(scope="module")
def script():
    return load_benchmark_script("scpo_published_curves")


@pytest.fixture(scope="module")
def digitized():
    return json.loads((RESULTS / "scpo-published-curves" / "curves.json").read_text())


def test_the_limit_lines_read_back_as_the_limits(digitized):
    """The dash-dot cost limit of each ball task, digitized, is the task's limit (App. G Table 1) within 2% of it:
    a check of the cost axes' calibration that the tick fit did not use."""
    for task, limit in (("SafetyBallRun-v0", 25.0), ("SafetyBallCircle-v0", 25.0), ("SafetyBallGather-v0", 0.2)):
        assert digitized["calibration"][task]["cost"]["limit_line"] == pytest.approx(limit, rel=0.02), task
    assert digitized["calibration"]["SafetyBallReach-v0"]["cost"]["limit_line"] == pytest.approx(10.0, rel=0.02)


def test_a_curve_is_averaged_around_an_epoch_and_unreadable_is_nan(script, digitized):
    curves = digitized["curves"]
    run = curves["SafetyBallRun-v0"]["return"]["TRPO"]
    want = [y for x, y in zip(run["x"], run["y"]) if 48 <= x <= 52 and y is not None]
    assert script.published_at(curves, "SafetyBallRun", "return", "TRPO", 50) == pytest.approx(sum(want) / len(want))
    assert math.isnan(script.published_at(curves, "SafetyBallRun", "return", "TRPO", 1000))
    assert math.isnan(script.published_at(curves, "CartSafe", "return", "TRPO", 50))  # not plotted there


def test_the_table_beside_scpo_fig5(script, digitized):
    text = script.beside(RESULTS / "scpo-fig5-cpu" / "results.json", digitized["curves"])
    run_scpo = next(line for line in text.splitlines() if line.startswith("| SafetyBallRun (51) | SCPO |"))
    assert run_scpo.startswith("| SafetyBallRun (51) | SCPO | 564 [555, 569] / 540 | 6.1 [1.3, 14] / 2.9 |")
    assert text.count("\n") == 2 + 24  # header, rule, 6 methods x 4 tasks
