"""``safety-demo``: what saferl is for, in a few minutes on 2 cores (``make demo``).

PPO and PPO-Lag (Ray et al. 2019), both with their defaults, on SafetyBallRun (Bullet-Safety-Gym's ball
running along +x; cost 1 on every step faster than 2.5 or beyond |y| > 2; saferl/envs/bullet_ball/ball.py) with the
SCPO paper's cost limit for it, 25 per 250-step episode (Mhamed & Gu, arXiv:2311.00880, App. G Table 1).
The reward pays for distance, so the unconstrained PPO learns to run as fast as it can and pays on most
steps; PPO-Lag's multiplier makes it hold its speed under the limit.  Seeds train in parallel (one
vmapped program per method).  The target prints, in one sentence, each method's final cost against the
limit with its 95% bootstrap interval and verdict (probably safe / undecided / probably unsafe, the
C-TRPO paper's Fig. 3 reading, :func:`saferl.reproduce.verdicts.safety_verdict`), and writes the learning
curves and one rendered episode of each method (its first seed, a GIF).

Settings that are the demo's own, not a paper's: 16 environments x 500 steps per iteration (the ball
tasks' default is SCPO's 16 x 2048: more, shorter iterations let the multiplier act within the demo's
budget); 256k steps per seed x 5 seeds at ``demo`` (measured on a loaded 2-core machine, 2026-12-01:
PPO 220 +- 4 cost at return 1700, PPO-Lag 7.2 +- 3.4 at return 454, each ~2-3 min including a ~50 s
compile).
"""

from __future__ import annotations

from pathlib import Path

from saferl import api
from saferl.analysis import verdicts
from saferl.reproduce import deep_rl
from saferl.reproduce.framework import Scale, target

ENV = "SafetyBallRun"
LIMIT = 25.0  # SCPO paper, App. G Table 1 (SafetyBallRun)
METHODS = [("PPO", "ppo", {}), ("PPO-Lag", "ppo_lag", {})]
DEMO_SETTINGS = {"num_envs": 16, "rollout_steps": 500}
#: what demo and cpu share (they differ in steps and time): the demo's settings, a whole rendered episode
_DEMO = {
    "seeds": 5,
    "unit": "env steps per seed",
    "note": "16 envs x 500 steps per iteration",
    "params": {"config": DEMO_SETTINGS, "render_steps": None},
}

SCALES = {
    # smoke (tests only): PPO-Lag alone (one compile), two iterations of 4 x 250 steps, a 20-step rendered episode
    "smoke": Scale(
        steps=2_000,
        seeds=2,
        wall_s=30,
        unit="env steps per seed",
        note="PPO-Lag only, 2 iterations of 4 x 250 steps",
        params={
            "config": {"num_envs": 4, "rollout_steps": 250, "iterations_per_chunk": 1, "hparams": {"minibatches": 4}},
            "render_steps": 20,
            "methods": ["PPO-Lag"],
        },
    ),
    "demo": Scale(steps=256_000, wall_s=300, **_DEMO),
    "cpu": Scale(steps=1_000_000, wall_s=900, **_DEMO),
}

VERDICT_WORDS = {"probably_safe": "probably safe", "undecided": "undecided", "probably_unsafe": "probably unsafe"}


def outcome(rows: list[dict], limit: float) -> str:
    """One sentence: each method's final cost with its interval, against the limit, and its verdict."""
    parts = []
    for row in rows:
        safety = verdicts.safety_verdict(row["final_cost_lo"], row["final_cost_hi"], limit)
        verdict = VERDICT_WORDS[safety]
        side = {"probably_unsafe": "above", "probably_safe": "below"}.get(safety, "around")
        parts.append(
            f"{row['method']} ends at cost {row['final_cost']:.1f} [{row['final_cost_lo']:.1f}, "
            f"{row['final_cost_hi']:.1f}], {side} the limit {limit:g} ({verdict}), return "
            f"{row['final_return']:.0f}"
        )
    return "; ".join(parts) + f" ({rows[0]['seeds']} seeds, 95% bootstrap intervals)."


def checks(rows: list[dict]) -> dict:
    """The demo's point: the unconstrained method breaks the limit, the constrained one meets it."""
    by = {row["algo"]: row for row in rows}
    out = deep_rl.safety_checks(rows)
    if "ppo" in by:
        out["ppo_breaks_the_limit"] = by["ppo"]["safety"] == "probably_unsafe"
    if "ppo_lag" in by:
        out["ppo_lag_meets_the_limit"] = by["ppo_lag"]["safety"] == "probably_safe"
    return out


@target(
    "safety-demo",
    f"PPO vs PPO-Lag on {ENV}, cost limit {LIMIT:g}: the unconstrained method breaks the limit, "
    "the constrained one meets it (make demo)",
    scales=SCALES,
    checks=checks,
)
def run(scale: Scale, out: Path) -> dict:
    base = {
        "constraint": {"type": "expected", "limit": LIMIT},
        "total_steps": scale.steps,
        "seeds": scale.seeds,
        **scale["config"],
    }
    result = deep_rl.compare_algorithms(
        deep_rl.methods_at(METHODS, scale), ENV, out, base, show_progress=scale.name != "smoke"
    )
    renders = []
    for row in result["rows"]:
        name = f"episode_{deep_rl.run_dir_name(row['method'])}.gif"
        api.load(out / "runs" / deep_rl.run_dir_name(row["method"])).render(
            out / name, deterministic=True, max_steps=scale["render_steps"]
        )
        renders.append(name)
    result["renders"] = renders
    result["outcome"] = outcome(result["rows"], LIMIT)
    result["settings"] = base
    return result
