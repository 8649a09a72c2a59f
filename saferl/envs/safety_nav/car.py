"""Safety-Gymnasium's Car robot as a planar rigid body in JAX: dynamics, sensors, static contacts.

The Car (``SG:assets/xmls/car.xml``, ``SG:agents/car.py``) is a 0.2 m box on a free joint with
two motor-driven wheels and a passive ball; each motor has gear 1, ``ctrlrange`` [-1, 1] and a
force clamp of +-0.02 N m, so ``|ctrl| >= 0.02`` already saturates.  This module is shared by
every Car task (:mod:`saferl.envs.safety_nav.car_button` holds CarButton1): a task keeps a
:class:`CarState` in its state and its parameters subclass :class:`CarParams`.  Sources are
tagged ``SG:`` (the safety-gymnasium 1.0.0 wheel, paths below ``safety_gymnasium/``) and ``M-SG``
(an earlier measurement of the original, safety-gymnasium 1.0.0 on mujoco 2.3.3);
``M-car`` marks what was measured for this port (safety-gymnasium 1.0.0,
mujoco 2.3.3, gymnasium 0.28.1, Python 3.11 with ``benchmarks/patch_safety_gymnasium.py``;
``SafetyCarGoal0-v0``, 8-12 seeds per response, 2026-12).

Frames.  In ``car.xml`` the wheels sit at body ``+y`` and the ball at ``-y``, and positive wheel
torque drives the car towards ``-y``: forward is body ``-y`` (the "rear" ball leads) and body
``+x`` is the car's left.  :attr:`CarState.yaw` is the world angle of body ``+x``, the frame of
Safety-Gymnasium's ``_ego_xy`` and so of the pseudo-lidar (a goal straight ahead is in bin 12);
forward is ``(sin yaw, -cos yaw)``.  Motor 0 (``left``) sits at body ``x = -0.13``, on the right
of the direction of travel, so driving it alone turns the car counter-clockwise.

The planar model
----------------
Three contacts carry the weight: the wheels 0.0926 m behind the centre of mass and 0.13 m to
either side, the ball 0.1074 m ahead (``car.xml`` geometry; the COM measured 0.0074 m behind
the body origin, static loads 0.080 N per wheel and 0.138 N on the ball by
``mj_contactForce``: M-car).  The COM velocity (forward, left) and the yaw rate are integrated
with explicit Euler at MuJoCo's 0.004 s, 10 substeps per env step; the body origin follows.

* Wheels are massless (their 2.45e-6 kg m^2 spin up in 2.5 ms, under one substep): the wheel
  speed ``w`` solves ``tau - c_w w = r F`` with the joint damping ``c_w = 0.001``, radius
  ``r = 0.05`` and a regularised Coulomb traction ``F = mu N sat((r w - u) / v_s)``, ``u`` the
  contact point's forward speed, which has the closed form
  ``F = clip((r tau - c_w u) k / (c_w + r^2 k), +-mu N)`` with ``k = mu N / v_s``.  Sideways a
  wheel grips with ``-clip(u_lat mu_lat N / v_s, +-mu_lat N)``, and both are scaled into
  MuJoCo's pyramidal cone ``|F| + |F_lat| <= mu N``: a spinning wheel has no side grip left.
* The ball rolls against its joint damping (``c_b |u|``) until the friction cap
  ``mu_b N_b``, then skids.  So the top speed is set by the wheel damping (free wheel speed
  0.02 / 0.001 = 20 rad/s, 1 m/s at the rim) less the slip: measured 0.785 m/s with the
  wheels at 17.4 rad/s (M-car); closed form here ``(r tau - mu_b N_b (c_w + r^2 k) / 2k) / c_w``.
* The loads shift by ``m a h / wheelbase`` with the forward acceleration of the previous
  substep: accelerating forwards loads the wheels, reversing unloads them, which is why the
  original reverses more slowly (0.32 m/s after 5 steps against 0.60 forwards: M-car).

Seven numbers were fitted (:data:`FITTED`; Nelder-Mead on their logarithms) to the original's
responses: the mean forward speed and yaw rate over 8-12 seeds of twelve scripted commands
(full and partial throttle, reverse, spinning, one wheel, coasting, and switches between them)
plus eight 300-step runs of uniform random actions, squared errors with yaw rates weighted
0.2 m.  All stayed near their physical values: friction coefficients 0.87 (wheels), 0.59
(wheels sideways), 0.90 (ball) against ``car.xml``'s 1; slip speed 0.075 m/s; ball drag 0.25
N s/m against ``0.001 / 0.05^2 = 0.4``; load-transfer height 0.090 m (the COM height is
0.090); yaw inertia 3.41e-4 against 3.65e-4 from ``mj_fullM``.  Residuals, ours against the
original (seed-to-seed spread in brackets):

=========================== ================================ ================================
response                    ours                             original
=========================== ================================ ================================
full throttle, speed (m/s)  0.23 0.66 0.78 0.78 0.78 0.78    M-SG (one run): 0.26 0.50 0.76
at steps 1/5/25/50/100/300                                   0.78 0.77 0.75; 12 seeds: 0.27
                                                             0.60 0.80 0.77 0.77 0.79 (+-0.06
                                                             0.07 0.03 0.03 0.03 0.03)
both motors 0.005/0.01/0.015 0.172 / 0.344 / 0.528 m/s       0.168 / 0.357 / 0.583
reverse, steps 1/5/25       -0.12 -0.39 -0.66                -0.09 -0.32 -0.71 (+-0.02)
opposite wheels (1, -1)     1.43 rad/s                       1.33 (per-seed means 1.28-1.38)
one wheel (1, 0)            0.16 m/s, 0.95 rad/s             0.14 m/s, 0.64 rad/s
motors (0.02, 0.01)         0.40 m/s, 0.32 rad/s             0.45 m/s, 0.37 rad/s
coasting from 0.78 m/s      0.49 0.27 0.11 0.04 0.01         0.55 0.30 0.13 0.03 0.00
random actions, 8 x 1000    mean forward 0.079 m/s, mean     0.084, 0.75; per-step correlation
                            |yaw rate| 0.57 rad/s            with the original 0.85, 0.84
=========================== ================================ ================================

The M-SG run's "overshoot" (0.78 at step 50, 0.75 at step 300) is seed noise: the 12-seed mean
settles at 0.785 +- 0.03 with no overshoot beyond 0.015, and the model has none.  The rise is
first order in the model but not in the original, which jumps to 0.27 m/s in its first step
and then approaches 0.785 with a time constant of ~0.14 s (the model: 0.23, then faster).
The largest misses are the one-wheel turn (the model turns 50% faster, radius 0.17 m against
0.22) and the yaw under random switching (24% too little): the original reverses with
random yaw kicks (mean -0.2 rad/s, spread 0.25 over seeds, at the first reversing step) that
a deterministic planar model does not have.  MuJoCo's soft contacts chatter: at full
throttle the car bounces (its accelerometer's z reads 6-17 m/s^2 and its wheels jump between
11 and 18 rad/s from step to step); the model reproduces the means only.

Sensors (24, Safety-Gymnasium's order)
--------------------------------------
accelerometer, velocimeter, gyro, magnetometer at site ``agent`` (the body origin) in the body
frame (gravity +9.81 on z, field (0, -0.5, 0)), then ``ballangvel_rear`` (3) and
``ballquat_rear`` as a row-major 3x3 rotation matrix (9; ``quat2mat``).  The ball rolls about
the horizontal axis across its velocity ``u`` at ``|u| / r`` until the spin at which its joint
damping balances the skidding friction torque, ``mu_b N_b r / 0.001`` (6.2 rad/s); measured
means 3.08 rad/s at 0.17 m/s (ours 3.44) and 5.2 at full throttle (ours 6.2; per-step std
3.5).  Its orientation integrates that spin as MuJoCo does (``q <- q exp(w h / 2)``, ``w`` in
the ball's frame, which is also the frame ``ballangvel`` reports, as MuJoCo's ball-joint
``qvel``; checked on a one-body model).  Where it differs: the ball does not spin about the
vertical relative to the car (measured -0.27 rad/s mean while the car spins at 1.33), and
the accelerometer, from the forces at the final state as ``mj_forward`` computes it, has no
bouncing: its z is exactly 9.81.

Contacts with static discs (:func:`push_out_of_discs`): the car's footprint is a disc of
radius :attr:`CarParams.footprint_radius` = 0.162 m about the body origin, the mean measured
contact distance to a button sphere (radius 0.1) over 24 directions, 0.262 m, less 0.1; the
true distance ranges over 0.207-0.308 m with the direction (box, bumpers and wheels; M-car).
A footprint overlapping a disc after an env step is moved out along the normal and loses its
velocity into the disc: the original stops dead at a button (measured 0.73 -> -0.07 -> 0 m/s;
here 0.78 -> 0 -> 0).  Friction: MuJoCo gives a contact the larger of its geoms' frictions,
and neither ``car.xml`` nor ``buttons.py`` sets one, so the car-button contact has MuJoCo's
default sliding friction 1 (:attr:`CarParams.disc_friction`; condim 6, pyramidal cone; the
torsional 0.005 and rolling 1e-4 are not modelled).  It acts at the footprint's rim point
facing the disc on the car as a rigid body: an impulse on the velocity and yaw rate, and a
position-based correction of the step's slip so that a sticking car does not creep round the
disc through the normal projection.  The rim's lever (I / m R^2 = 0.43: 70% of a stopped
slip goes into the yaw) turns the car, so a car pushing into a button off centre rolls round
it with its wheels spinning, as the original does.  Measured, both motors at 1 from 0.5 m at
a lone button off the line of travel, after 100 steps (original / here / frictionless):

================ ================ ================ ================
button off line  steps touching   yaw turned       rolled round it
================ ================ ================ ================
0.05 m           89 / 90 / 32     23 / 18 / --     26 / 22 deg
0.10 m           74 / 90 / 24     40 / 36 / --     79 / 44 deg
0.15 m           71 / 89 / 18     47 / 58 / --     86 / 70 deg
0.20 m           24 / 87 / 11     -142 / 87 / --   -62 / 105 deg
================ ================ ================ ================

(frictionless, the car slides off within 11-32 steps).  Where it differs: the disc holds the
car within a wider cone than the original's flat front bumper with its corners (at 0.2 m the
original turns away sharply and slips off), its normal always points at the body origin, so
the normal force of an off-centre hit never turns the car, and the contact never breaks for a
step as MuJoCo's soft contact does now and then (74 of 91 steps after the first touch at
0.1 m).  The lever ignores the COM's 0.0074 m offset from the body origin.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from saferl.envs.base import EnvParams
from saferl.foundation import struct

TWO_PI = 2.0 * math.pi

# car.xml geometry (SG:assets/xmls/car.xml), COM and loads measured (M-car)
_COM_BEHIND_ORIGIN = 0.0074  # body-y offset of the whole car's COM from the body origin
_WHEEL_FWD = -(0.1 - _COM_BEHIND_ORIGIN)  # wheels at body y = +0.1
_BALL_FWD = 0.1 + _COM_BEHIND_ORIGIN  # ball at body y = -0.1
_HALF_TRACK = 0.13  # wheel bodies at x = +-0.1, cylinder centres 0.03 further out

#: fitted parameters of the planar model (see the module docstring)
FITTED = {
    "wheel_friction": 0.8646,
    "wheel_lateral_friction": 0.5857,
    "ball_friction": 0.8950,
    "slip_speed": 0.07487,
    "ball_rolling_drag": 0.2525,
    "load_transfer_height": 0.08979,
    "yaw_inertia": 3.409e-4,
}

#: responses of the original (``full_throttle_speed_spec``: M-SG, one run; the rest M-car), used by the tests
MEASURED = {
    "full_throttle_steps": (1, 5, 25, 50, 100, 300),
    "full_throttle_speed_spec": (0.26, 0.50, 0.76, 0.78, 0.77, 0.75),
    "full_throttle_speed_mean": (0.271, 0.605, 0.799, 0.774, 0.774, 0.790),
    "full_throttle_speed_std": (0.062, 0.068, 0.029, 0.027, 0.033, 0.030),
    "spin_yaw_rate": 1.33,  # both (1, -1) and (-1, 1), after 30 steps, 8 seeds
    "spin_yaw_rate_seed_std": 0.03,
    # both motors at 1 from 0.5 m straight at a lone button, its centre 0.1 m to the left of the
    # line of travel; after 100 steps (deterministic): steps touching it, the yaw turned (deg)
    # and how far round the button the car has rolled (deg, from where it came)
    "button_push_steps_touching": 74,
    "button_push_yaw_turned": 40.0,
    "button_push_rolled_round": 79.0,
}


@struct.dataclass
class CarParams(EnvParams):
    """The Car's constants (``car.xml``; measured or fitted where said)."""

    timestep: float = 0.004  # car.xml <option timestep>
    frame_skip: int = struct.field(static=True, default=10)  # SG frameskip_binom_n, p = 1
    mass: float = 0.030445  # M-SG: chassis, two wheels and ball, density 5
    yaw_inertia: float = FITTED["yaw_inertia"]  # fitted; 3.648e-4 about the COM by mj_fullM (M-car)
    gravity: float = 9.81
    motor_gear: float = 1.0  # car.xml <motor gear>
    motor_force_limit: float = 0.02  # car.xml forcerange: saturates at |ctrl| >= 0.02
    wheel_radius: float = 0.05  # car.xml default geom size
    wheel_damping: float = 0.001  # car.xml default joint damping
    ball_radius: float = 0.05
    ball_damping: float = 0.001  # car.xml default joint damping (the ball joint)
    half_track: float = _HALF_TRACK
    wheel_forward: float = _WHEEL_FWD  # wheel contacts relative to the COM, along forward
    ball_forward: float = _BALL_FWD
    com_behind_origin: float = _COM_BEHIND_ORIGIN
    wheel_friction: float = FITTED["wheel_friction"]  # car.xml friction 1; fitted
    wheel_lateral_friction: float = FITTED["wheel_lateral_friction"]
    ball_friction: float = FITTED["ball_friction"]
    slip_speed: float = FITTED["slip_speed"]  # regularisation of Coulomb friction, m/s
    ball_rolling_drag: float = FITTED["ball_rolling_drag"]  # N s/m; physical 0.001 / 0.05^2 = 0.4
    load_transfer_height: float = FITTED["load_transfer_height"]  # COM height is 0.09
    footprint_radius: float = 0.162  # mean measured contact distance to a button, minus 0.1
    # Coulomb coefficient against static discs: MuJoCo takes the larger of the two geoms'
    # frictions; car.xml and buttons.py set none, so both are MuJoCo's default 1 (read back
    # from the compiled SafetyCarButton1-v0 model: every car geom and button 1, 0.005, 1e-4).
    # 0 is the frictionless push-out
    disc_friction: float = 1.0
    magnetic_field_y: float = -0.5  # MuJoCo's default field
    action_noise: float = 0.0  # std of Gaussian noise added to the clipped control


