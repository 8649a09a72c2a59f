"""The Canary paper's training experiments: ``canary-table1`` and ``canary-fig5``.

``canary-table1`` (Table 1, Figs. 3-4): Canary, PPO, CPO (VaR), CPPO and CVaR-CPO under the
VaR constraint P(C(tau) >= rho) <= eps = 0.05 with undiscounted costs (gamma_c = 1) on
PointGoal (rho = 100, 2M steps in the paper) and EcoAnt (rho = 150, 10M steps).  Columns:

* ``P_hat``   -- per-seed breach rate: the episode-weighted fraction of violating episodes
  over the second half of training (:func:`saferl.metrics.breach_rate`), mean and SE over seeds;
* ``P_hat_max`` -- the worst seed's ``P_hat``;
* ``t_safe``  -- % of training before the empirical violation probability is permanently
  <= eps (:func:`saferl.metrics.t_safe`), mean and SE.  A PointGoal iteration finishes only
  16 episodes, too few to tell 5% from 0%, so the empirical probability is pooled over a
  trailing window of iterations holding at least ``T_SAFE_EPISODES`` = 100 episodes;
* ``J``       -- the reward return of the last iteration, mean and SE.

Scales: ``smoke`` (pipeline check), ``demo``, ``cpu`` (PointGoal only, 5 seeds x 2M steps,
64x64 networks for every method so that it fits a 2-core machine -- Canary's App. D
networks are 3x256), ``full`` (both environments, 30 seeds, the paper's budgets and Canary's
App. D networks; EcoAnt needs the ``mjx`` extra and is meant for an accelerator).

``canary-fig5`` (Fig. 5): Canary on IcyLake with several violation thresholds eps; the
probability that the cost return reaches 15 during training, mean and SD over seeds (the
paper uses 500 seeds; seeds are vmapped in one program per eps).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from saferl import config as configlib
from saferl import metrics, runs
from saferl.reproduce import target
from saferl.reproduce.common import per_seed_series, train_or_resume

EPSILON = 0.05
T_SAFE_EPISODES = 100
TABLE1_METHODS = [("Canary", "canary"), ("PPO", "ppo"), ("CPO (VaR)", "cpo_var"), ("CPPO", "cppo"),
                  ("CVaR-CPO", "cvar_cpo")]
TABLE1_ENVS = {"PointGoal1": {"rho": 100.0, "steps": 2_000_000}, "EcoAnt": {"rho": 150.0, "steps": 10_000_000}}
SMALL_NETS = {"actor_hidden": [64, 64], "critic_hidden": [64, 64], "activation": "tanh", "value_normalization": True}
TABLE1_SCALES = {
    "smoke": {"envs": ["PointGoal1"], "seeds": 2, "steps": 32_000, "network": SMALL_NETS,
              "extra": {"iterations_per_chunk": 1}},
    "demo": {"envs": ["PointGoal1"], "seeds": 3, "steps": 320_000, "network": SMALL_NETS, "extra": {}},
    "cpu": {"envs": ["PointGoal1"], "seeds": 5, "steps": None, "network": SMALL_NETS, "extra": {}},
    "full": {"envs": ["PointGoal1", "EcoAnt"], "seeds": 30, "steps": None, "network": None, "extra": {}},
}


def pooled_violation(violation, episodes, min_episodes: int = T_SAFE_EPISODES):
    """Per-iteration violation probability pooled over the trailing window of iterations that
    holds at least ``min_episodes`` episodes (NaN until that many have finished).

    ``violation`` and ``episodes`` are ``(seeds, iters)``; NaN violation = no episode."""
    v = np.nan_to_num(np.asarray(violation, float))
    n = np.nan_to_num(np.asarray(episodes, float))
    hits = np.cumsum(v * n, axis=1)
    count = np.cumsum(n, axis=1)
    out = np.full(v.shape, np.nan)
    for s in range(v.shape[0]):
        for k in range(v.shape[1]):
            # the latest start j with episodes(j..k) >= min_episodes
            start_counts = count[s, k] - np.concatenate([[0.0], count[s, :k]])
            ok = np.nonzero(start_counts >= min_episodes)[0]
            if ok.size:
                j = ok[-1]
                hit = hits[s, k] - (hits[s, j - 1] if j > 0 else 0.0)
                out[s, k] = hit / start_counts[j]
    return out


def _mean_se(values):
    values = np.asarray([v for v in values if np.isfinite(v)], float)
    if values.size == 0:
        return float("nan"), float("nan")
    mean, se = metrics.mean_and_se(values)
    return float(mean), float(se) if values.size > 1 else float("nan")


def risk_row(label: str, cfg: dict, run_dir: Path, summary: dict) -> dict:
    """Table 1's columns for one trained method."""
    progress = runs.read_progress(run_dir)
    seeds = runs.seed_ids(cfg)
    violation = per_seed_series(progress, "violation_probability", seeds)
    episodes = per_seed_series(progress, "episodes", seeds)
    eps = cfg["constraint"]["epsilon"]
    p_hat = metrics.breach_rate(violation, np.nan_to_num(episodes))
    t_safe = metrics.t_safe(pooled_violation(violation, episodes), eps)
    returns = summary["final"]["episode_return"]["per_seed"]
    row = {"method": label, "algo": cfg["algo"], "env": cfg["env"], "rho": cfg["constraint"]["rho"], "epsilon": eps}
    row["P_hat"], row["P_hat_se"] = _mean_se(p_hat)
    row["P_hat_max"] = float(np.nanmax(p_hat)) if np.any(np.isfinite(p_hat)) else float("nan")
    row["t_safe"], row["t_safe_se"] = _mean_se(t_safe)
    row["J"], row["J_se"] = _mean_se(returns)
    row["satisfied"] = bool(row["P_hat"] <= eps)
    row.update(seeds=cfg["seeds"], env_steps_per_seed=summary["env_steps"], wall_seconds=summary["wall_seconds"],
               steps_per_second=summary["steps_per_second"])
    return row


