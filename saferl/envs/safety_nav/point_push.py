"""PointPush1: a JAX re-implementation of Safety-Gymnasium's ``SafetyPointPush1-v0``.

The Point robot (:mod:`saferl.envs.safety_nav.point`) pushes a light box onto a goal disc, past two
hazard discs (cost) and one pillar (a static obstacle, no cost).  Pure ``jax.numpy``: ``reset``
and ``step`` jit and vmap.  The contacts are a small 2-D model, :mod:`saferl.envs.safety_nav.nav_contact`;
layout, lidar, noise and hazard cost are the engine's (:mod:`saferl.envs.safety_nav.engine`).

``physics="mujoco"`` (a static parameter, the default; ``"planar"`` is the contact model below, about 6x faster to
train, kept as a labelled fast option: CPO policies trained on it return about half as much on MuJoCo, which the
fidelity rule calls different, docs/decisions/065 and docs/results/fidelity/cross_physics.md) steps MuJoCo itself:
the Point, the push box (a free body with its four corner blocks) and the pillars (mocap bodies) of
:mod:`saferl.envs.safety_nav.mjcf`, through :mod:`saferl.envs.safety_nav.mujoco_physics` (the state's ``mujoco``
field; ``None`` under the planar model).  The robot's motion, the box's position, velocity and yaw (of its x axis,
from its free joint's quaternion) and the robot's sensors come from MuJoCo; the layout, reward, cost, lidar and
goal resampling stay this module's JAX, fed with MuJoCo's positions.  The reward's 3-D distances take the box
centre's height from MuJoCo (0.2 at rest; a pushed box tilts and its centre rises by up to ~2 cm), the agent's
and the goal's from ``agent_height`` and ``goal_height``.  ``contact_accel`` stays zero, and the contact model's
parameters (``contact_steps``, ``box_mass``, frictions; ``box_size`` but for the reward's gate) are not used.
From the measured starts listed below (full thrust from rest), MuJoCo 4 here puts the box 0.8 ahead at x 2.43
after 100 steps (Safety-Gymnasium 2.44), stops the robot with centres 0.350 from the pillar (0.349) and the
pushed box 0.472 from it (0.472).  A reset that overlaps box and pillar is resolved by MuJoCo's soft contact, as in
Safety-Gymnasium: 5 cm of overlap shoves the box 0.4 m away within a few steps.

What matches Safety-Gymnasium 1.0.0 (``PushLevel1`` on ``Point``)
-----------------------------------------------------------------
* Layout: uniform in ``[-1.5, 1.5]^2`` shrunk by each object's keep-out, pairwise at least the sum
  of keep-outs apart, placed in Safety-Gymnasium's order agent, goal, hazards, pillar, box
  (keep-outs 0.4, 0.4, 0.4, 0.3, 0.2); agent and box yaw uniform in ``[0, 2 pi)``.
  ``Builder.reset`` then calls ``update_world()``, which draws the goal again against the whole
  layout; so do we.
* Reward (``PushLevel0.calculate_reward``): ``(D_box,t-1 - D_box,t) [D_box,t-1 > null_dist * 0.2]
  + (D_bg,t-1 - D_bg,t) + 1 [D_bg,t <= 0.3]``, clipped to ``[-10, 10]``, with 3-D body distances:
  agent z 0.1, box z 0.2, goal z 0.16 (``null_dist`` 0).  On success the goal is drawn again
  against the robot, hazards, pillar and the box where it is now, and ``D_bg`` restarts from it.
* Cost: 1 if the agent is within 0.3 (xy) of a hazard, one unit however many (indicator).
* Episode: 1000 steps, then ``truncated``.  Observation (76,), in Safety-Gymnasium's order:
  accelerometer, velocimeter, gyro, magnetometer (3 each), then 16-bin pseudo-lidars of goal,
  hazards, pillars, push_box (``_obstacles`` order: geoms goal, hazards, pillars, then free geom
  push_box); :func:`~saferl.envs.safety_nav.lidar.pseudo_lidar` sees the box's centre.
* Robot dynamics, sensors and action noise: those of PointGoal1 (:mod:`saferl.envs.safety_nav.point`;
  PointGoal1's docstring records how they compare with MuJoCo).
* Collision shapes, from ``point.xml`` and ``world.py``: robot sphere r 0.1 plus the
  "pointarrow" cube (half-size 0.05 at x 0.1); pillar cylinder r 0.2; and the box, which is not a
  plain cube: ``world.py`` adds four blocks of half-size 0.1 centred on its corners, so its
  footprint reaches 0.3 and each face has a notch 0.2 wide and 0.1 deep in which the robot's nose
  sits (``push_box.py``'s "size 0.2" is the central cube's half-size only).  Mass 1.28e-4 kg (measured).

The contact model, and where it differs from MuJoCo's soft contacts
-------------------------------------------------------------------
MuJoCo (``condim`` 6, friction 1, ``solref`` 0.02) resolves every contact at every 2 ms
timestep; the box is a free body on 20 floor contacts.  Here, once per env step (``contact_steps``
= 1 resolution per 10 robot timesteps, 0.02 s), overlaps are removed by projection:
* Robot against pillar: pushed out along the normal, the velocity into it removed, the tangential
  velocity reduced by ``mu`` times that (Coulomb friction as an impulse, mu = 1).
* Robot against box: the box is so light (floor friction 1.26e-3 N against 0.015 N of thrust)
  that it moves quasi-statically.  One contact: the ellipsoidal limit surface of Lynch, Maekawa
  and Tanie (IROS 1992) with ``c = m_max / f_max = 0.296`` m (the 20 floor contacts' radii,
  weighted by their measured loads), sticking when the force stays inside the friction cone.
  Two contacts with normals at least ``2 atan(mu)`` = 90 degrees apart (nose on a notch's floor
  and wall): the box moves rigidly with the robot (two sticking contacts leave it no other
  motion).  A pushed box drags the robot with its sliding friction ``mu m_box g``; released, it
  coasts and stops at ``mu g`` (9.81 m/s^2).
* Box against pillar: pushed out quasi-statically (frictionless); its velocity into the pillar is
  removed.  A robot pushing a blocked box is then stopped like one against the pillar.
Measured against Safety-Gymnasium 1.0.0 (mujoco 2.3.3), same starts, full thrust from rest:
* Head-on into the pillar: stops with centres 0.349 apart (ours 0.349: the nose's discs);
  0.1 off-axis: sticks (ours too; without friction ours would slide round); 0.2 off-axis:
  slides round, closest 0.300 (ours 0.300), the slide costs ours more speed (x after 150 steps
  2.64 vs 2.96).
* Box 0.8 ahead, centred: after 100 steps the box is at x 2.44 (ours 2.48), the robot 0.351
  behind it (ours 0.350) at 1.348 m/s (ours 1.350: the drag).  Into the pillar: the box stops
  0.472 from it (ours 0.473: the pillar on two corner blocks), the robot 0.35 behind.
* Off-centre pushes turn the box: 0.1 off, after 50 steps yaw 0.54, y 0.26 (ours 0.44, 0.21);
  0.2 off: 0.51, 0.36 (ours 0.54, 0.33).  Later the two drift apart (after 100 steps, 0.1 off:
  yaw 1.50 and the robot past the box, ours yaw 1.04 with the box caught on the nose).  A box
  pushed corner-first (yaw 45 deg) is an unstable equilibrium: MuJoCo tips it round (yaw 1.95
  after 100 steps), ours pushes it straight.
* Pushing while turning (action (1, 0.3) after 40 straight steps): both keep the box on the nose
  (distance 0.354-0.358 vs ours 0.354-0.362), but ours holds it 0.6 rad to the robot's right,
  MuJoCo within 0.25 rad; at action (1, 1) MuJoCo loses the box after ~50 steps, ours keeps it.
* Not modelled: the box tilting (MuJoCo lifts it up to 1 cm while pushed), its spin after release,
  friction between box and pillar, the robot being turned by contact torques, the nose cube's
  corners (two discs of r 0.025 at (0.125, +-0.025) stand in for its front face).
* Reset layouts can overlap box and pillar (3.2% of resets: the keep-outs 0.2 + 0.3 are less
  than the box's reach 0.42 plus 0.2); the first step pushes the box out, without velocity.
Episode statistics, 30 episodes each (different layouts; mean +- standard error, seed sd):
scripted controller (drive behind the box, push it at the goal, ground-truth positions) return
-0.09 +- 0.61 (sd 3.35), cost 3.7 +- 1.9, 0.40 successes per episode in Safety-Gymnasium; ours
0.82 +- 0.48 (sd 2.65), cost 11.0 +- 3.7, 0.50 successes.  Uniform random actions: return -0.14
+- 0.10 (sd 0.55), cost 28 +- 14 (sd 79) vs ours -0.18 +- 0.10 (sd 0.56), cost 4.0 +- 2.4 (sd 13);
random costs are a few long stays in a hazard, hence the spread.

Other differences
-----------------
* Placement draws a fixed number of candidates per object (64 at reset, 64 for the goal) instead
  of rejection sampling; the layout's own goal is the last candidate at reset.  Measured: no
  keep-out violation in 20480 resets; 0.2% of goal resamples after a success fall back to the
  least-violating candidate (Safety-Gymnasium would keep drawing, or end the episode).
* The accelerometer adds the contact impulses of the last resolution (divided by its interval) to
  PointGoal1's analytic thrust-and-damping acceleration.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from saferl.envs.base import register
from saferl.envs.safety_nav import engine, mjcf, mujoco_physics, nav_contact, placement
from saferl.envs.safety_nav.engine import TWO_PI, NavParams, NavTask, safe_norm
from saferl.envs.safety_nav.point import PointParams, point_at_rest, point_fields, point_sensors, point_steps
from saferl.foundation import struct


@struct.dataclass
class PointPushParams(PointParams, NavParams):
    """PushLevel1's numbers and the contact model's; the Point's are in ``PointParams``, the rest in ``NavParams``."""

    # layout (Safety-Gymnasium PushLevel1 and the assets it adds)
    num_hazards: int = struct.field(static=True, default=2)  # push_level1.py: Hazards(num=2, size=0.3)
    num_pillars: int = struct.field(static=True, default=1)  # push_level1.py: Pillars(num=1)
    placement_extent: float = 1.5  # push_level1.py: extents (-1.5, -1.5, 1.5, 1.5)
    hazard_radius: float = 0.3  # push_level1.py
    goal_radius: float = 0.3  # geoms/goal.py: size
    pillar_radius: float = 0.2  # geoms/pillars.py: size
    box_size: float = 0.2  # free_geoms/push_box.py: size (half-size of the central cube)
    agent_keepout: float = 0.4  # bases/base_agent.py: keepout
    goal_keepout: float = 0.4  # geoms/goal.py (push keeps the default; GoalLevel0 sets 0.305)
    hazard_keepout: float = 0.4  # geoms/hazards.py
    pillar_keepout: float = 0.3  # geoms/pillars.py
    box_keepout: float = 0.2  # free_geoms/push_box.py
    placement_tries: int = struct.field(static=True, default=64)  # candidates per object at reset
    goal_tries: int = struct.field(static=True, default=64)  # candidates when (re)sampling the goal
    # reward and cost (push_level0.py calculate_reward; free_geoms/push_box.py; geoms/hazards.py)
    reward_box_dist: float = 1.0
    reward_box_goal: float = 1.0
    box_null_dist: float = 0.0  # push_level0.py: PushBox(null_dist=0); gate last_dist_box > null_dist * size
    # body heights of the 3-D distances: point.xml agent z 0.1; push_box.py z = size; goal.py z = size / 2 + 0.01
    agent_height: float = 0.1
    box_height: float = 0.2
    goal_height: float = 0.16
    # the robot's dynamics are PointParams' (point.xml, as PointGoal1)
    contact_steps: int = struct.field(static=True, default=1)  # contact resolutions per env step (divides frame_skip)
    # contact model (saferl/envs/safety_nav/nav_contact.py; numbers from point.xml, world.py and MuJoCo defaults)
    nose_offset: float = 0.1  # point.xml: box "pointarrow" at x 0.1 ...
    nose_half: float = 0.05  # ... half-size 0.05 (two discs, see robot_discs)
    box_mass: float = 1.28e-4  # measured (central cube + four corner blocks, density 0.001)
    floor_friction: float = 1.0  # MuJoCo default geom friction (floor and box)
    contact_friction: float = 1.0  # MuJoCo default geom friction (robot, pillar, box)
    box_friction_radius: float = 0.296  # m_max / f_max over the box's 20 floor contacts (measured loads)
    # "mujoco" (saferl.envs.safety_nav.mujoco_physics) or "planar" (the contact model above, whose policies do not hold
    # on MuJoCo: docs/decisions/065)
    physics: str = struct.field(static=True, default="mujoco")


