"""SafetyHumanoidVelocity-v1: Gymnasium's Humanoid-v4 (MuJoCo C, or MJX) with Safety-Gymnasium's velocity cost.

Safety-Gymnasium 1.0, ``safety_gymnasium/tasks/safe_velocity/safety_humanoid_velocity_v{0,1}.py``:
``SafetyHumanoidVelocityEnv`` subclasses Gymnasium's ``humanoid_v4.HumanoidEnv`` and overrides
only ``step`` to add ``cost = float(|(v_x, v_y)| > 1.4149)`` on the mass centre's velocity (v1;
v0's threshold was 2.3475).  The shared machinery, Gymnasium's v4 reward and
termination included, is :mod:`saferl.envs.velocity.locomotion`; this file holds the task's constants, its
solver, mass centre, health test and observation.

What matches the original
-------------------------
* The model is Gymnasium's ``humanoid.xml`` (identical in Gymnasium 0.28.1 and 1.4): 13 bodies
  (42.1 kg) on a free joint and 17 hinges, 17 motors with gears (100, 100, 100, 100, 100, 300, 200,
  100, 100, 300, 200, 25, 25, 25, 25, 25, 25) and ``ctrlrange`` +-0.4, all geoms colliding with the
  floor and with each other (condim 1 between body parts, 3 with the floor), pyramidal cones; RK4
  at timestep 0.003 s with ``frame_skip = 5``, so ``dt = 0.015`` s.
* Actions: the policy's ``[-1, 1]^17`` is mapped to ``0.4 a`` (the C-TRPO harness's
  ``SafeRescaleAction(-1, 1)``), and the control cost is on those controls unclipped (``humanoid_v4.py``
  ``control_cost`` reads ``data.ctrl``, which MuJoCo leaves as written; the physics clamps it to +-0.4).
* Velocity: the finite difference over one env step of the mass centre ``sum_b m_b xipos_b / M``
  (``mass_center``), as Gymnasium reads it after ``mj_step`` (see the base module).
* Reward (``humanoid_v4.py``): ``1.25 v_x + 5 - 0.1 |ctrl|^2``, the healthy reward paid on every
  step (``terminate_when_unhealthy``).
* Cost: ``1`` if the mass centre's planar speed ``> 1.4149``.
* Termination: ``qpos[2]`` (the torso height) outside the open interval ``(1.0, 2.0)``.
* Observation (376,): ``qpos[2:]`` (22), ``qvel`` (23), ``cinert`` (14 x 10), ``cvel`` (14 x 6),
  ``qfrc_actuator`` (23), ``cfrc_ext`` (14 x 6), the world body included, as ``humanoid_v4.py``.
  ``cinert``, ``cvel`` and ``qfrc_actuator`` are those of the last RK4 stage (what ``mj_step``
  leaves) and ``cfrc_ext`` comes from ``mjx.rne_postconstraint`` (Gymnasium calls
  ``mj_rnePostConstraint`` after each step).  At reset ``qfrc_actuator`` and ``cfrc_ext`` are zero,
  as after ``mj_resetData`` and ``mj_forward``.  Measured on 150 post-step MuJoCo states put into
  MJX: the assembled observation equals MuJoCo's to 9e-8 relative (float32 round-off).
* Reset: ``qpos0 + U(-1e-2, 1e-2)`` and ``qvel = U(-1e-2, 1e-2)``.

Where it differs, and why
-------------------------
* With the default ``physics="mujoco"`` the robot is stepped by MuJoCo C on the file's model (PGS included)
  (:mod:`saferl.envs.mujoco_host`), and the items below that name MJX do not apply: they describe
  ``physics="mjx"``.
* The solver.  ``humanoid.xml`` asks for PGS (``solver="PGS" iterations="50"``), which MJX does not
  implement (``mjx.put_model`` raises ``NotImplementedError``); :meth:`HumanoidVelocity.
  configure_model` switches to Newton, which solves the same convex problem.  Measured in MuJoCo
  (float64), PGS against Newton: 50 random-policy episodes give the same statistics to the printed
  digits (return 123.5 +- 39.4, length 24.7 +- 8.0, cost 0 under both); one env step from the same
  state differs by at most 5.8e-6 in ``qvel`` while standing and falling, and by a median 3.1e-6,
  at most 1.3e-4 (``|qvel|`` up to 32) lying on the floor with up to 7 contacts.  This is the one
  change to the model.
* MJX, float32, with the Newton solver capped at 4 iterations and 8 line-search steps (the file's
  50 and 50; :mod:`saferl.envs.velocity.locomotion`).  One env step against ``mujoco.mj_step`` (Newton)
  from the same state, 208 random-action states (43 with contacts): ``qpos`` within 7.0e-6,
  ``qvel`` a median 7.6e-6, 99th percentile 5.7e-5, at most 8.4e-5, identical with the caps (50,
  50); MuJoCo's own change for a 1e-7 relative perturbation is a median 1.1e-6, at most 2.9e-5.
  Random-policy rollouts (16 x 1000 steps, episodes reset in place): MJX mean reward per step
  +5.017, cost 0, 645 episodes ended; MuJoCo (two seeds) +5.022 / +5.017, cost 0, 650 / 652.
* MJX evaluates all 138 candidate contacts (every pair of geoms that may collide: the floor and
  the body parts' self-collisions) every step; MuJoCo only those within the margin.  Self-contacts
  are kept (they occur on 8.5% of random-policy steps in MuJoCo); they make the Humanoid the
  slowest task here.
* The integrator: RK4 on a free root joint, stepped by default with the original's MuJoCo 2.3.3 rule for the
  root's orientation, not MuJoCo 4.0's Munthe-Kaas correction (``rk4_orientation``, as on the Ant:
  :mod:`saferl.envs.velocity.ant_velocity`, docs/decisions/066).
"""

