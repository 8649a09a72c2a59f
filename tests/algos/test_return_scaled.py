"""RL-Safety-Algorithms' reward scaling (``advantage_scale: return_std``) as PDO and TRPO-Lag take it: A_r over the
running SD of earlier batches' discounted returns, A_c raw, the statistics updated after the step; and TRPO-Lag's
step then the natural gradient of (A_r / std - lambda A_c) / (1 + lambda)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import agent_for, make_algo, make_batch  # noqa: E402  (shared synthetic-batch helpers)
from jax.flatten_util import ravel_pytree

from saferl.algos import base

LIMIT = 25.0


def _with_rewards(batch, rewards, done, shape):
    return batch.replace(
        reward=jnp.asarray(rewards, jnp.float32),
        terminated=jnp.asarray(done, bool),
        truncated=jnp.zeros(len(done), bool),
        rollout_shape=shape,
    )


def test_defaults_pdo_as_its_reference_trpo_lag_as_the_family():
    assert base.get("pdo").resolve_hparams({})["advantage_scale"] == "return_std"
    assert base.get("trpo_lag").resolve_hparams({})["advantage_scale"] == "standardised"
    assert "return_stats" not in agent_for(make_algo("trpo_lag"), LIMIT).extra  # the family's checkpoint layout


@pytest.mark.parametrize("name", ["pdo", "trpo_lag"])
def test_reference_advantages_are_scaled_by_the_running_return_std_of_earlier_batches(name):
    """iwpg.py's use_reward_scaling: A_r divided by std + 1e-5 of the discounted returns of the batches before
    (1 for the first), A_c raw (not centred); the statistics take the batch's returns after the step."""
    algo = make_algo(name, cg_iters=20, target_kl=0.001, advantage_scale="return_std")
    agent = agent_for(algo, LIMIT)
    assert set(agent.extra["return_stats"]) == {"count", "mean", "var"}
    n = 256
    rewards = np.tile([1.0, 2.0, 3.0, 4.0], n // 4)
    done = np.tile([False, False, False, True], n // 4)  # 64 paths of 4 steps, one environment
    batch = _with_rewards(make_batch(algo, agent.actor_params, cost=30.0, n=n), rewards, done, (n, 1))
    adv_r, adv_c = algo.scaled_advantages(agent, batch)
    raw = np.asarray(batch.advantages)
    np.testing.assert_allclose(np.asarray(adv_r), raw[:, 0] / (1.0 + 1e-5), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(adv_c), raw[:, 1:], rtol=1e-6)  # raw: no centring
    new, metrics = jax.jit(algo.policy_step)(agent, batch)
    # each path's returns-to-go at gamma 0.99: 4, 3 + 0.99 * 4, 2 + 0.99 * 6.96, 1 + 0.99 * 8.8904
    g4 = 4.0
    g3 = 3.0 + 0.99 * g4
    g2 = 2.0 + 0.99 * g3
    g1 = 1.0 + 0.99 * g2
    returns = np.array([g1, g2, g3, g4])
    # from count 0 the update is the batch's own mean and variance (about the new mean, which is the batch mean)
    stats = new.extra["return_stats"]
    assert float(stats["count"]) == n
    np.testing.assert_allclose(float(stats["mean"]), returns.mean(), rtol=1e-6)
    np.testing.assert_allclose(float(stats["var"]), returns.var(), rtol=1e-5)
    np.testing.assert_allclose(float(metrics["return_std"]), returns.std(), rtol=1e-5)
    # the next batch is scaled by that std
    adv_r2, _ = algo.scaled_advantages(new, batch)
    np.testing.assert_allclose(np.asarray(adv_r2), raw[:, 0] / (returns.std() + 1e-5), rtol=1e-5)


def test_trpo_lag_steps_along_the_natural_gradient_of_the_scaled_lagrangian():
    """lag-trpo.py's loss (ratio A_r + lambda ratio A_c) / (1 + lambda) on iwpg.py's advantages: A_r over the
    running return SD (2 here), A_c raw.  By hand: x = F^-1 p with the dense Fisher, the step sqrt(2 delta / p^T x) x;
    the family's standardised advantages point elsewhere."""
    algo = make_algo("trpo_lag", cg_iters=200, cg_damping=1e-2, target_kl=0.001, advantage_scale="return_std")
    agent = agent_for(algo, LIMIT)
    lam, std = 0.5, 2.0
    state = agent.extra["lagrange"]
    stats = {"count": jnp.float32(1000.0), "mean": jnp.float32(0.0), "var": jnp.float32(std**2)}
    agent = agent.replace(
        extra={**agent.extra, "lagrange": state.replace(multiplier=jnp.float32(lam)), "return_stats": stats}
    )
    batch = make_batch(algo, agent.actor_params, cost=30.0)
    batch = _with_rewards(batch, np.ones(256), np.zeros(256, bool), (256, 1))
    flat, unravel = ravel_pytree(agent.actor_params)
    adv = np.asarray(batch.advantages, np.float64)

    def mean_ratio_times(p, weights):
        dist = algo.actor.distribution(unravel(p), batch.obs)
        ratio = jnp.exp(algo.actor.log_prob(dist, batch.action) - batch.log_prob)
        return jnp.mean(ratio * weights)

    def mean_kl(p):
        return jnp.mean(algo.actor.kl(batch.dist, algo.actor.distribution(unravel(p), batch.obs)))

    fisher = np.asarray(jax.hessian(mean_kl)(flat), np.float64) + 1e-2 * np.eye(flat.size)

    def natural_step(weights):
        p = np.asarray(jax.grad(mean_ratio_times)(flat, jnp.asarray(weights, jnp.float32)), np.float64)
        x = np.linalg.solve(fisher, p)
        return math.sqrt(2 * algo.hp["target_kl"] / (p @ x)) * x

    want = natural_step((adv[:, 0] / (std + 1e-5) - lam * adv[:, 1]) / (1 + lam))
    standardised = natural_step(
        ((adv[:, 0] - adv[:, 0].mean()) / (adv[:, 0].std() + 1e-8) - lam * (adv[:, 1] - adv[:, 1].mean())) / (1 + lam)
    )
    new, metrics = jax.jit(algo.policy_step)(agent, batch)
    assert float(metrics["accepted"]) == 1.0 and float(metrics["backtracks"]) == 0.0
    got = np.asarray(ravel_pytree(new.actor_params)[0] - flat, np.float64)
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3 * np.abs(want).max())
    assert np.abs(standardised - want).max() > 0.1 * np.abs(want).max()