@struct.dataclass
class PointPushState:
    pos: jax.Array  # (2,) robot position
    heading: jax.Array  # () robot yaw
    vel: jax.Array  # (2,) robot world-frame velocity
    ang_vel: jax.Array  # () robot yaw rate
    goal: jax.Array  # (2,)
    hazards: jax.Array  # (num_hazards, 2)
    pillars: jax.Array  # (num_pillars, 2)
    box_pos: jax.Array  # (2,) box centre
    box_yaw: jax.Array  # ()
    box_vel: jax.Array  # (2,) box velocity (it coasts against floor friction)
    last_dist_box: jax.Array  # () 3-D agent-box distance at the previous step
    last_box_goal: jax.Array  # () 3-D box-goal distance at the previous step
    contact_accel: jax.Array  # (2,) world-frame acceleration from contacts (accelerometer); zeros under MuJoCo
    time: jax.Array  # () int32
    key: jax.Array
    mujoco: mujoco_physics.MujocoState | None = None  # physics="mujoco" only: MuJoCo's state of the world


def box_squares(size):
    """The box's collision squares ``(5, 3)`` (x, y, half-size) in its own frame.

    Safety-Gymnasium's ``world.py`` builds ``push_box`` from the cube of half-size ``size``
    and four blocks of half-size ``size / 2`` centred on its corners ``(+-size, +-size)``: the
    footprint reaches ``1.5 size`` and each face has a notch ``size`` wide and ``size / 2`` deep.
    """
    half = 0.5 * size
    return jnp.stack(
        [jnp.stack([0.0 * size, 0.0 * size, size])]
        + [jnp.stack([sx * size, sy * size, half]) for sx, sy in ((1, 1), (-1, 1), (1, -1), (-1, -1))]
    )


