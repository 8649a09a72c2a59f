"""RacecarCircle1 and the Racecar: observation layout and reset, the speed curve against the drive's
closed form and the original's measured speeds, the steady turning radius against the bicycle's
closed form and against the original, sensors in a steady turn, reward and sigwall cost on
hand-placed states, truncation, the circle lidar.  Two compiled programs: a vmapped 500-step
rollout (every dynamics test reuses it) and a vmapped reset."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saferl.envs import base
from saferl.envs.safety_nav import racecar
from saferl.envs.safety_nav.racecar import DRIVE_INERTIA, GEOMETRIC_WHEELBASE, REAR_AXLE_X, RacecarState, body_velocity
from saferl.envs.safety_nav.racecar_circle import RacecarCircle, RacecarCircleState, circle_reward

ENV = RacecarCircle()
PARAMS = ENV.default_params().replace(physics="planar")  # the planar port (MuJoCo: test_racecar_circle_mujoco.py)
B, T = 4, 500  # every rollout has this shape, so it compiles once
DT = PARAMS.timestep * PARAMS.frame_skip  # 0.04 s
BIN = 2 * math.pi / 16
# MuJoCo's steady full-throttle wheel speed: kv (20 - w) = c_w w
W_FULL = 20.0 * PARAMS.drive_kv / (PARAMS.drive_kv + PARAMS.wheel_damping)


def _rollout(state, actions, params):
    def one(state, actions):
        def body(s, a):
            s, obs, reward, cost, term, trunc, _ = ENV.step(s, a, params)
            out = dict(
                pos=s.robot.pos,
                heading=s.robot.heading,
                steer=s.robot.steer,
                yaw_rate=s.robot.yaw_rate,
                vel=body_velocity(s.robot, params),
                obs=obs,
                reward=reward,
                cost=cost,
                term=term,
                trunc=trunc,
            )
            return s, out

        return jax.lax.scan(body, state, actions)[1]

    return jax.vmap(one)(state, actions)


ROLLOUT = jax.jit(_rollout)
VRESET = jax.jit(jax.vmap(ENV.reset, in_axes=(0, None)))


def states(cars):
    """B hand-placed states from ``(x, y, heading, wheel_speed)`` tuples (at rest unless a wheel speed
    is given: then moving straight at its steady speed)."""
    cars = np.asarray(cars, np.float32)
    zero = jnp.zeros((B,), jnp.float32)
    robot = RacecarState(jnp.asarray(cars[:, :2]), jnp.asarray(cars[:, 2]), zero, jnp.asarray(cars[:, 3]), zero, zero)
    return RacecarCircleState(robot, jnp.zeros((B,), jnp.int32))


def rollout(cars, actions, params=PARAMS):
    """Constant ``actions`` (B, 2) for T steps; numpy outputs, step t at index t - 1."""
    actions = jnp.broadcast_to(jnp.asarray(actions, jnp.float32)[:, None, :], (B, T, 2))
    return jax.tree.map(np.asarray, ROLLOUT(states(cars), actions, params))


def forward(out):
    return out["vel"][..., 0] * np.cos(out["heading"]) + out["vel"][..., 1] * np.sin(out["heading"])


def circle_fit(xy):
    """Least-squares circle through points (n, 2): (centre, radius) (Kasa's algebraic fit)."""
    a = np.column_stack([2 * xy[:, 0], 2 * xy[:, 1], np.ones(len(xy))])
    b = (xy**2).sum(1)
    cx, cy, c = np.linalg.lstsq(a.astype(np.float64), b.astype(np.float64), rcond=None)[0]
    return np.array([cx, cy]), math.sqrt(c + cx**2 + cy**2)


def origin_lidar(x, y, heading, max_dist=6.0):
    """Hand computation of Safety-Gymnasium's pseudo-lidar of the single point (0, 0)."""
    angle = (math.atan2(-y, -x) - heading) % (2 * math.pi)
    position = angle / BIN
    i, alias = int(position) % 16, position - int(position)
    reading = max(0.0, max_dist - math.hypot(x, y)) / max_dist
    out = np.zeros(16)
    out[(i + 1) % 16] = alias * reading
    out[(i - 1) % 16] = (1 - alias) * reading
    out[i] = reading
    return out


# --------------------------------------------------------------------------- observation and reset


def test_registered_and_spaces():
    assert "RacecarCircle1" in base.registered()
    env = base.make("RacecarCircle1")
    assert env.observation_space(PARAMS).shape == (28,)
    space = env.action_space(PARAMS)
    assert space.shape == (2,) and np.all(np.asarray(space.low) == -1.0) and np.all(np.asarray(space.high) == 1.0)
    assert PARAMS.max_steps == 500 and PARAMS.lidar_max_dist == 6.0


def test_reset_placement_and_observation_layout():
    n = 256
    state, obs = VRESET(jax.random.split(jax.random.PRNGKey(3), n), PARAMS)
    pos, heading, obs = np.asarray(state.robot.pos), np.asarray(state.robot.heading), np.asarray(obs)
    assert obs.shape == (n, 28)
    # placement U[-0.8, 0.8]^2 (keep-out 0), heading U[0, 2 pi): bounds and spread
    assert np.all(np.abs(pos) <= 0.8) and pos.min() < -0.7 and pos.max() > 0.7
    assert np.all((heading >= 0) & (heading < 2 * math.pi)) and np.ptp(heading) > 5.5
    assert abs(pos.mean()) < 0.1 and np.all(np.asarray(state.time) == 0)
    # at rest: accelerometer reads gravity on z, velocimeter and gyro zero
    np.testing.assert_allclose(obs[:, 0:3], np.tile([0.0, 0.0, 9.81], (n, 1)), atol=1e-6)
    np.testing.assert_allclose(obs[:, 3:9], 0.0, atol=1e-7)
    # magnetometer: MuJoCo's field (0, -0.5, 0) seen in the body frame (R(heading)^T b)
    for k in range(0, n, 37):
        c, s = math.cos(heading[k]), math.sin(heading[k])
        np.testing.assert_allclose(obs[k, 9:12], np.array([[c, s, 0], [-s, c, 0], [0, 0, 1]]) @ [0, -0.5, 0], atol=1e-6)
        np.testing.assert_allclose(obs[k, 12:28], origin_lidar(pos[k, 0], pos[k, 1], heading[k]), atol=1e-5)


# --------------------------------------------------------------------------- drive: the speed curve


def test_speed_curve_against_closed_form_and_measured():
    out = rollout([(0, 0, 0.3, 0)] * 4, [(1, 0), (-1, 0), (0.5, 0), (1, 0)])
    fwd = forward(out)
    # Saturated servo (torque 1 while 20 - w > 1): J dw/dt = 1 - c w, w(t) = (1 - exp(-c t / J)) / c
    c, r = PARAMS.wheel_damping, PARAMS.wheel_radius
    ramp = lambda t: r * (1 - math.exp(-c * t / DRIVE_INERTIA)) / c  # noqa: E731
    for step in (1, 5, 20):
        assert fwd[0, step - 1] == pytest.approx(ramp(step * DT), rel=1e-4)
        assert fwd[1, step - 1] == pytest.approx(-ramp(step * DT), rel=1e-4)  # reverse is symmetric
    # steady state kv (u - w) = c w: w = u kv / (kv + c)
    assert fwd[0, -1] == pytest.approx(r * W_FULL, abs=1e-5)
    assert fwd[2, -1] == pytest.approx(r * 10.0 / 1.003, abs=1e-5)
    # the original's measured speeds at ctrl (20, 0), steps 1/5/25/50/100 (safety-gymnasium 1.0.0 on mujoco
    # 2.3.3; steps checked against the original, M-race; 0.997 also at 300).  The model's largest error is 0.0017
    # (step 25).
    for step, measured in zip((1, 5, 25, 50, 100, 300), (0.035, 0.176, 0.862, 0.997, 0.997, 0.997)):
        assert fwd[0, step - 1] == pytest.approx(measured, abs=0.0025), step
    # straight: no yaw, no sideways velocity, the heading kept
    np.testing.assert_allclose(out["yaw_rate"][0], 0.0, atol=1e-7)
    np.testing.assert_allclose(out["heading"][0], 0.3, atol=1e-6)


# --------------------------------------------------------------------------- steering: radius, measured turns, sensors


@pytest.mark.parametrize("geometry", ["fitted", "racecar.xml"])
def test_steady_turning_radius_is_the_bicycle_closed_form(geometry):
    # without the self-aligning torque, slip and oversteer, the angle settles at the command and the
    # no-slip point turns on a circle of radius L / tan(delta); the body origin, -x_p ahead of it,
    # on sqrt((L / tan(delta))^2 + x_p^2)
    # the bicycle alone: no self-aligning torque, slip, oversteer, nor the inner wheel on the bumper at full lock
    params = PARAMS.replace(align_torque=0.0, slip_gain=0.0, oversteer=0.0, bumper_angle=10.0)
    if geometry == "racecar.xml":  # the geometric wheelbase, no-slip point on the rear axle
        params = params.replace(wheelbase=GEOMETRIC_WHEELBASE, no_slip_x=REAR_AXLE_X)
    deltas = np.array([0.1, 0.3, 0.5, 0.785])
    out = rollout([(0, 0, 0, 0)] * 4, np.stack([np.ones(4), deltas / 0.785], 1), params)
    for k, delta in enumerate(deltas):
        np.testing.assert_allclose(out["steer"][k, -1], delta, atol=1e-5)
        ideal = params.wheelbase / math.tan(delta)
        centre, radius = circle_fit(out["pos"][k, 300:])
        assert radius == pytest.approx(math.hypot(ideal, params.no_slip_x), rel=2e-3), delta
        # rigid rotation about the centre: speed of the origin = radius x yaw rate, the centre on the left
        speed = np.linalg.norm(out["vel"][k, -1])
        assert speed == pytest.approx(radius * out["yaw_rate"][k, -1], rel=2e-3)
        h = out["heading"][k, -1]
        to_centre = centre - out["pos"][k, -1]
        assert -math.sin(h) * to_centre[0] + math.cos(h) * to_centre[1] == pytest.approx(ideal, rel=2e-3)


def test_steady_turns_against_the_original():
    # the original's steady turns (means over steps 101-250, M-race): throttle, steering (rad/s, rad) ->
    # radius of the body origin's path, forward and sideways velocity; the fit's residuals there are
    # 8 %, 2 %, 5 %, 4 % in radius and under 1.5 % in speed
    commands = [(20, 0.3), (20, 0.4), (8, 0.5), (12, 0.785)]
    measured = [(2.003, 0.962, 0.095), (1.227, 0.931, 0.144), (0.914, 0.379, 0.091), (0.531, 0.488, 0.211)]
    actions = [(u / 20.0, d / 0.785) for u, d in commands]
    out = rollout([(0, 0, 0, 0)] * 4, actions)
    fwd = forward(out)
    h = out["heading"]
    side = -out["vel"][..., 0] * np.sin(h) + out["vel"][..., 1] * np.cos(h)
    for k, (radius, speed, lateral) in enumerate(measured):
        ours = np.hypot(fwd[k, 100:250], side[k, 100:250]).mean() / out["yaw_rate"][k, 100:250].mean()
        assert ours == pytest.approx(radius, rel=0.1), commands[k]
        assert fwd[k, 100:250].mean() == pytest.approx(speed, rel=0.03), commands[k]
        assert side[k, 100:250].mean() == pytest.approx(lateral, abs=0.02), commands[k]  # to the left
    # the steady angle falls short of the command (self-aligning torque): measured 0.194 for 0.3
    assert 0.18 < out["steer"][0, -1] < 0.25


def test_sensors_in_a_steady_turn_match_the_path():
    # geometry of the simulated path against the sensors: the site (0.02 ahead of the body origin)
    # runs on a circle; velocimeter = its speed, gyro = d heading / dt, accelerometer = centripetal
    # the bicycle alone: no self-aligning torque, slip, oversteer, nor the inner wheel on the bumper at full lock
    params = PARAMS.replace(align_torque=0.0, slip_gain=0.0, oversteer=0.0, bumper_angle=10.0)
    out = rollout([(0.2, -0.1, 1.0, 0)] * 4, [(1, 0.4), (0.6, -0.7), (-0.8, 0.5), (0.4, 1.0)], params)
    for k in range(4):
        h = out["heading"][k]
        site = out["pos"][k] + params.site_x * np.stack([np.cos(h), np.sin(h)], 1)
        _, radius = circle_fit(site[300:])
        obs = out["obs"][k, -1]
        yaw_rate = np.diff(np.unwrap(h[-50:])).mean() / DT
        site_speed = np.linalg.norm(np.diff(site[-50:], axis=0), axis=1).mean() / DT
        assert obs[8] == pytest.approx(yaw_rate, rel=1e-3) and np.all(np.abs(obs[6:8]) < 1e-7)
        assert np.linalg.norm(obs[3:5]) == pytest.approx(site_speed, rel=1e-3) and obs[5] == 0.0
        np.testing.assert_allclose(np.linalg.norm(obs[0:2]), site_speed**2 / radius, rtol=2e-3)
        # centripetal: perpendicular to the site's velocity, to its left when turning counter-clockwise
        acc, vel = obs[0:2], obs[3:5]
        assert abs(acc @ vel) < 1e-3 * np.linalg.norm(acc) * np.linalg.norm(vel)
        assert np.sign(vel[0] * acc[1] - vel[1] * acc[0]) == np.sign(yaw_rate)
        assert obs[2] == pytest.approx(9.81)
        c, s = math.cos(h[-1]), math.sin(h[-1])
        np.testing.assert_allclose(obs[9:12], [-0.5 * s, -0.5 * c, 0.0], atol=1e-6)


# --------------------------------------------------------------------------- reward, cost, truncation, lidar


def test_reward_by_hand():
    cases = [  # (position, velocity) -> reward
        ((1.5, 0.0), (0.0, 1.0), 0.1),  # on the circle, counter-clockwise: 0.1 x speed
        ((1.5, 0.0), (0.0, -0.7), -0.07),  # clockwise is negative
        ((1.5, 0.0), (0.8, 0.0), 0.0),  # radial motion earns nothing
        ((0.0, 2.5), (-2.0, 0.0), 0.1 * 2.0 / 2.0),  # 1 m off the circle halves it
        ((3.0, 4.0), (-0.8, 0.6), 0.1 * 1.0 / 4.5),
        ((0.0, 0.0), (1.0, 0.0), 0.0),  # the origin (Safety-Gymnasium divides by zero)
    ]
    pos, vel, expected = (jnp.asarray([c[i] for c in cases], jnp.float32) for i in range(3))
    rewards = jax.vmap(circle_reward, in_axes=(0, 0, None))(pos, vel, PARAMS)
    np.testing.assert_allclose(np.asarray(rewards), np.asarray(expected), atol=1e-7)
    # through step: a car on the circle at (1.5, 0) heading north (south) at full speed moves 0.04 s
    # straight; reward on the new position and velocity
    out = rollout(
        [(1.5, 0, math.pi / 2, W_FULL), (1.5, 0, -math.pi / 2, W_FULL), (0.9, 0, 0, W_FULL), (0, 0.5, math.pi, W_FULL)],
        [(1, 0)] * 4,
    )
    v = PARAMS.wheel_radius * W_FULL
    y = v * DT
    rho = math.hypot(1.5, y)
    expected = 0.1 * (v * 1.5 / rho) / (1 + abs(rho - 1.5))
    assert out["reward"][0, 0] == pytest.approx(expected, rel=1e-5)
    assert out["reward"][1, 0] == pytest.approx(-expected, rel=1e-5)
    assert out["reward"][2, 0] == pytest.approx(0.0, abs=1e-6)  # driving radially outwards
    # at (0, 0.5) heading west: tangential counter-clockwise, 1 m inside the circle
    rho = math.hypot(v * DT, 0.5)
    assert out["reward"][3, 0] == pytest.approx(0.1 * (v * 0.5 / rho) / (1 + abs(rho - 1.5)), rel=1e-5)


def test_sigwall_cost_and_truncation():
    out = rollout([(1.12, 0.3, 0, 0), (1.13, 0.3, 0, 0), (-1.13, 0.0, 2.0, 0), (0.0, 1.4, 0, 0)], [(0, 0)] * 4)
    np.testing.assert_array_equal(out["cost"][:, 0], [0.0, 1.0, 1.0, 0.0])  # only |x| > 1.125 costs
    np.testing.assert_array_equal(out["cost"][:, -1], [0.0, 1.0, 1.0, 0.0])  # at rest all episode
    assert out["cost"].dtype == np.float32
    # 500 steps, then truncated; never terminated
    expected = np.arange(1, T + 1) >= 500
    for k in range(B):
        np.testing.assert_array_equal(out["trunc"][k], expected)
    assert not out["term"].any()
    # driving out through a wall starts costing when the body origin crosses x = 1.125
    out = rollout([(0.9, 0.0, 0.0, W_FULL)] * 4, [(1, 0)] * 4)
    crossed = out["pos"][0, :, 0] > 1.125
    np.testing.assert_array_equal(out["cost"][0], crossed.astype(np.float32))
    assert crossed[5] and not crossed[4]  # 0.9 + 0.0399 t


def test_circle_lidar_sees_only_the_origin():
    cars = [(-2.0, -1.0, 0.3, 0), (0.5, 0.0, math.pi, 0), (1.1, 0.2, 0.0, 0), (6.5, 0.0, 1.0, 0)]
    out = rollout(cars, [(0, 0)] * 4)
    lidar = out["obs"][:, 0, 12:28]
    # (-2, -1), heading 0.3: the origin at robot-frame angle atan2(1, 2) - 0.3 = 0.1636 rad, bin 0,
    # alias 0.4167, reading (6 - sqrt 5) / 6
    reading, alias = (6 - math.sqrt(5)) / 6, (math.atan2(1, 2) - 0.3) / BIN
    expected = np.zeros(16)
    expected[0], expected[1], expected[15] = reading, alias * reading, (1 - alias) * reading
    np.testing.assert_allclose(lidar[0], expected, atol=1e-5)
    # straight ahead at 0.5 m: bin 0 and, alias 0, bin 15
    np.testing.assert_allclose(lidar[1][[0, 15]], [5.5 / 6] * 2, atol=1e-5)
    assert np.count_nonzero(lidar[1] > 1e-6) == 2
    # next to the wall at x = 1.125: nothing ahead (walls are not observed), the origin behind-left
    np.testing.assert_allclose(lidar[2], origin_lidar(1.1, 0.2, 0.0), atol=1e-5)
    assert np.all(lidar[2][[0, 1, 2, 14, 15]] == 0.0)
    np.testing.assert_array_equal(lidar[3], np.zeros(16))  # beyond max_dist 6


# --------------------------------------------------------------------------- full lock: the inner wheel on the bumper


def test_the_bumper_contact_rises_from_its_angle_to_the_hinge_limit():
    angles = jnp.array([0.0, 0.7, PARAMS.bumper_angle, 0.5 * (PARAMS.bumper_angle + 0.785), 0.785, -0.785])
    np.testing.assert_allclose(racecar.bumper_contact(angles, PARAMS), [0.0, 0.0, 0.0, 0.5, 1.0, 1.0], atol=1e-5)
    assert float(racecar.bumper_contact(jnp.float32(0.785), PARAMS.replace(bumper_angle=10.0))) == 0.0


@pytest.mark.parametrize("side", [1.0, -1.0])
def test_reverse_at_full_lock_crabs_on_a_straight_line(side):
    """The closed form of the locked regime at the servo's steady wheel speed ``w = -20 / 1.003``: no yaw, the body
    at ``r w (g0 + g1 |r w|)`` backwards and ``sign(delta) (c0 + c1 |r w|)`` times that sideways; and the original's
    measured 0.516 m/s back and 0.299 sideways (steps 101-250, benchmarks/calibration/racecar/grid_reverse.json) within
    10 %."""
    out = rollout([(0, 0, 0.3, 0)] * B, [(-1.0, side)] * B)
    surface = PARAMS.wheel_radius * -W_FULL
    speed = surface * (PARAMS.lock_grip + PARAMS.lock_grip_per_speed * abs(surface))
    crab = side * (PARAMS.lock_crab + PARAMS.lock_crab_per_speed * abs(surface)) * speed
    assert abs(float(out["steer"][0, -1])) == pytest.approx(0.785, abs=1e-5)
    np.testing.assert_allclose(out["yaw_rate"][0, -50:], 0.0, atol=1e-6)
    h = float(out["heading"][0, -1])  # 0.3, turned a little while the steering went to the lock
    body = np.array([[math.cos(h), math.sin(h)], [-math.sin(h), math.cos(h)]]) @ out["vel"][0, -1]
    np.testing.assert_allclose(body, [speed, crab], rtol=1e-4)
    assert body[0] == pytest.approx(-0.516, rel=0.1) and body[1] == pytest.approx(-side * 0.299, rel=0.1)
