"""Where a result comes from: the hash of a run's resolved config and the git commit of the code.

``config_hash(cfg)`` names a resolved config (two runs with the same hash were trained with the same
settings); ``git_commit()`` names the code.  ``saferl.training.runs`` writes both (and ``wall_seconds``) into
every run's ``summary.json``; ``saferl reproduce`` records them for every run a target used.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

GIT_TIMEOUT_SECONDS = 5.0


#: config keys that change where a run's numbers are written, not what it trains (left out of the hash)
NOT_TRAINING_KEYS = ("logger",)


def training_config(cfg: dict) -> dict:
    """``cfg`` without :data:`NOT_TRAINING_KEYS`: what two runs must share to be the same training."""
    return {k: v for k, v in cfg.items() if k not in NOT_TRAINING_KEYS}


def config_hash(cfg: dict) -> str:
    """First 16 hex digits of the sha256 of the canonical JSON of ``cfg`` (sorted keys, no spaces), without the
    keys that do not change the training (:data:`NOT_TRAINING_KEYS`: the loggers)."""
    text = json.dumps(
        training_config(cfg), sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=True, default=_builtin
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _builtin(obj):
    if hasattr(obj, "tolist"):  # numpy scalars and arrays
        return obj.tolist()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"cannot hash a config holding {type(obj).__name__}")


#: the tracked paths whose edits make a checkout's code differ from its HEAD (``-dirty``); results, docs and
#: benchmarks are not code a run executes (``benchmarks/rerun_committed_tables.sh`` copies tables into docs/results
#: between targets, which made every later target of its run "-dirty" until 2026-12-02)
CODE_PATHS = ("saferl", "pyproject.toml")


def git_commit() -> str | None:
    """HEAD of the git checkout saferl is imported from, ``-dirty`` appended when tracked files under
    :data:`CODE_PATHS` differ from it; None when saferl is not imported from a git checkout (an installed
    package) or git is unavailable.  Never raises."""
    try:
        root = Path(__file__).resolve().parents[2]
        tracked = _git(root, "ls-files", "--error-unmatch", "saferl/__init__.py")
        if tracked is None:  # not a checkout, or one that does not track this package (a venv inside a repo)
            return None
        head = _git(root, "rev-parse", "--verify", "HEAD")
        if not head:
            return None
        status = _git(root, "status", "--porcelain", "--untracked-files=no", "--", *CODE_PATHS)
        if status is None:
            return None
        return head.strip() + ("-dirty" if status.strip() else "")
    except Exception:  # noqa: BLE001 -- provenance must never break a run
        return None


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_SECONDS,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def code_changes_since(commit: str | None, paths: tuple[str, ...] = ("saferl",)) -> list[str] | None:
    """The files under ``paths`` that differ between ``commit`` (a ``-dirty`` suffix is ignored: the run's own
    uncommitted edits are unknown) and the working tree saferl is imported from; ``[]`` when none do, None when
    that cannot be told (no commit, no git checkout, or a commit git does not know).  Never raises."""
    if not commit:
        return None
    try:
        root = Path(__file__).resolve().parents[2]
        base = commit.removesuffix("-dirty")
        out = _git(root, "diff", "--name-only", base, "--", *paths)
        if out is None:
            return None
        return sorted(line for line in out.splitlines() if line.strip())
    except Exception:  # noqa: BLE001 -- provenance must never break a run
        return None