from __future__ import annotations

import jax.numpy as jnp

from saferl.envs.base import register
from saferl.envs.velocity.locomotion import HealthParams, LocomotionEnv, LocomotionParams
from saferl.foundation import struct


@struct.dataclass
class HumanoidVelocityParams(LocomotionParams, HealthParams):
    """humanoid_v4.py's defaults (frame skip 5 and control cost 0.1 as in
    :class:`~saferl.envs.velocity.locomotion.RobotParams`) and the v1 threshold."""

    reset_noise_scale: float = 1e-2  # humanoid_v4.py
    forward_reward_weight: float = 1.25  # humanoid_v4.py
    velocity_threshold: float = 1.4149  # safety_humanoid_velocity_v1.py
    healthy_reward: float = 5.0  # humanoid_v4.py
    healthy_z_min: float = 1.0  # humanoid_v4.py healthy_z_range, exclusive
    healthy_z_max: float = 2.0


@register("SafetyHumanoidVelocity")
class HumanoidVelocity(LocomotionEnv):
    """Safety-Gymnasium ``SafetyHumanoidVelocity-v1`` (see the module docstring).  Its reward's control cost is
    ``humanoid_v4.py``'s ``ctrl_cost_weight |data.ctrl|^2``, ``data.ctrl = 0.4 a`` as written (unclamped)."""

    description = (
        "Safety-Gymnasium HumanoidVelocity-v1: Humanoid-v4 (MuJoCo C or MJX), cost 1 when the xy-speed exceeds 1.4149"
    )
    params_class = HumanoidVelocityParams
    asset = "humanoid.xml"
    velocity_noise = "uniform"  # humanoid_v4.py reset_model: qvel = init_qvel + U(-s, s)
    reset_kinematics = True  # the mass centre, cinert and cvel
    needs_contact_forces = True  # cfrc_ext in the observation
    host_fields = ("xipos", "cinert", "cvel", "qfrc_actuator", "cfrc_ext")

    def configure_model(self, mj_model) -> None:
        import mujoco

        # MJX has no PGS solver (humanoid.xml: solver="PGS" iterations="50"); Newton solves the same
        # convex problem (see the module docstring for the measured difference)
        mj_model.opt.solver = mujoco.mjtSolver.mjSOL_NEWTON

    def body_position(self, data):
        # humanoid_v4.py mass_center: the mass-weighted mean of every body's xipos (world body mass 0)
        mass = jnp.asarray(self.mj_model.body_mass, jnp.float32)
        return (mass @ data.xipos / jnp.sum(mass))[:2]

    def is_healthy(self, qpos, qvel, params):
        return (qpos[2] > params.healthy_z_min) & (qpos[2] < params.healthy_z_max)

    def observation(self, data):
        # humanoid_v4.py _get_obs: qpos[2:], qvel, cinert, cvel, qfrc_actuator, cfrc_ext (world body included)
        impl = getattr(data, "_impl", data)  # mjx.Data keeps cinert and cfrc_ext in its backend part
        return jnp.concatenate(
            [
                data.qpos[2:],
                data.qvel,
                impl.cinert.ravel(),
                data.cvel.ravel(),
                data.qfrc_actuator,
                impl.cfrc_ext.ravel(),
            ]
        )

    def observation_size(self) -> int:
        nbody = self.mj_model.nbody
        return (self.nq - 2) + self.nv + 10 * nbody + 6 * nbody + self.nv + 6 * nbody
