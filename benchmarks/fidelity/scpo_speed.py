"""SCPO's speed acceptance alone (at least 50x): Stable-Baselines3 PPO on the original SafetyBallRun-v0 against
saferl SCPO on SafetyBallRun (1.4.0's episode length and substep), side by side in one run, A B A B.

    python benchmarks/fidelity/scpo_speed.py --out docs/results/fidelity/scpo_speed.json [--rounds 2]

Run from the repository root with the main venv's Python; the original side runs in benchmarks/fidelity/.venv
(``make -C benchmarks/fidelity venv``). Each round runs SB3 PPO (``run_original.ppo_speed``: 1 env, 1 torch
thread, 20,480 steps) then saferl SCPO with 1 and 4 seeds (``run_saferl.scpo_training``: ``saferl train``,
compile excluded from ``steps_per_second`` and included in ``steps_per_second_with_compile``), so every ratio
is taken between neighbouring measurements.  ``make fidelity`` measures the same inside its full run; this is
the short version for a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import run_saferl  # noqa: E402


def sb3_ppo(steps: int, threads: int) -> dict:
    python = HERE / ".venv" / "bin" / "python"
    if not python.is_file():
        raise SystemExit(f"no fidelity venv at {python.parent.parent}: run make -C benchmarks/fidelity venv")
    code = (
        f"import json, sys; sys.path.insert(0, {str(HERE)!r}); import run_original; "
        f"print(json.dumps(run_original.ppo_speed({steps}, {threads})))"
    )
    out = subprocess.run(
        [str(python), "-W", "ignore", "-c", code],
        check=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": str(threads)},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--ppo-steps", type=int, default=20480)
    parser.add_argument("--scpo-steps", type=int, default=163840, help="per seed (5 iterations of 16 x 2048)")
    parser.add_argument("--run-root", type=Path, default=HERE / "runs")
    args = parser.parse_args(argv)
    rounds = []
    for r in range(args.rounds):
        ppo = sb3_ppo(args.ppo_steps, 1)
        print(f"round {r}: SB3 PPO {ppo['steps_per_second']:,.0f} env-steps/s", flush=True)
        scpo = [run_saferl.scpo_training(seeds, args.scpo_steps, args.run_root) for seeds in (1, 4)]
        for s in scpo:
            print(
                f"round {r}: saferl SCPO {s['seeds']} seed(s) {s['steps_per_second']:,.0f} env-steps/s "
                f"(x{s['steps_per_second'] / ppo['steps_per_second']:.1f}; with compile "
                f"{s['steps_per_second_with_compile']:,.0f}, "
                f"x{s['steps_per_second_with_compile'] / ppo['steps_per_second']:.1f})",
                flush=True,
            )
        rounds.append(
            {
                "sb3_ppo": ppo,
                "scpo": scpo,
                "ratios": {str(s["seeds"]): s["steps_per_second"] / ppo["steps_per_second"] for s in scpo},
            }
        )
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": platform.platform(),
        "nproc": os.cpu_count(),
        "load_average_1_5_15min": list(os.getloadavg()),
        "rounds": rounds,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=1))
    tmp.replace(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
