"""GAE for every channel (saferl.core.rollout.gae) against a hand-written loop."""

import jax.numpy as jnp
import numpy as np

from saferl.core.rollout import gae

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
    adv, ret = gae(
        jnp.asarray(rewards),
        jnp.asarray(values),
        jnp.asarray(next_values),
        jnp.asarray(terminated),
        jnp.asarray(done),
        jnp.asarray(gammas),
        0.95,
    )
    for n in range(N):
        for k in range(2):
            ref = gae_reference(
                rewards[:, n, k], values[:, n, k], next_values[:, n, k], terminated[:, n], done[:, n], gammas[k], 0.95
            )
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
    adv, _ = gae(
        jnp.asarray(rewards),
        jnp.asarray(values),
        jnp.asarray(next_values),
        jnp.asarray(terminated),
        jnp.asarray(done),
        jnp.asarray(gammas),
        0.9,
        end_at_truncation=jnp.asarray([0.0, 1.0]),
    )
    for n in range(N):
        # channel 0 bootstraps at truncation as before; channel 1 treats the time limit as the end
        ref0 = gae_reference(
            rewards[:, n, 0], values[:, n, 0], next_values[:, n, 0], terminated[:, n], done[:, n], gammas[0], 0.9
        )
        ref1 = gae_reference(
            rewards[:, n, 1], values[:, n, 1], next_values[:, n, 1], done[:, n], done[:, n], gammas[1], 0.9
        )
        np.testing.assert_allclose(adv[:, n, 0], ref0, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(adv[:, n, 1], ref1, rtol=1e-5, atol=1e-5)


def test_gae_lambda_one_is_discounted_return_minus_value():
    rewards = jnp.arange(5.0)[:, None, None]
    values = jnp.zeros((5, 1, 1))
    done = jnp.zeros((5, 1), bool).at[4, 0].set(True)
    adv, _ = gae(rewards, values, values, done, done, jnp.asarray([0.5]), 1.0)
    expected = [sum(0.5 ** (k - t) * k for k in range(t, 5)) for t in range(5)]
    np.testing.assert_allclose(adv[:, 0, 0], expected, rtol=1e-6)
