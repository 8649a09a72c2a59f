"""Hyper-parameters declared once: each with its default, type, allowed values and meaning.

An algorithm declares its hyper-parameters as a dict of :class:`Param` (``Algorithm.defaults``)::

    defaults = declare(
        PPO.defaults,                                    # inherit a family's declarations
        kappa=real(20.0, "(0, inf)", "penalty factor"),  # a new one
        target_kl=0.01,                                  # a plain value: a new default, same declaration
    )

:func:`resolve` checks a user's overrides against the declarations (unknown names, types,
ranges, choices) and returns the plain ``{name: value}`` dict the algorithm reads as
``self.hp``; ``saferl.training.config.resolve`` calls it before anything is written, so a bad value
is a one-line error naming the key, the value and what is allowed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Param:
    """One hyper-parameter: ``kind`` is ``float``, ``int``, ``bool`` or ``str``; numbers may have a
    range (``low``/``high``, each inclusive unless ``*_open``), strings a tuple of ``choices``."""

    default: Any
    kind: type
    doc: str = ""
    low: float = -math.inf
    high: float = math.inf
    low_open: bool = True
    high_open: bool = True
    choices: tuple = ()

    def allowed(self) -> str:
        if self.kind is bool:
            return "true or false"
        if self.kind is str:
            return "one of " + ", ".join(self.choices)
        prefix = "a whole number " if self.kind is int else ""
        if self.low == -math.inf and self.high == math.inf:
            return prefix.strip() or "a number"
        if self.high == math.inf:
            return f"{prefix}{'>' if self.low_open else '>='} {_bound(self.low)}"
        if self.low == -math.inf:
            return f"{prefix}{'<' if self.high_open else '<='} {_bound(self.high)}"
        return (
            f"{prefix}in {'(' if self.low_open else '['}{_bound(self.low)}, {_bound(self.high)}"
            f"{')' if self.high_open else ']'}"
        )

    def check(self, name: str, value: Any) -> Any:
        """``value`` converted to this parameter's type, or ``ValueError`` naming what is allowed."""

        def bad():
            return ValueError(f"hparams.{name} must be {self.allowed()}, got {value!r}")

        if self.kind is bool:
            if not isinstance(value, bool):
                raise bad()
            return value
        if self.kind is str:
            if value not in self.choices:
                raise bad()
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            what = self.allowed() if self.kind is int else "a number " + self.allowed()
            raise ValueError(f"hparams.{name} must be {what.replace('a number a number', 'a number')}, got {value!r}")
        if not math.isfinite(value) or (self.kind is int and not float(value).is_integer()):
            raise bad()
        number = self.kind(value)
        below = number <= self.low if self.low_open else number < self.low
        above = number >= self.high if self.high_open else number > self.high
        if below or above:
            raise bad()
        return number


def _bound(x: float) -> str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:g}"


def _interval(text: str) -> dict:
    """``"(0, 1]"`` -> the range fields of :class:`Param`."""
    text = text.strip()
    if text[0] not in "([" or text[-1] not in ")]" or "," not in text:
        raise ValueError(f"bad interval {text!r}: write it as (a, b], [a, inf), ...")
    low, high = (float(part) for part in text[1:-1].split(","))
    return {"low": low, "high": high, "low_open": text[0] == "(", "high_open": text[-1] == ")"}


def real(default: float, interval: str = "(-inf, inf)", doc: str = "") -> Param:
    return Param(float(default), float, doc, **_interval(interval))


def integer(default: int, interval: str = "[1, inf)", doc: str = "") -> Param:
    return Param(int(default), int, doc, **_interval(interval))


def flag(default: bool, doc: str = "") -> Param:
    return Param(bool(default), bool, doc)


def choice(default: str, choices: tuple[str, ...], doc: str = "") -> Param:
    if default not in choices:
        raise ValueError(f"default {default!r} is not one of {choices}")
    return Param(default, str, doc, choices=tuple(choices))


def declare(*bases: dict, **entries) -> dict[str, Param]:
    """The declarations of ``bases`` (later ones win) with ``entries`` added: a :class:`Param` declares
    (or re-declares) a hyper-parameter, a plain value changes an inherited one's default."""
    out: dict[str, Param] = {}
    for base in bases:
        out.update(base)
    for name, entry in entries.items():
        if isinstance(entry, Param):
            out[name] = entry
        elif name not in out:
            raise KeyError(f"{name!r} is not declared in the bases; declare it with real(), integer(), ...")
        else:
            out[name] = replace(out[name], default=out[name].check(name, entry))
    return out


def resolve(declared: dict[str, Param], overrides: dict | None, owner: str) -> dict:
    """Defaults with ``overrides`` applied and checked; ``owner`` names the algorithm in messages."""
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(declared))
    if unknown:
        raise ValueError(f"unknown hyper-parameter {unknown[0]!r} for {owner}; allowed: {', '.join(sorted(declared))}")
    return {
        name: param.check(name, overrides[name]) if name in overrides else param.default
        for name, param in declared.items()
    }


def describe(declared: dict[str, Param]) -> list[str]:
    """One line per hyper-parameter: name, default, what is allowed and its meaning."""
    return [
        f"{name} = {param.default!r}  ({param.allowed()}){'  ' + param.doc if param.doc else ''}"
        for name, param in declared.items()
    ]
