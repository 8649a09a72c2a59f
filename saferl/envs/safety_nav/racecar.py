"""Safety-Gymnasium's Racecar robot as a planar kinematic bicycle in JAX: dynamics and sensors.

The Racecar (``SG:assets/xmls/racecar.xml``, ``SG:agents/racecar.py``) is a 2.156 kg car
on a free joint: a rear axle driven through ``diff_ring`` by a velocity servo (kv = 1, ctrl
in [-20, 20] rad/s, force clamp +-1 N m) and two front wheels on steering hinges coupled by
an equality constraint, the left one driven by a position servo (kp = 1, ctrl in [-0.785,
0.785] rad, force clamp +-1 N m).  It is shared by every Racecar task
(:mod:`saferl.envs.safety_nav.racecar_circle` holds RacecarCircle1); a task keeps a
:class:`RacecarState` in its state and its parameters subclass :class:`RacecarParams`.
Sources are tagged ``SG:`` (the safety-gymnasium 1.0.0 wheel, paths below ``safety_gymnasium/``)
and ``M-SG`` (an earlier measurement of the original, safety-gymnasium 1.0.0 on mujoco
2.3.3); ``M-race`` marks measurements made for this port (safety-gymnasium 1.0.0, mujoco 2.3.3,
gymnasium 0.28.1, SafetyRacecarCircle1-v0, 2026-12).

Actions.  Every saferl environment takes actions in ``[-1, 1]^n``; the Racecar's are scaled
here to the actuators' ranges, ``ctrl = (20 a_0, 0.785 a_1)`` (:func:`ctrl_from_action`),
which is exactly C-TRPO's ``SafeRescaleAction(-1, 1)`` around Safety-Gymnasium's
``Box([-20, -0.785], [20, 0.785])`` (milosen/ctrpo ``algorithms/baselines/common/env.py``).
Actions are clipped to [-1, 1] first, as Safety-Gymnasium clips ``ctrl`` to ``ctrlrange``.

Geometry (``racecar.xml``).  Body origin (site ``agent`` 0.02 m ahead of it; the reward,
cost and lidar use the body origin): rear axle at x = -0.16, steering hinges at x = +0.165,
y = +-0.1, so the wheelbase is 0.325 m; all four wheels are cylinders of radius 0.05 and
half-width 0.0225 centred at y = +-0.1225 (track 0.245 m).  The two rear wheels hang on one
joint (``diff_sideA``/``diff_sideB`` are children of the same ``diff_ring`` hinge): the rear
axle is *locked*, not a differential; the steering is parallel (the equality keeps both
hinge angles equal), not Ackermann.  Both scrub in every turn, which is what the fitted
numbers below absorb.

The planar model
----------------
State: body-origin position, heading ``theta``, yaw rate ``omega``, rear wheel speed ``w``,
steering angle ``delta`` and its rate.  Integrated with RK4 at MuJoCo's 0.004 s, 10
substeps per env step (``racecar.xml`` ``<option integrator="RK4" timestep="0.004">``).

* Drive (physics, nothing fitted): ``J dw/dt = clip(kv (u_0 - w), +-1) - c_w w`` with
  ``J = 0.050165 + 2 x 0.000412 + m r^2 = 0.05638 kg m^2`` (the axle's entry of MuJoCo's mass
  matrix, both front wheels' spin inertia, and the car's mass rolling on r = 0.05; the
  diff_side inertias of 0.025 kg m^2 each dominate, so the car is sluggish) and
  ``c_w = 0.003 N m s`` (the 0.001 damping of ``diff_ring`` and of each front wheel, which
  turn at the same rate when rolling).  Full throttle is then a ramp at the clamp,
  ``r / J = 0.887 m/s^2``, until ``w`` is within 1 rad/s of the command (1.1 s, step 28), then a
  first-order approach with time constant ``J / (kv + c_w) = 0.056 s`` to
  ``w = 20 / 1.003``, i.e. 0.9970 m/s.
* Steering (physics plus 3 fitted numbers): the position servo ``clip(kp (u_1 - delta),
  +-1)`` turns the two coupled hinges, inertia ``2 x 4.37e-4 kg m^2`` (hinge plus wheel about
  the steering axis, from MuJoCo's mass matrix), against a fitted damping ``c_s = 0.0264 N m
  s`` (the joints' own is 0.002; the rest is the tyres scrubbing) and a fitted self-aligning
  torque ``-tau_a tanh(omega / omega_a)``, ``tau_a = 0.0833 N m``, ``omega_a = 0.0773
  rad/s``: the front tyres' friction resists the wheels' rotation about the vertical, so in
  a steady turn the angle falls short of the command by up to ``tau_a / kp = 0.083`` rad
  (measured 0.03-0.11; and in reverse, where ``omega`` changes sign, it overshoots it:
  0.41 for 0.3).  The hinge range +-0.785 is a hard stop.
* Path (kinematic bicycle, 2 fitted numbers): the body point ``x_p`` has no sideways slip
  and moves forward at ``v = r w (1 - s)``; the yaw rate tends to ``v tan(delta) / L``.
  Fitted: ``L = 0.417 m`` (the geometric wheelbase is 0.325: the locked axle and parallel
  steering understeer) and ``x_p = -0.191 m`` (0.031 m behind the rear axle; measured
  sideways velocity of the body origin / yaw rate: 0.15-0.24, median 0.205).  The steady
  turning radius of ``x_p`` is ``L / tan(delta)`` (without the two corrections below), of
  the body origin ``sqrt((L / tan(delta))^2 + x_p^2)``.
* Yaw lag (2 fitted): ``d omega/dt = (v kappa_eff - omega) / (0.456 |v| + 0.0225)``: the
  tyres' lateral compliance makes the yaw rate lag the steering by a time that grows with
  speed (0.48 s, 12 env steps, at 1 m/s; a linear dynamic bicycle's yaw time constant grows
  with speed too).
* Longitudinal slip and oversteer (2 fitted): ``s = 0.118 |omega| sqrt(|kappa|)``, ``kappa =
  tan(delta) / L`` (the locked rear axle skids in tight turns: the body moves at 0.71 m/s
  with the wheels at 0.99 m/s, full speed and full lock), and ``kappa_eff = kappa (1 +
  0.146 a^2)`` with ``a = v omega`` the lateral acceleration (the tail steps out above
  ~0.8 m/s^2).

* Full lock: the inner front wheel on the bumper (4 fitted).  From a steering angle of about
  0.776 rad (``bumper_angle``; the hinge's limit is 0.785) the inner front wheel touches the
  front bumper box (``pos_change``, M-lock: a static sweep of the hinge angle in saferl's
  MuJoCo model of racecar.xml), which brakes its roll.  In reverse, where the tyres push
  the steering onto its limit, the original's car then stops turning and crabs on a straight
  line (yaw rate 0.013 rad/s, M-race; MuJoCo 4.0: 0.002-0.03 rad/s over throttles 2-20 rad/s,
  M-lock).  Ours blends, by how far the angle is past ``bumper_angle``
  (:func:`bumper_contact`, 0 to 1), from the bicycle to that regime: no yaw target, the body
  at ``(g0 + g1 |r w|)`` of the rear wheels' surface speed ``r w`` and sideways at ``(c0 + c1
  |r w|)`` times that (sign of the steering), the 4 numbers of :data:`LOCK_FITTED` fitted by
  least squares to the original's steady crab at throttles 4-20 rad/s (M-race; at full
  throttle 0.516 m/s back and 0.299 sideways, ours 0.508 and 0.314; MuJoCo 4.0 on saferl's
  model 0.539 and 0.295, M-lock).  Forward, the
  self-aligning torque holds the angle at 0.70 (below the contact), so the regime is reached
  in reverse only, in both models.  ``bumper_angle`` above ``steer_limit`` gives the port as
  it was before (reversing on a circle at up to 1.9 rad/s).

The 9 numbers (:data:`FITTED`) were fitted by least squares (``scipy.optimize.least_squares``)
to the original's per-step steering angle, yaw rate and forward and sideways body velocity
over 8 scripted runs (steps and reversals of steering at throttles 8, 12 and 20 rad/s, a
piecewise-constant random sequence, full throttle, braking and reversing, steering at rest;
970 env steps)
and to the steady turn (steps 101-250) at 60 (throttle, steering) commands: throttle 4, 8,
12, 16, 20 rad/s times steering 0.025 ... 0.785 and -0.2, -0.785 (M-race).

Residuals (ours against the original, M-race)
---------------------------------------------
=========================================  ==============================  =======================
response                                   ours                            original
=========================================  ==============================  =======================
full throttle, forward m/s at steps        0.0354 0.1764 0.8637 0.9970     0.035 0.176 0.862 0.997
1 / 5 / 25 / 50 / 100                      0.9970 (max error 0.0017)       0.997 (M-SG)
steady turn radius of the body origin,     median error 4.8 %, 90 % of     --
60 commands                                the commands within 11 %
  throttle 20, steering 0.3 / 0.4 / 0.5    1.84 / 1.20 / 0.86 m            2.00 / 1.23 / 0.83 m
  throttle 8, steering 0.2 / 0.5 / 0.785   3.35 / 0.96 / 0.53 m            3.46 / 0.91 / 0.57 m
  throttle 20, steering 0.65 / 0.785       0.58 / 0.45 m (worst, +29 %)    0.45 / 0.37 m
steady forward speed in those turns        median error 0.65 %, max 6.3 %  --
steady steering angle, command 0.3,        0.217 / 0.226                   0.194 / 0.217
  throttle 20 / 4
reverse, throttle -20 / -8, steering 0.3   yaw -0.95 / -0.37 rad/s,        -1.17 / -0.36 rad/s,
                                           angle 0.38 / 0.38               angle 0.41 / 0.37
steering step 0.3 at full throttle         yaw 0.11 / 0.43, forward        --
  (RMS error / RMS of the signal)          0.014 / 0.91
random actions, new each step (200 steps)  yaw 0.053 / 0.073, angle 0.22   --
                                           / 0.46; 0.19 m apart after a
                                           0.59 m path
=========================================  ==============================  =======================

Where it differs from the original, and why
-------------------------------------------
* No contact solver, no free joint: roll, pitch and bounce are not simulated (MuJoCo's soft
  contacts chatter: in a steady turn its accelerometer jumps between 0 and 14 m/s^2 on z
  from one step to the next, M-race).  The tyre scrub of the locked axle and parallel
  steering is not modelled from forces but absorbed into the 9 fitted numbers; they hold
  where they were fitted (|ctrl_0| <= 20, forward; reverse checked at two points above).
* Full lock: below.  Between a command of about 0.85 and 0.95 of the lock in reverse the
  original's angle hovers at the contact's edge (0.773 rad, yaw -1.3 rad/s at full throttle);
  ours settles on the limit with the wheel on the bumper (yaw -0.13).
* Random, per-step steering: MuJoCo's soft joint limit lets the angle overshoot to 0.95 and
  its tyres stick at low speed, ours stops hard at 0.785 and slides freely (the RMS error
  above).  These steering details barely move a random policy (0.6 m in 200 steps).
* The steering at rest reaches any command; MuJoCo's creeps under tyre friction (0.26 of a
  0.3 command after 1.6 s).  It does not matter for the path, which needs speed.
* The yaw inertia (0.521 kg m^2 about the origin, M-race) enters only through the fitted
  yaw lag; the turning's share of the drive inertia is dropped (at most +23 % of J at full
  lock; the wheel speed sits at the servo's set-point in steady turns either way).

Sensors (12, Safety-Gymnasium's order)
--------------------------------------
accelerometer, velocimeter, gyro, magnetometer at site ``agent`` (x = 0.02), in the body
frame: the velocimeter reads ``(v, omega (0.02 - x_p), 0)``, the gyro ``(0, 0, omega)``, the
magnetometer MuJoCo's field ``(0, -0.5, 0)`` rotated into the body frame, the accelerometer
the site's acceleration from the state derivative at the final state (as ``mj_forward``)
plus 9.81 on z.  Checked against the original in a steady turn (M-race: velocimeter and gyro
equal to the body's velocity and yaw rate to 4 digits, magnetometer to 4 digits) and at full
throttle (accelerometer x: mean 0.867 m/s^2 over steps 1-20, ours 0.867); in a steady turn the
original's lateral accelerometer averages ``omega v`` as ours reads (0.465 against 0.462
m/s^2, throttle 20, steering 0.3) but chatters around it (std 0.47; z: mean 10.3, std 2.4).
Differences: no bounce, and at reset the original reads (0, -0.04, 9.49) before its contacts
settle, ours (0, 0, 9.81).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from saferl.envs.base import EnvParams
from saferl.foundation import struct

#: racecar.xml: the rear axle along the body x axis, and the wheelbase to the steering hinges
REAR_AXLE_X = -0.16
GEOMETRIC_WHEELBASE = 0.325
_SITE_X = 0.02  # racecar.xml site "agent"
_WHEEL_RADIUS = 0.05
_MASS = 2.156072  # M-SG
# MuJoCo's mass matrix at reset (M-race): the diff_ring axle (both rear wheels and diff sides),
# a front wheel's spin and a steering hinge with its wheel
_AXLE_INERTIA = 0.050165
_FRONT_WHEEL_SPIN_INERTIA = 0.00041226
_STEER_HINGE_INERTIA = 0.000437
#: effective inertia of the rear-wheel speed: axle, both front wheels, the car's mass on r
DRIVE_INERTIA = _AXLE_INERTIA + 2 * _FRONT_WHEEL_SPIN_INERTIA + _MASS * _WHEEL_RADIUS**2

#: the planar model's fitted numbers (module docstring; scipy least squares against M-race)
FITTED = {
    "steer_damping": 0.0264,  # N m s; the two hinges' own damping is 0.002
    "align_torque": 0.0833,  # N m
    "align_yaw_rate": 0.0773,  # rad/s
    "wheelbase": 0.417,  # m; GEOMETRIC_WHEELBASE is 0.325
    "no_slip_x": -0.191,  # m from the body origin; REAR_AXLE_X is -0.16
    "yaw_lag_per_speed": 0.456,  # s per m/s
    "yaw_lag_min": 0.0225,  # s
    "slip_gain": 0.118,  # per (rad/s sqrt(1/m))
    "oversteer": 0.146,  # per (m/s^2)^2
}
#: the wheel on the bumper (module docstring, "Full lock"): fitted by linear least squares to the original's steady
#: crab reversing at full lock at throttles 4-20 rad/s (M-race, benchmarks/calibration/racecar/fit_lock.py)
LOCK_FITTED = {
    "lock_grip": 0.688,  # body speed / rear wheel surface speed, at rest
    "lock_grip_per_speed": -0.179,  # per m/s of wheel surface speed
    "lock_crab": 0.374,  # sideways / backward speed of the body origin, at rest
    "lock_crab_per_speed": 0.245,  # per m/s of wheel surface speed
}


@struct.dataclass
class RacecarParams(EnvParams):
    """The Racecar's constants (``racecar.xml``; measured or fitted where said)."""

    timestep: float = 0.004  # racecar.xml <option timestep>, RK4
    frame_skip: int = struct.field(static=True, default=10)  # SG frameskip_binom_n, p = 1
    wheel_radius: float = _WHEEL_RADIUS  # racecar.xml wheel cylinders
    drive_inertia: float = DRIVE_INERTIA  # kg m^2, from MuJoCo's mass matrix (M-race)
    drive_kv: float = 1.0  # racecar.xml <velocity> (MuJoCo's default kv)
    drive_force_limit: float = 1.0  # racecar.xml forcerange
    drive_ctrl_limit: float = 20.0  # racecar.xml ctrlrange, rad/s
    wheel_damping: float = 0.003  # three wheel joints at racecar.xml's default damping 0.001
    steer_kp: float = 1.0  # racecar.xml <position> (MuJoCo's default kp)
    steer_force_limit: float = 1.0  # racecar.xml forcerange
    steer_limit: float = 0.785  # racecar.xml ctrlrange and hinge range, rad
    steer_inertia: float = 2 * _STEER_HINGE_INERTIA  # both hinges (equality-coupled), M-race
    steer_damping: float = FITTED["steer_damping"]
    align_torque: float = FITTED["align_torque"]
    align_yaw_rate: float = FITTED["align_yaw_rate"]
    wheelbase: float = FITTED["wheelbase"]
    no_slip_x: float = FITTED["no_slip_x"]
    yaw_lag_per_speed: float = FITTED["yaw_lag_per_speed"]
    yaw_lag_min: float = FITTED["yaw_lag_min"]
    slip_gain: float = FITTED["slip_gain"]
    oversteer: float = FITTED["oversteer"]
    # the inner front wheel touches the bumper box (``pos_change``) from this steering angle on (M-lock: 0.776-0.78
    # rad at rest); above ``steer_limit`` the contact never happens (the port before the contact was modelled)
    bumper_angle: float = 0.775
    lock_grip: float = LOCK_FITTED["lock_grip"]
    lock_grip_per_speed: float = LOCK_FITTED["lock_grip_per_speed"]
    lock_crab: float = LOCK_FITTED["lock_crab"]
    lock_crab_per_speed: float = LOCK_FITTED["lock_crab_per_speed"]
    site_x: float = _SITE_X  # racecar.xml site "agent"
    gravity: float = 9.81
    magnetic_field_y: float = -0.5  # MuJoCo's default field


