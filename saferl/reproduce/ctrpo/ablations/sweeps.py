"""What the three sweep targets (``ctrpo-beta``, ``ctrpo-hysteresis``, ``ctrpo-cost-noise``) share: the rank
correlation and safety items of their checks, a sweep's result (rows, curve figure, settings) and
:func:`sweep_target`, which declares a target that is one sweep."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.stats

from saferl.reproduce.ctrpo.ablations.common import LIMIT, SWEEPS, plan_sweep, plot_curves, scales, train_sweep
from saferl.reproduce.ctrpo.harness import PAPER_BUDGET
from saferl.reproduce.framework import Scale, target


def rank_correlation(x, y) -> float | None:
    """Spearman's rank correlation of the means, ties given their average rank; None below 3 finite points
    or where either series is constant (a sweep whose regret is 0 throughout has no trend to rank)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = np.isfinite(x) & np.isfinite(y)
    if keep.sum() < 3 or np.ptp(x[keep]) == 0 or np.ptp(y[keep]) == 0:
        return None
    return float(scipy.stats.spearmanr(x[keep], y[keep]).statistic)


BOUND = "the constraint bound (cost regret above 0 at some swept value)"


def sweep_rows(rows: list[dict], figure: str, name: str) -> list[dict]:
    return sorted((r for r in rows if r.get("figure") == figure), key=lambda r: r[name])


def where_bound(rows: list[dict | None], verdict: str) -> str:
    """A regret claim's verdict on the compared ``rows``, or ``undecided`` where the constraint bound in none of
    them (every regret interval at 0): equal regrets of 0 are the measure's floor, not a tie the claim could be
    judged by."""
    return verdict if any(r is not None and r["cost_regret_hi"] > 0 for r in rows) else "undecided"


def sweep_safety(rows: list[dict], field: str, shown: str) -> dict:
    """Each swept value's verdict, and whether the constraint bound anywhere in the sweep: with no cost regret at
    any value (cost below the limit throughout), the sweep cannot show what the swept setting does to safety."""
    return {
        "safety": {f"{shown}={r[field]:g}": r["safety"] for r in rows},
        BOUND: any(r["cost_regret_hi"] > 0 for r in rows) if rows else None,
    }


def sweep_result(kind: str, scale: Scale, out: Path) -> dict:
    rows, entries = train_sweep(kind, scale, out)
    key, values, fixed, figure = SWEEPS[kind]
    name = f"ctrpo_{kind}_sweep.png"
    plot_curves(
        entries,
        Path(out) / name,
        f"C-TRPO on {rows[0]['env']} ({figure}), {scale.seeds} seeds (mean +- SD), limit {LIMIT:g}",
    )
    settings = {
        "env": rows[0]["env"],
        "swept": key,
        "values": list(scale["values"]),
        "hparams": fixed,
        "limit": LIMIT,
        "steps": scale.steps,
        "seeds": rows[0]["seeds"],
    }
    return {"rows": rows, "figures": [name], "settings": settings}


def sweep_target(kind: str, name: str, description: str, checks):
    """Declare the target ``name`` that is the sweep ``kind`` alone (its scales, plan and :func:`sweep_result`)."""

    @target(
        name,
        description,
        scales=scales(kind),
        checks=checks,
        plan=lambda scale, out: plan_sweep(kind, scale, out),
        paper_budget=PAPER_BUDGET,
    )
    def run(scale: Scale, out: Path) -> dict:
        return sweep_result(kind, scale, out)

    return run
