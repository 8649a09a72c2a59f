"""The navigation family: the base of Safety-Gymnasium's navigation tasks and the pieces of a step they share.

Safety-Gymnasium 1.0.0 builds every navigation task (``safety_gymnasium/builder.py``,
``safety_gymnasium/bases/base_task.py``) from one world: a robot, groups of objects placed at random with
keep-outs, a pseudo-lidar per group, costs of the objects, and Gaussian action noise
(``safety_gymnasium/bases/underlying.py``, ``Underlying.simulation_forward``).  saferl's planar version
of that engine, pure ``jax.numpy``, is held once, by concern:

* :mod:`saferl.envs.safety_nav.placement`: random layouts with keep-outs and the goal's resampling.
* :mod:`saferl.envs.safety_nav.lidar`: the pseudo-lidar.
* this module: :class:`NavTask`, the family base, and a step's shared pieces: the step's random numbers
  (:func:`step_uniforms`), action noise (:func:`noisy_control`), hazard cost (:func:`hazard_cost`),
  the cost indicator (:func:`indicator`) and the goal reward (:func:`goal_reward`).
* the robots: :mod:`saferl.envs.safety_nav.point`, :mod:`saferl.envs.safety_nav.car`,
  :mod:`saferl.envs.safety_nav.racecar`; PointPush1's 2-D contacts: :mod:`saferl.envs.safety_nav.nav_contact`.

Each task module (``point_goal.py``, ``point_push.py``, ``car_button.py``, ``racecar_circle.py``) holds
only its objects, reward, cost terms and observation order, and records what matches Safety-Gymnasium
and what differs.

The family base
---------------
:class:`NavTask` implements ``reset``, ``step`` and the spaces; a task fills in named hooks:

* ``initial_state(key, params)``: the state after a reset (layout, robot at rest);
* ``transition(state, action, params)``: one env step up to the observation, returning
  ``(state, ctrl, reward, cost, info)`` with the control the robot received (its sensors read it);
  the base then counts the step (``state.time``), observes, and truncates at ``params.max_steps``
  (``terminated`` is always False: no navigation robot dies);
* ``pose(state)`` (lidar origin and heading), ``planar_sensors(state, ctrl, params)`` (the planar model's;
  under ``physics="mujoco"`` the base reads MuJoCo's) and
  ``lidar_objects(state, params)`` (one ``(n, 2)`` array per lidar group, in observation order);
  ``lidar_readings`` may be extended (CarButton1 hides its buttons for a while after a press);
* ``check(params, action=None)``: one-line errors for bad static parameters or actions.

Class attributes: ``sensor_size`` and ``lidars`` (the lidar groups' names, in observation order) give
the observation space.  The parameters carry ``max_steps`` and the lidar's ``lidar_num_bins``,
``lidar_max_dist`` and ``lidar_alias``; those of a task with a goal and hazards subclass their robot's
parameters and :class:`NavParams` (Safety-Gymnasium's defaults for reward, cost and lidar).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import jax
import jax.numpy as jnp

from saferl.envs.base import Box, Environment, EnvParams
from saferl.envs.safety_nav import mujoco_physics
from saferl.envs.safety_nav.lidar import TWO_PI, pseudo_lidar
from saferl.envs.safety_nav.placement import hash_uniform
from saferl.foundation import struct

__all__ = [
    "TWO_PI",
    "NavParams",
    "NavTask",
    "goal_reward",
    "hazard_cost",
    "indicator",
    "noisy_control",
    "safe_norm",
    "step_uniforms",
]


@struct.dataclass
class NavParams(EnvParams):
    """The reward, cost and lidar settings Safety-Gymnasium's goal tasks share, at its defaults
    (``bases/base_task.py``: ``RewardConf``, ``CostConf``, ``LidarConf``; ``assets/geoms/goal.py``,
    ``assets/geoms/hazards.py``).  A task's parameters subclass its robot's and these."""

    reward_goal: float = 1.0  # goal.py: reward_goal
    reward_clip: float = 10.0  # RewardConf.reward_clip
    hazard_cost: float = 1.0  # hazards.py: cost
    constrain_indicator: bool = struct.field(static=True, default=True)  # CostConf.constrain_indicator
    max_steps: int = struct.field(default=1000, kw_only=True)  # the registered max_episode_steps
    lidar_num_bins: int = struct.field(static=True, default=16)  # LidarConf.num_bins
    lidar_max_dist: float = 3.0  # LidarConf.max_dist
    lidar_alias: bool = struct.field(static=True, default=True)  # LidarConf.alias


def safe_norm(v):
    """Euclidean norm over the last axis of size 2 (written out: XLA's CPU reductions
    over tiny axes are slow under vmap)."""
    return jnp.sqrt(v[..., 0] ** 2 + v[..., 1] ** 2)


def step_uniforms(key, shape):
    """A step's random numbers: the state's next key and :func:`~saferl.envs.safety_nav.placement.hash_uniform`
    numbers of ``shape`` (action noise, goal candidates) from a key split off it."""
    key, sub = jax.random.split(key)
    return key, hash_uniform(sub, shape)


def noisy_control(action, uniform, noise_std):
    """The control from ``action``: clipped to [-1, 1], plus Gaussian noise of std ``noise_std`` made from
    the uniform numbers ``uniform`` (one per control), clipped again (MuJoCo clamps ``ctrl`` to
    ``ctrlrange``).  As ``Underlying.simulation_forward``: noise after clipping."""
    ctrl = jnp.clip(jnp.asarray(action, jnp.float32), -1.0, 1.0)
    gauss = math.sqrt(2.0) * jax.scipy.special.erfinv(jnp.clip(2.0 * uniform - 1.0, -1.0 + 1e-7, 1.0 - 1e-7))
    return jnp.clip(ctrl + noise_std * gauss, -1.0, 1.0)


def hazard_cost(dist, radius, cost):
    """``Hazards.cal_cost`` (``safety_gymnasium/assets/geoms/hazards.py``): ``cost * (radius - d)``
    summed over the hazards at distance ``d <= radius`` (``dist``: (n,))."""
    return jnp.sum(jnp.where(dist <= radius, cost * (radius - dist), 0.0))


def indicator(cost, constrain_indicator: bool):
    """With ``constrain_indicator`` (Safety-Gymnasium's default) a step costs 1.0 if its summed cost is
    positive, else 0.0: one unit however many terms."""
    return (cost > 0.0).astype(jnp.float32) if constrain_indicator else cost


def goal_reward(progress, reached, params):
    """``progress`` plus ``reward_goal`` when the goal is ``reached``, clipped to ``+-reward_clip``
    (``BaseTask``'s ``RewardConf``)."""
    reward = progress + jnp.where(reached, params.reward_goal, 0.0)
    return jnp.clip(reward, -params.reward_clip, params.reward_clip)


class NavTask(Environment):
    """Base of the navigation tasks (see the module docstring for the hooks)."""

    cost_shape = ()
    config_defaults = {
        "num_envs": 16,
        "rollout_steps": 1000,
        "reset_pool": 1,
        "constraint": {"type": "expected", "limit": 25.0},  # the C-TRPO harness's cost limit
    }
    #: robot sensor readings at the start of the observation
    sensor_size: ClassVar[int] = 12
    #: the lidar groups, in observation order
    lidars: ClassVar[tuple[str, ...]] = ()

    # ---------------------------------------------------------------- hooks

    def check(self, params, action=None) -> None:
        """Raise a one-line ``ValueError`` for bad static parameters (or a bad ``action``)."""

    def initial_state(self, key: jax.Array, params) -> Any:
        raise NotImplementedError

    def transition(self, state, action: jax.Array, params):
        """One env step without the time count and the observation: ``(state, ctrl, reward, cost, info)``."""
        raise NotImplementedError

    def pose(self, state) -> tuple[jax.Array, jax.Array]:
        """The robot's position and heading as the lidar sees from them."""
        raise NotImplementedError

    def planar_sensors(self, state, ctrl, params) -> jax.Array:
        """The robot's sensor readings as the planar model computes them."""
        raise NotImplementedError

    def lidar_objects(self, state, params) -> tuple[jax.Array, ...]:
        raise NotImplementedError

    # ---------------------------------------------------------------- the family's API

    def observation_space(self, params) -> Box:
        n = len(self.lidars) * params.lidar_num_bins
        low = jnp.concatenate([jnp.full((self.sensor_size,), -jnp.inf), jnp.zeros((n,))])
        high = jnp.concatenate([jnp.full((self.sensor_size,), jnp.inf), jnp.ones((n,))])
        return Box(low=low, high=high, shape=(self.sensor_size + n,))

    def action_space(self, params) -> Box:
        return Box(low=-1.0, high=1.0, shape=(2,))

    def reset(self, key: jax.Array, params):
        self.check(params)
        state = self.initial_state(key, params)
        return state, self.observe(state, jnp.zeros((2,), jnp.float32), params)

    def step(self, state, action: jax.Array, params):
        self.check(params, action)
        state, ctrl, reward, cost, info = self.transition(state, action, params)
        state = state.replace(time=state.time + 1)
        obs = self.observe(state, ctrl, params)
        truncated = state.time >= params.max_steps
        terminated = jnp.zeros((), bool)
        return state, obs, reward.astype(jnp.float32), cost.astype(jnp.float32), terminated, truncated, info

    def sensors(self, state, ctrl, params) -> jax.Array:
        """The robot's sensor readings: MuJoCo's after the step under ``physics="mujoco"``
        (:mod:`saferl.envs.safety_nav.mujoco_physics`), else :meth:`planar_sensors`."""
        if mujoco_physics.simulated(getattr(params, "physics", "planar")):
            return state.mujoco.sensors
        return self.planar_sensors(state, ctrl, params)

    def mujoco_world(self, counts, physics: str, build):
        """The MuJoCo world of ``physics`` (``"mujoco"`` or ``"mjx"``) for a layout's object ``counts`` (hashable),
        built by ``build(physics)`` the first time and kept on the task: a model per task, level and physics, shared
        by every episode."""
        worlds = self.__dict__.setdefault("_worlds", {})
        if (counts, physics) not in worlds:
            worlds[counts, physics] = build(physics)
        return worlds[counts, physics]

    def lidar_readings(self, state, params) -> list[jax.Array]:
        """One pseudo-lidar reading per group of :meth:`lidar_objects`."""
        pos, heading = self.pose(state)
        lidar = dict(num_bins=params.lidar_num_bins, max_dist=params.lidar_max_dist, alias=params.lidar_alias)
        return [pseudo_lidar(pos, heading, objects, **lidar) for objects in self.lidar_objects(state, params)]

    def observe(self, state, ctrl, params) -> jax.Array:
        """The robot's sensors, then the lidar readings, in the task's order."""
        return jnp.concatenate([self.sensors(state, ctrl, params), *self.lidar_readings(state, params)]).astype(
            jnp.float32
        )