@struct.dataclass
class RacecarState:
    pos: jax.Array  # (2,) body origin, world frame
    heading: jax.Array  # () yaw of the body +x axis (forward)
    yaw_rate: jax.Array  # ()
    wheel_speed: jax.Array  # () rear axle, rad/s
    steer: jax.Array  # () steering angle, rad (positive turns left)
    steer_rate: jax.Array  # ()


def racecar_at(pos: jax.Array, heading: jax.Array) -> RacecarState:
    """A Racecar at rest at ``pos`` facing ``heading``, wheels straight (as at reset)."""
    zero = jnp.zeros((), jnp.float32)
    return RacecarState(jnp.asarray(pos, jnp.float32), jnp.asarray(heading, jnp.float32), zero, zero, zero, zero)


def ctrl_from_action(action: jax.Array, params: RacecarParams) -> jax.Array:
    """``[-1, 1]^2`` -> (wheel speed command in rad/s, steering angle command in rad), clipped."""
    action = jnp.clip(jnp.asarray(action, jnp.float32), -1.0, 1.0)
    return action * jnp.stack([params.drive_ctrl_limit, params.steer_limit])


# --------------------------------------------------------------------------- dynamics


def bumper_contact(steer, params: RacecarParams):
    """0 below ``bumper_angle``, 1 at the hinge's limit: how far the inner front wheel is pressed on the bumper."""
    room = jnp.maximum(params.steer_limit - params.bumper_angle, 1e-6)
    return jnp.clip((jnp.abs(steer) - params.bumper_angle) / room, 0.0, 1.0)


