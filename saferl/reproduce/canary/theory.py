"""``canary-theorem42``: an empirical look at Theorem 4.2 (and Prop. 4.1) of the Canary paper on IcyLake.

Canary ("Canary: Value-at-Risk constraints via Cantelli's inequality", arXiv:2601.22993) bounds the error of
its linearised Cantelli constraint over one trust-region step (Theorem 4.2, eq. 33, App. A.5):

    |J_C(pi_{k+1}) - L_C(pi_{k+1})| <= K (beta a~ + 2 rho a + (2 a / eps) M),
    K = sqrt(2 delta) gamma_c / (1 - gamma_c)^2

Since L_C(pi_k) = J_C(pi_k), the left side is the measured change of J_C over the step minus the change L_C
(eq. 31) predicts.  Per accepted update k this target takes

* the measured change: J_C of iteration k+1 minus J_C of iteration k (``cantelli_value``, eq. 28, from each
  batch's finished episodes);
* the predicted change and the bound: Canary's ``theorem42_*`` metrics
  (:func:`saferl.algos.cantelli_theory.theorem42_metrics`, which says what is estimated how);

and reports the fraction of accepted steps within the bound (the theorem says: all of them, up to the noise of
estimating J_C from a few dozen episodes), the ratio |error| / bound, and the literal form of the theorem,
J_C(pi_{k+1}) <= bound, on the steps whose linearised constraint L_C(pi_{k+1}) <= 0 held.  It also reports
Prop. 4.1's variance floor over training (``cantelli_feasible``).

Deviation from the paper: gamma_c = 0.99, not 1 -- at gamma_c = 1 (the paper's setting) K is infinite and the
bound says nothing.  rho = 15 and eps = 0.05 are Fig. 5's regime.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from saferl.algos import cantelli_theory as theory
from saferl.analysis import plotting
from saferl.reproduce.canary.fig5 import icylake_canary
from saferl.reproduce.deep_rl import SMALL_NETS, per_seed_series, train_or_resume
from saferl.reproduce.framework import Scale, target
from saferl.training import config as configlib
from saferl.training import run_directory

RHO, EPSILON, GAMMA_C = 15.0, 0.05, 0.99
_ITERATION = 16 * 128  # IcyLake's num_envs x rollout_steps: env steps per iteration
_UNIT = "env steps per seed"
SCALES = {
    "smoke": Scale(
        steps=12 * _ITERATION, seeds=1, wall_s=40, unit=_UNIT, params={"config": {"iterations_per_chunk": 4}}
    ),
    "cpu": Scale(steps=150 * _ITERATION, seeds=4, wall_s=150, unit=_UNIT),
}


def theorem42_checks(rows: list[dict]) -> dict:
    """Eq. 33 is a worst-case bound: it must hold on every accepted step (up to estimation noise)."""
    steps = sum(r["accepted_steps"] for r in rows)
    within = sum(r["within_bound"] for r in rows)
    literal = sum(r["literal_steps"] for r in rows)
    return {
        "bound finite (gamma_c < 1)": all(np.isfinite(r["median_bound"]) for r in rows),
        "eq. 33 holds on every accepted step": steps > 0 and within == steps,
        "fraction of accepted steps within eq. 33": within / steps if steps else float("nan"),
        "largest |J_C(k+1) - L_C(k+1)| / bound": max(r["max_error_over_bound"] for r in rows),
        "J_C(k+1) <= bound on every step with L_C(k+1) <= 0": sum(r["literal_within"] for r in rows) == literal,
        "steps with L_C(k+1) <= 0": literal,
        "Prop. 4.1 floor met, last 10% of iterations (fraction)": float(
            np.mean([r["final_floor_feasible"] for r in rows])
        ),
    }


def _series(progress, seeds, name):
    return per_seed_series(progress, name, seeds)


def step_table(progress: list[dict], seeds: list[int]) -> dict:
    """Per seed and accepted step k (both batches k and k+1 with finished episodes): the measured change of J_C,
    the predicted one, the error and both bounds; arrays (seeds, iterations - 1), NaN where a step is left out."""
    get = lambda name: _series(progress, seeds, name)  # noqa: E731
    j_c, predicted = get("cantelli_value"), get("theorem42_predicted_change")
    episodes, accepted = np.nan_to_num(get("episodes")), np.nan_to_num(get("accepted"))
    measured = j_c[:, 1:] - j_c[:, :-1]
    keep = (accepted[:, :-1] > 0) & (episodes[:, :-1] > 0) & (episodes[:, 1:] > 0) & np.isfinite(measured)
    mask = lambda x: np.where(keep, x, np.nan)  # noqa: E731
    return {
        "measured": mask(measured),
        "predicted": mask(predicted[:, :-1]),
        "error": mask(measured - predicted[:, :-1]),
        "bound": mask(get("theorem42_bound")[:, :-1]),
        "bound_max_adv": mask(get("theorem42_bound_max_adv")[:, :-1]),
        "linearised": mask(j_c[:, :-1] + predicted[:, :-1]),
        "j_next": mask(j_c[:, 1:]),
        "recovery": mask(get("recovery")[:, :-1]),
        "keep": keep,
    }


DESCRIPTION = (
    "Canary on IcyLake: measured change of J_C per accepted step vs Theorem 4.2's bound "
    "(eq. 33, gamma_c = 0.99), and Prop. 4.1's variance floor"
)


@target("canary-theorem42", DESCRIPTION, scales=SCALES, checks=theorem42_checks)
def theorem42(scale: Scale, out: Path) -> dict:
    plt = plotting.pyplot()
    cfg = configlib.resolve(icylake_canary(scale, {"type": "var", "rho": RHO, "epsilon": EPSILON, "gamma_c": GAMMA_C}))
    run_dir = out / "runs" / "canary"
    train_or_resume(cfg, run_dir, show_progress=scale.name != "smoke")
    progress = run_directory.read_progress(run_dir)
    seeds = run_directory.seed_ids(cfg)
    table = step_table(progress, seeds)
    feasible = _series(progress, seeds, "cantelli_feasible")
    variance = _series(progress, seeds, "cantelli_variance")
    violation = _series(progress, seeds, "violation_probability")
    n_iter = feasible.shape[1]
    tail = slice(n_iter - max(1, int(np.ceil(0.1 * n_iter))), n_iter)
    rows, steps = [], []
    for i, seed in enumerate(seeds):
        keep = table["keep"][i]
        error, bound = np.abs(table["error"][i][keep]), table["bound"][i][keep]
        ratio = error / bound
        literal = keep & (table["linearised"][i] <= 0)
        rows.append(
            {
                "seed": seed,
                "accepted_steps": int(keep.sum()),
                "cantelli_mode_steps": int((keep & (table["recovery"][i] == 0)).sum()),
                "within_bound": int((error <= bound).sum()),
                "within_bound_max_adv": int((error <= table["bound_max_adv"][i][keep]).sum()),
                "max_error_over_bound": float(np.max(ratio)) if ratio.size else float("nan"),
                "median_error_over_bound": float(np.median(ratio)) if ratio.size else float("nan"),
                "median_bound": float(np.median(bound)) if bound.size else float("nan"),
                "median_abs_error": float(np.median(error)) if error.size else float("nan"),
                "median_measured_change": float(np.median(table["measured"][i][keep])) if keep.any() else float("nan"),
                "median_predicted_change": float(np.median(table["predicted"][i][keep]))
                if keep.any()
                else float("nan"),
                "literal_steps": int(literal.sum()),
                "literal_within": int((table["j_next"][i][literal] <= table["bound"][i][literal]).sum()),
                "final_floor_feasible": float(np.nanmean(feasible[i, tail])),
                "final_sd": float(np.sqrt(np.nanmean(variance[i, tail]))),
                "sd_floor": float(theory.sd_floor(RHO, EPSILON)),
                "final_violation_probability": float(np.nanmean(violation[i, tail])),
            }
        )
        for k in np.flatnonzero(keep):
            steps.append(
                {
                    "seed": seed,
                    "iteration": int(k + 1),
                    "measured_change": float(table["measured"][i][k]),
                    "predicted_change": float(table["predicted"][i][k]),
                    "bound": float(table["bound"][i][k]),
                    "bound_max_adv": float(table["bound_max_adv"][i][k]),
                }
            )
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    iterations = np.arange(1, n_iter)
    for i, seed in enumerate(seeds):
        (line,) = ax1.plot(iterations, np.abs(table["error"][i]), ".", ms=3, label=f"|error|, seed {seed}")
        ax1.plot(iterations, table["bound"][i], "-", lw=1, color=line.get_color())
    ax1.set_yscale("log")
    ax1.set_xlabel("update k")
    ax1.set_ylabel("|J_C(k+1) - L_C(k+1)|  (dots)   eq. 33 bound (lines)")
    ax1.set_title(f"Theorem 4.2, gamma_c = {GAMMA_C:g}, delta = {cfg['hparams']['target_kl']:g}")
    ax1.legend(fontsize=7)
    sd = np.sqrt(variance)
    plotting.band(ax2, np.arange(1, n_iter + 1), np.nanmean(sd, 0), np.nanstd(sd, 0), label="measured SD of C")
    ax2.axhline(theory.sd_floor(RHO, EPSILON), color="k", ls="--", lw=1, label="Prop. 4.1: rho / sqrt(1/eps - 1)")
    ax2.set_xlabel("iteration")
    ax2.set_ylabel("SD of the cost return")
    ax2.set_title(f"Variance floor, rho = {RHO:g}, eps = {EPSILON:g}")
    ax2.legend(fontsize=7)
    name = "canary_theorem42.png"
    plotting.save_figure(fig, out / name, dpi=100)
    return {
        "rows": rows,
        "figures": [name],
        "steps": steps,
        "settings": {
            "rho": RHO,
            "epsilon": EPSILON,
            "gamma_c": GAMMA_C,
            "delta": cfg["hparams"]["target_kl"],
            "network": SMALL_NETS,
            "seeds": scale.seeds,
            "steps": scale.steps,
        },
        "note": (
            "error = measured change of J_C minus L_C's predicted change; the bound's a, a~ are estimated "
            "by max_t |(ratio_t - 1) A_t| over the batch (bound_max_adv: max_t |A_t|), A the GAE "
            "advantages; J_C of iteration k+1 is estimated from the episodes that finished in its batch, "
            "some begun under pi_k"
        ),
    }