@struct.dataclass
class CarState:
    pos: jax.Array  # (2,) body origin (site ``agent``), world frame
    yaw: jax.Array  # () angle of body +x (the car's left) in the world
    vel: jax.Array  # (2,) COM velocity in the car frame: (forward, left)
    yaw_rate: jax.Array  # ()
    fwd_accel: jax.Array  # () forward COM acceleration of the last substep (load transfer)
    ball_quat: jax.Array  # (4,) ball orientation relative to the car, (w, x, y, z)


def car_at(pos: jax.Array, yaw: jax.Array) -> CarState:
    """A car at rest at ``pos`` with body +x at angle ``yaw``, its ball unrotated (as at reset)."""
    zero = jnp.zeros((), jnp.float32)
    return CarState(
        pos=jnp.asarray(pos, jnp.float32),
        yaw=jnp.asarray(yaw, jnp.float32),
        vel=jnp.zeros((2,), jnp.float32),
        yaw_rate=zero,
        fwd_accel=zero,
        ball_quat=jnp.array([1.0, 0.0, 0.0, 0.0], jnp.float32),
    )


def forward_direction(yaw: jax.Array) -> jax.Array:
    """World direction of travel under positive throttle: body -y."""
    return jnp.stack([jnp.sin(yaw), -jnp.cos(yaw)])


