"""The Bullet-Safety-Gym ball in JAX: rolling dynamics, walls, sensors and random placement.

Shared by the four ball tasks (:mod:`saferl.envs.bullet_ball.ball` holds Run, Circle and Gather,
:mod:`saferl.envs.bullet_ball.reach` holds Reach).  It is a module of its own because the tasks
would otherwise pass 400 lines in one file, and because Reach needs all of it too.
Sources are files of the ``bullet_safety_gym`` package, in Bullet-Safety-Gym 0.1 (GitHub
SvenGronauer/Bullet-Safety-Gym at df7f9a2, the version SCPO ran) and 1.4.0 (the PyPI wheel); "measured"
means read back from the original run in PyBullet 3.2.7.

The ball on flat ground (``envs/agents.py`` ``Ball``, ``envs/data/robots/ball/ball.urdf``)
------------------------------------------------------------------------------------------
The ball (mass 0.3 kg, radius 0.5 m, inertia 0.03 = 2/5 m r^2) rolls without slipping, so
its horizontal velocity ``v`` obeys (fitted to the measured PyBullet trajectories to 4 significant figures)::

    m_eff dv/dt = F - m v (k_l + k_l |v|) - (I / r^2) v (k_a + k_a |v| / r) - f_roll v/|v|

with ``m_eff = m + I / r^2 = 0.42 kg``, PyBullet's default damping ``k_l = k_a = 0.04``,
``F = 3.5 N * clip(a, -1, 1)`` (world frame, every substep) and the rolling friction
``f_roll = (0.03 * 0.8) m g / r = 0.1413 N``.  :func:`ball_substep` integrates it with
explicit Euler at the substep ``h``; the position is then advanced with the new velocity
(semi-implicit, as Bullet does).  The angular velocity is not integrated: it follows
from rolling, ``omega = (-v_y / r, v_x / r, 0)``.

Rolling friction is a Coulomb force, so an explicit ``-f_roll v/|v|`` term is undefined at
rest and chatters around zero speed.  It is applied instead as a clamped impulse: after
the force and damping, the speed is reduced by ``h f_roll / m_eff`` but not below zero,
along the direction of the velocity it acts on.  Away from rest this is the explicit
Euler step of the equation above; from rest it is static friction: a push with
``|F| <= f_roll`` leaves the ball exactly at rest, and a stronger push accelerates it by
``(|F| - f_roll) / m_eff``, as measured (about 8.0 m/s^2 at full force).

Walls (``envs/worlds.py``, ``envs/data/obstacles/room_20x20.urdf``, ``octagon_wall.urdf``): the room
and the octagon are half-planes whose inner faces lie at ``wall_distance`` from the origin (9.9 in
SmallRoom, 11.9 in Octagon).  The combined restitution is 0 (the wall URDFs have no ``<contact>`` block, product
rule), yet the original's ball bounces off them: ``envs/builder.py`` ``_setup_client_and_physics`` sets
``setDefaultContactERP(0.9)``, and PyBullet's solver (Bullet's sequential-impulse solver,
``btSequentialImpulseConstraintSolver``) turns the penetration it finds at the start of a substep into a velocity
pushing the ball out.  ``BallParams.wall_contact`` picks the model:

* ``"bullet_erp"`` (default), :func:`wall_erp_velocity`, after Bullet's substep order (forces, then the contact
  found at the substep's start, then the position).  A centre that the last substep carried ``depth`` past a face
  leaves at ``erp depth / h``, so the bounce depends on the speed and on the substep phase at which the ball
  crosses (0 to ``erp (1 - gap / (v h))``), and the ball may end a step up to one substep's travel inside a face.
  The wall's friction (wall lateral 0.5, Bullet's default, times ball 1.1) sticks the rolling ball's contact point
  on a new contact, taking ``2/7`` of the tangential speed plus the spin the wall's rolling friction (ball rolling
  0.03 times wall lateral 0.5) resists; ``wall_spin_share`` (0.7) is fitted to the original's substeps, where
  Bullet's 5 solver iterations leave that rolling limit partly unspent (the fit at both versions:
  docs/results/fidelity/ball_wall_fit.md, ``make -C benchmarks/fidelity ball-wall-fit``).  The normal part was
  derived from the solver's rule and the tangential part fitted, both against the original's recorded substeps;
  the comparison is in docs/results/fidelity/ball_v01.md.  Not modelled: the hop the wall's friction gives the
  ball (it stops the contact point sliding down the face by pushing the ball up) and the spin it keeps towards
  the wall, so that when the original's ball lands the ground's friction takes about half of its outgoing speed,
  while the planar ball keeps rolling at the speed it left with.
* ``"inelastic"``, :func:`wall_contact` (the model before): after each substep the centre is projected back to
  ``wall_distance - radius`` and the velocity into the wall removed, the tangential velocity kept; no bounce, no
  wall friction.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from saferl.envs.base import EnvParams
from saferl.foundation import struct

TWO_PI = 2.0 * math.pi

#: rolling friction force (N) = (ball rolling 0.03 * plane lateral 0.8) * m g / r (``ball.urdf``, ``worlds.py``
#: ``Plane``; the form fitted to PyBullet)
ROLLING_FRICTION = 0.03 * 0.8 * 0.3 * 9.81 / 0.5

#: the two Bullet-Safety-Gym versions; "0.1" is what SCPO ran (its requirements.txt pins bullet-safety-gym==0.1)
VERSIONS = ("0.1", "1.4.0")

#: (max_episode_steps, substep h, substeps per env step) per task and version (each version's
#: ``bullet_safety_gym/__init__.py`` and ``envs/builder.py`` ``get_physics_parameters``)
PHYSICS = {
    "run": {"0.1": (250, 1.0 / 240.0, 4), "1.4.0": (100, 1.0 / 120.0, 4)},
    "circle": {"0.1": (250, 1.0 / 240.0, 4), "1.4.0": (200, 1.0 / 60.0, 6)},
    "gather": {"0.1": (250, 1.0 / 240.0, 4), "1.4.0": (250, 1.0 / 120.0, 4)},
    "reach": {"0.1": (250, 1.0 / 60.0, 1), "1.4.0": (250, 1.0 / 60.0, 4)},
}

#: outward unit normals of the walls: SmallRoom (4 faces) and Octagon (8 faces at k pi / 4)
ROOM_NORMALS = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]], np.float32)
OCTAGON_NORMALS = np.array([[math.cos(k * math.pi / 4.0), math.sin(k * math.pi / 4.0)] for k in range(8)], np.float32)


def version_defaults(task: str, version: str) -> dict:
    """The params defaults that differ between the versions: episode length and substeps."""
    if version not in VERSIONS:
        raise ValueError(f"unknown Bullet-Safety-Gym version {version!r}; known: {', '.join(VERSIONS)}")
    max_steps, timestep, frame_skip = PHYSICS[task][version]
    return {"max_steps": max_steps, "timestep": timestep, "frame_skip": frame_skip}


@struct.dataclass
class BallParams(EnvParams):
    """The ball agent (``envs/agents.py``, ``ball.urdf``) and the physics step (``envs/builder.py``);
    defaults are v0.1 Run's."""

    timestep: float = 1.0 / 240.0  # substep h (s)
    frame_skip: int = struct.field(static=True, default=4)  # substeps per env step
    mass: float = 0.3
    radius: float = 0.5
    inertia: float = 0.03  # (2/5) m r^2; PyBullet ignores the URDF's ixx = 1
    linear_damping: float = 0.04  # PyBullet default, k1 = k2
    angular_damping: float = 0.04
    rolling_friction: float = ROLLING_FRICTION
    max_force: float = 3.5  # N per unit action, world frame
    action_penalty: float = 0.5  # Ball.specific_reward = -0.5 |clip(a)|
    #: the walls: "bullet_erp" (PyBullet's contact: ERP push-out and wall friction, :func:`wall_erp_velocity`) or
    #: "inelastic" (the normal velocity removed, the ball projected out: :func:`wall_contact`)
    wall_contact: str = struct.field(static=True, default="bullet_erp")
    contact_erp: float = 0.9  # builder.py setDefaultContactERP(0.9)
    wall_friction: float = 0.55  # wall lateral 0.5 (Bullet's default) x ball 1.1
    wall_rolling_friction: float = 0.015  # ball rolling 0.03 x wall lateral 0.5 (+ wall rolling 0 x ball 1.1)
    wall_spin_share: float = 0.7  # share of the rolling limit the solver spends on the spin the wall friction starts
    max_steps: int = struct.field(default=250, kw_only=True)


