"""``foundation-pointgoal``: PPO vs PPO-Lag on PointGoal1 with cost limit 25 (the shared deep-RL scales)."""

from __future__ import annotations

from pathlib import Path

from saferl.reproduce import deep_rl
from saferl.reproduce.framework import Scale, target

# OmniSafe's multiplier learning rate (0.035) needs ~10M steps on this task before the cost settles at
# the limit (its benchmark: 25.8 at 10M); 0.1 makes the constraint bind within the cpu budget (2M steps).
# An option, so the row says so.
METHODS = [("PPO", "ppo", {}), ("PPO-Lag (option: multiplier lr 0.1)", "ppo_lag", {"hparams": {"lagrange_lr": 0.1}})]


def checks(rows: list[dict]) -> dict:
    """Each method's safety verdict (verdicts.safety_verdict), and whether PPO-Lag's cost regret is below PPO's."""
    by = {row["algo"]: row for row in rows}
    checks = deep_rl.safety_checks(rows)
    if "ppo" in by and "ppo_lag" in by:  # smoke trains PPO-Lag alone
        checks["ppo_lag_regret_below_ppo"] = bool(by["ppo_lag"]["cost_regret"] < by["ppo"]["cost_regret"])
    return checks


@target(
    "foundation-pointgoal",
    "PPO vs PPO-Lag on PointGoal1, cost limit 25 (final return, cost, cost regret)",
    scales=deep_rl.scales(
        runs=len(METHODS),
        smoke={"methods": [METHODS[1][0]], "runs": 1, "note": "PPO-Lag only (each method is a compile)"},
    ),
    checks=checks,
)
def run(scale: Scale, out: Path) -> dict:
    base = {"constraint": {"type": "expected", "limit": 25.0}, **deep_rl.train_settings(scale)}
    result = deep_rl.compare_algorithms(
        deep_rl.methods_at(METHODS, scale), "PointGoal1", out, base, show_progress=scale.name != "smoke"
    )
    result["settings"] = base
    return result
