"""Reproduce targets for "Instance-Dependent Regret for CMDPs with Step-Wise Constraints" (App. H).

svae-table1 (H.2 navigation), svae-table2 (H.3 variance adaptation), svae-table3 (H.4 safety
identification), svae-fig6 (H.5 recursive elimination).  Each study is a handful of compiled,
vmapped calls of :func:`saferl.tabular.learners.run_batch`; the paper's multipliers (App. H.6) are
the defaults.  Scales: smoke/demo = tiny K and seeds; cpu = full = the paper's K = 10,000 with 20
seeds (H.3-H.5) or 8 environments x 5 paired seeds (H.2).  ``svae-table1 --tune`` first re-selects
the navigation multipliers by the development/validation procedure of App. H.6
(:mod:`saferl.reproduce.svae_tune`) and then runs the test table with the selected values.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from saferl.reproduce import svae_tune, target
from saferl.tabular import cmdp as cm
from saferl.tabular import envs
from saferl.tabular import learners as L


def _setting(scale: str, nav: bool = False) -> tuple[int, int]:
    """(K, seeds) per scale."""
    if scale in ("smoke", "demo"):
        return 200, (1 if nav else 3)
    return 10_000, (5 if nav else 20)


def _ms(x) -> dict:
    mean, sd = L.mean_sd(x)
    return {"mean": mean, "sd": sd}


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _band(ax, x, y, label, log=True):
    m, sd = y.mean(0), (y.std(0, ddof=1) if y.shape[0] > 1 else np.zeros(y.shape[1]))
    ax.plot(x, m, label=label)
    ax.fill_between(x, np.maximum(m - sd, 0.0) if (y >= 0).all() else m - sd, m + sd, alpha=0.2)
    if log:
        ax.set_xscale("log")


# --------------------------------------------------------------------------- H.3


@target("svae-table2", "H.3 variance adaptation: SVAE vs Hoeffding variants on the two-step CMDP (Table 2, Fig. 4)")
def table2(scale: str, out: Path) -> dict:
    K, n_seeds = _setting(scale)
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
            "u": u, "Var*": u**2, "K Var*": K * u**2,
            "Sigma_V": _ms(sigma[i, 0]),
            "dR(K) Hoeffding-P": _ms(regret[0, :, -1] - regret[1, :, -1]),
            "dR(K) Hoeffding": _ms(regret[0, :, -1] - regret[2, :, -1]),
            "Sigma_V check u^2 N(a_b)": float(np.mean(u**2 * (actions[i, 0, :, :, 0] == branch).sum(-1))),
        }
        for j, meth in enumerate(methods):
            row[f"R(K) {meth.name}"] = _ms(regret[j, :, -1])
            row[f"suboptimal root actions {meth.name}"] = _ms(subopt[j])
        rows.append(row)
    plt = _plt()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    x = np.arange(1, K + 1)
    idx = L.log_grid(K, 80)
    for ax, u in zip(axes, us):
        for j, meth in enumerate(methods):
            _band(ax, x[idx], curves[u][j][:, idx], meth.name)
        ax.set_title(f"Var* = {u**2:.4g}")
        ax.set_xlabel("episode")
    axes[0].set_ylabel("regret R(k)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "svae_fig4_variance.png", dpi=120)
    plt.close(fig)
    return {"rows": rows, "figures": ["svae_fig4_variance.png"],
            "settings": {"K": K, "seeds": n_seeds, "alpha_beta": list(L.CONTROLLED), "delta": 0.05}}


# --------------------------------------------------------------------------- H.4


@target("svae-table3", "H.4 safety identification: sweeps over p and the cost gap (Table 3, Fig. 5)")
def table3(scale: str, out: Path) -> dict:
    K, n_seeds = _setting(scale)
    sweeps = [("p", [(p, 0.2) for p in (0.40, 0.20, 0.10, 0.05)], 0),
              ("gap", [(0.2, g) for g in (0.10, 0.15, 0.20, 0.30)], 1000)]
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
        after = np.array([root[i, j, first[j]:].sum() for j in range(n_seeds)])
        ever_reincluded = np.array([(~excl[i, j, first[j]:]).any() if first[j] < K else False
                                    for j in range(n_seeds)])
        rows.append({
            "sweep": name, "p": p, "Delta_c": gap,
            "C": cm.identification_complexity(envs.identification_two_step(p, gap)),
            "Root executions": _ms(root[i].sum(-1)),
            "Successor visits": _ms(succ[i].sum(-1)),
            "Viol(K)": _ms(viol[i].sum(-1)),
            "excluded by K (fraction)": float((first < K).mean()),
            "root executions after exclusion": int(after.sum()),
            "runs re-including the action": int(ever_reincluded.sum()),
            "exclusion episode": _ms(first),
        })
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    x = np.arange(1, K + 1)
    idx = L.log_grid(K, 80)
    for i, (name, p, gap) in enumerate(conds):
        if name != "p":
            continue
        _band(axes[0], x[idx], np.cumsum(root[i], -1)[:, idx].astype(float), f"p = {p}")
        axes[1].plot(x[idx], 1.0 - excl[i][:, idx].mean(0), label=f"p = {p}")
    axes[1].set_xscale("log")
    axes[0].set_ylabel("unsafe root executions")
    axes[1].set_ylabel("fraction not yet excluded")
    for ax in axes:
        ax.set_xlabel("episode")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "svae_fig5_identification.png", dpi=120)
    plt.close(fig)
    # root executions ~ 1/p at fixed gap: slope of log(executions) on log(1/p)
    prow = [r for r in rows if r["sweep"] == "p"]
    slope = float(np.polyfit(np.log([1 / r["p"] for r in prow]),
                             np.log([max(r["Root executions"]["mean"], 1e-9) for r in prow]), 1)[0])
    return {"rows": rows, "figures": ["svae_fig5_identification.png"],
            "root_executions_vs_inv_p_loglog_slope": slope,
            "settings": {"K": K, "seeds": n_seeds, "alpha_beta": list(L.CONTROLLED), "delta": 0.05}}


# --------------------------------------------------------------------------- H.5


@target("svae-fig6", "H.5 recursive elimination at d = 1, 3: SVAE vs w/o propagation (Fig. 6)")
def fig6(scale: str, out: Path) -> dict:
    K, n_seeds = _setting(scale)
    seeds = list(range(n_seeds))
    methods = [L.METHODS["SVAE"], L.METHODS["SVAE w/o propagation"]]
    ds, insts = (1, 3), (False, True)
    envs_, hyps, sds, keys = [], [], [], []
    for d in ds:
        watch = np.zeros((5, 3, 2), dtype=bool)
        watch[d, envs.HIGH_BRANCH_STATE_H5, :] = True
        for sc in insts:
            ea = L.env_arrays(envs.recursive_elimination(d, sc), watch=watch)
            for meth in methods:
                keys.append((d, sc, meth.name))
                for s in seeds:
                    envs_.append(ea), hyps.append(meth.hyper()), sds.append(s)
    res = L.run_batch(envs_, hyps, sds, K)
    n = len(keys)
    enter = res["actions"][..., 0].reshape(n, n_seeds, K) == envs.HIGH_BRANCH_ACTION_H5
    det = res["detected"].reshape(n, n_seeds, K)
    viol = res["viol"].reshape(n, n_seeds, K).astype(np.float64)
    exp_viol = res["exp_viol"].reshape(n, n_seeds, K).astype(np.float64)
    value = res["value"].reshape(n, n_seeds, K)
    rows, curves = [], {}
    for i, (d, sc, name) in enumerate(keys):
        vstar = cm.instance_summary(envs.recursive_elimination(d, sc))["V_star"]
        regret, _ = L.regret_curves(value[i], vstar)
        first = np.where(det[i].any(-1), det[i].argmax(-1), K)
        after = np.array([enter[i, j, first[j]:].sum() for j in range(n_seeds)])
        cum_after = np.array([np.cumsum(np.where(np.arange(K) >= first[j], enter[i, j], False))
                              for j in range(n_seeds)])
        curves[(d, sc, name)] = (cum_after, regret)
        rows.append({
            "d": d, "instance": "safe continuation" if sc else "no safe continuation", "method": name,
            "Entries after detection": _ms(after) if not sc else None,
            "detected (fraction)": float((first < K).mean()),
            "Viol(K)": _ms(viol[i].sum(-1)),
            "R(K)": _ms(regret[:, -1]),
            "expected violation, last 500 episodes": _ms(exp_viol[i][:, -500:].sum(-1)),
        })
    paired_identical = bool(np.allclose(curves[(3, True, methods[0].name)][1], curves[(3, True, methods[1].name)][1]))
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    x = np.arange(1, K + 1)
    idx = L.log_grid(K, 80)
    for meth in methods:
        cum_after, _ = curves[(3, False, meth.name)]
        _band(axes[0], x, cum_after.astype(float), meth.name, log=False)
        _, regret = curves[(3, True, meth.name)]
        _band(axes[1], x[idx], regret[:, idx], meth.name)
    axes[0].set_ylabel("entries after detection (d = 3)")
    axes[1].set_ylabel("regret, safe continuation (d = 3)")
    for ax in axes:
        ax.set_xlabel("episode")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "svae_fig6_elimination.png", dpi=120)
    plt.close(fig)
    return {"rows": rows, "figures": ["svae_fig6_elimination.png"],
            "safe_continuation_regret_identical_across_methods_d3": paired_identical,
            "settings": {"K": K, "seeds": n_seeds, "alpha_beta": list(L.CONTROLLED), "delta": 0.05}}


# --------------------------------------------------------------------------- H.2


NAV_METHODS = ("SVAE", "SUCBVI", "MVP-V + filter", "MVP-V")
# Table 1 of the paper: R(K), R_+(K), Viol(K) in units of 10^3 (means across environments)
PAPER_TABLE1 = {"SVAE": (-2.406, 1.428, 1.426), "SUCBVI": (0.150, 2.590, 1.546),
                "MVP-V + filter": (45.989, 46.756, 3.005), "MVP-V": (31.238, 34.020, 2.816)}


@target("svae-table1",
        "H.2 stochastic navigation: SVAE vs SUCBVI vs MVP-V (+ filter) (Table 1, Fig. 3); --tune: App. H.6 selection")
def table1(scale: str, out: Path, tune: bool = False) -> dict:
    K, n_seeds = _setting(scale, nav=True)
    n_env = 2 if scale in ("smoke", "demo") else 8
    tuning = svae_tune.select(NAV_METHODS, K) if tune else None
    mult = {m: tuple(tuning["selected"][m]) for m in NAV_METHODS} if tune else dict(L.NAVIGATION)
    models = [envs.navigation_gridworld(np.random.default_rng(svae_tune.TEST_ENV_SEED0 + e)) for e in range(n_env)]
    vstars = np.array([cm.instance_summary(m)["V_star"] for m in models])
    methods = [L.METHODS[k] for k in NAV_METHODS]
    res = svae_tune.run_nav([(m, *mult[m]) for m in NAV_METHODS], models,
                            [[100 * e + s for s in range(n_seeds)] for e in range(n_env)], K)
    results = {m: {k: res[k][i] for k in ("value", "viol", "exp_viol")} for i, m in enumerate(NAV_METHODS)}
    rows, curves = [], {}
    for meth in methods:
        r = results[meth.name]
        R, Rp = L.regret_curves(r["value"], vstars[:, None, None])
        V = np.cumsum(r["viol"].astype(np.float64), -1)
        env_R, env_Rp, env_V = R[..., -1].mean(1), Rp[..., -1].mean(1), V[..., -1].mean(1)
        curves[meth.name] = dict(Rp=Rp.mean(1), V=V.mean(1),
                                 val=L.moving_average(r["value"]).mean(1), ev=L.moving_average(r["exp_viol"]).mean(1))
        rows.append({
            "method": meth.name, "alpha": mult[meth.name][0], "beta": mult[meth.name][1],
            "R(K)/10^3": _ms(env_R / 1e3), "R_+(K)/10^3": _ms(env_Rp / 1e3), "Viol(K)/10^3": _ms(env_V / 1e3),
            "expected violation per episode, first 500": float(r["exp_viol"][..., :500].mean()),
            "expected violation per episode, last 500": float(r["exp_viol"][..., -500:].mean()),
            "policy value, last 500": float(r["value"][..., -500:].mean()),
            "paper R(K), R_+(K), Viol(K) /10^3": list(PAPER_TABLE1[meth.name]),
        })
    d_rp = (curves["SVAE"]["Rp"][:, -1] - curves["SUCBVI"]["Rp"][:, -1])
    d_v = (curves["SVAE"]["V"][:, -1] - curves["SUCBVI"]["V"][:, -1])
    plt = _plt()
    fig, axes = plt.subplots(1, 4, figsize=(17, 3.6))
    x = np.arange(1, K + 1)
    for meth in methods:
        c = curves[meth.name]
        for ax, key in zip(axes, ("Rp", "V", "val", "ev")):
            _band(ax, x, c[key], meth.name, log=False)
    axes[2].axhline(vstars.mean(), color="k", ls="--", lw=0.8)
    for ax, lab in zip(axes, ("strong regret R_+(k)", "cumulative violation Viol(k)",
                              "policy value (MA 500)", "expected violation (MA 500)")):
        ax.set_ylabel(lab)
        ax.set_xlabel("episode")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "svae_fig3_navigation.png", dpi=120)
    plt.close(fig)
    cols = ("R(K)/10^3", "R_+(K)/10^3", "Viol(K)/10^3")
    ordering = {c: {"ours": [r["method"] for r in sorted(rows, key=lambda r: r[c]["mean"])],
                    "paper": sorted(NAV_METHODS, key=lambda m: PAPER_TABLE1[m][j])} for j, c in enumerate(cols)}
    result = {"rows": rows, "figures": ["svae_fig3_navigation.png"],
              "paired_difference_SVAE_minus_SUCBVI": {"R_+(K)": _ms(d_rp), "Viol(K)": _ms(d_v)},
              "ordering_lowest_first": ordering, "mean_optimal_safe_value": float(vstars.mean()),
              "settings": {"K": K, "environments": n_env, "seeds_per_env": n_seeds, "delta": 0.05,
                           "multipliers": {k: list(v) for k, v in mult.items()}, "tuned": bool(tune)}}
    if tune:
        result["tuning"] = tuning
    return result
