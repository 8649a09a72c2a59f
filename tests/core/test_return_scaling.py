"""saferl.core.return_scaling against RL-Safety-Algorithms' OnlineMeanStd and discount_cumsum, by hand."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from saferl.core import return_scaling


def test_the_running_statistics_follow_online_mean_std_update_quirk_included():
    stats = return_scaling.init()
    assert (float(stats["count"]), float(stats["mean"]), float(stats["var"])) == (0.0, 0.0, 1.0)
    # from count 0: the batch's own mean and (population) variance
    stats = return_scaling.update(stats, jnp.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose([float(stats[k]) for k in ("count", "mean", "var")], [3.0, 2.0, 2.0 / 3.0], rtol=1e-6)
    # then [10]: n_A 3, n_B 1, delta 8, mean 2 + 8 / 4 = 4; OnlineMeanStd takes the batch's variance about the new
    # mean, (10 - 4)^2 = 36, so M2 = 3 (2/3) + 36 + 64 * 3 / 4 = 86 and var 21.5, where the variance of
    # [1, 2, 3, 10] is 12.5 (Chan et al.'s formula with the batch's own variance, 0 here)
    stats = return_scaling.update(stats, jnp.array([10.0]))
    np.testing.assert_allclose([float(stats[k]) for k in ("count", "mean", "var")], [4.0, 4.0, 21.5], rtol=1e-6)
    np.testing.assert_allclose(float(return_scaling.scale(stats)), 1.0 / (np.sqrt(21.5) + 1e-5), rtol=1e-6)


def test_discounted_returns_cut_at_episode_ends_and_at_the_rollout_end():
    # T = 3 steps of N = 2 environments, flattened time-major: sample i is step i // 2 of environment i % 2
    reward = jnp.array([1.0, 10.0, 2.0, 20.0, 3.0, 30.0])
    done = jnp.array([False, True, True, False, False, False])  # env 1 ends at t = 0, env 0 at t = 1
    got = np.asarray(return_scaling.discounted_returns(reward, done, 0.5, (3, 2)))
    # env 0: t=0: 1 + 0.5 * 2 = 2 (its episode ends at t = 1); t=1: 2; t=2: 3 (the rollout ends)
    # env 1: t=0: 10; t=1: 20 + 0.5 * 30 = 35; t=2: 30
    np.testing.assert_allclose(got, [2.0, 10.0, 2.0, 35.0, 3.0, 30.0])
