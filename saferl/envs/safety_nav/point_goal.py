"""PointGoal1: a JAX re-implementation of Safety-Gymnasium's ``SafetyPointGoal1-v0``.

A point robot (a sphere with a forward thruster and a turning servo) drives on
a plane towards a goal disc while avoiding eight hazard discs; one vase stands
around but is not constrained.  Everything is pure ``jax.numpy``, so ``reset``
and ``step`` can be jitted and vmapped over thousands of environments.  This module holds the
task (its objects, reward, cost and observation order); the robot is
:mod:`saferl.envs.safety_nav.point`, the engine it runs on :mod:`saferl.envs.safety_nav.engine`.

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
* Lidar: :func:`~saferl.envs.safety_nav.lidar.pseudo_lidar` is Safety-Gymnasium's ``_obs_lidar_pseudo``:
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
  seeded by the state's JAX key (see :func:`~saferl.envs.safety_nav.placement.hash_uniform`), for speed.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from saferl.envs.base import register
from saferl.envs.safety_nav import engine, mjcf, mujoco_physics, placement
from saferl.envs.safety_nav.engine import TWO_PI, NavParams, NavTask, safe_norm
from saferl.envs.safety_nav.point import PointParams, point_at_rest, point_fields, point_sensors, point_steps
from saferl.foundation import struct


@struct.dataclass
class PointGoalParams(PointParams, NavParams):
    """GoalLevel1's numbers; the Point's are in ``PointParams``, the shared reward, cost and lidar in ``NavParams``."""

    # layout (Safety-Gymnasium GoalLevel1)
    num_hazards: int = struct.field(static=True, default=8)
    num_vases: int = struct.field(static=True, default=1)
    placement_extent: float = 1.5  # placements in [-extent, extent]^2
    hazard_radius: float = 0.2
    goal_radius: float = 0.3
    vase_radius: float = 0.1  # vase box half-size, used as a disc radius
    agent_keepout: float = 0.4
    goal_keepout: float = 0.305
    hazard_keepout: float = 0.18
    vase_keepout: float = 0.15
    placement_tries: int = struct.field(static=True, default=16)  # candidates per object at reset
    goal_tries: int = struct.field(static=True, default=32)  # candidates when resampling the goal
    # reward (GoalLevel0: reward_distance)
    reward_distance: float = 1.0
    # "planar" (the JAX model of saferl.envs.safety_nav.point) or "mujoco" (saferl.envs.safety_nav.mujoco_physics)
    physics: str = struct.field(static=True, default="planar")


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
    mujoco: mujoco_physics.MujocoState | None = None  # physics="mujoco" only: MuJoCo's state of the world


_DESCRIPTION = "Safety-Gymnasium PointGoal1 in JAX: point robot to a goal past 8 hazards (cost) and 1 vase"


@register("PointGoal1", _DESCRIPTION)
class PointGoal(NavTask):
    """Safety-Gymnasium ``SafetyPointGoal1-v0`` (see the module docstring for differences)."""

    description = _DESCRIPTION
    lidars = ("goal", "hazards", "vases")
    risk_defaults = {"rho": 100.0, "epsilon": 0.05, "gamma_c": 1.0}  # Canary Sec. 6: PointGoal rho = 100

    def default_params(self) -> PointGoalParams:
        return PointGoalParams()

    def check(self, params: PointGoalParams, action=None) -> None:
        mujoco_physics.check_physics(params.physics, lambda: self.world(params))

    def world(self, params: PointGoalParams) -> mujoco_physics.NavWorld:
        """The MuJoCo world of ``physics="mujoco"`` or ``"mjx"``: the Point and the vases (built once per vase count
        and physics)."""
        vases = params.num_vases
        return self.mujoco_world(
            vases,
            params.physics,
            lambda backend: mujoco_physics.NavWorld("point", {"vases": vases}, backend=backend, task="PointGoal1"),
        )

    def initial_state(self, key: jax.Array, params: PointGoalParams) -> PointGoalState:
        key, layout_key, rot_key = jax.random.split(key, 3)
        nh = params.num_hazards
        # Safety-Gymnasium's order: agent, goal, hazards, vases
        keepout = placement.keepouts(
            (1, params.agent_keepout),
            (1, params.goal_keepout),
            (nh, params.hazard_keepout),
            (params.num_vases, params.vase_keepout),
        )
        half = params.placement_extent - keepout  # each object's square shrunk by its keep-out
        layout = placement.place_objects(layout_key, keepout, half, params.placement_tries)
        pos, goal = layout[0], layout[1]
        robot = point_at_rest(pos, jax.random.uniform(rot_key, (), minval=0.0, maxval=TWO_PI))
        vases = layout[2 + nh :]
        state = PointGoalState(
            **robot,
            goal=goal,
            hazards=layout[2 : 2 + nh],
            vases=vases,
            last_dist_goal=safe_norm(goal - pos),
            time=jnp.zeros((), jnp.int32),
            key=key,
        )
        if mujoco_physics.simulated(params.physics):
            world = self.world(params)
            vase_z = jnp.full((params.num_vases, 1), mjcf.VASE_HALF_SIZE - mjcf.VASE_SINK)
            places = dict(zip(self._vase_names(params), jnp.concatenate([vases, vase_z], axis=1)))
            at_rest = point_sensors(robot["heading"], robot["vel"], robot["ang_vel"], jnp.zeros((2,)), params)
            state = state.replace(mujoco=world.initial_state(pos, robot["heading"], places, {}, at_rest))
        return state

    def transition(self, state: PointGoalState, action: jax.Array, params: PointGoalParams):
        key, u = engine.step_uniforms(state.key, (params.goal_tries + 1, 2))
        ctrl = engine.noisy_control(action, u[-1], params.action_noise)
        if mujoco_physics.simulated(params.physics):
            world = self.world(params)
            simulated = world.step(state.mujoco, ctrl, params.frame_skip)
            pos, heading, vel, ang_vel = world.point_motion(simulated)
            heading = jnp.mod(heading, TWO_PI)
            vases = world.free_body_xy(simulated, self._vase_names(params))
            state = state.replace(mujoco=simulated)
        else:
            carry = (state.pos, state.heading, state.vel, state.ang_vel)
            pos, heading, vel, ang_vel = point_steps(carry, ctrl, params, params.frame_skip)
            heading = jnp.mod(heading, TWO_PI)
            vases = self._push_vases(state.vases, pos, heading, params)

        # reward (GoalLevel0.calculate_reward), then cost (Hazards.cal_cost)
        dist_goal = safe_norm(state.goal - pos)
        goal_reached = dist_goal <= params.goal_radius
        progress = (state.last_dist_goal - dist_goal) * params.reward_distance
        reward = engine.goal_reward(progress, goal_reached, params)
        cost = engine.hazard_cost(safe_norm(state.hazards - pos), params.hazard_radius, params.hazard_cost)
        cost = engine.indicator(cost, params.constrain_indicator)

        # goal resampling on arrival (BaseTask.build_goal_position with the current layout)
        placed = (
            (pos[None], params.agent_keepout),
            (state.hazards, params.hazard_keepout),
            (vases, params.vase_keepout),
        )
        new_goal = placement.place_goal(u[:-1], placed, params.placement_extent, params.goal_keepout)
        goal = jnp.where(goal_reached, new_goal, state.goal)
        last_dist_goal = jnp.where(goal_reached, safe_norm(goal - pos), dist_goal)

        state = state.replace(
            **point_fields(pos, heading, vel, ang_vel), goal=goal, vases=vases, last_dist_goal=last_dist_goal, key=key
        )
        info = {"goal_reached": goal_reached.astype(jnp.float32), "cost_hazards": cost.astype(jnp.float32)}
        return state, ctrl, reward, cost, info

    @staticmethod
    def _vase_names(params: PointGoalParams) -> list[str]:
        return [f"vase{i}" for i in range(params.num_vases)]

    def _push_vases(self, vases, pos, heading, params: PointGoalParams):
        """Kinematic vase: pushed radially out of the robot's disc to touching distance."""
        delta = vases - pos
        dist = safe_norm(delta)[:, None]
        forward = jnp.stack([jnp.cos(heading), jnp.sin(heading)])
        direction = jnp.where(dist > 1e-6, delta / jnp.maximum(dist, 1e-6), forward)
        overlap = jnp.maximum(params.robot_radius + params.vase_radius - dist, 0.0)
        return vases + direction * overlap

    # ---------------------------------------------------------------- observation

    def pose(self, state: PointGoalState):
        return state.pos, state.heading

    def planar_sensors(self, state: PointGoalState, ctrl, params: PointGoalParams):
        return point_sensors(state.heading, state.vel, state.ang_vel, ctrl, params)

    def lidar_objects(self, state: PointGoalState, params: PointGoalParams):
        return state.goal[None], state.hazards, state.vases
