"""SafetyHalfCheetahVelocity-v1: Gymnasium's HalfCheetah-v4 (MuJoCo C, or MJX) with Safety-Gymnasium's velocity cost.

Safety-Gymnasium 1.0, ``safety_gymnasium/tasks/safe_velocity/safety_half_cheetah_velocity_v{0,1}.py``:
``SafetyHalfCheetahVelocityEnv`` subclasses Gymnasium's ``half_cheetah_v4.HalfCheetahEnv`` and
overrides only ``step`` to add ``cost = float(x_velocity > 3.2096)`` (v1; v0's threshold was
2.8795).  The shared machinery, Gymnasium's v4 reward, termination and observation included, is
:mod:`saferl.envs.velocity.locomotion`; this file holds the task's constants.

What matches the original
-------------------------
* The model is Gymnasium's ``half_cheetah.xml`` (identical in Gymnasium 0.28.1, which
  Safety-Gymnasium 1.0 pins, and 1.4): a planar body of 14 kg (``settotalmass``) on slide joints
  ``rootx``/``rootz`` and hinge ``rooty``, six hinge motors of gears (120, 90, 60, 120, 60, 30) with
  ``ctrlrange`` +-1, joint stiffness and damping, semi-implicit Euler (MuJoCo's default, with
  implicit joint damping) at timestep 0.01 s and ``frame_skip = 5``, so ``dt = 0.05`` s.
* Reward (``half_cheetah_v4.py``): ``1.0 * v_x - 0.1 |a|^2``, ``v_x`` the finite difference of
  ``qpos[0]``; no healthy reward.
* Cost: ``1`` if the signed ``v_x > 3.2096``.
* Never terminates (``terminated = False``); episodes are truncated at 1000 steps.
* Observation (17,): ``qpos[1:]`` (8) then ``qvel`` (9).
* Reset: ``qpos0 + U(-0.1, 0.1)`` and ``qvel = 0.1 N(0, 1)``.

Where it differs, and why
-------------------------
* With the default ``physics="mujoco"`` the robot is stepped by MuJoCo C on the file's model
  (:mod:`saferl.envs.mujoco_host`), and the items below that name MJX do not apply: they describe
  ``physics="mjx"``.
* MJX, float32.  Measured against ``mujoco.mj_step`` (float64) from the same float32 states, one
  env step each, 208 states of random-action trajectories (109 with contacts): ``qpos`` differs by
  at most 9.9e-6 and ``qvel`` by a median 5.3e-6, 99th percentile 4.6e-4 and at most 1.1e-3 (speeds
  up to ~17); MuJoCo's own change for a 1e-7 relative perturbation of the state is a median
  9.5e-7, 99th percentile 2.8e-5, at most 5.5e-5.  So the two agree to round-off away from
  contacts and to ~1e-4 relative at the stiffest contacts (MJX's float32 solver).
* The Newton solver is capped at 4 iterations with 8 line-search steps (the model leaves MuJoCo's
  100 and 50; see :mod:`saferl.envs.velocity.locomotion`).  Measured on the same 208 states: caps
  (100, 50), (8, 16) and (4, 8) agree with MuJoCo to the same digits; (2, 4) is worse (``qvel``
  off by up to 0.4).  Random-policy rollouts of 16 vmapped environments (2 shared CPU cores):
  1850-2240 env-steps/s uncapped, 3500-3570 with (4, 8).
* Random-policy statistics (16 x 1000 steps, uniform actions): MJX mean reward per step -0.276 /
  -0.252 (two seeds), cost 0; MuJoCo -0.324 / -0.269, cost 0 (the cheetah rarely exceeds 3.2 m/s
  at random).
* A non-finite state ends the episode (``terminated``, see :mod:`saferl.envs.velocity.locomotion`); the
  original never terminates (MuJoCo would reset the simulation itself, with a warning).
"""

from __future__ import annotations

from saferl.envs.base import register
from saferl.envs.velocity.locomotion import LocomotionEnv, LocomotionParams
from saferl.foundation import struct


@struct.dataclass
class HalfCheetahVelocityParams(LocomotionParams):
    """half_cheetah_v4.py's defaults (frame skip 5, reset noise 0.1, forward weight 1, control cost 0.1: those of
    :class:`~saferl.envs.velocity.locomotion.RobotParams`) and the v1 threshold."""

    velocity_threshold: float = 3.2096  # safety_half_cheetah_velocity_v1.py


@register("SafetyHalfCheetahVelocity")
class HalfCheetahVelocity(LocomotionEnv):
    """Safety-Gymnasium ``SafetyHalfCheetahVelocity-v1`` (see the module docstring): a planar robot that cannot
    fall (``half_cheetah_v4.py``: ``terminated = False``), its cost on the signed x-velocity of ``rootx``."""

    description = (
        "Safety-Gymnasium HalfCheetahVelocity-v1: HalfCheetah-v4 (MuJoCo C or MJX), cost 1 when the "
        "x-velocity exceeds 3.2096"
    )
    params_class = HalfCheetahVelocityParams
    asset = "half_cheetah.xml"
    velocity_noise = "normal"  # half_cheetah_v4.py reset_model: qvel = init_qvel + s N(0, 1)
