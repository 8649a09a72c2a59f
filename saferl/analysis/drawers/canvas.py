"""The colours of the rendered scenes (:data:`COLORS`) and the pieces the 2-D drawers share: discs, the agent
with its trail, moving objects, extents, and the control rate of a task with a physics time step."""

from __future__ import annotations

import math

import numpy as np
from matplotlib import patches

from saferl.analysis.drawers.registry import EpisodeView

COLORS = {
    "background": "#f6f6f1",
    "text": "#222222",
    "cost": "#d62728",  # the robot on a costly step, the trail's cost marks, the cost counter
    "trail": "#8c8c8c",
    "agent": "#f28e2b",  # robot, ball, cart, IcyLake's agent
    "heading": "#222222",
    "arena": "#9a9a92",
    "wall": "#4d4d4d",
    "hazard": "#4f6bed",  # PointGoal1 hazards, SafetyBallReach puddles
    "goal": "#2ca02c",
    "vase": "#17becf",
    "pillar": "#8080ff",
    "push box": "#e6c229",
    "apple": "#2ca02c",
    "bomb": "#8e44ad",
    "box": "#a0522d",
    "unsafe": "#f6d3cf",  # regions where being costs (ball Run, Circle)
    "safe": "#dcefd8",  # CartSafe's |x| <= 1
    "pole": "#8c6d31",
    "frozen": "#ffffff",
    "ice": "#a6d8f0",
    "start": "#e3e3da",
}


def add_disc(ax, centre, radius, color, zorder=1, **kw):
    disc = patches.Circle(
        tuple(np.asarray(centre, float)), float(radius), facecolor=color, edgecolor="none", zorder=zorder, **kw
    )
    ax.add_patch(disc)
    return disc


class Trail:
    """The path so far as a line, with a mark at every state reached by a costly step."""

    def __init__(self, ax, positions: np.ndarray, costly: np.ndarray):
        self.positions, self.costly = np.asarray(positions, float), costly
        (self.line,) = ax.plot([], [], color=COLORS["trail"], lw=1.2, zorder=2)
        self.marks = ax.scatter(np.zeros(0), np.zeros(0), s=10.0, color=COLORS["cost"], zorder=2.5, edgecolors="none")

    def update(self, t: int):
        done = self.positions[: t + 1]
        self.line.set_data(done[:, 0], done[:, 1])
        self.marks.set_offsets(done[self.costly[: t + 1]].reshape(-1, 2))


def extent_around(points: np.ndarray, margin: float, *boxes):
    """Bounding box of ``points`` (n, 2) grown by ``margin``, joined with ``boxes`` (x0, x1, y0, y1)."""
    x0, y0 = points.min(0) - margin
    x1, y1 = points.max(0) + margin
    for bx0, bx1, by0, by1 in boxes:
        x0, x1, y0, y1 = min(x0, bx0), max(x1, bx1), min(y0, by0), max(y1, by1)
    return float(x0), float(x1), float(y0), float(y1)


def agent(ax, view: EpisodeView, positions, radius, heading=None):
    """Agent disc (cost colour on costly steps), optional heading line, trail; returns update(t)."""
    trail = Trail(ax, positions, view.costly)
    body = add_disc(ax, positions[0], radius, COLORS["agent"], zorder=3)
    line = None
    if heading is not None:
        (line,) = ax.plot([], [], color=COLORS["heading"], lw=2.0, zorder=4, solid_capstyle="butt")

    def update(t):
        trail.update(t)
        body.set_center(tuple(positions[t]))
        body.set_facecolor(COLORS["cost"] if view.costly[t] else COLORS["agent"])
        if line is not None:
            tip = positions[t] + 1.8 * radius * np.array([math.cos(heading[t]), math.sin(heading[t])])
            line.set_data([positions[t, 0], tip[0]], [positions[t, 1], tip[1]])

    return update


def moving_discs(ax, centres: np.ndarray, radius, color, zorder=1):
    """Discs at ``centres`` (num_states, n, 2) of state t; returns (discs, update(t))."""
    discs = [add_disc(ax, c, radius, color, zorder) for c in centres[0]]

    def update(t):
        for disc, c in zip(discs, centres[t]):
            disc.set_center(tuple(c))

    return discs, update


def physics_rate(env, params) -> float:
    """Env steps per second of a task with ``timestep`` and ``frame_skip`` parameters."""
    return 1.0 / (float(params.timestep) * int(params.frame_skip))


def scalar(x) -> float:
    """A 0-d array (or number) as a Python float."""
    return float(np.asarray(x))


def square_corners(centre, yaw, half) -> np.ndarray:
    """The corners of the square of half-size ``half`` centred at ``centre``, turned by ``yaw``."""
    c, s = math.cos(yaw), math.sin(yaw)
    square = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    return np.asarray(centre, float) + square @ np.array([[c, s], [-s, c]])