def _path(y, params: RacecarParams):
    """Forward speed of the body, path curvature (0 with the wheel on the bumper), lateral acceleration, ``1 -
    slip``, and the sideways crab speed of the body origin with the wheel on the bumper."""
    yaw_rate, wheel_speed, steer = y[3], y[4], y[5]
    lock = bumper_contact(steer, params)
    surface = params.wheel_radius * wheel_speed
    curvature = jnp.tan(steer) / params.wheelbase
    rolling = 1.0 - jnp.clip(params.slip_gain * jnp.abs(yaw_rate) * jnp.sqrt(jnp.abs(curvature)), 0.0, 0.9)
    locked = params.lock_grip + params.lock_grip_per_speed * jnp.abs(surface)
    grip = (1.0 - lock) * rolling + lock * locked
    speed = surface * grip
    crab = lock * jnp.sign(steer) * (params.lock_crab + params.lock_crab_per_speed * jnp.abs(surface)) * speed
    return speed, (1.0 - lock) * curvature, speed * yaw_rate, grip, crab


def _derivative(y, ctrl, params: RacecarParams):
    """d/dt of ``y = (x, y, heading, yaw_rate, wheel_speed, steer, steer_rate)``."""
    heading, yaw_rate, wheel_speed, steer, steer_rate = y[2], y[3], y[4], y[5], y[6]
    drive = jnp.clip(params.drive_kv * (ctrl[0] - wheel_speed), -params.drive_force_limit, params.drive_force_limit)
    wheel_accel = (drive - params.wheel_damping * wheel_speed) / params.drive_inertia
    speed, curvature, lateral_accel, _, crab = _path(y, params)
    target = speed * curvature * (1.0 + params.oversteer * lateral_accel**2)
    yaw_accel = (target - yaw_rate) / (params.yaw_lag_per_speed * jnp.abs(speed) + params.yaw_lag_min)
    servo = jnp.clip(params.steer_kp * (ctrl[1] - steer), -params.steer_force_limit, params.steer_force_limit)
    align = params.align_torque * jnp.tanh(yaw_rate / params.align_yaw_rate)
    steer_accel = (servo - params.steer_damping * steer_rate - align) / params.steer_inertia
    side = crab - params.no_slip_x * yaw_rate  # sideways velocity of the body origin
    c, s = jnp.cos(heading), jnp.sin(heading)
    return jnp.stack(
        [c * speed - s * side, s * speed + c * side, yaw_rate, yaw_accel, wheel_accel, steer_rate, steer_accel]
    )


