"""The two weight initialisations (``network.init``): saferl's orthogonal one and PyTorch's ``nn.Linear`` default,
the C-TRPO authors' (milosen/ctrpo ``common/model.py`` builds plain ``nn.Linear`` layers)."""

import jax
import numpy as np
import pytest
import scipy.stats

from saferl import config as configlib
from saferl.core import networks
from saferl.spaces import Box
from saferl.trainer import Learner


def test_torch_linear_is_uniform_with_bound_one_over_sqrt_fan_in_on_every_layer_and_bias():
    """Kolmogorov-Smirnov against U(-1/sqrt(fan_in), 1/sqrt(fan_in)), weights and biases of each layer; the
    actor's head ignores its 0.01 gain, as nn.Linear knows none."""
    actor = networks.GaussianActor(obs_dim=200, action_dim=64, hidden=(300, 100), init_scheme="torch_linear")
    layers = actor.init(jax.random.PRNGKey(0))["mean"]
    for layer, fan_in in zip(layers, (200, 300, 100)):
        bound = 1.0 / np.sqrt(fan_in)
        for values in (np.asarray(layer["w"]).ravel(), np.asarray(layer["b"])):
            assert np.abs(values).max() <= bound
            assert scipy.stats.kstest(values, scipy.stats.uniform(-bound, 2 * bound).cdf).pvalue > 1e-3


def test_orthogonal_default_keeps_its_gains_and_zero_biases():
    actor = networks.GaussianActor(obs_dim=8, action_dim=4, hidden=(16, 16))
    first, _, head = actor.init(jax.random.PRNGKey(1))["mean"]
    np.testing.assert_allclose(np.asarray(first["w"]) @ np.asarray(first["w"]).T, 2.0 * np.eye(8), atol=1e-5)
    np.testing.assert_allclose(np.asarray(head["w"]).T @ np.asarray(head["w"]), 1e-4 * np.eye(4), atol=1e-8)
    assert not np.any(np.asarray(first["b"]))


def test_the_config_reaches_actor_and_critics_and_a_bad_scheme_is_one_line():
    cfg = configlib.resolve({"algo": "ppo", "env": "ToyReach", "network": {"init": "torch_linear"}})
    learner = Learner(cfg, 2, Box(-1.0, 1.0, (1,)), 1, 1)
    assert learner.actor.init_scheme == learner.critics.init_scheme == "torch_linear"
    head = learner.critics.init(jax.random.PRNGKey(2))[-1]
    assert np.any(np.asarray(head["b"]))  # uniform biases, not orthogonal's zeros
    assert configlib.resolve({"algo": "ppo", "env": "ToyReach"})["network"]["init"] == "orthogonal"
    with pytest.raises(configlib.ConfigError, match="network.init must be one of orthogonal, torch_linear, got 'xavier'"):
        configlib.resolve({"algo": "ppo", "env": "ToyReach", "network": {"init": "xavier"}})