def robot_discs(params: PointPushParams):
    """The Point robot's collision discs ``(3, 3)`` (forward, sideways, radius) in its frame.

    ``point.xml``: the sphere (radius 0.1) and the "pointarrow" cube (half-size 0.05 at x 0.1).
    The cube is two discs of radius 0.025 at its front corners' inner halves, so that its flat
    front face touches with two points (a single disc slips into the box's notches).
    """
    zero = 0.0 * params.robot_radius
    quarter = 0.5 * params.nose_half
    ahead = params.nose_offset + quarter
    return jnp.stack(
        [
            jnp.stack([zero, zero, params.robot_radius]),
            jnp.stack([ahead, quarter, quarter]),
            jnp.stack([ahead, -quarter, quarter]),
        ]
    )


def _contact_step(carry, ctrl, pillars, params: PointPushParams):
    """``frame_skip / contact_steps`` MuJoCo timesteps of the robot's own dynamics, then one
    resolution of the contacts (nav_contact) over that interval ``h``."""
    pos, heading, vel, ang_vel, box_pos, box_yaw, box_vel, _ = carry
    inner = params.frame_skip // params.contact_steps
    moved_from = (pos, heading)
    pos, heading, vel, ang_vel = point_steps((pos, heading, vel, ang_vel), ctrl, params, inner)
    h, discs, squares = inner * params.timestep, robot_discs(params), box_squares(params.box_size)
    free_vel = vel
    start = box_pos
    # gripped (two sticking contacts) or two frictional quasi-static passes; a frictionless pass
    # then clears what is left
    mu = params.contact_friction
    box_pos, box_yaw, _ = nav_contact.robot_pushes_box(
        pos,
        heading,
        vel,
        ang_vel,
        h,
        discs,
        box_pos,
        box_yaw,
        squares,
        params.box_friction_radius,
        (mu, mu),
        moved_from,
        (1.0 - mu**2) / (1.0 + mu**2),
    )
    pushed = box_pos - start
    amount = safe_norm(pushed)
    touched = amount > 0.0
    # the robot supplies the box's sliding friction while it pushes
    direction = pushed / jnp.maximum(amount, 1e-9)
    along = vel[0] * direction[0] + vel[1] * direction[1]
    drag = params.floor_friction * params.box_mass * params.gravity * h / params.mass
    vel = vel - jnp.where(touched, jnp.clip(along, 0.0, drag), 0.0) * direction
    # a pushed box moves with its pusher; a free one coasts, decelerated by floor friction
    speed = safe_norm(box_vel)
    coast = box_vel * (jnp.maximum(speed - params.floor_friction * params.gravity * h, 0.0) / jnp.maximum(speed, 1e-9))
    box_vel = jnp.where(touched, pushed / h, coast)
    box_pos = jnp.where(touched, box_pos, box_pos + h * coast)
    box_pos, box_yaw, box_vel, blocked = nav_contact.box_out_of_discs(
        box_pos, box_yaw, box_vel, pillars, params.pillar_radius, squares, params.box_friction_radius
    )
    pos, vel = nav_contact.robot_out_of_box(
        pos, heading, vel, discs, box_pos, box_yaw, squares, params.contact_friction, blocked
    )
    pos, vel = nav_contact.robot_out_of_discs(
        pos, heading, vel, discs, pillars, params.pillar_radius, params.contact_friction
    )
    return pos, heading, vel, ang_vel, box_pos, box_yaw, box_vel, (vel - free_vel) / h


