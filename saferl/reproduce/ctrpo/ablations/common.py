"""What the C-TRPO ablation targets share: their constants, scales, runs, rows and curve figure.

The targets (:mod:`~saferl.reproduce.ctrpo.ablations`, the package's docstring for the paper, the values and
where they come from): the constants and method lists, each target's scales (:func:`scales`), planning and
training the in-program sweeps and the per-task runs (ctrpo-table1's layout), the rows of their seed values
(mean and 95% bootstrap interval) and :func:`plot_curves`, the return / cost / regret curves.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from saferl.analysis import metrics, plotting, verdicts
from saferl.reproduce import deep_rl
from saferl.reproduce.ctrpo import table1
from saferl.reproduce.framework import Scale
from saferl.training import config as configlib
from saferl.training import in_program_sweep, run_directory

LIMIT = table1.LIMIT  # 25, every task of the benchmark (the authors' cost_limit)
ABLATION_TASK = "SafetyAntVelocity"  # App. D.1 and D.3: "the AntVelocity environment"
QUANTITIES = ("final_return", "final_cost", "cost_regret")
HYST = {"hparams": {"hysteresis": 0.8}}  # b_H = 0.8 b, the paper's (Sec. 5) and the authors' hyst_frac
#: kind -> (swept key, values, fixed hyper-parameters, the figure); the package docstring for the values' sources
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
#: "not below" / "not above" claims (non-inferiority, verdicts.not_worse_within): within a tenth of the reference
#: row's |mean|, our choice
COMPARABLE_SHARE = 0.1


def comparable_margin(reference: dict | None, name: str) -> float:
    """The margin of a non-inferiority claim against ``reference``'s ``name``: :data:`COMPARABLE_SHARE` of its
    |mean| (NaN without a reference)."""
    return float("nan") if reference is None else COMPARABLE_SHARE * abs(float(reference[name]))


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


def scales(kind: str) -> dict[str, Scale]:
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
    rows, seeds = run_directory.read_progress(run_dir), run_directory.seed_ids(cfg)
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
    return rows, [{**e, "label": f"{shown} = {e['value']:g}", "seeds": run_directory.seed_ids(cfg)} for e in entries]


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
                "seeds": run_directory.seed_ids(cfg),
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