@target("canary-table1", "Canary vs PPO, CPO (VaR), CPPO, CVaR-CPO under P(C >= rho) <= 0.05 (Table 1)")
def table1(scale: str, out: Path) -> dict:
    from saferl.plotting import plot_runs

    setting = TABLE1_SCALES[scale]
    rows, figures = [], []
    for env in setting["envs"]:
        rho = TABLE1_ENVS[env]["rho"]
        steps = setting["steps"] or TABLE1_ENVS[env]["steps"]
        base = {"env": env, "total_steps": steps, "seeds": setting["seeds"], **setting["extra"],
                "constraint": {"type": "var", "rho": rho, "epsilon": EPSILON, "gamma_c": 1.0}}
        if setting["network"]:
            base["network"] = setting["network"]
        run_dirs = []
        for label, algo in TABLE1_METHODS:
            user = configlib.merge(base, {"algo": algo})  # PPO ignores the constraint; P_hat still counts
            cfg = configlib.resolve(user)
            run_dir = out / "runs" / env / label.replace(" ", "_").replace("(", "").replace(")", "")
            summary = train_or_resume(cfg, run_dir, show_progress=scale != "smoke")
            rows.append(risk_row(label, cfg, run_dir, summary))
            run_dirs.append(run_dir)
        figure = plot_runs(run_dirs, out / f"canary_table1_{env}.png")
        figures.append(figure.name)
    canary = {r["env"]: r for r in rows if r["algo"] == "canary"}
    checks = {}
    for env, row in canary.items():
        satisfied = [r for r in rows if r["env"] == env and r["satisfied"]]
        ppo = next(r for r in rows if r["env"] == env and r["algo"] == "ppo")
        checks[env] = {
            "canary_satisfies": row["satisfied"],
            "canary_lowest_t_safe_among_satisfying": bool(row["satisfied"] and all(
                row["t_safe"] <= r["t_safe"] for r in satisfied)),
            "ppo_far_above_epsilon": bool(ppo["P_hat"] > 4 * EPSILON),
        }
    return {"rows": rows, "figures": figures, "checks": checks,
            "settings": {"epsilon": EPSILON, "gamma_c": 1.0, "t_safe_pooling_episodes": T_SAFE_EPISODES,
                         "envs": {e: TABLE1_ENVS[e] for e in setting["envs"]}, "seeds": setting["seeds"],
                         "steps": setting["steps"], "network": setting["network"] or "per-algorithm defaults"}}


