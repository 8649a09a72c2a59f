"""Our ctrpo-table1 runs beside the C-TRPO authors' own, at the same number of env steps.

The authors published their training logs (milosen/ctrpo ``data/runs/benchmark/<task>/<algo>/seed-*/progress.csv``,
``Metrics/EpRet`` and ``Metrics/EpCost`` per 20,000-step epoch; C-TRPO's under ``data/runs/ablation``).  For every
method and task this prints, per seed, their return and cost at the epoch nearest our budget and our final values
(summary.json, the last 10% of iterations), with the two-sided Mann-Whitney p-value of ours against theirs -- a
check of the harness and of each method's code as the paper ran it: early in training the velocity tasks' return is
dominated by what the harness charges (the control cost of the unclipped sample).  Their value is one epoch's
50-episode rolling mean, ours a mean over iterations, so on a curve still rising theirs lags a little.
Run from the repository root; MIRROR is a git clone of the authors' repository, milosen/ctrpo on GitHub (its HEAD
is read)::

    .venv/bin/python benchmarks/authors_runs.py MIRROR runs/reproduce/ctrpo-table1-cpu
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from authors_at_budget import AUTHORS_FOLDERS, authors_task_id  # noqa: E402  (a sibling script)
from scipy.stats import mannwhitneyu

from saferl.reproduce.ctrpo import table1
from saferl.reproduce.deep_rl import run_dir_name, units_label
from saferl.training import run_directory

#: saferl's method labels -> the authors' directory names (authors_at_budget's map; this script runs from benchmarks/)
AUTHORS_ALGO = AUTHORS_FOLDERS


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def authors_values(repo: Path, folder: str, steps: int) -> tuple[int, list[float], list[float]] | None:
    """(their epoch's total steps, returns, costs) per seed at the epoch nearest ``steps``, or None."""
    files = [
        f
        for f in _git(repo, "ls-tree", "-r", "--name-only", "HEAD", f"data/runs/{folder}").split()
        if f.endswith("/progress.csv") and ".ipynb" not in f
    ]
    at, returns, costs = None, [], []
    for name in sorted(files):
        rows = list(csv.DictReader(io.StringIO(_git(repo, "show", f"HEAD:{name}"))))
        if not rows:
            continue
        row = min(rows, key=lambda r: abs(float(r["Train/TotalSteps"]) - steps))
        at = int(float(row["Train/TotalSteps"]))
        returns.append(float(row["Metrics/EpRet"]))
        costs.append(float(row["Metrics/EpCost"]))
    return None if at is None else (at, returns, costs)


def ours(out: Path, task: str, label: str) -> tuple[int, list[float], list[float]] | None:
    for run_dir in sorted((out / task / "runs").glob("*")):
        summary_path = run_dir / "summary.json"
        if not summary_path.exists():
            continue
        cfg = run_directory.load_run_config(run_dir)
        if run_dir.name != run_dir_name(units_label(label, cfg)):
            continue
        final = json.loads(summary_path.read_text())["final"]
        return (int(cfg["total_steps"]), final["episode_return"]["per_seed"], final["episode_cost"]["per_seed"])
    return None


def fmt(values: list[float]) -> str:
    digits = 1 if max(abs(v) for v in values) < 100 else 0  # the navigation tasks' returns are tens at most
    return "[" + ", ".join(f"{v:.{digits}f}" for v in sorted(values)) + f"] median {np.median(values):.{digits}f}"


def rank_test(mine: list[float], theirs: list[float]) -> str:
    """The two-sided Mann-Whitney U test's p-value of ours against theirs (5 against 5 seeds: p < 0.05 needs at
    most 2 of the 25 pairs out of order)."""
    return f"{mannwhitneyu(mine, theirs, alternative='two-sided').pvalue:.2f}"


def main(repo: str, out: str) -> None:
    repo_path, out_path = Path(repo), Path(out)
    for task in table1.TASKS:
        print(f"## {task}")
        print(
            "| method | ours: steps, final return per seed | authors: epoch steps, return per seed | return: p "
            "| ours: cost | authors: cost | cost: p |"
        )
        print("|---|---|---|---|---|---|---|")
        for label, folder in AUTHORS_ALGO.items():
            mine = ours(out_path, task, label)
            if mine is None:
                continue
            theirs = authors_values(repo_path, folder.format(task=authors_task_id(task)), mine[0])
            if theirs is None:
                continue
            print(
                f"| {label} | {mine[0]:,}: {fmt(mine[1])} | {theirs[0]:,}: {fmt(theirs[1])} | "
                f"{rank_test(mine[1], theirs[1])} | {np.median(mine[2]):.2f} | {np.median(theirs[2]):.2f} | "
                f"{rank_test(mine[2], theirs[2])} |"
            )


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python benchmarks/authors_runs.py MILOSEN_CTRPO_MIRROR CTRPO_TABLE1_OUT")
    main(*sys.argv[1:])
