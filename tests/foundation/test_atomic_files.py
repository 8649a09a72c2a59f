"""Atomic writes: the file appears whole or not at all, with the permissions open() would give it."""

import os
import stat

import pytest

from saferl.foundation import atomic_files as runio


def test_an_atomic_write_gets_the_mode_of_a_plain_open(tmp_path):
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    runio.write_json_atomic(tmp_path / "results.json", {"a": 1})
    assert stat.S_IMODE(os.stat(tmp_path / "results.json").st_mode) == stat.S_IMODE(os.stat(plain).st_mode)
    assert (tmp_path / "results.json").read_text() == '{\n  "a": 1\n}\n'


def test_a_write_interrupted_before_the_rename_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "summary.json"
    target.write_text("old")

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(runio.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        runio.write_json_atomic(target, {"new": True})
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["summary.json"]
