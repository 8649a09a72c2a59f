"""``canary-table1``: the Canary paper's Table 1 (and Figs. 3-4), on the shared deep-RL scales.

Canary, PPO, CPO (VaR), CPPO and CVaR-CPO under the VaR constraint P(C(tau) >= rho) <= eps = 0.05
with undiscounted costs (gamma_c = 1) on PointGoal (rho = 100, 2M steps in the paper) and EcoAnt
(rho = 150, 10M steps).  Columns:

* ``P_hat``   -- per-seed breach rate: the episode-weighted fraction of violating episodes
  over the second half of training (:func:`saferl.analysis.metrics.breach_rate`), mean and SE over seeds;
* ``P_hat_max`` -- the worst seed's ``P_hat``;
* ``t_safe``  -- % of training before the empirical violation probability is permanently
  <= eps (:func:`saferl.analysis.metrics.t_safe`), mean and SE.  A PointGoal iteration finishes only
  16 episodes, too few to tell 5% from 0%, so the empirical probability is pooled over a
  trailing window of iterations holding at least ``T_SAFE_EPISODES`` = 100 episodes;
* ``J``       -- the reward return of the last iteration, mean and SE.

The Canary rows come in both units of the CPO step's cost gradient: OmniSafe's (b per sample, the
default) and the Cantelli value's own (``cost_scale: length``); see :mod:`saferl.algos.second_order`.

Every row also carries the 95% bootstrap interval of P_hat over seeds and its safety verdict against eps
(probably safe / undecided / probably unsafe), and the default rows the paper's own numbers
(:data:`PAPER_TABLE1`; its PointGoal is an MJX task harsher than our Safety-Gymnasium PointGoal1).

Scales: the shared deep-RL ones (:data:`saferl.reproduce.deep_rl.SCALES`), with 64x64 networks for
every method so that they fit a 2-core machine (Canary's App. D networks are 3x256): smoke and demo on
PointGoal only; cpu on PointGoal (5 seeds x 2M steps, the paper's budget) and EcoAnt (5 seeds x
:data:`ECOANT_CPU_STEPS`, what 2 cores train in about an hour: 4% of the paper's 10M); ``full``: both
environments, 30 seeds, the paper's budgets and Canary's App. D networks (EcoAnt needs the ``mjx`` extra
and is meant for an accelerator).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from saferl.analysis import metrics, plotting, verdicts
from saferl.reproduce import deep_rl
from saferl.reproduce.deep_rl import SMALL_NETS, per_seed_series, train_or_resume
from saferl.reproduce.framework import PaperBudget, Scale, target
from saferl.training import config as configlib
from saferl.training import run_directory

EPSILON = 0.05
T_SAFE_EPISODES = 100
# (label, algorithm, config overrides); the CPO-step methods' labels get their cost units appended
# (deep_rl.units_label): the default rows use b per sample (OmniSafe units, as the public JAX VaR-CPO code), the
# "Canary (J_c units)" row b in units of the Cantelli value (cost_scale: length;
# docs/decisions/025-cost-surrogate-scale.md)
TABLE1_METHODS = [
    ("Canary", "canary", {}),
    ("Canary", "canary", {"hparams": {"cost_scale": "length"}}),
    ("PPO", "ppo", {}),
    ("CPO (VaR)", "cpo_var", {}),
    ("CPPO", "cppo", {}),
    ("CVaR-CPO", "cvar_cpo", {}),
]
TABLE1_ENVS = {"PointGoal1": {"rho": 100.0, "steps": 2_000_000}, "EcoAnt": {"rho": 150.0, "steps": 10_000_000}}
#: The Canary paper (arXiv:2601.22993) Table 1 (paper_table1.csv, numbers as printed): env -> method -> the columns
#: P_hat, P_hat_se, P_hat_max, t_safe, t_safe_se, J, J_se; 30 seeds, the paper's MJX PointGoal (a harsher task than
#: Safety-Gymnasium's PointGoal1, whose port we train: its PPO returns 69) and EcoAnt at 2M and 10M steps with App. D
#: networks.  Attached to the default rows as ``paper_<column>``.
PAPER_TABLE1_FILE = Path(__file__).with_name("paper_table1.csv")


def _read_paper_table1(path: Path) -> dict[str, dict[str, dict[str, float]]]:
    """PAPER_TABLE1 from its CSV (one row per env and method); a number keeps its type (6 an int, 69.0 a float)."""
    table: dict[str, dict[str, dict]] = {}
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            env, method = row.pop("env"), row.pop("method")
            table.setdefault(env, {})[method] = {column: json.loads(value) for column, value in row.items()}
    return table


PAPER_TABLE1 = _read_paper_table1(PAPER_TABLE1_FILE)
PAPER_SOURCE = (
    "Canary paper (arXiv:2601.22993) Table 1: mean +- SE over 30 seeds; PointGoal 2M steps (MJX PointGoal), "
    "EcoAnt 10M steps, 3x256 networks"
)
_POINTGOAL = {"envs": ["PointGoal1"], "network": SMALL_NETS}
#: cpu: EcoAnt at the steps 2 cores train its six runs in about an hour (MJX Ant on CPU: ~2.3k env steps/s for
#: Canary with 16 envs x 5 seeds, 64x64 networks, measured with `saferl bench --env EcoAnt`): 4% of the paper's budget
ECOANT_CPU_STEPS = 400_000
TABLE1_SCALES = deep_rl.scales(  # smoke (tests only): Canary, what the checks need; each method is a compile
    runs=len(TABLE1_METHODS),
    smoke=dict(_POINTGOAL, methods=["Canary"], default_configs_only=True, runs=1, note="Canary only"),
    demo=_POINTGOAL,
    cpu={
        "envs": ["PointGoal1", "EcoAnt"],
        "network": SMALL_NETS,
        "env_steps": {"EcoAnt": ECOANT_CPU_STEPS},
        "wall_s": 4_400 + 3_600,
        "note": f"PointGoal1 2M and EcoAnt {ECOANT_CPU_STEPS // 1000}k steps per seed, 64x64 networks",
    },
    full={
        "envs": ["PointGoal1", "EcoAnt"],
        "network": None,
        "seeds": 30,
        "steps": None,
        "wall_s": None,
        "note": "PointGoal1 2M and EcoAnt 10M steps per seed, App. D networks; EcoAnt needs the mjx extra",
    },
)


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


def risk_row(label: str, cfg: dict, run_dir: Path, summary: dict, default_config: bool = True) -> dict:
    """Table 1's columns for one trained method."""
    progress = run_directory.read_progress(run_dir)
    seeds = run_directory.seed_ids(cfg)
    violation = per_seed_series(progress, "violation_probability", seeds)
    episodes = per_seed_series(progress, "episodes", seeds)
    eps = cfg["constraint"]["epsilon"]
    p_hat = metrics.breach_rate(violation, np.nan_to_num(episodes))
    t_safe = metrics.t_safe(pooled_violation(violation, episodes), eps)
    returns = summary["final"]["episode_return"]["per_seed"]
    row = {
        "method": deep_rl.units_label(label, cfg),
        "label": label,
        "algo": cfg["algo"],
        "env": cfg["env"],
        "rho": cfg["constraint"]["rho"],
        "epsilon": eps,
        "default_config": default_config,
    }
    row["P_hat"], row["P_hat_se"] = _mean_se(p_hat)
    _, row["P_hat_lo"], row["P_hat_hi"] = verdicts.bootstrap_mean(p_hat)
    row["safety"] = verdicts.safety_verdict(row["P_hat_lo"], row["P_hat_hi"], eps)
    row["P_hat_max"] = float(np.nanmax(p_hat)) if np.any(np.isfinite(p_hat)) else float("nan")
    row["t_safe"], row["t_safe_se"] = _mean_se(t_safe)
    row["J"], row["J_se"] = _mean_se(returns)
    row["satisfied"] = bool(row["P_hat"] <= eps)  # the paper's reading (mean P_hat against eps)
    paper = PAPER_TABLE1.get(cfg["env"], {}).get(label) if default_config else None
    if paper is not None:
        row.update({f"paper_{column}": value for column, value in paper.items()})
    row.update(
        seeds=cfg["seeds"],
        env_steps_per_seed=summary["env_steps"],
        wall_seconds=summary["wall_seconds"],
        steps_per_second=summary["steps_per_second"],
    )
    return row


