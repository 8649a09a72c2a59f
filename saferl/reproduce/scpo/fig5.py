"""``scpo-fig5``: the SCPO paper's Fig. 5, SCPO against TRPO, TRPO-L, CPO, PDO and PCPO on the four ball tasks.

Mhamed & Gu, "SCPO: Safe Reinforcement Learning with Safety Critic Policy Optimization" (arXiv:2311.00880),
Sec. 5 and App. F.2.1: SafetyBallRun, SafetyBallCircle, SafetyBallGather, SafetyBallReach (Bullet-Safety-Gym 0.1,
250-step episodes), cost limits of App. G Table 1 (25, 25, 0.2, 10), 4 seeds.  What the three SCPO targets share is in
:mod:`~saferl.reproduce.scpo.stats` (the statistics and verdicts below) and :mod:`~saferl.reproduce.scpo.common`
(the methods below, training and tabulating).

Rows (one per method and task): final return and final cost (mean of the last 10% of iterations per seed, 95%
bootstrap interval over seeds), the safety verdict of the final cost against the limit (verdicts.safety_verdict),
cost regret, and the paper's "cost and cost standard deviation during training":

* ``training_cost``    -- per seed the mean episode cost over all iterations; mean and interval over seeds;
* ``training_cost_episode_sd`` -- the paper's "cost standard deviation during training": per seed the spread
  (population SD) of the episode costs that finished in each iteration, averaged over iterations; mean and
  interval over seeds.  Runs log it since saferl recorded ``episode_cost_sd``; rows of runs trained before have
  none, and their "lower spread" claim is undecided;
* ``training_cost_sd`` -- the across-seed SD (ddof 1) of the episode cost at each iteration, averaged over
  iterations; interval: seeds resampled with replacement (the point estimate needs >= 2 seeds);
* ``safe_from``        -- when the cost falls below the limit: the fraction of training (in iterations, 0 = from
  the start) before the first iteration from which the *across-seed mean* episode cost stays at or below the
  limit in every later iteration; ``inf`` when the last iteration's mean is above it.  Interval: the same on the
  mean curve of seeds resampled with replacement (order-statistic percentiles, so ``inf`` is kept).  Fractions,
  not steps, compare the methods, as the paper's plots do (App. F.2.1: "we scale our plots to match", B = 32768
  for SCPO against 32000); ``safe_from_iteration`` (1-based) and ``safe_from_env_steps`` give the same point.

The paper gives curves only (Fig. 5, no numbers), so its claims (:data:`PAPER_CLAIMS`: the sentence and where it
is) are checks, each verdict ``reproduced`` / ``not_reproduced`` / ``undecided`` read from the rows' 95% intervals
with the claims vocabulary of :mod:`saferl.analysis.verdicts`: "a below b" (:func:`~saferl.analysis.verdicts.ordered`)
is reproduced when a's interval lies wholly below b's, not reproduced when it lies above or both are one point
(SCPO "faster" than a method when both are never safe is a tie, not a reproduction), undecided when they overlap.
"At comparable return" (:func:`~saferl.reproduce.scpo.stats.comparable`) is a non-inferiority claim: reproduced when
the interval of the difference of final returns lies above minus :data:`RETURN_MARGIN` (10%) of the other's
|mean|; "similar return" (:func:`~saferl.reproduce.scpo.stats.similar`) an equality claim within that margin,
never read from overlap.  TRPO is the paper's unconstrained reference ("upper bound of the return and cost"), so
only the cost claims compare SCPO with it.  Every check carries its budget (``budget``: steps per seed as a
fraction of the paper's, seeds).

Methods and their settings (what the paper ran: App. F.2.1, Gronauer's RL-Safety-Algorithms, commit aa4aaaf)
------------------------------------------------------------------------------------------------------------
* SCPO: its own defaults with its per-task Table 2 entries (``SCPO.env_defaults``: k, beta, b, entropy, 16 x
  2048 = 32768 steps per iteration), 64x64 tanh (the paper's "two hidden layers, tanh"), and as the authors' code
  runs it (:data:`~saferl.reproduce.scpo.common.AUTHORS_SCPO`): the actor's initial log-std 0 (SB3's) and raw
  observations.  The committed tables (trained at 0e468fa and 6878888) ran saferl's defaults there: log-std -0.5
  and normalised observations.
* Baselines, each: 16 environments x 2000 steps = B = 32000 (the paper; ``experiments/benchmark_*_tasks.py``
  ``steps_per_epoch=32000``), 64x64 tanh actor and critics (``algs/*/defaults.py`` ``ac_kwargs``), a fixed action
  std 0.499 (1 - k/K) + 0.01 at epoch k of K (``algs/core.py`` ``MLPGaussianActor.set_log_std``, called before each
  epoch's rollout when ``use_exploration_noise_anneal``, every baseline's ``defaults.py``), gamma 0.99 and GAE 0.95 for
  rewards and costs (``iwpg.py`` ``lam``, ``lam_c``), critics by Adam 1e-3, 5 passes of 16 minibatches, no
  gradient clipping (``iwpg.py`` ``vf_lr``, ``train_v_iterations``, ``num_mini_batches``, ``use_max_grad_norm``),
  conjugate gradients 10 iterations with damping 0.1 (``npg.py``), Fisher on every 4th sample
  (``fvp_obs = obs[::4]``), 15 backtracks of 0.8 (``trpo.py`` ``adjust_step_direction``), standardised
  observations (``use_standardized_obs``).
* TRPO: target_kl 0.01 (``trpo/defaults.py``).  TRPO-L: target_kl 0.01 (``npg.py``; ``lag-trpo/defaults.py`` sets
  none), SGD dual ascent, rate 0.05, lambda_0 0.001 (``lag-trpo.py`` constructor).  CPO: target_kl 1e-4
  (``cpo/defaults.py``), 20 backtracks (``cpo.py`` ``total_steps=20``), and c = (J_c - b) / EpLen against the
  per-sample cost gradient, i.e. ``cost_scale: length`` ("J_c units").  PDO: saferl's PDO defaults, which are
  ``pdo/defaults.py``'s (target_kl 1e-3, Adam dual 1e-3; :mod:`saferl.algos.pdo`).  PCPO: RL-Safety-Algorithms
  has none (the paper names PCPO among "the above algorithms ... provided by Sven Gronauer"; the public code
  stops at TRPO, Lag-TRPO, CPO, PDO): saferl's PCPO defaults (target_kl 0.01, OmniSafe units) with the settings
  above.

The baselines' fixed action std, annealed linearly from 0.509 to 0.01 over training (``use_exploration_noise_anneal``,
``algs/core.py`` ``set_log_std``), is ``network.action_std_anneal: [0.499, 0.01]`` over the reference run's length
(``action_std_anneal_steps``, :data:`~saferl.reproduce.scpo.common.REFERENCE_STEPS`: a cpu-scale run ends at the
std the reference run has at that step, not at 0.01); the tables trained at 0e468fa, 6878888 and 85842f7 learned it
from 0.5.  Return scaling by a running return SD (``use_reward_scaling``, every baseline's ``iwpg.py`` default) is
``advantage_scale: return_std`` for PDO and TRPO-L, where the multiplier weighs A_c against the scaled A_r
(:mod:`saferl.algos.return_scaled`; the tables trained at 85842f7 and d78b7ae standardised TRPO-L's advantages);
TRPO, CPO and PCPO keep saferl's standardised advantages, a positive factor on A_r changing neither their natural step
nor their line search (the mean subtracted does change the sample gradient: not reproduced).  Not reproduced either:
Kaiming-uniform initialisation, the 1.5 x target_kl
acceptance of TRPO / TRPO-L / CPO's line searches (saferl's accept KL <= target_kl; PDO has ``line_search_kl``
1.5), and the hyper-parameter grid the paper searched (``experiments/safety_settings.py``: target_kl, lambda_lr,
lam_c; "If an algorithm violates the safety constraint over all hyperparameters, we pick the hyperparameter with
the least average cumulative cost over the last 50 iterations"): each baseline runs its default.

Scales
------
``full``: 4 seeds; per task the budget of RL-Safety-Algorithms' Bullet benchmark scripts
(``experiments/benchmark_{run,circle,gather,reach}_tasks.py``: ``epochs`` x 32000 steps): Run 100 epochs (3.2M),
Circle, Gather and Reach 500 epochs (16M each); the paper's plots state no total.  ``cpu``: 4 seeds (the
paper's) with the budgets cut to what 2 cores train in a few hours (:data:`CPU_STEPS`): Run 1.6M (half), Circle,
Gather and Reach 960k (30 baseline iterations, 6%).  ``demo``: SafetyBallRun alone, 20 iterations.  ``smoke``
(the tests): SCPO alone on SafetyBallRun, 2 seeds x 2 iterations of 4 x 250 steps, minibatches 8: one compiled
program, a few seconds of training.

Measured rates (2026-12-01, this 2-core machine under load 11-15; ``saferl train``, 4 seeds x 5 iterations; env
steps of all seeds per second of wall time / per CPU-second of the process, compile excluded): SafetyBallRun
SCPO 9.5k / 24k, CPO (these settings) 5.2k / 17k; SafetyBallReach SCPO 4.5k / 9.4k, CPO 3.4k / 9.1k;
SafetyBallGather SCPO 4.0k / 9.5k, CPO 2.8k / 7.5k; CartSafe SCPO 10.5k / 24k, CPO 9.5k / 19k; compiles 45-100 s
of wall time (~20-25 CPU-s) per run.  TRPO, TRPO-L, PDO and PCPO are taken at CPO's rate, Circle at Run's.
``cpu`` then costs ~9,500 CPU-s (2.6 h: the wall time on an idle 2-core machine, counting one core's worth) and,
at the measured wall rates, ~7.5 h at load 12; ``full`` ~31 h of CPU time.
"""

