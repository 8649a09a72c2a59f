"""``scpo-fig5``: the SCPO paper's Fig. 5, SCPO against TRPO, TRPO-L, CPO, PDO and PCPO on the four ball tasks.

Mhamed & Gu, "SCPO: Safe Reinforcement Learning with Safety Critic Policy Optimization" (arXiv:2311.00880),
Sec. 5 and App. F.2.1: SafetyBallRun, SafetyBallCircle, SafetyBallGather, SafetyBallReach (Bullet-Safety-Gym 0.1,
250-step episodes), cost limits of App. G Table 1 (25, 25, 0.2, 10), 4 seeds.  This module also holds what the
other two SCPO targets share (:mod:`~saferl.reproduce.scpo.cartsafe`, :mod:`~saferl.reproduce.scpo.fig15`).

Rows (one per method and task): final return and final cost (mean of the last 10% of iterations per seed, 95%
bootstrap interval over seeds), the safety verdict of the final cost against the limit (verdicts.safety_verdict),
cost regret, and the paper's "cost and cost standard deviation during training":

* ``training_cost``    -- per seed the mean episode cost over all iterations; mean and interval over seeds;
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
(:func:`compare`): "a below b" is reproduced when a's interval lies below b's, not reproduced when it lies above.
"At comparable return" (:func:`comparable`) is reproduced unless SCPO's final-return interval lies below the
other's by more than :data:`RETURN_MARGIN` (10%) of the other's |mean return|.  TRPO is the paper's unconstrained
reference ("upper bound of the return and cost"), so only the cost claims compare SCPO with it.

Methods and their settings (what the paper ran: App. F.2.1, Gronauer's RL-Safety-Algorithms, commit aa4aaaf)
------------------------------------------------------------------------------------------------------------
* SCPO: its own defaults with its per-task Table 2 entries (``SCPO.env_defaults``: k, beta, b, entropy, 16 x
  2048 = 32768 steps per iteration).  saferl's default network (64x64 tanh, initial log-std -0.5) stands for the
  paper's "two hidden layers, tanh" (SB3's initial log-std is 0).
* Baselines, each: 16 environments x 2000 steps = B = 32000 (the paper; ``experiments/benchmark_*_tasks.py``
  ``steps_per_epoch=32000``), 64x64 tanh actor and critics (``algs/*/defaults.py`` ``ac_kwargs``), initial
  action std 0.5 (``algs/core.py`` ``MLPGaussianActor``: ``log_std = log(0.5)``), gamma 0.99 and GAE 0.95 for
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

Not expressible here, so not reproduced: the baselines' fixed, linearly annealed action std (0.5 -> 0.01 over
training, ``use_exploration_noise_anneal``; saferl learns the log-std), return scaling by a running return SD
(``use_reward_scaling``; saferl standardises advantages), Kaiming-uniform initialisation, the 1.5 x target_kl
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

import math
import warnings
from pathlib import Path

import numpy as np

from saferl.analysis import plotting, verdicts
from saferl.reproduce import deep_rl
from saferl.reproduce.deep_rl import per_seed_series
from saferl.reproduce.framework import Scale, target
from saferl.training import config as configlib
from saferl.training import runs

BALL_TASKS = ("SafetyBallRun", "SafetyBallCircle", "SafetyBallGather", "SafetyBallReach")
#: App. G Table 1 (CartSafe: the paper's 1; the authors' utils/env_info.py says 0.5)
COST_LIMITS = {
    "SafetyBallRun": 25.0,
    "SafetyBallCircle": 25.0,
    "SafetyBallGather": 0.2,
    "SafetyBallReach": 10.0,
    "CartSafe": 1.0,
}
#: RL-Safety-Algorithms experiments/benchmark_*_tasks.py: epochs of 32000 steps
BENCHMARK_EPOCHS = {"SafetyBallRun": 100, "SafetyBallCircle": 500, "SafetyBallGather": 500, "SafetyBallReach": 500}
BASELINE_BATCH = 32_000

_GRONAUER = {  # the settings every baseline shares (module docstring, with their files)
    "num_envs": 16,
    "rollout_steps": 2000,
    "network": {
        "actor_hidden": [64, 64],
        "critic_hidden": [64, 64],
        "activation": "tanh",
        "init_log_std": math.log(0.5),
        "value_normalization": False,
    },
    "hparams": {
        "gamma": 0.99,
        "cost_gamma": 0.99,
        "gae_lambda": 0.95,
        "critic_lr": 1e-3,
        "critic_epochs": 5,
        "critic_minibatches": 16,
        "max_grad_norm": 0.0,
        "cg_iters": 10,
        "cg_damping": 0.1,
        "backtracks": 15,
        "decay": 0.8,
        "fvp_subsample": 4,
    },
}


def gronauer(**hparams) -> dict:
    """A baseline's config overrides: the shared RL-Safety-Algorithms settings with its own ``hparams``."""
    return configlib.merge(_GRONAUER, {"hparams": hparams})


