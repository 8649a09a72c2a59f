"""SafetyHopperVelocity-v1: Gymnasium's Hopper-v4 (MuJoCo C, or MJX) with Safety-Gymnasium's velocity cost.

Safety-Gymnasium 1.0, ``safety_gymnasium/tasks/safe_velocity/safety_hopper_velocity_v{0,1}.py``:
``SafetyHopperVelocityEnv`` subclasses Gymnasium's ``hopper_v4.HopperEnv`` and overrides only
``step`` to add ``cost = float(x_velocity > 0.7402)`` (v1's threshold; v0's was 0.37315).  The
shared machinery (model loading, frame skip, RK4, reset, action rescaling, Gymnasium's v4 reward and
termination) is :mod:`saferl.envs.velocity.locomotion`; this file holds the task's constants, its health test
and its observation.

What matches the original
-------------------------
* The model is Gymnasium's ``hopper.xml``: torso, thigh, leg and foot capsules (15.82 kg), slide
  joints ``rootx``/``rootz`` and hinge ``rooty`` for the torso, three hinge motors of gear 200 with
  ``ctrlrange`` +-1, RK4 with timestep 0.002 s and ``frame_skip = 4``, so ``dt = 0.008`` s.
  Gymnasium 1.x rewrote the file in local coordinates (the 0.28.1 that Safety-Gymnasium 1.0 pins
  used ``coordinate="global"``, which MuJoCo 2.3.3 still compiles and MuJoCo 4 rejects); the compiled
  geometry is the same: every joint anchor and capsule end-point at ``qpos0`` equals the 0.28.1
  file's global numbers (checked), as does the total mass, and compiled by MuJoCo 2.3.3 the two
  files give the same model and the same 100-step trajectory (docs/results/fidelity/safety_gymnasium.md).
* Reward (``hopper_v4.py``): ``1.0 * v_x + healthy_reward - 1e-3 |a|^2`` with
  ``v_x = (x_after - x_before) / dt`` of ``qpos[0]`` and ``healthy_reward = 1`` on every step
  (``terminate_when_unhealthy``: ``float(is_healthy or terminate_when_unhealthy)``).
* Cost: ``1`` if the signed ``v_x > 0.7402`` (running backwards costs nothing).
* Termination (all strict, as ``hopper_v4.py``): unhealthy when ``z = qpos[1] <= 0.7``, or
  ``|angle| = |qpos[2]| >= 0.2``, or any of ``state_vector()[2:]`` (``qpos[2:]`` and ``qvel``) is
  outside ``(-100, 100)``.
* Observation (11,): ``qpos[1:]`` (5) then ``clip(qvel, -10, 10)`` (6).
* Reset: ``qpos0 + U(-5e-3, 5e-3)`` and ``qvel = U(-5e-3, 5e-3)``; 1000-step episodes.

Where it differs, and why
-------------------------
* With the default ``physics="mujoco"`` the robot is stepped by MuJoCo C on the file's model
  (:mod:`saferl.envs.mujoco_host`), and the items below that name MJX do not apply: they describe
  ``physics="mjx"``.
* MJX, float32.  Measured against ``mujoco.mj_step`` (float64) from the same float32 states, one
  env step each, 208 states of random-action trajectories (149 with the foot on the floor):
  ``qpos`` differs by at most 1.9e-7 and ``qvel`` by at most 4.7e-6 (median 5e-7), the size of
  MuJoCo's own change when its initial state is perturbed by 1e-7 relative (at most 3.0e-7 and
  3.5e-6): the two agree to round-off.
* The Newton solver is capped at ``solver_iterations = 4`` with ``ls_iterations = 8`` line-search
  steps (hopper.xml leaves MuJoCo's 100 and 50).  MJX's solver stops on a relative improvement of
  1e-8, which float32 rarely reaches, and under ``vmap`` every environment waits for the slowest,
  so uncapped it runs far more iterations than it needs.  Measured on those 208 states: the caps
  (100, 50), (4, 8) and (2, 4) give the same agreement with MuJoCo to the digits above.  Random-
  policy rollouts of 16 vmapped environments (2 shared CPU cores): 960-1110 env-steps/s uncapped,
  1920-2260 with (4, 8).  ``HopperVelocity(solver_iterations=..., ls_iterations=...)`` sets other
  caps; ``None`` keeps the model's.
* Random-policy statistics (16 x 1000 steps, uniform actions, episodes reset in place), MJX in 8
  groups of 16 environments: mean reward per step 0.815 to 0.859 (mean 0.832), cost rate 0.019 to
  0.035 (mean 0.026), 686 to 723 episodes per group; MuJoCo, 20 seeds: 0.798 to 0.855 (mean
  0.828), 0.013 to 0.035 (mean 0.024), 693 to 750.
"""

from __future__ import annotations

import jax.numpy as jnp

from saferl.envs.base import register
from saferl.envs.velocity.locomotion import HealthParams, LocomotionEnv, LocomotionParams
from saferl.foundation import struct


@struct.dataclass
class HopperVelocityParams(LocomotionParams, HealthParams):
    """hopper_v4.py's defaults (forward weight 1 and healthy reward 1 as in
    :class:`~saferl.envs.velocity.locomotion.HealthParams`) and the v1 threshold."""

    frame_skip: int = struct.field(static=True, default=4)  # hopper_v4.py: MujocoEnv(..., 4)
    reset_noise_scale: float = 5e-3  # hopper_v4.py
    ctrl_cost_weight: float = 1e-3  # hopper_v4.py
    velocity_threshold: float = 0.7402  # safety_hopper_velocity_v1.py
    healthy_z_min: float = 0.7  # hopper_v4.py healthy_z_range = (0.7, inf)
    healthy_z_max: float = float("inf")
    healthy_angle_min: float = -0.2  # hopper_v4.py healthy_angle_range
    healthy_angle_max: float = 0.2
    healthy_state_min: float = -100.0  # hopper_v4.py healthy_state_range, on state_vector()[2:]
    healthy_state_max: float = 100.0


@register("SafetyHopperVelocity")
class HopperVelocity(LocomotionEnv):
    """Safety-Gymnasium ``SafetyHopperVelocity-v1`` (see the module docstring): a planar robot, its cost on the
    signed x-velocity of ``rootx``."""

    description = (
        "Safety-Gymnasium HopperVelocity-v1: Hopper-v4 (MuJoCo C or MJX), cost 1 when the x-velocity exceeds 0.7402"
    )
    params_class = HopperVelocityParams
    asset = "hopper.xml"
    velocity_noise = "uniform"  # hopper_v4.py reset_model: qvel = init_qvel + U(-s, s)

    def is_healthy(self, qpos, qvel, params):
        z, angle = qpos[1], qpos[2]
        state = jnp.concatenate([qpos, qvel])[2:]
        healthy_state = jnp.all((state > params.healthy_state_min) & (state < params.healthy_state_max))
        healthy_z = (z > params.healthy_z_min) & (z < params.healthy_z_max)
        healthy_angle = (angle > params.healthy_angle_min) & (angle < params.healthy_angle_max)
        return healthy_state & healthy_z & healthy_angle

    def observation(self, data):
        return jnp.concatenate([data.qpos[1:], jnp.clip(data.qvel, -10.0, 10.0)])  # hopper_v4.py _get_obs
