"""``canary-table1``: the Canary paper's Table 1 (and Figs. 3-4), on the shared deep-RL scales.

Canary, PPO, CPO (VaR), CPPO and CVaR-CPO under the VaR constraint P(C(tau) >= rho) <= eps = 0.05
with undiscounted costs (gamma_c = 1) on PointGoal (rho = 100, 2M steps in the paper) and EcoAnt
(rho = 150, 10M steps).  Columns:

* ``P_hat``   -- per-seed breach rate: the episode-weighted fraction of violating episodes
  over the second half of training (:func:`saferl.metrics.breach_rate`), mean and SE over seeds;
* ``P_hat_max`` -- the worst seed's ``P_hat``;
* ``t_safe``  -- % of training before the empirical violation probability is permanently
  <= eps (:func:`saferl.metrics.t_safe`), mean and SE.  A PointGoal iteration finishes only
  16 episodes, too few to tell 5% from 0%, so the empirical probability is pooled over a
  trailing window of iterations holding at least ``T_SAFE_EPISODES`` = 100 episodes;
* ``J``       -- the reward return of the last iteration, mean and SE.

Scales: the shared deep-RL ones (:data:`saferl.reproduce.deep_rl.SCALES`) on PointGoal only, with
64x64 networks for every method so that they fit a 2-core machine (Canary's App. D networks are
3x256; cpu: 5 seeds x 2M steps, the paper's PointGoal budget); ``full`` overrides them: both
environments, 30 seeds, the paper's budgets and Canary's App. D networks (EcoAnt needs the ``mjx``
extra and is meant for an accelerator).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from saferl import config as configlib
from saferl import metrics, plotting, runs
from saferl.reproduce import deep_rl
from saferl.reproduce.deep_rl import SMALL_NETS, per_seed_series, train_or_resume
from saferl.reproduce.framework import Scale, target

EPSILON = 0.05
T_SAFE_EPISODES = 100
TABLE1_METHODS = [("Canary", "canary"), ("PPO", "ppo"), ("CPO (VaR)", "cpo_var"), ("CPPO", "cppo"),
                  ("CVaR-CPO", "cvar_cpo")]
TABLE1_ENVS = {"PointGoal1": {"rho": 100.0, "steps": 2_000_000}, "EcoAnt": {"rho": 150.0, "steps": 10_000_000}}
_POINTGOAL = {"envs": ["PointGoal1"], "network": SMALL_NETS}
TABLE1_SCALES = deep_rl.scales(  # smoke (tests only): Canary and PPO, what the checks need; 5 compiles took minutes
    runs=len(TABLE1_METHODS), smoke=dict(_POINTGOAL, methods=["Canary", "PPO"], runs=2, note="Canary and PPO only"),
    demo=_POINTGOAL, cpu=dict(_POINTGOAL, wall_s=4_400),
    full={"envs": ["PointGoal1", "EcoAnt"], "network": None, "seeds": 30, "steps": None, "wall_s": None,
          "note": "PointGoal1 2M and EcoAnt 10M steps per seed, App. D networks; EcoAnt needs the mjx extra"})


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


def table1_checks(rows: list[dict]) -> dict:
    """Per environment: Canary satisfies the constraint, has the lowest t_safe among the methods that
    satisfy it, and PPO's breach rate is far above epsilon."""
    checks = {}
    for row in rows:
        if row["algo"] != "canary":
            continue
        env = row["env"]
        satisfied = [r for r in rows if r["env"] == env and r["satisfied"]]
        ppo = next(r for r in rows if r["env"] == env and r["algo"] == "ppo")
        checks[env] = {
            "canary_satisfies": row["satisfied"],
            "canary_lowest_t_safe_among_satisfying": bool(row["satisfied"] and all(
                row["t_safe"] <= r["t_safe"] for r in satisfied)),
            "ppo_far_above_epsilon": bool(ppo["P_hat"] > 4 * EPSILON),
        }
    return checks


@target("canary-table1", "Canary vs PPO, CPO (VaR), CPPO, CVaR-CPO under P(C >= rho) <= 0.05 (Table 1)",
        scales=TABLE1_SCALES, checks=table1_checks)
def table1(scale: Scale, out: Path) -> dict:
    rows, figures = [], []
    for env in scale["envs"]:
        rho = TABLE1_ENVS[env]["rho"]
        steps = scale.steps or TABLE1_ENVS[env]["steps"]
        base = {"env": env, **deep_rl.train_settings(scale), "total_steps": steps,
                "constraint": {"type": "var", "rho": rho, "epsilon": EPSILON, "gamma_c": 1.0}}
        if scale["network"]:
            base["network"] = scale["network"]
        run_dirs = []
        for label, algo in deep_rl.methods_at(TABLE1_METHODS, scale):
            user = configlib.merge(base, {"algo": algo})  # PPO ignores the constraint; P_hat still counts
            cfg = configlib.resolve(user)
            run_dir = out / "runs" / env / label.replace(" ", "_").replace("(", "").replace(")", "")
            summary = train_or_resume(cfg, run_dir, show_progress=scale.name != "smoke")
            rows.append(risk_row(label, cfg, run_dir, summary))
            run_dirs.append(run_dir)
        figure = plotting.plot_runs(run_dirs, out / f"canary_table1_{env}.png")
        figures.append(figure.name)
    return {"rows": rows, "figures": figures,
            "settings": {"epsilon": EPSILON, "gamma_c": 1.0, "t_safe_pooling_episodes": T_SAFE_EPISODES,
                         "envs": {e: TABLE1_ENVS[e] for e in scale["envs"]}, "seeds": scale.seeds,
                         "steps": scale.steps, "network": scale["network"] or "per-algorithm defaults"}}
