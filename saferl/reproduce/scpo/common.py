"""What the SCPO targets share: the cost limits, the methods with their settings, training and tabulating.

The methods and where their settings come from are described in :mod:`~saferl.reproduce.scpo.fig5`'s docstring;
:func:`train_task` trains them on a task and adds the curve columns (:mod:`~saferl.reproduce.scpo.stats`),
:func:`run_comparison` / :func:`run_one_task` run every task of a target and draw Fig. 5's layout of curves.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from saferl.analysis import plotting
from saferl.reproduce import deep_rl
from saferl.reproduce.deep_rl import per_seed_series
from saferl.reproduce.framework import Scale
from saferl.reproduce.scpo.stats import RETURN_MARGIN, curve_columns
from saferl.training import config as configlib
from saferl.training import run_directory

#: App. G Table 1 (CartSafe: the paper's 1; the authors' utils/env_info.py says 0.5)
COST_LIMITS = {
    "SafetyBallRun": 25.0,
    "SafetyBallCircle": 25.0,
    "SafetyBallGather": 0.2,
    "SafetyBallReach": 10.0,
    "CartSafe": 1.0,
}

_GRONAUER = {  # the settings every baseline shares (fig5's module docstring, with their files)
    "num_envs": 16,
    "rollout_steps": 2000,
    "network": {
        "actor_hidden": [64, 64],
        "critic_hidden": [64, 64],
        "activation": "tanh",
        "action_std_anneal": [0.499, 0.01],
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


#: the length of the reference runs (RL-Safety-Algorithms ``experiments/benchmark_*_tasks.py``: epochs x 32,000
#: steps), over which the baselines' action std anneals (``network.action_std_anneal_steps``): a cpu-scale run
#: follows that schedule to its own end, as the reference run is at that step, not a schedule squeezed into the
#: shorter run.  CartSafe's actions are discrete: a categorical policy has no std (:func:`categorical`)
REFERENCE_STEPS = {
    "SafetyBallRun": 100 * 32_000,
    "SafetyBallCircle": 500 * 32_000,
    "SafetyBallGather": 500 * 32_000,
    "SafetyBallReach": 500 * 32_000,
}


def gronauer(**hparams) -> dict:
    """A baseline's config overrides: the shared RL-Safety-Algorithms settings with its own ``hparams``."""
    return configlib.merge(_GRONAUER, {"hparams": hparams})


#: SCPO as the authors' code runs it (SafeRL-Lab/SCPO): SB3's actor starts at log-std 0 (``safe_ppo/policies.py``
#: ``log_std_init=0.0``, every per-task config's ``policy_kwargs`` empty: ``utils/best_hyper_parameters.py``), and
#: nothing in the repository normalises observations (no VecNormalize; ``utils/env_wrapper.py`` has a reward rescale
#: and an early termination, and no training script says which wrappers ran: read from the library's defaults); a
#: time-limit truncation bootstraps from the value (``safe_ppo.py`` ``collect_rollouts``), as here.  The committed
#: tables (trained at 0e468fa and 6878888) ran saferl's defaults: log-std -0.5, normalised observations.
AUTHORS_SCPO = {"network": {"init_log_std": 0.0}, "normalize_observations": False}

#: (label, algorithm, config overrides); CPO's and PCPO's rows get their cost units appended (deep_rl.units_label)
METHODS = [
    ("SCPO", "scpo", AUTHORS_SCPO),
    ("TRPO", "trpo", gronauer(target_kl=0.01)),
    (
        "TRPO-L",
        "trpo_lag",
        gronauer(
            target_kl=0.01,
            lagrange_optimizer="sgd",
            lagrange_lr=0.05,
            lagrange_init=0.001,
            advantage_scale="return_std",  # iwpg.py's reward scaling, as PDO's default (saferl.algos.return_scaled)
        ),
    ),
    ("CPO", "cpo", gronauer(target_kl=1e-4, backtracks=20, cost_scale="length")),
    ("PDO", "pdo", gronauer()),
    ("PCPO", "pcpo", gronauer()),
]


