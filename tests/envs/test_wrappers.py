"""The shared wrappers: episode statistics, auto-reset (with a reset pool), running observation statistics."""

import jax
import jax.numpy as jnp
import numpy as np

from saferl.envs.base import Box, Environment
from saferl.envs.wrappers import AutoReset, EpisodeStatistics, NormalizeObservation, RunningStatistics, VecEnv
from saferl.foundation import struct

# --------------------------------------------------------------------------- scripted env


@struct.dataclass
class ScriptState:
    t: jax.Array


@struct.dataclass
class ScriptParams:
    costs: jax.Array  # cost at each step
    horizon: int = struct.field(static=True, default=6)


class ScriptedEnv(Environment):
    """Observation = [t]; reward 1 per step; cost from a script; truncates at the horizon."""

    def default_params(self):
        return ScriptParams(jnp.zeros(6))

    def reset(self, key, params):
        return ScriptState(jnp.zeros((), jnp.int32)), jnp.zeros((1,))

    def step(self, state, action, params):
        cost = params.costs[state.t]
        t = state.t + 1
        obs = t.astype(jnp.float32)[None]
        return ScriptState(t), obs, jnp.ones(()), cost, jnp.asarray(False), t >= params.horizon, {}

    def observation_space(self, params):
        return Box(0.0, 1e6, (1,))

    def action_space(self, params):
        return Box(-1.0, 1.0, (1,))


def run_script(env, params, steps):
    state, obs = env.reset(jax.random.PRNGKey(0), params)
    out = []
    for _ in range(steps):
        state, obs, r, c, term, trunc, info = env.step(state, jnp.zeros(1), params)
        out.append((obs, r, c, term, trunc, info))
    return out


def test_episode_statistics_and_auto_reset():
    costs = jnp.asarray([1.0, 0.0, 2.0, 0.0, 0.0, 3.0])
    params = ScriptParams(costs)
    env = AutoReset(EpisodeStatistics(ScriptedEnv(), gamma_c=0.5))
    out = run_script(env, params, 8)
    obs, r, c, term, trunc, info = out[5]  # last step of the first episode
    assert bool(trunc) and bool(info["episode_done"])
    assert float(info["episode_return"]) == 6.0
    assert float(info["episode_cost"]) == 6.0
    np.testing.assert_allclose(float(info["episode_discounted_cost"]), 1.0 + 2.0 * 0.25 + 3.0 * 0.5**5)
    assert int(info["episode_length"]) == 6
    assert float(obs[0]) == 0.0  # auto-reset: first observation of the next episode
    assert float(info["final_obs"][0]) == 6.0  # the true last observation is kept
    obs, r, c, term, trunc, info = out[7]  # second episode restarted its statistics
    assert not bool(info["episode_done"]) and int(info["episode_length"]) == 2
    assert float(info["episode_cost"]) == 1.0


def test_running_statistics_match_numpy():
    rng = np.random.default_rng(2)
    chunks = [rng.normal(3.0, 2.0, size=(n, 4)) for n in (5, 17, 64)]
    stats = RunningStatistics.create((4,))
    for chunk in chunks:
        stats = stats.update(jnp.asarray(chunk))
    data = np.concatenate(chunks)
    np.testing.assert_allclose(stats.mean, data.mean(0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(stats.var, data.var(0), rtol=1e-3)


def test_normalize_observation_freezes_when_asked():
    venv = NormalizeObservation(VecEnv(ScriptedEnv(), 3))
    params = ScriptParams(jnp.zeros(6))
    state, _ = venv.reset(jax.random.PRNGKey(0), params, update=False)
    before = state.stats
    state, *_ = venv.step(state, jnp.zeros((3, 1)), params)
    np.testing.assert_array_equal(state.stats.mean, before.mean)
    state, _ = venv.reset(jax.random.PRNGKey(0), params)
    state, *_ = venv.step(state, jnp.zeros((3, 1)), params)
    assert float(state.stats.mean[0]) > 0.0


def test_auto_reset_pool_consumes_fresh_resets_in_turn():
    """With a pool, each finished episode starts from the next pooled reset; refresh draws new ones."""

    class KeyedEnv(ScriptedEnv):
        def reset(self, key, params):
            return ScriptState(jnp.zeros((), jnp.int32)), jax.random.uniform(key, (1,))

    params = ScriptParams(jnp.zeros(6), horizon=2)
    env = AutoReset(KeyedEnv(), pool_size=2)
    state, first = env.reset(jax.random.PRNGKey(0), params)
    pool_obs = np.asarray(state.pool[1])[:, 0]
    starts = []
    for _ in range(6):
        state, obs, *_rest, info = env.step(state, jnp.zeros(1), params)
        if bool(info["final_obs"][0] != obs[0]) and int(state.inner.t) == 0:
            starts.append(float(obs[0]))
    # three episodes ended: pooled resets 0, 1, then the pool wraps around
    np.testing.assert_allclose(starts, [pool_obs[0], pool_obs[1], pool_obs[0]], rtol=1e-6)
    refreshed = env.refresh(state, params)
    assert int(refreshed.pool_index) == 0
    assert not np.allclose(np.asarray(refreshed.pool[1])[:, 0], pool_obs)
