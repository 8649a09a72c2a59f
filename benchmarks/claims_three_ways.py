"""The C-TRPO benchmark's claims read three ways (ours, the authors' runs at our budgets, the paper at 10M) and how
often each pair agrees, decisive agreements, decisive disagreements and undecided ones apart.

    python benchmarks/claims_three_ways.py [--ours-table1 PATH] [--ours-fig3 PATH] [--authors PATH] [--json OUT]
    python benchmarks/claims_three_ways.py --mirror MILOSEN_CTRPO --budgets cpu,500000,...,10000000

The second form reads Fig. 3's claims in the authors' runs at each budget instead (``cpu``: ctrpo-table1's cpu
budgets per task; a number: that many steps on every task), from a git mirror of milosen/ctrpo.

Defaults: docs/results/ctrpo-table1-cpu/results.json, docs/results/ctrpo-fig3-cpu/results.json and
docs/results/ctrpo-authors-runs/at-cpu-budgets.json (``benchmarks/authors_at_budget.py --json``: the authors' rows at
our budgets, with their intervals). Every claim is read from rows by today's rules (``ctrpo.table1.task_claims``,
``ctrpo.fig3.fig3_claims``, the vocabulary of :mod:`saferl.analysis.verdicts`), so the three sides are read alike;
nothing is trained. Prints Markdown: per task and claim the three readings, then the agreement counts of each pair.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from saferl.analysis import verdicts
from saferl.reproduce.ctrpo import fig3, table1

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
PAIRS = (("ours", "paper"), ("authors", "paper"), ("ours", "authors"))


def table1_readings(ours: list[dict], authors: list[dict]) -> dict:
    """``{task: {claim: {"ours", "authors", "paper"}}}`` over the tasks both tables hold."""
    out = {}
    for task in table1.TASKS:
        mine = [r for r in table1.under_paper_names(ours) if r["env"] == task]
        theirs = [r for r in table1.under_paper_names(authors) if r["env"] == task]
        if not mine or not theirs:
            continue
        sides = {
            "ours": table1.task_claims(mine),
            "authors": table1.task_claims(theirs),
            "paper": table1.task_claims(table1.paper_rows(task)),
        }
        out[task] = {claim: {s: sides[s].get(claim) for s in sides} for claim in sides["paper"]}
    return out


def fig3_readings(ours: list[dict], authors: list[dict]) -> dict:
    """``{claim: {"ours", "authors", "paper"}}`` of Sec. 5's Fig. 3 claims."""
    sides = {
        "ours": fig3.fig3_claims(ours),
        "authors": fig3.fig3_claims(authors),
        "paper": fig3.fig3_claims(fig3.paper_rows()),
    }
    return {claim: {s: sides[s].get(claim) for s in sides} for claim in sides["paper"]}


def counts(readings: list[dict]) -> dict:
    """Per pair of sides, :func:`verdicts.agreement_counts` over ``readings`` (``{"ours", "authors", "paper"}``)."""
    return {
        f"{a} vs {b}": verdicts.agreement_counts(verdicts.agreement(r[a], r[b]) for r in readings) for a, b in PAIRS
    }


