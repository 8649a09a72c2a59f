"""CartSafe: the dynamics against an independent float64 step, theta wrapping, reward/cost/termination at
hand-picked states, the time limit, the reset distribution, vmap and determinism."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saferl.envs import base
from saferl.envs.cartsafe import CartSafe, CartSafeState

ENV = CartSafe()
PARAMS = ENV.default_params()
STEP = jax.jit(ENV.step)
VSTEP = jax.jit(jax.vmap(ENV.step, in_axes=(0, 0, None)))
VRESET = jax.jit(jax.vmap(ENV.reset, in_axes=(0, None)))


def state(x=0.0, x_dot=0.0, theta=math.pi, theta_dot=0.0, time=0):
    f = lambda v: jnp.asarray(v, jnp.float32)  # noqa: E731
    return CartSafeState(f(x), f(x_dot), f(theta), f(theta_dot), jnp.asarray(time, jnp.int32))


def reference_step(s, action):
    """gym-safety's CartSafe step in float64, written independently: the accelerations solve the cart-pole's
    two equations of motion (uniform pole of half-length l, frictionless)

        M xacc + m l cos(th) thacc = F + m l thd^2 sin(th)
        cos(th) xacc + 4/3 l thacc = g sin(th)

    as a linear system, then explicit Euler (positions move with the old velocities) and th mod 2 pi."""
    x, xd, th, thd = (float(v) for v in s)
    g, m_cart, m_pole, half_length, dt = 9.8, 1.0, 0.1, 0.5, 0.02
    big_m = m_cart + m_pole
    force = 10.0 if action == 1 else -10.0
    lhs = np.array([[big_m, m_pole * half_length * np.cos(th)], [np.cos(th), 4.0 / 3.0 * half_length]])
    rhs = np.array([force + m_pole * half_length * thd**2 * np.sin(th), g * np.sin(th)])
    xacc, thacc = np.linalg.solve(lhs, rhs)
    new = np.array([x + dt * xd, xd + dt * xacc, np.mod(th + dt * thd, 2 * np.pi), thd + dt * thacc])
    reward = 1.0 + np.cos(new[2])
    cost = float(abs(new[0]) > 1.0)
    terminated = bool(new[0] < -2.4 or new[0] > 2.4)
    return new, reward, cost, terminated


def test_registered_spaces_and_defaults():
    assert "CartSafe" in base.registered()
    env = base.make("CartSafe")
    params = env.default_params()
    assert env.cost_shape == ()
    assert env.action_space(params).n == 2
    space = env.observation_space(params)
    assert space.shape == (4,)
    np.testing.assert_allclose(np.asarray(space.high)[[0, 2]], [4.8, 2 * math.pi], rtol=1e-6)
    assert int(params.max_steps) == 300
    # the SCPO paper's cost limit (Table 1); the batch is its T = 32768
    assert base.config_defaults("CartSafe") == {
        "num_envs": 16,
        "rollout_steps": 2048,
        "constraint": {"type": "expected", "limit": 1.0},
    }


def test_step_matches_an_independent_float64_euler_step():
    rng = np.random.default_rng(0)
    n = 12
    states = np.stack(
        [
            rng.uniform(-2.0, 2.0, n),
            rng.uniform(-3.0, 3.0, n),
            rng.uniform(0.0, 2 * np.pi, n),
            rng.uniform(-8.0, 8.0, n),
        ],
        1,
    ).astype(np.float32)
    states = np.concatenate([states, states])  # every state with both actions
    actions = np.repeat([0, 1], n).astype(np.int32)
    batch = CartSafeState(*(jnp.asarray(states[:, i]) for i in range(4)), jnp.zeros((2 * n,), jnp.int32))
    new, obs, reward, cost, terminated, truncated, info = VSTEP(batch, jnp.asarray(actions), PARAMS)
    for i in range(2 * n):
        want, want_r, want_c, want_t = reference_step(states[i], actions[i])
        got = np.asarray(obs[i], np.float64)
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6, err_msg=f"state {states[i]}, action {actions[i]}")
        np.testing.assert_allclose(float(reward[i]), want_r, atol=1e-5)
        assert float(cost[i]) == want_c and bool(terminated[i]) == want_t
    np.testing.assert_array_equal(np.asarray(obs), np.stack([new.x, new.x_dot, new.theta, new.theta_dot], 1))
    assert obs.dtype == jnp.float32 and reward.dtype == jnp.float32 and cost.dtype == jnp.float32
    assert not bool(jnp.any(truncated)) and np.all(np.asarray(new.time) == 1)
    assert len({float(c) for c in cost}) == 2  # the sample has costly and free states


def test_explicit_euler_moves_positions_with_the_old_velocities():
    # hanging pole at rest, cart moving at 1 m/s: x and theta advance by tau * (old velocity) exactly, while
    # the velocities change (semi-implicit Euler would move x by tau * (1 + tau xacc) and theta by tau^2 thacc)
    for action, sign in ((1, 1.0), (0, -1.0)):
        new, obs, *_ = STEP(state(x=0.0, x_dot=1.0, theta=math.pi, theta_dot=0.0), jnp.int32(action), PARAMS)
        assert float(new.x) == pytest.approx(0.02, abs=1e-7)
        assert float(new.theta) == pytest.approx(math.pi, abs=1e-6)
        # at theta = pi: temp = F / M, thacc = temp / (l (4/3 - m / M)), xacc = temp + m l thacc / M
        temp = sign * 10.0 / 1.1
        thacc = temp / (0.5 * (4.0 / 3.0 - 0.1 / 1.1))
        xacc = temp + 0.05 * thacc / 1.1
        assert float(new.x_dot) == pytest.approx(1.0 + 0.02 * xacc, rel=1e-6)
        assert float(new.theta_dot) == pytest.approx(0.02 * thacc, rel=1e-6)


def test_theta_wraps_into_zero_two_pi():
    new, obs, reward, *_ = STEP(state(theta=2 * math.pi - 0.001, theta_dot=1.0), jnp.int32(1), PARAMS)
    assert float(new.theta) == pytest.approx(0.019, abs=1e-5) and float(obs[2]) == float(new.theta)
    assert float(reward) == pytest.approx(1.0 + math.cos(0.019), abs=1e-6)  # near upright: reward near 2
    new, obs, *_ = STEP(state(theta=0.001, theta_dot=-1.0), jnp.int32(0), PARAMS)
    assert float(new.theta) == pytest.approx(2 * math.pi - 0.019, abs=1e-5)
    new, *_ = STEP(state(theta=math.pi, theta_dot=400.0), jnp.int32(0), PARAMS)  # more than a turn per step
    assert 0.0 <= float(new.theta) < 2 * math.pi
    assert float(new.theta) == pytest.approx(math.fmod(math.pi + 8.0, 2 * math.pi), abs=1e-4)


@pytest.mark.parametrize(
    "x, cost, terminated",
    [
        (0.0, 0.0, False),
        (1.0, 0.0, False),
        (-1.0, 0.0, False),  # |x| = 1 exactly: no cost
        (1.001, 1.0, False),
        (-1.001, 1.0, False),
        (2.4, 1.0, False),
        (-2.4, 1.0, False),  # |x| = 2.4 exactly: costs, does not terminate
        (2.401, 1.0, True),
        (-2.401, 1.0, True),
    ],
)
def test_cost_and_termination_at_the_boundaries(x, cost, terminated):
    # x_dot = 0: the step leaves x where it is (explicit Euler), so the thresholds are hit exactly
    new, obs, reward, c, term, trunc, _ = STEP(state(x=x, theta=0.0), jnp.int32(1), PARAMS)
    assert float(new.x) == np.float32(x)
    assert float(c) == cost and bool(term) == terminated and not bool(trunc)
    # the reward is paid on the terminal step as on any other: 1 + cos(theta'), theta' = 0 here
    assert float(reward) == pytest.approx(2.0, abs=1e-6)


def test_reward_is_one_plus_cos_theta():
    for theta in (0.0, math.pi / 2, math.pi, 4.0):
        _, _, reward, *_ = STEP(state(theta=theta), jnp.int32(0), PARAMS)
        assert float(reward) == pytest.approx(1.0 + math.cos(theta), abs=1e-6)


def test_time_limit_is_300_steps():
    for time, truncated in ((0, False), (298, False), (299, True)):
        new, *_, trunc, _ = STEP(state(time=time), jnp.int32(0), PARAMS)
        assert int(new.time) == time + 1 and bool(trunc) == truncated
    *_, trunc, _ = STEP(state(time=8), jnp.int32(0), PARAMS.replace(max_steps=9))  # a leaf: no recompile
    assert bool(trunc)


def test_reset_distribution():
    keys = jax.random.split(jax.random.PRNGKey(3), 4096)
    states, obs = VRESET(keys, PARAMS)
    np.testing.assert_array_equal(
        np.asarray(obs), np.stack([states.x, states.x_dot, states.theta, states.theta_dot], 1)
    )
    centred = np.asarray(obs, np.float64) - np.array([0.0, 0.0, math.pi, 0.0])
    assert np.all(np.abs(centred) <= 0.05 + 1e-6)  # U(-0.05, 0.05)^4 around the hanging pole
    np.testing.assert_allclose(centred.mean(0), 0.0, atol=0.003)
    np.testing.assert_allclose(centred.std(0), 0.1 / math.sqrt(12.0), rtol=0.05)  # uniform, not normal
    assert np.all(np.asarray(states.time) == 0) and obs.dtype == jnp.float32
    assert len(np.unique(np.asarray(obs[:, 0]))) > 4000


def test_vmap_over_keys_and_determinism():
    def episode(key):
        s, _ = ENV.reset(key, PARAMS)
        actions = jax.random.bernoulli(jax.random.fold_in(key, 1), 0.5, (40,)).astype(jnp.int32)

        def body(s, a):
            s, obs, r, c, term, trunc, _ = ENV.step(s, a, PARAMS)
            return s, (obs, r, c, term)

        return jax.lax.scan(body, s, actions)[1]

    run = jax.jit(episode)
    many = jax.jit(jax.vmap(episode))
    keys = jax.random.split(jax.random.PRNGKey(7), 3)
    batched = many(keys)
    for i in range(3):
        single = run(keys[i])
        for a, b in zip(single, batched):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b)[i], rtol=1e-6, atol=1e-6)
    again = many(keys)
    for a, b in zip(batched, again):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))  # same keys, same episodes
    assert not np.allclose(np.asarray(batched[0][0]), np.asarray(batched[0][1]))  # different keys differ


def test_constant_push_pays_outside_one_and_terminates_beyond_2_4():
    def run(s):
        def body(s, _):
            s, obs, r, c, term, trunc, _ = ENV.step(s, jnp.int32(1), PARAMS)
            return s, (obs[0], c, term)

        return jax.lax.scan(body, s, None, length=120)[1]

    x, cost, term = (np.asarray(v) for v in jax.jit(run)(ENV.reset(jax.random.PRNGKey(0), PARAMS)[0]))
    np.testing.assert_array_equal(cost, (np.abs(x) > 1.0).astype(np.float32))
    first = int(np.argmax(term))
    assert term.any() and x[first] > 2.4 and np.all(x[:first] <= 2.4)
    assert 0 < int(cost[:first].sum()) < first
