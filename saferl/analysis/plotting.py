"""Figures: ``saferl plot``'s learning curves and the helpers every reproduce target draws with.

* :func:`pyplot` -- matplotlib's pyplot on the Agg backend (no display needed);
* :func:`band` -- a curve with a shaded band (mean +- SD, optionally clipped);
* :func:`seed_band` -- mean +- SD over seeds of a ``(seeds, x)`` array;
* :func:`save_figure` -- the figure tail: tight layout, atomic PNG write, close; returns the path;
* :func:`plot_runs` -- return / cost / violation-probability curves of run directories (one curve per grid
  point of a swept run).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from saferl.analysis import verdicts
from saferl.training import in_program_sweep, run_directory


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def band(ax, x, mean, sd, label=None, clip=(None, None), color=None, alpha: float = 0.2, style: str = "-", **plot_kw):
    """Plot ``mean`` against ``x`` with a shaded ``mean +- sd`` band in the line's colour.

    ``clip = (lo, hi)`` bounds the band (scalars or arrays; None: unbounded).  Returns the line."""
    mean, sd = np.asarray(mean, float), np.asarray(sd, float)
    kw = dict(plot_kw, label=label)
    if color is not None:
        kw["color"] = color
    line = ax.plot(x, mean, style, **kw)[0]
    lo, hi = mean - sd, mean + sd
    if clip[0] is not None:
        lo = np.maximum(lo, clip[0])
    if clip[1] is not None:
        hi = np.minimum(hi, clip[1])
    fill = {"color": color} if color is not None else {"facecolor": line.get_color()}
    ax.fill_between(x, lo, hi, alpha=alpha, **fill)
    return line


def seed_band(ax, x, y, label=None, log: bool = True):
    """Mean +- SD (ddof 1; 0 for one seed) over axis 0 of ``y`` (seeds, len(x)); the band's lower
    edge is clipped at 0 when every value is nonnegative.  ``log``: logarithmic x axis."""
    y = np.asarray(y, float)
    sd = y.std(0, ddof=1) if y.shape[0] > 1 else np.zeros(y.shape[1])
    line = band(ax, x, y.mean(0), sd, label=label, clip=(0.0 if (y >= 0).all() else None, None))
    if log:
        ax.set_xscale("log")
    return line


def save_figure(fig, path: Path, dpi: int = 120, tight: bool = True) -> Path:
    """Lay ``fig`` out, write it to ``path`` as PNG (atomically: a crash leaves no half-written file)
    and close it.  Returns ``path``."""
    path = Path(path)
    if tight:
        fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    try:
        fig.savefig(tmp, dpi=dpi)
        tmp.replace(path)
    finally:
        pyplot().close(fig)
        if tmp.exists():
            tmp.unlink()
    return path


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


def step_label(steps: float, _position=None) -> str:
    """An axis tick of environment steps in k/M units: 0, 500k, 1.5M (:func:`saferl.analysis.verdicts.steps_text`)."""
    return verdicts.steps_text(steps)


def steps_axis(ax) -> None:
    """Environment-step ticks in k/M units (matplotlib's default runs long integers into each other)."""
    from matplotlib.ticker import FuncFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(step_label))


def plot_runs(run_dirs: list[Path], out: Path | None = None) -> Path:
    plt = pyplot()
    loaded = []
    for run_dir in run_dirs:
        cfg = run_directory.load_run_config(run_dir)
        rows = run_directory.read_progress(run_dir)
        if not rows:
            raise run_directory.RunError(f"run directory {str(run_dir)!r} has no progress.csv rows yet")
        loaded.append((cfg, rows, run_dir))
    metrics = ["episode_return", "episode_cost"]
    if any("violation_probability" in rows[0] for _, rows, _ in loaded):
        metrics.append("violation_probability")
    fig, axes = plt.subplots(1, len(metrics), figsize=(5 * len(metrics), 3.8))
    swept_limit = any("constraint.limit" in (cfg.get("sweep") or {}) for cfg, _, _ in loaded)
    for ax, metric in zip(np.atleast_1d(axes), metrics):
        for cfg, rows, run_dir in loaded:
            if metric not in rows[0]:
                continue
            for point_rows, label in _curve_groups(cfg, rows, run_dir):
                x, m, s = curves(point_rows, metric)
                band(ax, x, m, s, label=label)
        if metric == "episode_cost" and loaded[0][0]["constraint"]["type"] == "expected" and not swept_limit:
            ax.axhline(loaded[0][0]["constraint"]["limit"], color="k", ls="--", lw=1, label="cost limit")
        if metric == "violation_probability":
            ax.axhline(loaded[0][0]["constraint"].get("epsilon", 0), color="k", ls="--", lw=1, label="epsilon")
        ax.set_xlabel("environment steps per seed")
        steps_axis(ax)
        ax.set_title(metric.replace("_", " "))
        ax.grid(alpha=0.3)
    np.atleast_1d(axes)[0].legend(fontsize=7)
    return save_figure(fig, Path(out) if out else Path(run_dirs[0]) / "curves.png", dpi=110)


def _curve_groups(cfg: dict, rows: list[dict], run_dir) -> list[tuple[list[dict], str]]:
    """A run's rows and curve label: one group, or one per grid point of a swept run
    (:mod:`saferl.training.in_program_sweep`)."""
    name = f"{cfg['algo']} ({Path(run_dir).name})"
    if not cfg.get("sweep"):
        return [(rows, name)]
    return [
        (
            [r for r in rows if r.get(in_program_sweep.POINT_COLUMN) == g],
            f"{cfg['algo']} {in_program_sweep.label(point)}",
        )
        for g, point in enumerate(in_program_sweep.points(cfg))
    ]
