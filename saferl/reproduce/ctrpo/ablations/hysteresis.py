"""``ctrpo-hysteresis``: the hysteresis fraction b_H / b on AntVelocity (App. D.1, Fig. 9) and C-TRPO / CPO with and
without hysteresis, the IQM over seeds x tasks of the normalised scores (App. D.2, Fig. 10); its rows, figure and
checks."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from saferl.analysis import metrics, plotting, verdicts
from saferl.reproduce.ctrpo import table1
from saferl.reproduce.ctrpo.ablations import common
from saferl.reproduce.ctrpo.ablations.common import BOOTSTRAP_REPS, FIG10_METHODS, FIG10_NAMES, LIMIT
from saferl.reproduce.ctrpo.ablations.sweeps import sweep_result, sweep_rows, sweep_safety, where_bound
from saferl.reproduce.ctrpo.harness import PAPER_BUDGET
from saferl.reproduce.framework import Scale, target

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


def hysteresis_checks(rows: list[dict]) -> dict:
    """Fig. 9, as claim verdicts (:mod:`saferl.analysis.verdicts`): regret at b_H = 0.8 b below b_H = b's, and no
    b_H < b above it by more than a tenth of it (non-inferiority); Fig. 10 (IQMs): hysteresis lowers the cost
    regret of C-TRPO and of CPO, lowers C-TRPO's return ("slightly"), and C-TRPO without hysteresis has lower cost
    regret than CPO with it."""
    sweep = sweep_rows(rows, "Fig. 9", "hysteresis")
    by = {r["hysteresis"]: r for r in sweep}
    none = by.get(1.0)
    checks = sweep_safety(sweep, "hysteresis", "b_H/b")
    checks["Fig. 9: regret at b_H = 0.8 b below b_H = b"] = where_bound(
        [by.get(0.8), none], verdicts.ordered(by.get(0.8), none, "cost_regret", "<")
    )
    margin = common.comparable_margin(none, "cost_regret")
    below = [r for r in sweep if r["hysteresis"] < 1.0]
    checks["Fig. 9: no b_H < b has regret above b_H = b"] = where_bound(
        [*below, none],
        verdicts.all_of(
            *(verdicts.not_worse_within(r, none, "cost_regret", margin, higher_is_better=False) for r in below)
        ),
    )
    fig10 = {r["method"]: r for r in rows if r.get("figure") == "Fig. 10"}
    for algo in ("C-TRPO", "CPO"):
        checks[f"Fig. 10: hysteresis lowers {algo}'s cost regret"] = verdicts.ordered(
            fig10.get(f"{algo} (hyst.)"), fig10.get(f"{algo} (no hyst.)"), "normalized_regret", "<"
        )
    hyst, plain = fig10.get("C-TRPO (hyst.)"), fig10.get("C-TRPO (no hyst.)")
    checks["Fig. 10: hysteresis lowers C-TRPO's return"] = verdicts.ordered(hyst, plain, "normalized_return", "<")
    checks["Fig. 10: C-TRPO (no hyst.) regret below CPO (hyst.)"] = verdicts.ordered(
        plain, fig10.get("CPO (hyst.)"), "normalized_regret", "<"
    )
    task_rows_ = [r for r in rows if r.get("figure") == "Fig. 10 (per task)"]
    checks["Fig. 10 per task: safety"] = {f"{r['env']}: {r['method']}": r["safety"] for r in task_rows_}
    return checks


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


def plan_hysteresis(scale: Scale, out: Path) -> list[tuple[Path, dict]]:
    return common.plan_sweep("hysteresis", scale, out) + common.plan_tasks(FIG10_METHODS, scale, out)


@target(
    "ctrpo-hysteresis",
    "C-TRPO's hysteresis fraction b_H on AntVelocity (App. D.1, Fig. 9) and C-TRPO / CPO with "
    "and without hysteresis, IQM over tasks (App. D.2, Fig. 10)",
    scales=common.scales("hysteresis"),
    checks=hysteresis_checks,
    plan=plan_hysteresis,
    paper_budget=PAPER_BUDGET,
)
def run_hysteresis(scale: Scale, out: Path) -> dict:
    result = sweep_result("hysteresis", scale, out)
    entries = common.train_tasks(FIG10_METHODS, scale, out)
    aggregate, left_out = fig10_rows(entries, reps=scale["reps"])
    name = "ctrpo_fig10_ablation.png"
    plot_fig10(
        aggregate,
        Path(out) / name,
        f"C-TRPO / CPO with and without hysteresis (Fig. 10): IQM over "
        f"{len(scale['tasks'])} task(s) x seeds, 95% stratified bootstrap",
    )
    result["rows"] += common.task_rows(entries, "Fig. 10 (per task)") + aggregate
    result["figures"].append(name)
    result["settings"]["fig10"] = {
        "tasks": {t: table1.task_steps(scale, t) for t in scale["tasks"]},
        "methods": dict(FIG10_NAMES),
        "left_out": left_out,
        "bootstrap_resamples": scale["reps"],
    }
    return result
