"""The C-TRPO paper's Table 1 and Fig. 3 claims on the authors' own runs, cut at a step budget.

At ``--scale cpu`` saferl trains 1-8% of the paper's 10M steps per task, so a claim that does not reproduce there
may simply not hold yet that early in training.  The authors published every run behind Table 1 and Fig. 3
(milosen/ctrpo ``data/runs/{benchmark,ablation}/<task>/<algo>/seed-*/progress.csv``, one row per 20,000-step
epoch); this script reads them at the epoch nearest a budget and computes, with saferl's own statistics
(:mod:`saferl.reproduce.ctrpo.fig3`, :mod:`saferl.reproduce.ctrpo.table1`), Fig. 3's aggregate, its claims and
Table 1's per-task claims, as the paper's own code would have shown them had it stopped there.  The values per
seed are the authors' notebook's (``plots/plots_benchmark.ipynb``, ``plots/helpers.py``): final return and cost =
``Metrics/EpRet`` and ``Metrics/EpCost`` of that epoch (their 50-episode rolling means), cost regret = the
cumulative sum of [EpCost - 25]_+ over epochs up to it.  The labels are saferl's: "C-TRPO" the authors'
``c-trpo-hyst`` (b_H = 0.8 b, Fig. 3's), "C-TRPO (b_H = b)" their ``c-trpo`` (Table 1's), PCPO, FOCOPS and IPO
under the labels of ``ctrpo_table1.AS_RUN`` (their code's variants; no TRPO: they ran none).

A self-check comes first: at 10M steps the aggregate must equal the paper's Fig. 3 (:data:`ctrpo_fig3.PAPER_FIG3`,
computed from these same files by the authors' notebook) up to the bootstrap's noise.  Run from the repository
root; MIRROR is a git clone of the authors' repository, milosen/ctrpo on GitHub (its HEAD is read)::

    .venv/bin/python benchmarks/authors_at_budget.py MIRROR            # cpu budgets
    .venv/bin/python benchmarks/authors_at_budget.py MIRROR --steps 2000000
    .venv/bin/python benchmarks/authors_at_budget.py MIRROR \
        --ours docs/results/ctrpo-table1-cpu/results.json     # + ours beside theirs, task by task

With ``--ours`` (a ctrpo-table1 results.json trained at these budgets) it prints per task and method our IQM
[interval] beside theirs and whether the intervals overlap.  Our "final" is theirs too, the last epoch's rolling
mean (``ctrpo.table1.authors_finals``; tables tabulated before decision 068 held the last 10% of iterations).
Our Reg+ sums our iterations, theirs 20,000-step epochs: the runs trained since d92f081 take their batch
(``--ours-batch`` 20000, the default); tables of 16 x 1000 iterations need ``--ours-batch 16000``, which shows our
Reg+ x 0.8, per 20,000 steps.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
from pathlib import Path

import numpy as np

from saferl.analysis import verdicts
from saferl.reproduce.ctrpo import ablations, fig3, table1

#: saferl's labels -> the authors' folders under data/runs ({task} is their environment id)
#: (PCPO, FOCOPS and IPO under the labels of ctrpo_table1.AS_RUN: the authors' runs are those variants)
AS_RUN_LABEL = {paper: label for label, paper in table1.AS_RUN.items()}
AUTHORS_FOLDERS = {
    "C-TRPO": "ablation/{task}/c-trpo-hyst",
    table1.TABLE1_CTRPO: "ablation/{task}/c-trpo",
    "CPO": "benchmark/{task}/cpo",
    AS_RUN_LABEL["PCPO"]: "benchmark/{task}/pcpo",
    "CPPO-PID": "benchmark/{task}/cppo_pid",
    "PPO-Lag": "benchmark/{task}/ppo_lag",
    "TRPO-Lag": "benchmark/{task}/trpo_lag",
    AS_RUN_LABEL["FOCOPS"]: "benchmark/{task}/focops",
    "CUP": "benchmark/{task}/cup",
    AS_RUN_LABEL["IPO"]: "benchmark/{task}/ipo",
    "P3O": "benchmark/{task}/p3o",
    "PPO": "benchmark/{task}/ppo",
}
#: Fig. 10's runs (App. D.2; plots/helpers.py ``load_ablation_data``) under ctrpo-hysteresis's labels
FIG10_FOLDERS = {
    "C-TRPO": "ablation/{task}/c-trpo-hyst",
    table1.TABLE1_CTRPO: "ablation/{task}/c-trpo",
    "CPO": "benchmark/{task}/cpo",
    "CPO (option: hysteresis)": "ablation/{task}/cpo-hyst",
    "PPO": "benchmark/{task}/ppo",
}
EPOCH_STEPS = 20_000  # the authors' steps_per_epoch (every run's config.json)


def authors_task_id(task: str) -> str:
    """saferl's task name -> the authors' environment id (their folders' names)."""
    return f"{task}-v1" if task.endswith("Velocity") else f"Safety{task}-v0"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def load_runs(
    repo: Path, folders: dict[str, str] = AUTHORS_FOLDERS, tasks=table1.TASKS
) -> dict[tuple[str, str], list[list[dict]]]:
    """``{(task, label): [rows of one seed's progress.csv, sorted by steps], ...}`` for every task and label."""
    names = _git(repo, "ls-tree", "-r", "--name-only", "HEAD", "data/runs").split()
    out = {}
    for task in tasks:
        for label, folder in folders.items():
            prefix = f"data/runs/{folder.format(task=authors_task_id(task))}/"
            files = sorted(n for n in names if n.startswith(prefix) and n.endswith("/progress.csv"))
            seeds = []
            for name in files:
                rows = list(csv.DictReader(io.StringIO(_git(repo, "show", f"HEAD:{name}"))))
                if rows:
                    seeds.append(sorted(rows, key=lambda r: float(r["Train/TotalSteps"])))
            if seeds:
                out[(task, label)] = seeds
    return out


def seed_values_at(rows: list[dict], steps: int) -> tuple[int, float, float, float]:
    """(the epoch's steps, EpRet, EpCost, cumulative [EpCost - 25]_+) at the epoch nearest ``steps``."""
    totals = np.array([float(r["Train/TotalSteps"]) for r in rows])
    at = int(np.argmin(np.abs(totals - steps)))
    costs = np.array([float(r["Metrics/EpCost"]) for r in rows[: at + 1]])
    regret = float(np.maximum(costs - table1.LIMIT, 0.0).sum())
    return int(totals[at]), float(rows[at]["Metrics/EpRet"]), float(rows[at]["Metrics/EpCost"]), regret


def entries_at(runs: dict, budget: dict[str, int]) -> tuple[list[dict], dict[str, int]]:
    """ctrpo-table1's entry format (task, label, method, values per seed) at ``budget[task]`` steps, and the epoch
    each task was read at."""
    entries, read_at = [], {}
    for (task, label), seeds in runs.items():
        got = [seed_values_at(rows, budget[task]) for rows in seeds]
        read_at[task] = got[0][0]
        values = {
            name: np.array([g[i] for g in got])
            for i, name in ((1, "final_return"), (2, "final_cost"), (3, "cost_regret"))
        }
        entries.append(
            {"task": task, "label": label, "method": label, "algo": label, "seeds": len(seeds), "values": values}
        )
    return entries, read_at


def fig3_at(entries: list[dict], reps: int) -> list[dict]:
    """Fig. 3's rows (ours: saferl's statistics) on ``entries``, C-TRPO being the figure's b_H = 0.8 b runs."""
    entries = [e for e in entries if e["label"] != table1.TABLE1_CTRPO]
    refs = fig3.normalisers(entries)
    scores, _ = fig3.normalized_scores(entries, refs)
    rows = []
    for label in dict.fromkeys(e["label"] for e in entries):
        row = {"method": label, "label": label}
        for field, _, _ in fig3.SCORES:
            row[field], row[f"{field}_lo"], row[f"{field}_hi"] = fig3.aggregate(scores[field][label], reps)
        row["group"] = fig3.group_of(row["normalized_final_cost_lo"], row["normalized_final_cost_hi"])
        rows.append(row)
    return rows


def self_check(runs: dict, reps: int) -> float:
    """The largest |IQM - the paper's| over Fig. 3's methods and scores at 10M steps (should be ~0)."""
    entries, _ = entries_at(runs, {task: table1.PAPER_STEPS for task in table1.TASKS})
    rows = {r["label"]: r for r in fig3_at(entries, reps)}
    worst = 0.0
    for method, paper in fig3.PAPER_FIG3.items():
        label = AS_RUN_LABEL.get(method, method)
        for (field, _, _), (value, _, _) in zip(fig3.SCORES, paper):
            worst = max(worst, abs(rows[label][field] - value))
    return worst


def fig10_at(repo: Path, budget: dict[str, int], reps: int) -> tuple[list[dict], dict]:
    """Fig. 10's aggregate rows (ctrpo-hysteresis's statistics) over the tasks of ``budget`` and its claims."""
    entries, _ = entries_at(load_runs(repo, FIG10_FOLDERS, list(budget)), budget)
    rows, _ = ablations.fig10_rows(entries, reps=reps)
    checks = {k: v for k, v in ablations.hysteresis_checks(rows).items() if k.startswith("Fig. 10: ")}
    return rows, checks


#: the paper's method names -> this script's row labels (the claims are computed under the paper's names, as
#: ctrpo_table1.table1_checks does, and shown under the rows' labels: the authors' runs are those variants)
ROW_LABEL_OF = {paper: label for label, paper in table1.PAPER_METHOD_OF.items() if paper is not None}


def with_row_labels(value: str | None) -> str | None:
    """A best-of claim's value ("CPO", "not separated: C-TRPO, PCPO", None) with each method named by its row's
    label."""
    if value is None:
        return value
    prefix = f"{verdicts.NOT_SEPARATED}: "
    separated = not value.startswith(prefix)
    names = [ROW_LABEL_OF.get(name, name) for name in value.removeprefix(prefix).split(", ")]
    return ("" if separated else prefix) + ", ".join(names)


def fmt(row: dict, field: str, digits: int = 2) -> str:
    return f"{row[field]:.{digits}f} [{row[f'{field}_lo']:.{digits}f}, {row[f'{field}_hi']:.{digits}f}]"


def print_side_by_side(ours: list[dict], theirs: list[dict], ours_batch: int) -> None:
    """Per task and method: our V_r, V_c, Reg+ IQM [interval] beside the authors' at the same budget, our Reg+ per
    20,000 steps (x ``ours_batch`` / 20,000)."""
    by = {(r["env"], r["label"]): r for r in theirs if "final_cost" in r}
    iteration_to_epoch = ours_batch / EPOCH_STEPS
    for task in table1.TASKS:
        print(f"\n#### {task}: ours / the authors' runs at the same budget (ours above/below/overlap theirs)")
        print(
            f"| method | V_r ours | V_r authors' | | V_c ours | V_c authors' | | "
            f"Reg+ ours (x {iteration_to_epoch:g}) | Reg+ authors' | |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        for row in (r for r in ours if r["env"] == task and "final_cost" in r):
            other = by.get((task, row["label"]))
            if other is None:
                continue
            cells = []
            for name in table1.QUANTITIES:
                scale = iteration_to_epoch if name == "cost_regret" else 1.0
                mine = {k: scale * row[k] for k in (name, f"{name}_lo", f"{name}_hi")}
                order = verdicts.interval_order(mine, other, name)
                cells += [fmt(mine, name, 1), fmt(other, name, 1), order]
            print(f"| {row['method']} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mirror", type=Path, help="a mirror of milosen/ctrpo (a git directory)")
    parser.add_argument("--steps", type=int, help="one budget for every task (default: ctrpo-table1's cpu budgets)")
    parser.add_argument("--reps", type=int, default=table1.BOOTSTRAP_REPS, help="bootstrap resamples")
    parser.add_argument("--json", type=Path, help="also write the rows and claims here")
    parser.add_argument("--ours", type=Path, help="a ctrpo-table1 results.json to print beside the authors' runs")
    parser.add_argument(
        "--ours-batch",
        type=int,
        default=EPOCH_STEPS,
        help="env steps per iteration of the --ours runs (their Reg+ is shown per 20,000 steps)",
    )
    args = parser.parse_args()
    runs = load_runs(args.mirror)
    worst = self_check(runs, args.reps)
    print(f"self-check at 10M steps: largest |IQM - the paper's Fig. 3| = {worst:.4f}")
    budget = {task: args.steps or table1.CPU_STEPS[task] for task in table1.TASKS}
    entries, read_at = entries_at(runs, budget)
    print("read at: " + ", ".join(f"{task} {steps:,}" for task, steps in read_at.items()))
    rows = fig3_at(entries, args.reps)
    print("\n| method (the authors' runs) | final cost / b - 1 | return / PPO's | regret / CPO's | group |")
    print("|---|---|---|---|---|")
    for row in sorted(rows, key=lambda r: (fig3.GROUP_ORDER.index(r["group"]), -r["normalized_return"])):
        print(
            f"| {row['label']} | {fmt(row, 'normalized_final_cost')} | {fmt(row, 'normalized_return')} | "
            f"{fmt(row, 'normalized_regret')} | {row['group']} |"
        )
    claims = fig3.fig3_claims(rows)
    paper = fig3.fig3_claims(fig3.paper_rows())
    print("\n| Fig. 3 claim | the authors' runs at this budget | the paper (10M) |\n|---|---|---|")
    for name, value in claims.items():
        print(f"| {name} | {value} | {paper.get(name)} |")
    table_rows = table1.table_rows(entries)
    named = table1.under_paper_names(table_rows)
    task_claims = {task: table1.task_claims([r for r in named if r["env"] == task]) for task in table1.TASKS}
    for claims in task_claims.values():
        for name in ("best return among admissible", "lowest regret among admissible"):
            claims[name] = with_row_labels(claims[name])
    print(
        "\n| task | C-TRPO (b_H = b) cost vs limit | vs CPO, return | vs CPO, regret | best return "
        "(admissible) | lowest regret (admissible) |\n|---|---|---|---|---|---|"
    )
    for task, c in task_claims.items():
        print(
            f"| {task} | {c.get('C-TRPO final cost vs limit')} | {c.get('C-TRPO vs CPO, return')} | "
            f"{c.get('C-TRPO vs CPO, cost regret')} | {c['best return among admissible']} | "
            f"{c['lowest regret among admissible']} |"
        )
    fig10_tasks = list(table1.TASKS) if args.steps else list(ablations.CPU_TASKS)
    fig10_rows, fig10_checks = fig10_at(args.mirror, {task: budget[task] for task in fig10_tasks}, args.reps)
    print(
        f"\n| Fig. 10 (the authors' runs; {', '.join(fig10_tasks)}) | return / PPO's | cost / b | "
        "regret / CPO (no hyst.)'s |\n|---|---|---|---|"
    )
    for row in fig10_rows:
        print(
            f"| {row['method']} | {fmt(row, 'normalized_return')} | {fmt(row, 'normalized_cost')} | "
            f"{fmt(row, 'normalized_regret')} |"
        )
    for name, value in fig10_checks.items():
        print(f"- {name}: {value}")
    if args.ours:
        print_side_by_side(json.loads(args.ours.read_text())["rows"], table_rows, args.ours_batch)
    if args.json:
        clean = lambda v: float(v) if isinstance(v, (np.floating, float)) else v  # noqa: E731
        payload = {
            "budget": budget,
            "read_at": read_at,
            "self_check_max_abs_diff": worst,
            "fig3_rows": [{k: clean(v) for k, v in r.items()} for r in rows],
            "fig3_claims": claims,
            "table1_rows": [{k: clean(v) for k, v in r.items() if k != "values"} for r in table_rows],
            "table1_claims": task_claims,
            "fig10_rows": [{k: clean(v) for k, v in r.items()} for r in fig10_rows],
            "fig10_claims": fig10_checks,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=1, default=str) + "\n")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
