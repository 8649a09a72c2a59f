"""PointPush1: observation layout, the two-part 3-D distance reward, success and goal resampling,
hazard cost, pillar and box contacts, reset keep-outs.

Two compiled programs only (a vmapped reset and a single step): hand-placed states are built
from one row of the vmapped reset.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saferl.envs import base
from saferl.envs.safety_nav.point_push import PointPush, PointPushParams

ENV = PointPush()
PARAMS = ENV.default_params().replace(physics="planar")  # the planar port (MuJoCo: test_point_push_mujoco.py)
BATCH = 256
VRESET = jax.jit(jax.vmap(ENV.reset, in_axes=(0, None)))
STEP = jax.jit(ENV.step)
FAR_HAZARDS = [[-5.0, -5.0], [-6.0, -5.0]]
BIN = 2 * math.pi / 16


def f32(x):
    return jnp.asarray(x, jnp.float32)


def dist3(a, b, dz):
    return math.sqrt((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 + dz**2)


def make_state(
    pos=(0.0, 0.0),
    heading=0.0,
    goal=(-3.0, 3.0),
    hazards=FAR_HAZARDS,
    pillar=(5.0, 5.0),
    box=(-4.0, -2.0),
    box_yaw=0.0,
    **changes,
):
    states, _ = VRESET(jax.random.split(jax.random.PRNGKey(0), BATCH), PARAMS)
    state = jax.tree.map(lambda x: x[0], states)
    state = state.replace(
        pos=f32(pos),
        heading=f32(heading),
        goal=f32(goal),
        hazards=f32(hazards),
        pillars=f32([pillar]),
        box_pos=f32(box),
        box_yaw=f32(box_yaw),
    )
    state = state.replace(last_dist_box=f32(dist3(pos, box, 0.1)), last_box_goal=f32(dist3(box, goal, 0.04)))
    return state.replace(**{k: f32(v) for k, v in changes.items()})


def run(state, action, n, params=PARAMS):
    rows = []
    for _ in range(n):
        state, obs, reward, cost, term, trunc, info = STEP(state, f32(action), params)
        rows.append(state)
    return state, rows


# --------------------------------------------------------------------------- independent references


def lidar_ref(pos, heading, objects, num_bins=16, max_dist=3.0):
    """Safety-Gymnasium's _obs_lidar_pseudo with aliasing, written out in numpy."""
    out = np.zeros(num_bins)
    for x, y in np.reshape(objects, (-1, 2)):
        dx, dy = x - pos[0], y - pos[1]
        ex = math.cos(heading) * dx + math.sin(heading) * dy
        ey = -math.sin(heading) * dx + math.cos(heading) * dy
        angle = math.atan2(ey, ex) % (2 * math.pi)
        b = int(angle / BIN) % num_bins
        alias = angle / BIN - int(angle / BIN)
        sensor = max(0.0, max_dist - math.hypot(ex, ey)) / max_dist
        out[b] = max(out[b], sensor)
        out[(b + 1) % num_bins] = max(out[(b + 1) % num_bins], alias * sensor)
        out[(b - 1) % num_bins] = max(out[(b - 1) % num_bins], (1 - alias) * sensor)
    return out


def box_penetration(point, radius, box, yaw, size=0.2):
    """Deepest overlap of a disc with the push box's footprint (the cube plus four corner blocks
    of half-size size/2 at (+-size, +-size), Safety-Gymnasium world.py), in numpy."""
    c, s = math.cos(yaw), math.sin(yaw)
    dx, dy = point[0] - box[0], point[1] - box[1]
    lx, ly = c * dx + s * dy, -s * dx + c * dy
    deepest = -np.inf
    for ox, oy, half in [(0, 0, size)] + [(sx * size, sy * size, size / 2) for sx in (1, -1) for sy in (1, -1)]:
        qx, qy = abs(lx - ox) - half, abs(ly - oy) - half
        outside = math.hypot(max(qx, 0.0), max(qy, 0.0))
        sdf = outside + min(max(qx, qy), 0.0)
        deepest = max(deepest, radius - sdf)
    return deepest


