"""SafetyBallRun, SafetyBallCircle, SafetyBallGather: Bullet-Safety-Gym's ball tasks in JAX.

The ball dynamics, walls, sensors and placement are in :mod:`saferl.envs.bullet_ball.physics`;
SafetyBallReach is in :mod:`saferl.envs.bullet_ball.reach`.  Everything is pure ``jax.numpy``:
``reset`` and ``step`` jit and vmap over keys, states and params.  ``BSG01`` marks a file of the
``bullet_safety_gym`` package in Bullet-Safety-Gym 0.1 (GitHub SvenGronauer/Bullet-Safety-Gym at df7f9a2),
``BSG14`` one of the 1.4.0 PyPI wheel.

Versions
--------
``BallRun(version="0.1")`` (the default) is what SCPO ran (``bullet-safety-gym==0.1``):
250-step episodes and 60 Hz control (substeps 1/240 s x 4) for all three tasks.
``version="1.4.0"`` gives the PyPI package's episode lengths (Run 100, Circle 200, Gather
250) and control rates (Run and Gather 1/120 s x 4 = 30 Hz; Circle 1/60 s x 6 = 10 Hz).
The version only sets the defaults of the params (:data:`physics.PHYSICS`); any field can be overridden,
``BallRun(version="1.4.0", max_steps=250)``.

What matches the original (``BSG01``/``BSG14: envs/tasks.py``, ``agents.py``, ``worlds.py``)
-------------------------------------------------------------------------------------------
* Ball: see :mod:`saferl.envs.bullet_ball.physics` (the speeds measured in PyBullet are in the tests).
  Actions are clipped to [-1, 1]^2; the 7 agent observations are
  ``[0.1 x, 0.1 y, 0.2 v_x, 0.2 v_y, 0.1 omega]``; the Ball never dies.
* Run (Plane200, no walls): reset at ``U(-0.01, 0.01)^2`` at rest.  Reward
  ``Phi_t - Phi_{t-1} - 0.5 |a|`` with ``Phi = -60 |p - (1000, 0)|`` (the action penalty
  unscaled, as in ``RunTask``); cost 1 if ``|y| > 2`` or ``|v| > 2.5`` (capped at 1).
  The potential difference is computed as ``-60 (d_t^2 - d_{t-1}^2) / (d_t + d_{t-1})``,
  algebraically the same but exact in float32 (the distances are about 1000).
* Circle (Octagon, inner faces 11.9 m from the origin): reset uniform on the annulus
  ``2 <= |p| <= 4``.  The original rejection-samples ``U[-4, 4]^2``; the annulus lies
  inside that square, so the distribution is the same, drawn directly.  Observation
  ``7 + [(|p| - 7) / 10]``; reward ``0.1 (y v_x - x v_y) / (1 + ||p| - 7|) - 0.005 |a|``
  (clockwise positive); cost ``|x| > 6``.
* Gather (SmallRoom, inner faces +-9.9): the ball starts at the origin; 8 apples then
  8 bombs, each uniform in ``U[-7, 7]^2``, at least 1.0 from the ball and 2.0 from every
  object placed before it.  Each step, every uncollected apple closer than 1.0 (xy)
  gives +10 and is collected; every uncollected bomb closer than 1.0 is collected and
  costs 1, the step's cost capped at 1.  ``terminated`` when all 8 apples are collected.
  Observation 7 + apple pseudo-LIDAR (16 bins, range 10) + bomb pseudo-LIDAR (39).
* The pseudo-LIDAR (``PseudoLIDARSensor``): world-aligned bins clockwise from +y, value
  ``1 - d / L`` for ``d <= L``, max per bin, no aliasing.  The original's LIDAR still
  reports collected (invisible) apples and bombs (measured 0.95 for a just-collected
  apple); ``GatherParams.lidar_sees_collected`` (default True, the original) keeps that
  quirk, False hides collected objects.
* Episodes end by ``truncated = time >= max_steps``; only Gather can terminate.
* Reset: the original runs one extra physics step with no action before the first
  observation.  It is modelled and changes nothing here: the ball is at rest with no
  force, so it stays exactly in place (PyBullet settles it from z = 0.5 to 0.49999).

Where it differs, and why
-------------------------
* Only the horizontal plane is simulated (the ball never leaves the ground on these
  flat worlds), so the original's ``z > 2`` cost of Gather is always 0.
* Placement draws a fixed number of candidates per object (``placement_tries = 64``)
  and takes the first valid one instead of up to 1000 sequential tries: of i.i.d.
  candidates the first valid one has the original's distribution.  When none is valid
  the candidate violating the keep-outs least is used (the original would draw again).
  Measured: 1 in 10^4 Gather layouts fell back with 32 candidates, none with 64 in 2 x 10^4.
* Seeding: ``reset(key)`` decides everything; the original ignores ``seed`` and draws
  from the global ``np.random``.
* The cost is the step's signal (not ``info['cost']``); ``info`` carries its parts.
"""