@struct.dataclass
class BallState:
    """The ball's state, all a Run or Circle episode needs."""

    pos: jax.Array  # (2,) centre xy
    vel: jax.Array  # (2,) velocity xy
    time: jax.Array  # () int32, env steps since reset


# --------------------------------------------------------------------------- dynamics


def norm2(v: jax.Array) -> jax.Array:
    """Euclidean norm over a last axis of size 2."""
    return jnp.sqrt(v[..., 0] ** 2 + v[..., 1] ** 2)


def clip_action(action: jax.Array) -> jax.Array:
    return jnp.clip(jnp.asarray(action, jnp.float32), -1.0, 1.0)


def damping_force(vel: jax.Array, params: BallParams) -> jax.Array:
    """PyBullet's linear and (through rolling) angular damping as a force on the centre."""
    speed = norm2(vel)
    kl, ka, r = params.linear_damping, params.angular_damping, params.radius
    linear = params.mass * kl * (1.0 + speed)
    angular = params.inertia / r**2 * ka * (1.0 + speed / r)
    return vel * (linear + angular)


def ball_velocity(vel, force, params: BallParams):
    """The velocity after one substep on free ground: explicit Euler of the rolling model."""
    h = params.timestep
    m_eff = params.mass + params.inertia / params.radius**2
    v_free = vel + h * (force - damping_force(vel, params)) / m_eff
    # rolling friction as a clamped Coulomb impulse: static from rest, the Euler step otherwise
    speed = norm2(v_free)
    shrink = jnp.maximum(speed - h * params.rolling_friction / m_eff, 0.0) / jnp.maximum(speed, 1e-12)
    return v_free * shrink