def robot_disc_world(state):
    """The robot's collision discs as point.xml gives them: sphere r 0.1 and the nose cube's two
    front discs (r 0.025 at (0.125, +-0.025))."""
    c, s = math.cos(float(state.heading)), math.sin(float(state.heading))
    p = np.asarray(state.pos, float)
    return [
        (p + np.array([c * fx - s * fy, s * fx + c * fy]), r)
        for fx, fy, r in [(0.0, 0.0, 0.1), (0.125, 0.025, 0.025), (0.125, -0.025, 0.025)]
    ]


# --------------------------------------------------------------------------- observation


def test_registered_spaces_and_observation_layout():
    env = base.make("PointPush1")
    assert isinstance(env, PointPush) and "PointPush1" in base.registered()
    assert env.observation_space(PARAMS).shape == (76,) and env.action_space(PARAMS).shape == (2,)
    # one object of each kind in its own direction: goal ahead, hazard left, pillar behind, box right
    heading = 0.4
    ahead = lambda a, d: (d * math.cos(heading + a), d * math.sin(heading + a))  # noqa: E731
    state = make_state(
        heading=heading,
        goal=ahead(0.5 * BIN, 1.5),
        hazards=[ahead(4.5 * BIN, 1.2), (-5, -5)],
        pillar=ahead(8.25 * BIN, 0.9),
        box=ahead(12.75 * BIN, 2.1),
    )
    _, obs, *_ = STEP(state, f32([0.0, 0.0]), PARAMS)
    obs = np.asarray(obs)
    assert obs.shape == (76,) and obs.dtype == np.float32
    pos, h = (0.0, 0.0), heading
    np.testing.assert_allclose(obs[12:28], lidar_ref(pos, h, [state.goal]), atol=1e-5)
    np.testing.assert_allclose(obs[28:44], lidar_ref(pos, h, state.hazards), atol=1e-5)
    np.testing.assert_allclose(obs[44:60], lidar_ref(pos, h, state.pillars), atol=1e-5)
    np.testing.assert_allclose(obs[60:76], lidar_ref(pos, h, [state.box_pos]), atol=1e-5)
    assert [int(np.argmax(obs[12 + 16 * k : 28 + 16 * k])) for k in range(4)] == [0, 4, 8, 12]
    assert obs[12] == pytest.approx(0.5, abs=1e-5) and obs[60 + 12] == pytest.approx(0.3, abs=1e-5)
    # sensors at rest: accelerometer reads gravity, magnetometer the rotated (0, -0.5) field
    np.testing.assert_allclose(
        obs[:12], [0, 0, 9.81, 0, 0, 0, 0, 0, 0, -0.5 * math.sin(h), -0.5 * math.cos(h), 0], atol=1e-5
    )


# --------------------------------------------------------------------------- reward, success, cost


def test_reward_terms_use_3d_body_distances():
    # first term only: the robot coasts 1 m/s towards a box that does not move
    state = make_state(box=(1.5, 0.3), goal=(-1.0, 1.0), vel=(1.0, 0.0))
    new, _, reward, *_ = STEP(state, f32([0.0, 0.0]), PARAMS)
    p = np.asarray(new.pos, float)
    assert p[0] > 0.015 and np.allclose(new.box_pos, state.box_pos)
    expected = dist3((0, 0), (1.5, 0.3), 0.1) - dist3(p, (1.5, 0.3), 0.1)  # agent z 0.1, box z 0.2
    assert float(reward) == pytest.approx(expected, abs=1e-6)
    assert abs(expected - (math.hypot(1.5, 0.3) - math.hypot(1.5 - p[0], 0.3 - p[1]))) > 1e-5  # z matters
    # both terms by hand on a standing robot: the baselines are set by hand
    state = make_state(box=(1.0, 1.0), goal=(-0.5, 1.0), last_dist_box=1.5, last_box_goal=2.0)
    new, _, reward, *_ = STEP(state, f32([0.0, 0.0]), PARAMS)
    d_box, d_bg = math.sqrt(2 + 0.01), math.sqrt(1.5**2 + 0.04**2)  # goal body z 0.16
    assert float(reward) == pytest.approx((1.5 - d_box) + (2.0 - d_bg), abs=1e-6)
    assert float(new.last_dist_box) == pytest.approx(d_box, abs=1e-6)
    assert float(new.last_box_goal) == pytest.approx(d_bg, abs=1e-6)
    # the weights scale their own term; the gate null_dist * size switches the first term off
    scaled = STEP(state, f32([0.0, 0.0]), PARAMS.replace(reward_box_dist=2.0, reward_box_goal=0.0))[2]
    assert float(scaled) == pytest.approx(2 * (1.5 - d_box), abs=1e-6)
    gated = STEP(state, f32([0.0, 0.0]), PARAMS.replace(box_null_dist=10.0))[2]
    assert float(gated) == pytest.approx(2.0 - d_bg, abs=1e-6)


