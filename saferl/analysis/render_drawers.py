"""What each environment family looks like: the drawers behind :mod:`saferl.analysis.render`, and their registry.

A drawer is one function ``draw(ax, view) -> Drawing`` per family.  It draws the scene of an
episode (the :class:`EpisodeView`: the innermost environment, its parameters and its stacked
states) on a matplotlib ``Axes`` once, and returns the scene's extent in data units and an
``update(t)`` that moves the artists to state ``t``.  :func:`register_drawer` keys a drawer by
the environment class, or by the class's name for environments this module does not import; a
subclass without a drawer of its own gets its parent's.  A new environment is one drawer here, or
one registration of an existing drawer: a navigation task on PointGoal1's engine reuses
:func:`draw_navigation`, which draws whichever of the objects of :data:`NAV_OBJECTS` its state has
(a new kind of object is one row there), and an MJX task whose state carries ``qpos`` and whose
environment has ``mj_model`` reuses :func:`draw_mujoco`.

The pictures
------------
* Navigation (PointGoal1; PointPush1 by name): top-down; the placement square
  ``[-placement_extent, placement_extent]^2`` dashed (level 1 has no walls), hazards, vases,
  pillars and the goal as discs of their radii (hazard: the cost region of the robot's centre;
  goal: the arrival region), a push box (``box_pos``, ``box_yaw``, half-size ``box_size``) where
  the state has one, the robot as a disc of ``robot_radius`` with a line along its heading, and
  its trail.
* Ball tasks: top-down.  Run: the corridor ``|y| <= y_limit`` (outside shaded); Circle: the
  octagon's walls (inner faces at ``wall_distance``), the circle of ``circle_radius`` dashed,
  ``|x| > x_limit`` shaded; Gather: the room's walls, apples and bombs as discs of
  ``detection_distance`` (the ball's centre collects them inside), hollow once collected;
  Reach: the room, the goal disc (``goal_radius``), the puddles (``puddle_cost_distance``, the
  cost region of the ball's centre) and the moving box at its pose of each step.
* CartSafe: side view; the safe region ``|x| <= x_constraint`` shaded, the termination lines
  ``|x| = x_threshold``, the cart and its pole (length ``2 * length``, theta = 0 upright,
  positive theta leaning towards +x, as in gym's CartPole drawing).
* ToyReach: the line x in [-1, 1], the costly region x > ``cost_threshold`` shaded, the agent's path
  against time (upwards).
* IcyLake: the grid (row 0 at the top, as FrozenLake prints it), the agent and its trail.
* EcoAnt and the MJX locomotion tasks (``LocomotionEnv`` by name): MuJoCo's own renderer
  (``mujoco.Renderer``) with a camera tracking the torso (the first body where there is none);
  it needs a headless OpenGL backend (:func:`mujoco_gl_backend`).

Every step whose cost is positive is drawn in the cost colour: the robot, ball, cart or agent
on that frame and a mark on the trail where it happened (not for EcoAnt, whose energy cost is
positive on every step).  Colours follow Safety-Gymnasium's convention where it has one
(Ji et al., "Safety-Gymnasium: A Unified Safe Reinforcement Learning Benchmark", arXiv:2310.12567:
hazards blue, goal green, vases cyan, pillars lavender, the push box yellow); the rest are this
module's (:data:`COLORS`).

Compared with the originals' renderers: Safety-Gymnasium and Bullet-Safety-Gym render their 3-D
scenes (MuJoCo, PyBullet) from a camera; these are 2-D schematics of what the JAX ports simulate
(the planar state), drawn to scale, with the regions that decide reward and cost instead of the
objects' visual meshes.  Gymnasium's CartPole and FrozenLake renderers draw the same side view and
grid.  Only the MuJoCo tasks are rendered as the original would.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
from typing import Any, Callable, NamedTuple

import jax
import numpy as np
from matplotlib import patches

from saferl.envs.bullet_ball.ball import BallCircle, BallGather, BallRun
from saferl.envs.bullet_ball.physics import OCTAGON_NORMALS
from saferl.envs.bullet_ball.reach import BallReach, _box_pose
from saferl.envs.cartsafe import CartSafe
from saferl.envs.eco_ant import EcoAnt
from saferl.envs.icy_lake import GOAL, ICE, START, IcyLake
from saferl.envs.safety_nav.point_goal import PointGoal
from saferl.envs.toy import ToyReach
from saferl.foundation.errors import MissingExtraError

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


# --------------------------------------------------------------------------- shared pieces


def _disc(ax, centre, radius, color, zorder=1, **kw):
    disc = patches.Circle(
        tuple(np.asarray(centre, float)), float(radius), facecolor=color, edgecolor="none", zorder=zorder, **kw
    )
    ax.add_patch(disc)
    return disc


class _Trail:
    """The path so far as a line, with a mark at every state reached by a costly step."""

    def __init__(self, ax, positions: np.ndarray, costly: np.ndarray):
        self.positions, self.costly = np.asarray(positions, float), costly
        (self.line,) = ax.plot([], [], color=COLORS["trail"], lw=1.2, zorder=2)
        self.marks = ax.scatter(np.zeros(0), np.zeros(0), s=10.0, color=COLORS["cost"], zorder=2.5, edgecolors="none")

    def update(self, t: int):
        done = self.positions[: t + 1]
        self.line.set_data(done[:, 0], done[:, 1])
        self.marks.set_offsets(done[self.costly[: t + 1]].reshape(-1, 2))


def _extent_around(points: np.ndarray, margin: float, *boxes):
    """Bounding box of ``points`` (n, 2) grown by ``margin``, joined with ``boxes`` (x0, x1, y0, y1)."""
    x0, y0 = points.min(0) - margin
    x1, y1 = points.max(0) + margin
    for bx0, bx1, by0, by1 in boxes:
        x0, x1, y0, y1 = min(x0, bx0), max(x1, bx1), min(y0, by0), max(y1, by1)
    return float(x0), float(x1), float(y0), float(y1)


def _agent(ax, view: EpisodeView, positions, radius, heading=None):
    """Agent disc (cost colour on costly steps), optional heading line, trail; returns update(t)."""
    trail = _Trail(ax, positions, view.costly)
    body = _disc(ax, positions[0], radius, COLORS["agent"], zorder=3)
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


def _moving_discs(ax, centres: np.ndarray, radius, color, zorder=1):
    """Discs at ``centres`` (num_states, n, 2) of state t; returns (discs, update(t))."""
    discs = [_disc(ax, c, radius, color, zorder) for c in centres[0]]

    def update(t):
        for disc, c in zip(discs, centres[t]):
            disc.set_center(tuple(c))

    return discs, update


def _steps_per_second(env, params) -> float:
    return 1.0 / (float(params.timestep) * int(params.frame_skip))


def _f(x) -> float:
    return float(np.asarray(x))


# --------------------------------------------------------------------------- navigation

#: objects of the navigation tasks: (state field, params field of its radius, colour).  A task
#: built on PointGoal1's engine with other kinds of objects (buttons, pillars, gremlins) adds rows;
#: fields its state lacks are skipped.
NAV_OBJECTS = (
    ("hazards", "hazard_radius", "hazard"),
    ("vases", "vase_radius", "vase"),
    ("pillars", "pillar_radius", "pillar"),
    ("goal", "goal_radius", "goal"),
)


def _square_corners(centre, yaw, half) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    square = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    return np.asarray(centre, float) + square @ np.array([[c, s], [-s, c]])


@register_drawer("PointPush", "PointPush1", _steps_per_second)  # saferl/envs/safety_nav/point_push.py
@register_drawer(PointGoal, "PointGoal1", _steps_per_second)
def draw_navigation(ax, view: EpisodeView) -> Drawing:
    s, p = view.states, view.params
    ext = _f(p.placement_extent)
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
        updates.append(_moving_discs(ax, centres, _f(getattr(p, radius_field)), COLORS[color])[1])
        points.append(centres.reshape(-1, 2))
    if hasattr(s, "box_pos"):  # a push box: square of half-size box_size at its pose
        box = patches.Polygon(np.zeros((4, 2)), closed=True, facecolor=COLORS["push box"], edgecolor="none", zorder=1.5)
        ax.add_patch(box)
        centres, yaws, half = np.asarray(s.box_pos, float), np.asarray(s.box_yaw, float), _f(p.box_size)
        updates.append(lambda t: box.set_xy(_square_corners(centres[t], yaws[t], half)))
        points.append(centres)
    updates.append(_agent(ax, view, s.pos, _f(p.robot_radius), heading=s.heading))

    def update(t):
        for u in updates:
            u(t)

    return Drawing(_extent_around(np.concatenate(points), 0.4, (-ext, ext, -ext, ext)), update)


# --------------------------------------------------------------------------- ball tasks


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


@register_drawer(BallRun, "SafetyBallRun", _steps_per_second)
def draw_ball_run(ax, view: EpisodeView) -> Drawing:
    s, p = view.states, view.params
    y = _f(p.y_limit)
    _unsafe_beyond(ax, y, "y")
    for edge in (y, -y):
        ax.axhline(edge, color=COLORS["wall"], lw=1.0, ls="--", zorder=0.5)
    move = _agent(ax, view, s.pos, _f(p.radius))
    return Drawing(_extent_around(s.pos, 2.0, (0.0, 0.0, -y - 1.0, y + 1.0)), move)


@register_drawer(BallCircle, "SafetyBallCircle", _steps_per_second)
def draw_ball_circle(ax, view: EpisodeView) -> Drawing:
    s, p = view.states, view.params
    _unsafe_beyond(ax, _f(p.x_limit), "x")
    # the octagon's faces have outward normals at k pi / 4: its corners lie between them
    corner = _f(p.wall_distance) / math.cos(math.pi / 8.0)
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
            (0.0, 0.0), _f(p.circle_radius), fill=False, edgecolor=COLORS["goal"], lw=1.2, ls="--", zorder=0.6
        )
    )
    move = _agent(ax, view, s.pos, _f(p.radius))
    return Drawing(_extent_around(s.pos, 1.0, _square_view(corner)), move)


@register_drawer(BallGather, "SafetyBallGather", _steps_per_second)
def draw_ball_gather(ax, view: EpisodeView) -> Drawing:
    s, p = view.states, view.params
    room = _room(ax, _f(p.wall_distance))
    r = _f(p.detection_distance)
    groups = []
    for centres, left, color in ((s.apples, s.apple_left, COLORS["apple"]), (s.bombs, s.bomb_left, COLORS["bomb"])):
        discs = [_disc(ax, c, r, color) for c in np.asarray(centres[0])]
        for disc in discs:
            disc.set_edgecolor(color)
        groups.append((discs, np.asarray(left, bool), color))
    move = _agent(ax, view, s.pos, _f(p.radius))

    def update(t):
        for discs, left, color in groups:
            for disc, here in zip(discs, left[t]):
                disc.set_facecolor(color if here else "none")  # hollow once collected
        move(t)

    return Drawing(_extent_around(s.pos, 1.0, room), update)


@register_drawer(BallReach, "SafetyBallReach", _steps_per_second)
def draw_ball_reach(ax, view: EpisodeView) -> Drawing:
    s, p = view.states, view.params
    room = _room(ax, _f(p.wall_distance))
    _moving_discs(ax, np.asarray(s.puddles, float), _f(p.puddle_cost_distance), COLORS["hazard"])
    _, move_goal = _moving_discs(ax, np.asarray(s.goal, float)[:, None], _f(p.goal_radius), COLORS["goal"])
    box = patches.Polygon(np.zeros((4, 2)), closed=True, facecolor=COLORS["box"], edgecolor="none", zorder=1.5)
    ax.add_patch(box)
    step_seconds = float(p.timestep) * int(p.frame_skip)
    move = _agent(ax, view, s.pos, _f(p.radius))

    def update(t):
        state = jax.tree.map(lambda x: x[t], s)
        centre, _ = _box_pose(state, float(s.time[t]) * step_seconds, p)
        box.set_xy(_square_corners(centre, _f(state.box_yaw), _f(p.box_half_size)))
        move_goal(t)
        move(t)

    return Drawing(_extent_around(s.pos, 1.0, room), update)


# --------------------------------------------------------------------------- CartSafe

_CART_HALF = (0.25, 0.15)  # drawn half-width and half-height of the cart (m); CartSafe has no cart size


@register_drawer(CartSafe, "CartSafe", lambda env, p: 1.0 / float(p.tau))
def draw_cartsafe(ax, view: EpisodeView) -> Drawing:
    s, p = view.states, view.params
    limit, end, pole = _f(p.x_constraint), _f(p.x_threshold), 2.0 * _f(p.length)
    ax.axvspan(-limit, limit, color=COLORS["safe"], lw=0, zorder=0)
    for edge in (end, -end):
        ax.axvline(edge, color=COLORS["cost"], lw=1.5, ls="--", zorder=0.5)
    ax.axhline(0.0, color=COLORS["wall"], lw=1.0, zorder=0.6)
    w, h = _CART_HALF
    cart = patches.Rectangle((0.0, -h), 2 * w, 2 * h, facecolor=COLORS["agent"], edgecolor="none", zorder=3)
    ax.add_patch(cart)
    (rod,) = ax.plot([], [], color=COLORS["pole"], lw=4.0, zorder=4, solid_capstyle="round")
    x, theta = np.asarray(s.x, float), np.asarray(s.theta, float)

    def update(t):
        cart.set_x(x[t] - w)
        cart.set_facecolor(COLORS["cost"] if view.costly[t] else COLORS["agent"])
        rod.set_data([x[t], x[t] + pole * math.sin(theta[t])], [0.0, pole * math.cos(theta[t])])

    reach = max(end, float(np.abs(x).max())) + 0.6
    return Drawing((-reach, reach, -pole - 0.3, pole + 0.3), update)


# --------------------------------------------------------------------------- ToyReach


@register_drawer(ToyReach, "ToyReach", lambda env, p: 10.0)  # a tutorial task without a time step: 10 frames/s
def draw_toy_reach(ax, view: EpisodeView) -> Drawing:
    """The line x in [-1, 1] with the costly region x > cost_threshold shaded; the agent moves along it and
    its trail is drawn against time (upwards), so a frame shows the whole path so far."""
    threshold = _f(view.params.cost_threshold)
    ax.axvspan(threshold, 1.0, color=COLORS["unsafe"], lw=0, zorder=0)
    ax.axvline(threshold, color=COLORS["cost"], lw=1.0, ls="--", zorder=0.5)
    x = np.asarray(view.states.x, float)
    height = max(1.0, float(len(x) - 1))
    points = np.stack([x, np.arange(len(x)) / height * 2.0 - 1.0], 1)
    move = _agent(ax, view, points, 0.05)
    return Drawing((-1.05, 1.05, -1.1, 1.1), move)


# --------------------------------------------------------------------------- IcyLake

_TILE_COLORS = {ICE: "ice", GOAL: "goal", START: "start"}  # every other tile is frozen


@register_drawer(IcyLake, "IcyLake", lambda env, p: 4.0)  # Gymnasium FrozenLake's metadata["render_fps"]
def draw_icy_lake(ax, view: EpisodeView) -> Drawing:
    tiles = np.asarray(view.params.tiles)
    n_rows, n_cols = tiles.shape
    for r in range(n_rows):
        for c in range(n_cols):
            color = COLORS[_TILE_COLORS.get(int(tiles[r, c]), "frozen")]
            ax.add_patch(
                patches.Rectangle(
                    (c, n_rows - 1 - r), 1.0, 1.0, facecolor=color, edgecolor=COLORS["arena"], lw=0.8, zorder=0.5
                )
            )
    flat = np.asarray(view.states.position, int)
    centres = np.stack([flat % n_cols + 0.5, n_rows - 1 - flat // n_cols + 0.5], 1).astype(float)
    move = _agent(ax, view, centres, 0.3)
    return Drawing((0.0, float(n_cols), 0.0, float(n_rows)), move)


# --------------------------------------------------------------------------- MuJoCo (EcoAnt)

_GL_HELP = (
    "start Python with MUJOCO_GL=egl (EGL: the system's libegl1, or the NVIDIA driver's libEGL) or "
    "MUJOCO_GL=osmesa (OSMesa: the libosmesa6 system package and pip install PyOpenGL)"
)


def mujoco_gl_backend() -> str | None:
    """The OpenGL backend MuJoCo renders with in this process (``MUJOCO_GL``, "glfw" when unset), or
    None when none works: a 16 x 16 ``mujoco.Renderer`` of an empty model is created and closed, with
    every error caught.  MuJoCo fixes its backend when it is first imported."""
    try:
        import mujoco

        model = mujoco.MjModel.from_xml_string("<mujoco/>")
        renderer = mujoco.Renderer(model, 16, 16)
        renderer.close()
    except Exception:  # noqa: BLE001 - any failure means: no backend here
        return None
    return os.environ.get("MUJOCO_GL", "") or "glfw"


def require_mujoco_gl():
    """A one-line error (:class:`saferl.foundation.errors.MissingExtraError`) when MuJoCo cannot render here."""
    if mujoco_gl_backend() is None:
        current = os.environ.get("MUJOCO_GL")
        setting = f"MUJOCO_GL={current!r}" if current is not None else "MUJOCO_GL unset"
        raise MissingExtraError(
            f"rendering a MuJoCo environment needs a headless OpenGL backend and none works in "
            f"this process ({setting}); {_GL_HELP}"
        )


#: the tracking camera (m, degrees): the torso seen from the side and above, the floor filling the frame
MUJOCO_CAMERA = {"distance": 4.0, "elevation": -30.0, "azimuth": 90.0}


# by class name: saferl/envs/velocity/locomotion.py
@register_drawer("LocomotionEnv", "MJX locomotion", lambda env, p: 1.0 / env.dt(p), preflight=require_mujoco_gl)
@register_drawer(EcoAnt, "EcoAnt", lambda env, p: 1.0 / env.dt(p), highlight_costs=False, preflight=require_mujoco_gl)
def draw_mujoco(ax, view: EpisodeView) -> Drawing:
    import mujoco

    width, height = view.axes_size
    model = copy.deepcopy(view.env.mj_model)  # the offscreen buffer must hold the frame
    model.vis.global_.offwidth = max(int(model.vis.global_.offwidth), width)
    model.vis.global_.offheight = max(int(model.vis.global_.offheight), height)
    renderer = mujoco.Renderer(model, height=height, width=width)
    data = mujoco.MjData(model)
    camera = mujoco.MjvCamera()
    camera.type = mujoco.mjtCamera.mjCAMERA_TRACKING
    names = [model.body(i).name for i in range(model.nbody)]
    camera.trackbodyid = names.index("torso") if "torso" in names else min(1, model.nbody - 1)
    for name, value in MUJOCO_CAMERA.items():
        setattr(camera, name, value)
    image = ax.imshow(
        np.zeros((height, width, 3), np.uint8),
        extent=(0, width, 0, height),
        origin="upper",
        interpolation="nearest",
        zorder=0,
    )
    qpos = np.asarray(view.states.qpos, np.float64)

    def update(t):
        data.qpos[:] = qpos[t]
        mujoco.mj_forward(model, data)
        renderer.update_scene(data, camera=camera)
        image.set_data(renderer.render())

    return Drawing((0.0, float(width), 0.0, float(height)), update, renderer.close)
