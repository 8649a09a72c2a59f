"""``ctrpo-beta``: C-TRPO on AntVelocity for several barrier weights beta (App. D.1, Fig. 8), and its checks."""

from __future__ import annotations

from saferl.analysis import verdicts
from saferl.reproduce.ctrpo.ablations.sweeps import rank_correlation, sweep_rows, sweep_safety, sweep_target


def beta_checks(rows: list[dict]) -> dict:
    """Fig. 8: return not below the smallest beta's up to beta = 1, the largest beta's below beta = 1's; the largest
    beta's cost and regret below the smallest beta's, and the rank correlations of beta with them."""
    rows = sweep_rows(rows, "Fig. 8", "beta")
    by = {r["beta"]: r for r in rows}
    low, high, one = (rows[0] if rows else None), (rows[-1] if rows else None), by.get(1.0)
    upto = [r for r in rows if r["beta"] <= 1.0 and r is not low]
    orders = [verdicts.interval_order(r, low, "final_return") for r in upto]
    checks = sweep_safety(rows, "beta", "beta")
    checks["return up to beta = 1 not below the smallest beta's"] = (
        None if not upto or None in orders else all(o != "below" for o in orders)
    )
    above = high if high is not None and high["beta"] > 1.0 else None
    order = verdicts.interval_order(above, one, "final_return")
    checks["return at the largest beta below beta = 1's"] = None if order is None else order == "below"
    for name in ("final_cost", "cost_regret"):
        order = verdicts.interval_order(high, low, name) if high is not low else None
        checks[f"{name} at the largest beta below the smallest beta's"] = None if order is None else order == "below"
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