def test_pushing_the_box_to_the_goal_pays_the_second_term():
    state = make_state(box=(0.7, 0.0), goal=(2.6, 0.0))
    total, box_start = 0.0, np.asarray(state.box_pos, float)
    for _ in range(60):
        state, _, reward, *_ = STEP(state, f32([1.0, 0.0]), PARAMS)
        total += float(reward)
    box, pos = np.asarray(state.box_pos, float), np.asarray(state.pos, float)
    assert box[0] - box_start[0] > 0.6  # the box was pushed along +x, towards the goal
    telescoped = (dist3((0, 0), box_start, 0.1) - dist3(pos, box, 0.1)) + (
        dist3(box_start, (2.6, 0), 0.04) - dist3(box, (2.6, 0), 0.04)
    )
    assert total == pytest.approx(telescoped, abs=1e-4)
    assert dist3(box_start, (2.6, 0), 0.04) - dist3(box, (2.6, 0), 0.04) > 0.6


def test_success_is_3d_and_resamples_the_goal():
    hazards = [[-1.0, -1.0], [1.0, -1.0]]
    for dxy, reached in [(0.0, True), (0.296, True), (0.298, False)]:  # sqrt(dxy^2 + 0.04^2) <= 0.3
        state = make_state(pos=(-1.0, 0.8), box=(0.3, 0.2), goal=(0.3 + dxy, 0.2), hazards=hazards, pillar=(-0.8, -0.2))
        new, obs, reward, _, _, _, info = STEP(state, f32([0.0, 0.0]), PARAMS)
        assert bool(info["goal_reached"]) == reached, dxy
        assert float(reward) == pytest.approx(1.0 if reached else 0.0, abs=1e-6)  # both baselines unchanged
        goal = np.asarray(new.goal, float)
        if not reached:
            np.testing.assert_allclose(goal, state.goal)
            continue
        assert np.all(np.abs(goal) <= 1.5 - 0.4 + 1e-6)
        others = [((-1.0, 0.8), 0.4), (hazards[0], 0.4), (hazards[1], 0.4), ((-0.8, -0.2), 0.3), ((0.3, 0.2), 0.2)]
        for other, keep in others:
            assert np.linalg.norm(goal - np.asarray(other)) >= keep + 0.4 - 1e-5
        assert float(new.last_box_goal) == pytest.approx(dist3((0.3, 0.2), goal, 0.04), abs=1e-5)
        np.testing.assert_allclose(obs[12:28], lidar_ref(np.asarray(new.pos), float(new.heading), [goal]), atol=1e-5)
        assert float(STEP(new, f32([0.0, 0.0]), PARAMS)[2]) == pytest.approx(0.0, abs=1e-6)


def test_hazard_cost_and_truncation():
    for d, expected in [(0.29, 1.0), (0.31, 0.0)]:
        state = make_state(pos=(0.2, 0.1), hazards=[[0.2, 0.1 + d], [-5.0, -5.0]])
        _, _, _, cost, term, trunc, info = STEP(state, f32([0.0, 0.0]), PARAMS)
        assert float(cost) == expected and float(info["cost_hazards"]) == expected, d
        assert not bool(term) and not bool(trunc)
    both = make_state(hazards=[[0.1, 0.0], [-0.1, 0.0]])  # two hazards still cost one unit
    assert float(STEP(both, f32([0.0, 0.0]), PARAMS)[3]) == 1.0
    state, *_, trunc, _ = STEP(make_state().replace(time=jnp.int32(998)), f32([0.0, 0.0]), PARAMS)
    assert not bool(trunc)
    assert bool(STEP(state, f32([0.0, 0.0]), PARAMS)[5])


