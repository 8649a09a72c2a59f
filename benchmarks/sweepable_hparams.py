"""Which real-valued hyper-parameters of each algorithm can be swept inside one program (in_program_sweep).

For every registered algorithm (on ToyReach; a VaR algorithm with its default VaR constraint) each real-valued
hyper-parameter is swept over two values (its default and a nearby allowed one) and the trainer's trace check
(:meth:`saferl.training.trainer.Trainer.check_sweep`) says whether the value reaches the program.  Prints a Markdown
table; docs/results/measurements.md records it.  Traces only, compiles nothing (a few minutes on 2 cores).

    JAX_PLATFORMS=cpu python benchmarks/sweepable_hparams.py [ALGO ...]
"""

from __future__ import annotations

import sys

from saferl import algos  # noqa: F401 -- registers every algorithm
from saferl.algos import base
from saferl.training import config as configlib
from saferl.training.trainer import Trainer

ENV = "ToyReach"
SMALL = {"num_envs": 2, "rollout_steps": 16, "total_steps": 32, "iterations_per_chunk": 1}


def nearby(cls, name):
    default = cls.defaults[name].default
    for value in (default * 0.9, default * 1.1, default + 0.1, default - 0.05, 0.5):
        if value == default:
            continue
        try:
            cls.defaults[name].check(name, value)
            return value
        except ValueError:
            continue
    return None


def survey(algo: str) -> tuple[list[str], dict[str, str]]:
    cls = base.get(algo)
    names = [n for n, p in cls.defaults.items() if p.kind is float]
    swept, refused = [], {}
    for name in names:
        value = nearby(cls, name)
        if value is None:
            refused[name] = "no second allowed value"
            continue
        user = {"algo": algo, "env": ENV, **SMALL, "sweep": {f"hparams.{name}": [cls.defaults[name].default, value]}}
        try:
            Trainer(configlib.resolve(user)).check_sweep()
            swept.append(name)
        except ValueError as err:
            text = str(err)
            refused[name] = (
                "Python number"
                if "Python number" in text
                else "not read inside the program"
                if "does not read" in text
                else text.split(": ", 1)[-1]
            )
    return swept, refused


def main(argv):
    chosen = argv or sorted(base.registered())
    print("| algorithm | swept inside one program | refused (why) |")
    print("|---|---|---|")
    for algo in chosen:
        swept, refused = survey(algo)
        why = ", ".join(f"{k} ({v})" for k, v in refused.items()) or "-"
        print(f"| {algo} | {', '.join(swept) or '-'} | {why} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