def left_direction(yaw: jax.Array) -> jax.Array:
    """World direction of body +x, the car's left."""
    return jnp.stack([jnp.cos(yaw), jnp.sin(yaw)])


# --------------------------------------------------------------------------- dynamics


def motor_torques(ctrl: jax.Array, params: CarParams) -> jax.Array:
    """Wheel torques of ``ctrl`` (in [-1, 1]): gear times MuJoCo's force clamp."""
    return params.motor_gear * jnp.clip(ctrl, -params.motor_force_limit, params.motor_force_limit)


def contact_forces(vel, yaw_rate, torques, fwd_accel, params: CarParams):
    """Ground forces on the car: ``(force, torque, ball_velocity, ball_load)``.

    ``force`` is the total at the COM (forward, left), ``torque`` the yaw torque about it;
    ``ball_velocity`` (forward, left) and ``ball_load`` give the ball's spin (see the module
    docstring for the contact laws)."""
    v_f, v_l = vel[0], vel[1]
    weight = params.mass * params.gravity
    wheelbase = params.ball_forward - params.wheel_forward
    ball_load = (weight * -params.wheel_forward - params.mass * fwd_accel * params.load_transfer_height) / wheelbase
    ball_load = jnp.clip(ball_load, 0.0, weight)
    wheel_load = 0.5 * (weight - ball_load)
    r, c = params.wheel_radius, params.wheel_damping
    cap = params.wheel_friction * wheel_load
    k = cap / params.slip_speed
    cap_lat = params.wheel_lateral_friction * wheel_load
    side = jnp.array([-params.half_track, params.half_track])  # motor 0 on the right of travel
    u_fwd = v_f - yaw_rate * side  # forward speed of each wheel's contact point
    u_lat = v_l + yaw_rate * params.wheel_forward
    traction = jnp.clip((r * torques - c * u_fwd) * k / (c + r * r * k), -cap, cap)
    grip = -jnp.clip(u_lat * cap_lat / params.slip_speed, -cap_lat, cap_lat)
    # MuJoCo's pyramidal friction cone bounds |F_long| + |F_lat| by mu N (a diamond)
    scale = jnp.minimum(1.0, cap / jnp.maximum(jnp.abs(traction) + jnp.abs(grip), 1e-12))
    traction, grip = traction * scale, grip * scale
    ball_velocity = jnp.stack([v_f, v_l + yaw_rate * params.ball_forward])
    ball_speed = jnp.sqrt(ball_velocity[0] ** 2 + ball_velocity[1] ** 2)
    coeff = jnp.minimum(params.ball_rolling_drag, params.ball_friction * ball_load / jnp.maximum(ball_speed, 1e-9))
    ball_force = -coeff * ball_velocity
    force = jnp.stack([traction[0] + traction[1] + ball_force[0], grip[0] + grip[1] + ball_force[1]])
    torque = (
        params.wheel_forward * (grip[0] + grip[1])
        - (side[0] * traction[0] + side[1] * traction[1])
        + params.ball_forward * ball_force[1]
    )
    return force, torque, ball_velocity, ball_load