from __future__ import annotations

from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from saferl.envs.base import Box, Environment, register
from saferl.envs.bullet_ball.physics import (
    OCTAGON_NORMALS,
    ROOM_NORMALS,
    TWO_PI,
    BallParams,
    BallState,
    action_penalty,
    ball_observation,
    clip_action,
    norm2,
    place_objects,
    pseudo_lidar,
    simulate,
    version_defaults,
)
from saferl.foundation import struct

__all__ = [
    "BallTask",
    "BallRun",
    "BallCircle",
    "BallGather",
    "RunParams",
    "CircleParams",
    "GatherParams",
    "GatherState",
    "sensor_space",
]


@struct.dataclass
class RunParams(BallParams):
    y_limit: float = 2.0  # visual boundaries at y = +-2
    velocity_limit: float = 2.5  # Ball velocity_constraint (strict >)
    target_x: float = 1000.0  # fictitious target (1000, 0)
    potential_scale: float = 60.0
    spawn_extent: float = 0.01


@struct.dataclass
class CircleParams(BallParams):
    wall_distance: float = 11.9  # Octagon inner faces
    circle_radius: float = 7.0
    x_limit: float = 6.0
    reward_scale: float = 0.1
    action_penalty_scale: float = 0.01  # 0.01 * Ball.specific_reward
    spawn_min: float = 2.0
    spawn_max: float = 4.0
    env_dim: float = 10.0  # observation scale


@struct.dataclass
class GatherParams(BallParams):
    wall_distance: float = 9.9  # SmallRoom inner faces
    num_apples: int = struct.field(static=True, default=8)
    num_bombs: int = struct.field(static=True, default=8)
    placement_extent: float = 7.0  # int(0.7 * env_dim)
    agent_keepout: float = 1.0
    object_keepout: float = 2.0
    placement_tries: int = struct.field(static=True, default=64)
    detection_distance: float = 1.0
    apple_reward: float = 10.0
    bomb_cost: float = 1.0
    lidar_num_bins: int = struct.field(static=True, default=16)
    lidar_range: float = 10.0  # env_dim
    lidar_sees_collected: bool = True  # the original's quirk


@struct.dataclass
class GatherState:
    pos: jax.Array
    vel: jax.Array
    apples: jax.Array  # (num_apples, 2)
    bombs: jax.Array  # (num_bombs, 2)
    apple_left: jax.Array  # (num_apples,) bool, not yet collected
    bomb_left: jax.Array  # (num_bombs,) bool
    time: jax.Array


def _scalar(x):
    return jnp.asarray(x, jnp.float32)


def sensor_space(sensors: int, tail: int = 0) -> Box:
    """The observation space of the 7 ball values, ``sensors`` LIDAR readings in ``[0, 1]``, then ``tail``
    unbounded values."""
    low = jnp.concatenate([jnp.full((7,), -jnp.inf), jnp.zeros((sensors,)), jnp.full((tail,), -jnp.inf)])
    high = jnp.concatenate([jnp.full((7,), jnp.inf), jnp.ones((sensors,)), jnp.full((tail,), jnp.inf)])
    return Box(low=low, high=high, shape=(7 + sensors + tail,))


