"""Load a script of benchmarks/ (a file, not a package module) in a test."""

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