#: (label, algorithm, config overrides); CPO's and PCPO's rows get their cost units appended (deep_rl.units_label)
METHODS = [
    ("SCPO", "scpo", {}),
    ("TRPO", "trpo", gronauer(target_kl=0.01)),
    ("TRPO-L", "trpo_lag", gronauer(target_kl=0.01, lagrange_optimizer="sgd", lagrange_lr=0.05, lagrange_init=0.001)),
    ("CPO", "cpo", gronauer(target_kl=1e-4, backtracks=20, cost_scale="length")),
    ("PDO", "pdo", gronauer()),
    ("PCPO", "pcpo", gronauer()),
]
CONSTRAINED = ("TRPO-L", "CPO", "PDO", "PCPO")  # the labels SCPO's safety claims compare with, TRPO-L first

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
    "safe_no_later": (
        "SCPO is capable of finding a safe policy at a faster rate compared to the other algorithms.",
        _SEC5 + ' (Sec. 6: "It also converges to a safe policy faster")',
    ),
    "training_cost_lower": _SPREAD,
    "training_cost_sd_lower": _SPREAD,
    "final_return_similar": _RETURNS,
    "gather_return_higher": _RETURNS,
}
#: "comparable" / "similar" return: within 10% of the other method's |mean final return| (our choice)
RETURN_MARGIN = 0.1
REPS, CONFIDENCE = 2000, 0.95

# --------------------------------------------------------------------------- statistics of the training curves


def safe_from(mean_curves, limit) -> np.ndarray:
    """Fraction of training before the first iteration from which every later mean cost is <= ``limit``:
    ``mean_curves`` (..., K) -> (...,), 0 when the whole curve is at or below the limit, ``inf`` when its last
    value is above (NaN, no finished episode, counts as above)."""
    m = np.asarray(mean_curves, float)
    above = ~(m <= limit)
    k = m.shape[-1]
    last_above = np.where(above.any(-1), k - 1 - np.argmax(above[..., ::-1], axis=-1), -1)
    first_safe = last_above + 1
    return np.where(first_safe >= k, np.inf, first_safe / k)


def final_window(k: int) -> int:
    """The iterations "final" averages over: the last 10%, at least one (saferl.training.runs.final_statistics)."""
    return max(1, math.ceil(runs.FINAL_FRACTION * k))


