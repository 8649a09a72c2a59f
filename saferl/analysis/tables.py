"""Readable results tables: the rows of a ``results.json`` as an aligned text table.

The method column comes first; a value and its interval share one cell ("27.2 [25.1, 29.0]" for
``x``, ``x_lo``, ``x_hi``; "0.043 ± 0.005" for ``x``, ``x_se``), the paper's number (``paper_x``)
sits in the column right after ours, and bookkeeping fields (algorithm name, seeds, wall time, ...)
are left to results.json.  ``saferl reproduce`` prints it at the end of a target and ``saferl show
DIR`` prints it again for any results.json.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

#: row fields a reader of the table does not need (they stay in results.json)
BOOKKEEPING = {
    "algo",
    "label",
    "default_config",
    "seeds",
    "env_steps_per_seed",
    "wall_seconds",
    "steps_per_second",
    "cost_limit",
    "cost_scale",
    "satisfied",
}
#: columns shown first, in this order, when present
LEADING = ("method", "env")


def format_number(value) -> str:
    """Three significant digits without exponent for everyday magnitudes; integers and strings as they are."""
    if isinstance(value, bool) or value is None:
        return "-" if value is None else str(value)
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    if not isinstance(value, float):
        return str(value)
    if math.isnan(value):
        return "nan"
    if value == 0.0 or math.isinf(value):
        return f"{value:g}"
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e6:
        decimals = max(0, 2 - math.floor(math.log10(magnitude)))
        text = f"{value:,.{decimals}f}"
        return text
    return f"{value:.3g}"


def _merged(row: dict, key: str) -> str:
    value = row.get(key)
    lo, hi, se = row.get(f"{key}_lo"), row.get(f"{key}_hi"), row.get(f"{key}_se")
    text = format_number(value)
    if lo is not None and hi is not None:
        return f"{text} [{format_number(lo)}, {format_number(hi)}]"
    if se is not None and not (isinstance(se, float) and math.isnan(se)):
        return f"{text} ± {format_number(se)}"
    return text


def table_columns(rows: list[dict]) -> list[str]:
    """The columns of :func:`render_rows`: leading ones, then each value column once (its interval and SE fields
    merged into it), each ``paper_x`` right after ``x``."""
    keys: list[str] = []
    for row in rows:
        for key in row:
            if key not in keys:
                keys.append(key)
    present = set(keys)
    suffixed = {k for k in keys for s in ("_lo", "_hi", "_se") if k.endswith(s) and k[: -len(s)] in present}
    # "label" is the row's configuration name where a "method" column names the row; elsewhere it is the name
    hidden = BOOKKEEPING if "method" in present else BOOKKEEPING - {"label"}
    values = [k for k in keys if k not in suffixed and k not in hidden]
    ours = [k for k in values if not k.startswith("paper_")]
    ordered = [k for k in LEADING if k in ours] + [k for k in ours if k not in LEADING]
    out: list[str] = []
    for key in ordered:
        out.append(key)
        if f"paper_{key}" in values:
            out.append(f"paper_{key}")
    out += [k for k in values if k.startswith("paper_") and k not in out]
    return out


def render_rows(rows: list[dict]) -> str:
    """An aligned text table of ``rows`` (first column left-aligned, the others right-aligned)."""
    if not rows:
        return "(no rows)"
    columns = table_columns(rows)
    header = [c.replace("paper_", "paper ") for c in columns]
    body = [[_merged(row, c) if c in row else "" for c in columns] for row in rows]
    widths = [max(len(header[i]), *(len(r[i]) for r in body)) for i in range(len(columns))]

    def line(cells):
        return "  ".join(cell.ljust(widths[0]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(cells))

    return "\n".join([line(header), "  ".join("-" * w for w in widths), *(line(r) for r in body)])


def render_checks(checks: dict) -> str:
    """One line per check; nested checks as compact JSON; the ``budget`` check as its sentences, first (every
    verdict below is judged at that budget)."""
    lines = []
    budget = checks.get("budget")
    if isinstance(budget, dict):
        sentences = [f"{task} {b['sentence']}" for task, b in budget.items() if isinstance(b, dict) and "sentence" in b]
        lines.append("budget: " + "; ".join(sentences) + (f" ({budget['source']})" if budget.get("source") else ""))
    for name, value in checks.items():
        if name == "budget" and isinstance(budget, dict):
            continue
        text = (
            json.dumps(value, separators=(", ", ": "), default=str)
            if isinstance(value, (dict, list))
            else (format_number(value))
        )
        lines.append(f"check {name}: {text}")
    return "\n".join(lines)


def render_result(result: dict) -> str:
    """The table, the checks and where the runs came from, as ``saferl reproduce`` and ``saferl show`` print them."""
    parts = [
        f"{result.get('target', '?')} at scale {result.get('scale', '?')}"
        + (f" (code {result['git_commit'][:12]})" if result.get("git_commit") else ""),
        render_rows(result.get("rows", [])),
    ]
    if result.get("checks"):
        parts.append(render_checks(result["checks"]))
        if result.get("retabulated_by"):
            parts.append(
                f"rows and checks tabulated again by code {result['retabulated_by'][:12]} from the kept runs in "
                f"{result.get('retabulated_from', '?')} (benchmarks/retabulate_carried.py)"
            )
        elif result.get("checks_judged_by"):
            parts.append(f"checks judged by code {result['checks_judged_by'][:12]} (benchmarks/rejudge.py)")
    used = result.get("runs") or []
    if used:
        reused = sum(bool(r.get("reused")) for r in used)
        changed = [r["run"] for r in used if r.get("code_changes_since_training")]
        line = (
            f"runs: {len(used)} ({len(used) - reused} trained now, {reused} reused), "
            f"training time {result.get('runs_training_seconds', 0.0):.0f}s"
        )
        if changed:
            line += f"; trained by other code than the table's: {', '.join(changed)}"
        parts.append(line)
    if result.get("outcome"):
        parts.append(f"outcome: {result['outcome']}")
    if result.get("renders"):
        parts.append(f"rendered episodes: {', '.join(result['renders'])}")
    settings = result.get("settings") or {}
    if isinstance(settings, dict) and settings.get("paper"):
        parts.append(f"paper: {settings['paper']}")
    return "\n".join(parts)


def load_result(path: str | Path) -> dict:
    """results.json at ``path`` (a file or a directory holding one); ValueError with a one-line reason otherwise."""
    path = Path(path)
    file = path / "results.json" if path.is_dir() else path
    if not file.is_file():
        raise ValueError(f"{str(path)!r} holds no results.json")
    try:
        result = json.loads(file.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"{str(file)!r} is not valid JSON ({err.msg}, line {err.lineno})") from None
    if not isinstance(result, dict) or not isinstance(result.get("rows"), list):
        raise ValueError(f"{str(file)!r} is not a saferl results.json (no 'rows' list)")
    return result
