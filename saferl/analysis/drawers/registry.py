"""What a drawer receives and returns (:class:`EpisodeView`, :class:`Drawing`) and the registry of drawers
(:func:`register_drawer`, :func:`drawer_for`); the package docstring says how the drawers are found."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, NamedTuple

import numpy as np


@dataclasses.dataclass(frozen=True)
class EpisodeView:
    """An episode as a drawer sees it (numpy throughout)."""

    env: Any  # the innermost environment (wrappers removed)
    params: Any  # its parameters
    states: Any  # its states, stacked: every leaf has a leading axis of num_states
    costly: np.ndarray  # (num_states,) bool: the step into state t had a positive cost (t = 0: False)
    axes_size: tuple[int, int]  # (width, height) of the drawing area in pixels

    @property
    def num_states(self) -> int:
        return int(self.costly.shape[0])


class Drawing(NamedTuple):
    extent: tuple[float, float, float, float]  # (xmin, xmax, ymin, ymax) the view must show
    update: Callable[[int], None]  # move the artists to state t
    close: Callable[[], None] | None = None  # release what the drawer holds (a GL context)


class DrawerEntry(NamedTuple):
    name: str  # the environment's registered name, shown in titles and error messages
    draw: Callable[[Any, EpisodeView], Drawing]
    steps_per_second: Callable[[Any, Any], float]  # (env, params) -> the environment's control rate
    highlight_costs: bool = True  # the title's cost counter takes the cost colour on costly steps
    preflight: Callable[[], None] | None = None  # raises when the drawer cannot work here


#: environment class (or class name) -> its drawer
DRAWERS: dict[type | str, DrawerEntry] = {}


def register_drawer(
    env_class: type | str,
    name: str,
    steps_per_second: Callable[[Any, Any], float],
    *,
    highlight_costs: bool = True,
    preflight: Callable[[], None] | None = None,
):
    """Decorator: ``draw`` renders ``env_class`` (a class, or a class name) and its subclasses
    without a drawer of their own; ``name`` is the one shown in titles and in :func:`supported`."""

    def deco(draw):
        if env_class in DRAWERS:
            raise ValueError(f"a drawer for {env_class!r} is registered twice")
        DRAWERS[env_class] = DrawerEntry(name, draw, steps_per_second, highlight_costs, preflight)
        return draw

    return deco


def supported() -> list[str]:
    """Registered names of the environments that can be rendered."""
    return sorted(entry.name for entry in DRAWERS.values())


def drawer_for(env) -> DrawerEntry:
    """The drawer of ``env`` (wrappers are looked through), or a one-line ValueError."""
    for klass in type(env.unwrapped).__mro__:
        for key in (klass, klass.__name__):
            if key in DRAWERS:
                return DRAWERS[key]
    raise ValueError(
        f"cannot render environment {env.unwrapped.name!r}: no drawer for it; supported: {', '.join(supported())}"
    )