def curve_bootstrap(curves, statistic, reps: int = REPS, seed: int = 0) -> tuple[float, float, float]:
    """``statistic`` of the across-seed mean of ``curves`` (seeds, K) and its 95% interval over seeds resampled
    with replacement; ``statistic`` maps (R, K) mean curves to (R,).  Percentiles are order statistics (no
    interpolation), so an ``inf`` statistic keeps its meaning; NaN where a statistic is NaN."""
    c = np.asarray(curves, float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN iterations
        point = float(statistic(np.nanmean(c, axis=0)[None])[0])
        idx = np.random.default_rng(seed).integers(0, c.shape[0], size=(reps, c.shape[0]))
        samples = np.sort(statistic(np.nanmean(c[idx], axis=1)))
    if np.isnan(samples).any():
        return point, math.nan, math.nan
    alpha = (1.0 - CONFIDENCE) / 2.0
    lo, hi = samples[int(math.floor(alpha * (reps - 1)))], samples[int(math.ceil((1.0 - alpha) * (reps - 1)))]
    return point, float(lo), float(hi)


def mean_seed_sd(curves, reps: int = REPS, seed: int = 0) -> tuple[float, float, float]:
    """The across-seed SD (ddof 1) per iteration averaged over iterations, and its interval over seed resamples
    (NaN with fewer than 2 seeds)."""
    c = np.asarray(curves, float)
    if c.shape[0] < 2:
        return math.nan, math.nan, math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        point = float(np.nanmean(np.nanstd(c, axis=0, ddof=1)))
        idx = np.random.default_rng(seed).integers(0, c.shape[0], size=(reps, c.shape[0]))
        samples = np.nanmean(np.nanstd(c[idx], axis=1, ddof=1), axis=-1)
    lo, hi = np.nanpercentile(samples, [100 * (1 - CONFIDENCE) / 2, 100 * (1 + CONFIDENCE) / 2])
    return point, float(lo), float(hi)


def curve_columns(cost, limit: float, steps_per_iteration: int) -> dict:
    """A row's training-curve columns from its per-seed cost curves (seeds, K)."""
    out = {}
    out["training_cost"], out["training_cost_lo"], out["training_cost_hi"] = verdicts.bootstrap_mean(
        np.nanmean(cost, axis=1)
    )
    out["training_cost_sd"], out["training_cost_sd_lo"], out["training_cost_sd_hi"] = mean_seed_sd(cost)
    out["safe_from"], out["safe_from_lo"], out["safe_from_hi"] = curve_bootstrap(cost, lambda m: safe_from(m, limit))
    first = out["safe_from"] * cost.shape[1]
    out["safe_from_iteration"] = None if math.isinf(first) else int(round(first)) + 1
    out["safe_from_env_steps"] = None if math.isinf(first) else int(round(first)) * steps_per_iteration
    out["iterations"] = int(cost.shape[1])
    return out


# --------------------------------------------------------------------------- verdicts from intervals


def _margin(b: dict) -> float:
    return RETURN_MARGIN * abs(float(b["final_return"]))


def comparable(a: dict, b: dict) -> str:
    """a's final return not below b's: not_reproduced only when a's interval lies below b's by more than the
    margin (10% of b's |mean|)."""
    (a_lo, a_hi), (b_lo, b_hi) = verdicts.interval(a, "final_return"), verdicts.interval(b, "final_return")
    if any(math.isnan(v) for v in (a_lo, a_hi, b_lo, b_hi)):
        return "undecided"
    return "not_reproduced" if a_hi < b_lo - _margin(b) else "reproduced"


def similar(a: dict, b: dict) -> str:
    """Final returns alike: reproduced when the intervals overlap or lie within the margin of each other."""
    (a_lo, a_hi), (b_lo, b_hi) = verdicts.interval(a, "final_return"), verdicts.interval(b, "final_return")
    if any(math.isnan(v) for v in (a_lo, a_hi, b_lo, b_hi)):
        return "undecided"
    gap = max(a_lo - b_hi, b_lo - a_hi, 0.0)
    return "reproduced" if gap <= _margin(b) else "not_reproduced"


def _span(row: dict, key: str) -> list:
    return [row.get(key), row.get(f"{key}_lo"), row.get(f"{key}_hi")]


def claim(key: str, reading: str, entries: dict, claims: dict = PAPER_CLAIMS) -> dict:
    """A check: the paper's sentence and where it is (``claims[key]``), our reading of it, and the verdicts."""
    text, where = claims[key]
    return {"paper": text, "where": where, "reading": reading, **entries}


def safe_no_later_entry(scpo: dict, other: dict) -> dict:
    parts = {"no_later": verdicts.compare(scpo, other, "safe_from", "<="), "comparable_return": comparable(scpo, other)}
    return {
        "verdict": verdicts.both(*parts.values()),
        **parts,
        "safe_from": {scpo["method"]: _span(scpo, "safe_from"), other["method"]: _span(other, "safe_from")},
        "safe_from_iteration": {r["method"]: r.get("safe_from_iteration") for r in (scpo, other)},
        "final_return": {r["method"]: _span(r, "final_return") for r in (scpo, other)},
    }


def by_task(rows: list[dict]) -> dict:
    """{task: {label: row}} in row order (labels are unique within a task)."""
    out: dict = {}
    for row in rows:
        out.setdefault(row["env"], {})[row["label"]] = row
    return out


SAFE_NO_LATER = (
    "the first iteration from which the across-seed mean cost stays <= the limit, as a fraction of "
    "training; SCPO's interval at or below the other's, and SCPO's final return not below the other's by "
    f"more than {RETURN_MARGIN:.0%} (intervals)"
)


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
                    "final_cost": _span(s, "final_cost"),
                    "limit": s["cost_limit"],
                }
                for task, s in scpo.items()
            },
        ),
        "safe_no_later": claim(
            "safe_no_later",
            SAFE_NO_LATER,
            {task: {f"vs {o['method']}": safe_no_later_entry(s, o) for o in others[task]} for task, s in scpo.items()},
        ),
        "training_cost_lower": claim(
            "training_cost_lower",
            "mean episode cost over training: SCPO's interval below the other's",
            {
                task: {f"vs {o['method']}": verdicts.compare(s, o, "training_cost", "<") for o in everyone[task]}
                for task, s in scpo.items()
            },
        ),
        "training_cost_sd_lower": claim(
            "training_cost_sd_lower",
            "across-seed SD of the cost, averaged over training: SCPO's interval below the other's",
            {
                task: {f"vs {o['method']}": verdicts.compare(s, o, "training_cost_sd", "<") for o in everyone[task]}
                for task, s in scpo.items()
            },
        ),
        "final_return_similar": claim(
            "final_return_similar",
            f"Run, Circle, Reach: final-return intervals overlap or lie within {RETURN_MARGIN:.0%} of each other",
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
                task: {f"vs {o['method']}": verdicts.compare(s, o, "final_return", ">") for o in others[task]}
                for task, s in scpo.items()
                if task == "SafetyBallGather"
            },
        ),
    }


