"""Judge committed results again by today's claims vocabulary, without retraining, and list what changed.

    python benchmarks/rejudge.py [RESULTS.json | DIR ...] [--write] [--report PATH]

A target's checks are functions of its rows and of the runs it used (``Target.judge``,
:mod:`saferl.reproduce.framework`), so a results.json can be judged again by the current rules of
:mod:`saferl.analysis.verdicts` from what it records. The rows are not recomputed: they are the tabulation of the
commit in its ``git_commit``. Default paths: every ``docs/results/*/results.json`` and ``results-*.json``.

Prints, per file, every check whose value changed (before -> after, one line per leaf: a claim's ``ours``,
``paper`` and ``agreement``, a method's safety verdict, a count) and the checks added or removed. ``--write``
replaces each file's ``checks`` with the new ones and records ``checks_judged_by`` (the commit of the rules that
judged them; ``git_commit`` stays the tabulation's). ``--report PATH`` writes the same list as Markdown.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import saferl.reproduce  # noqa: F401  (declares every target)
from saferl.foundation.atomic_files import write_json_atomic
from saferl.reproduce import framework
from saferl.training import provenance

ROOT = Path(__file__).resolve().parents[1]


#: checks renamed with the claims vocabulary, old name -> new: a claim whose meaning changed has a new name
RENAMED = {
    "safe_no_later": "safe_sooner",
    "no_later": "sooner",
    "C-TRPO's regret overlaps PCPO's and is above P3O's": "C-TRPO's regret like PCPO's and above P3O's",
    "Fig. 10: hysteresis lowers C-TRPO's return (IQM)": "Fig. 10: hysteresis lowers C-TRPO's return",
    "return at the largest sigma below the smallest sigma's (means)": "return at the largest sigma below the "
    "smallest sigma's",
}


def leaves(value, prefix: str = "") -> dict[str, object]:
    """A nested check as ``{"a / b / c": leaf}`` (lists are leaves), old names as :data:`RENAMED` gives them and a
    boolean ``agree`` (the rule before the three-way agreement) as ``agreement``: agree / disagree."""
    if isinstance(value, dict):
        out = {}
        for key, inner in value.items():
            if key == "agree" and isinstance(inner, bool):
                key, inner = "agreement", "agree" if inner else "disagree"
            key = RENAMED.get(key, key)
            out.update(leaves(inner, f"{prefix} / {key}" if prefix else str(key)))
        return out
    return {prefix: value}


def _as_json(value):
    """``value`` as results.json stores it (numpy scalars as numbers, tuples as lists)."""
    return json.loads(json.dumps(value, default=lambda v: v.item() if hasattr(v, "item") else str(v)))


def rejudge(result: dict) -> dict:
    """The checks of a results.json's rows and runs under today's rules."""
    target = framework.get(result["target"])
    return _as_json(target.judge(result["rows"], result.get("runs") or []))


def same(a, b) -> bool:
    """Equal, floats to 1e-9 relative: a check recomputed by another numpy or scipy build differs in the last bits."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def changes(before: dict, after: dict) -> list[tuple[str, object, object]]:
    """``(check, before, after)`` for every leaf that differs, in ``after``'s order then removed ones; the
    ``budget`` check, new with the vocabulary, is left out (:func:`budget_lines` reports it)."""
    old = {k: v for k, v in leaves(before).items() if not k.startswith("budget / ")}
    new = {k: v for k, v in leaves(after).items() if not k.startswith("budget / ")}
    missing = object()
    out = [(name, old.get(name, missing), value) for name, value in new.items()]
    out = [(name, a, b) for name, a, b in out if not same(a, b)]
    out += [(name, value, missing) for name, value in old.items() if name not in new]
    return [(name, None if a is missing else a, None if b is missing else b) for name, a, b in out]


def budget_lines(checks: dict) -> list[str]:
    """The ``budget`` check as one sentence per task."""
    budget = checks.get("budget") or {}
    return [f"{task}: {b['sentence']}" for task, b in budget.items() if isinstance(b, dict) and b.get("sentence")]


def default_paths() -> list[Path]:
    results = ROOT / "docs" / "results"
    return sorted([*results.glob("*/results.json"), *results.glob("*/results-*.json")])


def resolve(paths: list[str]) -> list[Path]:
    out = []
    for raw in paths:
        path = Path(raw)
        path = path / "results.json" if path.is_dir() else path
        if not path.is_file():
            raise SystemExit(f"rejudge: error: {raw} is neither a results.json nor a directory holding one")
        out.append(path)
    return out


def _text(value) -> str:
    return "-" if value is None else json.dumps(value) if not isinstance(value, str) else value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="results.json files or directories (default: docs/results/*)")
    parser.add_argument("--write", action="store_true", help="replace each file's checks with the new ones")
    parser.add_argument("--report", type=Path, help="also write the changes as Markdown here")
    args = parser.parse_args(argv)
    paths = resolve(args.paths) if args.paths else default_paths()
    commit = provenance.git_commit()
    lines = [
        f"# Verdicts judged again by the claims vocabulary (saferl.analysis.verdicts, commit {(commit or '?')[:7]})",
        "",
        "Each committed results.json's checks recomputed from its rows and runs (`python benchmarks/rejudge.py`); "
        "the rows are unchanged, tabulated by the commit each file records. Every leaf that changed, before -> after "
        "(`-`: absent).",
    ]
    for path in paths:
        result = json.loads(path.read_text())
        try:
            after = rejudge(result)
        except ValueError as error:  # a target no longer declared
            print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: skipped ({error})")
            continue
        changed = changes(result.get("checks") or {}, after)
        name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        print(f"{name}: {len(changed)} changed")
        lines += ["", f"## {name} ({result['target']}, {result.get('scale')})", ""]
        budgets = budget_lines(after)
        if budgets:
            lines += ["Budget: " + "; ".join(budgets) + ".", ""]
        if not changed:
            lines.append("No verdict changed.")
        else:
            lines += ["| check | before | after |", "|---|---|---|"]
            lines += [f"| {check} | {_text(a)} | {_text(b)} |" for check, a, b in changed]
        for check, a, b in changed:
            print(f"  {check}: {_text(a)} -> {_text(b)}")
        if args.write and (changed or "checks_judged_by" not in result):
            result["checks"] = after
            result["checks_judged_by"] = commit
            write_json_atomic(path, result)
    if args.report:
        args.report.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