def authors_fig3_by_budget(mirror: Path, budgets: list[str], reps: int) -> dict[str, dict]:
    """``{budget: fig3_claims}`` of the authors' runs read at each budget (``benchmarks/authors_at_budget.py``)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import authors_at_budget

    runs = authors_at_budget.load_runs(mirror)
    out = {}
    for name in budgets:
        budget = {task: table1.CPU_STEPS[task] if name == "cpu" else int(name) for task in table1.TASKS}
        entries, _ = authors_at_budget.entries_at(runs, budget)
        out[name] = fig3.fig3_claims(authors_at_budget.fig3_at(entries, reps))
    return out


def budget_page(by_budget: dict[str, dict]) -> str:
    claims = list(next(iter(by_budget.values())))
    names = ["cpu budgets" if b == "cpu" else verdicts.steps_text(int(b)) for b in by_budget]
    lines = ["| claim | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for i, claim in enumerate(claims, 1):
        lines.append(f"| {i}. {claim} | " + " | ".join(str(c.get(claim)) for c in by_budget.values()) + " |")
    return "\n".join(lines) + "\n"


def page(table: dict, figure: dict) -> str:
    lines = [
        "# The C-TRPO benchmark's claims, three ways",
        "",
        "Ours (ctrpo-table1-cpu, ctrpo-fig3-cpu), the authors' runs cut at our budgets (at-cpu-budgets.json) and the "
        "paper at 10M, each read from its rows by the same rules (`python benchmarks/claims_three_ways.py`; "
        "saferl.analysis.verdicts). A reading decides its claim unless it is `overlapping`, `undecided` or a best "
        "method `not separated` from the next; two readings agree or disagree only when both decide.",
        "",
        "## Table 1, per task",
        "",
        "| task | claim | ours | the authors' runs | the paper |",
        "|---|---|---|---|---|",
    ]
    for task, claims in table.items():
        for claim, r in claims.items():
            lines.append(f"| {task} | {claim} | {r['ours']} | {r['authors']} | {r['paper']} |")
    lines += ["", "| Table 1, pair | agree | disagree | undecided | of |", "|---|---|---|---|---|"]
    for pair, c in counts([r for claims in table.values() for r in claims.values()]).items():
        lines.append(f"| {pair} | {c['agree']} | {c['disagree']} | {c['undecided']} | {c['total']} |")
    lines += ["", "## Fig. 3 (Sec. 5's claims)", "", "| claim | ours | the authors' runs | the paper |"]
    lines.append("|---|---|---|---|")
    for claim, r in figure.items():
        lines.append(f"| {claim} | {r['ours']} | {r['authors']} | {r['paper']} |")
    lines += ["", "| Fig. 3, pair | agree | disagree | undecided | of |", "|---|---|---|---|---|"]
    for pair, c in counts(list(figure.values())).items():
        lines.append(f"| {pair} | {c['agree']} | {c['disagree']} | {c['undecided']} | {c['total']} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ours-table1", type=Path, default=RESULTS / "ctrpo-table1-cpu" / "results.json")
    parser.add_argument("--ours-fig3", type=Path, default=RESULTS / "ctrpo-fig3-cpu" / "results.json")
    parser.add_argument("--authors", type=Path, default=RESULTS / "ctrpo-authors-runs" / "at-cpu-budgets.json")
    parser.add_argument("--json", type=Path, help="also write the readings and counts here")
    parser.add_argument("--mirror", type=Path, help="a git mirror of milosen/ctrpo: the authors' Fig. 3 by budget")
    parser.add_argument("--budgets", default="cpu,500000,1000000,1500000,2000000,3000000,5000000,7500000,10000000")
    parser.add_argument("--reps", type=int, default=10_000, help="bootstrap resamples of the budget columns")
    args = parser.parse_args(argv)
    if args.mirror is not None:
        budgets = args.budgets.split(",")
        bad = [b for b in budgets if b != "cpu" and not b.isdigit()]
        if bad:
            parser.error(f"--budgets takes cpu or whole numbers of steps, got {', '.join(bad)}")
        print(budget_page(authors_fig3_by_budget(args.mirror, budgets, args.reps)), end="")
        return 0
    for path in (args.ours_table1, args.ours_fig3, args.authors):
        if not path.is_file():
            parser.error(f"{path} is not a file")
    authors = json.loads(args.authors.read_text())
    table = table1_readings(json.loads(args.ours_table1.read_text())["rows"], authors["table1_rows"])
    figure = fig3_readings(json.loads(args.ours_fig3.read_text())["rows"], authors["fig3_rows"])
    print(page(table, figure), end="")
    if args.json:
        flat = [r for claims in table.values() for r in claims.values()]
        payload = {
            "table1": table,
            "fig3": figure,
            "table1_counts": counts(flat),
            "fig3_counts": counts([*figure.values()]),
        }
        args.json.write_text(json.dumps(payload, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