# --------------------------------------------------------------------------- training and tabulating


def train_task(
    methods: list[tuple], task: str, out: Path, scale: Scale, limit: float, extra_columns=None
) -> tuple[list[dict], list]:
    """Train ``methods`` on ``task`` (deep_rl.compare_algorithms, the scale's shrink applied last) and add the
    curve columns (and ``extra_columns(cost, ret)``'s, curves (seeds, K)); returns the rows and each run's
    (row, cost curves, return curves) for the figure."""
    steps = scale["env_steps"][task]
    base = {"constraint": {"type": "expected", "limit": limit}, "total_steps": steps, "seeds": scale.seeds}
    shrink = scale.get("shrink", {})
    chosen = [(label, algo, configlib.merge(over, shrink)) for label, algo, over in deep_rl.methods_at(methods, scale)]
    result = deep_rl.compare_algorithms(chosen, task, out / task, base, show_progress=scale.name != "smoke")
    curves = []
    for row in result["rows"]:
        run_dir = out / task / "runs" / deep_rl.run_dir_name(row["method"])
        cfg, progress = runs.load_run_config(run_dir), runs.read_progress(run_dir)
        seeds = runs.seed_ids(cfg)
        cost, ret = per_seed_series(progress, "episode_cost", seeds), per_seed_series(progress, "episode_return", seeds)
        row["env"] = task
        row.update(curve_columns(cost, limit, cfg["num_envs"] * cfg["rollout_steps"]))
        if extra_columns is not None:
            row.update(extra_columns(cost, ret))
        curves.append((row, cost, ret))
    return result["rows"], curves


def _seed_sd(curves) -> np.ndarray:
    """Across-seed SD (ddof 1) per iteration; 0 for one seed."""
    return np.nanstd(curves, axis=0, ddof=1) if curves.shape[0] > 1 else np.zeros(curves.shape[1])


