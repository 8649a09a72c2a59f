"""Safety-Gymnasium's Point robot in JAX: constants, dynamics and sensors.

The Point (``safety_gymnasium/assets/xmls/point.xml``, ``safety_gymnasium/agents/point.py`` in
safety-gymnasium 1.0.0) is a sphere of radius 0.1 with a 0.1 m "pointarrow" cube in front, on two
slide joints and a hinge, driven by a forward thruster and a turning servo.  It is shared by every
Point task (:mod:`saferl.envs.safety_nav.point_goal` holds PointGoal1,
:mod:`saferl.envs.safety_nav.point_push` PointPush1): a task keeps the robot's position, heading,
velocity and yaw rate in its state, and its parameters subclass :class:`PointParams`.  What the model
matches and where it differs from MuJoCo (no contact solver, the centre of mass at the joint origin,
the implicit turning servo, analytic sensors) is recorded in PointGoal1's docstring.

* Constants from ``point.xml``: timestep 0.002 s with 10 sub-steps per env step; density 1 gives mass
  0.00519 kg (sphere plus cube); slide damping 0.01, hinge damping 0.005; thrust is a motor with gear
  0.3 and force range +-0.05, turning a velocity servo (kv 1, gear 0.3, force range +-0.05).
* :func:`point_substep`: one MuJoCo timestep (semi-implicit Euler with implicit damping; the servo
  solved implicitly); :func:`point_steps` several.
* :func:`point_sensors`: accelerometer, velocimeter, gyro, magnetometer (12), robot frame.
* :func:`point_fields`, :func:`point_at_rest`: the robot's fields of a task's state, as keywords.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from saferl.envs.base import EnvParams
from saferl.foundation import struct

# point.xml: density 1; sphere radius 0.1 and a 0.1 m cube centred 0.1 m ahead.
_SPHERE_MASS = 4.0 / 3.0 * math.pi * 0.1**3
_BOX_MASS = 0.1**3
POINT_MASS = _SPHERE_MASS + _BOX_MASS
_COM_OFFSET = _BOX_MASS * 0.1 / POINT_MASS
_INERTIA_ORIGIN = 0.4 * _SPHERE_MASS * 0.1**2 + _BOX_MASS * (0.1**2 + 0.1**2) / 12.0 + _BOX_MASS * 0.1**2
POINT_INERTIA_COM = _INERTIA_ORIGIN - POINT_MASS * _COM_OFFSET**2


@struct.dataclass
class PointParams(EnvParams):
    """The Point's constants (``point.xml``)."""

    timestep: float = 0.002
    frame_skip: int = struct.field(static=True, default=10)  # frameskip_binom_p = 1
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
    robot_radius: float = 0.1  # point.xml: sphere "agent"


def point_substep(carry, ctrl, params: PointParams):
    """One MuJoCo timestep of the Point robot: ``carry = (pos, heading, vel, ang_vel)``."""
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


def point_steps(carry, ctrl, params: PointParams, n):
    """``n`` MuJoCo timesteps of :func:`point_substep` with ``ctrl`` held."""
    return jax.lax.fori_loop(0, n, lambda _, c: point_substep(c, ctrl, params), carry)


def point_fields(pos, heading, vel, ang_vel) -> dict:
    """The robot's fields of a Point task's state, as keywords of its constructor or ``replace``."""
    return {"pos": pos, "heading": heading, "vel": vel, "ang_vel": ang_vel}


def point_at_rest(pos, heading) -> dict:
    """:func:`point_fields` of a robot at ``pos`` facing ``heading`` and not moving (a task's reset)."""
    return point_fields(pos, heading, jnp.zeros((2,), jnp.float32), jnp.zeros((), jnp.float32))


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
    return jnp.concatenate(
        [
            to_robot(accel),
            jnp.reshape(params.gravity, (1,)),
            to_robot(vel),
            zero,
            zero,
            zero,
            jnp.reshape(ang_vel, (1,)),
            to_robot(jnp.stack([0.0, params.magnetic_field_y])),
            zero,
        ]
    )
