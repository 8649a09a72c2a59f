"""``ctrpo-beta``, ``ctrpo-hysteresis``, ``ctrpo-cost-noise``, ``ctrpo-phi``: the C-TRPO paper's ablations.

Milosevic, Mueller, Scherf, "Embedding Safety into RL: A New Take on Trust Region Methods" (arXiv:2411.02957):

* ``ctrpo-beta`` -- App. D.1, Fig. 8: C-TRPO on AntVelocity for several barrier weights beta (b_H = 0.8 b).
  Claims: the return does not degrade up to beta = 1 and does above it; beta "modulates the stringency with which
  C-TRPO satisfies the constraint" (cost and cost regret fall as beta grows).
* ``ctrpo-hysteresis`` -- App. D.1, Fig. 9: the hysteresis fraction b_H / b on AntVelocity (beta = 1; "0 < b_H < b
  seems beneficial"); and App. D.2, Fig. 10: C-TRPO and CPO, each with (b_H = 0.8 b) and without hysteresis, the IQM
  over seeds x tasks of the PPO-normalised return, the threshold-normalised cost V_c / b and the cost regret over
  CPO's (no hysteresis).  Claims: hysteresis improves safety for both, slightly reduces C-TRPO's return, and
  "even C-TRPO without hysteresis achieves lower cost regret compared to CPO with hysteresis".
* ``ctrpo-cost-noise`` -- App. D.3, Fig. 11: C-TRPO on AntVelocity with white noise of std sigma on the cost
  critic's values and bootstrap values before GAE (``hparams.cost_value_noise``, :mod:`saferl.algos.ctrpo`).
  Claims: the final return falls slightly at sigma = 0.5, the cost regret grows with sigma.
* ``ctrpo-phi`` -- Sec. 5 and App. B.2.1: phi(x) = x log x, "motivated by its superior performance in our
  experiments", against the log barrier phi(x) = -log x (the paper shows no figure of it).

beta, b_H and sigma are traced hyper-parameters: each sweep trains every value x every seed in one program
(:mod:`saferl.training.in_program_sweep`), one run directory ``out/runs/<kind>_sweep``; a point's runners are what a
separate run with that value trains.  phi and CPO's hysteresis are static (separate runs).  Fig. 10's and phi's runs use
ctrpo-table1's layout and budgets (``out/<task>/runs/<method>``, :func:`ctrpo_table1.task_base`), so their C-TRPO,
CPO and PPO runs are ctrpo-table1's: run both targets into one ``--out`` and they are trained once.

Where the values come from (the figures' values are not in the paper's text)
------------------------------------------------------------------------------
* sigma = 0.05, 0.1, 0.2, 0.5: the authors' runs (milosen/ctrpo ``data/runs/noise/noise_0_05`` ... ``noise_0_5``,
  ``noise_level`` in their config.json, drawn by ``plots/plots_noise.ipynb``), plus sigma = 0 as the reference
  (their notebook's noiseless entry finds no run); their noise runs have ``hyst_frac`` 1.0, so ours run without
  hysteresis too, beta = 1, 10M steps, 5 seeds.
* Fig. 10: ``data/runs/ablation/<task>/{c-trpo, c-trpo-hyst, cpo-hyst}`` (``hyst_frac`` 1.0 / 0.8 / 0.8, beta 1;
  CPO without hysteresis is the benchmark's CPO) and ``plots/helpers.py`` / ``plots_ablation.ipynb`` (return over
  PPO's mean final return, cost over 25, regret over the mean final regret of CPO without hysteresis; IQM over
  5 seeds x 8 tasks, rliable's stratified bootstrap, 50,000 resamples).
* beta and b_H: no run, script or notebook of the repository sweeps them, so the lists are ours: beta spans
  0.05 (the value in a comment of the authors' ``c-trpo-noise.py`` defaults) to 5 around the paper's 1, since the
  claim is about beta <= 1 against beta > 1; b_H / b from 0.6 to 1 (no hysteresis) around the paper's 0.8.
* phi: neither runs nor a figure exist; the target compares the two on the benchmark's tasks.

Where it differs, and why
-------------------------
* Our C-TRPO, CPO and environments are saferl's, in the authors' harness (ctrpo-table1's docstring; its batch of
  10 envs x 2,000 steps since commit d92f081), "final" = the mean over the last 10% of iterations.  Intervals of a
  sweep point are the 95% bootstrap interval of the mean over seeds (:func:`verdicts.bootstrap_mean`); Fig. 10's are
  IQMs over seeds x tasks as the authors'.
* Our C-TRPO starts outside recovery (:mod:`saferl.algos.ctrpo`); the authors' starts in recovery.
* The cost-value noise: see :mod:`saferl.algos.ctrpo` (each state's value corrupted once, as the authors'
  ``NoisyBuffer``; a terminal step's bootstrap differs).
* ``smoke`` (tests) runs on ToyReach; ``cpu`` runs the sweeps on AntVelocity far below 10M steps and Fig. 10 /
  phi on the navigation tasks only (:data:`CPU_TASKS`), so its numbers are not the paper's in magnitude.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.stats

from saferl.analysis import metrics, plotting, verdicts
from saferl.reproduce import deep_rl
from saferl.reproduce.ctrpo import table1
from saferl.reproduce.framework import Scale, target
from saferl.training import config as configlib
from saferl.training import in_program_sweep, runs

LIMIT = table1.LIMIT  # 25, every task of the benchmark (the authors' cost_limit)
ABLATION_TASK = "SafetyAntVelocity"  # App. D.1 and D.3: "the AntVelocity environment"
QUANTITIES = ("final_return", "final_cost", "cost_regret")
HYST = {"hparams": {"hysteresis": 0.8}}  # b_H = 0.8 b, the paper's (Sec. 5) and the authors' hyst_frac
#: kind -> (swept key, values, fixed hyper-parameters, the figure); module docstring for the values' sources
SWEEPS = {
    "beta": ("hparams.beta", (0.05, 0.2, 0.5, 1.0, 2.0, 5.0), {}, "Fig. 8"),
    "hysteresis": ("hparams.hysteresis", (0.6, 0.7, 0.8, 0.9, 1.0), {}, "Fig. 9"),
    "cost_noise": ("hparams.cost_value_noise", (0.0, 0.05, 0.1, 0.2, 0.5), {"hysteresis": 1.0}, "Fig. 11"),
}
#: Fig. 10 (label, algorithm, overrides): our labels as in ctrpo-pointgoal; FIG10_NAMES the paper's
FIG10_METHODS = [
    ("C-TRPO", "ctrpo", {}),
    (table1.TABLE1_CTRPO, "ctrpo", {"hparams": {"hysteresis": 1.0}}),  # ctrpo-table1's run
    ("CPO", "cpo", {}),
    ("CPO (option: hysteresis)", "cpo", HYST),
    ("PPO", "ppo", {}),
]
FIG10_NAMES = {
    "C-TRPO": "C-TRPO (hyst.)",
    table1.TABLE1_CTRPO: "C-TRPO (no hyst.)",
    "CPO (option: hysteresis)": "CPO (hyst.)",
    "CPO": "CPO (no hyst.)",
}
PHI_METHODS = [("C-TRPO", "ctrpo", {}), ("C-TRPO (ablation: phi = -log x)", "ctrpo", {"hparams": {"phi": "neglog"}})]
BOOTSTRAP_REPS = table1.BOOTSTRAP_REPS  # the authors' notebooks: 50,000 resamples

# --------------------------------------------------------------------------- scales

_SMOKE = {
    "env": "ToyReach",
    "num_envs": 4,
    "config": {"iterations_per_chunk": 1, "rollout_steps": 200},
    "tasks": ["ToyReach"],
    "reps": 2000,
}
#: cpu, the Ant sweeps (measured with 16 envs x 1000 steps per iteration and runner; the authors' 10 x 2000 since
#: commit d92f081): env steps per second over all runners, over the whole training time of the committed cpu sweeps
#: (2026-12-02: beta, 6 points x 3 seeds x 320k steps in 779 s; cost noise, 5 points in 617 s; MuJoCo C physics).
#: Those two runs do not separate the compile from the rate, so the compile is counted inside the rate and not again.
ANT_SWEEP_STEPS_PER_SECOND = 7_600
ANT_SWEEP_COMPILE_SECONDS = 0
CPU_SWEEP_STEPS, CPU_SWEEP_SEEDS = 320_000, 3  # 16 updates of 20,000 steps per runner (the paper's: 500)
#: cpu, Fig. 10 and phi: the four navigation tasks at ctrpo-table1's cpu budgets (800k steps, 5 seeds)
CPU_TASKS = ["PointGoal1", "RacecarCircle1", "PointPush1", "CarButton1"]


def _sweep_seconds(points: int) -> float:
    return ANT_SWEEP_COMPILE_SECONDS + points * CPU_SWEEP_SEEDS * CPU_SWEEP_STEPS / ANT_SWEEP_STEPS_PER_SECOND


def _tasks_seconds(methods: list, tasks: list) -> float:
    return sum(
        len(methods) * (table1.SEEDS * table1.CPU_STEPS[t] / table1.CPU_STEPS_PER_SECOND[t] + table1.COMPILE_SECONDS[t])
        for t in tasks
    )


def _scales(kind: str) -> dict[str, Scale]:
    """smoke (tests: ToyReach, 4 envs x 2 iterations of 200 steps, 2 seeds, the first and last value), cpu (the sweep
    on AntVelocity, :data:`CPU_SWEEP_STEPS` x :data:`CPU_SWEEP_SEEDS`; Fig. 10 and phi on :data:`CPU_TASKS` at
    ctrpo-table1's cpu budgets and 5 seeds), full (the paper's 10M steps x 5 seeds everywhere)."""
    values = SWEEPS[kind][1] if kind in SWEEPS else ()
    per_task = kind in ("hysteresis", "phi")
    sweep_note = f"{ABLATION_TASK} {CPU_SWEEP_STEPS // 1000}k steps x {CPU_SWEEP_SEEDS} seeds per value"
    tasks_note = f"{', '.join(CPU_TASKS)} at ctrpo-table1's cpu budgets x {table1.SEEDS} seeds"
    wall = {
        "beta": _sweep_seconds(6),
        "hysteresis": _sweep_seconds(5) + _tasks_seconds(FIG10_METHODS, CPU_TASKS),
        "cost_noise": _sweep_seconds(5),
        "phi": _tasks_seconds(PHI_METHODS, CPU_TASKS),
    }[kind]
    cpu = {
        "env": ABLATION_TASK,
        "values": values,
        "sweep_steps": CPU_SWEEP_STEPS,
        "sweep_seeds": CPU_SWEEP_SEEDS,
        "tasks": CPU_TASKS,
        "task_steps": dict(table1.CPU_STEPS),
        "num_envs": None,
        "config": {},
        "reps": BOOTSTRAP_REPS,
    }
    cpu_note = {
        "beta": sweep_note,
        "cost_noise": sweep_note,
        "phi": tasks_note,
        "hysteresis": f"Fig. 9: {sweep_note}; Fig. 10: {tasks_note}",
    }[kind]
    full_note = {
        "beta": ABLATION_TASK,
        "cost_noise": ABLATION_TASK,
        "phi": "the eight tasks",
        "hysteresis": f"Fig. 9 on {ABLATION_TASK}, Fig. 10 on the eight tasks",
    }[kind]
    smoke_wall = {"beta": 30.0, "cost_noise": 40.0, "phi": 60.0, "hysteresis": 100.0}[kind]  # measured, load ~6
    return {
        "smoke": Scale(
            steps=1_600,
            seeds=2,
            wall_s=smoke_wall,
            note=f"ToyReach; values {(values[0], values[-1])}" if values else "ToyReach",
            params={**_SMOKE, "values": (values[0], values[-1]) if values else ()},
        ),
        "cpu": Scale(
            steps=None if per_task else CPU_SWEEP_STEPS,
            seeds=table1.SEEDS if per_task else CPU_SWEEP_SEEDS,
            wall_s=wall,
            note=cpu_note,
            params=cpu,
        ),
        "full": Scale(
            steps=table1.FULL_STEPS,
            seeds=table1.SEEDS,
            wall_s=None,
            note=f"the paper's budget, {full_note}: meant for an accelerator",
            params={
                "env": ABLATION_TASK,
                "values": values,
                "tasks": list(table1.TASKS),
                "num_envs": None,
                "config": {},
                "reps": BOOTSTRAP_REPS,
            },
        ),
    }


# --------------------------------------------------------------------------- runs


def sweep_config(kind: str, scale: Scale) -> dict:
    """The resolved config of a sweep target's one run: C-TRPO on the scale's env, every value in one program."""
    key, _, fixed, _ = SWEEPS[kind]
    values = list(scale["values"])
    settings = table1.harness_settings(scale)
    settings.update(total_steps=scale.get("sweep_steps", scale.steps), seeds=scale.get("sweep_seeds", scale.seeds))
    user = {
        "algo": "ctrpo",
        "env": scale["env"],
        **settings,
        "constraint": {"type": "expected", "limit": LIMIT},
        "hparams": dict(fixed),
    }
    if len(values) > 1:
        user["sweep"] = {key: values}
    else:
        user["hparams"][key.partition(".")[2]] = values[0]
    return table1.authors_harness(configlib.resolve(user))


def plan_sweep(kind: str, scale: Scale, out: Path) -> list[tuple[Path, dict]]:
    return [(Path(out) / "runs" / f"{kind}_sweep", sweep_config(kind, scale))]


def plan_tasks(methods: list, scale: Scale, out: Path) -> list[tuple[Path, dict]]:
    """ctrpo-table1's layout and per-task budgets: ``out/<task>/runs/<method>``, task by task."""
    return [
        entry
        for task in scale["tasks"]
        for entry in table1.plan_with_harness(methods, task, Path(out) / task, table1.task_base(scale, task))
    ]


