"""``saferl reproduce TARGET --scale {smoke,cpu,full}``: the framework every paper experiment uses.

A target is a function ``run(scale: str, out: pathlib.Path) -> dict`` registered
with :func:`target`.  It returns at least ``{"rows": [...]}``: one object per
method or condition, keyed by the paper's metric names; it may add any other
JSON-serialisable entries (fitted slopes, settings).  It writes its PNG figures
into ``out`` and lists their file names under ``"figures"``.  The framework adds
``target``, ``scale`` and ``wall_seconds`` and writes ``out/results.json``
atomically.
"""

from __future__ import annotations

import importlib
import inspect
import json
import time
from pathlib import Path
from typing import Callable

SCALES = ("smoke", "demo", "cpu", "full")

_TARGETS: dict[str, tuple[Callable, str]] = {}
_MODULES = ("foundation", "svae", "ctrpo", "canary", "canary_variance")


def target(name: str, description: str):
    def deco(fn):
        _TARGETS[name] = (fn, description)
        return fn

    return deco


def targets() -> dict[str, str]:
    for module in _MODULES:
        try:
            importlib.import_module(f"saferl.reproduce.{module}")
        except ModuleNotFoundError as err:
            if err.name != f"saferl.reproduce.{module}":
                raise
    return {name: desc for name, (_, desc) in sorted(_TARGETS.items())}


def run(name: str, scale: str, out: Path, **options) -> dict:
    """Run a target; ``options`` (e.g. ``tune=True``) go only to targets whose function accepts them."""
    known = targets()
    if name not in known:
        raise ValueError(f"unknown reproduce target {name!r}; known targets: {', '.join(known)}")
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; allowed: {', '.join(SCALES)}")
    accepted = inspect.signature(_TARGETS[name][0]).parameters
    unsupported = [k for k, v in options.items() if v and k not in accepted]
    if unsupported:
        raise ValueError(f"target {name} does not support --{', --'.join(unsupported)}")
    options = {k: v for k, v in options.items() if k in accepted}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    start = time.time()
    result = _TARGETS[name][0](scale, out, **options)
    if "rows" not in result:
        raise RuntimeError(f"target {name} returned no 'rows'")
    payload = {"target": name, "scale": scale, "wall_seconds": time.time() - start, **result}
    from saferl.runio import write_json_atomic

    write_json_atomic(out / "results.json", payload)
    return payload