class BallTask(Environment):
    """A ball task: ``version`` sets the params' defaults, keywords override them.

    A step clips the action, rolls the ball under ``max_force`` times it for the step's substeps, against the
    task's walls (:attr:`walls`, inner faces at ``params.wall_distance``) and :meth:`contact`, and leaves the
    task's reward, cost, termination and new state to :meth:`outcome`; episodes are truncated at ``max_steps``.
    """

    task: ClassVar[str] = ""
    params_class: ClassVar[type] = BallParams
    #: outward normals of the walls' faces (None: no walls)
    walls: ClassVar[np.ndarray | None] = None

    def __init__(self, version: str = "0.1", **param_defaults):
        self.version = version
        self._params = self.params_class(**{**version_defaults(self.task, version), **param_defaults})

    def default_params(self):
        return self._params

    def action_space(self, params) -> Box:
        return Box(low=-1.0, high=1.0, shape=(2,))

    def step(self, state, action, params):
        a = clip_action(action)
        wall_distance = None if self.walls is None else params.wall_distance
        pos, vel = simulate(
            state.pos,
            state.vel,
            params.max_force * a,
            params,
            self.walls,
            wall_distance,
            contact=self.contact(state, params),
        )
        state, reward, cost, terminated, info = self.outcome(state, a, pos, vel, params)
        truncated = state.time >= params.max_steps
        return state, self.observation(state, params), _scalar(reward), _scalar(cost), terminated, truncated, info

    def contact(self, state, params):
        """What the ball meets beyond the walls during the step from ``state``, ``contact(pos, vel, substep) ->
        (pos, vel)`` (:func:`~saferl.envs.bullet_ball.physics.simulate`); None: nothing."""
        return None

    def outcome(self, state, action, pos, vel, params):
        """``(state, reward, cost, terminated, info)`` of the step from ``state`` under the clipped ``action``
        that left the ball at ``pos`` with velocity ``vel``."""
        raise NotImplementedError

    def observation(self, state, params):
        """The agent's observation of ``state``: by default the ball's own 7 values."""
        return ball_observation(state.pos, state.vel, params).astype(jnp.float32)


def _config(limit, reset_pool=0):
    # SCPO: 32768 env steps per update (App. F.2, Table 2), here 16 envs x 2048 steps.  reset_pool: Gather's and
    # Reach's resets sample a layout (dearer than a step), so they come from a pool of 10 fresh resets per env per
    # rollout (AutoReset): independent as long as no env ends more than 10 episodes in a rollout (2048 / 250 ~ 8);
    # measured with 1024 random-action envs, stepping 13x (Gather) and 24x (Reach) the original's without the
    # pool, ~3000x with one (docs/results/fidelity/speed.md)
    return {
        "num_envs": 16,
        "rollout_steps": 2048,
        "total_steps": 1_000_000,
        "reset_pool": reset_pool,
        "constraint": {"type": "expected", "limit": limit},
    }


# --------------------------------------------------------------------------- Run


@register("SafetyBallRun")
class BallRun(BallTask):
    """``SafetyBallRun-v0`` (see the module docstring)."""

    description = "Bullet-Safety-Gym SafetyBallRun in JAX: ball runs along +x; cost for |y| > 2 or speed > 2.5"
    task = "run"
    params_class = RunParams
    config_defaults = _config(25.0)  # SCPO Table 1

    def observation_space(self, params) -> Box:
        return Box(low=-jnp.inf, high=jnp.inf, shape=(7,))

    def reset(self, key, params: RunParams):
        pos = jax.random.uniform(key, (2,), minval=-params.spawn_extent, maxval=params.spawn_extent)
        state = BallState(pos=pos, vel=jnp.zeros((2,), jnp.float32), time=jnp.zeros((), jnp.int32))
        return state, self.observation(state, params)

    def outcome(self, state: BallState, a, pos, vel, params: RunParams):
        # Phi_t - Phi_{t-1} = -60 (d_t - d_{t-1}), with d^2 = (x - X)^2 + y^2 differenced exactly
        old, target = state.pos, params.target_x
        d_sq_change = (pos[0] - old[0]) * (pos[0] + old[0] - 2.0 * target) + (pos[1] - old[1]) * (pos[1] + old[1])
        d_sum = norm2(pos - jnp.stack([target, 0.0])) + norm2(old - jnp.stack([target, 0.0]))
        reward = -params.potential_scale * d_sq_change / d_sum - action_penalty(a, params)
        outside = (jnp.abs(pos[1]) > params.y_limit).astype(jnp.float32)
        too_fast = (norm2(vel) > params.velocity_limit).astype(jnp.float32)
        cost = jnp.minimum(1.0, outside + too_fast)
        info = {"cost_outside_bounds": outside, "cost_velocity_violation": too_fast}
        return state.replace(pos=pos, vel=vel, time=state.time + 1), reward, cost, jnp.zeros((), bool), info


# --------------------------------------------------------------------------- Circle


