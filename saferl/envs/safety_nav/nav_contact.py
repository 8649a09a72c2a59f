"""A small 2-D contact model for the navigation tasks: discs against static discs and against a
light, pushable box made of squares.

Used by :mod:`saferl.envs.safety_nav.point_push` (see its docstring for how the model compares with
Safety-Gymnasium's MuJoCo contacts).  Everything is pure ``jax.numpy`` on single objects, so it
is vmapped by the environment.

Shapes
------
* The robot is a union of discs given in its own frame (``robot_discs``: ``(k, 3)`` rows of
  forward offset, sideways offset, radius).  Its pose is corrected by translation only.
* Static obstacles (pillars) are discs that never move.
* The box is a union of squares in the box frame (``box_squares``: ``(q, 3)`` rows of x offset,
  y offset, half-size) with a position and a yaw.

Contacts are position projections (the position-based style of Mueller et al., "Position Based
Dynamics", 2007): overlaps are removed along their contact normals, a few passes per resolution
(the environment resolves once per env step).  Each pass evaluates every pair at once
(vectorised) and resolves the deepest one -- Gauss-Seidel ordered by depth: two discs on one face
are cleared by one move, a disc in a notch touching two faces by two passes.  (A scan over the
pairs one by one compiled to a loop of tiny kernels and ran ~100x slower under ``vmap`` on CPU.)

* Robot against a static disc or a blocked box: the robot is moved out; the part of its
  velocity into the obstacle is removed (a perfectly inelastic contact) and its tangential
  velocity is reduced by ``friction`` times the removed normal velocity (Coulomb friction as an
  impulse, sticking when the tangential part is smaller).
* Pusher (robot or pillar) against the free box: quasi-static pushing with an ellipsoidal limit
  surface (Lynch, Maekawa and Tanie, "Manipulation and active sensing by pushing using tactile
  feedback", IROS 1992).  A box whose floor friction dominates its inertia, pushed with force
  ``f`` at ``p`` (from its centre), moves ``~ f`` and turns ``~ (p x f) / c^2``, where
  ``c = m_max / f_max`` is the ratio of its largest friction torque to its largest friction force;
  the force sticks inside the Coulomb cone or slides on its edge (:func:`push_law`).  Two sticking
  contacts far enough apart grip the box, which then moves with the robot
  (:func:`robot_pushes_box`).
"""

from __future__ import annotations

import jax.numpy as jnp


def _rotate(x, y, c, s):
    """Rotate the vector ``(x, y)`` (arrays of any shape) by the angle with cosine ``c``, sine ``s``."""
    return c * x - s * y, s * x + c * y


def _pairs(a, b):
    """Every row of ``a`` next to every row of ``b``: ``(len(a) * len(b), da + db)``, ``a``-major."""
    na, nb = a.shape[0], b.shape[0]
    return jnp.concatenate([jnp.repeat(a, nb, axis=0), jnp.tile(b, (na, 1))], axis=1)


def robot_disc_centres(pos, heading, robot_discs):
    """World centres ``(k, 2)`` of the robot's discs."""
    x, y = _rotate(robot_discs[:, 0], robot_discs[:, 1], jnp.cos(heading), jnp.sin(heading))
    return jnp.stack([pos[0] + x, pos[1] + y], axis=-1)


