"""Fig. 3's claims with some tasks left out, ours and the authors' runs at the same budgets side by side.

    python benchmarks/fig3_leave_out.py MIRROR runs/reproduce/ctrpo-table1-cpu --leave-out RacecarCircle1 \
        [--leave-out CarButton1] [--reps 2000] [--json OUT.json]

Where a port is known to differ from the original on a task (docs/results/ctrpo-table1-cpu/README.md, sections
"RacecarCircle1" and "CarButton1": RacecarCircle1's reverse at full lock, CarButton1's button contact), Fig. 3's
aggregate over all eight tasks mixes that difference into every
method's score.  This recomputes the figure's rows and its seven claims (:func:`ctrpo_fig3.fig3_claims`, the
statistics of ``saferl reproduce ctrpo-fig3``) on the tasks kept, for our runs (a ctrpo-table1 output directory:
``OUT/<task>/runs/<method>``, every method finished on every task kept) and for the authors' stored runs cut at
the same budgets (``authors_at_budget.py``), and prints both beside the all-task values and the paper's.  A claim
whose verdict changes when a task leaves says that task carries it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from authors_at_budget import entries_at, fig3_at, load_runs  # noqa: E402  (a sibling script)

from saferl.reproduce import deep_rl
from saferl.reproduce.ctrpo import fig3, table1


def our_entries(out: Path, tasks) -> list[dict]:
    """ctrpo-table1's entries (task, label, values per seed) of the cpu plan's runs under ``out``
    (:func:`ctrpo_table1.plan`, the directories and configs the target trains), Fig. 3's methods (every label but
    Table 1's b_H = b row); a one-line exit where a run is missing or unfinished."""
    scale = table1.SCALES["cpu"]
    labels = [m[0] for m in deep_rl.methods_at(table1.METHODS, scale)] * len(table1.tasks_at(scale))
    entries = []
    for label, (run_dir, cfg) in zip(labels, table1.plan(scale, out)):
        if cfg["env"] not in tasks or label == table1.TABLE1_CTRPO:
            continue
        summary_path = run_dir / "summary.json"
        summary = json.loads(summary_path.read_text()) if summary_path.is_file() else {"interrupted": True}
        if summary.get("interrupted"):
            sys.exit(f"{run_dir}: no finished run of {label!r} (Fig. 3 needs every method on every task kept)")
        entries.append(
            {
                "task": cfg["env"],
                "label": label,
                "method": label,
                "algo": cfg["algo"],
                "seeds": cfg["seeds"],
                "values": table1.seed_values(run_dir, cfg, summary),
            }
        )
    return entries


def claims_of(entries: list[dict], reps: int) -> tuple[list[dict], dict]:
    rows = fig3_at(entries, reps)
    return rows, fig3.fig3_claims(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mirror", type=Path, help="a mirror of milosen/ctrpo (its data/runs)")
    parser.add_argument("out", type=Path, help="a ctrpo-table1 output directory")
    parser.add_argument("--leave-out", action="append", default=[], metavar="TASK", help="a task to leave out")
    parser.add_argument("--reps", type=int, default=2000, help="bootstrap resamples (the targets use 10,000)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    unknown = [t for t in args.leave_out if t not in table1.TASKS]
    if unknown or not args.leave_out:
        sys.exit(f"--leave-out {unknown or '(none)'}: give one or more of {', '.join(table1.TASKS)}")
    kept = [t for t in table1.TASKS if t not in args.leave_out]
    budget = {task: table1.CPU_STEPS[task] for task in table1.TASKS}
    ours_all = our_entries(args.out, table1.TASKS)
    theirs_all, _ = entries_at(load_runs(args.mirror), budget)
    results = {}
    for name, entries in (
        ("ours, all tasks", ours_all),
        ("ours, kept", [e for e in ours_all if e["task"] in kept]),
        ("authors, all tasks", theirs_all),
        ("authors, kept", [e for e in theirs_all if e["task"] in kept]),
    ):
        results[name] = claims_of(entries, args.reps)
    paper = fig3.fig3_claims(fig3.paper_rows())
    print(
        f"Fig. 3's claims at the cpu budgets, all eight tasks and without {', '.join(args.leave_out)} "
        f"({args.reps} resamples)\n"
    )
    print(
        "| Fig. 3 claim | ours, 8 tasks | ours, without | the authors' runs, 8 tasks | the authors', without | "
        "the paper (10M) |\n|---|---|---|---|---|---|"
    )
    for claim in paper:
        cells = [str(results[name][1].get(claim)) for name in results]
        print(f"| {claim} | {' | '.join(cells)} | {paper[claim]} |")
    print(
        "\n| method | ours, 8 tasks: return / PPO's, regret / CPO's, group | ours, without | authors', 8 tasks | "
        "authors', without |\n|---|---|---|---|---|"
    )
    by_label = {name: {r["label"]: r for r in rows} for name, (rows, _) in results.items()}
    for label in by_label["ours, all tasks"]:
        cells = []
        for name in results:
            row = by_label[name].get(label)
            cells.append(
                "--"
                if row is None
                else f"{row['normalized_return']:.2f}, {row['normalized_regret']:.2f}, {row['group']}"
            )
        print(f"| {label} | {' | '.join(cells)} |")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "left_out": args.leave_out,
                    "reps": args.reps,
                    "claims": {n: c for n, (_, c) in results.items()},
                    "paper": paper,
                    "rows": {n: r for n, (r, _) in results.items()},
                },
                indent=1,
                default=float,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
