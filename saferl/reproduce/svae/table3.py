"""``svae-table3``: App. H.4 of the SVAE paper, safety identification (Table 3, Fig. 5).

SVAE on the identification two-step CMDP, sweeping p at a fixed cost gap and the gap at a fixed p;
the unsafe root action's executions against the identification complexity C = 2 / (p Delta_c^2).
Scales: :mod:`saferl.reproduce.svae.common`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from saferl.analysis import plotting
from saferl.reproduce.framework import Scale, target
from saferl.reproduce.svae import common as svae_common
from saferl.reproduce.svae.common import ms as _ms
from saferl.tabular import cmdp as cm
from saferl.tabular import envs
from saferl.tabular import learners as L


def table3_checks(rows: list[dict]) -> dict:
    """Root executions ~ C ~ 1/p at a fixed gap (log-log slope on 1/p, about 1), the unsafe action
    excluded in every run by K and never executed or re-included after its exclusion."""
    # root executions ~ 1/p at fixed gap: slope of log(executions) on log(1/p)
    prow = [r for r in rows if r["sweep"] == "p"]
    slope = float(
        np.polyfit(
            np.log([1 / r["p"] for r in prow]), np.log([max(r["Root executions"]["mean"], 1e-9) for r in prow]), 1
        )[0]
    )
    return {
        "root_executions_vs_inv_p_loglog_slope": slope,
        "excluded in every run by K": all(r["excluded by K (fraction)"] == 1.0 for r in rows),
        "no root execution after exclusion": all(r["root executions after exclusion"] == 0 for r in rows),
        "no run re-includes the action": all(r["runs re-including the action"] == 0 for r in rows),
    }


DESCRIPTION = "H.4 safety identification: sweeps over p and the cost gap (Table 3, Fig. 5)"


@target("svae-table3", DESCRIPTION, scales=svae_common.scales({"smoke": 10, "full": 40}), checks=table3_checks)
def table3(scale: Scale, out: Path) -> dict:
    K, n_seeds = scale.steps, scale.seeds
    sweeps = [
        ("p", [(p, 0.2) for p in (0.40, 0.20, 0.10, 0.05)], 0),
        ("gap", [(0.2, g) for g in (0.10, 0.15, 0.20, 0.30)], 1000),
    ]
    envs_, hyps, sds, conds = [], [], [], []
    watch_excl = np.zeros((2, 4, 2), dtype=bool)
    watch_excl[0, 0, envs.UNSAFE_ROOT_ACTION_H4] = True
    for name, grid, seed0 in sweeps:
        for p, gap in grid:
            ea = L.env_arrays(envs.identification_two_step(p, gap), watch_excl=watch_excl)
            conds.append((name, p, gap))
            for s in range(seed0, seed0 + n_seeds):
                envs_.append(ea), hyps.append(L.METHODS["SVAE"].hyper()), sds.append(s)
    res = L.run_batch(envs_, hyps, sds, K)
    nc = len(conds)
    root = res["actions"][..., 0].reshape(nc, n_seeds, K) == envs.UNSAFE_ROOT_ACTION_H4
    succ = res["states"][..., 1].reshape(nc, n_seeds, K) == envs.NONVIABLE_STATE_H4
    viol = res["viol"].reshape(nc, n_seeds, K).astype(np.float64)
    excl = res["excluded"].reshape(nc, n_seeds, K)
    rows = []
    for i, (name, p, gap) in enumerate(conds):
        first = np.where(excl[i].any(-1), excl[i].argmax(-1), K)
        after = np.array([root[i, j, first[j] :].sum() for j in range(n_seeds)])
        ever_reincluded = np.array([(~excl[i, j, first[j] :]).any() if first[j] < K else False for j in range(n_seeds)])
        rows.append(
            {
                "sweep": name,
                "p": p,
                "Delta_c": gap,
                "C": cm.identification_complexity(envs.identification_two_step(p, gap)),
                "Root executions": _ms(root[i].sum(-1)),
                "Successor visits": _ms(succ[i].sum(-1)),
                "Viol(K)": _ms(viol[i].sum(-1)),
                "excluded by K (fraction)": float((first < K).mean()),
                "root executions after exclusion": int(after.sum()),
                "runs re-including the action": int(ever_reincluded.sum()),
                "exclusion episode": _ms(first),
            }
        )
    plt = plotting.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    x = np.arange(1, K + 1)
    idx = L.log_grid(K, 80)
    for i, (name, p, gap) in enumerate(conds):
        if name != "p":
            continue
        plotting.seed_band(axes[0], x[idx], np.cumsum(root[i], -1)[:, idx].astype(float), f"p = {p}")
        axes[1].plot(x[idx], 1.0 - excl[i][:, idx].mean(0), label=f"p = {p}")
    axes[1].set_xscale("log")
    axes[0].set_ylabel("unsafe root executions")
    axes[1].set_ylabel("fraction not yet excluded")
    return svae_common.episode_figure_result(fig, axes, out, "svae_fig5_identification.png", rows, K, n_seeds)