def _substep(carry, torques, params: CarParams):
    pos, yaw, vel, yaw_rate, fwd_accel, quat = carry
    h = params.timestep
    force, torque, ball_velocity, ball_load = contact_forces(vel, yaw_rate, torques, fwd_accel, params)
    accel = force / params.mass  # the COM's inertial acceleration in the car frame
    v_f = vel[0] + h * (accel[0] + yaw_rate * vel[1])
    v_l = vel[1] + h * (accel[1] - yaw_rate * v_f)
    new_yaw_rate = yaw_rate + h * torque / params.yaw_inertia
    # the COM moves with the new velocity (semi-implicit Euler); the origin follows the yaw
    com = pos - params.com_behind_origin * forward_direction(yaw)
    com = com + h * (v_f * forward_direction(yaw) + v_l * left_direction(yaw))
    yaw = yaw + h * new_yaw_rate
    pos = com + params.com_behind_origin * forward_direction(yaw)
    quat = _integrate_quat(quat, ball_spin(ball_velocity, ball_load, quat, params), h)
    return pos, yaw, jnp.stack([v_f, v_l]), new_yaw_rate, accel[0], quat


def car_step(state: CarState, ctrl: jax.Array, params: CarParams) -> CarState:
    """One env step (``frame_skip`` substeps) with ``ctrl`` held; ``ctrl`` is clipped to [-1, 1]."""
    torques = motor_torques(jnp.clip(jnp.asarray(ctrl, jnp.float32), -1.0, 1.0), params)
    carry = (state.pos, state.yaw, state.vel, state.yaw_rate, state.fwd_accel, state.ball_quat)
    carry = jax.lax.fori_loop(0, params.frame_skip, lambda _, c: _substep(c, torques, params), carry)
    pos, yaw, vel, yaw_rate, fwd_accel, quat = carry
    return CarState(pos=pos, yaw=jnp.mod(yaw, TWO_PI), vel=vel, yaw_rate=yaw_rate, fwd_accel=fwd_accel, ball_quat=quat)


