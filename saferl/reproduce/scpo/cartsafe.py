"""``scpo-cartsafe``: the SCPO paper's discrete task, App. F.2.2 / Fig. 13: SCPO and the Fig. 5 baselines on CartSafe.

Mhamed & Gu, "SCPO: Safe Reinforcement Learning with Safety Critic Policy Optimization" (arXiv:2311.00880).
CartSafe (jemaw/gym-safety ``CartSafe-v0``, :mod:`saferl.envs.cartsafe`): 300-step episodes, cost 1 per step
with the cart outside |x| <= 1, cost limit 1 (App. G Table 1; the authors' ``utils/env_info.py`` says 0.5,
``constraint.limit: 0.5`` gives it -- see the environment's docstring for why the paper's value is the default).

The methods, their settings and sources, the rows' columns and how every verdict is read from intervals are
those of :mod:`saferl.reproduce.scpo.fig5` (SCPO with its CartSafe Table 2 entry: k 5, beta 3, b 0, entropy
0.001; baselines with RL-Safety-Algorithms' settings, B = 32000).  Fig. 13's figure is not in the text we have;
App. F.2.2 says what it shows, and two further columns check it:

* ``first_cost``   -- the episode cost of the first iteration (the initial, random policy), mean and interval
  over seeds: the paper says a random policy "violates the safety constraint with high probability";
* ``return_gain``  -- per seed the final return minus the first iteration's, mean and interval over seeds.

RL-Safety-Algorithms has no CartSafe benchmark and the paper states no budget: ``full`` gives it RL-Safety-
Algorithms' SafetyBallRun budget, 100 iterations of 32000 steps (3.2M), a choice of ours; ``cpu`` the same
(~4,000 CPU-s for the six runs at the rates measured in :mod:`~saferl.reproduce.scpo.fig5`, ~2.5 h of wall time
at load 12).
Discrete actions: the baselines' fixed, annealed action std does not apply (a categorical policy;
:func:`~saferl.reproduce.scpo.common.categorical`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from saferl.analysis import verdicts
from saferl.reproduce import deep_rl
from saferl.reproduce.framework import PaperBudget, Scale, target
from saferl.reproduce.scpo.common import (
    CONSTRAINED,
    METHODS,
    SMOKE_SHRINK,
    categorical,
    one_task_scale,
    run_one_task,
    smoke_scale,
)
from saferl.reproduce.scpo.stats import SAFE_SOONER, by_task, claim, final_window, safe_sooner_entry

TASK = "CartSafe"
FIGURE, TITLE = "scpo_cartsafe.png", "SCPO paper Fig. 13 (CartSafe)"
PAPER = "SCPO paper (arXiv:2311.00880) App. F.2.2 / Fig. 13: claims in checks"
_F22 = (
    "Figure 13 demonstrates the ability of SCPO to quickly find a safe policy and simultaneously improve the return.",
    "App. F.2.2, on Fig. 13",
)
CARTSAFE_CLAIMS = {
    "final_cost_safe": _F22,
    "safe_sooner": _F22,
    "return_improves": _F22,
    "random_policy_unsafe": (
        "Unlike the other environments, a randomly initialized policy violates the safety "
        "constraint with high probability",
        "App. F.2.2",
    ),
}

#: Fig. 5's methods; the baselines without their annealed std, CartSafe's actions being discrete
CARTSAFE_METHODS = categorical(METHODS)
CARTSAFE_FULL_STEPS = 3_200_000
_FULL_NOTE = "100 iterations of 32000: RL-Safety-Algorithms' SafetyBallRun budget; the paper states none"
_SMOKE_NOTE = "SCPO only, 2 iterations of 4 x 300 steps, minibatches 8 (the tests; one compiled program)"
_FULL = one_task_scale(TASK, CARTSAFE_FULL_STEPS, seeds=4, wall_s=4_000, note=_FULL_NOTE)
CARTSAFE_SCALES = deep_rl.scales(
    runs=len(METHODS),
    smoke=smoke_scale(TASK, 2_400, "SCPO", _SMOKE_NOTE, shrink={**SMOKE_SHRINK, "rollout_steps": 300}),
    demo=one_task_scale(TASK, 640_000, seeds=4, wall_s=900, note="20 iterations"),
    cpu={**_FULL, "note": f"the full budget ({_FULL_NOTE}); ~2.5 h wall at load 12"},
    full=_FULL,
)


def cartsafe_columns(cost, ret) -> dict:
    """``first_cost`` and ``return_gain`` (module docstring) from per-seed curves (seeds, K)."""
    out = {}
    out["first_cost"], out["first_cost_lo"], out["first_cost_hi"] = verdicts.bootstrap_mean(cost[:, 0])
    final = np.nanmean(ret[:, -final_window(ret.shape[1]) :], axis=1)
    out["return_gain"], out["return_gain_lo"], out["return_gain_hi"] = verdicts.bootstrap_mean(final - ret[:, 0])
    return out


def _above(value_lo: float, value_hi: float, bound: float) -> str:
    if not (np.isfinite(value_lo) and np.isfinite(value_hi)):
        return "undecided"
    return "reproduced" if value_lo > bound else "not_reproduced" if value_hi <= bound else "undecided"


def cartsafe_checks(rows: list[dict]) -> dict:
    """Fig. 13's claims (App. F.2.2) for SCPO's row: safe at the end, safe sooner than each constrained baseline
    at comparable return, unsafe at the start, a higher return at the end than at the start."""
    here = by_task(rows).get(TASK, {})
    scpo = here.get("SCPO")
    checks = deep_rl.safety_checks(rows)
    if scpo is None:
        return checks
    others = [here[label] for label in CONSTRAINED if label in here]
    limit = scpo["cost_limit"]
    return {
        **checks,
        "final_cost_safe": claim(
            "final_cost_safe",
            "SCPO's final-cost interval at or below the limit",
            {
                "verdict": verdicts.safety_as_claim(scpo),
                "final_cost": [scpo["final_cost"], scpo["final_cost_lo"], scpo["final_cost_hi"]],
                "limit": limit,
            },
            CARTSAFE_CLAIMS,
        ),
        "safe_sooner": claim(
            "safe_sooner",
            SAFE_SOONER,
            {f"vs {o['method']}": safe_sooner_entry(scpo, o) for o in others},
            CARTSAFE_CLAIMS,
        ),
        "random_policy_unsafe": claim(
            "random_policy_unsafe",
            "SCPO's first-iteration cost interval above the limit",
            {
                "verdict": _above(scpo["first_cost_lo"], scpo["first_cost_hi"], limit),
                "first_cost": [scpo["first_cost"], scpo["first_cost_lo"], scpo["first_cost_hi"]],
                "limit": limit,
            },
            CARTSAFE_CLAIMS,
        ),
        "return_improves": claim(
            "return_improves",
            "SCPO's final minus first-iteration return: interval above 0",
            {
                "verdict": _above(scpo["return_gain_lo"], scpo["return_gain_hi"], 0.0),
                "return_gain": [scpo["return_gain"], scpo["return_gain_lo"], scpo["return_gain_hi"]],
            },
            CARTSAFE_CLAIMS,
        ),
    }


DESCRIPTION = "SCPO vs TRPO, TRPO-L, CPO, PDO, PCPO on CartSafe, cost limit 1 (App. F.2.2, Fig. 13)"


PAPER_BUDGET = PaperBudget(None, None, "SCPO paper (arXiv:2311.00880) App. F.2.2: states neither steps nor seeds")


@target("scpo-cartsafe", DESCRIPTION, scales=CARTSAFE_SCALES, checks=cartsafe_checks, paper_budget=PAPER_BUDGET)
def cartsafe(scale: Scale, out: Path) -> dict:
    return run_one_task(CARTSAFE_METHODS, TASK, scale, out, FIGURE, TITLE, cartsafe_columns, PAPER)
