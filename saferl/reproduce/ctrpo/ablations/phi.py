"""``ctrpo-phi``: C-TRPO with phi(x) = x log x against the log barrier phi(x) = -log x per task (Sec. 5,
App. B.2.1), and its checks."""

from __future__ import annotations

from pathlib import Path

from saferl.analysis import verdicts
from saferl.reproduce.ctrpo import table1
from saferl.reproduce.ctrpo.ablations.common import (
    LIMIT,
    PHI_METHODS,
    plan_tasks,
    plot_curves,
    scales,
    task_rows,
    train_tasks,
)
from saferl.reproduce.ctrpo.harness import PAPER_BUDGET
from saferl.reproduce.framework import Scale, target


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


@target(
    "ctrpo-phi",
    "C-TRPO with phi = x log x against phi = -log x per task (Sec. 5, App. B.2.1)",
    scales=scales("phi"),
    checks=phi_checks,
    plan=lambda scale, out: plan_tasks(PHI_METHODS, scale, out),
    paper_budget=PAPER_BUDGET,
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
