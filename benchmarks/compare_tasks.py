"""The task-by-task throughput table of ``benchmarks/omnisafe_tasks.sh``.

    python benchmarks/compare_tasks.py benchmarks/results/tasks

Per task: OmniSafe CPO's env-steps/s and peak RSS, saferl CPO's best training configuration (env-steps/s over
all seeds, peak RSS of the bench process), the ratio and the acceptance line it is held to (20x on
SafetyHopperVelocity, 100x on the navigation tasks), and saferl's environment-only rate; a velocity task benched
with MJX physics as well (``*_mjx.json``) gets a second row.  Prints Markdown.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

#: the least ratio over OmniSafe CPO each task is held to (the acceptance lines of the speed goal)
ACCEPTANCE = {
    "SafetyHopperVelocity": 20.0,
    "PointGoal1": 100.0,
    "PointPush1": 100.0,
    "CarButton1": 100.0,
    "RacecarCircle1": 100.0,
}
ORDER = [
    "SafetyHopperVelocity",
    "PointGoal1",
    "PointPush1",
    "CarButton1",
    "RacecarCircle1",
    "SafetyAntVelocity",
    "SafetyHalfCheetahVelocity",
    "SafetyHumanoidVelocity",
]


def omnisafe_line(path: Path) -> dict | None:
    if not path.is_file():
        return None
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.startswith("{")]
    return lines[-1] if lines else None


def table(results: Path) -> str:
    header = [
        "task",
        "OmniSafe CPO env-steps/s",
        "OmniSafe peak RSS (MB)",
        "saferl CPO env-steps/s (config)",
        "saferl peak RSS (MB)",
        "ratio",
        "acceptance",
        "saferl env only, env-steps/s (config)",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    rows = [(name, name, f"saferl_cpo_{name}.json") for name in ORDER]
    # a velocity task benched with its other physics backend (omnisafe_tasks.sh: --set env_params.physics=mjx)
    rows += [(name, f"{name} (MJX physics)", f"saferl_cpo_{name}_mjx.json") for name in ORDER]
    for name, label, filename in rows:
        path = results / filename
        if not path.is_file():
            continue
        bench = json.loads(path.read_text())
        best = max(bench["training"], key=lambda r: r["steps_per_second"])
        env_best = max(bench["env_only"], key=lambda r: r["steps_per_second"])
        omni = omnisafe_line(results / f"omnisafe_CPO_{name}.json")
        ratio = best["steps_per_second"] / omni["steps_per_second"] if omni else None
        need = ACCEPTANCE.get(name)
        verdict = (
            "-" if need is None or ratio is None else (f">= {need:.0f}x: " + ("met" if ratio >= need else "not met"))
        )
        lines.append(
            "| "
            + " | ".join(
                [
                    label,
                    f"{omni['steps_per_second']:,.0f}" if omni else "-",
                    f"{omni['peak_rss_mb']:,.0f}" if omni else "-",
                    f"{best['steps_per_second']:,.0f} ({best['num_envs']} envs x {best['seeds']} seeds)",
                    f"{bench['peak_rss_mb']:,.0f}",
                    f"x{ratio:,.1f}" if ratio else "-",
                    verdict,
                    f"{env_best['steps_per_second']:,.0f} ({env_best['num_envs']} x {env_best['seeds']})",
                ]
            )
            + " |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(Path(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results/tasks")))
