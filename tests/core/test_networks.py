"""Networks: Gaussian and categorical actors against scipy, independent critic channels, bad activations."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from saferl.core import networks
from saferl.envs.base import Box

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
