"""benchmarks/rejudge.py: committed results judged again by today's claims vocabulary, and kept so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from bench_scripts import load_benchmark_script

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rejudge():
    return load_benchmark_script("rejudge")


def test_leaves_read_old_names_and_the_boolean_agreement(rejudge):
    old = {"safe_no_later": {"Run": {"no_later": "reproduced"}}, "claim": {"ours": "above", "agree": True}}
    assert rejudge.leaves(old) == {
        "safe_sooner / Run / sooner": "reproduced",
        "claim / ours": "above",
        "claim / agreement": "agree",
    }
    new = {"safe_sooner": {"Run": {"sooner": "not_reproduced"}}, "claim": {"ours": "above", "agreement": "agree"}}
    new["budget"] = {"Run": {"sentence": "at 1M steps per seed"}}
    assert rejudge.changes(old, new) == [("safe_sooner / Run / sooner", "reproduced", "not_reproduced")]
    assert rejudge.budget_lines(new) == ["Run: at 1M steps per seed"]


def test_cartsafe_never_safe_against_never_safe_is_no_longer_sooner(rejudge, tmp_path, capsys):
    """The committed CartSafe table, judged before the vocabulary, called SCPO safe no later than CPO and PDO
    (inf <= inf) though SCPO itself never stays safe on the mean curve: judged again it is undecided."""
    folder = tmp_path / "scpo-cartsafe-cpu"
    shutil.copytree(ROOT / "docs" / "results" / "scpo-cartsafe-cpu", folder)
    result = json.loads((folder / "results.json").read_text())
    checks = result["checks"]  # as written before the vocabulary: "safe_no_later", inf <= inf reproduced
    checks["safe_no_later"] = checks.pop("safe_sooner", None) or checks["safe_no_later"]
    entry = checks["safe_no_later"]["vs CPO (J_c units)"]
    entry.pop("sooner", None)
    entry["no_later"] = entry["verdict"] = "reproduced"
    (folder / "results.json").write_text(json.dumps(result))
    assert rejudge.main([str(folder), "--write", "--report", str(tmp_path / "report.md")]) == 0
    out = capsys.readouterr().out
    assert "safe_sooner / vs CPO (J_c units) / sooner: reproduced -> undecided" in out
    written = json.loads((folder / "results.json").read_text())
    assert written["checks"]["safe_sooner"]["vs CPO (J_c units)"]["sooner"] == "undecided"
    assert written["git_commit"] == result["git_commit"] and "checks_judged_by" in written
    assert (
        "| safe_sooner / vs CPO (J_c units) / verdict | reproduced | undecided |"
        in (tmp_path / "report.md").read_text()
    )
    with pytest.raises(SystemExit, match="neither a results.json nor a directory"):
        rejudge.main([str(tmp_path / "nothing")])


def test_every_committed_table_is_judged_by_todays_rules(rejudge):
    """Each committed results.json's checks are what today's check functions make of its rows and runs: a change to
    a rule shows here until ``python benchmarks/rejudge.py --write`` judges the tables again."""
    paths = rejudge.default_paths()
    assert len(paths) >= 20
    stale = {}
    for path in paths:
        result = json.loads(path.read_text())
        today = rejudge.rejudge(result)
        changed = rejudge.changes(result["checks"], today)
        budget = result["checks"].get("budget") != today.get("budget")
        if changed or budget:
            stale[path.parent.name] = changed[:3] or ["budget"]
    assert not stale, stale
