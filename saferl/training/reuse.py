"""Train, resume or reuse a run directory, and the ledger of the runs a caller used.

:func:`train_or_resume` is what every caller that owns a list of run directories does with each (a reproduce
target, ``saferl sweep``): a finished run of the same config is reused, an interrupted one is finished from its
checkpoint, anything else is trained.  :func:`finished_summary` answers the first question alone, before any
work starts.

:func:`recording` opens a ledger for the runs used inside a ``with`` block (a reproduce target's results.json
lists them under ``runs``); :func:`record_run` adds one.  Outside such a block :func:`record_run` does nothing,
so the helpers that call it work on their own too.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import sys
from pathlib import Path
from typing import Callable, Iterator

from saferl.training import config as configlib
from saferl.training import run_directory, runs
from saferl.training.provenance import config_hash, training_config

RUN_STATUSES = ("trained", "resumed", "reused")


class _Ledger:
    def __init__(self, out: Path):
        self.out = Path(out)
        self.entries: dict[str, dict] = {}


_CURRENT: contextvars.ContextVar[_Ledger | None] = contextvars.ContextVar("saferl_run_ledger", default=None)


@contextlib.contextmanager
def recording(out: Path) -> Iterator[_Ledger]:
    """A ledger of the runs :func:`record_run` notes inside the block; its ``entries`` are keyed by the run's
    directory relative to ``out``."""
    ledger = _Ledger(out)
    token = _CURRENT.set(ledger)
    try:
        yield ledger
    finally:
        _CURRENT.reset(token)


def record_run(run_dir: Path, cfg: dict, summary: dict, status: str) -> None:
    """Note a training run the caller used; ``status``: trained, resumed or reused.  Outside :func:`recording`
    it does nothing."""
    ledger = _CURRENT.get()
    if ledger is None:
        return
    if status not in RUN_STATUSES:
        raise ValueError(f"run status must be trained, resumed or reused, got {status!r}")
    run_dir = Path(run_dir)
    try:
        rel = os.path.relpath(run_dir.resolve(), ledger.out.resolve())
        where = rel if not rel.startswith("..") else str(run_dir)
    except ValueError:  # another drive
        where = str(run_dir)
    entry = {
        "run": where,
        "status": status,
        "reused": status == "reused",
        "algo": cfg.get("algo"),
        "env": cfg.get("env"),
        "seeds": cfg.get("seeds"),
        "env_steps": summary.get("env_steps"),
        "wall_seconds": summary.get("training_seconds", summary.get("wall_seconds")),
        "config_hash": summary.get("config_hash") or config_hash(_run_config(run_dir, cfg)),
        "git_commit": summary.get("git_commit"),
    }
    if summary.get("git_commits"):
        entry["git_commits"] = summary["git_commits"]
    ledger.entries[where] = entry


def _run_config(run_dir: Path, cfg: dict) -> dict:
    """The run's resolved config as its config.yaml says (the config it was trained with)."""
    try:
        return run_directory.load_run_config(run_dir)
    except run_directory.RunError:
        return cfg


def finished_summary(run_dir: Path, cfg: dict) -> dict | None:
    """The summary of the finished run of ``cfg`` in ``run_dir``, or None (no run, or an interrupted one);
    a run directory holding another config raises :class:`saferl.training.run_directory.RunError`."""
    run_dir = Path(run_dir)
    if not (run_dir / "config.yaml").is_file():
        return None
    if training_config(run_directory.load_run_config(run_dir)) != training_config(cfg):
        raise run_directory.RunError(f"{run_dir} holds a run with another config; move it away or choose another --out")
    try:
        summary = json.loads((run_dir / "summary.json").read_text())
    except (OSError, ValueError):
        return None  # not finished (or its summary unreadable): trained or resumed again
    return None if summary.get("interrupted") else summary


def train_or_resume(
    cfg: dict, run_dir: Path, show_progress: bool, on_resume: Callable[[Path], None] | None = None
) -> dict:
    """Reuse the finished run in ``run_dir`` (its config must be ``cfg``), finish an interrupted one,
    or train it; the ledger (:func:`recording`) notes which.  ``on_resume`` as :func:`saferl.training.runs.train`."""
    run_dir = Path(run_dir)
    if (run_dir / "config.yaml").is_file():
        # resolved again, so a run written before a new config key existed compares equal: say so
        existing = run_directory.load_run_config(run_dir)
        filled = sorted(
            set(_flat_keys(training_config(existing))) - set(_flat_keys(configlib.load_yaml(run_dir / "config.yaml")))
        )
        legacy = {".".join(path) for path in run_directory.LEGACY_VALUES}
        same = training_config(existing) == training_config(cfg)  # the loggers may differ
        if same and filled:
            said = [k + (" (the value it was trained with)" if k in legacy else "") for k in filled]
            print(
                f"note: reusing {run_dir}, written before {', '.join(said)} existed; it is taken to have "
                "had today's defaults for them (move it away to retrain)",
                file=sys.stderr,
            )
        if not same:
            raise run_directory.RunError(f"{run_dir} holds a run with another config; choose another --out")
        summary_path = run_dir / "summary.json"
        if summary_path.is_file():
            summary = json.loads(summary_path.read_text())
            if not summary.get("interrupted"):
                record_run(run_dir, cfg, summary, "reused")
                return summary
        if (run_dir / run_directory.CHECKPOINT).is_file():
            summary = runs.train(cfg, run_dir, resume=True, show_progress=show_progress, on_resume=on_resume)
            record_run(run_dir, cfg, summary, "resumed")
            return summary
    summary = runs.train(cfg, run_dir, show_progress=show_progress)
    record_run(run_dir, cfg, summary, "trained")
    return summary


def _flat_keys(node, prefix=""):
    if not isinstance(node, dict):
        return [prefix.rstrip(".")]
    return [k for key, value in node.items() for k in _flat_keys(value, f"{prefix}{key}.")]
