"""Diagnostics read back from a run directory.

:func:`variance_floor_warning`: a Cantelli VaR run whose last iterations broke the variance floor of Prop. 4.1 of
"Canary: Value-at-Risk constraints via Cantelli's inequality" (arXiv:2601.22993), from the per-iteration metrics
of :func:`saferl.algos.cantelli_theory.floor_metrics`.  :func:`print_resume_warnings` is the hook the run drivers
call when they resume a run (``on_resume`` of :func:`saferl.training.runs.train`).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from saferl.algos import cantelli_theory
from saferl.training import run_directory

#: the fraction of a run's last iterations :func:`variance_floor_warning` reads (as the summary's ``final``)
WARNING_FRACTION = 0.1


def print_resume_warnings(run_dir: Path) -> None:
    """Every diagnostic warning of ``run_dir`` on stderr, one line each (nothing when there is none)."""
    warning = variance_floor_warning(run_dir)
    if warning:
        print(warning, file=sys.stderr)


def variance_floor_warning(run_dir) -> str | None:
    """One warning line when ``run_dir`` is a VaR run with the ``cantelli`` surrogate whose progress says
    its regime is out of Cantelli's reach: over the last 10% of its logged iterations (all seeds) the
    measured variance exceeded Prop. 4.1's floor rho^2 / beta in more than half of the rows.  None when
    the run is another kind, its rows lack the metrics, or anything cannot be read."""
    try:
        cfg = run_directory.load_run_config(run_dir)
        constraint = cfg.get("constraint") or {}
        if constraint.get("type") != "var" or constraint.get("surrogate", "cantelli") != "cantelli":
            return None
        rho, eps = float(constraint["rho"]), float(constraint["epsilon"])
        rows = [r for r in run_directory.read_progress(run_dir) if "cantelli_feasible" in r]
    except (run_directory.RunError, KeyError, TypeError, ValueError, OSError):
        return None
    if not rows:
        return None
    last = max(r["iteration"] for r in rows)
    cutoff = last - max(1, math.ceil(WARNING_FRACTION * last))
    tail = [r for r in rows if r["iteration"] > cutoff and not math.isnan(r["cantelli_feasible"])]
    if not tail:
        return None
    feasible = sum(r["cantelli_feasible"] for r in tail) / len(tail)
    if feasible >= 0.5:
        return None

    def mean_of(name):
        values = [r[name] for r in tail if name in r and not math.isnan(r[name])]
        return sum(values) / len(values) if values else math.nan

    sd = math.sqrt(max(mean_of("cantelli_variance"), 0.0))
    mu = mean_of("episode_discounted_cost")
    iterations = len({r["iteration"] for r in tail})
    return (
        f"saferl: warning: rho = {rho:g}, epsilon = {eps:g} looks out of Cantelli's reach for this run: "
        f"over its last {iterations} iteration(s) the cost return had mean {mu:.4g} and SD {sd:.4g}, above "
        "the variance floor of Canary's Prop. 4.1 "
        f"(SD <= rho / sqrt(1/eps - 1) = {cantelli_theory.sd_floor(rho, eps):.4g}) "
        f"in {100.0 * (1.0 - feasible):.0f}% of rows; no policy with that variance can satisfy the Cantelli "
        "constraint (eq. 20) at any mean"
    )