def table1_checks(rows: list[dict]) -> dict:
    """Per environment: each method's safety verdict (the bootstrap interval of P_hat against eps), whether
    Canary meets eps (the paper's mean reading) and has the lowest t_safe among the methods that do, and the
    return ordering of the methods that meet eps (the paper: Canary above CPPO)."""
    checks = {}
    for env in dict.fromkeys(row["env"] for row in rows):
        here = [r for r in rows if r["env"] == env]
        entry = {"safety": {r["method"]: r["safety"] for r in here}}
        satisfied = [r for r in here if r["satisfied"]]
        for row in here:
            if row["algo"] != "canary":
                continue
            entry[row["method"]] = {
                "satisfies": row["satisfied"],
                "lowest_t_safe_among_satisfying": bool(
                    row["satisfied"] and all(row["t_safe"] <= r["t_safe"] for r in satisfied)
                ),
            }
        entry["satisfying_by_return"] = [r["method"] for r in sorted(satisfied, key=lambda r: -r["J"])]
        checks[env] = entry
    return checks


DESCRIPTION = "Canary vs PPO, CPO (VaR), CPPO, CVaR-CPO under P(C >= rho) <= 0.05 (Table 1)"


PAPER_BUDGET = PaperBudget(
    {"PointGoal1": 2_000_000, "EcoAnt": 10_000_000},
    30,
    "Canary paper (arXiv:2601.22993) Table 1: PointGoal 2M and EcoAnt 10M steps, 30 seeds",
)