def seed_values(rows: list[dict], final: dict, seeds: list[int], limit: float) -> dict[str, np.ndarray]:
    """Per seed (NaN where unknown): final return and cost (the last 10% of iterations, ``final`` of summary.json)
    and the cost regret (eq. 2) over the iterations of ``rows``; an iteration without a finished episode counts as
    no violation."""
    values = {}
    for name, key in (("final_return", "episode_return"), ("final_cost", "episode_cost")):
        per_seed = final.get(key, {}).get("per_seed", [None] * len(seeds))
        values[name] = np.array([np.nan if v is None else v for v in per_seed], float)
    costs = deep_rl.per_seed_series(rows, table1.regret_cost_column(rows), seeds)
    costs = np.where(np.isnan(costs), limit, costs)
    values["cost_regret"] = np.array([metrics.cost_regret(c, limit) for c in costs])
    return values


def point_entries(run_dir: Path, cfg: dict, summary: dict) -> list[dict]:
    """One entry per grid point of a (swept) run: its value, its progress rows and its :func:`seed_values`."""
    rows, seeds = runs.read_progress(run_dir), runs.seed_ids(cfg)
    key = next(iter(cfg.get("sweep") or {}), None)
    if key is None:  # one value: a plain run
        return [{"value": None, "rows": rows, "values": seed_values(rows, summary["final"], seeds, LIMIT)}]
    out = []
    for entry in summary["grid"]:
        point_rows = [r for r in rows if r.get(in_program_sweep.POINT_COLUMN) == entry["index"]]
        out.append(
            {
                "value": entry["point"][key],
                "rows": point_rows,
                "values": seed_values(point_rows, entry["final"], seeds, LIMIT),
            }
        )
    return out


