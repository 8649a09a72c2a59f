"""What the SVAE reproduce targets (App. H of "Instance-Dependent Regret for CMDPs with Step-Wise
Constraints") share: their scales and the mean/SD cell of their tables.

Each study is a handful of compiled, vmapped calls of :func:`saferl.tabular.learners.run_batch`;
the paper's multipliers (App. H.6) are the defaults.  Scales: smoke = demo = K = 200 episodes
with 3 seeds (H.3-H.5) or 2 environments x 1 seed (H.2); cpu = full = the paper's K = 10,000 with
20 seeds (H.3-H.5) or 8 environments x 5 paired seeds (H.2).
"""

from __future__ import annotations

from saferl.analysis import plotting
from saferl.reproduce.framework import Scale
from saferl.tabular import learners as L

_UNIT = "episodes (K)"


def scales(wall_s: dict[str, float]) -> dict[str, Scale]:
    """The H.3-H.5 scales (K, seeds), with the target's expected wall time per scale."""
    return {
        "smoke": Scale(steps=200, seeds=3, wall_s=wall_s["smoke"], unit=_UNIT),
        "demo": Scale(steps=200, seeds=3, wall_s=wall_s["smoke"], unit=_UNIT),
        "cpu": Scale(steps=10_000, seeds=20, wall_s=wall_s["full"], unit=_UNIT),
        "full": Scale(steps=10_000, seeds=20, wall_s=wall_s["full"], unit=_UNIT),
    }


def nav_scales(wall_s: dict[str, float]) -> dict[str, Scale]:
    """The H.2 navigation scales: K, paired seeds per environment, environments."""

    def scale(K: int, seeds: int, envs: int, wall: float) -> Scale:
        return Scale(
            steps=K,
            seeds=seeds,
            wall_s=wall,
            unit=_UNIT,
            note=f"seeds per environment, {envs} environments",
            params={"environments": envs},
        )

    return {
        "smoke": scale(200, 1, 2, wall_s["smoke"]),
        "demo": scale(200, 1, 2, wall_s["smoke"]),
        "cpu": scale(10_000, 5, 8, wall_s["full"]),
        "full": scale(10_000, 5, 8, wall_s["full"]),
    }


def episode_figure_result(fig, axes, out, name: str, rows: list, K: int, n_seeds: int) -> dict:
    """The tail of the H.3-H.5 targets: episode axes with legends, the PNG ``name`` written into ``out``,
    and the result with the paper's multipliers (App. H.6) as its settings."""
    for ax in axes:
        ax.set_xlabel("episode")
        ax.legend(fontsize=8)
    plotting.save_figure(fig, out / name, dpi=120)
    return {
        "rows": rows,
        "figures": [name],
        "settings": {"K": K, "seeds": n_seeds, "alpha_beta": list(L.CONTROLLED), "delta": 0.05},
    }


def ms(x) -> dict:
    """``{"mean", "sd"}`` of a sample (the tables' cell)."""
    mean, sd = L.mean_sd(x)
    return {"mean": mean, "sd": sd}
