"""benchmarks/carry_runs.py: finished runs carried through the repository, without checkpoints, from one code only."""

import json
import subprocess
from pathlib import Path

import pytest
from bench_scripts import load_benchmark_script


def _module():
    return load_benchmark_script("carry_runs")


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _checkout(tmp_path) -> tuple[Path, str]:
    repo = tmp_path / "checkout"
    (repo / "saferl").mkdir(parents=True)
    (repo / "saferl" / "algo.py").write_text("x = 1\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "code")
    return repo, _git(repo, "rev-parse", "HEAD").strip()


def _run(run_dir: Path, commit: str, interrupted=False, config_hash="abc"):
    (run_dir / "checkpoints").mkdir(parents=True)
    (run_dir / "checkpoints" / "latest.npz").write_bytes(b"\0" * 64)
    (run_dir / "config.yaml").write_text("algo: ppo\n")
    (run_dir / "progress.csv").write_text("iteration,return\n0,1.5\n")
    (run_dir / "summary.json").write_text(
        json.dumps(
            {
                "interrupted": interrupted,
                "config_hash": config_hash,
                "git_commit": commit,
                "git_commits": [commit],
                "training_seconds": 36.0,
            }
        )
    )


def test_finished_runs_travel_without_checkpoints_and_come_back_as_they_were(tmp_path):
    carry = _module()
    repo, commit = _checkout(tmp_path)
    out = tmp_path / "out"
    _run(out / "TaskA" / "runs" / "PPO", commit)
    _run(out / "TaskA" / "runs" / "CPO", commit, interrupted=True)
    carried = tmp_path / "carried"
    carry.save(out, carried)
    manifest = carry.load_manifest(carried)
    assert sorted(manifest["runs"]) == ["TaskA/runs/PPO"]  # the interrupted run stays behind
    assert manifest["trained_by"] == [commit]
    assert not (carried / "TaskA" / "runs" / "PPO" / "checkpoints").exists()

    fresh = tmp_path / "next-machine"
    carry.restore(carried, fresh, repo)
    for name in ("config.yaml", "progress.csv", "summary.json"):
        assert (fresh / "TaskA/runs/PPO" / name).read_bytes() == (out / "TaskA/runs/PPO" / name).read_bytes()
    # a second restore leaves what is there alone
    (fresh / "TaskA/runs/PPO" / "progress.csv").write_text("kept\n")
    carry.restore(carried, fresh, repo)
    assert (fresh / "TaskA/runs/PPO" / "progress.csv").read_text() == "kept\n"


def test_restore_refuses_a_checkout_whose_code_differs_from_the_runs_code(tmp_path):
    carry = _module()
    repo, commit = _checkout(tmp_path)
    out = tmp_path / "out"
    _run(out / "TaskA" / "runs" / "PPO", commit)
    carried = tmp_path / "carried"
    carry.save(out, carried)
    (repo / "saferl" / "algo.py").write_text("x = 2\n")
    with pytest.raises(SystemExit, match=f"trained by {commit}.*algo.py"):
        carry.restore(carried, tmp_path / "elsewhere", repo)
    assert not (tmp_path / "elsewhere").exists()


def test_save_refuses_to_replace_a_carried_run_by_one_with_another_config(tmp_path):
    carry = _module()
    _, commit = _checkout(tmp_path)
    carried = tmp_path / "carried"
    _run(tmp_path / "a" / "runs" / "PPO", commit, config_hash="one")
    carry.save(tmp_path / "a", carried)
    _run(tmp_path / "b" / "runs" / "PPO", commit, config_hash="two")
    with pytest.raises(SystemExit, match="another config"):
        carry.save(tmp_path / "b", carried)
    assert carry.load_manifest(carried)["runs"]["runs/PPO"]["config_hash"] == "one"


def test_save_refuses_a_folder_that_git_would_not_commit(tmp_path):
    """The first carry (2026-12-02) went into benchmarks/carried/.../runs/, which the repository's ``runs/`` rule
    ignored: only the manifest was committed.  save now checks."""
    carry = _module()
    repo, commit = _checkout(tmp_path)
    (repo / ".gitignore").write_text("runs/\n")
    _run(tmp_path / "out" / "runs" / "PPO", commit)
    with pytest.raises(SystemExit, match="git ignores"):
        carry.save(tmp_path / "out", repo / "carried")
    (repo / ".gitignore").write_text("runs/\n!carried/**/runs/\n")
    carry.save(tmp_path / "out", repo / "carried")
    assert (repo / "carried" / "runs" / "PPO" / "progress.csv").is_file()


def test_interrupted_runs_travel_with_their_checkpoint_and_give_way_once_finished(tmp_path):
    """``save --interrupted``: an interrupted run goes with its checkpoint into .interrupted/, comes back under OUT
    to be resumed, is not replaced by an earlier state of itself, and is dropped once the finished run is saved."""
    carry = _module()
    repo, commit = _checkout(tmp_path)
    out = repo / "runs" / "out"  # inside the checkout, as carried runs are: its HEAD is the code training them
    run = out / "TaskA" / "runs" / "CPO"
    (run / "checkpoints").mkdir(parents=True)
    (run / "checkpoints" / "latest.npz").write_bytes(b"\1" * 64)
    (run / "config.yaml").write_text("algo: cpo\n")
    (run / "progress.csv").write_text("iteration,seed,return\n1,0,0.5\n2,0,0.7\n")
    carried = tmp_path / "carried"
    carry.save(out, carried)  # without --interrupted: nothing
    assert not carry.load_manifest(carried)["interrupted"]
    carry.save(out, carried, interrupted=True)
    manifest = carry.load_manifest(carried)
    assert manifest["interrupted"] == {"TaskA/runs/CPO": {"git_commit": commit, "iterations_logged": 2}}
    assert manifest["trained_by"] == [commit]

    fresh = tmp_path / "next-machine"
    carry.restore(carried, fresh, repo)
    assert (fresh / "TaskA/runs/CPO/checkpoints/latest.npz").read_bytes() == b"\1" * 64

    (run / "progress.csv").write_text("iteration,seed,return\n1,0,0.5\n")  # an earlier state does not replace it
    carry.save(out, carried, interrupted=True)
    assert carry.load_manifest(carried)["interrupted"]["TaskA/runs/CPO"]["iterations_logged"] == 2

    shutil_rm = __import__("shutil").rmtree
    shutil_rm(run)
    _run(run, commit)  # finished now
    carry.save(out, carried, interrupted=True)
    manifest = carry.load_manifest(carried)
    assert sorted(manifest["runs"]) == ["TaskA/runs/CPO"] and not manifest["interrupted"]
    assert not (carried / ".interrupted" / "TaskA/runs/CPO").exists()
    assert not (carried / "TaskA/runs/CPO/checkpoints").exists()
