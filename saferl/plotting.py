"""``saferl plot``: learning curves across seeds (mean and one standard deviation)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from saferl import runs


def curves(rows: list[dict], metric: str):
    """``(env_steps, mean, std)`` over seeds of ``metric`` per iteration (NaNs ignored)."""
    iterations = sorted({r["iteration"] for r in rows})
    steps, mean, std = [], [], []
    by_iter: dict[int, list[float]] = {}
    step_of: dict[int, float] = {}
    for r in rows:
        by_iter.setdefault(r["iteration"], []).append(r.get(metric, np.nan))
        step_of[r["iteration"]] = r["env_steps"]
    for it in iterations:
        vals = np.asarray(by_iter[it], float)
        vals = vals[~np.isnan(vals)]
        if vals.size:
            steps.append(step_of[it])
            mean.append(vals.mean())
            std.append(vals.std())
    return np.asarray(steps), np.asarray(mean), np.asarray(std)


def plot_runs(run_dirs: list[Path], out: Path | None = None) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    loaded = []
    for run_dir in run_dirs:
        cfg = runs.load_run_config(run_dir)
        rows = runs.read_progress(run_dir)
        if not rows:
            raise runs.RunError(f"run directory {str(run_dir)!r} has no progress.csv rows yet")
        loaded.append((cfg, rows, run_dir))
    metrics = ["episode_return", "episode_cost"]
    if any("violation_probability" in rows[0] for _, rows, _ in loaded):
        metrics.append("violation_probability")
    fig, axes = plt.subplots(1, len(metrics), figsize=(5 * len(metrics), 3.8))
    for ax, metric in zip(np.atleast_1d(axes), metrics):
        for cfg, rows, run_dir in loaded:
            if metric not in rows[0]:
                continue
            x, m, s = curves(rows, metric)
            label = f"{cfg['algo']} ({Path(run_dir).name})"
            ax.plot(x, m, label=label)
            ax.fill_between(x, m - s, m + s, alpha=0.2)
        if metric == "episode_cost" and loaded[0][0]["constraint"]["type"] == "expected":
            ax.axhline(loaded[0][0]["constraint"]["limit"], color="k", ls="--", lw=1, label="cost limit")
        if metric == "violation_probability":
            ax.axhline(loaded[0][0]["constraint"].get("epsilon", 0), color="k", ls="--", lw=1, label="epsilon")
        ax.set_xlabel("environment steps per seed")
        ax.set_title(metric.replace("_", " "))
        ax.grid(alpha=0.3)
    np.atleast_1d(axes)[0].legend(fontsize=7)
    fig.tight_layout()
    out = Path(out) if out else Path(run_dirs[0]) / "curves.png"
    tmp = out.with_name(f".{out.name}.tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    tmp.replace(out)
    return out
