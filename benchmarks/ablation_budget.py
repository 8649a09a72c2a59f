"""An Ant sweep ablation of the C-TRPO paper at another budget than its cpu scale: a measurement, not a table.

    python benchmarks/ablation_budget.py ctrpo-beta --steps 1600000 --out runs/reproduce/ctrpo-beta-1.6M

At ``--scale cpu`` the Ant sweeps (``ctrpo-beta``, ``ctrpo-cost-noise``) train 320k steps per runner, and the Ant's
cost never reaches the limit there (in the authors' own runs C-TRPO's first does at 0.88-1.04M steps), so they
cannot show what beta or the noise does to safety.  This runs the target's cpu scale with ``--steps`` per runner
instead, as a scale named ``cpu-<steps>`` in its results.json, so it is never mistaken for the cpu table.  It is
resumable like any target (the same command again continues the sweep run from its checkpoint).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

SWEEP_TARGETS = ("ctrpo-beta", "ctrpo-cost-noise")


def budget_scale_name(steps: int) -> str:
    return f"cpu-{steps // 1000}k"


def add_budget_scale(target, steps: int) -> str:
    """Add to ``target``'s scales (a dict, so in place) its cpu scale with ``steps`` per sweep runner; return the
    new scale's name."""
    from saferl.reproduce.ctrpo import ablations as ctrpo_ablations

    cpu = target.scales["cpu"]
    name = budget_scale_name(steps)
    wall = len(cpu["values"]) * cpu.seeds * steps / ctrpo_ablations.ANT_SWEEP_STEPS_PER_SECOND
    target.scales[name] = dataclasses.replace(
        cpu,
        steps=steps,
        wall_s=wall,
        name=name,
        note=f"{cpu['env']} {steps // 1000}k steps x {cpu.seeds} seeds "
        "per value (ablation_budget.py; not the cpu table)",
        params={**cpu.params, "sweep_steps": steps},
    )
    return name


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target")
    parser.add_argument("--steps", type=int, required=True, help="env steps per sweep runner (cpu: 320,000)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.target not in SWEEP_TARGETS:
        print(
            f"ablation_budget: target {args.target!r} is not an Ant sweep; one of {', '.join(SWEEP_TARGETS)}",
            file=sys.stderr,
        )
        return 2
    if args.steps <= 0 or args.steps % 16_000:
        print(
            f"ablation_budget: --steps {args.steps} must be a positive multiple of 16,000 (one iteration)",
            file=sys.stderr,
        )
        return 2
    from saferl.reproduce import framework

    target = framework.get(args.target)
    name = add_budget_scale(target, args.steps)
    result = framework.run(args.target, name, args.out)
    for key, value in result["checks"].items():
        print(f"check {key}: {value}")
    print(f"results: {args.out / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