# --------------------------------------------------------------------------- Fig. 5

FIG5_RHO = 15.0
FIG5_EPSILONS = (0.01, 0.05, 0.1, 0.2)
FIG5_SCALES = {
    "smoke": {"seeds": 4, "steps": 20_000, "epsilons": (0.05, 0.2)},
    "demo": {"seeds": 8, "steps": 150_000, "epsilons": FIG5_EPSILONS},
    "cpu": {"seeds": 32, "steps": 300_000, "epsilons": FIG5_EPSILONS},
    "full": {"seeds": 500, "steps": 1_000_000, "epsilons": FIG5_EPSILONS},
}


@target("canary-fig5", "Canary on IcyLake: P(C >= 15) during training for several eps, many seeds (Fig. 5)")
def fig5(scale: str, out: Path) -> dict:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    setting = FIG5_SCALES[scale]
    rows, curves = [], {}
    for eps in setting["epsilons"]:
        user = {"algo": "canary", "env": "IcyLake", "total_steps": setting["steps"], "seeds": setting["seeds"],
                "network": SMALL_NETS, "constraint": {"type": "var", "rho": FIG5_RHO, "epsilon": eps, "gamma_c": 1.0}}
        if scale == "smoke":
            user["iterations_per_chunk"] = 1
        cfg = configlib.resolve(user)
        run_dir = out / "runs" / f"eps_{eps:g}"
        summary = train_or_resume(cfg, run_dir, show_progress=scale != "smoke")
        progress = runs.read_progress(run_dir)
        seeds = runs.seed_ids(cfg)
        violation = per_seed_series(progress, "violation_probability", seeds)
        steps = np.asarray(sorted({r["env_steps"] for r in progress}), float)
        mean, sd = np.nanmean(violation, axis=0), np.nanstd(violation, axis=0)
        curves[eps] = (steps, mean, sd)
        p_hat = metrics.breach_rate(violation, np.nan_to_num(per_seed_series(progress, "episodes", seeds)))
        final = summary["final"]["episode_return"]["per_seed"]
        rows.append({"epsilon": eps, "rho": FIG5_RHO, "seeds": cfg["seeds"], "env_steps_per_seed": summary["env_steps"],
                     "P_hat": float(np.nanmean(p_hat)), "P_hat_sd": float(np.nanstd(p_hat)),
                     "final_violation": float(mean[-1]), "J": float(np.mean(final)),
                     "below_epsilon": bool(np.nanmean(p_hat) <= eps), "wall_seconds": summary["wall_seconds"]})
    fig, ax = plt.subplots(figsize=(6, 4))
    for eps, (steps, mean, sd) in curves.items():
        line = ax.plot(steps, mean, label=f"eps = {eps:g}")[0]
        ax.fill_between(steps, np.clip(mean - sd, 0, 1), np.clip(mean + sd, 0, 1), color=line.get_color(), alpha=0.2)
        ax.axhline(eps, color=line.get_color(), ls=":", lw=1)
    ax.set_xlabel("environment steps")
    ax.set_ylabel(f"P(C >= {FIG5_RHO:g})")
    ax.set_title(f"Canary on IcyLake, {setting['seeds']} seeds (mean +- SD)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    name = "canary_fig5_epsilon_sensitivity.png"
    fig.savefig(out / name, dpi=100)
    plt.close(fig)
    return {"rows": rows, "figures": [name],
            "settings": {"rho": FIG5_RHO, "gamma_c": 1.0, "network": SMALL_NETS, **{k: v for k, v in setting.items()}},
            "note": "the paper uses 500 seeds; seeds are vmapped in one program per epsilon"}