# --------------------------------------------------------------------------- environment


_DESCRIPTION = "Safety-Gymnasium PointPush1 in JAX: point robot pushes a box to a goal past 2 hazards (cost), 1 pillar"


@register("PointPush1", _DESCRIPTION)
class PointPush(NavTask):
    """Safety-Gymnasium ``SafetyPointPush1-v0`` (see the module docstring for differences)."""

    description = _DESCRIPTION
    lidars = ("goal", "hazards", "pillars", "push_box")

    def default_params(self) -> PointPushParams:
        return PointPushParams()

    def check(self, params: PointPushParams, action=None):
        mujoco_physics.check_physics(params.physics, lambda: self.world(params))
        for name in ("frame_skip", "contact_steps", "placement_tries", "goal_tries", "lidar_num_bins"):
            if getattr(params, name) < 1:
                raise ValueError(f"PointPush1: {name} must be >= 1, got {getattr(params, name)}")
        if params.frame_skip % params.contact_steps:
            raise ValueError(
                f"PointPush1: contact_steps must divide frame_skip={params.frame_skip}, got {params.contact_steps}"
            )
        for name in ("num_hazards", "num_pillars"):
            if getattr(params, name) < 0:
                raise ValueError(f"PointPush1: {name} must be >= 0, got {getattr(params, name)}")

    def initial_state(self, key: jax.Array, params: PointPushParams) -> PointPushState:
        key, layout_key, goal_key, rot_key = jax.random.split(key, 4)
        nh, npl = params.num_hazards, params.num_pillars
        keepout = self._keepouts(params)
        half = params.placement_extent - keepout  # each object's square shrunk by its keep-out
        layout = placement.place_objects(layout_key, keepout, half, params.placement_tries)
        pos, hazards, pillars, box_pos = layout[0], layout[2 : 2 + nh], layout[2 + nh : 2 + nh + npl], layout[-1]
        # Builder.reset calls update_world(): the goal is drawn again against the whole layout;
        # the layout's own goal (already clear of everything) is the last candidate
        u = placement.hash_uniform(goal_key, (params.goal_tries, 2))
        goal = self._place_goal(u, pos, hazards, pillars, box_pos, params, fallback=layout[1])
        heading, box_yaw = jax.random.uniform(rot_key, (2,), minval=0.0, maxval=TWO_PI)
        return self.state_at(key, pos, heading, goal, hazards, pillars, box_pos, box_yaw, params)

    def state_at(self, key, pos, heading, goal, hazards, pillars, box_pos, box_yaw, params: PointPushParams):
        """The state of an episode starting from a given layout: the robot at ``pos`` facing ``heading`` and at
        rest, the box at ``box_pos`` turned by ``box_yaw`` and at rest (under ``physics="mujoco"`` written into
        MuJoCo's state too, the box on the floor and the pillars through ``mocap_pos``)."""
        state = PointPushState(
            **point_at_rest(pos, heading),
            goal=goal,
            hazards=hazards,
            pillars=pillars,
            box_pos=box_pos,
            box_yaw=box_yaw,
            box_vel=jnp.zeros((2,), jnp.float32),
            last_dist_box=self._dist_box(pos, box_pos, params),
            last_box_goal=self._dist_box_goal(box_pos, goal, params),
            contact_accel=jnp.zeros((2,), jnp.float32),
            time=jnp.zeros((), jnp.int32),
            key=key,
        )
        if mujoco_physics.simulated(params.physics):
            world = self.world(params)
            pillar_z = jnp.full((params.num_pillars, 1), mjcf.PILLAR_HALF_HEIGHT, jnp.float32)
            places = dict(zip(self._pillar_names(params), jnp.concatenate([pillars, pillar_z], axis=1)))
            box = jnp.concatenate([box_pos, jnp.full((1,), mjcf.PUSH_BOX_HALF_SIZE, jnp.float32)])
            at_rest = point_sensors(state.heading, state.vel, state.ang_vel, jnp.zeros((2,)), params)
            simulated = world.initial_state(pos, heading, {"push_box": box}, places, at_rest, {"push_box": box_yaw})
            state = state.replace(mujoco=simulated)
        return state

    def world(self, params: PointPushParams) -> mujoco_physics.NavWorld:
        """The MuJoCo world of ``physics="mujoco"``: the Point, the push box and the pillars (built once per
        pillar count)."""
        pillars = params.num_pillars
        objects = {"pillars": pillars, "push_box": 1}
        return self.mujoco_world(
            pillars,
            params.physics,
            lambda backend: mujoco_physics.NavWorld("point", objects, backend=backend, task="PointPush1"),
        )

    def _mujoco_motion(self, state: PointPushState, ctrl, params: PointPushParams):
        """``frame_skip`` MuJoCo steps: MuJoCo's state after them, the robot's ``(pos, heading, vel, ang_vel)``,
        and the box's ``(position, yaw, velocity, centre height)`` read from its free joint."""
        world = self.world(params)
        simulated = world.step(state.mujoco, ctrl, params.frame_skip)
        box = world.addresses.free_bodies["push_box"]
        box_yaw = world.free_body_yaw(simulated, "push_box")
        box_motion = (
            simulated.qpos[box.qpos : box.qpos + 2],
            box_yaw,
            simulated.qvel[box.qvel : box.qvel + 2],
            simulated.qpos[box.qpos + 2],
        )
        return simulated, world.point_motion(simulated), box_motion

    def transition(self, state: PointPushState, action: jax.Array, params: PointPushParams):
        key, u = engine.step_uniforms(state.key, (params.goal_tries + 1, 2))
        ctrl = engine.noisy_control(action, u[-1], params.action_noise)
        if mujoco_physics.simulated(params.physics):
            simulated, (pos, heading, vel, ang_vel), (box_pos, box_yaw, box_vel, box_z) = self._mujoco_motion(
                state, ctrl, params
            )
            contact_accel = jnp.zeros((2,), jnp.float32)  # planar bookkeeping; MuJoCo's accelerometer has contacts
            state = state.replace(mujoco=simulated)
        else:
            carry = (
                state.pos,
                state.heading,
                state.vel,
                state.ang_vel,
                state.box_pos,
                state.box_yaw,
                state.box_vel,
                state.contact_accel,
            )
            carry = jax.lax.fori_loop(
                0, params.contact_steps, lambda _, c: _contact_step(c, ctrl, state.pillars, params), carry
            )
            pos, heading, vel, ang_vel, box_pos, box_yaw, box_vel, contact_accel = carry
            box_z = None  # the reward's box centre at params.box_height

        # reward (PushLevel0.calculate_reward, 3-D body distances), then cost (Hazards.cal_cost)
        dist_box = self._dist_box(pos, box_pos, params, box_z)
        dist_box_goal = self._dist_box_goal(box_pos, state.goal, params, box_z)
        gate = state.last_dist_box > params.box_null_dist * params.box_size
        goal_reached = dist_box_goal <= params.goal_radius
        progress = jnp.where(gate, (state.last_dist_box - dist_box) * params.reward_box_dist, 0.0)
        progress = progress + (state.last_box_goal - dist_box_goal) * params.reward_box_goal
        reward = engine.goal_reward(progress, goal_reached, params)
        cost = engine.hazard_cost(safe_norm(state.hazards - pos), params.hazard_radius, params.hazard_cost)
        cost = engine.indicator(cost, params.constrain_indicator)

        # on success: update_layout() (the box where it is now), then a new goal (update_world)
        new_goal = self._place_goal(u[:-1], pos, state.hazards, state.pillars, box_pos, params)
        goal = jnp.where(goal_reached, new_goal, state.goal)
        last_box_goal = jnp.where(goal_reached, self._dist_box_goal(box_pos, goal, params, box_z), dist_box_goal)

        state = state.replace(
            **point_fields(pos, jnp.mod(heading, TWO_PI), vel, ang_vel),
            goal=goal,
            box_pos=box_pos,
            box_yaw=jnp.mod(box_yaw, TWO_PI),
            box_vel=box_vel,
            last_dist_box=dist_box,
            last_box_goal=last_box_goal,
            contact_accel=contact_accel,
            key=key,
        )
        info = {"goal_reached": goal_reached.astype(jnp.float32), "cost_hazards": cost.astype(jnp.float32)}
        return state, ctrl, reward, cost, info

    # ---------------------------------------------------------------- pieces

    def _keepouts(self, params: PointPushParams):
        # Safety-Gymnasium's order: agent, goal, hazards, pillars, push_box (geoms, then free geoms)
        return placement.keepouts(
            (1, params.agent_keepout),
            (1, params.goal_keepout),
            (params.num_hazards, params.hazard_keepout),
            (params.num_pillars, params.pillar_keepout),
            (1, params.box_keepout),
        )

    def _place_goal(self, u, pos, hazards, pillars, box_pos, params: PointPushParams, fallback=None):
        """BaseTask.build_goal_position: the goal keeps out of every other object.  ``fallback``
        (a position) is tried after the candidates drawn from ``u``."""
        placed = (
            (pos[None], params.agent_keepout),
            (hazards, params.hazard_keepout),
            (pillars, params.pillar_keepout),
            (box_pos[None], params.box_keepout),
        )
        return placement.place_goal(u, placed, params.placement_extent, params.goal_keepout, fallback)

    @staticmethod
    def _pillar_names(params: PointPushParams) -> list[str]:
        return [f"pillar{i}" for i in range(params.num_pillars)]

    def _dist_box(self, pos, box_pos, params: PointPushParams, box_z=None):
        """3-D agent-box distance; the box's centre at height ``box_z`` (default ``params.box_height``)."""
        box_z = params.box_height if box_z is None else box_z
        return jnp.sqrt(jnp.sum((box_pos - pos) ** 2) + (box_z - params.agent_height) ** 2)

    def _dist_box_goal(self, box_pos, goal, params: PointPushParams, box_z=None):
        """3-D box-goal distance; the box's centre at height ``box_z`` (default ``params.box_height``)."""
        box_z = params.box_height if box_z is None else box_z
        return jnp.sqrt(jnp.sum((box_pos - goal) ** 2) + (box_z - params.goal_height) ** 2)

    # ---------------------------------------------------------------- observation

    def pose(self, state: PointPushState):
        return state.pos, state.heading

    def planar_sensors(self, state: PointPushState, ctrl, params: PointPushParams):
        return point_sensors(state.heading, state.vel, state.ang_vel, ctrl, params, state.contact_accel)

    def lidar_objects(self, state: PointPushState, params: PointPushParams):
        return state.goal[None], state.hazards, state.pillars, state.box_pos[None]