def ball_substep(pos, vel, force, params: BallParams):
    """One substep on free ground: the velocity (:func:`ball_velocity`), then the position with it."""
    vel = ball_velocity(vel, force, params)
    return pos + params.timestep * vel, vel


def wall_erp_velocity(pos, vel_before, vel, normals: np.ndarray, limit, params: BallParams):
    """PyBullet's wall contact on the velocity of one substep (``vel``: after the forces; ``pos``, ``vel_before``: the
    position and velocity the substep starts from), before the position is advanced.

    Normal: a face the centre has crossed by ``depth > 0`` (``pos . n - limit``) lets the ball move into it at most
    at ``-erp depth / h`` (restitution 0, Baumgarte correction), so the ball leaves at ``erp depth / h``: the
    bounce grows with how deep the last substep carried the ball.  ``dn`` is the normal speed the wall takes (the
    normal impulse over the mass).  Tangential: the wall's friction meets the rolling ball's contact point sliding
    down the face at the normal speed (the spin ``v_n / r``) and along it at ``v_t``.  On a new contact (the
    previous substep started outside the face) it sticks: ``v_t`` loses ``k (v_t + R)`` with
    ``k = I / (I + m r^2) = 2/7``, where ``R = share * rho dn m r / I`` is the spin about the normal to the
    ground the wall's rolling friction (limit ``rho dn m``, a torque impulse) stops; within the friction cone
    ``mu dn`` less the impulse that stops the slide down the face.  A ball held against the face loses only
    ``k R`` a substep.  The vertical hop the sliding contact gives the ball is not modelled (planar ball).
    """
    h, m, r, inertia = params.timestep, params.mass, params.radius, params.inertia
    k = inertia / (inertia + m * r**2)
    for n in normals:  # static geometry (at most 8 faces), unrolled
        n = jnp.asarray(n)
        depth = pos @ n - limit
        fresh = depth - h * (vel_before @ n) <= 0.0  # the previous substep started outside the face
        v_n = vel @ n
        dn = jnp.where(depth > 0.0, jnp.maximum(v_n + params.contact_erp * depth / h, 0.0), 0.0)
        tangent = vel - v_n * n
        v_t = norm2(tangent)
        spin = params.wall_rolling_friction * dn * m * r / inertia
        stick = jnp.where(fresh, k * (v_t + params.wall_spin_share * spin), k * params.wall_spin_share * spin)
        down = jnp.where(fresh, k * jnp.maximum(v_n - spin, 0.0), 0.0)  # the slide down the face stopped
        cone = jnp.sqrt(jnp.maximum((params.wall_friction * dn) ** 2 - down**2, 0.0))
        keep = jnp.maximum(v_t - jnp.minimum(stick, cone), 0.0) / jnp.maximum(v_t, 1e-12)
        vel = tangent * keep + (v_n - dn) * n
    return vel


