"""Which verdicts a retabulation changed: the checks of two ``results.json`` files of one reproduce target (the
columns before and after retraining them, say), task by task and claim by claim.

    python benchmarks/claims_changed.py BEFORE/results.json AFTER/results.json [--tasks A,B] [--json OUT]

The tasks compared: ``--tasks``, else AFTER's ``only_tasks`` (``saferl reproduce TARGET --tasks``), else every task
both files judge.  A check is one of a task's entries in ``checks``: a claim read against the paper (``ours``,
``paper``, ``agreement``: agree / disagree / undecided, :func:`saferl.analysis.verdicts.agreement`; a file judged
before that vocabulary has a boolean ``agree``, read as agree / disagree), or a verdict per method (``safety``:
probably safe / undecided / probably unsafe).  Prints a Markdown table of every check whose reading changed, then
each method's final return and cost before and after (the ``rows``), and the counts, the three agreements apart.
Nothing is judged here that the target did not judge.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from saferl.analysis import verdicts

#: what each method's row is compared by
QUANTITIES = ("final_return", "final_cost", "safety")


def _agreement(value: dict) -> str | None:
    """A claim's agreement: its ``agreement``, or a boolean ``agree`` of a file judged before it as agree /
    disagree (that rule counted overlap against overlap as agreement)."""
    if "agreement" in value:
        return value["agreement"]
    if value.get("agree") is None:
        return None
    return "agree" if value["agree"] else "disagree"


def _flatten(checks: dict) -> dict[str, dict]:
    """A task's checks as ``name -> {"ours", "paper", "agreement"}``; a per-method dict becomes one entry per
    method."""
    out = {}
    for name, value in checks.items():
        if isinstance(value, dict) and "ours" in value:
            out[name] = {"ours": value.get("ours"), "paper": value.get("paper"), "agreement": _agreement(value)}
        elif isinstance(value, dict):
            for method, verdict in value.items():
                out[f"{name}: {method}"] = {"ours": verdict, "paper": None, "agreement": None}
        else:
            out[name] = {"ours": value, "paper": None, "agreement": None}
    return out


def compared_tasks(before: dict, after: dict, tasks: list[str] | None) -> list[str]:
    chosen = tasks or after.get("only_tasks") or sorted(set(before["checks"]) & set(after["checks"]))
    missing = [t for t in chosen if t not in before["checks"] or t not in after["checks"]]
    if missing:
        raise SystemExit(f"claims_changed: error: task(s) {', '.join(missing)} not judged in both files")
    return list(chosen)


def changes(before: dict, after: dict, tasks: list[str]) -> list[dict]:
    out = []
    for task in tasks:
        old, new = _flatten(before["checks"][task]), _flatten(after["checks"][task])
        for name in sorted(set(old) | set(new)):
            a, b = old.get(name, {}), new.get(name, {})
            if a.get("ours") != b.get("ours") or a.get("agreement") != b.get("agreement"):
                out.append(
                    dict(
                        task=task,
                        check=name,
                        paper=b.get("paper", a.get("paper")),
                        before=a.get("ours"),
                        after=b.get("ours"),
                        agreement_before=a.get("agreement"),
                        agreement_after=b.get("agreement"),
                    )
                )
    return out


def counts(before: dict, after: dict, tasks: list[str]) -> dict:
    """Per file: the claims read against the paper over ``tasks``, as :func:`saferl.analysis.verdicts.agreement_counts`
    (agree, disagree, undecided, total)."""
    out = {}
    for side, result in (("before", before), ("after", after)):
        claims = [c for t in tasks for c in _flatten(result["checks"][t]).values() if c["agreement"] is not None]
        out[side] = verdicts.agreement_counts(c["agreement"] for c in claims)
    return out


def row_changes(before: dict, after: dict, tasks: list[str]) -> list[dict]:
    index = {(r["env"], r["method"]): r for r in before.get("rows", [])}
    out = []
    for r in after.get("rows", []):
        old = index.get((r["env"], r["method"]))
        if r["env"] in tasks and old is not None:
            out.append(
                dict(
                    task=r["env"],
                    method=r["method"],
                    **{f"{q}_{side}": row[q] for side, row in (("before", old), ("after", r)) for q in QUANTITIES},
                )
            )
    return out


def _text(value) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return "-" if value is None else str(value)


def page(before_path: Path, after_path: Path, before: dict, after: dict, tasks: list[str]) -> str:
    changed = changes(before, after, tasks)
    total = counts(before, after, tasks)
    lines = [
        f"Checks of {after.get('target', '?')} ({after.get('scale', '?')}) on {', '.join(tasks)}: "
        f"{before_path} (commit {before.get('git_commit', '?')[:7]}) against {after_path} "
        f"(commit {after.get('git_commit', '?')[:7]}). Against the paper, before: "
        f"{verdicts.counts_sentence(total['before'])}; after: {verdicts.counts_sentence(total['after'])}; "
        f"{len(changed)} checks changed.",
        "",
        "| task | check | paper | before | after | agreement: before / after |",
        "|---|---|---|---|---|---|",
    ]
    for c in changed:
        lines.append(
            f"| {c['task']} | {c['check']} | {_text(c['paper'])} | {_text(c['before'])} | {_text(c['after'])} | "
            f"{_text(c['agreement_before'])} / {_text(c['agreement_after'])} |"
        )
    lines += ["", "| task | method | return: before / after | cost: before / after | safety: before / after |"]
    lines.append("|---|---|---|---|---|")
    for r in row_changes(before, after, tasks):
        cells = [f"{_text(r[f'{q}_before'])} / {_text(r[f'{q}_after'])}" for q in QUANTITIES]
        lines.append(f"| {r['task']} | {r['method']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--tasks", default=None, help="comma-separated tasks (default: AFTER's only_tasks)")
    parser.add_argument("--json", type=Path, default=None, help="also write the changes as JSON here")
    args = parser.parse_args(argv)
    for path in (args.before, args.after):
        if not path.is_file():
            parser.error(f"{path} is not a file (a reproduce target's results.json)")
    before, after = (json.loads(p.read_text()) for p in (args.before, args.after))
    if before.get("target") != after.get("target"):
        parser.error(f"the files judge different targets: {before.get('target')!r} and {after.get('target')!r}")
    tasks = compared_tasks(before, after, args.tasks.split(",") if args.tasks else None)
    print(page(args.before, args.after, before, after, tasks), end="")
    if args.json:
        payload = dict(
            tasks=tasks,
            counts=counts(before, after, tasks),
            changes=changes(before, after, tasks),
            rows=row_changes(before, after, tasks),
        )
        args.json.write_text(json.dumps(payload, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