def square_contact(point, radius, box_pos, box_yaw, square):
    """Contact of discs (``point`` ``(..., 2)``, ``radius``) with squares of the box.

    ``square`` is ``(..., 3)``: x offset, y offset and half-size in the box frame.  Returns
    ``(depth, normal, lever)``: the penetration depth (``radius - signed distance``; positive
    means overlap), the unit normal from the square towards the disc centre, and the contact
    point relative to the box centre, both ``(..., 2)`` in world coordinates.
    """
    c, s = jnp.cos(box_yaw), jnp.sin(box_yaw)
    half = square[..., 2]
    lx, ly = _rotate(point[..., 0] - box_pos[0], point[..., 1] - box_pos[1], c, -s)
    lx, ly = lx - square[..., 0], ly - square[..., 1]
    cx, cy = jnp.clip(lx, -half, half), jnp.clip(ly, -half, half)
    dist = jnp.sqrt((lx - cx) ** 2 + (ly - cy) ** 2)
    inside = dist <= 1e-9
    safe = jnp.maximum(dist, 1e-9)
    # centre inside the square: leave through the nearest face
    gap_x, gap_y = half - jnp.abs(lx), half - jnp.abs(ly)
    sx, sy = jnp.where(lx >= 0.0, 1.0, -1.0), jnp.where(ly >= 0.0, 1.0, -1.0)
    x_face = gap_x <= gap_y
    nx = jnp.where(inside, jnp.where(x_face, sx, 0.0), (lx - cx) / safe)
    ny = jnp.where(inside, jnp.where(x_face, 0.0, sy), (ly - cy) / safe)
    px = jnp.where(inside & x_face, sx * half, cx) + square[..., 0]
    py = jnp.where(inside & ~x_face, sy * half, cy) + square[..., 1]
    signed = jnp.where(inside, -jnp.minimum(gap_x, gap_y), dist)
    nx, ny = _rotate(nx, ny, c, s)
    px, py = _rotate(px, py, c, s)
    return radius - signed, jnp.stack([nx, ny], axis=-1), jnp.stack([px, py], axis=-1)


def _deepest(depth, *arrays):
    """The deepest row of ``depth`` ``(k,)`` and the same row of each array ``(k, ...)``, by a
    one-hot sum (no gather; ties broken towards the lower index)."""
    score = depth - 1e-7 * jnp.arange(depth.shape[0], dtype=depth.dtype)
    hot = (score == jnp.max(score)).astype(depth.dtype)
    pick = lambda a: jnp.sum(jnp.reshape(hot, hot.shape + (1,) * (a.ndim - 1)) * a, axis=0)  # noqa: E731
    return (pick(depth),) + tuple(pick(a) for a in arrays)


def push_law(depth, normal, lever, pusher_disp, friction_radius, friction):
    """Quasi-static pushing of the box at one contact: ``(box displacement, box turn)``.

    ``normal`` points from the box to the pusher, ``lever`` is the contact point relative to the
    box centre, ``pusher_disp`` the pusher's displacement over this substep (its tangential part
    is what the contact drags along), ``friction`` the pusher-box Coulomb coefficient.  Pushed with
    force ``f`` the box moves ``f`` and turns ``(p x f) / c^2``, which moves the contact point
    ``M f``, ``M = I + q q^T / c^2``, ``q = z x p``.  Sticking: ``M f = depth n + (disp . t) t``
    (``n = -normal``, into the box); if that ``f`` leaves the friction cone, ``f`` lies on the
    cone's edge and moves the contact point ``depth`` along ``n``.  With ``friction = 0`` this is
    the frictionless pusher ``f = depth n / (1 + (p x n)^2 / c^2)``.
    """
    c2 = friction_radius**2
    n = -normal
    t = jnp.stack([-n[1], n[0]])
    q = jnp.stack([-lever[1], lever[0]])
    active = depth > 0.0
    d_n = jnp.maximum(depth, 0.0)
    d_t = jnp.where(active, pusher_disp[0] * t[0] + pusher_disp[1] * t[1], 0.0)
    wanted = d_n * n + d_t * t
    stick = wanted - q * (q[0] * wanted[0] + q[1] * wanted[1]) / (c2 + q[0] ** 2 + q[1] ** 2)  # M^-1 (Sherman-Morrison)
    f_n = stick[0] * n[0] + stick[1] * n[1]
    f_t = stick[0] * t[0] + stick[1] * t[1]
    edge = n + friction * jnp.where(f_t >= 0.0, 1.0, -1.0) * t
    q_edge = q[0] * edge[0] + q[1] * edge[1]
    slide = d_n * edge / (1.0 + (q[0] * n[0] + q[1] * n[1]) * q_edge / c2)  # n . M edge = 1 + (q.n)(q.edge)/c^2
    f = jnp.where(jnp.abs(f_t) <= friction * f_n, stick, slide)
    f = jnp.where(active, f, 0.0)
    return f, (lever[0] * f[1] - lever[1] * f[0]) / c2


