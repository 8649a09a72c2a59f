"""SafetyAntVelocity-v1: Gymnasium's Ant-v4 (MuJoCo C, or MJX) with Safety-Gymnasium's velocity cost.

Safety-Gymnasium 1.0, ``safety_gymnasium/tasks/safe_velocity/safety_ant_velocity_v{0,1}.py``:
``SafetyAntVelocityEnv`` subclasses Gymnasium's ``ant_v4.AntEnv`` (default arguments, so
``use_contact_forces=False``) and overrides only ``step`` to add ``cost = float(|(v_x, v_y)| >
2.6222)`` (v1; v0's threshold was 2.5745).  The shared machinery, Gymnasium's v4 reward,
termination and observation included, is :mod:`saferl.envs.velocity.locomotion`; this file holds the task's
constants, the torso's position, its health test and how many positions its observation leaves out.

What matches the original
-------------------------
* The model is Gymnasium's ``ant.xml`` (identical in Gymnasium 0.28.1 and 1.4): a 0.25 m spherical
  torso on a free joint, four two-link legs (hip +-30 degrees, ankle 30..70 degrees), eight motors
  of gear 150 with ``ctrlrange`` +-1, joint armature 1 and damping 1, density 5 (0.911 kg), geom
  margin 0.01 (applied as MuJoCo 2.3.3 does: ``gymnasium_models.match_margin_rule``), pyramidal friction
  cones; RK4 at timestep 0.01 s with ``frame_skip = 5``, so ``dt = 0.05`` s.  Only geom-floor contacts
  exist (``conaffinity="0"`` on the body).
* Velocity: the finite difference over one env step of the torso's centre of mass as Gymnasium
  reads it (``get_body_com("torso")``: ``xipos`` left by the last RK4 stage; see the base module).
* Reward (``ant_v4.py``): ``v_x + healthy_reward - 0.5 |a|^2``; ``healthy_reward = 1`` on every
  step (``terminate_when_unhealthy``); no contact cost.
* Cost: ``1`` if the torso's planar speed ``|(v_x, v_y)| > 2.6222``.
* Termination: unhealthy when the state is not finite or the torso height ``qpos[2]`` leaves
  ``[0.2, 1.0]`` (inclusive bounds, as ``ant_v4.py``).
* Observation (27,): ``qpos[2:]`` (13: height, quaternion, 8 joint angles) then ``qvel`` (14).
* Reset: ``qpos0 + U(-0.1, 0.1)`` on all 15 coordinates (the quaternion is not renormalised, as
  ``set_state`` leaves it; ``qpos0`` has the torso at 0.75 m and every joint angle 0, which is
  outside the ankles' 30..70 degree range, so the joint limits act from the first step, as in
  Gymnasium) and ``qvel = 0.1 N(0, 1)``.

Where it differs, and why
-------------------------
* With the default ``physics="mujoco"`` the robot is stepped by MuJoCo C on the file's model
  (:mod:`saferl.envs.mujoco_host`), and the items below that name MJX do not apply: they describe
  ``physics="mjx"``.
* The integrator follows the original, not MuJoCo 4.0.  MuJoCo 4.0's ``mj_step`` integrates the orientation of a
  free or ball joint with the Munthe-Kaas correction (MuJoCo 4.0.0 changelog: "The RK4 integrator is now
  fourth-order accurate for the orientations of ball and free joints"); the original's MuJoCo 2.3.3 advanced it
  by the stages' weighted body rates uncorrected.  The torso hangs on a free joint, so with ``mj_step`` every
  step differs from the original's slightly and the foot contacts amplify it: that alone is why MuJoCo 4.0's
  trajectories part from the original's within a few steps (docs/results/fidelity/ant_mujoco_releases.md).  The
  default ``rk4_orientation="uncorrected"`` steps RK4 with 2.3.3's rule on MuJoCo 4.0 (:mod:`saferl.envs.mujoco_rk4`,
  the original's steps reproduced to round-off; about 1.5 times the env step's time with ``mj_step``);
  ``"munthe-kaas"`` is ``mj_step`` itself (docs/decisions/066).
* Contact friction.  MJX orients the friction pyramid of a capsule-floor contact along the world
  axes when the capsule is steeper than 60 degrees, MuJoCo along the capsule (see the base module);
  19% of the Ant's capsule-floor contacts under a random policy are that steep and the Ant's legs
  are diagonal, so those contacts get a pyramid rotated by 45 degrees.  Measured, one env step
  against ``mujoco.mj_step`` from the same state (208 random-action states, 59 with contacts):
  ``qvel`` differs by a median 1.2e-4 but up to 1.3 (99th percentile 1.0) on steps with such
  contacts, while MuJoCo's own change for a 1e-7 relative perturbation is at most 7e-6 and MJX in
  float64 shows the same differences.  Away from contacts the two agree to round-off.  Over whole
  random-policy rollouts (16 environments x 1000 steps, uniform actions, episodes reset in place)
  the statistics stay within MuJoCo's seed spread: MJX mean reward per step -0.346 / -0.348, cost
  rate 0.004 / 0.005, 99 / 120 episodes ended (two seeds); MuJoCo, eight seeds: reward -0.294 to
  -0.350, cost rate 0.001 to 0.009, 71 to 145 episodes.
* MJX, float32, and the Newton solver capped at 4 iterations with 8 line-search steps (MuJoCo's
  100 and 50; :mod:`saferl.envs.velocity.locomotion`): the one-step differences above are the same with the
  uncapped solver (99th percentile 0.92, maximum 1.0).
"""

from __future__ import annotations

import jax.numpy as jnp

from saferl.envs.base import register
from saferl.envs.velocity.locomotion import HealthParams, LocomotionEnv, LocomotionParams
from saferl.foundation import struct

_TORSO = 1  # body id of "torso" in ant.xml


@struct.dataclass
class AntVelocityParams(LocomotionParams, HealthParams):
    """ant_v4.py's defaults (frame skip 5, reset noise 0.1, healthy reward 1 and the torso's height range
    ``[0.2, 1.0]``, those of :class:`~saferl.envs.velocity.locomotion.HealthParams`) and the v1 threshold."""

    ctrl_cost_weight: float = 0.5  # ant_v4.py
    velocity_threshold: float = 2.6222  # safety_ant_velocity_v1.py


@register("SafetyAntVelocity")
class AntVelocity(LocomotionEnv):
    """Safety-Gymnasium ``SafetyAntVelocity-v1`` (see the module docstring)."""

    description = "Safety-Gymnasium AntVelocity-v1: Ant-v4 (MuJoCo C or MJX), cost 1 when the xy-speed exceeds 2.6222"
    params_class = AntVelocityParams
    asset = "ant.xml"
    velocity_noise = "normal"  # ant_v4.py reset_model: qvel = init_qvel + s N(0, 1)
    reset_kinematics = True  # the torso's xipos
    host_fields = ("xipos",)
    unobserved_positions = 2  # the torso's x and y; use_contact_forces=False: no contact forces

    def body_position(self, data):
        return data.xipos[_TORSO, :2]  # ant_v4.py: get_body_com("torso")[:2]

    def is_healthy(self, qpos, qvel, params):
        finite = jnp.all(jnp.isfinite(qpos)) & jnp.all(jnp.isfinite(qvel))
        return finite & (qpos[2] >= params.healthy_z_min) & (qpos[2] <= params.healthy_z_max)  # inclusive bounds
