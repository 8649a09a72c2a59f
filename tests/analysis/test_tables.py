"""Readable results tables (saferl/analysis/tables.py) and ``saferl show``."""

from __future__ import annotations

import json
import re

import pytest

from saferl.analysis import tables
from saferl.cli import main


def test_numbers_read_at_three_significant_digits():
    assert [tables.format_number(v) for v in (27.15577, 0.04321, 1004.02, 8.0978, 123456.0, 3.2e-5, 0.0)] == [
        "27.2",
        "0.0432",
        "1,004",
        "8.10",
        "123,456",
        "3.2e-05",
        "0",
    ]
    assert tables.format_number(float("nan")) == "nan" and tables.format_number(None) == "-"
    assert tables.format_number(True) == "True" and tables.format_number(2_000_000) == "2,000,000"


def _rows():
    return [
        {
            "method": "CPO (OmniSafe units)",
            "label": "CPO",
            "algo": "cpo",
            "final_cost": 31.5,
            "final_cost_lo": 30.1,
            "final_cost_hi": 32.7,
            "paper_final_cost": 28.2,
            "paper_final_cost_lo": 24.8,
            "paper_final_cost_hi": 32.3,
            "safety": "probably_unsafe",
            "seeds": 5,
            "wall_seconds": 475.3,
        },
        {
            "method": "TRPO",
            "label": "TRPO",
            "algo": "trpo",
            "final_cost": 51.9,
            "final_cost_lo": 49.6,
            "final_cost_hi": 54.5,
            "safety": "probably_unsafe",
            "seeds": 5,
            "wall_seconds": 758.2,
        },
    ]


def test_intervals_merge_into_one_cell_and_the_papers_number_follows_ours():
    rows = _rows()
    assert tables.table_columns(rows) == ["method", "final_cost", "paper_final_cost", "safety"]
    lines = tables.render_rows(rows).splitlines()
    assert lines[0].split() == ["method", "final_cost", "paper", "final_cost", "safety"]
    assert lines[2].startswith("CPO (OmniSafe units)") and "31.5 [30.1, 32.7]" in lines[2]
    assert "28.2 [24.8, 32.3]" in lines[2] and lines[2].endswith("probably_unsafe")
    assert "51.9 [49.6, 54.5]" in lines[3] and "475" not in lines[2]  # bookkeeping stays in results.json
    assert len({len(line) for line in lines}) == 1  # aligned
    se = tables.render_rows([{"method": "Canary", "P_hat": 0.043, "P_hat_se": 0.005}])
    assert "0.0430 ± 0.00500" in se


def test_rows_without_a_method_keep_their_label():
    rows = [{"surrogate": "cantelli", "label": "Cantelli (Canary)", "epsilon": 0.05, "kappa2_value": 0.0055}]
    assert tables.table_columns(rows) == ["surrogate", "label", "epsilon", "kappa2_value"]


def test_saferl_show_prints_a_results_json_and_refuses_what_is_not_one(tmp_path, capsys):
    result = {
        "target": "ctrpo-pointgoal",
        "scale": "cpu",
        "git_commit": "0123456789abcdef",
        "rows": _rows(),
        "checks": {"safety": {"TRPO": "probably_unsafe"}},
        "runs": [{"run": "runs/TRPO", "reused": True, "code_changes_since_training": ["saferl/training/trainer.py"]}],
        "runs_training_seconds": 758.2,
        "settings": {"paper": "C-TRPO paper Table 1"},
    }
    (tmp_path / "results.json").write_text(json.dumps(result))
    assert main(["show", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ctrpo-pointgoal at scale cpu (code 0123456789ab)")
    assert 'check safety: {"TRPO": "probably_unsafe"}' in out
    assert "trained by other code than the table's: runs/TRPO" in out and "paper: C-TRPO paper Table 1" in out
    assert main(["show", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("saferl: error: ") and "holds no results.json" in err and "\n" not in err
    (tmp_path / "results.json").write_text("{not json")
    assert main(["show", str(tmp_path)]) == 2
    assert "is not valid JSON" in capsys.readouterr().err


@pytest.mark.parametrize("path", ["docs/results/ctrpo-fig2-full", "docs/results/svae-table2-full"])
def test_every_committed_results_json_renders(path):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    text = tables.render_result(tables.load_result(root / path))
    assert text.count("\n") >= 3


def test_step_ticks_read_in_k_and_m_units():
    from saferl.analysis.plotting import step_label

    assert [step_label(v) for v in (0, 999, 120_000, 1_500_000, 2e6)] == ["0", "999", "120k", "1.5M", "2M"]


def test_every_committed_table_names_its_code_and_no_run_was_trained_by_other_code():
    """A committed results.json records the commit that made it, and every run it tabulates was
    trained by that code (``code_changes_since_training`` is empty: nothing migrated across code versions)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    paths = sorted((root / "docs" / "results").glob("*/results.json"))
    assert len(paths) >= 10
    for path in paths:
        result = tables.load_result(path)
        name = path.parent.name
        commit = result.get("git_commit") or ""
        assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?", commit), f"{name}: no commit recorded"
        assert not commit.endswith("-dirty"), f"{name}: tabulated by edited code"
        for run in result.get("runs") or []:
            assert run.get("code_changes_since_training") == [], f"{name}: {run['run']} trained by other code"


def test_the_budget_is_printed_first_and_the_rules_commit_after_the_checks():
    checks = {
        "safety": {"A": "probably_safe"},
        "budget": {"Run": {"sentence": "at 1.6M steps per seed (50% of the paper's 3.2M), 4 seeds"}, "source": "S"},
    }
    text = tables.render_result(
        {"target": "t", "scale": "cpu", "rows": [], "checks": checks, "checks_judged_by": "a" * 40}
    )
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(("budget", "check")))
    assert lines[first] == "budget: Run at 1.6M steps per seed (50% of the paper's 3.2M), 4 seeds (S)"
    assert lines[first + 1].startswith("check safety") and not any(line.startswith("check budget") for line in lines)
    assert f"checks judged by code {'a' * 12}" in text
    retabulated = {"checks": checks, "checks_judged_by": "b" * 40, "retabulated_by": "b" * 40, "retabulated_from": "K"}
    text = tables.render_result({"target": "t", "scale": "cpu", "rows": [], **retabulated})
    assert f"rows and checks tabulated again by code {'b' * 12} from the kept runs in K" in text