def push_box(box_pos, box_yaw, pusher, radius, pusher_disp, square, friction_radius, friction):
    """One pusher disc against one box square (see :func:`push_law`): the new ``(box_pos, box_yaw)``."""
    depth, normal, lever = square_contact(pusher, radius, box_pos, box_yaw, square)
    move, turn = push_law(depth, normal, lever, pusher_disp, friction_radius, friction)
    return box_pos + move, box_yaw + turn


def robot_pushes_box(
    pos,
    heading,
    vel,
    ang_vel,
    h,
    robot_discs,
    box_pos,
    box_yaw,
    box_squares,
    friction_radius,
    frictions,
    moved_from,
    grip_cos,
    grip_gap=1e-3,
):
    """The robot's discs push the free box.  Returns ``(box_pos, box_yaw, gripped)``.

    Gripped: the deepest contact overlaps and, once it is cleared (without friction), another
    contact within ``grip_gap`` has a normal at least ``arccos(grip_cos)`` away from it (a nose
    pressed into a notch's floor and wall).  Two
    sticking contacts leave the box no motion but the robot's own, so the box then moves rigidly
    with the robot's last motion (from ``moved_from = (pos, heading)``).  Otherwise one
    deepest-first quasi-static pass (:func:`push_law`) per entry of ``frictions`` (pusher-box
    friction coefficients); either way a last frictionless pass clears what is left.
    """
    rows = _pairs(robot_discs, box_squares)
    centres = robot_disc_centres(pos, heading, rows[:, :3])
    # probe: clear the deepest overlap without friction, then look at what still touches
    deepest, n1, lever = _deepest(*square_contact(centres, rows[:, 2], box_pos, box_yaw, rows[:, 3:6]))
    move, turn = push_law(deepest, n1, lever, jnp.zeros(2), friction_radius, 0.0)
    depth, normal, _ = square_contact(centres, rows[:, 2], box_pos + move, box_yaw + turn, rows[:, 3:6])
    apart = (normal[:, 0] * n1[0] + normal[:, 1] * n1[1]) <= grip_cos
    gripped = (deepest > 0.0) & jnp.any((depth > -grip_gap) & apart)
    turn = heading - moved_from[1]
    rx, ry = _rotate(box_pos[0] - moved_from[0][0], box_pos[1] - moved_from[0][1], jnp.cos(turn), jnp.sin(turn))
    box_pos = jnp.where(gripped, pos + jnp.stack([rx, ry]), box_pos)
    box_yaw = jnp.where(gripped, box_yaw + turn, box_yaw)
    for mu in tuple(frictions) + (0.0,):
        depth, normal, lever, centre = _deepest(
            *square_contact(centres, rows[:, 2], box_pos, box_yaw, rows[:, 3:6]), centres
        )
        arm = centre - pos
        disp = h * (vel + ang_vel * jnp.stack([-arm[1], arm[0]]))  # the disc's motion, turning included
        move, turn = push_law(depth, normal, lever, disp, friction_radius, jnp.where(gripped, 0.0, mu))
        box_pos, box_yaw = box_pos + move, box_yaw + turn
    return box_pos, box_yaw, gripped


