"""PointGoal1: pseudo-lidar, hazard cost, goal reward and resampling, point dynamics,
truncation, vmap over params, reset keep-outs, observation layout."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saferl.envs import base
from saferl.envs.safety_nav.lidar import pseudo_lidar
from saferl.envs.safety_nav.point_goal import PointGoal, PointGoalParams

ENV = PointGoal()
PARAMS = ENV.default_params()
RESET = jax.jit(ENV.reset)
STEP = jax.jit(ENV.step)
BATCH = 4
VRESET = jax.jit(jax.vmap(ENV.reset))
VSTEP = jax.jit(jax.vmap(ENV.step))
BIN = 2 * math.pi / 16
LIDAR = jax.jit(pseudo_lidar, static_argnames=("num_bins", "max_dist", "exp_gain", "alias"))
FAR = jnp.array([[5.0 + i, 5.0] for i in range(8)], jnp.float32)  # hazards out of the way


def make_state(pos=(0.0, 0.0), heading=0.0, goal=(1.2, 1.2), hazards=FAR, vase=(-5.0, -5.0), **changes):
    state, _ = RESET(jax.random.PRNGKey(0), PARAMS)
    pos, goal = jnp.asarray(pos, jnp.float32), jnp.asarray(goal, jnp.float32)
    state = state.replace(
        pos=pos,
        heading=jnp.float32(heading),
        goal=goal,
        hazards=jnp.asarray(hazards, jnp.float32),
        vases=jnp.asarray([vase], jnp.float32),
        last_dist_goal=jnp.linalg.norm(goal - pos),
    )
    return state.replace(**{k: jnp.asarray(v, jnp.float32) for k, v in changes.items()})


def run(state, action, n, params=PARAMS):
    for _ in range(n):
        state, obs, reward, cost, term, trunc, info = STEP(state, jnp.asarray(action, jnp.float32), params)
    return state, obs


def batch(params, n=BATCH):
    return jax.tree.map(lambda x: jnp.broadcast_to(jnp.asarray(x), (n,) + jnp.shape(x)), params)


# --------------------------------------------------------------------------- lidar


def lidar(pos, heading, objects, **kw):
    pos, objects = jnp.asarray(pos, jnp.float32), jnp.asarray(objects, jnp.float32)
    return np.asarray(LIDAR(pos, jnp.float32(heading), objects, **kw))


def test_lidar_straight_ahead_is_bin_zero():
    obs = lidar((0.0, 0.0), 0.0, [[1.0, 0.0]])
    expected = np.zeros(16)
    expected[0] = 2.0 / 3.0  # (max_dist - d) / max_dist with max_dist 3
    expected[15] = 2.0 / 3.0  # alias 0: the bin below gets (1 - alias) * sensor
    np.testing.assert_allclose(obs, expected, atol=1e-5)
    # same picture from a translated, rotated robot: the angle is taken in the robot frame
    np.testing.assert_allclose(lidar((1.0, 1.0), math.pi / 2, [[1.0, 2.0]]), expected, atol=1e-4)
    np.testing.assert_allclose(lidar((0.0, 0.0), math.pi, [[-1.0, 0.0]]), expected, atol=1e-4)


def test_lidar_left_is_bin_four_right_is_bin_twelve():
    left = lidar((0.0, 0.0), 0.0, [[0.0, 1.5]])
    assert left[4] == pytest.approx(0.5, abs=1e-5)
    assert left[3] == pytest.approx(0.5, abs=1e-5) and left[5] == pytest.approx(0.0, abs=1e-5)
    assert np.count_nonzero(left > 1e-5) == 2
    right = lidar((0.0, 0.0), 0.0, [[0.0, -1.5]])
    assert right[12] == pytest.approx(0.5, abs=1e-5) and right[11] == pytest.approx(0.5, abs=1e-5)
    # heading pi/2: the world +x axis is now on the robot's right
    np.testing.assert_allclose(lidar((0.0, 0.0), math.pi / 2, [[1.5, 0.0]]), right, atol=1e-4)


def test_lidar_alias_splits_into_neighbours():
    angle = 4.25 * BIN
    obs = lidar((0.0, 0.0), 0.0, [[1.5 * math.cos(angle), 1.5 * math.sin(angle)]])
    assert obs[4] == pytest.approx(0.5, abs=1e-5)
    assert obs[5] == pytest.approx(0.25 * 0.5, abs=1e-5)  # alias * sensor
    assert obs[3] == pytest.approx(0.75 * 0.5, abs=1e-5)  # (1 - alias) * sensor
    assert np.count_nonzero(obs > 1e-6) == 3
    no_alias = lidar((0.0, 0.0), 0.0, [[1.5 * math.cos(angle), 1.5 * math.sin(angle)]], alias=False)
    np.testing.assert_allclose(no_alias, np.eye(16)[4] * 0.5, atol=1e-5)
    # wrap-around: a bin-15 object aliases into bin 0
    angle = 15.5 * BIN
    wrap = lidar((0.0, 0.0), 0.0, [[math.cos(angle), math.sin(angle)]])
    assert wrap[15] == pytest.approx(2 / 3, abs=1e-5)
    assert wrap[0] == pytest.approx(1 / 3, abs=1e-5) and wrap[14] == pytest.approx(1 / 3, abs=1e-5)


def test_lidar_range_max_over_objects_and_exponential():
    np.testing.assert_array_equal(lidar((0.0, 0.0), 0.0, [[3.5, 0.0], [0.0, -3.01]]), np.zeros(16))
    np.testing.assert_array_equal(lidar((0.0, 0.0), 0.0, np.zeros((0, 2))), np.zeros(16))
    both = lidar((0.0, 0.0), 0.0, [[2.0, 0.0], [1.0, 0.0]])  # the closer object wins the bin
    assert both[0] == pytest.approx(2 / 3, abs=1e-5)
    expo = lidar((0.0, 0.0), 0.0, [[2.0, 0.0]], max_dist=None, exp_gain=0.5)
    assert expo[0] == pytest.approx(math.exp(-1.0), abs=1e-5)


# --------------------------------------------------------------------------- cost and reward


def test_cost_is_one_inside_a_hazard_and_zero_outside():
    for offset, expected in [(0.0, 1.0), (0.1, 1.0), (0.19, 1.0), (0.21, 0.0), (0.5, 0.0)]:
        hazards = FAR.at[3].set(jnp.array([offset, 0.0]))
        state = make_state(hazards=hazards)
        _, _, _, cost, _, _, info = STEP(state, jnp.zeros(2), PARAMS)
        assert float(cost) == expected, offset
        assert float(info["cost_hazards"]) == expected
        assert cost.dtype == jnp.float32 and cost.shape == ()
    # two overlapping hazards still cost one unit (Safety-Gymnasium's indicator)
    state = make_state(hazards=FAR.at[0].set(jnp.array([0.05, 0.0])).at[1].set(jnp.array([-0.05, 0.0])))
    assert float(STEP(state, jnp.zeros(2), PARAMS)[3]) == 1.0
    # the radius is a parameter
    state = make_state(hazards=FAR.at[0].set(jnp.array([0.25, 0.0])))
    assert float(STEP(state, jnp.zeros(2), PARAMS.replace(hazard_radius=0.3))[3]) == 1.0


def test_reward_is_progress_towards_goal():
    state = make_state(goal=(0.5, 0.0), last_dist_goal=0.6)
    state, _, reward, _, _, _, info = STEP(state, jnp.zeros(2), PARAMS)  # standing still
    assert float(reward) == pytest.approx(0.1, abs=1e-6)
    assert float(info["goal_reached"]) == 0.0 and float(state.last_dist_goal) == pytest.approx(0.5)
    before = state
    for _ in range(5):  # thrust towards the goal: reward = previous distance - new distance
        state, _, reward, _, _, _, _ = STEP(before, jnp.array([1.0, 0.0]), PARAMS)
        progress = float(before.last_dist_goal) - float(jnp.linalg.norm(state.goal - state.pos))
        assert float(reward) == pytest.approx(progress, abs=1e-6)
        before = state
    assert float(reward) > 0.0
    # reward_distance scales the progress
    state = make_state(goal=(0.5, 0.0), last_dist_goal=0.6)
    assert float(STEP(state, jnp.zeros(2), PARAMS.replace(reward_distance=2.0))[2]) == pytest.approx(0.2, abs=1e-6)


def test_goal_bonus_and_resampling_on_arrival():
    hazards = jnp.array(
        [[-1.0, -1.0], [-1.0, 0.0], [-1.0, 1.0], [0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [1.0, -1.0], [0.0, -1.0]]
    )
    state = make_state(goal=(0.25, 0.0), last_dist_goal=0.4, hazards=hazards, vase=(0.5, 0.5))
    new, obs, reward, _, _, _, info = STEP(state, jnp.zeros(2), PARAMS)
    assert float(info["goal_reached"]) == 1.0
    assert float(reward) == pytest.approx(0.4 - 0.25 + 1.0, abs=1e-6)
    goal = np.asarray(new.goal)
    assert np.all(np.abs(goal) <= 1.5 - 0.305 + 1e-6)
    assert np.linalg.norm(goal - np.asarray(new.pos)) >= 0.4 + 0.305 - 1e-5  # agent keep-out
    assert np.min(np.linalg.norm(np.asarray(hazards) - goal, axis=1)) >= 0.18 + 0.305 - 1e-5
    assert np.linalg.norm(goal - np.array([0.5, 0.5])) >= 0.15 + 0.305 - 1e-5
    assert float(new.last_dist_goal) == pytest.approx(np.linalg.norm(goal - np.asarray(new.pos)), abs=1e-6)
    np.testing.assert_allclose(obs[12:28], LIDAR(new.pos, new.heading, new.goal[None]), atol=1e-6)
    # standing still afterwards earns nothing: the distance baseline moved with the goal
    assert float(STEP(new, jnp.zeros(2), PARAMS)[2]) == pytest.approx(0.0, abs=1e-6)
    # the bonus is a parameter; goals are resampled differently for different keys
    other = STEP(state.replace(key=jax.random.PRNGKey(7)), jnp.zeros(2), PARAMS.replace(reward_goal=2.0))
    assert float(other[2]) == pytest.approx(0.15 + 2.0, abs=1e-6)
    assert not np.allclose(np.asarray(other[0].goal), goal)


# --------------------------------------------------------------------------- dynamics


def test_zero_action_stays_still_and_velocity_decays():
    state = make_state(pos=(0.3, -0.2), heading=1.0)
    end, obs = run(state, [0.0, 0.0], 30)
    np.testing.assert_allclose(end.pos, state.pos, atol=1e-7)
    assert float(end.heading) == pytest.approx(1.0, abs=1e-7)
    np.testing.assert_allclose(obs[3:9], np.zeros(6), atol=1e-7)  # velocimeter and gyro
    moving = make_state(vel=jnp.array([1.0, 0.0]), ang_vel=2.0)
    end, _ = run(moving, [0.0, 0.0], 30)
    assert 0.0 < float(jnp.linalg.norm(end.vel)) < 0.5  # slide damping, time constant m / 0.01 = 0.52 s
    assert abs(float(end.ang_vel)) < 0.5  # the turn servo holds zero rate


def test_thrust_moves_along_heading():
    heading = 0.7
    state = make_state(heading=heading)
    end, obs = run(state, [1.0, 0.0], 50)
    d = np.asarray(end.pos - state.pos)
    forward = np.array([math.cos(heading), math.sin(heading)])
    assert d @ forward > 0.5
    assert abs(d[0] * forward[1] - d[1] * forward[0]) < 1e-4 * np.linalg.norm(d)
    # speed after 1 s: 1.5 m/s terminal (0.3 * 0.05 N / 0.01) with time constant m / 0.01
    tau = PARAMS.mass / PARAMS.slide_damping
    assert float(jnp.linalg.norm(end.vel)) == pytest.approx(1.5 * (1 - math.exp(-1.0 / tau)), rel=0.02)
    assert obs[3] == pytest.approx(float(jnp.linalg.norm(end.vel)), rel=1e-4)  # velocimeter: forward
    assert abs(obs[4]) < 1e-4 and obs[0] > 0.0  # no sideways speed; accelerating forwards
    back, _ = run(state, [-1.0, 0.0], 20)
    assert np.asarray(back.pos - state.pos) @ forward < -0.1
    # MuJoCo's force range clamps the motor at |u| = 0.05; below it thrust is linear in u
    half, _ = run(state, [0.5, 0.0], 50)
    np.testing.assert_allclose(half.pos, end.pos, atol=1e-6)
    small, _ = run(state, [0.02, 0.0], 50)
    assert np.linalg.norm(np.asarray(small.pos - state.pos)) == pytest.approx(0.4 * np.linalg.norm(d), rel=1e-3)


def test_turn_servo_rates():
    state = make_state()
    end, obs = run(state, [0.0, 1.0], 50)
    np.testing.assert_allclose(end.pos, state.pos, atol=1e-7)  # turning in place
    assert float(end.ang_vel) == pytest.approx(3.0, rel=1e-3)  # clamped torque 0.015 / hinge damping 0.005
    assert obs[8] == pytest.approx(3.0, rel=1e-3)  # gyro z
    end, _ = run(state, [0.0, -0.01], 50)  # below the clamp the servo settles at 0.3 u / (0.09 + 0.005)
    assert float(end.ang_vel) == pytest.approx(0.3 * -0.01 / 0.095, rel=1e-3)


def test_robot_pushes_the_vase_without_cost():
    state = make_state(vase=(0.3, 0.0))
    end, _ = run(state, [1.0, 0.0], 20)
    vase = np.asarray(end.vases[0])
    assert vase[0] > 0.35 and abs(vase[1]) < 1e-5
    assert np.linalg.norm(vase - np.asarray(end.pos)) >= 0.2 - 1e-5
    assert float(STEP(end, jnp.array([1.0, 0.0]), PARAMS)[3]) == 0.0


# --------------------------------------------------------------------------- episode, vmap, reset


def test_truncation_exactly_at_max_steps():
    assert PARAMS.max_steps == 1000
    params = PARAMS.replace(max_steps=5)
    state, _ = RESET(jax.random.PRNGKey(1), params)
    flags = []
    for _ in range(5):
        state, _, _, _, term, trunc, _ = STEP(state, jnp.array([0.3, -0.2]), params)
        assert not bool(term)
        flags.append(bool(trunc))
    assert flags == [False, False, False, False, True] and int(state.time) == 5
    state = state.replace(time=jnp.int32(998))  # the default 1000-step limit
    state, *_, trunc, _ = STEP(state, jnp.zeros(2), PARAMS)
    assert not bool(trunc)
    state, *_, trunc, _ = STEP(state, jnp.zeros(2), PARAMS)
    assert bool(trunc) and int(state.time) == 1000


def test_vmap_over_envs_with_different_params():
    plist = [
        PARAMS.replace(max_steps=3, hazard_radius=0.2),
        PARAMS.replace(max_steps=5, hazard_radius=0.3),
        PARAMS.replace(max_steps=1000, action_noise=0.5),
        PARAMS.replace(max_steps=2, reward_goal=3.0),
    ]
    params = jax.tree.map(lambda *xs: jnp.stack([jnp.asarray(x) for x in xs]), *plist)
    states, obs = VRESET(jax.random.split(jax.random.PRNGKey(2), BATCH), params)
    assert obs.shape == (BATCH, 60) and np.all(np.isfinite(obs))
    # everyone at the origin facing +x, a hazard 0.25 away: only the 0.3-radius env pays
    single = make_state(hazards=FAR.at[0].set(jnp.array([0.25, 0.0])))
    states = jax.tree.map(lambda s, b: jnp.broadcast_to(s, b.shape).astype(b.dtype), single, states)
    states = states.replace(key=jax.random.split(jax.random.PRNGKey(3), BATCH))
    actions = jnp.zeros((BATCH, 2))
    truncs = []
    for _ in range(5):
        states, obs, reward, cost, term, trunc, info = VSTEP(states, actions, params)
        truncs.append(np.asarray(trunc))
        np.testing.assert_array_equal(cost, [0.0, 1.0, 0.0, 0.0])
        assert set(info) == {"goal_reached", "cost_hazards"} and info["goal_reached"].shape == (BATCH,)
    truncs = np.array(truncs)
    assert [int(np.argmax(truncs[:, i])) + 1 for i in (0, 1, 3)] == [3, 5, 2] and not truncs[:, 2].any()
    # only the noisy env moved under zero action
    moved = np.linalg.norm(np.asarray(states.pos), axis=1) + np.abs(np.asarray(states.heading))
    assert moved[2] > 1e-3 and np.all(moved[[0, 1, 3]] < 1e-7)


def test_reset_respects_keepouts_for_many_keys():
    params = batch(PARAMS)
    keepout = np.array([0.4, 0.305] + [0.18] * 8 + [0.15])
    layouts = []
    for i in range(60):
        states, obs = VRESET(jax.random.split(jax.random.PRNGKey(100 + i), BATCH), params)
        assert np.all(np.isfinite(obs)) and obs.shape == (BATCH, 60)
        lay = np.concatenate([states.pos[:, None], states.goal[:, None], states.hazards, states.vases], axis=1)
        layouts.append(lay)
        np.testing.assert_allclose(states.last_dist_goal, np.linalg.norm(lay[:, 1] - lay[:, 0], axis=1), atol=1e-6)
        assert np.all((states.heading >= 0) & (states.heading < 2 * math.pi))
        assert np.all(states.time == 0) and np.all(states.vel == 0)
    lay = np.concatenate(layouts)
    assert np.all(np.abs(lay) <= (1.5 - keepout)[None, :, None] + 1e-6)  # own keep-out inside the extent
    dist = np.linalg.norm(lay[:, :, None] - lay[:, None, :], axis=-1)
    need = keepout[:, None] + keepout[None, :]
    off_diag = ~np.eye(len(keepout), dtype=bool)
    assert np.all(dist[:, off_diag] >= need[off_diag] - 1e-5)
    assert len(np.unique(np.round(lay[:, 0], 5), axis=0)) == len(lay)  # keys give different layouts
    # objects spread over their squares, not clumped: the hazards cover all four quadrants
    assert np.all([np.mean(np.sign(lay[:, 2:10, k]) > 0) for k in (0, 1)] > np.array(0.4))


def test_observation_layout_and_spaces():
    assert "PointGoal1" in base.registered()
    env = base.make("PointGoal1")
    assert isinstance(env, PointGoal) and env.description and env.cost_shape == ()
    params = env.default_params()
    assert isinstance(params, PointGoalParams)
    space = env.observation_space(params)
    assert space.shape == (60,)
    act = env.action_space(params)
    assert act.shape == (2,) and act.low == -1.0 and act.high == 1.0
    state, obs = RESET(jax.random.PRNGKey(5), PARAMS)
    assert obs.shape == (60,) and obs.dtype == jnp.float32 and bool(space.contains(obs))
    s, c = math.sin(float(state.heading)), math.cos(float(state.heading))
    np.testing.assert_allclose(obs[:3], [0.0, 0.0, 9.81], atol=1e-6)  # accelerometer at rest
    np.testing.assert_allclose(obs[3:9], np.zeros(6), atol=1e-7)  # velocimeter, gyro
    np.testing.assert_allclose(obs[9:12], [-0.5 * s, -0.5 * c, 0.0], atol=1e-6)  # magnetometer
    np.testing.assert_allclose(obs[12:28], LIDAR(state.pos, state.heading, state.goal[None]), atol=1e-6)
    np.testing.assert_allclose(obs[28:44], LIDAR(state.pos, state.heading, state.hazards), atol=1e-6)
    np.testing.assert_allclose(obs[44:60], LIDAR(state.pos, state.heading, state.vases), atol=1e-6)
    assert obs[12:28].max() > 0 and obs[28:44].max() > 0  # everything is within lidar range
    _, obs, reward, cost, term, trunc, info = STEP(state, jnp.array([0.7, 0.3]), PARAMS)
    assert np.all(np.isfinite(obs)) and reward.dtype == jnp.float32 and term.dtype == jnp.bool_
    assert all(v.shape == () for v in info.values())
