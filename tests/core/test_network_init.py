"""The two weight initialisations (``network.init``): saferl's orthogonal one and PyTorch's ``nn.Linear`` default,
the C-TRPO authors' (milosen/ctrpo ``common/model.py`` builds plain ``nn.Linear`` layers)."""

import jax
import numpy as np
import pytest
import scipy.stats

from saferl.core import networks
from saferl.foundation.spaces import Box
from saferl.training import config as configlib
from saferl.training.learner import Learner


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
    with pytest.raises(
        configlib.ConfigError, match="network.init must be one of orthogonal, torch_linear, got 'xavier'"
    ):
        configlib.resolve({"algo": "ppo", "env": "ToyReach", "network": {"init": "xavier"}})


def test_the_critics_l2_term_is_lambda_times_the_squared_norm_and_moves_a_fitted_critic_towards_zero():
    """critic_objective = MSE + lambda sum(theta^2): its gradient exceeds the MSE's by 2 lambda theta; and a
    trust-region critic whose MSE gradient is zero (targets = its own predictions) takes one Adam step of about
    lr towards zero on every parameter with the term (a large lambda, so that float round-off in the MSE's
    gradient does not count), none without it."""
    from types import SimpleNamespace

    for l2 in (0.0, 1.0):
        cfg = configlib.resolve(
            {
                "algo": "trpo",
                "env": "ToyReach",
                "network": {"init": "torch_linear"},
                "hparams": {"critic_l2": l2, "critic_epochs": 1, "critic_minibatches": 1},
            }
        )
        learner = Learner(cfg, 2, Box(-1.0, 1.0, (1,)), 1, 1)
        algo, critics = learner.algo, learner.critics
        agent = learner.init_agent(jax.random.PRNGKey(3))
        obs = jax.random.normal(jax.random.PRNGKey(4), (64, 2))
        returns = critics.apply(agent.critic_params, obs)
        returns = returns + 0.5 * jax.random.normal(jax.random.PRNGKey(5), returns.shape)
        grad = jax.grad(algo.critic_objective)(agent.critic_params, obs, returns)
        plain = jax.grad(critics.loss)(agent.critic_params, obs, returns)
        for g, p, t in zip(jax.tree.leaves(grad), jax.tree.leaves(plain), jax.tree.leaves(agent.critic_params)):
            np.testing.assert_allclose(g - p, 2 * l2 * np.asarray(t), atol=1e-6)
        exact = SimpleNamespace(obs=obs, returns=critics.apply(agent.critic_params, obs))
        fitted = algo.fit_critics(agent, exact, jax.random.PRNGKey(6))[0].critic_params
        for new, old in zip(jax.tree.leaves(fitted), jax.tree.leaves(agent.critic_params)):
            new, old = np.asarray(new), np.asarray(old)
            if not l2:
                np.testing.assert_allclose(new, old, atol=1e-6)
                continue
            clear = np.abs(old) > 1e-2  # the penalty's gradient far above the MSE's round-off
            assert np.all(np.sign(new - old)[clear] == -np.sign(old)[clear])  # every one towards zero
            np.testing.assert_allclose(np.abs(new - old)[clear], cfg["hparams"]["critic_lr"], rtol=0.2)