def _stop_robot(pos, vel, depth, normal, friction, slop=0.0, stop=True):
    """Move the robot ``depth`` along ``normal`` (when above ``slop``); if ``stop``, also apply
    an inelastic, Coulomb-frictional velocity change.  Returns ``(pos, vel)``."""
    touching = depth > slop
    pos = pos + jnp.where(touching, depth, 0.0) * normal
    v_n = vel[0] * normal[0] + vel[1] * normal[1]
    removed = jnp.where(touching & stop, jnp.minimum(v_n, 0.0), 0.0)  # <= 0: the speed into the obstacle
    vel = vel - removed * normal
    tangent = vel - (vel[0] * normal[0] + vel[1] * normal[1]) * normal
    t_speed = jnp.sqrt(tangent[0] ** 2 + tangent[1] ** 2)
    scale = jnp.maximum(0.0, 1.0 - friction * (-removed) / jnp.maximum(t_speed, 1e-9))
    return pos, vel - (1.0 - scale) * tangent


def robot_out_of_discs(pos, heading, vel, robot_discs, obstacles, obstacle_radius, friction, passes=2):
    """Separate the robot from static discs (``obstacles``: ``(m, 2)``), stopping it inelastically
    with Coulomb friction; deepest overlap first.  Returns ``(pos, vel)``."""
    rows = _pairs(robot_discs, obstacles)
    for _ in range(passes):
        centres = robot_disc_centres(pos, heading, rows[:, :3])
        gap = centres - rows[:, 3:5]
        dist = jnp.sqrt(gap[:, 0] ** 2 + gap[:, 1] ** 2)
        normal = jnp.where(dist[:, None] > 1e-9, gap / jnp.maximum(dist, 1e-9)[:, None], jnp.array([1.0, 0.0]))
        depth, normal = _deepest(rows[:, 2] + obstacle_radius - dist, normal)
        pos, vel = _stop_robot(pos, vel, depth, normal, friction)
    return pos, vel


def robot_out_of_box(
    pos, heading, vel, robot_discs, box_pos, box_yaw, box_squares, friction, blocked, slop=1e-5, passes=2
):
    """Separate the robot from the box where the pushes left an overlap: the box was blocked
    (``blocked``: then the robot is also stopped, as by :func:`robot_out_of_discs`) or the pushing
    passes had not converged (position only).  Overlaps below ``slop`` are rounding left by the
    pushes and are ignored.  Returns ``(pos, vel)``."""
    rows = _pairs(robot_discs, box_squares)
    for _ in range(passes):
        centres = robot_disc_centres(pos, heading, rows[:, :3])
        depth, normal, _ = square_contact(centres, rows[:, 2], box_pos, box_yaw, rows[:, 3:6])
        depth, normal = _deepest(depth, normal)
        pos, vel = _stop_robot(pos, vel, depth, normal, friction, slop, blocked)
    return pos, vel


def box_out_of_discs(box_pos, box_yaw, box_vel, obstacles, obstacle_radius, box_squares, friction_radius, passes=2):
    """Static discs push the box out (quasi-statically, :func:`push_law`, frictionless), deepest
    overlap first; the box's velocity into the obstacle is removed.  Returns
    ``(box_pos, box_yaw, box_vel, blocked)``, ``blocked`` true when an obstacle touched the box."""
    rows = _pairs(obstacles, box_squares)
    blocked = jnp.zeros((), bool)
    for _ in range(passes):
        depth, normal, lever = _deepest(*square_contact(rows[:, :2], obstacle_radius, box_pos, box_yaw, rows[:, 2:5]))
        move, turn = push_law(depth, normal, lever, jnp.zeros(2), friction_radius, 0.0)
        box_pos, box_yaw = box_pos + move, box_yaw + turn
        into = box_vel[0] * normal[0] + box_vel[1] * normal[1]  # normal: box -> obstacle
        box_vel = box_vel - jnp.where((depth > -1e-4) & (into > 0.0), into, 0.0) * normal
        blocked = blocked | (depth > 0.0)
    return box_pos, box_yaw, box_vel, blocked
