"""``svae-fig6``: App. H.5 of the SVAE paper, recursive elimination (Fig. 6).

SVAE against SVAE without propagation at depth d = 1, 3, on instances with and without a safe
continuation; scales: :mod:`saferl.reproduce.svae.common`.
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


def fig6_checks(rows: list[dict]) -> dict:
    """SVAE never enters a branch it detected as having no safe continuation; with a safe
    continuation at d = 3, propagation changes nothing: the two methods' rows (regret, violations,
    detections over the paired seeds) are the same."""
    safe3 = [r for r in rows if r["d"] == 3 and r["instance"] == "safe continuation"]
    svae = [r for r in rows if r["method"] == "SVAE" and r["Entries after detection"]]
    return {
        "svae_no_entries_after_detection": all(r["Entries after detection"]["mean"] == 0 for r in svae),
        "safe_continuation_regret_identical_across_methods_d3": len(safe3) == 2 and _same(*safe3),
    }


def _same(a: dict, b: dict) -> bool:
    """Two rows agree (numbers to float tolerance) on every entry but the method."""

    def close(x, y):
        if isinstance(x, dict) and isinstance(y, dict):
            return x.keys() == y.keys() and all(close(x[k], y[k]) for k in x)
        if isinstance(x, (int, float)) and isinstance(y, (int, float)):
            return bool(np.isclose(x, y))
        return x == y

    return all(close(a.get(k), b.get(k)) for k in (set(a) | set(b)) - {"method"})


DESCRIPTION = "H.5 recursive elimination at d = 1, 3: SVAE vs w/o propagation (Fig. 6)"


@target("svae-fig6", DESCRIPTION, scales=svae_common.scales({"smoke": 10, "full": 40}), checks=fig6_checks)
def fig6(scale: Scale, out: Path) -> dict:
    K, n_seeds = scale.steps, scale.seeds
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
        after = np.array([enter[i, j, first[j] :].sum() for j in range(n_seeds)])
        cum_after = np.array(
            [np.cumsum(np.where(np.arange(K) >= first[j], enter[i, j], False)) for j in range(n_seeds)]
        )
        curves[(d, sc, name)] = (cum_after, regret)
        rows.append(
            {
                "d": d,
                "instance": "safe continuation" if sc else "no safe continuation",
                "method": name,
                "Entries after detection": _ms(after) if not sc else None,
                "detected (fraction)": float((first < K).mean()),
                "Viol(K)": _ms(viol[i].sum(-1)),
                "R(K)": _ms(regret[:, -1]),
                "expected violation, last 500 episodes": _ms(exp_viol[i][:, -500:].sum(-1)),
            }
        )
    plt = plotting.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    x = np.arange(1, K + 1)
    idx = L.log_grid(K, 80)
    for meth in methods:
        cum_after, _ = curves[(3, False, meth.name)]
        plotting.seed_band(axes[0], x, cum_after.astype(float), meth.name, log=False)
        _, regret = curves[(3, True, meth.name)]
        plotting.seed_band(axes[1], x[idx], regret[:, idx], meth.name)
    axes[0].set_ylabel("entries after detection (d = 3)")
    axes[1].set_ylabel("regret, safe continuation (d = 3)")
    return svae_common.episode_figure_result(fig, axes, out, "svae_fig6_elimination.png", rows, K, n_seeds)