def _substep(y, ctrl, params: RacecarParams):
    h = params.timestep
    k1 = _derivative(y, ctrl, params)
    k2 = _derivative(y + 0.5 * h * k1, ctrl, params)
    k3 = _derivative(y + 0.5 * h * k2, ctrl, params)
    k4 = _derivative(y + h * k3, ctrl, params)
    y = y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    # the hinge range is a hard stop: clamp the angle, drop the rate that pushes outward
    steer = jnp.clip(y[5], -params.steer_limit, params.steer_limit)
    outward = (jnp.abs(y[5]) >= params.steer_limit) & (y[6] * y[5] > 0.0)
    return y.at[5].set(steer).at[6].set(jnp.where(outward, 0.0, y[6]))


def _pack(state: RacecarState):
    return jnp.concatenate(
        [state.pos, jnp.stack([state.heading, state.yaw_rate, state.wheel_speed, state.steer, state.steer_rate])]
    )


def racecar_step(state: RacecarState, ctrl: jax.Array, params: RacecarParams) -> RacecarState:
    """One env step (``frame_skip`` RK4 substeps) under ``ctrl`` = (rad/s, rad), clipped to the ranges."""
    limits = jnp.stack([params.drive_ctrl_limit, params.steer_limit])
    ctrl = jnp.clip(jnp.asarray(ctrl, jnp.float32), -limits, limits)
    y = jax.lax.fori_loop(0, params.frame_skip, lambda _, y: _substep(y, ctrl, params), _pack(state))
    return RacecarState(y[:2], jnp.mod(y[2], 2.0 * math.pi), y[3], y[4], y[5], y[6])