def interval_row(values: dict[str, np.ndarray], limit: float = LIMIT) -> dict:
    """Mean and 95% bootstrap interval over seeds of each quantity, and the final-cost verdict against ``limit``."""
    row = {}
    for name in QUANTITIES:
        row[name], row[f"{name}_lo"], row[f"{name}_hi"] = verdicts.bootstrap_mean(values[name])
    row["safety"] = verdicts.safety_verdict(row["final_cost_lo"], row["final_cost_hi"], limit)
    return row


def train_sweep(kind: str, scale: Scale, out: Path) -> tuple[list[dict], list[dict]]:
    """Train (or reuse) the sweep; its rows (one per value) and entries."""
    ((run_dir, cfg),) = plan_sweep(kind, scale, out)
    summary = deep_rl.train_or_resume(cfg, run_dir, show_progress=scale.name != "smoke")
    name = SWEEPS[kind][0].partition(".")[2]
    entries = point_entries(run_dir, cfg, summary)
    if entries[0]["value"] is None:
        entries[0]["value"] = cfg["hparams"][name]
    rows = [
        {
            "figure": SWEEPS[kind][3],
            name: e["value"],
            "env": cfg["env"],
            **interval_row(e["values"]),
            "seeds": cfg["seeds"],
            "env_steps_per_seed": summary["env_steps"],
        }
        for e in entries
    ]
    shown = {"hysteresis": "b_H / b", "cost_value_noise": "sigma"}.get(name, name)
    return rows, [{**e, "label": f"{shown} = {e['value']:g}", "seeds": runs.seed_ids(cfg)} for e in entries]


