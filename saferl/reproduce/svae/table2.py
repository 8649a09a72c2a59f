"""``svae-table2``: App. H.3 of the SVAE paper, variance adaptation (Table 2, Fig. 4).

SVAE against its Hoeffding-P and Hoeffding variants on the two-step CMDP for u in {0, 0.15, 0.30}
(Var* = u^2); scales: :mod:`saferl.reproduce.svae.common`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from saferl.analysis import plotting
from saferl.reproduce.framework import Scale, target
from saferl.reproduce.svae import common as svae_common
from saferl.reproduce.svae.common import ms as _ms
from saferl.tabular import envs
from saferl.tabular import learners as L


def table2_checks(rows: list[dict]) -> dict:
    """Per u: SVAE's mean regret R(K) is below each Hoeffding variant's (dR(K) = SVAE - variant < 0)."""
    return {
        f"u={row['u']:g}: R(K) SVAE < {variant}": bool(row[f"dR(K) {variant}"]["mean"] < 0)
        for row in rows
        for variant in ("Hoeffding-P", "Hoeffding")
    }


DESCRIPTION = "H.3 variance adaptation: SVAE vs Hoeffding variants on the two-step CMDP (Table 2, Fig. 4)"


@target("svae-table2", DESCRIPTION, scales=svae_common.scales({"smoke": 10, "full": 80}), checks=table2_checks)
def table2(scale: Scale, out: Path) -> dict:
    K, n_seeds = scale.steps, scale.seeds
    seeds = list(range(n_seeds))
    methods = [L.METHODS[k] for k in ("SVAE", "SVAE (Hoeffding-P)", "SVAE (Hoeffding)")]
    us = (0.0, 0.15, 0.30)
    envs_, hyps, sds = [], [], []
    for u in us:
        ea = L.env_arrays(envs.variance_two_step(u))
        for meth in methods:
            for s in seeds:
                envs_.append(ea), hyps.append(meth.hyper()), sds.append(s)
    res = L.run_batch(envs_, hyps, sds, K)
    shape = (len(us), len(methods), n_seeds, K)
    value = res["value"].reshape(shape)
    sigma = res["sigma"].reshape(shape).astype(np.float64).sum(-1)
    actions = res["actions"].reshape(shape + (2,))
    rows, curves = [], {}
    for i, u in enumerate(us):
        regret, _ = L.regret_curves(value[i], 0.5)  # (methods, seeds, K); V* = 0.5
        curves[u] = regret
        subopt = (actions[i, :, :, :, 0] != 3).sum(-1)  # root actions other than a* (action 3)
        branch = [0, 1, 2][i]
        row = {
            "u": u,
            "Var*": u**2,
            "K Var*": K * u**2,
            "Sigma_V": _ms(sigma[i, 0]),
            "dR(K) Hoeffding-P": _ms(regret[0, :, -1] - regret[1, :, -1]),
            "dR(K) Hoeffding": _ms(regret[0, :, -1] - regret[2, :, -1]),
            "Sigma_V check u^2 N(a_b)": float(np.mean(u**2 * (actions[i, 0, :, :, 0] == branch).sum(-1))),
        }
        for j, meth in enumerate(methods):
            row[f"R(K) {meth.name}"] = _ms(regret[j, :, -1])
            row[f"suboptimal root actions {meth.name}"] = _ms(subopt[j])
        rows.append(row)
    plt = plotting.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    x = np.arange(1, K + 1)
    idx = L.log_grid(K, 80)
    for ax, u in zip(axes, us):
        for j, meth in enumerate(methods):
            plotting.seed_band(ax, x[idx], curves[u][j][:, idx], meth.name)
        ax.set_title(f"Var* = {u**2:.4g}")
        ax.set_xlabel("episode")
    axes[0].set_ylabel("regret R(k)")
    axes[0].legend(fontsize=8)
    plotting.save_figure(fig, out / "svae_fig4_variance.png", dpi=120)
    return {
        "rows": rows,
        "figures": ["svae_fig4_variance.png"],
        "settings": {"K": K, "seeds": n_seeds, "alpha_beta": list(L.CONTROLLED), "delta": 0.05},
    }
