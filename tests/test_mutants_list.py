"""The list of ``make mutants`` (tests/mutants/mutants.yaml) follows the code: every entry has its fields, its
``find`` occurs exactly once in its file, and its tests exist; the runner refuses an entry that does not apply."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def mutants():
    spec = importlib.util.spec_from_file_location("mutants_run", ROOT / "tests" / "mutants" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_mutant_applies_to_the_code_as_it_is(mutants):
    entries = mutants.load()
    assert len(entries) >= 19
    stale = {e["id"]: mutants.applies(e) for e in entries if mutants.applies(e)}
    assert not stale, stale
    assert all(e["why"] and e["tests"] for e in entries)


def test_a_stale_or_malformed_entry_is_named(mutants, tmp_path):
    (tmp_path / "m.py").write_text("x = 1\nx = 1\n")
    entry = dict(id="m", file="m.py", find="x = 1", replace="x = 2", tests=["m.py"], why="w")
    assert mutants.applies(entry, tmp_path) == "its find occurs 2 times in m.py"
    assert mutants.applies(dict(entry, file="n.py"), tmp_path) == "n.py does not exist"
    assert mutants.applies(dict(entry, find="x = 1\nx", tests=["t.py"]), tmp_path) == "its test t.py does not exist"
    bad = tmp_path / "list.yaml"
    bad.write_text("- {id: a, file: f, find: x, replace: y, tests: [t]}\n")
    with pytest.raises(SystemExit, match=r"entry 0 \(a\) has fields"):
        mutants.load(bad)