# --------------------------------------------------------------------------- the rear ball


def quat_to_matrix(q: jax.Array) -> jax.Array:
    """Rotation matrix of a unit quaternion (w, x, y, z), as MuJoCo's ``mju_quat2Mat``."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    return jnp.stack(
        [
            jnp.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)]),
            jnp.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)]),
            jnp.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]),
        ]
    )


def ball_spin(ball_velocity, ball_load, quat, params: CarParams) -> jax.Array:
    """The ball's angular velocity relative to the car, in the ball's own frame (``ballangvel``).

    Rolling about the horizontal axis perpendicular to its velocity ``u`` (forward, left): in
    the car's body frame (x left, y back) ``(u_fwd, u_left, 0) |w| / |u|`` with ``|w| = |u| / r``
    until the spin at which the joint damping balances the skidding friction torque,
    ``mu_b N_b r / c_ball``, caps it.  Positive body-x spin rolls the ball forwards."""
    speed = jnp.sqrt(ball_velocity[0] ** 2 + ball_velocity[1] ** 2)
    skid_spin = params.ball_friction * ball_load * params.ball_radius / params.ball_damping
    per_speed = jnp.minimum(1.0 / params.ball_radius, skid_spin / jnp.maximum(speed, 1e-9))
    spin_car = jnp.stack([ball_velocity[0] * per_speed, ball_velocity[1] * per_speed, jnp.zeros_like(speed)])
    return quat_to_matrix(quat).T @ spin_car


def _integrate_quat(quat, spin_local, h):
    """MuJoCo's ``mju_quatIntegrate``: ``q <- q exp(w h / 2)`` with ``w`` in the local frame."""
    norm = jnp.sqrt(jnp.sum(spin_local**2))
    half = 0.5 * h * norm
    axis = spin_local / jnp.maximum(norm, 1e-12)
    dw, dv = jnp.cos(half), jnp.sin(half) * axis
    w, v = quat[0], quat[1:]
    out = jnp.concatenate([(w * dw - jnp.dot(v, dv))[None], w * dv + dw * v + jnp.cross(v, dv)])
    return out / jnp.sqrt(jnp.sum(out**2))