def wall_contact(pos, vel, normals: np.ndarray, limit):
    """Hard walls: half-planes ``pos . n <= limit``; penetration undone, inward velocity removed."""
    for n in normals:  # static geometry (at most 8 faces), unrolled
        n = jnp.asarray(n)
        depth = pos @ n - limit
        inside = depth > 0.0
        pos = pos - jnp.where(inside, depth, 0.0) * n
        vel = vel - jnp.where(inside, jnp.maximum(vel @ n, 0.0), 0.0) * n
    return pos, vel


def simulate(pos, vel, force, params: BallParams, normals=None, wall_distance=None, contact=None):
    """One env step: ``frame_skip`` substeps with the force applied in each (measured; ``envs/builder.py``).

    ``contact(pos, vel, j)`` (optional) resolves other contacts after substep ``j``; the
    walls (``normals``, inner faces at ``wall_distance``) are resolved last.
    """

    erp_walls = normals is not None and params.wall_contact == "bullet_erp"
    if normals is not None and params.wall_contact not in ("bullet_erp", "inelastic"):
        raise ValueError(f"unknown wall_contact {params.wall_contact!r}; known: bullet_erp, inelastic")

    def body(j, carry):
        p, v = carry
        if erp_walls:  # Bullet's order: forces, the contact found at the substep's start, then the position
            v = wall_erp_velocity(p, v, ball_velocity(v, force, params), normals, wall_distance - params.radius, params)
            p = p + params.timestep * v
        else:
            p, v = ball_substep(p, v, force, params)
        if contact is not None:
            p, v = contact(p, v, j)
        if normals is not None and not erp_walls:
            p, v = wall_contact(p, v, normals, wall_distance - params.radius)
        return p, v

    return jax.lax.fori_loop(0, params.frame_skip, body, (pos, vel))


def ball_observation(pos, vel, params: BallParams) -> jax.Array:
    """Ball.agent_specific_observation: [0.1 xy, 0.2 v_xy, 0.1 omega] with rolling omega (7,)."""
    omega = jnp.stack([-vel[1] / params.radius, vel[0] / params.radius, jnp.zeros_like(vel[0])])
    return jnp.concatenate([0.1 * pos, 0.2 * vel, 0.1 * omega])


def action_penalty(action, params: BallParams) -> jax.Array:
    """Ball.specific_reward magnitude: 0.5 |clip(a)|_2 (its sign is negative in the reward)."""
    return params.action_penalty * norm2(action)


# --------------------------------------------------------------------------- sensors


