"""What the deep-RL reproduce targets share: their scales, training (or reusing) runs, tabulating them.

:data:`SCALES` is the one definition of the deep-RL scales (environment steps and seeds per
scale) that ``foundation-pointgoal``, ``ctrpo-pointgoal`` and ``canary-table1`` use;
:func:`scales` turns it into a target's :class:`~saferl.reproduce.framework.Scale` data, with
per-scale overrides declared as data.  :func:`train_or_resume` trains a run, finishes an
interrupted one or reuses a finished one (recording which in results.json);
:func:`compare_algorithms` trains several methods on one environment and returns rows with the
papers' metrics and bootstrap confidence intervals, and the learning-curve figure;
:func:`plan_runs` lists the run directories and configs it trains, without training.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from saferl import algos  # noqa: F401  (registers every algorithm)
from saferl.algos import base
from saferl.algos.second_order import COST_SCALE_LABELS
from saferl.analysis import diagnostics, metrics, plotting, verdicts
from saferl.reproduce.framework import Scale
from saferl.training import config as configlib
from saferl.training import reuse, run_directory

#: Per scale: environment steps per seed, seeds (vmapped in one program), environments per seed
#: (None: the environment's default, 16 on PointGoal1, EcoAnt and IcyLake), further config entries,
#: and the training time of one method on PointGoal1 (default networks) on a 2-core CPU machine,
#: measured (docs/results: ~9 min at cpu) or, for full, extrapolated from cpu.
SCALES = {
    # smoke (tests only): two iterations of 4 envs x one 1000-step PointGoal1 episode, two seeds (for intervals)
    "smoke": {"steps": 8_000, "seeds": 2, "num_envs": 4, "config": {"iterations_per_chunk": 1}, "run_seconds": 30},
    "demo": {"steps": 320_000, "seeds": 3, "num_envs": None, "config": {}, "run_seconds": 250},
    "cpu": {"steps": 2_000_000, "seeds": 5, "num_envs": None, "config": {}, "run_seconds": 550},
    "full": {"steps": 10_000_000, "seeds": 5, "num_envs": None, "config": {}, "run_seconds": 2_750},
}
_FIELDS = ("steps", "seeds", "wall_s", "note", "runs")

#: OmniSafe's 64x64 tanh networks (with value normalisation), for targets that fit a 2-core machine
SMALL_NETS = {"actor_hidden": [64, 64], "critic_hidden": [64, 64], "activation": "tanh", "value_normalization": True}


def scales(runs: int, **overrides: dict) -> dict[str, Scale]:
    """The shared deep-RL scales for a target that trains ``runs`` runs per scale.

    ``overrides[scale]`` replaces ``steps``, ``seeds``, ``runs`` (the runs trained at that scale),
    ``wall_s`` (default: runs x the measured time of one run) or ``note`` and adds the target's own
    settings (``params``), e.g. ``scales(5, full={"seeds": 30, "envs": ["PointGoal1", "EcoAnt"]})``.
    A ``methods`` setting (labels) restricts the methods trained at that scale (:func:`methods_at`)."""
    unknown = set(overrides) - set(SCALES)
    if unknown:
        raise ValueError(f"no shared deep-RL scale {', '.join(sorted(unknown))}; they are {', '.join(SCALES)}")
    out = {}
    for name, shared in SCALES.items():
        over = dict(overrides.get(name, {}))
        fields = {k: over.pop(k) for k in _FIELDS if k in over}
        params = {"num_envs": shared["num_envs"], "config": dict(shared["config"]), **over}
        out[name] = Scale(
            steps=fields.get("steps", shared["steps"]),
            seeds=fields.get("seeds", shared["seeds"]),
            wall_s=fields.get("wall_s", fields.get("runs", runs) * shared["run_seconds"]),
            unit="env steps per seed",
            note=fields.get("note", ""),
            params=params,
        )
    return out


def train_settings(scale: Scale) -> dict:
    """The config entries a deep-RL scale sets: total_steps, seeds, num_envs (unless the env's default), the rest."""
    settings = {"total_steps": scale.steps, "seeds": scale.seeds}
    if scale.get("num_envs") is not None:
        settings["num_envs"] = scale["num_envs"]
    return {**settings, **scale.get("config", {})}


def methods_at(methods: list[tuple], scale: Scale) -> list[tuple]:
    """The entries of ``methods`` (label first, config overrides last) that ``scale`` trains: its ``methods`` labels,
    or all; with ``default_configs_only`` only the entries without overrides (each label's paper configuration)."""
    chosen = scale.get("methods")
    labels = [m[0] for m in methods]
    if chosen is not None:
        unknown = [c for c in chosen if c not in labels]
        if unknown:
            raise ValueError(f"scale {scale.name} names unknown methods {unknown}; the methods are {labels}")
        methods = [m for m in methods if m[0] in chosen]
    if scale.get("default_configs_only"):
        methods = [m for m in methods if not m[-1]]
    return list(methods)


def per_seed_series(rows: list[dict], metric: str, seeds: list[int]) -> np.ndarray:
    """``(seeds, iterations)`` array of ``metric`` from progress rows (NaN where missing)."""
    iterations = sorted({r["iteration"] for r in rows})
    index = {it: i for i, it in enumerate(iterations)}
    out = np.full((len(seeds), len(iterations)), np.nan)
    seed_index = {s: i for i, s in enumerate(seeds)}
    for r in rows:
        if r["seed"] in seed_index and metric in r:
            out[seed_index[r["seed"]], index[r["iteration"]]] = r[metric]
    return out


def train_or_resume(cfg: dict, run_dir: Path, show_progress: bool) -> dict:
    """:func:`saferl.training.reuse.train_or_resume`, printing the resume diagnostics of
    :mod:`saferl.analysis.diagnostics` when it finishes an interrupted run."""
    return reuse.train_or_resume(cfg, run_dir, show_progress, on_resume=diagnostics.print_resume_warnings)


def plan_runs(methods: list[tuple[str, str, dict]], env: str, out: Path, base: dict) -> list[tuple[Path, dict]]:
    """``(run directory, resolved config)`` of every run :func:`compare_algorithms` trains for the same arguments,
    in its order: ``out/runs/<row name>`` (:func:`run_dir_name` of the units-labelled method)."""
    planned = []
    for label, algo, overrides in methods:
        cfg = configlib.resolve(configlib.merge(configlib.merge(base, {"algo": algo, "env": env}), overrides))
        planned.append((Path(out) / "runs" / run_dir_name(units_label(label, cfg)), cfg))
    return planned


def compare_algorithms(
    methods: list[tuple[str, str, dict]], env: str, out: Path, base: dict, show_progress: bool = True
) -> dict:
    """Train ``methods`` = [(label, algo, config overrides)] on ``env``; rows + curves figure."""
    out = Path(out)
    rows, run_dirs = [], []
    for (label, algo, overrides), (run_dir, cfg) in zip(methods, plan_runs(methods, env, out, base)):
        name = units_label(label, cfg)
        summary = train_or_resume(cfg, run_dir, show_progress)
        run_dirs.append(run_dir)
        progress = run_directory.read_progress(run_dir)
        seeds = run_directory.seed_ids(cfg)
        row = {"method": name, "label": label, "algo": cfg["algo"], "default_config": not overrides}
        if units_matter(cfg):
            row["cost_scale"] = cfg["hparams"]["cost_scale"]
        final_return = summary["final"]["episode_return"]["per_seed"]
        final_cost = summary["final"]["episode_cost"]["per_seed"]
        row["final_return"], row["final_return_lo"], row["final_return_hi"] = verdicts.bootstrap_mean(final_return)
        row["final_cost"], row["final_cost_lo"], row["final_cost_hi"] = verdicts.bootstrap_mean(final_cost)
        if cfg["constraint"]["type"] == "expected":
            limit = cfg["constraint"]["limit"]
            costs = per_seed_series(progress, "episode_cost", seeds)
            costs = np.where(np.isnan(costs), limit, costs)  # no finished episode: no evidence of violation
            regrets = [metrics.cost_regret(c, limit) for c in costs]
            row["cost_regret"], row["cost_regret_lo"], row["cost_regret_hi"] = verdicts.bootstrap_mean(regrets)
            row["cost_limit"] = limit
            row["safety"] = verdicts.safety_verdict(row["final_cost_lo"], row["final_cost_hi"], limit)
        if "violation_probability" in summary["final"]:
            vp = summary["final"]["violation_probability"]["per_seed"]
            row["violation_probability"], _, _ = verdicts.bootstrap_mean(vp)
        row["seeds"] = cfg["seeds"]
        row["env_steps_per_seed"] = summary["env_steps"]
        row["wall_seconds"] = summary["wall_seconds"]
        row["steps_per_second"] = summary["steps_per_second"]
        rows.append(row)
    figure = plotting.plot_runs(run_dirs, out / "curves.png")
    return {"rows": rows, "figures": [figure.name], "env": env}


def run_dir_name(method: str) -> str:
    """A results row's name as a directory name: "CPO (OmniSafe units)" -> "CPO_OmniSafe_units"."""
    keep = "".join(c if c.isalnum() or c in "-+." else "_" for c in method)
    return "_".join(part for part in keep.split("_") if part)


def safety_checks(rows: list[dict]) -> dict:
    """Each method's :func:`saferl.analysis.verdicts.safety_verdict`: ``{"safety": {method: verdict}}`` on one task,
    ``{"safety": {task: {method: verdict}}}`` where the rows span several (``env``)."""
    envs = list(dict.fromkeys(row.get("env") for row in rows))
    if len(envs) <= 1:
        return {"safety": {row["method"]: row.get("safety") for row in rows}}
    by_env = {env: {row["method"]: row.get("safety") for row in rows if row.get("env") == env} for env in envs}
    return {"safety": by_env}


def units_matter(cfg: dict) -> bool:
    """Whether the config's algorithm takes its step from the cost surrogate's gradient b against c = J_c - b,
    so that ``hparams.cost_scale`` changes what it computes (CPO, PCPO, C-TRPO and the Canary family)."""
    return bool(getattr(base.get(cfg["algo"]), "step_uses_cost_scale", False))


def units_label(label: str, cfg: dict) -> str:
    """``label`` with the cost surrogate's units appended where they matter: "CPO (OmniSafe units)"; a label
    that already names options gets them inside its parentheses: "CPO (hyst., OmniSafe units)"."""
    if not units_matter(cfg):
        return label
    units = COST_SCALE_LABELS[cfg["hparams"]["cost_scale"]]
    if label.endswith(")") and "(" in label:
        return f"{label[:-1]}, {units})"
    return f"{label} ({units})"
