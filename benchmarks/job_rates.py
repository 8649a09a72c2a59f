"""Measured training rates of a benchmark's finished runs, and what the paper's budget would take at them.

    python benchmarks/job_rates.py runs/reproduce/ctrpo-table1-cpu [--budget 10000000] [--json OUT.json]
    python benchmarks/job_rates.py docs/results/ctrpo-table1-cpu/results.json

Reads every finished run of a target laid out as ``OUT/<task>/runs/<method>/summary.json`` (ctrpo-table1's
layout; the in-program sweeps under ``OUT/runs/`` are left out) and prints, per task, the training rate of each
method (env steps over all seeds per second of training, ``summary.json``'s ``steps_per_second``) and the wall
time one job of ``--budget`` steps per seed would take at that rate plus its measured compile.  The totals are
what docs/cluster.md extrapolates from: job-hours per method over the tasks, and for the whole benchmark.
A rate measured over a few iterations is an estimate of a 10M-step job's rate, not a measurement of it.

Given a committed ``results.json`` instead (its ``runs`` list: seeds, env steps per seed and wall seconds of each
run, once the run directories are gone), the rate is over the whole wall time, compile included, and the compile
is not added again: a lower rate than ``summary.json``'s, so the job-hours err on the long side (by about the
compile's share of the short cpu run, 10-15% on the velocity tasks, a few % on the navigation tasks).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path


def finished_rates(out: Path) -> dict[str, dict[str, dict]]:
    """task -> method directory -> {seeds, rate, compile_seconds} of every finished run under ``out``."""
    rates: dict[str, dict[str, dict]] = {}
    for path in sorted(Path(out).glob("*/runs/*/summary.json")):
        summary = json.loads(path.read_text())
        if summary.get("interrupted") or not summary.get("steps_per_second"):
            continue
        task, method = path.parts[-4], path.parts[-2]
        rates.setdefault(task, {})[method] = {
            "seeds": int(summary["seeds"]),
            "rate": float(summary["steps_per_second"]),
            "compile_seconds": float(summary.get("compile_seconds") or 0.0),
        }
    return rates


def results_rates(results: Path) -> dict[str, dict[str, dict]]:
    """task -> method directory -> {seeds, rate, compile_seconds: 0} from a results.json's ``runs`` list."""
    rates: dict[str, dict[str, dict]] = {}
    for run in json.loads(Path(results).read_text()).get("runs", []):
        parts = str(run.get("run", "")).split("/")
        if len(parts) != 3 or parts[1] != "runs" or not run.get("wall_seconds") or not run.get("env_steps"):
            continue  # an in-program sweep (runs/<name>) or a run without its measurements
        seeds = int(run["seeds"])
        rates.setdefault(parts[0], {})[parts[2]] = {
            "seeds": seeds,
            "compile_seconds": 0.0,
            "rate": seeds * float(run["env_steps"]) / float(run["wall_seconds"]),
        }
    return rates


def job_hours(run: dict, budget: int) -> float:
    """One job of ``budget`` steps per seed with the run's seeds, at the run's rate, plus its compile, in hours."""
    return (run["seeds"] * budget / run["rate"] + run["compile_seconds"]) / 3600.0


def table(rates: dict[str, dict[str, dict]], budget: int) -> tuple[list[dict], dict]:
    rows = []
    for task, methods in rates.items():
        per_method = [run["rate"] for run in methods.values()]
        hours = {method: job_hours(run, budget) for method, run in methods.items()}
        rows.append(
            {
                "task": task,
                "methods": len(methods),
                "median_rate": statistics.median(per_method),
                "min_rate": min(per_method),
                "max_rate": max(per_method),
                "median_job_hours": statistics.median(hours.values()),
                "job_hours": sum(hours.values()),
            }
        )
    totals = {
        "job_hours": sum(row["job_hours"] for row in rows),
        "runs": sum(row["methods"] for row in rows),
        "median_job_hours_per_method": sum(row["median_job_hours"] for row in rows),
    }
    return rows, totals


def render(rows: list[dict], totals: dict, budget: int) -> str:
    lines = [
        f"| task | methods | training rate, median (min-max), env-steps/s | one job of {budget / 1e6:g}M steps "
        "per seed, median | all its methods |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['task']} | {row['methods']} | {row['median_rate']:,.0f} ({row['min_rate']:,.0f}-"
            f"{row['max_rate']:,.0f}) | {row['median_job_hours']:.1f} h | {row['job_hours']:.1f} h |"
        )
    lines.append(
        f"\n{totals['runs']} runs; per method over the tasks (medians) "
        f"{totals['median_job_hours_per_method']:.1f} job-hours; all of them {totals['job_hours']:.0f} job-hours."
    )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="a reproduce --out directory, or a committed results.json")
    parser.add_argument("--budget", type=int, default=10_000_000, help="steps per seed (default: the paper's 10M)")
    parser.add_argument("--json", type=Path, help="also write the rows and totals here")
    args = parser.parse_args(argv)
    if args.budget <= 0:
        print(f"job_rates: --budget {args.budget} must be a positive number of steps", file=sys.stderr)
        return 2
    if args.out.is_file():
        try:
            rates = results_rates(args.out)
        except (ValueError, UnicodeDecodeError):
            print(f"job_rates: {args.out} is not a results.json (JSON with a runs list)", file=sys.stderr)
            return 2
    else:
        rates = finished_rates(args.out)
    if not rates:
        print(
            f"job_rates: no finished run in {args.out} (expected OUT/<task>/runs/<method>/summary.json, or a "
            "results.json whose runs are <task>/runs/<method>)",
            file=sys.stderr,
        )
        return 2
    rows, totals = table(rates, args.budget)
    print(render(rows, totals, args.budget))
    if args.json:
        args.json.write_text(json.dumps({"budget": args.budget, "rows": rows, "totals": totals}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
