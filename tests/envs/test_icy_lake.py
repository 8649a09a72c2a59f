"""IcyLake: FrozenLake moves and slips, icy tiles cost, goal terminates, truncation, vmap."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saferl.envs import base
from saferl.envs.icy_lake import (
    DOWN,
    ICE,
    LEFT,
    MAPS,
    RIGHT,
    UP,
    IcyLake,
    dynamics,
    make_params,
    tiles_from_strings,
)

ENV = IcyLake()
STEP = jax.jit(ENV.step)
RESET = jax.jit(ENV.reset)
VRESET = jax.jit(jax.vmap(ENV.reset, in_axes=(0, None)))
VSTEP = jax.jit(jax.vmap(ENV.step, in_axes=(0, 0, None)))  # a batch of states and actions, shared params


def rollout(params, actions, key=0):
    state, obs = RESET(jax.random.PRNGKey(key), params)
    out = []
    for a in actions:
        state, obs, r, c, term, trunc, info = STEP(state, jnp.int32(a), params)
        out.append((int(state.position), float(r), float(c), bool(term), bool(trunc), info))
    return out


def test_registered_and_spaces():
    assert "IcyLake" in base.registered()
    env = base.make("IcyLake", desc="4x4")
    params = env.default_params()
    assert env.observation_space(params).shape == (16,)
    assert env.action_space(params).n == 4
    state, obs = env.reset(jax.random.PRNGKey(0), params)
    np.testing.assert_array_equal(obs, np.eye(16)[0])  # one-hot of the start cell
    assert ENV.observation_space(ENV.default_params()).shape == (64,)  # default 8x8


def test_shortest_path_reaches_goal_deterministic():
    # 4x4: S F F F / F H F H / F F F H / H F F G.  Safe shortest path: down, down, right, right, down, right
    params = make_params("4x4", slip_probability=0.0)
    steps = rollout(params, [DOWN, DOWN, RIGHT, RIGHT, DOWN, RIGHT])
    positions = [s[0] for s in steps]
    assert positions == [4, 8, 9, 10, 14, 15]
    assert [s[1] for s in steps] == [0, 0, 0, 0, 0, 1.0]
    assert [s[2] for s in steps] == [0] * 6  # never on ice
    assert [s[3] for s in steps] == [False] * 5 + [True]
    assert not any(s[4] for s in steps)
    assert bool(steps[-1][5]["reached_goal"])
    # 8x8 along the top row then down the right column: 14 steps, no ice on the way
    params8 = make_params("8x8", slip_probability=0.0)
    steps8 = rollout(params8, [RIGHT] * 7 + [DOWN] * 7)
    assert steps8[-1][0] == 63 and steps8[-1][1] == 1.0 and steps8[-1][3]
    assert sum(s[1] for s in steps8) == 1.0 and sum(s[2] for s in steps8) == 0.0


def test_ice_costs_and_does_not_terminate():
    params = make_params("4x4", slip_probability=0.0, ice_cost=2.5)
    # right, down lands on H at (1, 1) = 5; down again (to 9, frozen) leaves the ice for free
    steps = rollout(params, [RIGHT, DOWN, DOWN, UP, UP])
    assert [s[0] for s in steps] == [1, 5, 9, 5, 1]
    assert [s[2] for s in steps] == [0.0, 2.5, 0.0, 2.5, 0.0]  # cost when the step ends on ice
    assert not any(s[3] for s in steps)
    assert [bool(s[5]["on_ice"]) for s in steps] == [False, True, False, True, False]


def test_staying_on_ice_costs_every_step():
    # a 1x3 strip S H G: bumping a wall while standing on ice costs again
    params = make_params(["SHG"], slip_probability=0.0)
    steps = rollout(params, [RIGHT, UP, DOWN, RIGHT])
    assert [s[0] for s in steps] == [1, 1, 1, 2]
    assert [s[2] for s in steps] == [1.0, 1.0, 1.0, 0.0]
    assert [s[3] for s in steps] == [False, False, False, True]


def test_walls_keep_agent_in_place():
    params = make_params("4x4", slip_probability=0.0)
    steps = rollout(params, [LEFT, UP])  # start in the top-left corner
    assert [s[0] for s in steps] == [0, 0]
    steps = rollout(params, [RIGHT, RIGHT, RIGHT, RIGHT, UP])  # top-right corner
    assert [s[0] for s in steps] == [1, 2, 3, 3, 3]


def test_goal_is_absorbing():
    params = make_params(["SG"], slip_probability=0.0)
    steps = rollout(params, [RIGHT, LEFT, LEFT])
    assert [s[0] for s in steps] == [1, 1, 1]
    assert [s[1] for s in steps] == [1.0, 0.0, 0.0]  # the goal reward is paid once
    assert all(s[3] for s in steps)


def test_truncation_at_max_steps():
    params = make_params("4x4", slip_probability=0.0, max_steps=5)
    steps = rollout(params, [LEFT] * 6)
    assert [s[4] for s in steps] == [False] * 4 + [True, True]
    assert not any(s[3] for s in steps)


def test_slip_frequencies():
    # From the centre cell (1, 1) of a 3x3 open map every direction is a distinct cell.
    # Slippery default: intended, (a-1)%4, (a+1)%4 each with probability 1/3, never the opposite.
    params = make_params(["FFF", "FSF", "FFG"])
    n = 30_000
    keys = jax.random.split(jax.random.PRNGKey(1), n)
    states, _ = VRESET(keys, params)
    action = UP  # up = 3; the perpendicular slips are (3 - 1) % 4 = 2 = right and (3 + 1) % 4 = 0 = left
    out = VSTEP(states, jnp.full((n,), action), params)
    pos = np.asarray(out[0].position)
    freq = {cell: np.mean(pos == cell) for cell in (1, 3, 5, 7)}  # up, left, right, down
    se = np.sqrt((1 / 3) * (2 / 3) / n)  # ~0.0027
    for cell in (1, 3, 5):
        assert abs(freq[cell] - 1 / 3) < 5 * se, freq
    assert freq[7] == 0.0
    np.testing.assert_allclose(np.mean(out[6]["slipped"]), 2 / 3, atol=5 * np.sqrt(2 / 9 / n))
    # a custom slip probability: intended 0.8, perpendicular 0.1 each
    params = make_params(["FFF", "FSF", "FFG"], slip_probability=0.2)
    out = VSTEP(states, jnp.full((n,), action), params)
    pos = np.asarray(out[0].position)
    assert abs(np.mean(pos == 1) - 0.8) < 5 * np.sqrt(0.16 / n)
    assert abs(np.mean(pos == 3) - 0.1) < 5 * np.sqrt(0.09 / n)
    assert abs(np.mean(pos == 5) - 0.1) < 5 * np.sqrt(0.09 / n)


def test_batched_action_without_vmap_is_rejected():
    params = make_params("4x4")
    state, _ = ENV.reset(jax.random.PRNGKey(0), params)
    with pytest.raises(ValueError, match="scalar action"):
        ENV.step(state, jnp.zeros((3,), jnp.int32), params)


def test_rng_lives_in_state():
    params = make_params("8x8")
    state, _ = RESET(jax.random.PRNGKey(3), params)
    a = STEP(state, jnp.int32(RIGHT), params)
    b = STEP(state, jnp.int32(RIGHT), params)
    assert int(a[0].position) == int(b[0].position)  # same state -> same outcome
    assert not np.array_equal(np.asarray(a[0].key), np.asarray(state.key))  # the key advances


def test_vmap_over_params_with_different_maps_and_costs():
    p1 = make_params(["SHG", "FFF"], slip_probability=0.0, ice_cost=1.0)
    p2 = make_params(["SFG", "FFF"], slip_probability=0.0, ice_cost=3.0)
    p3 = make_params(["SHG", "FFF"], slip_probability=0.0, ice_cost=7.0, goal_reward=2.0)
    params = jax.tree.map(lambda *xs: jnp.stack(xs), p1, p2, p3)
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    states, obs = jax.vmap(ENV.reset)(keys, params)
    assert obs.shape == (3, 6)
    step = jax.jit(jax.vmap(ENV.step))
    states, obs, r, c, term, trunc, info = step(states, jnp.full((3,), RIGHT), params)
    np.testing.assert_array_equal(c, [1.0, 0.0, 7.0])
    np.testing.assert_array_equal(term, [False, False, False])
    states, obs, r, c, term, trunc, info = step(states, jnp.full((3,), RIGHT), params)
    np.testing.assert_array_equal(r, [1.0, 1.0, 2.0])
    np.testing.assert_array_equal(term, [True, True, True])
    assert set(info) == {"position", "on_ice", "reached_goal", "slipped"}
    assert all(v.shape == (3,) for v in info.values())


def test_make_params_validation():
    assert tiles_from_strings(MAPS["4x4"])[1, 1] == ICE
    with pytest.raises(ValueError, match="same"):
        make_params(["SF", "F"])
    with pytest.raises(ValueError, match="unknown map characters"):
        make_params(["SX", "FG"])
    with pytest.raises(ValueError, match="exactly one start"):
        make_params(["FF", "FG"])
    with pytest.raises(ValueError, match="goal"):
        make_params(["SF", "FF"])
    with pytest.raises(ValueError, match="slip_probability"):
        make_params("4x4", slip_probability=1.5)
    with pytest.raises(ValueError, match="unknown map name"):
        make_params("5x5")


def test_dynamics_matches_sampled_step_and_gymnasium():
    params = make_params("4x4")
    P, R, C = (np.asarray(x) for x in dynamics(params))
    np.testing.assert_allclose(P.sum(-1), 1.0, atol=1e-6)
    # the step function's empirical next-state distribution from (0, 0) under "right"
    n = 10_000
    keys = jax.random.split(jax.random.PRNGKey(2), n)
    states, _ = VRESET(keys, params)
    out = VSTEP(states, jnp.full((n,), RIGHT), params)
    emp = np.bincount(np.asarray(out[0].position), minlength=16) / n
    np.testing.assert_allclose(emp, P[0, RIGHT], atol=0.025)  # 5 standard errors at p = 1/3
    # identical to FrozenLake's transition table on every non-hole state
    fl = pytest.importorskip("gymnasium.envs.toy_text.frozen_lake")
    ref = fl.FrozenLakeEnv(map_name="4x4", is_slippery=True).P
    tiles = np.asarray(params.tiles).reshape(-1)
    for s in range(16):
        if tiles[s] == ICE:
            continue  # holes end FrozenLake episodes; here they are ordinary (costly) tiles
        for a in range(4):
            row = np.zeros(16)
            for prob, nxt, _, _ in ref[s][a]:
                row[nxt] += prob
            np.testing.assert_allclose(P[s, a], row, atol=1e-6)
    assert float(R[14, RIGHT, 15]) == 1.0 and float(R[15, RIGHT, 15]) == 0.0
    assert float(C[0, DOWN, 5]) == 1.0 and float(C[4, DOWN, 8]) == 0.0
