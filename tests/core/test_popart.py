"""PopArt value normalisation in Critics: outputs preserved across normaliser updates, scale-free loss."""

import jax
import jax.numpy as jnp
import numpy as np

from saferl.core.networks import Critics


def test_normalizer_update_preserves_values_and_tracks_target_moments():
    critics = Critics(3, 2, (8,), normalize=True, normalizer_rate=0.5)
    params = critics.init(jax.random.PRNGKey(0))
    obs = jax.random.normal(jax.random.PRNGKey(1), (32, 3))
    before = critics.apply(params, obs)
    returns = jnp.stack([jnp.linspace(-1, 1, 32), 1e4 + 100 * jnp.linspace(0, 1, 32)], -1)
    for _ in range(20):
        params = critics.update_normalizer(params, returns)
        np.testing.assert_allclose(np.asarray(critics.apply(params, obs)), np.asarray(before), rtol=1e-4, atol=1e-2)
    np.testing.assert_allclose(np.asarray(params["mean"]), np.asarray(returns.mean(0)), rtol=1e-3)
    np.testing.assert_allclose(np.asarray(Critics._scale(params)), np.asarray(returns.std(0)), rtol=2e-2)
    # the loss is measured in normalised units: a channel 100x larger does not dominate
    loss = critics.loss(params, obs, returns)
    expected = np.mean(np.sum(((np.asarray(before) - np.asarray(returns)) / np.asarray(returns.std(0))) ** 2, -1))
    np.testing.assert_allclose(float(loss), expected, rtol=2e-2)


def test_plain_critics_are_unchanged():
    critics = Critics(3, 2, (8,))
    params = critics.init(jax.random.PRNGKey(0))
    assert critics.update_normalizer(params, jnp.ones((4, 2))) is params
    obs = jnp.ones((4, 3))
    np.testing.assert_allclose(
        float(critics.loss(params, obs, jnp.zeros((4, 2)))),
        float(jnp.mean(jnp.sum(critics.apply(params, obs) ** 2, -1))),
        rtol=1e-6,
    )