def pseudo_lidar(agent_pos, objects, *, num_bins: int, max_dist, visible=None) -> jax.Array:
    """Bullet-Safety-Gym's ``PseudoLIDARSensor.measure`` (world-aligned; no aliasing).

    The bearing ``atan2(x_a - x_o, y_a - y_o) + pi`` is the direction from the agent to the
    object measured clockwise from +y, in [0, 2 pi]; bin ``floor(bearing / (2 pi / n))``
    receives ``1 - d / max_dist`` for ``d <= max_dist``, each bin keeping the maximum.  A
    bearing of exactly 2 pi (an object due north with ``x_a - x_o = +0.0``, where the
    original raises IndexError) goes to bin 0, where it belongs.  ``visible`` (optional
    bool per object) hides objects; the original passes every object.
    """
    objects = jnp.reshape(objects, (-1, 2))
    dx = agent_pos[0] - objects[:, 0]
    dy = agent_pos[1] - objects[:, 1]
    dist = jnp.sqrt(dx * dx + dy * dy)
    bearing = jnp.arctan2(dx, dy) + jnp.pi
    index = jnp.floor(bearing / (TWO_PI / num_bins)).astype(jnp.int32) % num_bins
    reading = jnp.where(dist <= max_dist, 1.0 - dist / max_dist, 0.0)
    if visible is not None:
        reading = jnp.where(visible, reading, 0.0)
    hits = jnp.where(jnp.arange(num_bins) == index[:, None], reading[:, None], 0.0)
    return jnp.max(hits, axis=0, initial=0.0)


def ray_directions(num_rays: int) -> np.ndarray:
    """LIDARSensor rays: ray i at 2 pi i / n, direction (sin, cos), clockwise from +y."""
    angle = TWO_PI * np.arange(num_rays) / num_rays
    return np.stack([np.sin(angle), np.cos(angle)], axis=1).astype(np.float32)


def ray_to_walls(origin, directions, normals: np.ndarray, wall_distance) -> jax.Array:
    """Distance along each ray (``directions`` (k, 2)) to the nearest wall face; inf if none."""
    dn = directions @ jnp.asarray(normals).T  # (k, walls)
    gap = wall_distance - origin @ jnp.asarray(normals).T  # (walls,)
    t = jnp.where(dn > 1e-9, gap / jnp.where(dn > 1e-9, dn, 1.0), jnp.inf)
    return jnp.min(t, axis=1)


# --------------------------------------------------------------------------- placement


def first_valid(candidates, slack):
    """The first candidate with ``slack >= 0``: with i.i.d. candidates this is exactly the
    original's draw-until-valid.  If none is valid, the one with the largest slack (the
    least violation of the keep-outs).  ``candidates`` (k, 2), ``slack`` (k,)."""
    valid = slack >= 0.0
    index = jnp.where(jnp.any(valid), jnp.argmax(valid), jnp.argmax(slack))
    return candidates[index]


def place_objects(key, num: int, tries: int, extent, fixed, fixed_min, pair_min):
    """``num`` objects, one after the other, each uniform in ``[-extent, extent]^2``, at least
    ``fixed_min[j]`` from ``fixed[j]`` and ``pair_min`` from the objects placed before it
    (``env_utils.generate_obstacles_init_pos``).  ``tries`` candidates per object; see
    :func:`first_valid` for the fallback.  Returns (num, 2)."""
    candidates = jax.random.uniform(key, (num, tries, 2), minval=-extent, maxval=extent)
    fixed = jnp.reshape(fixed, (-1, 2))
    fixed_slack = jnp.min(
        norm2(candidates[:, :, None, :] - fixed[None, None]) - jnp.asarray(fixed_min)[None, None], axis=2
    )  # (num, tries)

    def place(layout, inputs):
        i, cands, slack = inputs
        gap = norm2(cands[:, None, :] - layout[None]) - pair_min  # (tries, num)
        gap = jnp.where(jnp.arange(num)[None] < i, gap, jnp.inf)
        chosen = first_valid(cands, jnp.minimum(slack, jnp.min(gap, axis=1)))
        return layout.at[i].set(chosen), None

    layout, _ = jax.lax.scan(place, jnp.zeros((num, 2), jnp.float32), (jnp.arange(num), candidates, fixed_slack))
    return layout
