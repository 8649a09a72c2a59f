"""``canary-fig5``: the Canary paper's Fig. 5, Canary on IcyLake with several violation thresholds eps.

The probability that the cost return reaches 15 during training, mean and SD over seeds (the paper
uses 500 seeds).  Every eps and seed trains in one program: eps is swept inside it
(:mod:`saferl.training.in_program_sweep`, ``constraint.epsilon`` as a vmapped axis beside the seeds), so a point's
runners are what a separate run per eps would train (tests/training/test_in_program_sweep.py checks that equality for
a grid of constraint and hyper-parameter values).  Its scales are its own (many seeds on a small environment), not the
shared deep-RL ones.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from saferl.analysis import metrics, plotting, verdicts
from saferl.reproduce import deep_rl
from saferl.reproduce.deep_rl import SMALL_NETS, per_seed_series, train_or_resume
from saferl.reproduce.framework import Scale, target
from saferl.training import config as configlib
from saferl.training import in_program_sweep, run_directory

FIG5_RHO = 15.0
FIG5_EPSILONS = (0.01, 0.05, 0.1, 0.2)
_UNIT = "env steps per seed"
FIG5_SCALES = {
    "smoke": Scale(
        steps=20_000,
        seeds=4,
        wall_s=60,
        unit=_UNIT,
        params={"epsilons": (0.1, 0.2), "config": {"iterations_per_chunk": 1}},
    ),
    "demo": Scale(steps=150_000, seeds=8, wall_s=225, unit=_UNIT, params={"epsilons": FIG5_EPSILONS}),
    "cpu": Scale(steps=300_000, seeds=32, wall_s=1_500, unit=_UNIT, params={"epsilons": FIG5_EPSILONS}),
    "full": Scale(
        steps=1_000_000,
        seeds=500,
        wall_s=None,
        unit=_UNIT,
        params={"epsilons": FIG5_EPSILONS},
        note="500 seeds: meant for an accelerator",
    ),
}


def fig5_checks(rows: list[dict]) -> dict:
    """Per eps: the mean breach rate at or below eps (the paper's reading) and the verdict of its bootstrap
    interval over seeds (verdicts.safety_verdict)."""
    return {
        f"eps={row['epsilon']:g}": {"P_hat <= eps": row["below_epsilon"], "safety": row.get("safety")} for row in rows
    }


def icylake_canary(scale: Scale, constraint: dict) -> dict:
    """The config (before resolving) of Canary on IcyLake under ``constraint`` at ``scale``: its steps and seeds,
    64x64 networks and the scale's own ``config`` entries."""
    return {
        "algo": "canary",
        "env": "IcyLake",
        "total_steps": scale.steps,
        "seeds": scale.seeds,
        "network": SMALL_NETS,
        "constraint": constraint,
        **scale.get("config", {}),
    }


def plot_curves(curves: dict, title: str, path: Path) -> Path:
    """Fig. 5: per eps the violation probability over training (mean +- SD over seeds, ``curves[eps]``: steps,
    mean, SD) with eps dotted in the same colour."""
    fig, ax = plotting.pyplot().subplots(figsize=(6, 4))
    for eps, (steps, mean, sd) in curves.items():
        line = plotting.band(ax, steps, mean, sd, label=f"eps = {eps:g}", clip=(0, 1))
        ax.axhline(eps, color=line.get_color(), ls=":", lw=1)
    ax.set_xlabel("environment steps")
    plotting.steps_axis(ax)
    ax.set_ylabel(f"P(C >= {FIG5_RHO:g})")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return plotting.save_figure(fig, path, dpi=100)


DESCRIPTION = "Canary on IcyLake: P(C >= 15) during training for several eps, many seeds (Fig. 5)"


@target("canary-fig5", DESCRIPTION, scales=FIG5_SCALES, checks=fig5_checks)
def fig5(scale: Scale, out: Path) -> dict:
    rows, curves = [], {}
    epsilons = list(scale["epsilons"])
    user = icylake_canary(scale, {"type": "var", "rho": FIG5_RHO, "epsilon": epsilons[0], "gamma_c": 1.0})
    if len(epsilons) > 1:
        user["sweep"] = {"constraint.epsilon": epsilons}
    cfg = configlib.resolve(user)
    run_dir = out / "runs" / "epsilon_sweep"
    summary = train_or_resume(cfg, run_dir, show_progress=scale.name != "smoke")
    all_rows = run_directory.read_progress(run_dir)
    seeds = run_directory.seed_ids(cfg)
    method = deep_rl.units_label("Canary", cfg)  # its cost units, as in canary-table1's rows
    for index, eps in enumerate(epsilons):
        progress = [r for r in all_rows if r.get(in_program_sweep.POINT_COLUMN, 0) == index]
        point_final = summary["grid"][index]["final"] if cfg.get("sweep") else summary["final"]
        violation = per_seed_series(progress, "violation_probability", seeds)
        steps = np.asarray(sorted({r["env_steps"] for r in progress}), float)
        mean, sd = np.nanmean(violation, axis=0), np.nanstd(violation, axis=0)
        curves[eps] = (steps, mean, sd)
        p_hat = metrics.breach_rate(violation, np.nan_to_num(per_seed_series(progress, "episodes", seeds)))
        final = point_final["episode_return"]["per_seed"]
        _, p_lo, p_hi = verdicts.bootstrap_mean(p_hat)
        rows.append(
            {
                "method": method,
                "epsilon": eps,
                "rho": FIG5_RHO,
                "seeds": cfg["seeds"],
                "env_steps_per_seed": summary["env_steps"],
                "P_hat": float(np.nanmean(p_hat)),
                "P_hat_lo": p_lo,
                "P_hat_hi": p_hi,
                "P_hat_sd": float(np.nanstd(p_hat)),
                "safety": verdicts.safety_verdict(p_lo, p_hi, eps),
                "final_violation": float(mean[-1]),
                "J": float(np.mean(final)),
                "below_epsilon": bool(np.nanmean(p_hat) <= eps),
                "wall_seconds": summary["wall_seconds"],
            }
        )
    name = "canary_fig5_epsilon_sensitivity.png"
    plot_curves(curves, f"{method} on IcyLake, {scale.seeds} seeds (mean +- SD)", out / name)
    return {
        "rows": rows,
        "figures": [name],
        "settings": {
            "rho": FIG5_RHO,
            "gamma_c": 1.0,
            "network": SMALL_NETS,
            "seeds": scale.seeds,
            "steps": scale.steps,
            "epsilons": scale["epsilons"],
        },
        "note": "the paper uses 500 seeds; every epsilon and seed trains in one program (an in-program sweep)",
    }
