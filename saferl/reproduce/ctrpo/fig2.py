"""``ctrpo-fig2``, a reproduce target for the C-TRPO paper ("Embedding Safety into RL: A New Take on Trust Region
Methods", arXiv:2411.02957), Figure 2: C-NPG trajectories on a 2-state 2-action CMDP.

ctrpo-fig2: from 10 safe initialisations, C-NPG (eq. 13 with the Gramian G_C of eq. 79) for
beta in {1e-2, 1}; each trajectory's constraint value must stay <= b (Theorem 4.4) and its reward
value must approach the optimum of the CMDP's linear program (eq. 4 / 33; Theorem 4.5).

What the paper leaves open, and what we chose (all recorded under "settings"):
- the toy CMDP: :func:`saferl.tabular.cnpg.figure2_cmdp` (constraint active at the optimum,
  mixed optimal policy);
- phi: the log barrier phi(x) = -log x (Sec. 3.1 names it and x log x).  For the discretised flow
  its curvature 1/x^2 makes the step shrink fast enough near the surface; with x log x (curvature
  1/x, the paper's C-TRPO choice) the Euler step must be of order beta to stay safe; the
  "phi_comparison" entry reports x log x at our step and at a step 100x smaller;
- the step size eta = 0.3 (constant) and the iteration counts: none are given for Figure 2.
  Scales (:data:`SCALES`): smoke 300, demo 1,000, cpu = full 20,000 iterations.  (eta = 0.5 is still safe here,
  eta = 1 crosses at beta = 1e-2: the continuous-time guarantee of Theorem 4.4 needs small steps.)

A reference run of unconstrained Kakade NPG (beta = 0, eq. 8) from the same initialisations is
reported under "reference_npg": it crosses the constraint surface.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from saferl.analysis import plotting
from saferl.reproduce.framework import Scale, target
from saferl.tabular import cnpg as C

BETAS = (1e-2, 1.0)
ETA = 0.3
PHI = "log"
N_INITS = 10
TOL = 1e-3  # "converged" when |V_r - V*| < TOL
# One batch of (beta, eta, phi), run in one compiled call: beta = 0 is unconstrained Kakade NPG
# (eq. 8), the reference; then C-NPG with our phi; then x log x at our step and at a 100x smaller one.
CONFIGS = (
    [(0.0, ETA, PHI)] + [(b, ETA, PHI) for b in BETAS] + [(b, eta, "xlogx") for eta in (ETA, ETA / 100) for b in BETAS]
)


_INITS = f"{N_INITS} safe initialisations in one compiled call"
SCALES = {
    "smoke": Scale(steps=300, seeds=None, wall_s=5, unit="C-NPG iterations", note=_INITS),
    "demo": Scale(steps=1_000, seeds=None, wall_s=5, unit="C-NPG iterations", note=_INITS),
    "cpu": Scale(steps=20_000, seeds=None, wall_s=10, unit="C-NPG iterations", note=_INITS),
    "full": Scale(steps=20_000, seeds=None, wall_s=10, unit="C-NPG iterations", note=_INITS),
}


def safe_initialisations(m: C.DiscountedCMDP, n: int = N_INITS, seed: int = 0) -> np.ndarray:
    """n softmax parameters (n, 2, 2) with pi(a|s) uniform in [0.05, 0.95] and V_c < b strictly."""
    p = np.random.default_rng(seed).uniform(0.05, 0.95, size=(50 * n, m.r.shape[0]))  # pi(stay|s)
    pi = np.stack([p, 1.0 - p], -1)
    safe = (C.policy_values(m, pi)[1] < m.b).all(-1)
    if safe.sum() < n:
        raise RuntimeError("too few safe initial policies drawn")
    return np.log(pi[safe][:n])


def _summary(out: dict, i: int, m: C.DiscountedCMDP, lp: dict) -> dict:
    V_r, V_c, pi = out["V_r"][i], out["V_c"][i], out["pi"][i]  # (N, T+1), (N, T+1, m), (N, T+1, S, A)
    gap = np.abs(V_r - lp["value"])
    # per trajectory: the first iteration after which the gap stays below TOL (None if it ends above)
    settled = [None if bad[-1] else int(np.nonzero(bad)[0][-1] + 1) if bad.any() else 0 for bad in gap >= TOL]
    max_vc = float(V_c.max())
    return {
        "max constraint value": max_vc,
        "b": float(m.b[0]),
        "max constraint value - b": max_vc - float(m.b[0]),
        "all trajectories safe": bool((V_c <= m.b).all()),
        "final |V_r - V*| (max over inits)": float(gap[:, -1].max()),
        "final |V_r - V*| (mean over inits)": float(gap[:, -1].mean()),
        "final V_c (mean over inits)": float(V_c[:, -1].mean()),
        "final max |pi - pi_LP|": float(np.abs(pi[:, -1] - lp["pi"]).max()),
        f"iterations to stay within {TOL:g} of V* (max over inits)": None
        if any(s is None for s in settled)
        else max(settled),
    }


def _figure(path: Path, m, lp, runs: list[tuple[str, dict, int]], iters: int) -> None:
    """Policy plane x = pi(move|0), y = pi(stay|1) with V_r heatmap, V_c = b in black, trajectories; + LP gap."""
    plt = plotting.pyplot()
    g = np.linspace(1e-3, 1 - 1e-3, 81)
    X, Y = np.meshgrid(g, g)
    pis = np.stack([np.stack([1 - X, X], -1), np.stack([Y, 1 - Y], -1)], -2)  # (81, 81, S, A)
    VR, VC = C.policy_values(m, pis)
    VC = VC[..., 0]
    fig, axes = plt.subplots(1, len(runs) + 1, figsize=(4.2 * (len(runs) + 1), 3.9))
    for ax, (title, out, k) in zip(axes, runs):
        im = ax.pcolormesh(X, Y, VR, shading="auto", cmap="viridis")
        ax.contour(X, Y, VC, levels=[m.b[0]], colors="k", linewidths=1.5)
        for n in range(out["pi"].shape[1]):
            x, y = out["pi"][k, n, :, 0, 1], out["pi"][k, n, :, 1, 0]
            ax.plot(x, y, color="w", lw=1.0)
            ax.plot(x[0], y[0], "o", color="w", ms=3)
        ax.plot(lp["pi"][0, 1], lp["pi"][1, 0], "*", color="r", ms=12, label="LP optimum")
        ax.set_xlim(0, 1), ax.set_ylim(0, 1)
        ax.set_xlabel("pi(move | s0)")
        ax.set_title(title, fontsize=10)
    axes[0].set_ylabel("pi(stay | s1)")
    axes[0].legend(fontsize=7, loc="lower right")
    fig.colorbar(im, ax=axes[len(runs) - 1], label="V_r")
    ax = axes[-1]
    t = np.arange(iters + 1)
    for title, out, k in runs:
        gap = np.abs(out["V_r"][k] - lp["value"]).max(0)
        ax.plot(t[1:], np.maximum(gap[1:], 1e-16), label=title.split(",")[0])
    ax.set_xscale("log"), ax.set_yscale("log")
    ax.set_xlabel("iteration")
    ax.set_ylabel("max over inits |V_r - V*_LP|")
    ax.legend(fontsize=7)
    plotting.save_figure(fig, path, dpi=80 if iters < 1_000 else 120)


def checks(rows: list[dict]) -> dict:
    """Theorem 4.4 (every trajectory stays safe) and 4.5 (each ends within TOL of the LP optimum), per beta."""
    out = {}
    for row in rows:
        out[f"beta={row['beta']:g}: all trajectories safe"] = row["all trajectories safe"]
        out[f"beta={row['beta']:g}: final |V_r - V*| < {TOL:g}"] = bool(row["final |V_r - V*| (max over inits)"] < TOL)
    return out


DESCRIPTION = "C-NPG (eqs. 13, 79) on a 2-state 2-action CMDP: 10 safe inits, beta in {1e-2, 1} (Fig. 2)"


@target("ctrpo-fig2", DESCRIPTION, scales=SCALES, checks=checks)
def fig2(scale: Scale, out: Path) -> dict:
    iters = scale.steps
    m = C.figure2_cmdp()
    lp = C.lp_optimum(m)
    theta0 = safe_initialisations(m)
    beta, eta, phi = zip(*CONFIGS)
    res = C.run_cnpg(m, theta0, beta, eta, iters, phi)
    rows = [
        {
            "beta": beta[k],
            "phi": PHI,
            "eta": ETA,
            "iterations": iters,
            "initialisations": N_INITS,
            **_summary(res, k, m, lp),
        }
        for k in (1, 2)
    ]
    reference = {"beta": 0.0, "eta": ETA, "iterations": iters, **_summary(res, 0, m, lp)}
    comparison = [
        {"beta": beta[k], "phi": phi[k], "eta": eta[k], "iterations": iters, **_summary(res, k, m, lp)}
        for k in range(3, len(CONFIGS))
    ]
    fig_name = "ctrpo_fig2_cnpg.png"
    _figure(
        out / fig_name,
        m,
        lp,
        [(f"C-NPG beta = {beta[k]:g}, phi = -log x", res, k) for k in (1, 2)]
        + [("NPG (beta = 0), unconstrained", res, 0)],
        iters,
    )
    return {
        "rows": rows,
        "figures": [fig_name],
        "lp_optimum": {"value": lp["value"], "pi": lp["pi"], "cost": lp["cost_values"], "dual": lp["cost_duals"]},
        "best_safe_deterministic_value": C.best_deterministic(m)["value"],
        "reference_npg": reference,
        "phi_comparison": comparison,
        "settings": {
            "cmdp": {"P": m.P, "r": m.r, "c": m.c, "b": m.b, "gamma": m.gamma, "mu": m.mu},
            "policy_plane": "x = pi(move | s0), y = pi(stay | s1)",
            "initial_policies_pi_stay": np.exp(theta0)[:, :, 0],
            "betas": list(BETAS),
            "phi": PHI,
            "eta": ETA,
            "iterations": iters,
            "not_in_paper": "toy CMDP, phi for Fig. 2, step size and iteration counts are our choices",
        },
    }
