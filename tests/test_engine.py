"""The shared engine: GAE, wrappers (incl. Canary eq. 24 and SCPO's augmentation), statistics, networks."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from saferl.training import config as configlib
from saferl.foundation import struct
from saferl.core import networks
from saferl.core.rollout import gae
from saferl.envs.base import Box, Environment
from saferl.envs.wrappers import AutoReset, EpisodeStatistics, NormalizeObservation, RunningStatistics, VecEnv


# --------------------------------------------------------------------------- GAE


def gae_reference(rewards, values, next_values, terminated, done, gamma, lam):
    """Hand-written loop, one environment, one channel."""
    T = len(rewards)
    adv = np.zeros(T)
    running = 0.0
    for t in reversed(range(T)):
        bootstrap = 0.0 if terminated[t] else gamma * next_values[t]
        delta = rewards[t] + bootstrap - values[t]
        running = delta + gamma * lam * (0.0 if done[t] else running)
        adv[t] = running
    return adv


def test_gae_matches_hand_written_loop_with_termination_and_truncation():
    rng = np.random.default_rng(0)
    T, N = 12, 3
    gammas = np.array([0.99, 0.9])
    rewards = rng.normal(size=(T, N, 2))
    values = rng.normal(size=(T, N, 2))
    next_values = rng.normal(size=(T, N, 2))
    terminated = np.zeros((T, N), bool)
    truncated = np.zeros((T, N), bool)
    terminated[4, 0] = True
    truncated[7, 1] = True  # truncated: bootstrap from next_values, but cut the GAE recursion
    terminated[2, 2] = truncated[9, 2] = True
    done = terminated | truncated
    adv, ret = gae(jnp.asarray(rewards), jnp.asarray(values), jnp.asarray(next_values), jnp.asarray(terminated),
                   jnp.asarray(done), jnp.asarray(gammas), 0.95)
    for n in range(N):
        for k in range(2):
            ref = gae_reference(rewards[:, n, k], values[:, n, k], next_values[:, n, k], terminated[:, n], done[:, n],
                                gammas[k], 0.95)
            np.testing.assert_allclose(adv[:, n, k], ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ret, np.asarray(adv) + values, rtol=1e-5, atol=1e-6)


def test_gae_channels_that_end_at_truncation_do_not_bootstrap_there():
    rng = np.random.default_rng(1)
    T, N = 10, 2
    gammas = np.array([0.99, 1.0])
    rewards, values, next_values = (rng.normal(size=(T, N, 2)) for _ in range(3))
    terminated = np.zeros((T, N), bool)
    truncated = np.zeros((T, N), bool)
    truncated[5, 0] = terminated[3, 1] = truncated[8, 1] = True
    done = terminated | truncated
    adv, _ = gae(jnp.asarray(rewards), jnp.asarray(values), jnp.asarray(next_values), jnp.asarray(terminated),
                 jnp.asarray(done), jnp.asarray(gammas), 0.9, end_at_truncation=jnp.asarray([0.0, 1.0]))
    for n in range(N):
        # channel 0 bootstraps at truncation as before; channel 1 treats the time limit as the end
        ref0 = gae_reference(rewards[:, n, 0], values[:, n, 0], next_values[:, n, 0], terminated[:, n], done[:, n],
                             gammas[0], 0.9)
        ref1 = gae_reference(rewards[:, n, 1], values[:, n, 1], next_values[:, n, 1], done[:, n], done[:, n],
                             gammas[1], 0.9)
        np.testing.assert_allclose(adv[:, n, 0], ref0, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(adv[:, n, 1], ref1, rtol=1e-5, atol=1e-5)


def test_gae_lambda_one_is_discounted_return_minus_value():
    rewards = jnp.arange(5.0)[:, None, None]
    values = jnp.zeros((5, 1, 1))
    done = jnp.zeros((5, 1), bool).at[4, 0].set(True)
    adv, _ = gae(rewards, values, values, done, done, jnp.asarray([0.5]), 1.0)
    expected = [sum(0.5 ** (k - t) * k for k in range(t, 5)) for t in range(5)]
    np.testing.assert_allclose(adv[:, 0, 0], expected, rtol=1e-6)


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


# --------------------------------------------------------------------------- networks


def test_gaussian_log_prob_entropy_kl_match_scipy():
    actor = networks.GaussianActor(obs_dim=3, action_dim=2, hidden=(8,))
    dist = {"mean": jnp.asarray([0.3, -1.0]), "log_std": jnp.asarray([-0.5, 0.2])}
    other = {"mean": jnp.asarray([0.0, -0.5]), "log_std": jnp.asarray([0.1, 0.0])}
    action = jnp.asarray([0.1, 0.4])
    std = np.exp(np.asarray(dist["log_std"]))
    expected = stats.norm(np.asarray(dist["mean"]), std).logpdf(np.asarray(action)).sum()
    np.testing.assert_allclose(actor.log_prob(dist, action), expected, rtol=1e-5)
    np.testing.assert_allclose(actor.entropy(dist), stats.norm(0, std).entropy().sum(), rtol=1e-5)
    # KL by Monte-Carlo
    samples = np.asarray(dist["mean"]) + std * np.random.default_rng(0).normal(size=(200_000, 2))
    mc = np.mean(actor.log_prob(dist, jnp.asarray(samples)) - actor.log_prob(other, jnp.asarray(samples)))
    np.testing.assert_allclose(actor.kl(dist, other), mc, rtol=2e-2)


def test_categorical_actor():
    actor = networks.CategoricalActor(obs_dim=2, num_actions=3, hidden=(8,))
    params = actor.init(jax.random.PRNGKey(0))
    dist = actor.distribution(params, jnp.ones((4, 2)))
    np.testing.assert_allclose(jnp.exp(dist["logits"]).sum(-1), 1.0, rtol=1e-6)
    p = {"logits": jnp.log(jnp.asarray([0.2, 0.3, 0.5]))}
    q = {"logits": jnp.log(jnp.asarray([0.4, 0.4, 0.2]))}
    expected = sum(a * np.log(a / b) for a, b in zip([0.2, 0.3, 0.5], [0.4, 0.4, 0.2]))
    np.testing.assert_allclose(actor.kl(p, q), expected, rtol=1e-5)
    np.testing.assert_allclose(actor.log_prob(p, jnp.asarray(2)), np.log(0.5), rtol=1e-6)


def test_critics_are_independent_per_channel():
    critics = networks.Critics(obs_dim=3, num_channels=3, hidden=(8,))
    params = critics.init(jax.random.PRNGKey(0))
    values = critics.apply(params, jnp.ones((5, 3)))
    assert values.shape == (5, 3)
    # changing channel 1's parameters changes only channel 1
    bumped = jax.tree.map(lambda x: x.at[1].add(0.5), params)
    diff = np.abs(np.asarray(critics.apply(bumped, jnp.ones((5, 3))) - values)).max(0)
    assert diff[1] > 0 and diff[0] == 0 and diff[2] == 0


def test_unknown_activation_is_rejected():
    with pytest.raises(ValueError, match="activation"):
        networks.make_actor(3, Box(-1, 1, (2,)), [8], "sigmoidz")


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


@pytest.mark.parametrize("size", [1, 3, 7])
def test_cost_window_is_the_mean_of_the_last_episodes_across_batches(size):
    """constraint.window: J_c is the mean of the last W finished episodes (OmniSafe's 50-episode
    EpCost window), whatever the number of episodes per batch -- against a numpy deque."""
    import collections

    from saferl.core.rollout import cost_window_mean, initial_episodes, push_cost_window

    rng = np.random.default_rng(size)
    window = initial_episodes(2, window=size)["cost_window"]
    reference = collections.deque(maxlen=size)
    assert np.isnan(np.asarray(cost_window_mean(window))).all()
    push = jax.jit(push_cost_window)
    for _ in range(25):
        done = rng.random(24) < rng.choice([0.0, 0.1, 0.5, 1.0])  # fixed batch size: one compile
        costs = rng.normal(size=(24, 2)).astype(np.float32)
        window = push(window, jnp.asarray(done), jnp.asarray(costs))
        reference.extend(costs[done])
        expected = np.mean(reference, axis=0) if reference else np.full(2, np.nan)
        np.testing.assert_allclose(np.asarray(cost_window_mean(window)), expected, atol=1e-5)


@pytest.mark.parametrize("size", [1, 3, 50])
def test_snapshot_mean_is_safepos_epoch_mean_of_the_rolling_window(size):
    """constraint.window_statistic snapshot_mean: J_c of a batch is the mean, over its finished episodes in time
    order, of the window's mean right after each was appended -- SafePO's logger (deque(maxlen=50); store
    np.mean(deque) at every episode end; get_stats = the epoch's mean), replayed in plain Python."""
    import collections

    from saferl.core.rollout import cost_window_snapshot_mean, initial_episodes, push_cost_window

    rng = np.random.default_rng(size + 1)
    window = initial_episodes(2, window=size)["cost_window"]
    deque = collections.deque(maxlen=size)
    snapshot, push = jax.jit(cost_window_snapshot_mean), jax.jit(push_cost_window)
    for _ in range(12):
        done = rng.random(40) < rng.choice([0.0, 0.1, 0.5, 1.0])
        costs = rng.normal(size=(40, 2)).astype(np.float32) + 3.0
        got = np.asarray(snapshot(window, jnp.asarray(done), jnp.asarray(costs)))
        stored = []
        for cost in costs[done]:
            deque.append(cost)
            stored.append(np.mean(deque, axis=0))
        if stored:
            np.testing.assert_allclose(got, np.mean(stored, axis=0), rtol=1e-5)
        else:
            assert np.isnan(got).all()
        window = push(window, jnp.asarray(done), jnp.asarray(costs))


def test_snapshot_mean_through_episode_estimates_and_config():
    from saferl.core.rollout import Batch, episode_estimates, initial_episodes

    def batch(done, cost):
        cost = jnp.asarray(cost, jnp.float32)[:, None]
        return Batch(obs=None, action=None, log_prob=None, dist={}, advantages=None, returns=None, values=None,
                     episode_done=jnp.asarray(done), episode_return=cost, episode_cost=cost,
                     episode_discounted_cost=cost, episode_length=jnp.full((3,), 5, jnp.int32))

    first = episode_estimates(batch([1, 0, 1], [2.0, 9.0, 4.0]), initial_episodes(1, window=2), statistic="snapshot_mean")
    np.testing.assert_allclose(first["discounted_cost"], [(2.0 + 3.0) / 2])  # windows [2], [2, 4]
    second = episode_estimates(batch([0, 1, 0], [9.0, 6.0, 8.0]), first, statistic="snapshot_mean")
    np.testing.assert_allclose(second["discounted_cost"], [5.0])  # window [4, 6]
    third = episode_estimates(batch([0, 0, 0], [1.0, 1.0, 1.0]), second, statistic="snapshot_mean")
    np.testing.assert_allclose(third["discounted_cost"], [5.0])  # no episode ended: kept
    cfg = configlib.resolve({"algo": "cpo", "env": "ToyReach",
                             "constraint": {"window": 50, "window_statistic": "snapshot_mean"}})
    assert cfg["constraint"]["window_statistic"] == "snapshot_mean"
    assert "window_statistic" not in configlib.resolve({"algo": "cpo", "env": "ToyReach"})["constraint"]
    with pytest.raises(configlib.ConfigError, match="constraint.window_statistic must be one of window_mean, "
                                                    "snapshot_mean, got 'median'"):
        configlib.resolve({"algo": "cpo", "env": "ToyReach", "constraint": {"window_statistic": "median"}})


def test_episode_estimates_replace_only_the_cost_estimate_with_the_window():
    from saferl.core.rollout import Batch, episode_estimates, initial_episodes

    def batch(done, cost):
        done = jnp.asarray(done)
        cost = jnp.asarray(cost, jnp.float32)[:, None]
        n = done.shape[0]
        return Batch(obs=None, action=None, log_prob=None, dist={}, advantages=None, returns=None, values=None,
                     episode_done=done, episode_return=cost * 10, episode_cost=cost, episode_discounted_cost=cost,
                     episode_length=jnp.full((n,), 5, jnp.int32))

    first = episode_estimates(batch([1, 0, 1], [2.0, 9.0, 4.0]), initial_episodes(1, window=3))
    np.testing.assert_allclose(first["discounted_cost"], [3.0])
    second = episode_estimates(batch([0, 1, 1], [9.0, 6.0, 8.0]), first)
    np.testing.assert_allclose(second["discounted_cost"], [(4.0 + 6.0 + 8.0) / 3])  # the last three episodes
    np.testing.assert_allclose(second["cost"], [7.0])  # the batch's own means are kept for the rest
    np.testing.assert_allclose(second["return"], 70.0)
    third = episode_estimates(batch([0, 0, 0], [1.0, 1.0, 1.0]), second)  # no episode ended: unchanged
    np.testing.assert_allclose(third["discounted_cost"], second["discounted_cost"])
    plain = episode_estimates(batch([0, 1, 1], [9.0, 6.0, 8.0]), initial_episodes(1))
    assert "cost_window" not in plain
    np.testing.assert_allclose(plain["discounted_cost"], [7.0])
