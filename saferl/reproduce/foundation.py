"""``foundation-pointgoal``: PPO vs PPO-Lag on PointGoal1 with cost limit 25."""

from __future__ import annotations

from pathlib import Path

from saferl.reproduce import target
from saferl.reproduce.common import compare_algorithms

#: environment steps per seed and seeds at each scale
SCALES = {
    "smoke": {"total_steps": 32_000, "seeds": 2, "iterations_per_chunk": 1},
    "demo": {"total_steps": 320_000, "seeds": 3},
    "cpu": {"total_steps": 2_000_000, "seeds": 5},
    "full": {"total_steps": 10_000_000, "seeds": 5},
}


@target("foundation-pointgoal", "PPO vs PPO-Lag on PointGoal1, cost limit 25 (final return, cost, cost regret)")
def run(scale: str, out: Path) -> dict:
    base = {"constraint": {"type": "expected", "limit": 25.0}, **SCALES[scale]}
    # OmniSafe's multiplier learning rate (0.035) needs ~10M steps on this task before the cost settles at
    # the limit (its benchmark: 25.8 at 10M); 0.1 makes the constraint bind within the cpu budget (2M steps).
    methods = [("PPO", "ppo", {}), ("PPO-Lag", "ppo_lag", {"hparams": {"lagrange_lr": 0.1}})]
    result = compare_algorithms(methods, "PointGoal1", out, base, show_progress=scale != "smoke")
    result["settings"] = base
    return result