# --------------------------------------------------------------------------- sensors


def car_sensors(state: CarState, ctrl: jax.Array, params: CarParams) -> jax.Array:
    """The Car's 24 sensor readings in Safety-Gymnasium's order (see the module docstring)."""
    torques = motor_torques(jnp.clip(jnp.asarray(ctrl, jnp.float32), -1.0, 1.0), params)
    force, torque, ball_velocity, ball_load = contact_forces(
        state.vel, state.yaw_rate, torques, state.fwd_accel, params
    )
    w = state.yaw_rate
    s = params.com_behind_origin  # the site is this far ahead of the COM
    a_fwd = force[0] / params.mass - w * w * s
    a_left = force[1] / params.mass + torque / params.yaw_inertia * s
    v_fwd, v_left = state.vel[0], state.vel[1] + w * s
    zero = jnp.zeros((), jnp.float32)
    field = params.magnetic_field_y
    readings = [
        jnp.stack([a_left, -a_fwd, jnp.asarray(params.gravity, jnp.float32)]),  # accelerometer
        jnp.stack([v_left, -v_fwd, zero]),  # velocimeter
        jnp.stack([zero, zero, w]),  # gyro
        jnp.stack([field * jnp.sin(state.yaw), field * jnp.cos(state.yaw), zero]),  # magnetometer
        ball_spin(ball_velocity, ball_load, state.ball_quat, params),  # ballangvel_rear
        jnp.reshape(quat_to_matrix(state.ball_quat), (9,)),  # ballquat_rear
    ]
    return jnp.concatenate(readings).astype(jnp.float32)