# --------------------------------------------------------------------------- contacts


def test_robot_cannot_pass_through_the_pillar():
    nose = math.sqrt(0.225**2 - 0.025**2) + 0.125  # a nose disc (r 0.025 at (0.125, 0.025)) on the pillar
    for y, sticks, friction in [(0.0, True, 1.0), (0.1, True, 1.0), (0.1, False, 0.0), (0.2, False, 1.0)]:
        params = PARAMS.replace(contact_friction=friction)
        state = make_state(pillar=(0.7, y))
        worst = np.inf
        for _ in range(120):
            state, *_ = STEP(state, f32([1.0, 0.0]), params)
            for centre, radius in robot_disc_world(state):
                worst = min(worst, np.linalg.norm(centre - np.array([0.7, y])) - (radius + 0.2))
        assert worst >= -1e-3, (y, friction)
        if sticks:  # Coulomb friction 1 holds the robot where the contact normal is within 45 deg
            assert float(jnp.linalg.norm(state.vel)) < 1e-3 and float(state.pos[0]) < 0.45
        else:
            assert float(state.pos[0]) > 1.0  # it slid round the pillar
    head_on = make_state(pillar=(0.7, 0.0))
    head_on, _ = run(head_on, [1.0, 0.0], 60)
    assert float(0.7 - head_on.pos[0]) == pytest.approx(nose, abs=2e-3)


def test_pushing_moves_the_box_and_the_robot_stays_out():
    heading = 0.5
    u = np.array([math.cos(heading), math.sin(heading)])
    state = make_state(heading=heading, box=tuple(0.8 * u), box_yaw=heading)
    start = np.asarray(state.box_pos, float)
    worst = -np.inf
    for _ in range(300):
        state, *_ = STEP(state, f32([1.0, 0.0]), PARAMS)
        for centre, radius in robot_disc_world(state):
            worst = max(worst, box_penetration(centre, radius, np.asarray(state.box_pos), float(state.box_yaw)))
    moved = np.asarray(state.box_pos, float) - start
    assert worst <= 1e-3
    assert moved @ u > 3.0 and abs(moved[0] * u[1] - moved[1] * u[0]) < 0.05 * np.linalg.norm(moved)
    # nose in the notch: centres 0.2 (notch floor) + 0.125 + 0.025 (nose discs) apart
    assert float(jnp.linalg.norm(state.box_pos - state.pos)) == pytest.approx(0.35, abs=2e-3)
    # pushing costs the box's sliding friction: v = (0.015 - 1.28e-4 * 9.81) / 0.01 at steady state
    assert float(jnp.linalg.norm(state.vel)) == pytest.approx((0.015 - 1.28e-4 * 9.81) / 0.01, rel=5e-3)


def test_off_centre_push_turns_the_box():
    # the robot's sphere (nose turned away) overlaps a corner block's face by delta, 0.2 below the
    # box centre; at rest, one step resolves it by the quasi-static law, checked by hand
    c2, delta = 0.296**2, 2e-3
    p = np.array([-0.3, -0.2])  # contact point on the face x = -0.3 of the block at (-0.2, -0.2)
    state = make_state(pos=(-0.4 + delta, -0.2), heading=-math.pi / 2, box=(0.0, 0.0))
    for friction in (0.0, 1.0):
        new, *_ = STEP(state, f32([0.0, 0.0]), PARAMS.replace(contact_friction=friction))
        if friction == 0.0:  # force along the normal only: f = delta n / (1 + (p x n)^2 / c^2)
            force = np.array([delta / (1 + 0.2**2 / c2), 0.0])
        else:  # sticking: the contact point moves with the pusher, f + ((p x f) / c^2) (z x p) = (delta, 0)
            zxp = np.array([-p[1], p[0]])
            force = np.linalg.solve(np.eye(2) + np.outer(zxp, zxp) / c2, [delta, 0.0])
            assert abs(force[1]) < force[0]  # inside the friction cone
        np.testing.assert_allclose(new.box_pos, force, rtol=2e-3, atol=1e-7)
        assert float(new.box_yaw) == pytest.approx((p[0] * force[1] - p[1] * force[0]) / c2, rel=2e-3)
        assert float(new.box_yaw) > 0.0  # pushed below its centre towards +x, the box turns anticlockwise
        np.testing.assert_allclose(new.pos, state.pos, atol=1e-6)  # the free box gave way
    # driving: box 0.1 to the left of the robot's path (MuJoCo: yaw 0.54 rad, y 0.26 after 50 steps)
    state, _ = run(make_state(box=(0.8, 0.1)), [1.0, 0.0], 50)
    assert 0.25 < float(state.box_yaw) < 0.8 and float(state.box_pos[1]) > 0.15