def train_tasks(methods: list, scale: Scale, out: Path) -> list[dict]:
    """Train (or reuse) :func:`plan_tasks`; one entry per run: task, label, method, its rows and seed values."""
    labels = [label for label, _, _ in methods] * len(scale["tasks"])
    entries = []
    for label, (run_dir, cfg) in zip(labels, plan_tasks(methods, scale, out)):
        summary = deep_rl.train_or_resume(cfg, run_dir, show_progress=scale.name != "smoke")
        (entry,) = point_entries(run_dir, cfg, summary)
        entries.append(
            {
                **entry,
                "task": cfg["env"],
                "label": label,
                "method": deep_rl.units_label(label, cfg),
                "seeds": runs.seed_ids(cfg),
                "env_steps": summary["env_steps"],
            }
        )
    return entries


def task_rows(entries: list[dict], figure: str) -> list[dict]:
    return [
        {
            "figure": figure,
            "env": e["task"],
            "method": e["method"],
            "label": e["label"],
            **interval_row(e["values"]),
            "seeds": len(e["seeds"]),
            "env_steps_per_seed": e["env_steps"],
        }
        for e in entries
    ]


# --------------------------------------------------------------------------- Fig. 10: IQM over seeds x tasks

FIG10_SCORES = (
    ("normalized_return", "final_return", "return / PPO's mean"),
    ("normalized_cost", "final_cost", "cost / b"),
    ("normalized_regret", "cost_regret", "cost regret / CPO's (no hyst.) mean"),
)


