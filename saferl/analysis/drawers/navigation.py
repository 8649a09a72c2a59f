"""The navigation tasks' drawer (PointGoal1; PointPush1 by name): top-down, the placement square, the objects of
:data:`NAV_OBJECTS` as discs of their radii, a push box where the state has one, the robot and its trail."""

from __future__ import annotations

import numpy as np
from matplotlib import patches

from saferl.analysis.drawers import canvas
from saferl.analysis.drawers.canvas import COLORS, agent, extent_around, moving_discs, physics_rate, scalar
from saferl.analysis.drawers.registry import Drawing, EpisodeView, register_drawer
from saferl.envs.safety_nav.point_goal import PointGoal

#: objects of the navigation tasks: (state field, params field of its radius, colour).  A task
#: built on PointGoal1's engine with other kinds of objects (buttons, pillars, gremlins) adds rows;
#: fields its state lacks are skipped.
NAV_OBJECTS = (
    ("hazards", "hazard_radius", "hazard"),
    ("vases", "vase_radius", "vase"),
    ("pillars", "pillar_radius", "pillar"),
    ("goal", "goal_radius", "goal"),
)


@register_drawer("PointPush", "PointPush1", physics_rate)  # saferl/envs/safety_nav/point_push.py
@register_drawer(PointGoal, "PointGoal1", physics_rate)
def draw_navigation(ax, view: EpisodeView) -> Drawing:
    s, p = view.states, view.params
    ext = scalar(p.placement_extent)
    ax.add_patch(
        patches.Rectangle(
            (-ext, -ext), 2 * ext, 2 * ext, fill=False, edgecolor=COLORS["arena"], lw=1.0, ls="--", zorder=0.5
        )
    )
    updates, points = [], [s.pos]
    for field, radius_field, color in NAV_OBJECTS:
        if not hasattr(s, field):
            continue
        centres = np.asarray(getattr(s, field), float).reshape(view.num_states, -1, 2)
        updates.append(moving_discs(ax, centres, scalar(getattr(p, radius_field)), COLORS[color])[1])
        points.append(centres.reshape(-1, 2))
    if hasattr(s, "box_pos"):  # a push box: square of half-size box_size at its pose
        box = patches.Polygon(np.zeros((4, 2)), closed=True, facecolor=COLORS["push box"], edgecolor="none", zorder=1.5)
        ax.add_patch(box)
        centres, yaws, half = np.asarray(s.box_pos, float), np.asarray(s.box_yaw, float), scalar(p.box_size)
        updates.append(lambda t: box.set_xy(canvas.square_corners(centres[t], yaws[t], half)))
        points.append(centres)
    updates.append(agent(ax, view, s.pos, scalar(p.robot_radius), heading=s.heading))

    def update(t):
        for u in updates:
            u(t)

    return Drawing(extent_around(np.concatenate(points), 0.4, (-ext, ext, -ext, ext)), update)