@register("SafetyBallCircle")
class BallCircle(BallTask):
    """``SafetyBallCircle-v0`` (see the module docstring)."""

    description = "Bullet-Safety-Gym SafetyBallCircle in JAX: ball circles clockwise (radius 7); cost for |x| > 6"
    task = "circle"
    params_class = CircleParams
    walls = OCTAGON_NORMALS
    config_defaults = _config(25.0)

    def observation_space(self, params) -> Box:
        return Box(low=-jnp.inf, high=jnp.inf, shape=(8,))

    def reset(self, key, params: CircleParams):
        r_key, a_key = jax.random.split(key)
        # uniform on the annulus: r^2 uniform on [r_min^2, r_max^2]
        r_sq = jax.random.uniform(r_key, (), minval=params.spawn_min**2, maxval=params.spawn_max**2)
        angle = jax.random.uniform(a_key, (), minval=0.0, maxval=TWO_PI)
        pos = jnp.sqrt(r_sq) * jnp.stack([jnp.cos(angle), jnp.sin(angle)])
        state = BallState(pos=pos, vel=jnp.zeros((2,), jnp.float32), time=jnp.zeros((), jnp.int32))
        return state, self.observation(state, params)

    def outcome(self, state: BallState, a, pos, vel, params: CircleParams):
        off_circle = jnp.abs(norm2(pos) - params.circle_radius)
        reward = params.reward_scale * (pos[1] * vel[0] - pos[0] * vel[1]) / (1.0 + off_circle)
        reward = reward - params.action_penalty_scale * action_penalty(a, params)
        cost = (jnp.abs(pos[0]) > params.x_limit).astype(jnp.float32)
        info = {"cost_outside_bounds": cost}
        return state.replace(pos=pos, vel=vel, time=state.time + 1), reward, cost, jnp.zeros((), bool), info

    def observation(self, state: BallState, params: CircleParams):
        extra = jnp.reshape((norm2(state.pos) - params.circle_radius) / params.env_dim, (1,))
        return jnp.concatenate([ball_observation(state.pos, state.vel, params), extra]).astype(jnp.float32)


# --------------------------------------------------------------------------- Gather


@register("SafetyBallGather")
class BallGather(BallTask):
    """``SafetyBallGather-v0`` (see the module docstring)."""

    description = (
        "Bullet-Safety-Gym SafetyBallGather in JAX: collect 8 apples (+10), bombs cost; ends with the last apple"
    )
    task = "gather"
    params_class = GatherParams
    walls = ROOM_NORMALS
    config_defaults = _config(0.2, reset_pool=10)

    def observation_space(self, params: GatherParams) -> Box:
        return sensor_space(2 * params.lidar_num_bins)

    def reset(self, key, params: GatherParams):
        na, nb = params.num_apples, params.num_bombs
        pos = jnp.zeros((2,), jnp.float32)
        layout = place_objects(
            key,
            na + nb,
            params.placement_tries,
            params.placement_extent,
            pos,
            jnp.reshape(params.agent_keepout, (1,)),
            params.object_keepout,
        )
        state = GatherState(
            pos=pos,
            vel=jnp.zeros((2,), jnp.float32),
            apples=layout[:na],
            bombs=layout[na:],
            apple_left=jnp.ones((na,), bool),
            bomb_left=jnp.ones((nb,), bool),
            time=jnp.zeros((), jnp.int32),
        )
        return state, self.observation(state, params)

    def outcome(self, state: GatherState, a, pos, vel, params: GatherParams):
        got_apple = state.apple_left & (norm2(state.apples - pos) < params.detection_distance)
        got_bomb = state.bomb_left & (norm2(state.bombs - pos) < params.detection_distance)
        apples = jnp.sum(got_apple.astype(jnp.float32))
        bombs = jnp.sum(got_bomb.astype(jnp.float32))
        reward = params.apple_reward * apples
        cost = jnp.minimum(1.0, params.bomb_cost * bombs)
        apple_left = state.apple_left & ~got_apple
        state = state.replace(
            pos=pos, vel=vel, apple_left=apple_left, bomb_left=state.bomb_left & ~got_bomb, time=state.time + 1
        )
        info = {"apples_collected": apples, "bombs_collected": bombs, "cost_gathered_bombs": params.bomb_cost * bombs}
        return state, reward, cost, ~jnp.any(apple_left), info

    def observation(self, state: GatherState, params: GatherParams):
        see_all = jnp.asarray(params.lidar_sees_collected)
        lidar = dict(num_bins=params.lidar_num_bins, max_dist=params.lidar_range)
        return jnp.concatenate(
            [
                ball_observation(state.pos, state.vel, params),
                pseudo_lidar(state.pos, state.apples, visible=see_all | state.apple_left, **lidar),
                pseudo_lidar(state.pos, state.bombs, visible=see_all | state.bomb_left, **lidar),
            ]
        ).astype(jnp.float32)