@target("canary-table1", DESCRIPTION, scales=TABLE1_SCALES, checks=table1_checks, paper_budget=PAPER_BUDGET)
def table1(scale: Scale, out: Path) -> dict:
    rows, figures = [], []
    for env in scale["envs"]:
        rho = TABLE1_ENVS[env]["rho"]
        steps = scale.get("env_steps", {}).get(env) or scale.steps or TABLE1_ENVS[env]["steps"]
        base = {
            "env": env,
            **deep_rl.train_settings(scale),
            "total_steps": steps,
            "constraint": {"type": "var", "rho": rho, "epsilon": EPSILON, "gamma_c": 1.0},
        }
        if scale["network"]:
            base["network"] = scale["network"]
        run_dirs = []
        for label, algo, overrides in deep_rl.methods_at(TABLE1_METHODS, scale):
            # PPO ignores the constraint; P_hat still counts
            cfg = configlib.resolve(configlib.merge(configlib.merge(base, {"algo": algo}), overrides))
            name = deep_rl.units_label(label, cfg)
            run_dir = out / "runs" / env / deep_rl.run_dir_name(name)
            summary = train_or_resume(cfg, run_dir, show_progress=scale.name != "smoke")
            rows.append(risk_row(label, cfg, run_dir, summary, default_config=not overrides))
            run_dirs.append(run_dir)
        figure = plotting.plot_runs(run_dirs, out / f"canary_table1_{env}.png")
        figures.append(figure.name)
    return {
        "rows": rows,
        "figures": figures,
        "settings": {
            "epsilon": EPSILON,
            "gamma_c": 1.0,
            "t_safe_pooling_episodes": T_SAFE_EPISODES,
            "envs": {e: TABLE1_ENVS[e] for e in scale["envs"]},
            "seeds": scale.seeds,
            "steps": scale.steps,
            "env_steps": scale.get("env_steps", {}),
            "network": scale["network"] or "per-algorithm defaults",
            "paper": PAPER_SOURCE,
        },
    }
