"""In-program sweeps: a grid of traced values as one more vmapped axis beside the seeds.

A config's ``sweep`` section maps a dotted key to the values it takes::

    sweep: {constraint.limit: [10, 25, 50], hparams.beta: [0.1, 1.0]}

(``saferl train ... --sweep constraint.limit=10,25,50 --sweep hparams.beta=0.1,1``).  The grid is the
Cartesian product, in the order the keys are given, the last key varying fastest; every grid point
trains ``seeds`` seeds, and the whole grid is one compiled program: the trainer runs ``points x seeds``
runners vmapped, runner ``g * seeds + s`` being seed ``s`` of point ``g``, and seed ``s`` of every
point starts from the same key (common random numbers across the grid), so a point's runners train what a
separate run with that point's values trains: the same computation, equal to float tolerance (vmapping more
runners may reorder XLA's reductions, and a policy that amplifies differences of 1e-7 over training is then equal
in distribution, not bit for bit; tests/training/test_in_program_sweep.py and test_sweep_ctrpo_recovery.py).

What can be swept: the numbers that reach the compiled program as values, not as its shape or control
flow.

* ``constraint.limit`` (an expected-cost constraint with one limit), ``constraint.rho`` and
  ``constraint.epsilon`` (a VaR constraint): they live in ``AgentState.constraint``;
* ``hparams.NAME`` for a real-valued hyper-parameter that the algorithm reads inside its traced
  update or init (learning rates, clip ratios, entropy and Lagrange rates, C-TRPO's beta and
  hysteresis, ...).  Whole-number, true/false and choice hyper-parameters set loop lengths, shapes and
  branches and are refused.  A real one that the algorithm turns into a Python number (a branch on it,
  ``float(...)``) or never reads inside the program (a wrapper built once from the config) is refused
  when the program is traced, before anything is written (:func:`saferl.training.trainer.Trainer.check_sweep`).

``config[section][key]`` of a swept config holds the grid's first value; ``config_at(cfg, point)`` is
the config of the one run a grid point trains (to float tolerance).
"""

from __future__ import annotations

import copy
import itertools
import math

import yaml

#: constraint keys that are traced values, by constraint type
CONSTRAINT_KEYS = {"expected": ("limit",), "var": ("rho", "epsilon")}
#: the sweep coordinates' column prefix in progress.csv
POINT_COLUMN = "sweep_point"


class SweepError(ValueError):
    """A bad ``sweep`` entry; the message names it and what is allowed."""


def parse_sweep_args(items: list[str] | None) -> dict:
    """``["constraint.limit=10,25,50", "hparams.beta=0.1,1"]`` -> ``{"constraint.limit": [10.0, 25.0, 50.0], ...}``."""
    out: dict = {}
    for item in items or []:
        if "=" not in item:
            raise SweepError(f"malformed --sweep {item!r}: expected KEY=V1,V2,..., e.g. constraint.limit=10,25,50")
        key, raw = (part.strip() for part in item.split("=", 1))
        if key in out:
            raise SweepError(f"--sweep {key} given twice; list all its values in one: --sweep {key}=V1,V2,...")
        values = []
        for text in raw.split(","):
            try:
                value = yaml.safe_load(text) if text.strip() else None
            except yaml.YAMLError:
                value = None
            values.append(_number(value, text))
        out[key] = values
    return out


def _number(value, shown) -> float | None:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def validate(sweep, resolved: dict, algo_cls) -> dict:
    """The ``sweep`` section checked against a resolved config (keys, types, values): ``{key: [floats]}``.
    Each value is checked by resolving the config at that value (:func:`saferl.training.config.resolve`), so a value
    out of its allowed range is named the way ``--set`` names it."""
    if sweep in (None, {}):
        return {}
    if not isinstance(sweep, dict):
        raise SweepError(f"sweep must be a mapping KEY: [values], got {sweep!r}")
    kind = resolved["constraint"]["type"]
    out = {}
    for key, values in sweep.items():
        section, _, name = str(key).partition(".")
        if section == "constraint":
            allowed = CONSTRAINT_KEYS[kind]
            if name not in allowed:
                raise SweepError(
                    f"sweep {key}: a {kind!r} constraint sweeps {', '.join('constraint.' + k for k in allowed)}"
                    f" (the others are static: they shape the program)"
                )
            if name == "limit" and isinstance(resolved["constraint"].get("limit"), list):
                raise SweepError(f"sweep {key}: a vector of limits cannot be swept; sweep a single limit")
        elif section == "hparams":
            declared = algo_cls.defaults.get(name)
            if declared is None:
                raise SweepError(
                    f"sweep {key}: {algo_cls.name} has no hyper-parameter {name!r}; "
                    f"allowed: {', '.join(sorted(algo_cls.defaults))}"
                )
            if declared.kind is not float:
                what = {int: "a whole number", bool: "true/false", str: "a choice"}[declared.kind]
                raise SweepError(
                    f"sweep {key}: {what} is static (it sets the program's loop lengths, shapes or "
                    f"branches) and cannot be swept inside one program; run one job per value "
                    f"(saferl sweep GRID.yaml)"
                )
        else:
            raise SweepError(
                f"sweep {key}: only constraint.* and hparams.* values are swept inside one program; "
                f"run one job per value for the others (saferl sweep GRID.yaml)"
            )
        if not isinstance(values, (list, tuple)) or not values:
            raise SweepError(f"sweep {key} must list one or more numbers, got {values!r}")
        numbers = [_number(v, v) for v in values]
        bad = [v for v, n in zip(values, numbers) if n is None]
        if bad:
            raise SweepError(f"sweep {key}: {bad[0]!r} is not a finite number")
        if len(set(numbers)) != len(numbers):
            raise SweepError(f"sweep {key} lists a value twice: {values!r}")
        out[str(key)] = numbers
    return out


def points(cfg: dict) -> list[dict]:
    """The grid points of a resolved config, in order: ``[{key: value}, ...]``; ``[{}]`` without a sweep."""
    sweep = cfg.get("sweep") or {}
    keys = list(sweep)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(sweep[k] for k in keys))]


def set_value(cfg: dict, key: str, value: float) -> dict:
    """A copy of ``cfg`` with the dotted ``key`` set to ``value``."""
    out = copy.deepcopy(cfg)
    section, _, name = key.partition(".")
    out[section] = {**out.get(section, {}), name: value}
    return out


def config_at(cfg: dict, point: dict) -> dict:
    """The config of the single run that grid ``point`` trains, to float tolerance (no sweep)."""
    out = {k: v for k, v in copy.deepcopy(cfg).items() if k != "sweep"}
    for key, value in point.items():
        out = set_value(out, key, value)
    return out


def label(point: dict) -> str:
    """``"limit=10, beta=0.1"`` (the last part of each key; ``"-"`` for no sweep)."""
    if not point:
        return "-"
    return ", ".join(f"{k.rpartition('.')[2]}={v:g}" for k, v in point.items())


def hparams_of(point: dict) -> dict:
    return {k.partition(".")[2]: v for k, v in point.items() if k.startswith("hparams.")}


def constraint_of(point: dict) -> dict:
    return {k.partition(".")[2]: v for k, v in point.items() if k.startswith("constraint.")}
