"""The episode cost estimate over a window of finished episodes (saferl.core.rollout): mean and snapshot mean."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saferl.training import config as configlib


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
        return Batch(
            obs=None,
            action=None,
            log_prob=None,
            dist={},
            advantages=None,
            returns=None,
            values=None,
            episode_done=jnp.asarray(done),
            episode_return=cost,
            episode_cost=cost,
            episode_discounted_cost=cost,
            episode_length=jnp.full((3,), 5, jnp.int32),
        )

    first = episode_estimates(
        batch([1, 0, 1], [2.0, 9.0, 4.0]), initial_episodes(1, window=2), statistic="snapshot_mean"
    )
    np.testing.assert_allclose(first["discounted_cost"], [(2.0 + 3.0) / 2])  # windows [2], [2, 4]
    second = episode_estimates(batch([0, 1, 0], [9.0, 6.0, 8.0]), first, statistic="snapshot_mean")
    np.testing.assert_allclose(second["discounted_cost"], [5.0])  # window [4, 6]
    third = episode_estimates(batch([0, 0, 0], [1.0, 1.0, 1.0]), second, statistic="snapshot_mean")
    np.testing.assert_allclose(third["discounted_cost"], [5.0])  # no episode ended: kept
    # the returns' window, the same statistic (logged as episode_return_window: SafePO's EpRet)
    for estimate, expected in ((first, 2.5), (second, 5.0), (third, 5.0)):
        np.testing.assert_allclose(estimate["windowed_return"], expected)
    cfg = configlib.resolve(
        {"algo": "cpo", "env": "ToyReach", "constraint": {"window": 50, "window_statistic": "snapshot_mean"}}
    )
    assert cfg["constraint"]["window_statistic"] == "snapshot_mean"
    assert "window_statistic" not in configlib.resolve({"algo": "cpo", "env": "ToyReach"})["constraint"]
    with pytest.raises(
        configlib.ConfigError,
        match="constraint.window_statistic must be one of window_mean, snapshot_mean, got 'median'",
    ):
        configlib.resolve({"algo": "cpo", "env": "ToyReach", "constraint": {"window_statistic": "median"}})


def test_episode_estimates_replace_only_the_cost_estimate_with_the_window():
    from saferl.core.rollout import Batch, episode_estimates, initial_episodes

    def batch(done, cost):
        done = jnp.asarray(done)
        cost = jnp.asarray(cost, jnp.float32)[:, None]
        n = done.shape[0]
        return Batch(
            obs=None,
            action=None,
            log_prob=None,
            dist={},
            advantages=None,
            returns=None,
            values=None,
            episode_done=done,
            episode_return=cost * 10,
            episode_cost=cost,
            episode_discounted_cost=cost,
            episode_length=jnp.full((n,), 5, jnp.int32),
        )

    first = episode_estimates(batch([1, 0, 1], [2.0, 9.0, 4.0]), initial_episodes(1, window=3))
    np.testing.assert_allclose(first["discounted_cost"], [3.0])
    second = episode_estimates(batch([0, 1, 1], [9.0, 6.0, 8.0]), first)
    np.testing.assert_allclose(second["discounted_cost"], [(4.0 + 6.0 + 8.0) / 3])  # the last three episodes
    np.testing.assert_allclose(second["cost"], [7.0])  # the batch's own means are kept for the rest
    np.testing.assert_allclose(second["return"], 70.0)
    np.testing.assert_allclose(second["windowed_return"], (40.0 + 60.0 + 80.0) / 3)  # the returns' window, logged
    third = episode_estimates(batch([0, 0, 0], [1.0, 1.0, 1.0]), second)  # no episode ended: unchanged
    np.testing.assert_allclose(third["discounted_cost"], second["discounted_cost"])
    plain = episode_estimates(batch([0, 1, 1], [9.0, 6.0, 8.0]), initial_episodes(1))
    assert "cost_window" not in plain
    np.testing.assert_allclose(plain["discounted_cost"], [7.0])
