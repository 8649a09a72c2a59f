"""``ctrpo-beta``: C-TRPO on AntVelocity for several barrier weights beta (App. D.1, Fig. 8), and its checks."""

from __future__ import annotations

from saferl.analysis import verdicts
from saferl.reproduce.ctrpo.ablations.common import comparable_margin
from saferl.reproduce.ctrpo.ablations.sweeps import (
    rank_correlation,
    sweep_rows,
    sweep_safety,
    sweep_target,
    where_bound,
)


def beta_checks(rows: list[dict]) -> dict:
    """Fig. 8, as claim verdicts (:mod:`saferl.analysis.verdicts`): return up to beta = 1 not below the smallest
    beta's by more than a tenth of it (non-inferiority), the largest beta's below beta = 1's; the largest beta's cost
    and regret below the smallest beta's; and the rank correlations of beta with them."""
    rows = sweep_rows(rows, "Fig. 8", "beta")
    by = {r["beta"]: r for r in rows}
    low, high, one = (rows[0] if rows else None), (rows[-1] if rows else None), by.get(1.0)
    upto = [r for r in rows if r["beta"] <= 1.0 and r is not low]
    checks = sweep_safety(rows, "beta", "beta")
    margin = comparable_margin(low, "final_return")
    checks["return up to beta = 1 not below the smallest beta's"] = verdicts.all_of(
        *(verdicts.not_worse_within(r, low, "final_return", margin) for r in upto)
    )
    above = high if high is not None and high["beta"] > 1.0 else None
    checks["return at the largest beta below beta = 1's"] = verdicts.ordered(above, one, "final_return", "<")
    for name in ("final_cost", "cost_regret"):
        verdict = verdicts.ordered(high, low, name, "<") if high is not low else "undecided"
        checks[f"{name} at the largest beta below the smallest beta's"] = (
            where_bound([high, low], verdict) if name == "cost_regret" else verdict
        )
        checks[f"rank correlation of beta and {name}"] = rank_correlation(
            [r["beta"] for r in rows], [r[name] for r in rows]
        )
    return checks


run_beta = sweep_target(
    "beta",
    "ctrpo-beta",
    "C-TRPO on AntVelocity for several beta (App. D.1, Fig. 8): final return, cost, cost regret",
    beta_checks,
)