def body_velocity(state: RacecarState, params: RacecarParams) -> jax.Array:
    """World-frame velocity of the body origin (what ``agent.vel`` reads in Safety-Gymnasium)."""
    return _derivative(_pack(state), jnp.zeros((2,), jnp.float32), params)[:2]


def racecar_sensors(state: RacecarState, ctrl: jax.Array, params: RacecarParams) -> jax.Array:
    """accelerometer, velocimeter, gyro, magnetometer (12) at the site, body frame, given the
    control applied in the step that ended in ``state`` (for the acceleration)."""
    y = _pack(state)
    d = _derivative(y, ctrl, params)
    speed, _, _, grip, crab = _path(y, params)
    arm = params.site_x - params.no_slip_x  # site ahead of the no-slip point
    side = crab + arm * state.yaw_rate
    fwd_accel = params.wheel_radius * grip * d[4]  # d(speed)/dt through the wheel speed, slip held
    accel_x = fwd_accel - state.yaw_rate * side
    accel_y = arm * d[3] + state.yaw_rate * speed
    c, s = jnp.cos(state.heading), jnp.sin(state.heading)
    zero = jnp.zeros((), jnp.float32)
    return jnp.stack(
        [
            accel_x,
            accel_y,
            jnp.asarray(params.gravity, jnp.float32),
            speed,
            side,
            zero,
            zero,
            zero,
            state.yaw_rate,
            s * params.magnetic_field_y,
            c * params.magnetic_field_y,
            zero,
        ]
    ).astype(jnp.float32)