def categorical(methods: list[tuple]) -> list[tuple]:
    """``methods`` for a task with discrete actions: without the baselines' fixed, annealed action std, which a
    categorical policy does not have (RL-Safety-Algorithms' ``set_log_std`` acts on a Gaussian's log-std only)."""
    out = []
    for label, algo, over in methods:
        network = {k: v for k, v in over.get("network", {}).items() if k != "action_std_anneal"}
        out.append(
            (
                label,
                algo,
                {**over, "network": network} if network else {k: v for k, v in over.items() if k != "network"},
            )
        )
    return out


CONSTRAINED = ("TRPO-L", "CPO", "PDO", "PCPO")  # the labels SCPO's safety claims compare with, TRPO-L first

#: smoke (tests only): SCPO alone, 2 seeds x 2 iterations of 4 x 250 steps (one episode each), minibatches 8
SMOKE_SHRINK = {"num_envs": 4, "rollout_steps": 250, "iterations_per_chunk": 1, "hparams": {"minibatches": 8}}


def one_task_scale(task: str, steps: int, **entries) -> dict:
    """A :func:`deep_rl.scales` entry of a one-task target: ``steps`` per seed, all on ``task``, and ``entries``."""
    return {"steps": steps, "env_steps": {task: steps}, **entries}


def smoke_scale(task: str, steps: int, method: str, note: str, shrink: dict = SMOKE_SHRINK) -> dict:
    """A one-task target's smoke scale (tests only): ``method`` alone (one compiled program), 2 seeds x ``steps``
    with the ``shrink`` settings, ~25 s."""
    return one_task_scale(task, steps, seeds=2, runs=1, wall_s=25, methods=[method], shrink=shrink, note=note)


# --------------------------------------------------------------------------- training and tabulating


def train_task(
    methods: list[tuple], task: str, out: Path, scale: Scale, limit: float, extra_columns=None
) -> tuple[list[dict], list]:
    """Train ``methods`` on ``task`` (deep_rl.compare_algorithms, the scale's shrink applied last) and add the
    curve columns (and ``extra_columns(cost, ret)``'s, curves (seeds, K)); returns the rows and each run's
    (row, cost curves, return curves) for the figure."""
    steps = scale["env_steps"][task]
    base = {"constraint": {"type": "expected", "limit": limit}, "total_steps": steps, "seeds": scale.seeds}
    if task in REFERENCE_STEPS:  # the baselines' annealed std follows the reference run's schedule at any budget
        base["network"] = {"action_std_anneal_steps": REFERENCE_STEPS[task]}
    shrink = scale.get("shrink", {})
    chosen = [(label, algo, configlib.merge(over, shrink)) for label, algo, over in deep_rl.methods_at(methods, scale)]
    result = deep_rl.compare_algorithms(chosen, task, out / task, base, show_progress=scale.name != "smoke")
    curves = []
    for row in result["rows"]:
        run_dir = out / task / "runs" / deep_rl.run_dir_name(row["method"])
        cfg, progress = run_directory.load_run_config(run_dir), run_directory.read_progress(run_dir)
        seeds = run_directory.seed_ids(cfg)
        cost, ret = per_seed_series(progress, "episode_cost", seeds), per_seed_series(progress, "episode_return", seeds)
        logged = bool(progress) and "episode_cost_sd" in progress[0]
        episode_sd = per_seed_series(progress, "episode_cost_sd", seeds) if logged else None
        row["env"] = task
        row.update(curve_columns(cost, limit, cfg["num_envs"] * cfg["rollout_steps"], episode_sd))
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
    """Every task of ``tasks`` in turn; the rows, the combined figure (``title``, then the seeds: ``SCPO paper Fig. 5:
    4 seeds, mean +- SD``) and each task's curves.png."""
    rows, curves, figures = [], {}, []
    for task in tasks:
        task_rows, curves[task] = train_task(methods, task, out, scale, COST_LIMITS[task], extra_columns)
        rows += task_rows
        figures.append(f"{task}/curves.png")
    figures.insert(0, curves_figure(curves, out / figure, f"{title}: {scale.seeds} seeds, mean +- SD"))
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
