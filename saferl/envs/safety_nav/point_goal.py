"""PointGoal1: a JAX re-implementation of Safety-Gymnasium's ``SafetyPointGoal1-v0``.

A point robot (a sphere with a forward thruster and a turning servo) drives on
a plane towards a goal disc while avoiding eight hazard discs; one vase stands
around but is not constrained.  Everything is pure ``jax.numpy``, so ``reset``
and ``step`` can be jitted and vmapped over thousands of environments.

What matches Safety-Gymnasium (``GoalLevel1`` on ``Point``)
------------------------------------------------------------
* Layout: placements uniform in ``[-1.5, 1.5]^2``, each object's square shrunk by
  its own keep-out radius, and two objects at least the sum of their keep-outs
  apart.  Keep-outs: agent 0.4, goal 0.305, hazards 0.18, vase 0.15.  Objects are
  placed in Safety-Gymnasium's order (agent, goal, hazards, vase); the agent's
  heading is uniform in ``[0, 2 pi)``.
* Reward: ``reward_distance * (last_dist_goal - dist_goal)``, plus ``reward_goal``
  when ``dist_goal <= goal_radius``; clipped to ``[-10, 10]``.  On arrival the goal
  is resampled (with the keep-outs against the robot's current position, the
  hazards and the vase) and ``last_dist_goal`` becomes the distance to the new goal.
* Cost: hazard ``i`` contributes ``hazard_cost * (hazard_radius - dist_i)`` when
  ``dist_i <= hazard_radius``; with ``constrain_indicator`` (the default, as in
  Safety-Gymnasium) the step's cost is ``1.0`` if that sum is positive, else ``0.0``
  -- one unit however many hazards overlap.  Vases cost nothing in level 1.
* Episode: 1000 steps, then ``truncated``; ``terminated`` is always False.
* Observation (60,) in Safety-Gymnasium's flattened order (its observation dict is
  an ``OrderedDict``, which gymnasium flattens in insertion order, not sorted):
  accelerometer (3), velocimeter (3), gyro (3), magnetometer (3), then the 16-bin
  pseudo-lidars of goal, hazards and vases.  Sensors are in the robot frame;
  the accelerometer reads +9.81 on z at rest and the magnetometer reads the
  MuJoCo default field ``(0, -0.5, 0)`` rotated into the robot frame.
* Lidar: :func:`pseudo_lidar` is Safety-Gymnasium's ``_obs_lidar_pseudo``:
  linear closeness ``max(0, max_dist - d) / max_dist`` with ``max_dist = 3``, bin
  ``floor(angle / bin_size)`` of the robot-frame angle in ``[0, 2 pi)``, and with
  aliasing the bin above receives ``alias * sensor``, the bin below
  ``(1 - alias) * sensor`` where ``alias`` is the fractional bin position; max over
  objects per bin.
* Robot constants from ``point.xml``: timestep 0.002 s with 10 sub-steps per env
  step (``frameskip_binom_p = 1``); density 1 gives mass 0.00519 kg (sphere r=0.1
  plus the 0.1 m "arrow" box); slide damping 0.01, hinge damping 0.005; thrust is a
  motor with gear 0.3 and force range +-0.05, i.e. force ``0.3 * clip(u0, -0.05,
  0.05)`` along the heading (so ``|u0| >= 0.05`` already saturates, as in MuJoCo);
  turning is a velocity servo (kv = 1, gear 0.3, force range +-0.05), torque
  ``0.3 * clip(u1 - 0.3 * omega, -0.05, 0.05)``.  Action noise (default 0) is
  Gaussian, added after clipping, like ``Underlying.simulation_forward``.

Where the dynamics differ from the MuJoCo original, and why
------------------------------------------------------------
* No contact solver.  The sphere's zero-penetration contact with the floor and
  the robot-vase contacts are not simulated; only the joint damping and the
  actuators act on the robot.  (Level 1 has no walls, so nothing else touches it.)
* The vase is a kinematic disc (radius 0.1): after each env step, if the robot
  overlaps it, it is pushed radially out to touching distance.  The real vase is a
  free 0.2 m box of 8e-6 kg (density 0.001), so it is shoved almost weightlessly
  too; it does not tip, slide on after contact, or slow the robot.
* The body's centre of mass is taken at the joint origin.  In MuJoCo the arrow box
  moves it 1.9 cm forward, which couples turning and translation; we drop that
  coupling and use the inertia about the centre of mass (2.65e-5 kg m^2), the
  effective inertia of the hinge when the slides are free.
* Integration: semi-implicit Euler with implicit joint damping, as MuJoCo's
  default Euler integrator; but the turning servo is also integrated implicitly
  (solved exactly, with its force clamp).  MuJoCo treats that servo explicitly,
  and as ``kv * gear^2 * dt / I ~ 7 > 2`` its turn rate chatters in a period-2
  limit cycle around the set-point; ours converges to it smoothly
  (``omega = 0.3 u1 / 0.095`` unclamped, at most 3 rad/s when clamped).
* Sensors are computed analytically from the 2-D state: the accelerometer uses the
  continuous-time acceleration at the final state (as ``mj_forward`` does) but
  without contact or the centre-of-mass coupling; sensor noise is zero in both.
* Placement uses a fixed number of candidates per object, all drawn at once
  (``placement_tries = 16`` at reset, ``goal_tries = 32`` when the goal moves)
  instead of Safety-Gymnasium's 100 tries per object and 10000 layout restarts.
  If no candidate satisfies the keep-outs, the one violating them least is used
  (Safety-Gymnasium would restart the layout, or end the episode when the goal
  cannot be resampled).  Measured: no violating layout in 20000 resets; about
  1e-4 of goal resamples fall back.  The candidates come from a counter hash
  seeded by the state's JAX key (see :func:`hash_uniform`), for speed.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from saferl.foundation import struct
from saferl.envs.base import Box, EnvParams, Environment, register
from saferl.foundation.hashing import fmix32

TWO_PI = 2.0 * math.pi

# point.xml: density 1; sphere radius 0.1 and a 0.1 m cube centred 0.1 m ahead.
_SPHERE_MASS = 4.0 / 3.0 * math.pi * 0.1**3
_BOX_MASS = 0.1**3
POINT_MASS = _SPHERE_MASS + _BOX_MASS
_COM_OFFSET = _BOX_MASS * 0.1 / POINT_MASS
_INERTIA_ORIGIN = 0.4 * _SPHERE_MASS * 0.1**2 + _BOX_MASS * (0.1**2 + 0.1**2) / 12.0 + _BOX_MASS * 0.1**2
POINT_INERTIA_COM = _INERTIA_ORIGIN - POINT_MASS * _COM_OFFSET**2


@struct.dataclass
class PointGoalParams(EnvParams):
    # layout (Safety-Gymnasium GoalLevel1)
    num_hazards: int = struct.field(static=True, default=8)
    num_vases: int = struct.field(static=True, default=1)
    placement_extent: float = 1.5  # placements in [-extent, extent]^2
    hazard_radius: float = 0.2
    goal_radius: float = 0.3
    vase_radius: float = 0.1  # vase box half-size, used as a disc radius
    robot_radius: float = 0.1
    agent_keepout: float = 0.4
    goal_keepout: float = 0.305
    hazard_keepout: float = 0.18
    vase_keepout: float = 0.15
    placement_tries: int = struct.field(static=True, default=16)  # candidates per object at reset
    goal_tries: int = struct.field(static=True, default=32)  # candidates when resampling the goal
    # reward and cost
    reward_distance: float = 1.0
    reward_goal: float = 1.0
    reward_clip: float = 10.0
    hazard_cost: float = 1.0
    constrain_indicator: bool = struct.field(static=True, default=True)
    # episode
    max_steps: int = struct.field(default=1000, kw_only=True)
    # dynamics (point.xml)
    timestep: float = 0.002
    frame_skip: int = struct.field(static=True, default=10)
    mass: float = POINT_MASS
    inertia: float = POINT_INERTIA_COM
    slide_damping: float = 0.01
    hinge_damping: float = 0.005
    gear: float = 0.3
    force_limit: float = 0.05
    turn_kv: float = 1.0
    gravity: float = 9.81
    magnetic_field_y: float = -0.5
    action_noise: float = 0.0  # std of Gaussian noise added to the clipped control
    # pseudo-lidar
    lidar_num_bins: int = struct.field(static=True, default=16)
    lidar_max_dist: float = 3.0
    lidar_alias: bool = struct.field(static=True, default=True)


@struct.dataclass
class PointGoalState:
    pos: jax.Array  # (2,) robot position
    heading: jax.Array  # () yaw, radians
    vel: jax.Array  # (2,) world-frame linear velocity
    ang_vel: jax.Array  # () yaw rate
    goal: jax.Array  # (2,)
    hazards: jax.Array  # (num_hazards, 2)
    vases: jax.Array  # (num_vases, 2)
    last_dist_goal: jax.Array  # ()
    time: jax.Array  # () int32, steps taken in this episode
    key: jax.Array  # PRNG key for action noise and goal resampling


# --------------------------------------------------------------------------- lidar


def pseudo_lidar(
    robot_pos: jax.Array,
    robot_heading: jax.Array,
    object_pos: jax.Array,
    *,
    num_bins: int = 16,
    max_dist: float | None = 3.0,
    exp_gain: float = 1.0,
    alias: bool = True,
) -> jax.Array:
    """Safety-Gymnasium's pseudo-lidar of ``object_pos`` (shape ``(n, 2)``) seen from the robot.

    Bin ``i`` covers robot-frame angles ``[i, i + 1) * 2 pi / num_bins``
    (counter-clockwise from the heading).  An object's reading is
    ``max(0, max_dist - d) / max_dist`` (or ``exp(-exp_gain * d)`` when ``max_dist``
    is None); with ``alias`` the next bin gets ``frac * reading`` and the previous
    bin ``(1 - frac) * reading``, ``frac`` being the object's fractional position in
    its bin.  Each bin keeps the maximum over objects.
    """
    object_pos = jnp.reshape(object_pos, (-1, 2))
    rel = object_pos - robot_pos
    c, s = jnp.cos(robot_heading), jnp.sin(robot_heading)
    ego_x = c * rel[:, 0] + s * rel[:, 1]
    ego_y = -s * rel[:, 0] + c * rel[:, 1]
    dist = jnp.sqrt(ego_x**2 + ego_y**2)
    angle = jnp.mod(jnp.arctan2(ego_y, ego_x), TWO_PI)
    position = angle / (TWO_PI / num_bins)
    lower = jnp.floor(position)
    frac = jnp.clip(position - lower, 0.0, 1.0)
    bin_idx = lower.astype(jnp.int32) % num_bins  # the modulo guards angle rounding up to 2 pi
    if max_dist is None:
        sensor = jnp.exp(-exp_gain * dist)
    else:
        sensor = jnp.maximum(0.0, max_dist - dist) / max_dist
    bins = jnp.arange(num_bins)
    hits = jnp.where(bins == bin_idx[:, None], sensor[:, None], 0.0)
    if alias:
        up = jnp.where(bins == ((bin_idx + 1) % num_bins)[:, None], (frac * sensor)[:, None], 0.0)
        down = jnp.where(bins == ((bin_idx - 1) % num_bins)[:, None], ((1.0 - frac) * sensor)[:, None], 0.0)
        hits = jnp.maximum(hits, jnp.maximum(up, down))
    return jnp.max(hits, axis=0, initial=0.0)


# --------------------------------------------------------------------------- helpers


def hash_uniform(key, shape):
    """Uniform [0, 1) floats of ``shape``: a counter hash seeded by 64 bits drawn from ``key``.

    One threefry call for the seed, then two MurmurHash3 finaliser rounds per number:
    placement candidates need many numbers every step (both branches of an
    auto-reset run every step under ``vmap``), and threefry for each of them
    dominated the step time.  The quality is ample for choosing positions.
    """
    seed = jax.random.bits(key, (2,), jnp.uint32)
    count = math.prod(shape)
    x = jnp.arange(count, dtype=jnp.uint32) * jnp.uint32(0x9E3779B9) + seed[0]
    x = fmix32(fmix32(x) ^ seed[1])
    return jnp.reshape((x >> 8).astype(jnp.float32) * (1.0 / (1 << 24)), shape)


def safe_norm(v):
    """Euclidean norm over the last axis of size 2 (written out: XLA's CPU reductions
    over tiny axes are slow under vmap)."""
    return jnp.sqrt(v[..., 0] ** 2 + v[..., 1] ** 2)


def pick_placement(candidates, others, min_dist):
    """First candidate at least ``min_dist`` (per other object) from all ``others``;
    if none is, the one violating the keep-outs least.  ``candidates``: (k, 2).

    Written without argmax or gathers, which are slow on CPU under vmap: valid
    candidates score ``1e6 - index`` so the first wins; the rest score their
    (negative) slack.  Exact ties can only happen between invalid candidates and
    are averaged.
    """
    dx = candidates[:, 0, None] - others[None, :, 0]  # coordinates split before broadcasting
    dy = candidates[:, 1, None] - others[None, :, 1]
    dist = jnp.sqrt(dx * dx + dy * dy)
    slack = jnp.min(dist - min_dist[None, :], axis=1)
    index = jnp.arange(candidates.shape[0], dtype=jnp.float32)
    score = jnp.where(slack >= 0.0, 1e6 - index, slack)
    chosen = score == jnp.max(score)
    count = jnp.sum(chosen.astype(candidates.dtype))
    return jnp.sum(jnp.where(chosen[:, None], candidates, 0.0), axis=0) / count


def point_substep(carry, ctrl, params: PointGoalParams):
    """One MuJoCo timestep of the Point robot (the shared dynamics of the Point tasks: PointGoal1, PointPush1)."""
    pos, heading, vel, ang_vel = carry
    h = params.timestep
    direction = jnp.stack([jnp.cos(heading), jnp.sin(heading)])
    # thrust: motor, gear 0.3, force clamped to +-0.05; slide damping implicit (MuJoCo Euler)
    thrust = params.gear * jnp.clip(ctrl[0], -params.force_limit, params.force_limit)
    vel = (params.mass * vel + h * thrust * direction) / (params.mass + h * params.slide_damping)
    # turn: velocity servo, torque = gear * clip(kv (u - gear w), +-limit); solved implicitly
    i_h = params.inertia / h
    w_free = (i_h * ang_vel + params.gear * params.turn_kv * ctrl[1]) / (
        i_h + params.turn_kv * params.gear**2 + params.hinge_damping
    )
    servo = params.turn_kv * (ctrl[1] - params.gear * w_free)
    w_sat = (i_h * ang_vel + params.gear * params.force_limit * jnp.sign(servo)) / (i_h + params.hinge_damping)
    ang_vel = jnp.where(jnp.abs(servo) > params.force_limit, w_sat, w_free)
    return pos + h * vel, heading + h * ang_vel, vel, ang_vel


# --------------------------------------------------------------------------- environment


def point_sensors(heading, vel, ang_vel, ctrl, params, extra_accel=None):
    """The Point robot's 12 sensor readings in Safety-Gymnasium's order, robot frame: accelerometer (the
    thrust and slide damping over the mass, plus ``extra_accel`` (world frame, contact forces) where given;
    +gravity on z), velocimeter, gyro, magnetometer (MuJoCo's field rotated into the robot frame)."""
    c, s = jnp.cos(heading), jnp.sin(heading)

    def to_robot(v):  # world (x, y) -> robot frame
        return jnp.stack([c * v[0] + s * v[1], -s * v[0] + c * v[1]])

    thrust = params.gear * jnp.clip(ctrl[0], -params.force_limit, params.force_limit)
    accel = (thrust * jnp.stack([c, s]) - params.slide_damping * vel) / params.mass
    if extra_accel is not None:
        accel = accel + extra_accel
    zero = jnp.zeros((1,), jnp.float32)
    return jnp.concatenate([to_robot(accel), jnp.reshape(params.gravity, (1,)),
                            to_robot(vel), zero,
                            zero, zero, jnp.reshape(ang_vel, (1,)),
                            to_robot(jnp.stack([0.0, params.magnetic_field_y])), zero])


_DESCRIPTION = "Safety-Gymnasium PointGoal1 in JAX: point robot to a goal past 8 hazards (cost) and 1 vase"


@register("PointGoal1", _DESCRIPTION)
class PointGoal(Environment):
    """Safety-Gymnasium ``SafetyPointGoal1-v0`` (see the module docstring for differences)."""

    description = _DESCRIPTION
    cost_shape = ()
    config_defaults = {"num_envs": 16, "rollout_steps": 1000, "reset_pool": 1,
                       "constraint": {"type": "expected", "limit": 25.0}}
    risk_defaults = {"rho": 100.0, "epsilon": 0.05, "gamma_c": 1.0}  # Canary Sec. 6: PointGoal rho = 100

    def default_params(self) -> PointGoalParams:
        return PointGoalParams()

    # ---------------------------------------------------------------- spaces

    def observation_space(self, params: PointGoalParams) -> Box:
        n = params.lidar_num_bins
        low = jnp.concatenate([jnp.full((12,), -jnp.inf), jnp.zeros((3 * n,))])
        high = jnp.concatenate([jnp.full((12,), jnp.inf), jnp.ones((3 * n,))])
        return Box(low=low, high=high, shape=(12 + 3 * n,))

    def action_space(self, params: PointGoalParams) -> Box:
        return Box(low=-1.0, high=1.0, shape=(2,))

    # ---------------------------------------------------------------- reset

    def reset(self, key: jax.Array, params: PointGoalParams):
        key, layout_key, rot_key = jax.random.split(key, 3)
        nh, nv, k = params.num_hazards, params.num_vases, params.placement_tries
        keepout = jnp.concatenate(
            [
                jnp.stack([params.agent_keepout, params.goal_keepout]),
                jnp.full((nh,), params.hazard_keepout),
                jnp.full((nv,), params.vase_keepout),
            ]
        ).astype(jnp.float32)
        n = keepout.shape[0]
        half = params.placement_extent - keepout  # each object's square shrunk by its keep-out
        candidates = (2.0 * hash_uniform(layout_key, (n, k, 2)) - 1.0) * half[:, None, None]

        # Safety-Gymnasium's order: agent, goal, hazards, vases; each object keeps out of
        # those placed before it (a scan with a fixed-shape layout and a mask: one small
        # loop body to compile).
        def place(layout, inputs):
            i, cands = inputs
            min_dist = jnp.where(jnp.arange(n) < i, keepout + keepout[i], -jnp.inf)
            return layout.at[i].set(pick_placement(cands, layout, min_dist)), None

        layout, _ = jax.lax.scan(place, jnp.zeros((n, 2), jnp.float32), (jnp.arange(n), candidates))
        pos, goal = layout[0], layout[1]
        state = PointGoalState(
            pos=pos,
            heading=jax.random.uniform(rot_key, (), minval=0.0, maxval=TWO_PI),
            vel=jnp.zeros((2,), jnp.float32),
            ang_vel=jnp.zeros((), jnp.float32),
            goal=goal,
            hazards=layout[2 : 2 + nh],
            vases=layout[2 + nh :],
            last_dist_goal=safe_norm(goal - pos),
            time=jnp.zeros((), jnp.int32),
            key=key,
        )
        return state, self._obs(state, jnp.zeros((2,), jnp.float32), params)

    # ---------------------------------------------------------------- step

    def step(self, state: PointGoalState, action: jax.Array, params: PointGoalParams):
        key, sub = jax.random.split(state.key)
        u = hash_uniform(sub, (params.goal_tries + 1, 2))
        ctrl = jnp.clip(jnp.asarray(action, jnp.float32), -1.0, 1.0)
        gauss = math.sqrt(2.0) * jax.scipy.special.erfinv(jnp.clip(2.0 * u[-1] - 1.0, -1.0 + 1e-7, 1.0 - 1e-7))
        ctrl = ctrl + params.action_noise * gauss
        ctrl = jnp.clip(ctrl, -1.0, 1.0)  # MuJoCo clamps ctrl to ctrlrange

        carry = (state.pos, state.heading, state.vel, state.ang_vel)
        carry = jax.lax.fori_loop(0, params.frame_skip, lambda _, c: point_substep(c, ctrl, params), carry)
        pos, heading, vel, ang_vel = carry
        heading = jnp.mod(heading, TWO_PI)
        vases = self._push_vases(state.vases, pos, heading, params)

        # reward (GoalLevel0.calculate_reward), then cost (Hazards.cal_cost)
        dist_goal = safe_norm(state.goal - pos)
        goal_reached = dist_goal <= params.goal_radius
        reward = (state.last_dist_goal - dist_goal) * params.reward_distance
        reward = reward + jnp.where(goal_reached, params.reward_goal, 0.0)
        reward = jnp.clip(reward, -params.reward_clip, params.reward_clip)

        hazard_dist = safe_norm(state.hazards - pos)
        inside = hazard_dist <= params.hazard_radius
        cost = jnp.sum(jnp.where(inside, params.hazard_cost * (params.hazard_radius - hazard_dist), 0.0))
        if params.constrain_indicator:
            cost = (cost > 0.0).astype(jnp.float32)

        # goal resampling on arrival (BaseTask.build_goal_position with the current layout)
        new_goal = self._sample_goal(u[:-1], pos, state.hazards, vases, params)
        goal = jnp.where(goal_reached, new_goal, state.goal)
        last_dist_goal = jnp.where(goal_reached, safe_norm(goal - pos), dist_goal)

        time = state.time + 1
        state = PointGoalState(
            pos=pos,
            heading=heading,
            vel=vel,
            ang_vel=ang_vel,
            goal=goal,
            hazards=state.hazards,
            vases=vases,
            last_dist_goal=last_dist_goal,
            time=time,
            key=key,
        )
        obs = self._obs(state, ctrl, params)
        truncated = time >= params.max_steps
        terminated = jnp.zeros((), bool)
        info = {
            "goal_reached": goal_reached.astype(jnp.float32),
            "cost_hazards": cost.astype(jnp.float32),
        }
        return state, obs, reward.astype(jnp.float32), cost.astype(jnp.float32), terminated, truncated, info

    # ---------------------------------------------------------------- pieces

    def _sample_goal(self, u, pos, hazards, vases, params: PointGoalParams):
        half = params.placement_extent - params.goal_keepout
        candidates = (2.0 * u - 1.0) * half
        others = jnp.concatenate([pos[None], hazards, vases])
        keepout = jnp.concatenate(
            [
                jnp.reshape(params.agent_keepout, (1,)),
                jnp.full((hazards.shape[0],), params.hazard_keepout),
                jnp.full((vases.shape[0],), params.vase_keepout),
            ]
        )
        return pick_placement(candidates, others, keepout + params.goal_keepout)

    def _push_vases(self, vases, pos, heading, params: PointGoalParams):
        """Kinematic vase: pushed radially out of the robot's disc to touching distance."""
        delta = vases - pos
        dist = safe_norm(delta)[:, None]
        forward = jnp.stack([jnp.cos(heading), jnp.sin(heading)])
        direction = jnp.where(dist > 1e-6, delta / jnp.maximum(dist, 1e-6), forward)
        overlap = jnp.maximum(params.robot_radius + params.vase_radius - dist, 0.0)
        return vases + direction * overlap

    def _obs(self, state: PointGoalState, ctrl, params: PointGoalParams):
        lidar = dict(num_bins=params.lidar_num_bins, max_dist=params.lidar_max_dist, alias=params.lidar_alias)
        return jnp.concatenate(
            [
                point_sensors(state.heading, state.vel, state.ang_vel, ctrl, params),
                pseudo_lidar(state.pos, state.heading, state.goal[None], **lidar),
                pseudo_lidar(state.pos, state.heading, state.hazards, **lidar),
                pseudo_lidar(state.pos, state.heading, state.vases, **lidar),
            ]
        ).astype(jnp.float32)
