"""SafetyBallReach: Bullet-Safety-Gym's ball-to-goal task with a moving box and puddles, in JAX.

The ball dynamics, walls, sensors and placement are those of
:mod:`saferl.envs.bullet_ball.physics`; Run, Circle and Gather are in :mod:`saferl.envs.bullet_ball.ball`.
``BSG14`` marks a file of the ``bullet_safety_gym`` package in the Bullet-Safety-Gym 1.4.0 PyPI wheel; the
0.1 files are those of GitHub SvenGronauer/Bullet-Safety-Gym at df7f9a2, the version SCPO ran.

What matches the original (``ReachGoalTask``, ``obstacles.py``, ``sensors.py``)
-------------------------------------------------------------------------------
* World: SmallRoom, walls with inner faces at +-9.9 (PyBullet's contact: :mod:`saferl.envs.bullet_ball.physics`).
* Version "0.1" (default, what SCPO ran): substep 1/60 s x 1 (60 Hz), 250 steps; reward
  ``(d_{t-1} - d_t) - 0.005 |a|`` plus 5 when the goal is reached; the goal re-spawns
  uniformly in ``U[-7, 7]^2`` more than 1.5 from the ball and from every obstacle.
  Version "1.4.0": 1/60 s x 4 (15 Hz), reward ``3 (d_{t-1} - d_t) - 0.005 |a|`` plus 30,
  and the goal alternates between (-6, 6) and (6, 6).  After a success ``d_{t-1}``
  becomes the distance to the new goal (``update_goal`` resets ``old_dist``).
* Goal reached when the xy distance is < 1.3 and the speed < 5; the episode goes on.
* Reset (v0.1): ball uniform in ``U[-7, 7]^2`` at rest; goal uniform, at least 2.5 from
  the ball; then the 9 obstacles (the box first, then 8 puddles), at least 2.5 from the
  ball and from the goal and from each other.
* Box: 1 x 1 m footprint (1.5 m high, so the ball at z = 0.5 meets its sides), fixed yaw
  drawn uniformly in [0, 2 pi).  A hard obstacle: the ball is pushed out of it after each
  substep and its velocity relative to the box loses the normal component into the box,
  bounced with restitution 0.28 (box 0.4 x ball 0.7, product rule) when it approaches
  faster than 0.2 m/s (Bullet's default ``restitutionVelocityThreshold``, assumed, not
  measured; without it a ball pushed against the box chatters).  Cost 1 while they touch
  (gap <= ``box_contact_margin`` = 0.02 m, Bullet's default contact breaking threshold,
  assumed: PyBullet reports contact points slightly before penetration).
* Puddles: visual discs of radius 1, no collision; cost 1 when the xy distance <= 1.5.
  The costs are summed and capped at 1 per step.
* Observation (57): 7 ball values; the ray LIDAR, 24 rays of range 5 from the ball
  centre, ray i at angle 2 pi i / 24 clockwise from +y (ray 6 points east), reading
  ``1 - hit_fraction`` (0 for no hit), seeing the box and the room walls; the puddle
  pseudo-LIDAR (24 bins, range 5); ``(goal - ball) / 20``.
* Reset's extra physics step with no action: modelled, a no-op (the ball is at rest with
  no force).  The box's clock starts at 0 with the first observation.

Where it differs, and why
-------------------------
* Box motion.  The original moves the pin of the box's fixed constraint every step to
  ``spawn + 0.7 (sin(t + phi), cos(t + phi))`` with ``t = time.time()``, wall-clock
  seconds, which cannot be reproduced.  Here ``t`` is the simulation time since reset
  (``steps * dt``, evaluated at every substep), ``phi`` uniform in [0, 2 pi) per episode:
  the box circles its spawn point at 0.7 m/s, one turn in 2 pi s (377 steps at 60 Hz).
  The box follows the law exactly (a kinematic body: the 5 kg box on its pin is far
  heavier than the 0.3 kg ball; the pin's maxForce was not measured).  Its centre, not
  its spawn point, is the obstacle position the goal keeps out of.
* The box's yaw is drawn per reset (the original draws it once per environment, with
  Python's ``random``, at construction).  Box-wall contact, the ball's friction against
  the box's faces and the box's ground friction are not modelled.
* Version "1.4.0" reset: the original places the obstacles before moving the ball and
  goal, so its keep-outs use the previous episode's ball and goal (a puddle may start on
  the ball); here they keep out of the new ones.  The alternating goal's toggle persists
  across episodes in the original (it flips at each reset and each success); a
  functional reset has no history, so the first goal of an episode is either of the two
  at random, and every success flips it.
* Placement and goal re-spawn draw a fixed number of candidates (``placement_tries =
  64`` per obstacle and for the reset goal, ``goal_tries = 16`` per re-spawn) and keep
  the first valid one; if none is valid, the one violating the keep-outs least
  (:func:`saferl.envs.bullet_ball.physics.first_valid`).
* The cost for ``z > 2`` is always 0 (planar simulation).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from saferl.envs.base import Box, register
from saferl.envs.bullet_ball.ball import BallTask, _config, sensor_space
from saferl.envs.bullet_ball.physics import (
    ROOM_NORMALS,
    TWO_PI,
    BallParams,
    action_penalty,
    ball_observation,
    first_valid,
    norm2,
    place_objects,
    pseudo_lidar,
    ray_directions,
    ray_to_walls,
    version_defaults,
)
from saferl.foundation import struct

__all__ = ["BallReach", "ReachParams", "ReachState", "ALTERNATE_GOALS", "box_signed_distance", "ray_to_box"]

#: the 1.4.0 goal schedule ("Modified" in BSG14 tasks.py): toggles between these two
ALTERNATE_GOALS = np.array([[-6.0, 6.0], [6.0, 6.0]], np.float32)

#: defaults that differ between the versions, beyond max_steps and the substeps (each version's ``envs/tasks.py``
#: ``ReachGoalTask`` and ``envs/builder.py`` ``step``)
REACH_VERSIONS = {
    "0.1": {"distance_reward_scale": 1.0, "goal_bonus": 5.0, "goal_schedule": "random"},
    "1.4.0": {"distance_reward_scale": 3.0, "goal_bonus": 30.0, "goal_schedule": "alternate"},
}


@struct.dataclass
class ReachParams(BallParams):
    timestep: float = 1.0 / 60.0
    frame_skip: int = struct.field(static=True, default=1)
    wall_distance: float = 9.9
    num_puddles: int = struct.field(static=True, default=8)
    placement_extent: float = 7.0
    body_min_distance: float = 2.5  # goal-ball, obstacle-goal, obstacle-obstacle
    agent_obstacle_distance: float = 2.5
    goal_respawn_distance: float = 1.5
    placement_tries: int = struct.field(static=True, default=64)
    goal_tries: int = struct.field(static=True, default=16)
    goal_schedule: str = struct.field(static=True, default="random")  # or "alternate" (1.4.0)
    goal_radius: float = 1.3
    goal_max_speed: float = 5.0
    goal_bonus: float = 5.0
    distance_reward_scale: float = 1.0
    action_penalty_scale: float = 0.01  # 0.01 * Ball.specific_reward: the reward's 0.005 |a| in both versions
    box_half_size: float = 0.5
    box_orbit: float = 0.7
    box_angular_speed: float = 1.0  # rad/s of the pin law
    box_restitution: float = 0.28
    restitution_threshold: float = 0.2  # no bounce below this approach speed (Bullet's default)
    box_contact_margin: float = 0.02  # Bullet's default contact breaking threshold
    puddle_cost_distance: float = 1.5  # ball radius + puddle radius
    lidar_num_rays: int = struct.field(static=True, default=24)
    lidar_range: float = 5.0
    puddle_lidar_bins: int = struct.field(static=True, default=24)
    puddle_lidar_range: float = 5.0
    goal_obs_scale: float = 20.0  # 2 * env_dim


@struct.dataclass
class ReachState:
    pos: jax.Array
    vel: jax.Array
    goal: jax.Array  # (2,)
    goal_index: jax.Array  # () int32, which ALTERNATE_GOALS entry (the "alternate" schedule)
    box_spawn: jax.Array  # (2,)
    box_phase: jax.Array  # ()
    box_yaw: jax.Array  # ()
    puddles: jax.Array  # (num_puddles, 2)
    last_dist: jax.Array  # () distance to the goal after the previous step
    time: jax.Array  # () int32
    key: jax.Array


# --------------------------------------------------------------------------- box geometry


def _box_pose(state: ReachState, t, params: ReachParams):
    """Centre and velocity of the box at simulation time ``t``."""
    angle = params.box_angular_speed * t + state.box_phase
    centre = state.box_spawn + params.box_orbit * jnp.stack([jnp.sin(angle), jnp.cos(angle)])
    velocity = params.box_orbit * params.box_angular_speed * jnp.stack([jnp.cos(angle), -jnp.sin(angle)])
    return centre, velocity


def box_signed_distance(point, centre, yaw, half):
    """Signed distance from ``point`` to a square of half-size ``half`` (negative inside) and
    the outward unit normal at the closest point, in world coordinates."""
    c, s = jnp.cos(yaw), jnp.sin(yaw)
    rel = point - centre
    q = jnp.stack([c * rel[0] + s * rel[1], -s * rel[0] + c * rel[1]])  # box frame
    excess = jnp.abs(q) - half
    outside = jnp.maximum(excess, 0.0)
    out_dist = norm2(outside)
    # outside: along the offset from the closest point; inside: the face of least penetration
    out_normal = jnp.sign(q) * outside / jnp.maximum(out_dist, 1e-12)
    axis = jnp.argmax(excess)
    in_normal = jnp.where(jnp.arange(2) == axis, jnp.where(q >= 0.0, 1.0, -1.0), 0.0)
    is_out = out_dist > 0.0
    dist = jnp.where(is_out, out_dist, jnp.max(excess))
    n = jnp.where(is_out, out_normal, in_normal)
    return dist, jnp.stack([c * n[0] - s * n[1], s * n[0] + c * n[1]])


def ray_to_box(origin, directions, centre, yaw, half):
    """Distance along each ray to the square (slab test); inf for a miss or from inside."""
    c, s = jnp.cos(yaw), jnp.sin(yaw)
    rel = origin - centre
    o = jnp.stack([c * rel[0] + s * rel[1], -s * rel[0] + c * rel[1]])
    u = jnp.stack([c * directions[:, 0] + s * directions[:, 1], -s * directions[:, 0] + c * directions[:, 1]], 1)
    inv = jnp.where(u == 0.0, 1e30, 1.0 / jnp.where(u == 0.0, 1.0, u))
    t1, t2 = (-half - o) * inv, (half - o) * inv
    near = jnp.max(jnp.minimum(t1, t2), axis=1)
    far = jnp.min(jnp.maximum(t1, t2), axis=1)
    return jnp.where((near <= far) & (near >= 0.0), near, jnp.inf)


# --------------------------------------------------------------------------- environment


@register("SafetyBallReach")
class BallReach(BallTask):
    """``SafetyBallReach-v0`` (see the module docstring)."""

    description = "Bullet-Safety-Gym SafetyBallReach in JAX: ball to a goal past a moving box and 8 puddles (cost)"
    task = "reach"
    params_class = ReachParams
    walls = ROOM_NORMALS
    config_defaults = _config(10.0, reset_pool=10)

    def __init__(self, version: str = "0.1", **param_defaults):
        defaults = {**version_defaults(self.task, version), **REACH_VERSIONS[version], **param_defaults}
        super().__init__(version, **defaults)

    def observation_space(self, params: ReachParams) -> Box:
        return sensor_space(params.lidar_num_rays + params.puddle_lidar_bins, tail=2)

    # ---------------------------------------------------------------- reset

    def reset(self, key, params: ReachParams):
        key, agent_key, goal_key, layout_key, toggle_key, angle_key = jax.random.split(key, 6)
        ext = params.placement_extent
        pos = jax.random.uniform(agent_key, (2,), minval=-ext, maxval=ext)
        if params.goal_schedule == "alternate":
            goal_index = jax.random.bernoulli(toggle_key).astype(jnp.int32)
            goal = jnp.asarray(ALTERNATE_GOALS)[goal_index]
        else:
            goal_index = jnp.zeros((), jnp.int32)
            cands = jax.random.uniform(goal_key, (params.placement_tries, 2), minval=-ext, maxval=ext)
            goal = first_valid(cands, norm2(cands - pos) - params.body_min_distance)
        layout = place_objects(
            layout_key,
            1 + params.num_puddles,
            params.placement_tries,
            ext,
            jnp.stack([pos, goal]),
            jnp.stack([params.agent_obstacle_distance, params.body_min_distance]),
            params.body_min_distance,
        )
        phase, yaw = jax.random.uniform(angle_key, (2,), minval=0.0, maxval=TWO_PI)
        state = ReachState(
            pos=pos,
            vel=jnp.zeros((2,), jnp.float32),
            goal=goal,
            goal_index=goal_index,
            box_spawn=layout[0],
            box_phase=phase,
            box_yaw=yaw,
            puddles=layout[1:],
            last_dist=norm2(goal - pos),
            time=jnp.zeros((), jnp.int32),
            key=key,
        )
        return state, self.observation(state, params)

    # ---------------------------------------------------------------- step

    def contact(self, state: ReachState, params: ReachParams):
        """The moving box, a hard obstacle at every substep (see the module docstring)."""
        h, r = params.timestep, params.radius
        t0 = state.time.astype(jnp.float32) * (h * params.frame_skip)

        def box_contact(p, v, j):
            centre, box_vel = _box_pose(state, t0 + (j + 1) * h, params)
            dist, n = box_signed_distance(p, centre, state.box_yaw, params.box_half_size)
            touching = dist < r
            p = p + jnp.where(touching, r - dist, 0.0) * n
            approach = jnp.minimum((v - box_vel) @ n, 0.0)  # relative normal speed into the box
            bounce = jnp.where(approach < -params.restitution_threshold, params.box_restitution, 0.0)
            v = v - jnp.where(touching, (1.0 + bounce) * approach, 0.0) * n
            return p, v

        return box_contact

    def outcome(self, state: ReachState, a, pos, vel, params: ReachParams):
        key, goal_key = jax.random.split(state.key)
        time = state.time + 1
        box_centre, _ = _box_pose(state, time.astype(jnp.float32) * (params.timestep * params.frame_skip), params)

        box_gap, _ = box_signed_distance(pos, box_centre, state.box_yaw, params.box_half_size)
        cost_box = (box_gap - params.radius <= params.box_contact_margin).astype(jnp.float32)
        cost_puddles = jnp.sum((norm2(state.puddles - pos) <= params.puddle_cost_distance).astype(jnp.float32))
        cost = jnp.minimum(1.0, cost_box + cost_puddles)

        dist = norm2(state.goal - pos)
        reward = params.distance_reward_scale * (state.last_dist - dist)
        reward = reward - params.action_penalty_scale * action_penalty(a, params)
        reached = (dist < params.goal_radius) & (norm2(vel) < params.goal_max_speed)
        reward = reward + jnp.where(reached, params.goal_bonus, 0.0)

        if params.goal_schedule == "alternate":
            goal_index = jnp.where(reached, 1 - state.goal_index, state.goal_index)
            goal = jnp.asarray(ALTERNATE_GOALS)[goal_index]
        else:
            goal_index = state.goal_index
            ext = params.placement_extent
            cands = jax.random.uniform(goal_key, (params.goal_tries, 2), minval=-ext, maxval=ext)
            others = jnp.concatenate([pos[None], box_centre[None], state.puddles])
            gaps = norm2(cands[:, None, :] - others[None]) - params.goal_respawn_distance
            goal = jnp.where(reached, first_valid(cands, jnp.min(gaps, axis=1)), state.goal)
        last_dist = jnp.where(reached, norm2(goal - pos), dist)

        state = state.replace(
            pos=pos, vel=vel, goal=goal, goal_index=goal_index, last_dist=last_dist, time=time, key=key
        )
        info = {"goal_reached": reached.astype(jnp.float32), "cost_box": cost_box, "cost_puddles": cost_puddles}
        return state, reward, cost, jnp.zeros((), bool), info

    # ---------------------------------------------------------------- observation

    def observation(self, state: ReachState, params: ReachParams):
        t = state.time.astype(jnp.float32) * (params.timestep * params.frame_skip)
        centre, _ = _box_pose(state, t, params)
        dirs = jnp.asarray(ray_directions(params.lidar_num_rays))
        hit = jnp.minimum(
            ray_to_walls(state.pos, dirs, ROOM_NORMALS, params.wall_distance),
            ray_to_box(state.pos, dirs, centre, state.box_yaw, params.box_half_size),
        )
        lidar = jnp.where(hit <= params.lidar_range, 1.0 - hit / params.lidar_range, 0.0)
        puddles = pseudo_lidar(
            state.pos, state.puddles, num_bins=params.puddle_lidar_bins, max_dist=params.puddle_lidar_range
        )
        goal = (state.goal - state.pos) / params.goal_obs_scale
        return jnp.concatenate([ball_observation(state.pos, state.vel, params), lidar, puddles, goal]).astype(
            jnp.float32
        )
