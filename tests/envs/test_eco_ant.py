"""EcoAnt: shapes and dtypes, vmapped steps, the energy cost, action noise, termination,
truncation, registry.

MJX programs take tens of seconds to compile on CPU, so every step below goes through
one compiled program (``ROLL``: 4 environments vmapped, a 3-step ``lax.scan``); the
tests only change its inputs (states, actions, parameter values), never its shapes.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("mujoco.mjx")

from saferl.envs import base  # noqa: E402
from saferl.envs.eco_ant import EcoAnt, EcoAntParams  # noqa: E402

ENV = EcoAnt()
PARAMS = ENV.default_params()
N, T = 4, 3


def _rollout(state, actions, params):
    def body(state, action):
        state, obs, reward, cost, term, trunc, info = ENV.step(state, action, params)
        return state, (obs, reward, cost, term, trunc, info, state.qpos)

    return jax.lax.scan(body, state, actions)


RESET = jax.jit(jax.vmap(ENV.reset, in_axes=(0, None)))
# XLA backend optimisation level 0: about a quarter less compile time; the few steps run fast anyway
ROLL = jax.jit(jax.vmap(_rollout, in_axes=(0, 0, None)), compiler_options={"xla_backend_optimization_level": 0})


def reset(seed=0):
    return RESET(jax.random.split(jax.random.PRNGKey(seed), N), PARAMS)


def actions(*rows):
    """(N, T, 8) actions: one constant action per environment."""
    return jnp.broadcast_to(jnp.asarray(rows, jnp.float32)[:, None, :], (N, T, 8))


ZERO, FULL = [0.0] * 8, [1.0] * 8


def test_registered():
    assert "EcoAnt" in base.registered()
    env = base.make("EcoAnt")
    assert isinstance(env, EcoAnt)
    assert env.action_space(env.default_params()).shape == (8,)


def test_missing_mujoco_names_the_extra(monkeypatch):
    from saferl.foundation.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, "mujoco", None)  # makes ``import mujoco`` fail
    with pytest.raises(MissingExtraError, match=r"pip install 'saferl\[mjx\]'"):
        base.make("EcoAnt")


def test_reset_shapes_and_dtypes():
    state, obs = reset()
    assert obs.shape == (N, 27) and obs.dtype == jnp.float32
    assert ENV.observation_space(PARAMS).shape == (27,)
    assert state.qpos.shape == (N, 15) and state.qvel.shape == (N, 14)
    np.testing.assert_allclose(np.linalg.norm(state.qpos[:, 3:7], axis=1), 1.0, rtol=1e-5)  # unit quaternion
    np.testing.assert_allclose(state.qpos[:, 2], 0.75, atol=0.1)  # torso height with reset noise
    np.testing.assert_array_equal(obs[:, :13], state.qpos[:, 2:])
    np.testing.assert_array_equal(obs[:, 13:], state.qvel)
    assert int(state.time[0]) == 0


@pytest.mark.slow  # EcoAnt's MJX compile (~12 s); its trajectory fixture runs in make test-slow too
def test_vmapped_step_shapes_cost_and_energy():
    state, _ = reset()
    final, (obs, reward, cost, term, trunc, info, _) = ROLL(state, actions(ZERO, ZERO, FULL, FULL), PARAMS)
    assert obs.shape == (N, T, 27) and obs.dtype == jnp.float32
    for x in (reward, cost):
        assert x.shape == (N, T) and x.dtype == jnp.float32
    assert term.shape == (N, T) and term.dtype == jnp.bool_ and trunc.dtype == jnp.bool_
    assert np.all(np.isfinite(obs)) and np.all(np.isfinite(reward))
    np.testing.assert_array_equal(final.time, T)
    assert not np.any(term) and not np.any(trunc)
    # dense, non-negative cost; its three terms add up to it
    cost = np.asarray(cost)
    assert np.all(cost > 0.0)
    parts = info["energy_mech"] + info["energy_heat"] + info["energy_idle"]
    np.testing.assert_allclose(parts, cost, rtol=1e-5)
    assert np.all(np.asarray(info["energy_mech"]) >= 0.0)
    idle = PARAMS.energy_scale * PARAMS.idle_power * ENV.dt(PARAMS)
    np.testing.assert_allclose(info["energy_idle"], idle, rtol=1e-6)
    # zero action draws less energy than full throttle
    assert cost[:2].sum(axis=1).max() < cost[2:].sum(axis=1).min()
    # full throttle: at least the stall heat of 8 motors
    heat = PARAMS.energy_scale * PARAMS.heat_power * ENV.dt(PARAMS) * 8
    assert np.all(cost[2:] >= heat * 0.99)
    # healthy reward: about 1 per step while standing
    np.testing.assert_allclose(reward[:2] - info["x_velocity"][:2], PARAMS.healthy_reward, atol=1e-5)


def test_noise_zero_is_deterministic_and_noise_changes_only_through_the_key():
    state, _ = reset()
    other_keys = state.replace(key=jax.random.split(jax.random.PRNGKey(99), N))
    acts = actions(ZERO, FULL, [0.3, -0.3] * 4, [-0.5] * 8)
    quiet = PARAMS.replace(action_noise=0.0)
    _, out_a = ROLL(state, acts, quiet)
    _, out_b = ROLL(other_keys, acts, quiet)
    # without noise the step's key is irrelevant: same trajectories
    np.testing.assert_array_equal(out_a[-1], out_b[-1])
    np.testing.assert_array_equal(out_a[2], out_b[2])
    # and zero action draws exactly the idle power (no torque, no work, no heat)
    np.testing.assert_allclose(out_a[2][0], PARAMS.energy_scale * PARAMS.idle_power * ENV.dt(PARAMS), rtol=1e-6)
    # with noise, the same state (same key) reproduces; another key differs
    _, out_c = ROLL(state, acts, PARAMS)
    _, out_d = ROLL(state, acts, PARAMS)
    _, out_e = ROLL(other_keys, acts, PARAMS)
    np.testing.assert_array_equal(out_c[-1], out_d[-1])
    assert not np.allclose(out_c[-1], out_e[-1])
    assert not np.allclose(out_c[-1], out_a[-1])
    assert np.all(np.asarray(out_c[2][0]) > np.asarray(out_a[2][0]))  # noise on zero action costs energy


def test_termination_outside_the_healthy_band():
    state, _ = reset()
    state = state.replace(qpos=state.qpos.at[0, 2].set(1.6))  # env 0: torso thrown above healthy_z_max
    _, (obs, reward, cost, term, trunc, info, q) = ROLL(state, actions(ZERO, ZERO, ZERO, ZERO), PARAMS)
    assert bool(term[0, 0]) and float(q[0, 0, 2]) > PARAMS.healthy_z_max
    assert float(reward[0, 0]) == pytest.approx(float(info["x_velocity"][0, 0]), abs=1e-5)  # no healthy reward
    assert not np.any(term[1:])
    # below the band: the torso sphere (radius 0.25) cannot reach z < 0.2 without sinking into
    # the floor, so test the lower bound through the parameter: with healthy_z_min = 0.9 a
    # standing ant (torso at ~0.6-0.75) has fallen
    _, out = ROLL(reset()[0], actions(ZERO, ZERO, ZERO, ZERO), PARAMS.replace(healthy_z_min=0.9))
    assert np.all(out[3][:, -1])
    np.testing.assert_allclose(out[1][:, -1], out[5]["x_velocity"][:, -1], atol=1e-5)


def test_truncation_at_max_steps():
    state, _ = reset()
    _, (_, _, _, term, trunc, _, _) = ROLL(state, actions(ZERO, ZERO, ZERO, ZERO), PARAMS.replace(max_steps=2))
    np.testing.assert_array_equal(np.asarray(trunc), np.tile([False, True, True], (N, 1)))
    assert not np.any(term)


def test_params_defaults():
    p = EcoAntParams()
    assert p.max_steps == 1000 and p.frame_skip == 5
    assert ENV.dt(p) == pytest.approx(0.05)
    assert p.action_noise == pytest.approx(0.1)
