"""benchmarks/claims_three_ways.py on the committed tables: the counts the write-ups quote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_scripts import load_benchmark_script

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"


@pytest.fixture(scope="module")
def script():
    return load_benchmark_script("claims_three_ways")


def test_the_committed_counts_are_what_the_write_ups_quote(script):
    authors = json.loads((RESULTS / "ctrpo-authors-runs" / "at-cpu-budgets.json").read_text())
    ours = json.loads((RESULTS / "ctrpo-table1-cpu" / "results.json").read_text())
    table = script.table1_readings(ours["rows"], authors["table1_rows"])
    counts = script.counts([r for claims in table.values() for r in claims.values()])
    # docs/results/ctrpo-table1-cpu/README.md, "Table 1, per task" (V_r and V_c as the authors read them)
    assert [(c["agree"], c["disagree"], c["undecided"]) for c in counts.values()] == [
        (3, 1, 36),
        (5, 0, 35),
        (6, 2, 32),
    ]
    # ours against the paper is what ctrpo-table1's own checks count
    assert counts["ours vs paper"] == {
        k: v for k, v in ours["checks"]["agreement with the paper's Table 1"].items() if k != "sentence"
    }
    figure = script.fig3_readings(
        json.loads((RESULTS / "ctrpo-fig3-cpu" / "results.json").read_text())["rows"], authors["fig3_rows"]
    )
    counts = script.counts(list(figure.values()))
    # docs/results/ctrpo-fig3-cpu/README.md, "The seven claims of Sec. 5"
    assert [(c["agree"], c["disagree"], c["undecided"]) for c in counts.values()] == [(3, 0, 4), (1, 1, 5), (2, 1, 4)]


def test_the_page_and_a_bad_budget(script, capsys, tmp_path):
    assert script.main(["--json", str(tmp_path / "out.json")]) == 0
    text = capsys.readouterr().out
    assert "| ours vs paper | 3 | 1 | 36 | 40 |" in text and "## Fig. 3 (Sec. 5's claims)" in text
    assert json.loads((tmp_path / "out.json").read_text())["fig3_counts"]["ours vs paper"]["total"] == 7
    with pytest.raises(SystemExit):
        script.main(["--mirror", str(tmp_path), "--budgets", "cpu,lots"])
    assert "--budgets takes cpu or whole numbers of steps, got lots" in capsys.readouterr().err