def fig10_rows(entries: list[dict], reps: int = BOOTSTRAP_REPS) -> tuple[list[dict], dict]:
    """Per ablated method the IQM over seeds x tasks of the three normalised scores with the stratified-bootstrap
    95% interval (plots_ablation.ipynb: return / PPO's mean final return, cost / b, regret / the mean regret of CPO
    without hysteresis, per task), and ``{method: {score: {task: why}}}`` of the tasks left out of a score (no run,
    a reference mean <= 0, which has no ratio, or a seed without a value)."""
    cell = {(e["task"], e["label"]): e["values"] for e in entries}
    tasks = list(dict.fromkeys(e["task"] for e in entries))
    refs, left_out = {}, {}
    for task in tasks:
        ppo, cpo = cell.get((task, "PPO")), cell.get((task, "CPO"))
        refs[task] = {
            "final_return": float(np.mean(ppo["final_return"])) if ppo is not None else np.nan,
            "final_cost": LIMIT,
            "cost_regret": float(np.mean(cpo["cost_regret"])) if cpo is not None else np.nan,
        }
    rows = []
    for label, name in FIG10_NAMES.items():
        row = {"figure": "Fig. 10", "method": name, "label": label}
        for field, value, _ in FIG10_SCORES:
            columns = []
            for task in tasks:
                ref, v = refs[task][value], cell.get((task, label), {}).get(value)
                if v is None or not ref > 0 or not np.all(np.isfinite(v)):
                    left_out.setdefault(name, {}).setdefault(field, {})[task] = (
                        "no run"
                        if v is None
                        else (f"reference {ref:.4g} is not > 0" if not ref > 0 else "a seed has no value")
                    )
                    continue
                columns.append(np.asarray(v, float) / ref)
            if columns:
                ci = metrics.stratified_bootstrap_ci(np.stack(columns, axis=1), statistic=metrics.iqm, reps=reps)
                row[field], row[f"{field}_lo"], row[f"{field}_hi"] = ci.estimate, ci.lower, ci.upper
            else:
                row[field] = row[f"{field}_lo"] = row[f"{field}_hi"] = float("nan")
        row["tasks"] = len(tasks)
        rows.append(row)
    return rows, left_out


# --------------------------------------------------------------------------- claims