from __future__ import annotations

from pathlib import Path

from saferl.analysis import verdicts
from saferl.reproduce import deep_rl
from saferl.reproduce.framework import PaperBudget, Scale, target
from saferl.reproduce.scpo import stats
from saferl.reproduce.scpo.common import CONSTRAINED, METHODS, SMOKE_SHRINK, run_comparison, settings
from saferl.reproduce.scpo.stats import (
    RETURN_MARGIN,
    SAFE_SOONER,
    by_task,
    safe_sooner_entry,
    similar,
    span,
)

BALL_TASKS = ("SafetyBallRun", "SafetyBallCircle", "SafetyBallGather", "SafetyBallReach")
#: RL-Safety-Algorithms experiments/benchmark_*_tasks.py: epochs of 32000 steps
BENCHMARK_EPOCHS = {"SafetyBallRun": 100, "SafetyBallCircle": 500, "SafetyBallGather": 500, "SafetyBallReach": 500}
BASELINE_BATCH = 32_000

_SEC5 = "Sec. 5, on Fig. 5"
_SPREAD = (
    "Furthermore, the cost and cost standard deviation of SCPO are consistently lower than the other "
    "algorithms during training.",
    _SEC5,
)
_RETURNS = (
    "Although the final return is similar for most tasks, SCPO significantly outperforms in the SafetyBallGather task.",
    _SEC5,
)
#: the paper's statements each check encodes: the sentence and where it is
PAPER_CLAIMS = {
    "final_cost_safe": (
        "The cost promptly drops below the threshold without compromising the improvement of the return.",
        _SEC5,
    ),
    "safe_sooner": (
        "SCPO is capable of finding a safe policy at a faster rate compared to the other algorithms.",
        _SEC5 + ' (Sec. 6: "It also converges to a safe policy faster")',
    ),
    "training_cost_lower": _SPREAD,
    "training_cost_sd_lower": _SPREAD,
    "final_return_similar": _RETURNS,
    "gather_return_higher": _RETURNS,
}