def test_box_stays_on_the_nose_while_the_robot_turns():
    # MuJoCo: after 40 steps of pushing, 100 steps at action (1, 0.3) keep the box 0.35-0.36 from
    # the robot, its yaw following the robot's heading (1.43 rad at heading 1.56)
    state, _ = run(make_state(box=(0.8, 0.0)), [1.0, 0.0], 40)
    state, rows = run(state, [1.0, 0.3], 100)
    gaps = [float(jnp.linalg.norm(r.box_pos - r.pos)) for r in rows]
    assert max(gaps) < 0.4 and float(state.heading) > 1.5
    assert 0.8 < float(state.box_yaw) < float(state.heading) + 0.2


def test_box_blocked_by_the_pillar_stops_the_robot():
    state = make_state(box=(0.8, 0.0), pillar=(1.4, 0.0))
    worst, worst_box = -np.inf, np.inf
    for _ in range(120):
        state, *_ = STEP(state, f32([1.0, 0.0]), PARAMS)
        for centre, radius in robot_disc_world(state):
            worst = max(worst, box_penetration(centre, radius, np.asarray(state.box_pos), float(state.box_yaw)))
        worst_box = min(worst_box, -box_penetration((1.4, 0.0), 0.2, np.asarray(state.box_pos), float(state.box_yaw)))
    assert worst <= 1e-3 and worst_box >= -1e-3
    # the pillar rests on the two corner blocks' inner edges (0.3, +-0.1) of the box
    assert float(1.4 - state.box_pos[0]) == pytest.approx(0.3 + math.sqrt(0.2**2 - 0.1**2), abs=3e-3)
    assert float(jnp.linalg.norm(state.vel)) < 0.02


# --------------------------------------------------------------------------- reset


def test_reset_respects_keepouts_for_many_keys():
    keepout = np.array([0.4, 0.4, 0.4, 0.4, 0.3, 0.2])  # agent, goal, 2 hazards, pillar, box
    layouts = []
    for i in range(4):
        states, obs = VRESET(jax.random.split(jax.random.PRNGKey(10 + i), BATCH), PARAMS)
        assert obs.shape == (BATCH, 76) and np.all(np.isfinite(obs))
        lay = np.concatenate(
            [states.pos[:, None], states.goal[:, None], states.hazards, states.pillars, states.box_pos[:, None]], axis=1
        )
        layouts.append(lay)
        d_box = np.sqrt(np.sum((lay[:, 5] - lay[:, 0]) ** 2, axis=1) + 0.01)
        np.testing.assert_allclose(states.last_dist_box, d_box, atol=1e-5)
        np.testing.assert_allclose(
            states.last_box_goal, np.sqrt(np.sum((lay[:, 5] - lay[:, 1]) ** 2, axis=1) + 0.0016), atol=1e-5
        )
        for angle in (states.heading, states.box_yaw):
            assert np.all((angle >= 0) & (angle < 2 * math.pi))
    lay = np.concatenate(layouts)
    assert np.all(np.abs(lay) <= (1.5 - keepout)[None, :, None] + 1e-6)
    dist = np.linalg.norm(lay[:, :, None] - lay[:, None, :], axis=-1)
    need = keepout[:, None] + keepout[None, :]
    off_diag = ~np.eye(len(keepout), dtype=bool)
    assert np.all(dist[:, off_diag] >= need[off_diag] - 1e-5)
    assert len(np.unique(np.round(lay[:, 0], 5), axis=0)) == len(lay)
    with pytest.raises(ValueError, match="placement_tries"):
        VRESET(jax.random.split(jax.random.PRNGKey(0), BATCH), PARAMS.replace(placement_tries=0))
    assert isinstance(PARAMS, PointPushParams) and PARAMS.max_steps == 1000
