"""Load a script of benchmarks/ or benchmarks/fidelity/ (a file, not a package module) in a test."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent


def load_benchmark_script(name: str):
    """Import ``benchmarks/<name>.py`` as a module; benchmarks/ goes on ``sys.path`` for the scripts that import a
    sibling (authors_runs.py and fig3_leave_out.py import authors_at_budget)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_fidelity_script(name: str):
    """Import ``benchmarks/fidelity/<name>.py``; its folder goes on ``sys.path``, as when the script runs (the
    fidelity scripts import their siblings: common, suite_tasks)."""
    fidelity = str(BENCHMARKS / "fidelity")
    if fidelity not in sys.path:
        sys.path.insert(0, fidelity)
    return importlib.import_module(name)
