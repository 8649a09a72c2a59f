"""benchmarks/claims_changed.py on two small results files: what changed, what agrees, and a bad task named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_scripts import load_benchmark_script

from saferl.analysis import verdicts

BENCHMARKS = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def claims_changed():
    return load_benchmark_script("claims_changed")


def _claim(ours, paper, legacy):
    """A claim entry as the target writes it; ``legacy``: as written before the three-way agreement (a boolean
    ``agree``, equality of the readings)."""
    if legacy:
        return {"ours": ours, "paper": paper, "agree": ours == paper}
    return verdicts.claim_entry(ours, paper)


def _result(commit, cost_vs_limit, best, safety, cost, only_tasks=None, legacy=False):
    checks = {
        "CarButton1": {
            "safety": {"C-TRPO": safety, "CPO": "probably_unsafe"},
            "C-TRPO final cost vs limit": _claim(cost_vs_limit, "probably_unsafe", legacy),
            "best return among admissible": _claim(best, "P3O", legacy),
        },
        "PointGoal1": {"C-TRPO final cost vs limit": _claim("probably_safe", "undecided", legacy)},
    }
    rows = [
        dict(env="CarButton1", method="C-TRPO", final_return=1.0, final_cost=cost, safety=safety),
        dict(env="PointGoal1", method="C-TRPO", final_return=9.0, final_cost=20.0, safety="probably_safe"),
    ]
    out = dict(target="ctrpo-table1", scale="cpu", git_commit=commit, checks=checks, rows=rows)
    if only_tasks:
        out["only_tasks"] = only_tasks
    return out


def test_changes_name_each_changed_reading_and_its_agreement(claims_changed):
    before = _result("a" * 40, "probably_unsafe", "CPO", "probably_unsafe", 40.0, legacy=True)
    after = _result("b" * 40, "undecided", "CPO", "undecided", 26.0, only_tasks=["CarButton1"])
    tasks = claims_changed.compared_tasks(before, after, None)
    assert tasks == ["CarButton1"]
    changed = {c["check"]: c for c in claims_changed.changes(before, after, tasks)}
    assert set(changed) == {"C-TRPO final cost vs limit", "safety: C-TRPO"}
    cost = changed["C-TRPO final cost vs limit"]
    # before: a file judged by equality of readings (agree: True); after: an undecided reading decides nothing
    assert (cost["before"], cost["after"], cost["agreement_before"], cost["agreement_after"]) == (
        "probably_unsafe",
        "undecided",
        "agree",
        "undecided",
    )
    assert claims_changed.counts(before, after, tasks) == {
        "before": {"agree": 1, "disagree": 1, "undecided": 0, "total": 2},
        "after": {"agree": 0, "disagree": 1, "undecided": 1, "total": 2},
    }
    (row,) = claims_changed.row_changes(before, after, tasks)
    assert (row["final_cost_before"], row["final_cost_after"]) == (40.0, 26.0)


def test_the_command_prints_the_table_and_refuses_a_task_missing_from_one_file(claims_changed, tmp_path, capsys):
    before = _result("a" * 40, "probably_unsafe", "CPO", "probably_unsafe", 40.0)
    after = _result("b" * 40, "probably_unsafe", "P3O", "probably_unsafe", 40.0)
    del after["checks"]["PointGoal1"]
    paths = [tmp_path / "before.json", tmp_path / "after.json"]
    for path, result in zip(paths, (before, after)):
        path.write_text(json.dumps(result))
    assert claims_changed.main([str(p) for p in paths] + ["--tasks", "CarButton1"]) == 0
    text = capsys.readouterr().out
    assert (
        "after: of 2 claims: 2 agree, 0 disagree, 0 undecided; 1 checks changed" in text
        and "| CarButton1 | best return among admissible | P3O | CPO | P3O |" in text
    )
    with pytest.raises(SystemExit, match="PointGoal1 not judged in both files"):
        claims_changed.main([str(p) for p in paths] + ["--tasks", "PointGoal1"])