def curves_figure(curves_by_task: dict, path: Path, title: str) -> str:
    """Fig. 5's layout: per task (columns) the return, the cost with its limit and the cost's across-seed SD
    (ddof 1), against the fraction of training (the paper matches B = 32768 and 32000 this way)."""
    plt = plotting.pyplot()
    fig, axes = plt.subplots(3, len(curves_by_task), figsize=(4 * len(curves_by_task), 8.5), squeeze=False)
    for col, (task, curves) in enumerate(curves_by_task.items()):
        for row, cost, ret in curves:
            x = np.arange(cost.shape[1]) / cost.shape[1]  # training before the iteration's rollout, as safe_from
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                line = plotting.band(axes[0, col], x, np.nanmean(ret, axis=0), _seed_sd(ret), label=row["method"])
                plotting.band(
                    axes[1, col], x, np.nanmean(cost, axis=0), _seed_sd(cost), color=line.get_color(), clip=(0.0, None)
                )
                axes[2, col].plot(x, _seed_sd(cost), color=line.get_color())
        axes[1, col].axhline(COST_LIMITS[task], color="k", ls="--", lw=1)
        axes[0, col].set_title(task)
        for r, name in enumerate(("return", "cost (limit dashed)", "cost SD over seeds")):
            axes[r, col].set_ylabel(name)
            axes[r, col].grid(alpha=0.3)
        axes[2, col].set_xlabel("fraction of training before the iteration")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(title)
    plotting.save_figure(fig, path, dpi=90)
    return path.name


def run_comparison(
    methods: list[tuple], tasks, scale: Scale, out: Path, figure: str, title: str, extra_columns=None
) -> dict:
    """Every task of ``tasks`` in turn; the rows, the combined figure and each task's curves.png."""
    rows, curves, figures = [], {}, []
    for task in tasks:
        task_rows, curves[task] = train_task(methods, task, out, scale, COST_LIMITS[task], extra_columns)
        rows += task_rows
        figures.append(f"{task}/curves.png")
    figures.insert(0, curves_figure(curves, out / figure, title))
    return {"rows": rows, "figures": figures}


def run_one_task(
    methods: list[tuple], task: str, scale: Scale, out: Path, figure: str, title: str, extra_columns, paper: str
) -> dict:
    """:func:`run_comparison` on one task, its result's ``settings`` naming the paper's figure (``paper``)."""
    result = run_comparison(methods, [task], scale, Path(out), figure, title, extra_columns=extra_columns)
    result["settings"] = {**settings(methods, scale, [task]), "paper": paper}
    return result


def settings(methods: list[tuple], scale: Scale, tasks) -> dict:
    return {
        "tasks": {t: {"cost_limit": COST_LIMITS[t], "env_steps": scale["env_steps"][t]} for t in tasks},
        "seeds": scale.seeds,
        "methods": {
            label: {"algo": algo, "overrides": over} for label, algo, over in deep_rl.methods_at(methods, scale)
        },
        "shrink": scale.get("shrink", {}),
        "return_margin": RETURN_MARGIN,
        "paper": "SCPO paper (arXiv:2311.00880) Fig. 5 / App. F.2: curves only, claims in checks",
    }


#: smoke (tests only): SCPO alone, 2 seeds x 2 iterations of 4 x 250 steps (one episode each), minibatches 8
SMOKE_SHRINK = {"num_envs": 4, "rollout_steps": 250, "iterations_per_chunk": 1, "hparams": {"minibatches": 8}}
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


@target(
    "scpo-fig5",
    "SCPO vs TRPO, TRPO-L, CPO, PDO, PCPO on SafetyBallRun/Circle/Gather/Reach: final return and "
    "cost, cost and its spread over training, when the cost falls below the limit (Fig. 5)",
    scales=FIG5_SCALES,
    checks=fig5_checks,
)
def fig5(scale: Scale, out: Path) -> dict:
    result = run_comparison(
        METHODS,
        scale["tasks"],
        scale,
        Path(out),
        "scpo_fig5.png",
        f"SCPO paper Fig. 5: {scale.seeds} seeds, mean +- SD",
    )
    result["settings"] = settings(METHODS, scale, scale["tasks"])
    return result
