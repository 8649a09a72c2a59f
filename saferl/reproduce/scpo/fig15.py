"""``scpo-fig15``: the SCPO paper's augmented-state ablation, App. F.3 / Fig. 15, SCPO on SafetyBallRun with and
without the cumulative-cost state.

Mhamed & Gu, "SCPO: Safe Reinforcement Learning with Safety Critic Policy Optimization" (arXiv:2311.00880), App.
F.3: "We train two policies: one using augmented states (as explained in Section 4.2) and another using normal
states.  Both policies share the same hyperparameters."  Here: SCPO with its SafetyBallRun defaults (Table 2:
k 4, beta 0.5, b 1, entropy 0.005; cost limit 25), once with the state s' = (s, clip(q_t / c0, 0, 1 + Delta))
(``hparams.cost_state: true``, the default) and once without (``false``); everything else the same.

Rows: those of :mod:`saferl.reproduce.scpo.fig5` (final return and cost with intervals, safety verdict, cost
over training, ``safe_from``) and

* ``return_t90`` -- on the across-seed mean return curve, the fraction of training (in iterations) before the
  first iteration whose return has covered 90% of the way from the first iteration's return to the final one
  (the mean of the last 10% of iterations); NaN when the final return is not above the first.  Interval: seeds
  resampled with replacement.  "90% of the way", not "90% of the final return": SafetyBallRun's return starts
  negative (the action penalty), where 0.9 x final is no milestone.

Checks (verdicts from intervals as in scpo_fig5): the augmented policy converges faster (its ``return_t90``
interval below the other's) and both reach a similar final return (the interval of the difference within
+-10% of the plain policy's |mean|: an equality claim, not overlap).

Not checked: the velocity behaviour ("maintains constant velocity after accelerating" against "accelerates then
decelerates").  A run records per-iteration episode statistics only (return, cost, length; progress.csv); the
ball's speed within an episode is not among them, and an evaluation rollout that recorded it would be another
compiled program per run.  The claim is listed under ``checks`` with ``checked: false`` and this reason.

Scales: the paper states neither budget nor seeds for Fig. 15; ``full`` and ``cpu`` use Fig. 5's SafetyBallRun
budget (RL-Safety-Algorithms' 100 epochs x 32000 = 3.2M steps) and its 4 seeds -- two SCPO runs fit a 2-core
machine at the full budget (~1,200 CPU-s at SCPO's measured 24k env steps per CPU-second on SafetyBallRun, see
:mod:`~saferl.reproduce.scpo.fig5`); ``smoke`` trains the ablated run alone (one compiled program).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from saferl.analysis import verdicts
from saferl.reproduce import deep_rl
from saferl.reproduce.framework import PaperBudget, Scale, target
from saferl.reproduce.scpo.common import AUTHORS_SCPO, one_task_scale, run_one_task, smoke_scale
from saferl.reproduce.scpo.stats import by_task, claim, curve_bootstrap, final_window, similar
from saferl.training import config as configlib

TASK = "SafetyBallRun"
FIGURE, TITLE = "scpo_fig15.png", "SCPO paper Fig. 15 (augmented-state ablation)"
PAPER = "SCPO paper (arXiv:2311.00880) App. F.3 / Fig. 15: claims in checks"
AUGMENTED, PLAIN = "SCPO", "SCPO (ablation: no cumulative-cost state)"
ABLATION_METHODS = [
    (AUGMENTED, "scpo", AUTHORS_SCPO),
    (PLAIN, "scpo", configlib.merge(AUTHORS_SCPO, {"hparams": {"cost_state": False}})),
]
FIG15_CLAIMS = {
    "converges_faster": (
        "The policy trained with augmented states converges faster to the maximum return and "
        "requires [fewer] training samples, as shown in figure 15.",
        "App. F.3, on Fig. 15",
    ),
    "similar_return": (
        "While both policies achieve a similar return, they exhibit different behavior.",
        "App. F.3, on Fig. 15",
    ),
    "velocity": (
        "The policy trained with augmented states maintains constant velocity after accelerating. [...] "
        "The policy trained with normal states accelerates then decelerates.",
        "App. F.3",
    ),
}
VELOCITY_NOT_CHECKED = (
    "runs record per-iteration episode statistics (return, cost, length) only, not the ball's "
    "speed within an episode; recording it needs an evaluation rollout (another compiled "
    "program per run)"
)


def return_t90(mean_curves) -> np.ndarray:
    """Fraction of training before the first iteration at 90% of the way from the first return to the final one
    (the mean of the last 10% of iterations): ``mean_curves`` (R, K) -> (R,); NaN where final <= first."""
    m = np.asarray(mean_curves, float)
    k = m.shape[-1]
    first, final = m[..., 0], np.mean(m[..., -final_window(k) :], axis=-1)
    reached = m >= (first + 0.9 * (final - first))[..., None]
    return np.where(final > first, np.argmax(reached, axis=-1) / k, math.nan)


def fig15_columns(cost, ret) -> dict:
    point, lo, hi = curve_bootstrap(ret, return_t90)
    return {"return_t90": point, "return_t90_lo": lo, "return_t90_hi": hi}


def fig15_checks(rows: list[dict]) -> dict:
    """App. F.3's claims: the augmented policy converges faster, both reach a similar return; velocity unchecked."""
    here = by_task(rows).get(TASK, {})
    aug, plain = here.get(AUGMENTED), here.get(PLAIN)
    pair = (
        {}
        if aug is None or plain is None
        else {
            "converges_faster": {
                "verdict": verdicts.ordered(aug, plain, "return_t90", "<"),
                "return_t90": {
                    r["method"]: [r["return_t90"], r["return_t90_lo"], r["return_t90_hi"]] for r in (aug, plain)
                },
            },
            "similar_return": {
                "verdict": similar(aug, plain),
                "final_return": {
                    r["method"]: [r["final_return"], r["final_return_lo"], r["final_return_hi"]] for r in (aug, plain)
                },
            },
        }
    )
    return {
        **deep_rl.safety_checks(rows),
        "converges_faster": claim(
            "converges_faster",
            "return_t90 (fraction of training to 90% of the way to the "
            "final return): the augmented run's interval below the other's",
            pair.get("converges_faster", {}),
            FIG15_CLAIMS,
        ),
        "similar_return": claim(
            "similar_return",
            "the interval of the difference of final returns within +-10% of the plain policy's |mean|",
            pair.get("similar_return", {}),
            FIG15_CLAIMS,
        ),
        "velocity": claim("velocity", "not checked", {"checked": False, "why": VELOCITY_NOT_CHECKED}, FIG15_CLAIMS),
    }


