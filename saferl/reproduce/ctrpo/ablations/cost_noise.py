"""``ctrpo-cost-noise``: C-TRPO on AntVelocity with noise on the cost value estimates (App. D.3, Fig. 11), and its
checks."""

from __future__ import annotations

from saferl.analysis import verdicts
from saferl.reproduce.ctrpo.ablations.sweeps import (
    rank_correlation,
    sweep_rows,
    sweep_safety,
    sweep_target,
    where_bound,
)


def cost_noise_checks(rows: list[dict]) -> dict:
    """Fig. 11, as claim verdicts (:mod:`saferl.analysis.verdicts`): the largest sigma's cost regret above the
    smallest's, with the rank correlation of sigma with regret ("the cost regret increases with the amount of
    noise"); the return at the largest sigma below the smallest's ("decreases slightly")."""
    rows = sweep_rows(rows, "Fig. 11", "cost_value_noise")
    low, high = (rows[0], rows[-1]) if len(rows) > 1 else (None, None)
    checks = sweep_safety(rows, "cost_value_noise", "sigma")
    checks["regret at the largest sigma above the smallest sigma's"] = where_bound(
        [high, low], verdicts.ordered(high, low, "cost_regret", ">")
    )
    checks["rank correlation of sigma and cost_regret"] = rank_correlation(
        [r["cost_value_noise"] for r in rows], [r["cost_regret"] for r in rows]
    )
    checks["return at the largest sigma below the smallest sigma's"] = verdicts.ordered(high, low, "final_return", "<")
    return checks


run_cost_noise = sweep_target(
    "cost_noise",
    "ctrpo-cost-noise",
    "C-TRPO on AntVelocity with white noise of std sigma on the cost value estimates "
    "(App. D.3, Fig. 11): final return, cost, cost regret per sigma",
    cost_noise_checks,
)
