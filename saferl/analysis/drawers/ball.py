"""The ball tasks' drawers (SafetyBallRun, SafetyBallCircle, SafetyBallGather, SafetyBallReach): top-down, the
corridor, octagon or room, the regions that decide the cost, the objects, the ball and its trail."""

from __future__ import annotations

import math

import jax
import numpy as np
from matplotlib import patches

from saferl.analysis.drawers import canvas
from saferl.analysis.drawers.canvas import COLORS, add_disc, agent, extent_around, moving_discs, physics_rate, scalar
from saferl.analysis.drawers.registry import Drawing, EpisodeView, register_drawer
from saferl.envs.bullet_ball.ball import BallCircle, BallGather, BallRun
from saferl.envs.bullet_ball.physics import OCTAGON_NORMALS
from saferl.envs.bullet_ball.reach import BallReach, _box_pose


def _square_view(half: float, margin: float = 0.5) -> tuple[float, float, float, float]:
    """The extent ``(x0, x1, y0, y1)`` of the square ``[-half, half]^2`` with ``margin`` around it."""
    return (-half - margin, half + margin, -half - margin, half + margin)


def _room(ax, half: float) -> tuple[float, float, float, float]:
    """Draws the walls of a square room with inner faces at ``+-half``; returns the room's extent."""
    ax.add_patch(
        patches.Rectangle((-half, -half), 2 * half, 2 * half, fill=False, edgecolor=COLORS["wall"], lw=2.0, zorder=0.5)
    )
    return _square_view(half)


def _unsafe_beyond(ax, limit: float, axis: str) -> None:
    """Shades where the coordinate ``axis`` (``"x"`` or ``"y"``) is beyond ``+-limit``."""
    span = ax.axvspan if axis == "x" else ax.axhspan
    for lo, hi in ((limit, 1e4), (-1e4, -limit)):
        span(lo, hi, color=COLORS["unsafe"], lw=0, zorder=0)


@register_drawer(BallRun, "SafetyBallRun", physics_rate)
def draw_ball_run(ax, view: EpisodeView) -> Drawing:
    s, p = view.states, view.params
    y = scalar(p.y_limit)
    _unsafe_beyond(ax, y, "y")
    for edge in (y, -y):
        ax.axhline(edge, color=COLORS["wall"], lw=1.0, ls="--", zorder=0.5)
    move = agent(ax, view, s.pos, scalar(p.radius))
    return Drawing(extent_around(s.pos, 2.0, (0.0, 0.0, -y - 1.0, y + 1.0)), move)


@register_drawer(BallCircle, "SafetyBallCircle", physics_rate)
def draw_ball_circle(ax, view: EpisodeView) -> Drawing:
    s, p = view.states, view.params
    _unsafe_beyond(ax, scalar(p.x_limit), "x")
    # the octagon's faces have outward normals at k pi / 4: its corners lie between them
    corner = scalar(p.wall_distance) / math.cos(math.pi / 8.0)
    normals = np.arctan2(OCTAGON_NORMALS[:, 1], OCTAGON_NORMALS[:, 0])
    angles = normals + math.pi / 8.0
    ax.add_patch(
        patches.Polygon(
            np.stack([corner * np.cos(angles), corner * np.sin(angles)], 1),
            closed=True,
            fill=False,
            edgecolor=COLORS["wall"],
            lw=2.0,
            zorder=0.5,
        )
    )
    ax.add_patch(
        patches.Circle(
            (0.0, 0.0), scalar(p.circle_radius), fill=False, edgecolor=COLORS["goal"], lw=1.2, ls="--", zorder=0.6
        )
    )
    move = agent(ax, view, s.pos, scalar(p.radius))
    return Drawing(extent_around(s.pos, 1.0, _square_view(corner)), move)


@register_drawer(BallGather, "SafetyBallGather", physics_rate)
def draw_ball_gather(ax, view: EpisodeView) -> Drawing:
    s, p = view.states, view.params
    room = _room(ax, scalar(p.wall_distance))
    r = scalar(p.detection_distance)
    groups = []
    for centres, left, color in ((s.apples, s.apple_left, COLORS["apple"]), (s.bombs, s.bomb_left, COLORS["bomb"])):
        discs = [add_disc(ax, c, r, color) for c in np.asarray(centres[0])]
        for disc in discs:
            disc.set_edgecolor(color)
        groups.append((discs, np.asarray(left, bool), color))
    move = agent(ax, view, s.pos, scalar(p.radius))

    def update(t):
        for discs, left, color in groups:
            for disc, here in zip(discs, left[t]):
                disc.set_facecolor(color if here else "none")  # hollow once collected
        move(t)

    return Drawing(extent_around(s.pos, 1.0, room), update)


@register_drawer(BallReach, "SafetyBallReach", physics_rate)
def draw_ball_reach(ax, view: EpisodeView) -> Drawing:
    s, p = view.states, view.params
    room = _room(ax, scalar(p.wall_distance))
    moving_discs(ax, np.asarray(s.puddles, float), scalar(p.puddle_cost_distance), COLORS["hazard"])
    _, move_goal = moving_discs(ax, np.asarray(s.goal, float)[:, None], scalar(p.goal_radius), COLORS["goal"])
    box = patches.Polygon(np.zeros((4, 2)), closed=True, facecolor=COLORS["box"], edgecolor="none", zorder=1.5)
    ax.add_patch(box)
    step_seconds = float(p.timestep) * int(p.frame_skip)
    move = agent(ax, view, s.pos, scalar(p.radius))

    def update(t):
        state = jax.tree.map(lambda x: x[t], s)
        centre, _ = _box_pose(state, float(s.time[t]) * step_seconds, p)
        box.set_xy(canvas.square_corners(centre, scalar(state.box_yaw), scalar(p.box_half_size)))
        move_goal(t)
        move(t)

    return Drawing(extent_around(s.pos, 1.0, room), update)