FIG15_STEPS = 3_200_000  # RL-Safety-Algorithms experiments/benchmark_run_tasks.py: 100 epochs x 32000
_SMOKE_NOTE = "the ablated run only, 2 iterations of 4 x 250 steps, minibatches 8 (the tests; one compiled program)"
_FULL_NOTE = "Fig. 5's SafetyBallRun budget (the paper states none for Fig. 15)"
_FULL = one_task_scale(TASK, FIG15_STEPS, seeds=4, wall_s=1_200, note=_FULL_NOTE)
FIG15_SCALES = deep_rl.scales(
    runs=len(ABLATION_METHODS),
    smoke=smoke_scale(TASK, 2_000, PLAIN, _SMOKE_NOTE),
    demo=one_task_scale(TASK, 640_000, seeds=4, wall_s=260, note="20 iterations"),
    cpu={**_FULL, "note": f"{_FULL_NOTE}; ~50 min wall at load 12"},
    full=_FULL,
)


DESCRIPTION = "SCPO on SafetyBallRun with and without the cumulative-cost state (App. F.3, Fig. 15)"


PAPER_BUDGET = PaperBudget(None, None, "SCPO paper (arXiv:2311.00880) App. F.3: states neither steps nor seeds")


@target("scpo-fig15", DESCRIPTION, scales=FIG15_SCALES, checks=fig15_checks, paper_budget=PAPER_BUDGET)
def fig15(scale: Scale, out: Path) -> dict:
    return run_one_task(ABLATION_METHODS, TASK, scale, out, FIGURE, TITLE, fig15_columns, PAPER)