# --------------------------------------------------------------------------- contacts


def footprint_distances(state: CarState, centres: jax.Array) -> jax.Array:
    """Distances from the car's body origin to ``centres`` (n, 2)."""
    d = centres - state.pos
    return jnp.sqrt(d[:, 0] ** 2 + d[:, 1] ** 2)


def push_out_of_discs(state: CarState, centres, radii, params: CarParams, start: CarState) -> CarState:
    """Static, colliding discs (buttons, pillars) against the car after an env step from ``start``.

    A footprint overlapping a disc by ``depth`` is moved out along the normal ``n`` (disc to
    car) to touching distance and loses its velocity into the disc, ``v_n`` (restitution 0).
    Coulomb friction, ``mu = disc_friction``, acts at the rim point ``-R n`` from the body
    origin on the car as a rigid body (a tangential impulse ``j`` there changes the rim's slip
    by ``j w``, ``w = 1 / m + R^2 / I``, and the yaw rate by ``-R j / I``).  Velocity: the
    impulse that stops the rim's slip ``v . t - R yaw_rate`` (``t = z x n``), clipped to
    ``+-mu m |v_n|`` (as :func:`saferl.envs.safety_nav.nav_contact._stop_robot`, with the rim's lever).
    Position: the rim's tangential displacement over the step is undone up to ``mu depth``,
    shared between translation and yaw in the same proportion (position-based friction:
    Macklin, Mueller, Chentanez and Kim, "Unified Particle Physics for Real-Time
    Applications", SIGGRAPH 2014, section 6.1); the velocity turns with the car frame.
    ``mu = 0`` is the frictionless push-out: tangential velocity, yaw and yaw rate kept."""
    radius = params.footprint_radius
    weight = 1.0 / params.mass + radius * radius / params.yaw_inertia  # w: slip per unit impulse
    for i in range(centres.shape[0]):  # a handful of discs; sequential so overlaps resolve in turn
        delta = state.pos - centres[i]
        dist = jnp.sqrt(delta[0] ** 2 + delta[1] ** 2)
        normal = jnp.where(dist > 1e-9, delta / jnp.maximum(dist, 1e-9), -forward_direction(state.yaw))
        tangent = jnp.stack([-normal[1], normal[0]])
        depth = params.footprint_radius + radii[i] - dist
        push = jnp.where(depth > 0.0, depth, 0.0)
        # velocity, in the car frame (forward, left): the part into the disc, then the rim's slip
        fwd, left = forward_direction(state.yaw), left_direction(state.yaw)
        n_car = jnp.stack([jnp.dot(normal, fwd), jnp.dot(normal, left)])
        t_car = jnp.stack([jnp.dot(tangent, fwd), jnp.dot(tangent, left)])
        into = jnp.where(depth > 0.0, jnp.minimum(jnp.dot(state.vel, n_car), 0.0), 0.0)  # -|v_n|
        vel = state.vel - into * n_car
        slip = jnp.dot(vel, t_car) - radius * state.yaw_rate
        cap = params.disc_friction * params.mass * -into
        impulse = -jnp.clip(slip / weight, -cap, cap)
        vel = vel + impulse / params.mass * t_car
        yaw_rate = state.yaw_rate - radius * impulse / params.yaw_inertia
        # position: out along the normal, then the rim's slip over the step undone up to mu depth
        pos = state.pos + push * normal
        turned = jnp.mod(state.yaw - start.yaw + math.pi, TWO_PI) - math.pi
        rim_slip = jnp.dot(pos - start.pos, tangent) - radius * turned
        undo = -jnp.clip(rim_slip, -params.disc_friction * push, params.disc_friction * push)
        pos = pos + undo / (weight * params.mass) * tangent
        d_yaw = -radius * undo / (weight * params.yaw_inertia)
        c, s = jnp.cos(d_yaw), jnp.sin(d_yaw)  # the same world velocity in the turned car frame
        vel = jnp.stack([c * vel[0] + s * vel[1], c * vel[1] - s * vel[0]])
        state = state.replace(pos=pos, yaw=jnp.mod(state.yaw + d_yaw, TWO_PI), vel=vel, yaw_rate=yaw_rate)
    return state