def rank_correlation(x, y) -> float | None:
    """Spearman's rank correlation of the means, ties given their average rank; None below 3 finite points
    or where either series is constant (a sweep whose regret is 0 throughout has no trend to rank)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = np.isfinite(x) & np.isfinite(y)
    if keep.sum() < 3 or np.ptp(x[keep]) == 0 or np.ptp(y[keep]) == 0:
        return None
    return float(scipy.stats.spearmanr(x[keep], y[keep]).statistic)


BOUND = "the constraint bound (cost regret above 0 at some swept value)"


def _sweep_rows(rows: list[dict], figure: str, name: str) -> list[dict]:
    return sorted((r for r in rows if r.get("figure") == figure), key=lambda r: r[name])


def _safety(rows: list[dict], field: str, shown: str) -> dict:
    """Each swept value's verdict, and whether the constraint bound anywhere in the sweep: with no cost regret at
    any value (cost below the limit throughout), the sweep cannot show what the swept setting does to safety."""
    return {
        "safety": {f"{shown}={r[field]:g}": r["safety"] for r in rows},
        BOUND: any(r["cost_regret_hi"] > 0 for r in rows) if rows else None,
    }


def beta_checks(rows: list[dict]) -> dict:
    """Fig. 8: return not below the smallest beta's up to beta = 1, the largest beta's below beta = 1's; the largest
    beta's cost and regret below the smallest beta's, and the rank correlations of beta with them."""
    rows = _sweep_rows(rows, "Fig. 8", "beta")
    by = {r["beta"]: r for r in rows}
    low, high, one = (rows[0] if rows else None), (rows[-1] if rows else None), by.get(1.0)
    upto = [r for r in rows if r["beta"] <= 1.0 and r is not low]
    orders = [verdicts.interval_order(r, low, "final_return") for r in upto]
    checks = _safety(rows, "beta", "beta")
    checks["return up to beta = 1 not below the smallest beta's"] = (
        None if not upto or None in orders else all(o != "below" for o in orders)
    )
    above = high if high is not None and high["beta"] > 1.0 else None
    order = verdicts.interval_order(above, one, "final_return")
    checks["return at the largest beta below beta = 1's"] = None if order is None else order == "below"
    for name in ("final_cost", "cost_regret"):
        order = verdicts.interval_order(high, low, name) if high is not low else None
        checks[f"{name} at the largest beta below the smallest beta's"] = None if order is None else order == "below"
        checks[f"rank correlation of beta and {name}"] = rank_correlation(
            [r["beta"] for r in rows], [r[name] for r in rows]
        )
    return checks


def hysteresis_checks(rows: list[dict]) -> dict:
    """Fig. 9: regret at b_H = 0.8 b below b_H = b's, and no b_H < b above it; Fig. 10 (IQMs): hysteresis lowers
    the cost regret of C-TRPO and of CPO, lowers C-TRPO's return (point estimates: "slightly"), and C-TRPO without
    hysteresis has lower cost regret than CPO with it."""
    sweep = _sweep_rows(rows, "Fig. 9", "hysteresis")
    by = {r["hysteresis"]: r for r in sweep}
    none = by.get(1.0)
    checks = _safety(sweep, "hysteresis", "b_H/b")
    order = verdicts.interval_order(by.get(0.8), none, "cost_regret")
    checks["Fig. 9: regret at b_H = 0.8 b below b_H = b"] = None if order is None else order == "below"
    orders = [verdicts.interval_order(r, none, "cost_regret") for r in sweep if r["hysteresis"] < 1.0]
    checks["Fig. 9: no b_H < b has regret above b_H = b"] = (
        None if not orders or None in orders else all(o != "above" for o in orders)
    )
    fig10 = {r["method"]: r for r in rows if r.get("figure") == "Fig. 10"}
    for algo in ("C-TRPO", "CPO"):
        order = verdicts.interval_order(
            fig10.get(f"{algo} (hyst.)"), fig10.get(f"{algo} (no hyst.)"), "normalized_regret"
        )
        checks[f"Fig. 10: hysteresis lowers {algo}'s cost regret"] = None if order is None else order == "below"
    hyst, plain = fig10.get("C-TRPO (hyst.)"), fig10.get("C-TRPO (no hyst.)")
    checks["Fig. 10: hysteresis lowers C-TRPO's return (IQM)"] = (
        None
        if hyst is None or plain is None or not np.isfinite(hyst["normalized_return"] - plain["normalized_return"])
        else bool(hyst["normalized_return"] < plain["normalized_return"])
    )
    order = verdicts.interval_order(plain, fig10.get("CPO (hyst.)"), "normalized_regret")
    checks["Fig. 10: C-TRPO (no hyst.) regret below CPO (hyst.)"] = None if order is None else order == "below"
    task_rows_ = [r for r in rows if r.get("figure") == "Fig. 10 (per task)"]
    checks["Fig. 10 per task: safety"] = {f"{r['env']}: {r['method']}": r["safety"] for r in task_rows_}
    return checks


def cost_noise_checks(rows: list[dict]) -> dict:
    """Fig. 11: the largest sigma's cost regret above the smallest's and the rank correlation of sigma with regret
    ("the cost regret increases with the amount of noise"); the return at the largest sigma below the smallest's
    (point estimates: "decreases slightly") and by interval."""
    rows = _sweep_rows(rows, "Fig. 11", "cost_value_noise")
    low, high = (rows[0], rows[-1]) if len(rows) > 1 else (None, None)
    checks = _safety(rows, "cost_value_noise", "sigma")
    order = verdicts.interval_order(high, low, "cost_regret")
    checks["regret at the largest sigma above the smallest sigma's"] = None if order is None else order == "above"
    checks["rank correlation of sigma and cost_regret"] = rank_correlation(
        [r["cost_value_noise"] for r in rows], [r["cost_regret"] for r in rows]
    )
    checks["return at the largest sigma below the smallest sigma's (means)"] = (
        None if low is None else bool(high["final_return"] < low["final_return"])
    )
    checks["return at the largest sigma vs the smallest sigma's (intervals)"] = verdicts.interval_order(
        high, low, "final_return"
    )
    return checks


def phi_checks(rows: list[dict]) -> dict:
    """Per task: x log x's return and cost regret against -log x's (intervals: above / below / overlapping), each
    verdict, and the number of tasks where x log x is worse by interval (return below or regret above)."""
    checks, worse = {}, 0
    for task in dict.fromkeys(r["env"] for r in rows):
        by = {r["label"]: r for r in rows if r["env"] == task}
        xlogx, neglog = by.get(PHI_METHODS[0][0]), by.get(PHI_METHODS[1][0])
        ret, reg = (
            verdicts.interval_order(xlogx, neglog, "final_return"),
            verdicts.interval_order(xlogx, neglog, "cost_regret"),
        )
        checks[task] = {
            "x log x vs -log x, return": ret,
            "x log x vs -log x, cost regret": reg,
            "safety": {r["method"]: r["safety"] for r in by.values()},
        }
        worse += int(ret == "below" or reg == "above")
    checks["tasks where x log x is worse (return below or regret above)"] = worse
    return checks


# --------------------------------------------------------------------------- figures


def plot_curves(groups: list[dict], path: Path, title: str) -> Path:
    """Return, cost (with the limit) and cumulative cost regret against env steps, mean +- SD over seeds, one curve
    per group (``label``, ``rows``, ``seeds``)."""
    plt = plotting.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    for group in groups:
        steps = np.asarray(sorted({r["env_steps"] for r in group["rows"]}), float)
        costs = deep_rl.per_seed_series(group["rows"], "episode_cost", group["seeds"])
        series = [
            deep_rl.per_seed_series(group["rows"], "episode_return", group["seeds"]),
            costs,
            np.stack([metrics.cost_regret(c, LIMIT, cumulative=True) for c in np.where(np.isnan(costs), LIMIT, costs)]),
        ]
        for ax, y in zip(axes, series):
            plotting.band(ax, steps, np.nanmean(y, axis=0), np.nanstd(y, axis=0), label=group["label"])
    axes[1].axhline(LIMIT, color="k", ls="--", lw=1, label="cost limit")
    for ax, name in zip(axes, ("return", "cost", "cost regret")):
        ax.set_title(name)
        ax.set_xlabel("environment steps per seed")
        plotting.steps_axis(ax)
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    return plotting.save_figure(fig, path, dpi=100)


def plot_fig10(rows: list[dict], path: Path, title: str) -> Path:
    """The three IQMs per method as points with their 95% intervals."""
    plt = plotting.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for ax, (field, _, name) in zip(axes, FIG10_SCORES):
        for i, row in enumerate(rows):
            value, lo, hi = row[field], row[f"{field}_lo"], row[f"{field}_hi"]
            if np.isfinite(value):
                ax.errorbar(i, value, yerr=[[value - lo], [hi - value]], fmt="o", capsize=3)
        ax.axhline(1.0, color="k", ls="--", lw=1)
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels([r["method"] for r in rows], rotation=25, ha="right", fontsize=8)
        ax.set_title(f"IQM of {name}", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(title, fontsize=10)
    return plotting.save_figure(fig, path, dpi=100)


# --------------------------------------------------------------------------- the targets


def _sweep_result(kind: str, scale: Scale, out: Path) -> dict:
    rows, entries = train_sweep(kind, scale, out)
    key, values, fixed, figure = SWEEPS[kind]
    name = f"ctrpo_{kind}_sweep.png"
    plot_curves(
        entries,
        Path(out) / name,
        f"C-TRPO on {rows[0]['env']} ({figure}), {scale.seeds} seeds (mean +- SD), limit {LIMIT:g}",
    )
    settings = {
        "env": rows[0]["env"],
        "swept": key,
        "values": list(scale["values"]),
        "hparams": fixed,
        "limit": LIMIT,
        "steps": scale.steps,
        "seeds": rows[0]["seeds"],
    }
    return {"rows": rows, "figures": [name], "settings": settings}


@target(
    "ctrpo-beta",
    "C-TRPO on AntVelocity for several beta (App. D.1, Fig. 8): final return, cost, cost regret",
    scales=_scales("beta"),
    checks=beta_checks,
    plan=lambda scale, out: plan_sweep("beta", scale, out),
)
def run_beta(scale: Scale, out: Path) -> dict:
    return _sweep_result("beta", scale, out)


@target(
    "ctrpo-cost-noise",
    "C-TRPO on AntVelocity with white noise of std sigma on the cost value estimates "
    "(App. D.3, Fig. 11): final return, cost, cost regret per sigma",
    scales=_scales("cost_noise"),
    checks=cost_noise_checks,
    plan=lambda scale, out: plan_sweep("cost_noise", scale, out),
)
def run_cost_noise(scale: Scale, out: Path) -> dict:
    return _sweep_result("cost_noise", scale, out)


def plan_hysteresis(scale: Scale, out: Path) -> list[tuple[Path, dict]]:
    return plan_sweep("hysteresis", scale, out) + plan_tasks(FIG10_METHODS, scale, out)


@target(
    "ctrpo-hysteresis",
    "C-TRPO's hysteresis fraction b_H on AntVelocity (App. D.1, Fig. 9) and C-TRPO / CPO with "
    "and without hysteresis, IQM over tasks (App. D.2, Fig. 10)",
    scales=_scales("hysteresis"),
    checks=hysteresis_checks,
    plan=plan_hysteresis,
)
def run_hysteresis(scale: Scale, out: Path) -> dict:
    result = _sweep_result("hysteresis", scale, out)
    entries = train_tasks(FIG10_METHODS, scale, out)
    aggregate, left_out = fig10_rows(entries, reps=scale["reps"])
    name = "ctrpo_fig10_ablation.png"
    plot_fig10(
        aggregate,
        Path(out) / name,
        f"C-TRPO / CPO with and without hysteresis (Fig. 10): IQM over "
        f"{len(scale['tasks'])} task(s) x seeds, 95% stratified bootstrap",
    )
    result["rows"] += task_rows(entries, "Fig. 10 (per task)") + aggregate
    result["figures"].append(name)
    result["settings"]["fig10"] = {
        "tasks": {t: table1.task_steps(scale, t) for t in scale["tasks"]},
        "methods": dict(FIG10_NAMES),
        "left_out": left_out,
        "bootstrap_resamples": scale["reps"],
    }
    return result


@target(
    "ctrpo-phi",
    "C-TRPO with phi = x log x against phi = -log x per task (Sec. 5, App. B.2.1)",
    scales=_scales("phi"),
    checks=phi_checks,
    plan=lambda scale, out: plan_tasks(PHI_METHODS, scale, out),
)
def run_phi(scale: Scale, out: Path) -> dict:
    entries = train_tasks(PHI_METHODS, scale, out)
    figures = []
    for task in scale["tasks"]:
        groups = [{**e, "label": e["method"]} for e in entries if e["task"] == task]
        path = plot_curves(groups, Path(out) / task / "ctrpo_phi.png", f"C-TRPO, phi = x log x vs -log x, on {task}")
        figures.append(str(path.relative_to(out)))
    settings = {
        "tasks": {t: table1.task_steps(scale, t) for t in scale["tasks"]},
        "seeds": scale.seeds,
        "limit": LIMIT,
        "methods": {label: overrides for label, _, overrides in PHI_METHODS},
    }
    return {"rows": task_rows(entries, "phi"), "figures": figures, "settings": settings}
