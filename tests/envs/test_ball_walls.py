"""The ball tasks' walls: PyBullet's contact (``wall_contact="bullet_erp"``, the default) against its closed form,
what it may not do (pass through a wall, stay inside one), vmap.  The inelastic option is tested in test_ball.py."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saferl.envs.bullet_ball.ball import BallCircle, BallGather
from saferl.envs.bullet_ball.physics import ball_velocity

KEY = jax.random.PRNGKey(0)
GATHER, GATHER14, CIRCLE14 = BallGather(), BallGather(version="1.4.0"), BallCircle(version="1.4.0")
STEP = jax.jit(GATHER.step)
CIRCLE_STEP = jax.jit(CIRCLE14.step)
LIMIT = 9.4  # ball centre at the +x face: 9.9 - 0.5
FAR = jnp.asarray(np.full((8, 2), -6.0) + np.arange(8)[:, None] * 0.01, jnp.float32)  # apples and bombs away


def f32(x):
    return jnp.asarray(x, jnp.float32)


def gather_state(params, pos, vel):
    state, _ = GATHER.reset(KEY, params)
    return state.replace(apples=FAR, bombs=FAR, pos=f32(pos), vel=f32(vel))


def closed_form(params, depth, vel):
    """The velocity one env step (zero action) after a substep that starts ``depth`` past the +x face with ``vel``,
    the previous substep having started outside it: the wall takes ``dn = v_n + erp depth / h`` of the normal speed
    (the ball leaves at ``erp depth / h``); the tangential speed loses ``k (v_t + share R)`` (stuck to the wall,
    with ``R = rho dn m r / I`` the spin the wall's rolling friction stops) or, if that is more, what the friction
    cone leaves after the vertical slide is stopped; the other substeps are free rolling."""
    h, m, r, inertia = params.timestep, params.mass, params.radius, params.inertia
    k = inertia / (inertia + m * r**2)
    v = np.asarray(ball_velocity(f32(vel), f32([0.0, 0.0]), params), np.float64)
    dn = v[0] + params.contact_erp * depth / h
    spin = params.wall_rolling_friction * dn * m * r / inertia
    stick = k * (v[1] + params.wall_spin_share * spin)
    cone = math.sqrt(max((params.wall_friction * dn) ** 2 - (k * max(v[0] - spin, 0.0)) ** 2, 0.0))
    out = f32([v[0] - dn, max(v[1] - min(stick, cone), 0.0)])
    for _ in range(params.frame_skip - 1):
        out = ball_velocity(out, f32([0.0, 0.0]), params)
    return np.asarray(out), stick < cone


@pytest.mark.parametrize(
    "depth, vel, sticks",
    [
        (0.004, (3.0, 0.9), True),  # the probe's ratio of tangential to normal speed
        (0.012, (3.0, 0.9), True),  # deeper at the same speed: a stronger bounce
        (0.010, (4.0, 4.0), True),
        (0.0002, (0.1, 6.0), False),  # grazing: the friction cone binds
    ],
)
def test_bounce_matches_closed_form(depth, vel, sticks):
    p = GATHER.default_params()
    assert p.wall_contact == "bullet_erp" and p.contact_erp == pytest.approx(0.9)
    state = gather_state(p, [LIMIT + depth, 0.0], vel)
    state, *_ = STEP(state, f32([0.0, 0.0]), p)
    exact = float(np.float32(LIMIT + depth) - np.float32(LIMIT))  # the depth float32 holds
    expected, stuck = closed_form(p, exact, vel)
    assert stuck == sticks
    np.testing.assert_allclose(np.asarray(state.vel), expected, rtol=2e-5, atol=2e-6)
    assert float(state.vel[0]) < 0.0  # it bounces


def test_bounce_grows_with_depth_at_one_speed():
    p = GATHER.default_params()
    out = []
    for depth in (0.001, 0.004, 0.008, 0.012):
        s, *_ = STEP(gather_state(p, [LIMIT + depth, 0.0], [3.0, 0.9]), f32([0.0, 0.0]), p)
        out.append(-float(s.vel[0]) / 3.0)
    assert np.all(np.diff(out) > 0.0)
    assert out[-1] == pytest.approx(0.9 * 0.012 * 240 / 3.0, rel=0.02)  # erp depth / h over the speed in


def test_ball_held_against_the_wall_keeps_sliding():
    """A new contact sticks the ball to the wall once; held against it, only the wall's rolling friction acts."""
    p = GATHER.default_params()
    s = gather_state(p, [LIMIT - 0.2, -8.0], [1.0, 2.0])
    speeds = []
    for _ in range(60):  # 1 s: the ball stays clear of the +y face
        s, *_ = STEP(s, f32([1.0, 1.0]), p)
        speeds.append(float(s.vel[1]))
    assert float(s.pos[0]) > LIMIT - 0.02  # pressed against the face
    assert speeds[-1] > speeds[20] > 2.0  # pushed along it, it speeds up


@pytest.mark.parametrize("env", ["gather_0.1", "gather_1.4.0", "circle_1.4.0"])
def test_never_through_or_stuck_in_a_wall(env):
    """Driven into a face at full force: the centre never passes the face by more than one substep of travel
    (``v_n h``), the ball is pushed back out, and it bounces."""
    if env.startswith("gather"):
        task = GATHER if env.endswith("0.1") else GATHER14
        p = task.default_params()
        s = gather_state(p, [5.0, 0.0], [2.0, 0.0])
        step, n, action, limit = (
            (STEP if task is GATHER else jax.jit(task.step)),
            np.array([1.0, 0.0]),
            [1.0, 0.3],
            LIMIT,
        )
    else:
        p = CIRCLE14.default_params()
        s, _ = CIRCLE14.reset(KEY, p)
        s = s.replace(pos=f32([6.0, 6.0]), vel=f32([3.0, 3.0]))
        step, n, action, limit = CIRCLE_STEP, np.array([1.0, 1.0]) / math.sqrt(2), [1.0, 1.0], 11.4  # 11.9 - 0.5
    bounced, max_speed = False, 0.0
    for _ in range(150):
        max_speed = max(max_speed, float(np.asarray(s.vel) @ n))
        s, *_ = step(s, f32(action), p)
        depth = float(np.asarray(s.pos) @ n) - limit
        assert depth <= max_speed * p.timestep + 1e-5
        bounced |= float(np.asarray(s.vel) @ n) < -0.1
    assert bounced and max_speed > 5.0
    s2 = s
    for _ in range(60):  # let go: it leaves the wall's inside within a few steps
        s2, *_ = step(s2, f32([-1.0, 0.0] if env.startswith("gather") else [-1.0, -1.0]), p)
    assert float(np.asarray(s2.pos) @ n) < limit


def test_unknown_wall_model_is_refused():
    p = GATHER.default_params().replace(wall_contact="sticky")
    with pytest.raises(ValueError, match="wall_contact"):
        GATHER.step(gather_state(GATHER.default_params(), [0.0, 0.0], [0.0, 0.0]), f32([0.0, 0.0]), p)


def test_erp_walls_vmap_like_single_steps():
    p = GATHER.default_params()
    pos = np.array([[LIMIT + 0.003, 0.0], [LIMIT - 0.01, 2.0], [0.0, LIMIT + 0.006], [-LIMIT - 0.002, -3.0]])
    vel = np.array([[3.0, 1.0], [4.0, -1.0], [0.5, 5.0], [-2.0, 0.0]])
    states = [gather_state(p, a, b) for a, b in zip(pos, vel)]
    batch = jax.tree_util.tree_map(lambda *x: jnp.stack(x), *states)
    out = jax.jit(jax.vmap(lambda s: GATHER.step(s, f32([0.2, -0.4]), p)[0]))(batch)
    for i, s in enumerate(states):
        one = STEP(s, f32([0.2, -0.4]), p)[0]
        np.testing.assert_allclose(np.asarray(out.vel[i]), np.asarray(one.vel), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(out.pos[i]), np.asarray(one.pos), rtol=1e-6, atol=1e-6)