def claim(key: str, reading: str, entries: dict) -> dict:
    """:func:`stats.claim` with the sentences of :data:`PAPER_CLAIMS`."""
    return stats.claim(key, reading, entries, PAPER_CLAIMS)


def fig5_checks(rows: list[dict]) -> dict:
    """The paper's Fig. 5 claims per task (module docstring); comparisons appear where both methods ran."""
    tasks = by_task(rows)
    scpo = {task: here["SCPO"] for task, here in tasks.items() if "SCPO" in here}
    others = {task: [here[label] for label in CONSTRAINED if label in here] for task, here in tasks.items()}
    everyone = {task: [r for label, r in here.items() if label != "SCPO"] for task, here in tasks.items()}
    return {
        **deep_rl.safety_checks(rows),
        "final_cost_safe": claim(
            "final_cost_safe",
            "SCPO's final-cost interval at or below the limit",
            {
                task: {
                    "verdict": verdicts.safety_as_claim(s),
                    "final_cost": span(s, "final_cost"),
                    "limit": s["cost_limit"],
                }
                for task, s in scpo.items()
            },
        ),
        "safe_sooner": claim(
            "safe_sooner",
            SAFE_SOONER,
            {task: {f"vs {o['method']}": safe_sooner_entry(s, o) for o in others[task]} for task, s in scpo.items()},
        ),
        "training_cost_lower": claim(
            "training_cost_lower",
            "mean episode cost over training: SCPO's interval below the other's",
            {
                task: {f"vs {o['method']}": verdicts.ordered(s, o, "training_cost", "<") for o in everyone[task]}
                for task, s in scpo.items()
            },
        ),
        "training_cost_sd_lower": claim(
            "training_cost_sd_lower",
            "the spread of episode costs within an iteration, averaged over training: SCPO's interval below the "
            "other's (undecided where the runs did not log it; the across-seed spread, training_cost_sd, is shown "
            "but not judged)",
            {
                task: {
                    f"vs {o['method']}": verdicts.ordered(s, o, "training_cost_episode_sd", "<") for o in everyone[task]
                }
                for task, s in scpo.items()
            },
        ),
        "final_return_similar": claim(
            "final_return_similar",
            "Run, Circle, Reach: the interval of the difference of final returns within "
            f"+-{RETURN_MARGIN:.0%} of the other's |mean|",
            {
                task: {f"vs {o['method']}": similar(s, o) for o in others[task]}
                for task, s in scpo.items()
                if task != "SafetyBallGather"
            },
        ),
        "gather_return_higher": claim(
            "gather_return_higher",
            "Gather: SCPO's final-return interval above the other's",
            {
                task: {f"vs {o['method']}": verdicts.ordered(s, o, "final_return", ">") for o in others[task]}
                for task, s in scpo.items()
                if task == "SafetyBallGather"
            },
        ),
    }


