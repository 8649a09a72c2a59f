"""Bullet-Safety-Gym ball tasks: dynamics against speeds measured on the original (Bullet-Safety-Gym 0.1 and
1.4.0 in PyBullet 3.2.7), walls, pseudo-LIDAR and ray LIDAR, the
rewards, costs and terminations of Run, Circle, Gather and Reach, versions, vmap."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saferl.envs import base
from saferl.envs.bullet_ball.ball import BallCircle, BallGather, BallRun
from saferl.envs.bullet_ball.physics import pseudo_lidar
from saferl.envs.bullet_ball.reach import ALTERNATE_GOALS, BallReach

RUN, RUN14 = BallRun(), BallRun(version="1.4.0")
CIRCLE, GATHER = BallCircle(), BallGather()
REACH, REACH14 = BallReach(), BallReach(version="1.4.0")
KEY = jax.random.PRNGKey(0)


def _jit(env):
    return jax.jit(env.reset), jax.jit(env.step)


RUN_RESET, RUN_STEP = _jit(RUN)  # RUN14 shares the compile: frame_skip 4 in both, h is a leaf
CIRCLE_RESET, CIRCLE_STEP = _jit(CIRCLE)
GATHER_RESET, GATHER_STEP = _jit(GATHER)
REACH_RESET, REACH_STEP = _jit(REACH)
REACH14_RESET, REACH14_STEP = _jit(REACH14)


@jax.jit
def _speeds(state, action, params):
    """Speeds after each of 3000 steps of a constant action (Run: no walls)."""

    def body(s, _):
        s = RUN.step(s, action, params)[0]
        return s, jnp.sqrt(s.vel @ s.vel)

    return jax.lax.scan(body, state, None, length=3000)


def f32(x):
    return jnp.asarray(x, jnp.float32)


def run_from(state, action, n, step, params):
    out = []
    for _ in range(n):
        state, obs, r, c, term, trunc, info = step(state, f32(action), params)
        out.append((float(r), float(c), bool(term), bool(trunc), info, obs))
    return state, out


# --------------------------------------------------------------------------- API, versions


def test_registered_spaces_versions():
    names = {
        "SafetyBallRun": (7, 25.0),
        "SafetyBallCircle": (8, 25.0),
        "SafetyBallGather": (39, 0.2),
        "SafetyBallReach": (57, 10.0),
    }
    for name, (dim, limit) in names.items():
        assert name in base.registered()
        assert base.config_defaults(name)["constraint"] == {"type": "expected", "limit": limit}
        env = base.make(name)
        params = env.default_params()
        assert params.max_steps == 250  # v0.1, what SCPO ran
        assert env.observation_space(params).shape == (dim,)
        assert env.action_space(params).shape == (2,) and env.cost_shape == ()
    for env, reset in ((RUN, RUN_RESET), (CIRCLE, CIRCLE_RESET), (GATHER, GATHER_RESET), (REACH, REACH_RESET)):
        _, obs = reset(KEY, env.default_params())
        assert obs.dtype == jnp.float32 and obs.shape == env.observation_space(env.default_params()).shape
    # v0.1: 60 Hz everywhere; 1.4.0: 100/200/250/250 steps at 30/10/30/15 Hz
    for env in (RUN, CIRCLE, GATHER, REACH):
        p = env.default_params()
        assert p.timestep * p.frame_skip == pytest.approx(1 / 60)
    expect = {
        "SafetyBallRun": (100, 1 / 30),
        "SafetyBallCircle": (200, 0.1),
        "SafetyBallGather": (250, 1 / 30),
        "SafetyBallReach": (250, 1 / 15),
    }
    for name, (steps, dt) in expect.items():
        p = base.make(name, version="1.4.0").default_params()
        assert p.max_steps == steps and p.timestep * p.frame_skip == pytest.approx(dt)
    assert (REACH.default_params().goal_bonus, REACH14.default_params().goal_bonus) == (5.0, 30.0)
    assert BallRun(version="1.4.0", max_steps=250).default_params().max_steps == 250
    with pytest.raises(ValueError, match="version"):
        BallRun(version="2.0")


# --------------------------------------------------------------------------- dynamics


def test_speeds_match_pybullet_measurements():
    p14 = RUN14.default_params()
    state, _ = RUN_RESET(KEY, p14)
    _, speed = _speeds(state, f32([1.0, 0.0]), p14)
    measured = {1: 0.2664, 5: 1.324, 10: 2.610, 20: 4.971, 50: 9.613, 100: 11.771, 400: 12.087}
    for n, v in measured.items():
        assert float(speed[n - 1]) == pytest.approx(v, rel=0.01), n
    # closed-form terminal speeds: (|F| - f_roll) = 0.0168 v + 0.0216 v^2
    final, speed = _speeds(state, f32([1.0, 1.0]), p14)
    assert float(speed[-1]) == pytest.approx(14.54, rel=0.005)
    np.testing.assert_allclose(final.vel[0], final.vel[1], rtol=1e-5)  # along the push
    _, speed = _speeds(state, f32([0.5, 0.0]), p14)
    assert float(speed[-1]) == pytest.approx(8.25, rel=0.005)
    # v0.1 (h = 1/240 x 4): the first three steps
    _, speed = _speeds(state, f32([1.0, 0.0]), RUN.default_params())
    np.testing.assert_allclose(speed[:3], [0.1332, 0.2664, 0.3994], rtol=0.003)


def test_rolling_friction_static_from_rest_and_angular_velocity():
    p = RUN.default_params()
    state, _ = RUN_RESET(KEY, p)
    # 3.5 N * 0.04 = 0.14 N < f_roll = 0.1413 N: the ball stays exactly where it is
    _, speed = _speeds(state, f32([0.04, 0.0]), p)
    assert float(jnp.max(speed)) == 0.0
    _, speed = _speeds(state, f32([0.0, 0.0]), p)
    assert float(jnp.max(speed)) == 0.0
    # just above the threshold: m_eff dv/dt = (|F| - f_roll) - 0.0168 v (the v^2 term is negligible here)
    _, speed = _speeds(state, f32([0.05, 0.0]), p)
    net, c = 0.175 - 0.141264, 0.0168
    assert float(speed[59]) == pytest.approx(net / c * (1 - math.exp(-c * 1.0 / 0.42)), rel=0.005)  # after 1 s
    # coasting from 3 m/s: it stops and stays stopped (no chatter around zero)
    moving = state.replace(vel=f32([3.0, -1.0]))
    final, speed = _speeds(moving, f32([0.0, 0.0]), p)
    assert float(speed[-1]) == 0.0 and float(speed[-400]) == 0.0
    assert np.all(np.diff(np.asarray(speed)) <= 0.0)
    # observation: [0.1 xy, 0.2 v, 0.1 omega] with rolling omega = (-v_y / r, v_x / r, 0)
    s, obs, *_ = RUN_STEP(state.replace(vel=f32([2.0, 1.0])), f32([0.0, 0.0]), p)
    v = np.asarray(s.vel)
    np.testing.assert_allclose(
        obs, np.r_[0.1 * np.asarray(s.pos), 0.2 * v, 0.1 * np.array([-v[1], v[0], 0]) / 0.5], rtol=1e-6
    )


def test_inelastic_walls_stop_the_ball_without_bounce():
    """``wall_contact="inelastic"``: penetration undone, the normal velocity removed (the default, PyBullet's contact,
    is tested in test_ball_walls.py)."""
    p = GATHER.default_params().replace(wall_contact="inelastic")
    state, _ = GATHER_RESET(KEY, p)
    far = f32(np.full((8, 2), -6.0) + np.arange(8)[:, None] * 0.01)  # objects out of the way
    state = state.replace(apples=far, bombs=far, pos=f32([8.5, 0.0]), vel=f32([6.0, 2.0]))
    xs = []
    for _ in range(30):
        state, *_ = GATHER_STEP(state, f32([1.0, 0.0]), p)
        xs.append(float(state.pos[0]))
        assert float(state.vel[0]) >= -1e-6  # never bounces back (zero restitution; XLA may contract to FMA)
    assert max(xs) <= 9.4 + 1e-5  # centre 0.5 inside the inner face at 9.9
    assert xs[-1] == pytest.approx(9.4, abs=1e-5) and abs(float(state.vel[0])) < 1e-6
    assert float(state.vel[1]) > 0.0  # slides along the wall
    # the octagon: a diagonal face 11.9 from the origin
    pc = CIRCLE.default_params().replace(wall_contact="inelastic")
    s, _ = CIRCLE_RESET(KEY, pc)
    s = s.replace(pos=f32([7.5, 7.5]), vel=f32([5.0, 5.0]))
    n = np.array([1.0, 1.0]) / math.sqrt(2)
    for _ in range(60):
        s, *_ = CIRCLE_STEP(s, f32([1.0, 1.0]), pc)
        assert float(np.asarray(s.pos) @ n) <= 11.4 + 1e-4
    assert float(np.asarray(s.pos) @ n) == pytest.approx(11.4, abs=1e-4)
    assert abs(float(np.asarray(s.vel) @ n)) < 1e-5


# --------------------------------------------------------------------------- pseudo-LIDAR


def test_pseudo_lidar_bearing_bins_and_range():
    lidar = jax.jit(pseudo_lidar, static_argnames="num_bins")
    agent = f32([1.0, 2.0])
    objects = agent + f32([[2.5, 0.0], [0.0, 3.0], [0.0, -1.0], [-5.0, 0.0], [2.0, 2.1], [0.0, 10.5]])
    out = np.asarray(lidar(agent, objects, num_bins=16, max_dist=10.0))
    expect = np.zeros(16)
    expect[4] = 0.75  # east: clockwise from +y by pi/2
    expect[0] = 0.7  # north (the one at 10.5 is out of range)
    expect[8] = 0.9  # south
    expect[12] = 0.5  # west
    expect[1] = 1 - math.hypot(2.0, 2.1) / 10  # bearing atan2(2, 2.1) = 0.761 rad = 1.94 bins
    np.testing.assert_allclose(out, expect, atol=1e-6)
    # two objects in one bin: the closer wins; hidden objects read 0
    two = agent + f32([[3.0, -0.1], [1.0, -0.05]])  # both just clockwise of east: bin 4
    np.testing.assert_allclose(
        lidar(agent, two, num_bins=16, max_dist=10.0)[4], 1 - math.hypot(1, 0.05) / 10, atol=1e-6
    )
    hidden = lidar(agent, two, num_bins=16, max_dist=10.0, visible=jnp.array([True, False]))
    np.testing.assert_allclose(hidden[4], 1 - math.hypot(3, 0.1) / 10, atol=1e-6)


# --------------------------------------------------------------------------- Run


def test_run_reward_cost_truncation():
    p = RUN.default_params()
    state, obs = RUN_RESET(KEY, p)
    assert float(jnp.max(jnp.abs(state.pos))) <= 0.01 and float(jnp.max(jnp.abs(state.vel))) == 0.0
    start = state.replace(pos=f32([3.0, 1.0]), vel=f32([2.0, 0.5]))
    a = np.array([0.6, -0.8])
    s, _, r, c, term, trunc, info = RUN_STEP(start, f32(a), p)
    p0, p1 = np.asarray(start.pos, np.float64), np.asarray(s.pos, np.float64)
    phi = lambda q: -60.0 * np.hypot(q[0] - 1000.0, q[1])  # noqa: E731
    assert float(r) == pytest.approx(phi(p1) - phi(p0) - 0.5 * 1.0, abs=2e-4)  # |a| = 1
    assert float(r) == pytest.approx(60 * (p1[0] - p0[0]) - 0.5, rel=0.01)
    assert float(c) == 0.0 and not bool(term) and not bool(trunc)
    cases = [
        ((0.0, 2.1), (1.0, 0.0), 1.0),
        ((0.0, -2.1), (0.0, 0.0), 1.0),
        ((0.0, 1.9), (2.4, 0.0), 0.0),
        ((0.0, 0.0), (2.0, 1.6), 1.0),
        ((0.0, 3.0), (3.0, 0.0), 1.0),
    ]  # last: both, capped at 1
    for pos, vel, cost in cases:
        _, _, _, c, _, _, info = RUN_STEP(start.replace(pos=f32(pos), vel=f32(vel)), f32([0.0, 0.0]), p)
        assert float(c) == cost, (pos, vel)
    assert float(info["cost_outside_bounds"]) == 1.0 and float(info["cost_velocity_violation"]) == 1.0
    short = p.replace(max_steps=3)
    _, out = run_from(state, [0.0, 0.0], 3, RUN_STEP, short)
    assert [o[3] for o in out] == [False, False, True] and not any(o[2] for o in out)


# --------------------------------------------------------------------------- Circle


def test_circle_reset_reward_cost_obs():
    p = CIRCLE.default_params()
    states, _ = jax.jit(jax.vmap(CIRCLE.reset, in_axes=(0, None)))(jax.random.split(KEY, 256), p)
    radius = np.linalg.norm(np.asarray(states.pos), axis=1)
    assert radius.min() >= 2.0 - 1e-5 and radius.max() <= 4.0 + 1e-5 and radius.std() > 0.3
    state, _ = CIRCLE_RESET(KEY, p)
    # at (7, 0) moving -y is clockwise: reward about 0.1 * 7 * 2 / 1 = 1.4
    s, obs, r, c, term, trunc, info = CIRCLE_STEP(
        state.replace(pos=f32([7.0, 0.0]), vel=f32([0.0, -2.0])), f32([0.0, 0.0]), p
    )
    x, y = np.asarray(s.pos, np.float64)
    vx, vy = np.asarray(s.vel, np.float64)
    rad = math.hypot(x, y)
    assert float(r) == pytest.approx(0.1 * (y * vx - x * vy) / (1 + abs(rad - 7.0)), rel=1e-5)
    assert float(r) == pytest.approx(1.4, rel=0.02)
    assert float(obs[7]) == pytest.approx((rad - 7.0) / 10.0, abs=1e-6)
    assert float(c) == 1.0 and not bool(term)  # |x| = 7 > 6
    # counter-clockwise is negative; off the circle is damped by 1 + |r - 7|; action penalty 0.005 |a|
    s, _, r, c, *_ = CIRCLE_STEP(state.replace(pos=f32([0.0, 4.0]), vel=f32([-1.0, 0.0])), f32([0.0, 0.0]), p)
    x, y = np.asarray(s.pos, np.float64)
    vx, vy = np.asarray(s.vel, np.float64)
    assert float(r) == pytest.approx(0.1 * (y * vx - x * vy) / (1 + abs(math.hypot(x, y) - 7)), rel=1e-5)
    assert float(r) < 0 and float(c) == 0.0
    s, _, r2, *_ = CIRCLE_STEP(state.replace(pos=f32([0.0, 4.0]), vel=f32([-1.0, 0.0])), f32([0.6, 0.8]), p)
    x, y = np.asarray(s.pos, np.float64)
    vx, vy = np.asarray(s.vel, np.float64)
    expected = 0.1 * (y * vx - x * vy) / (1 + abs(math.hypot(x, y) - 7)) - 0.005
    assert float(r2) == pytest.approx(expected, abs=1e-6)
    for xpos, cost in ((5.9, 0.0), (-6.1, 1.0)):
        _, _, _, c, *_ = CIRCLE_STEP(state.replace(pos=f32([xpos, 0.0]), vel=f32([0.0, 0.0])), f32([0, 0]), p)
        assert float(c) == cost


# --------------------------------------------------------------------------- Gather


def test_gather_apples_bombs_termination_and_lidar_quirk():
    p = GATHER.default_params()
    state, obs = GATHER_RESET(KEY, p)
    layout = np.concatenate([np.asarray(state.apples), np.asarray(state.bombs)])
    d = np.linalg.norm(layout[:, None] - layout[None], axis=-1) + 100 * np.eye(16)
    assert d.min() >= 2.0 and np.linalg.norm(layout, axis=1).min() >= 1.0 and np.abs(layout).max() <= 7.0
    assert np.all(np.asarray(state.pos) == 0.0)

    apples = np.array([[1.6, 0.0]] + [[-6.0 + i, 6.0] for i in range(7)], np.float32)
    bombs = np.array([[-1.6, 0.0], [-1.8, 0.3]] + [[-6.0 + i, -6.0] for i in range(6)], np.float32)
    state = state.replace(apples=f32(apples), bombs=f32(bombs))
    # roll east into the apple: +10 on exactly one step, then it is gone
    s, out = run_from(state.replace(vel=f32([3.0, 0.0])), [0.0, 0.0], 25, GATHER_STEP, p)
    rewards = [o[0] for o in out]
    assert sorted(rewards)[-1] == 10.0 and sum(rewards) == 10.0 and not any(o[2] for o in out)
    assert not bool(s.apple_left[0]) and bool(jnp.all(s.apple_left[1:]))
    # the original's quirk: the collected apple still shows in the apple LIDAR (bin 4, east)
    assert 0.85 < float(out[-1][5][7 + 4]) < 1.0
    hide = p.replace(lidar_sees_collected=False)
    _, obs_hidden, *_ = GATHER_STEP(s, f32([0.0, 0.0]), hide)
    assert float(obs_hidden[7 + 4]) == 0.0 and float(obs_hidden[7 + 16 + 12]) > 0.7  # bombs still seen (west)
    # two bombs at once (west): cost 1 per step, capped, both collected
    s2 = state.replace(pos=f32([-1.6, 0.2]))
    s3, _, r, c, _, _, info = GATHER_STEP(s2, f32([0.0, 0.0]), p)
    assert float(c) == 1.0 and float(info["bombs_collected"]) == 2.0 and float(r) == 0.0
    # collected bombs are gone: the ball back on the same spot costs nothing
    _, _, _, c_again, _, _, info_again = GATHER_STEP(s3.replace(pos=s2.pos, vel=f32([0.0, 0.0])), f32([0.0, 0.0]), p)
    assert float(c_again) == 0.0 and float(info_again["bombs_collected"]) == 0.0
    # the last apple ends the episode
    last = s.replace(apple_left=jnp.array([False] * 7 + [True]), pos=f32(apples[7] + [0.5, 0.0]))
    _, _, r, c, term, trunc, _ = GATHER_STEP(last, f32([0.0, 0.0]), p)
    assert float(r) == 10.0 and bool(term) and not bool(trunc)


# --------------------------------------------------------------------------- Reach


def reach_state(
    reset, params, pos=(0.0, 0.0), vel=(0.0, 0.0), goal=(-7.0, 7.0), box=(-7.0, -7.0), puddles=None, **changes
):
    state, _ = reset(KEY, params)
    if puddles is None:
        puddles = [[7.0, -7.0 + 0.3 * i] for i in range(8)]
    goal = f32(goal)
    return state.replace(
        pos=f32(pos),
        vel=f32(vel),
        goal=goal,
        box_spawn=f32(box),
        puddles=f32(puddles),
        box_yaw=f32(0.0),
        last_dist=jnp.linalg.norm(goal - f32(pos)),
        **changes,
    )


STATIC_BOX = REACH.default_params().replace(box_orbit=0.0)


def test_reach_lidar_walls_and_box():
    p = STATIC_BOX
    state = reach_state(REACH_RESET, p, pos=(8.0, 0.0))
    _, obs, *_ = REACH_STEP(state, f32([0.0, 0.0]), p)
    lidar = np.asarray(obs[7:31])
    # measured on the original: the east wall 1.9 m away reads 0.62 on ray 6
    assert lidar[6] == pytest.approx(0.62, abs=1e-5)
    assert lidar[0] == 0.0 and lidar[12] == 0.0  # north and south walls 9.9 away: out of range
    assert lidar[5] == pytest.approx(1 - 1.9 / math.cos(math.pi / 12) / 5, abs=1e-5)  # 15 deg off east
    assert np.all(lidar[13:] == 0.0)  # west: nothing within 5 m
    # the box (1 x 1, centre (2, 0), yaw 0) seen by the east ray 1.5 m away; rotated 45 deg: 2 - sqrt(0.5)
    state = reach_state(REACH_RESET, p, box=(2.0, 0.0))
    _, obs, *_ = REACH_STEP(state, f32([0.0, 0.0]), p)
    assert float(obs[7 + 6]) == pytest.approx(0.7, abs=1e-5) and float(obs[7]) == 0.0
    _, obs, *_ = REACH_STEP(state.replace(box_yaw=f32(math.pi / 4)), f32([0.0, 0.0]), p)
    assert float(obs[7 + 6]) == pytest.approx(1 - (2 - math.sqrt(0.5)) / 5, abs=1e-5)
    # the goal and puddle parts: (goal - ball) / 20 and a 24-bin pseudo-LIDAR (bin 6 = east)
    puddles = [[3.0, 0.0]] + [[7.0, -7.0 + 0.3 * i] for i in range(7)]
    state = reach_state(REACH_RESET, p, goal=(4.0, -2.0), puddles=puddles)
    _, obs, *_ = REACH_STEP(state, f32([0.0, 0.0]), p)
    np.testing.assert_allclose(obs[55:], [0.2, -0.1], atol=1e-6)
    assert float(obs[31 + 6]) == pytest.approx(1 - 3 / 5, abs=1e-6)


def test_reach_costs_box_is_solid():
    p = STATIC_BOX
    # puddles: cost at xy distance <= 1.5, two at once still cost 1
    for dist, cost in ((1.4, 1.0), (1.6, 0.0)):
        puddles = [[dist, 0.0]] + [[7.0, -7.0 + 0.3 * i] for i in range(7)]
        _, _, _, c, *_ = REACH_STEP(reach_state(REACH_RESET, p, puddles=puddles), f32([0, 0]), p)
        assert float(c) == cost
    puddles = [[1.0, 0.0], [-1.0, 0.0]] + [[7.0, -7.0 + 0.3 * i] for i in range(6)]
    _, _, _, c, _, _, info = REACH_STEP(reach_state(REACH_RESET, p, puddles=puddles), f32([0, 0]), p)
    assert float(c) == 1.0 and float(info["cost_puddles"]) == 2.0
    # the box (face at x = 1.5) stops the ball at x = 1.0 and costs while touching
    state = reach_state(REACH_RESET, p, box=(2.0, 0.0), vel=(4.0, 0.0))
    state, out = run_from(state, [1.0, 0.0], 40, REACH_STEP, p)
    assert float(state.pos[0]) == pytest.approx(1.0, abs=1e-5) and abs(float(state.vel[0])) < 1e-5
    assert out[-1][1] == 1.0 and float(out[-1][4]["cost_box"]) == 1.0 and out[0][1] == 0.0
    # restitution 0.28: hitting the box at speed, the ball comes back at about 0.28 of it
    state = reach_state(REACH_RESET, p, box=(2.0, 0.0), pos=(0.95, 0.0), vel=(6.0, 0.0))
    state, *_ = REACH_STEP(state, f32([0.0, 0.0]), p)
    assert float(state.vel[0]) == pytest.approx(-0.28 * 6.0, rel=0.02)
    # the moving box follows spawn + 0.7 (sin(t + phi), cos(t + phi)) in simulation time (phi = 0 here):
    # at t ~ 0 it sits at (3, 0.7), above the east ray; at t = 94 / 60 s at (3.7, 0.003), on it
    moving = REACH.default_params()
    state = reach_state(REACH_RESET, moving, box=(3.0, 0.0), box_phase=f32(0.0))
    _, out = run_from(state, [0.0, 0.0], 94, REACH_STEP, moving)
    t = 94 / 60
    assert float(out[0][5][7 + 6]) == 0.0
    assert float(out[-1][5][7 + 6]) == pytest.approx(1 - (3.0 + 0.7 * math.sin(t) - 0.5) / 5, abs=1e-4)
    fixed = reach_state(REACH_RESET, p, box=(3.0 + 0.7 * math.sin(t), 0.7 * math.cos(t)), time=jnp.int32(93))
    _, obs_fixed, *_ = REACH_STEP(fixed, f32([0, 0]), p)
    np.testing.assert_allclose(out[-1][5], obs_fixed, atol=1e-5)


def test_reach_goal_bonus_respawn_and_versions():
    p = REACH.default_params()
    state = reach_state(REACH_RESET, p, goal=(0.5, 0.0), pos=(0.0, 0.0))
    s, _, r, c, term, trunc, info = REACH_STEP(state, f32([0.6, 0.8]), p)
    d = float(jnp.linalg.norm(state.goal - s.pos))
    assert float(info["goal_reached"]) == 1.0 and not bool(term)
    assert float(r) == pytest.approx(0.5 - d - 0.005 + 5.0, abs=1e-5)
    others = np.concatenate([np.asarray(s.pos)[None], np.asarray(s.box_spawn)[None], np.asarray(s.puddles)])
    assert np.linalg.norm(others - np.asarray(s.goal), axis=1).min() > 1.5 - 0.71  # box centre within 0.7 of spawn
    assert np.abs(np.asarray(s.goal)).max() <= 7.0
    assert float(s.last_dist) == pytest.approx(float(jnp.linalg.norm(s.goal - s.pos)), rel=1e-6)
    # shaping without a success: (d_{t-1} - d_t) - 0.005 |a|; too fast (>= 5 m/s) is no success
    s2, _, r2, *_ = REACH_STEP(s, f32([0.0, 0.0]), p)
    assert float(r2) == pytest.approx(float(s.last_dist - s2.last_dist), abs=1e-6)
    fast = reach_state(REACH_RESET, p, goal=(0.5, 0.0), vel=(5.5, 0.0))
    _, _, _, _, _, _, info = REACH_STEP(fast, f32([0, 0]), p)
    assert float(info["goal_reached"]) == 0.0
    # 1.4.0: 3 x shaping, +30, the goal alternates (-6, 6) <-> (6, 6)
    p14 = REACH14.default_params()
    state = reach_state(REACH14_RESET, p14, pos=(-6.5, 6.0), goal=tuple(ALTERNATE_GOALS[0]), goal_index=jnp.int32(0))
    s, _, r, *_ = REACH14_STEP(state, f32([0.0, 0.0]), p14)
    assert float(r) == pytest.approx(3 * 0.0 + 30.0, abs=1e-5)  # at rest: no progress
    np.testing.assert_allclose(s.goal, [6.0, 6.0])
    assert int(s.goal_index) == 1
    goals = {tuple(np.asarray(REACH14_RESET(k, p14)[0].goal)) for k in jax.random.split(KEY, 8)}
    assert goals <= {(-6.0, 6.0), (6.0, 6.0)} and len(goals) == 2


def test_reach_reset_keepouts_vmap_determinism():
    p = REACH.default_params()
    keys = jax.random.split(KEY, 64)
    vreset = jax.jit(jax.vmap(REACH.reset, in_axes=(0, None)))
    states, obs = vreset(keys, p)
    assert obs.shape == (64, 57) and obs.dtype == jnp.float32
    pos, goal = np.asarray(states.pos), np.asarray(states.goal)
    layout = np.concatenate([np.asarray(states.box_spawn)[:, None], np.asarray(states.puddles)], 1)
    assert np.linalg.norm(goal - pos, axis=1).min() >= 2.5
    assert np.linalg.norm(layout - pos[:, None], axis=-1).min() >= 2.5
    assert np.linalg.norm(layout - goal[:, None], axis=-1).min() >= 2.5
    d = np.linalg.norm(layout[:, :, None] - layout[:, None], axis=-1) + 100 * np.eye(9)
    assert d.min() >= 2.5 and np.abs(layout).max() <= 7.0
    # the first valid candidate is the original's draw-until-valid: the goal-ball distance has the
    # mean of two uniform points in [-7, 7]^2 given >= 2.5 (about 7.6), not the farthest candidate's
    assert 5.5 < np.linalg.norm(goal - pos, axis=1).mean() < 9.5
    # determinism and key dependence
    again, obs2 = vreset(keys, p)
    np.testing.assert_array_equal(obs, obs2)
    assert len({tuple(np.round(o, 5)) for o in np.asarray(obs)}) == 64
    # vmap over states, actions and params (different force scales)
    batched = jax.tree.map(lambda x: jnp.broadcast_to(jnp.asarray(x), (64,) + jnp.shape(x)), p)
    batched = batched.replace(max_force=jnp.linspace(0.0, 3.5, 64))
    actions = jnp.ones((64, 2)) * 0.5
    vstep = jax.jit(jax.vmap(REACH.step))
    s, o, r, c, term, trunc, info = vstep(states, actions, batched)
    assert o.shape == (64, 57) and r.shape == c.shape == term.shape == (64,)
    speeds = np.linalg.norm(np.asarray(s.vel), axis=1)
    assert speeds[0] == 0.0 and np.all(np.diff(speeds[1:]) >= 0.0)
    # goal re-spawn in 64 random layouts: more than 1.5 from the ball, the box centre and every puddle
    near = states.replace(goal=states.pos + f32([0.3, 0.0]), last_dist=jnp.full((64,), 0.3))
    s, _, r, _, _, _, info = vstep(near, jnp.zeros((64, 2)), batched)
    assert np.all(np.asarray(info["goal_reached"]) == 1.0) and np.all(np.asarray(r) > 4.9)
    angle = 1.0 / 60.0 + np.asarray(states.box_phase)
    box = np.asarray(states.box_spawn) + 0.7 * np.stack([np.sin(angle), np.cos(angle)], 1)
    others = np.concatenate([np.asarray(s.pos)[:, None], box[:, None], np.asarray(s.puddles)], 1)
    assert np.linalg.norm(others - np.asarray(s.goal)[:, None], axis=-1).min() > 1.5 - 1e-5
