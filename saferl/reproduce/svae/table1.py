"""``svae-table1``: App. H.2 of the SVAE paper, stochastic navigation (Table 1, Fig. 3).

SVAE, SUCBVI, MVP-V + filter and MVP-V on navigation gridworlds x paired seeds; scales:
:mod:`saferl.reproduce.svae.common`.  ``--tune`` first re-selects the navigation multipliers by the
development/validation procedure of App. H.6 (:mod:`saferl.reproduce.svae.tune`; about 20 more
minutes at K = 10,000) and then runs the test table with the selected values.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from saferl.analysis import plotting
from saferl.reproduce.framework import Scale, target
from saferl.reproduce.svae import common as svae_common
from saferl.reproduce.svae import tune as svae_tune
from saferl.reproduce.svae.common import ms as _ms
from saferl.tabular import cmdp as cm
from saferl.tabular import envs
from saferl.tabular import learners as L

NAV_METHODS = ("SVAE", "SUCBVI", "MVP-V + filter", "MVP-V")
# Table 1 of the paper: R(K), R_+(K), Viol(K) in units of 10^3 (means across environments)
PAPER_TABLE1 = {
    "SVAE": (-2.406, 1.428, 1.426),
    "SUCBVI": (0.150, 2.590, 1.546),
    "MVP-V + filter": (45.989, 46.756, 3.005),
    "MVP-V": (31.238, 34.020, 2.816),
}


COLUMNS = ("R(K)/10^3", "R_+(K)/10^3", "Viol(K)/10^3")


def table1_checks(rows: list[dict]) -> dict:
    """The methods ordered lowest first by each column, ours against the paper's Table 1, and whether
    the orders agree."""
    ordering = {
        c: {
            "ours": [r["method"] for r in sorted(rows, key=lambda r: r[c]["mean"])],
            "paper": sorted([r["method"] for r in rows], key=lambda m: PAPER_TABLE1[m][j]),
        }
        for j, c in enumerate(COLUMNS)
    }
    return {
        "ordering_lowest_first": ordering,
        **{f"{c} ordering as in the paper": o["ours"] == o["paper"] for c, o in ordering.items()},
    }


@target(
    "svae-table1",
    "H.2 stochastic navigation: SVAE vs SUCBVI vs MVP-V (+ filter) (Table 1, Fig. 3); --tune: App. H.6 selection",
    scales=svae_common.nav_scales({"smoke": 10, "full": 980}),
    checks=table1_checks,
    options=("tune",),
)
def table1(scale: Scale, out: Path, tune: bool = False) -> dict:
    K, n_seeds = scale.steps, scale.seeds
    n_env = scale["environments"]
    tuning = svae_tune.select(NAV_METHODS, K) if tune else None
    mult = {m: tuple(tuning["selected"][m]) for m in NAV_METHODS} if tune else dict(L.NAVIGATION)
    models = [envs.navigation_gridworld(np.random.default_rng(svae_tune.TEST_ENV_SEED0 + e)) for e in range(n_env)]
    vstars = np.array([cm.instance_summary(m)["V_star"] for m in models])
    methods = [L.METHODS[k] for k in NAV_METHODS]
    res = svae_tune.run_nav(
        [(m, *mult[m]) for m in NAV_METHODS], models, [[100 * e + s for s in range(n_seeds)] for e in range(n_env)], K
    )
    results = {m: {k: res[k][i] for k in ("value", "viol", "exp_viol")} for i, m in enumerate(NAV_METHODS)}
    rows, curves = [], {}
    for meth in methods:
        r = results[meth.name]
        R, Rp = L.regret_curves(r["value"], vstars[:, None, None])
        V = np.cumsum(r["viol"].astype(np.float64), -1)
        env_R, env_Rp, env_V = R[..., -1].mean(1), Rp[..., -1].mean(1), V[..., -1].mean(1)
        curves[meth.name] = dict(
            Rp=Rp.mean(1),
            V=V.mean(1),
            val=L.moving_average(r["value"]).mean(1),
            ev=L.moving_average(r["exp_viol"]).mean(1),
        )
        rows.append(
            {
                "method": meth.name,
                "alpha": mult[meth.name][0],
                "beta": mult[meth.name][1],
                "R(K)/10^3": _ms(env_R / 1e3),
                "R_+(K)/10^3": _ms(env_Rp / 1e3),
                "Viol(K)/10^3": _ms(env_V / 1e3),
                "expected violation per episode, first 500": float(r["exp_viol"][..., :500].mean()),
                "expected violation per episode, last 500": float(r["exp_viol"][..., -500:].mean()),
                "policy value, last 500": float(r["value"][..., -500:].mean()),
                "paper R(K), R_+(K), Viol(K) /10^3": list(PAPER_TABLE1[meth.name]),
            }
        )
    d_rp = curves["SVAE"]["Rp"][:, -1] - curves["SUCBVI"]["Rp"][:, -1]
    d_v = curves["SVAE"]["V"][:, -1] - curves["SUCBVI"]["V"][:, -1]
    plt = plotting.pyplot()
    fig, axes = plt.subplots(1, 4, figsize=(17, 3.6))
    x = np.arange(1, K + 1)
    for meth in methods:
        c = curves[meth.name]
        for ax, key in zip(axes, ("Rp", "V", "val", "ev")):
            plotting.seed_band(ax, x, c[key], meth.name, log=False)
    axes[2].axhline(vstars.mean(), color="k", ls="--", lw=0.8)
    for ax, lab in zip(
        axes,
        (
            "strong regret R_+(k)",
            "cumulative violation Viol(k)",
            "policy value (MA 500)",
            "expected violation (MA 500)",
        ),
    ):
        ax.set_ylabel(lab)
        ax.set_xlabel("episode")
    axes[0].legend(fontsize=8)
    plotting.save_figure(fig, out / "svae_fig3_navigation.png", dpi=120)
    result = {
        "rows": rows,
        "figures": ["svae_fig3_navigation.png"],
        "paired_difference_SVAE_minus_SUCBVI": {"R_+(K)": _ms(d_rp), "Viol(K)": _ms(d_v)},
        "mean_optimal_safe_value": float(vstars.mean()),
        "settings": {
            "K": K,
            "environments": n_env,
            "seeds_per_env": n_seeds,
            "delta": 0.05,
            "multipliers": {k: list(v) for k, v in mult.items()},
            "tuned": bool(tune),
        },
    }
    if tune:
        result["tuning"] = tuning
    return result