#: smoke (tests only): SCPO alone, shrunk by common.SMOKE_SHRINK
SMOKE_NOTE = "SCPO only, 2 iterations of 4 x 250 steps, minibatches 8 (the tests; one compiled program)"
#: cpu: per-task steps per seed: Run half its full budget (50 baseline iterations), the others 30 iterations
#: (6% of their 16M); the wall time (module docstring, "Measured rates") is ~2.6 h of CPU time
CPU_STEPS = {
    "SafetyBallRun": 1_600_000,
    "SafetyBallCircle": 960_000,
    "SafetyBallGather": 960_000,
    "SafetyBallReach": 960_000,
}
CPU_NOTE = (
    "Run 1.6M, Circle/Gather/Reach 960k steps per seed; ~2.6 h of CPU time from the measured rates "
    "(module docstring), ~7.5 h wall at load 12 on 2 cores"
)
FULL_STEPS = {task: epochs * BASELINE_BATCH for task, epochs in BENCHMARK_EPOCHS.items()}
FIG5_SCALES = deep_rl.scales(
    runs=len(METHODS) * len(BALL_TASKS),
    smoke={
        "steps": 2_000,
        "seeds": 2,
        "runs": 1,
        "wall_s": 25,
        "methods": ["SCPO"],
        "tasks": ["SafetyBallRun"],
        "env_steps": {"SafetyBallRun": 2_000},
        "shrink": SMOKE_SHRINK,
        "note": SMOKE_NOTE,
    },
    demo={
        "steps": 640_000,
        "seeds": 4,
        "runs": len(METHODS),
        "wall_s": 1_000,
        "tasks": ["SafetyBallRun"],
        "env_steps": {"SafetyBallRun": 640_000},
        "note": "SafetyBallRun only, 20 iterations",
    },
    cpu={
        "steps": None,
        "seeds": 4,
        "wall_s": 9_500,
        "tasks": list(BALL_TASKS),
        "env_steps": CPU_STEPS,
        "note": CPU_NOTE,
    },
    full={
        "steps": None,
        "seeds": 4,
        "wall_s": None,
        "tasks": list(BALL_TASKS),
        "env_steps": FULL_STEPS,
        "note": "Run 3.2M, Circle/Gather/Reach 16M steps per seed (RL-Safety-Algorithms' benchmark epochs x 32000); "
        "~31 h of CPU time at the measured rates: meant for an accelerator",
    },
)


DESCRIPTION = (
    "SCPO vs TRPO, TRPO-L, CPO, PDO, PCPO on SafetyBallRun/Circle/Gather/Reach: final return and "
    "cost, cost and its spread over training, when the cost falls below the limit (Fig. 5)"
)


#: the paper's plots state no total; RL-Safety-Algorithms' benchmark scripts (what the paper ran) give these
PAPER_BUDGET = PaperBudget(
    FULL_STEPS,
    4,
    "SCPO paper (arXiv:2311.00880) App. F.2.1: 4 seeds; steps: RL-Safety-Algorithms' "
    "experiments/benchmark_*_tasks.py epochs x 32000 (the paper's plots state no total)",
)


@target("scpo-fig5", DESCRIPTION, scales=FIG5_SCALES, checks=fig5_checks, paper_budget=PAPER_BUDGET)
def fig5(scale: Scale, out: Path) -> dict:
    result = run_comparison(METHODS, scale["tasks"], scale, Path(out), "scpo_fig5.png", "SCPO paper Fig. 5")
    result["settings"] = settings(METHODS, scale, scale["tasks"])
    return result
