"""canary-fig2 (saferl.reproduce.canary.fig2): estimators against numpy, the Cantelli bound, the
exact DP truth against finite differences and Monte-Carlo, unbiasedness of the score-function and
GAE(lambda = 1) gradients, and the smoke run's slopes."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saferl import reproduce
from saferl.core import risk
from saferl.envs.icy_lake import make_params
from saferl.reproduce.canary import fig2 as cv

TINY = make_params(("SFH", "HFF", "FHG"), max_steps=8)
HORIZON = 8
THETA = jnp.asarray(np.random.default_rng(3).normal(0.0, 0.7, (9, 4)), jnp.float32)


@pytest.fixture(scope="module")
def tiny_batches():
    """20 batches of 1,000 episodes of THETA on TINY, and 20 independent critic batches."""
    draw = jax.jit(jax.vmap(lambda k: cv.rollout(THETA, TINY, k, 1000, HORIZON)))
    return draw(jax.random.split(jax.random.PRNGKey(0), 20)), draw(jax.random.split(jax.random.PRNGKey(1), 20))


def test_value_estimators_match_numpy():
    rng = np.random.default_rng(0)
    violation_rate, cvar_estimate, cantelli_estimate = (
        jax.jit(risk.violation_rate),
        jax.jit(risk.cvar_estimate),
        jax.jit(risk.cantelli_estimate),
    )
    for C in (rng.poisson(7.0, 500).astype(np.float32), rng.exponential(3.0, 500).astype(np.float32)):
        every = jnp.ones(C.shape, bool)
        for eps in (0.3, 0.05, 0.01):
            rho = float(np.quantile(C, 1 - eps)) + 0.5
            eta = float(np.quantile(C, 1 - eps, method="inverted_cdf"))
            np.testing.assert_allclose(violation_rate(C, every, rho), np.mean(C >= rho), rtol=1e-6)
            np.testing.assert_allclose(
                cvar_estimate(C, every, eps, eta), eta + np.mean(np.maximum(C - eta, 0.0)) / eps, rtol=1e-5
            )
            np.testing.assert_allclose(
                cvar_estimate(C, every, eps),  # eta = empirical VaR
                eta + np.mean(np.maximum(C - eta, 0.0)) / eps,
                rtol=1e-5,
            )
            c = C.astype(np.float64)
            np.testing.assert_allclose(
                cantelli_estimate(C, every, rho, eps), (1 / eps - 1) * c.var() - (rho - c.mean()) ** 2, rtol=1e-4
            )


def test_cantelli_bound_dominates_the_violation_probability():
    rng = np.random.default_rng(1)
    samples = [
        rng.exponential(2.0, 4000),
        rng.poisson(5.0, 4000),
        rng.lognormal(1.0, 0.8, 4000),
        np.where(rng.random(4000) < 0.03, 20.0, 1.0),
        rng.integers(0, 30, 4000).astype(float),
    ]
    for C in samples:
        mu, var = C.mean(), C.var()  # Cantelli holds exactly for the empirical distribution
        for rho in mu + np.array([0.1, 0.5, 1.0, 2.0, 4.0]) * np.sqrt(var):
            assert float(risk.cantelli_bound(mu, var, rho)) >= np.mean(C >= rho) - 1e-6
            for eps in (0.2, 0.05, 0.01):  # J_C <= 0 certifies P(C >= rho) <= eps
                if float(risk.cantelli_value(mu, np.mean(C**2), rho, eps)) <= 0:
                    assert np.mean(C >= rho) <= eps


def test_exact_gradient_matches_finite_differences():
    k = np.arange(HORIZON + 1, dtype=np.float64)
    fs = np.stack([k, k**2, (k >= 3) * 1.0])
    pmf, grads = cv.expectation_gradients(THETA, TINY, HORIZON, fs)
    assert abs(pmf.sum() - 1) < 1e-9
    th = np.asarray(THETA, np.float64)
    h = 1e-5
    steps = h * np.eye(th.size).reshape((th.size,) + th.shape)
    with jax.enable_x64(True):  # all central differences in one batched call
        pmf_fn = jax.jit(jax.vmap(lambda t: cv.cost_pmf(t, TINY, HORIZON)))
        pmfs = pmf_fn(jnp.asarray(np.concatenate([th + steps, th - steps])))
    plus, minus = np.split(np.asarray(pmfs), 2)
    fd = np.einsum("fk,pk->fp", fs, (plus - minus) / (2 * h)).reshape((3,) + th.shape)
    np.testing.assert_allclose(grads, fd, atol=1e-6, rtol=1e-5)


def test_exact_law_matches_rollouts(tiny_batches):
    batch, _ = tiny_batches
    C = np.asarray(batch[2]).sum(-1).ravel()
    truth = cv.exact_truth(THETA, TINY, HORIZON, [0.1])[0]
    hist = np.bincount(C.astype(int), minlength=HORIZON + 1) / C.size
    exact = cv.expectation_gradients(THETA, TINY, HORIZON, np.arange(HORIZON + 1.0)[None])[0]
    assert np.all(np.abs(hist - exact) <= 5 * np.sqrt(exact * (1 - exact) / C.size) + 1e-4)
    assert abs(C.mean() - truth["mu"]) < 5 * truth["sd"] / np.sqrt(C.size)


def test_per_step_costs_telescope(tiny_batches):
    @jax.jit
    def sums(costs):
        y, y_next = cv.accumulated(costs)
        return (
            costs.sum(-1),
            risk.indicator_cost(y, y_next, 3.0).sum(-1),
            risk.cvar_excess_cost(y, y_next, 2.0).sum(-1),
            risk.augmented_cost(costs, y, 1.0).sum(-1),
        )

    C, indicator, excess, augmented = map(np.asarray, sums(tiny_batches[0][2][0]))
    np.testing.assert_allclose(indicator, C >= 3.0)
    np.testing.assert_allclose(excess, np.maximum(C - 2.0, 0.0))
    np.testing.assert_allclose(augmented, C**2)


def test_score_function_and_gae1_gradients_are_unbiased(tiny_batches):
    """Mean over 20 batches of every estimator vs the exact DP truth, at lambda = 1 (unbiased with any
    critic of the augmented state); the squared error must be of the order of the estimator's variance."""
    batches, critic_batches = tiny_batches
    eps = 0.2
    truth = cv.exact_truth(THETA, TINY, HORIZON, [eps])[0]
    assert 0.0 < truth["p"] <= eps
    fills = jax.vmap(lambda b: cv.critic_fill(b, 9))(critic_batches)
    values, grads = jax.jit(
        jax.vmap(lambda b, cb, fl: cv.batch_estimates(THETA, b, cb, fl, truth["rho"], truth["eta"], eps, 9, lam=1.0))
    )(batches, critic_batches, fills)
    values, grads = np.asarray(values, np.float64), np.asarray(grads, np.float64)
    for j, sur in enumerate(cv.SURROGATES):
        v, exact = values[:, j], truth["value"][sur]
        assert abs(v.mean() - exact) < 5 * v.std(ddof=1) / np.sqrt(len(v)) + 1e-3 * abs(exact)
        for e in range(2):
            g = grads[:, e, j].reshape(20, -1)
            err2 = np.sum((g.mean(0) - truth["gradient"][sur].ravel()) ** 2)
            assert err2 < 3.0 * g.var(0, ddof=1).sum() / 20, (sur, e)
            assert err2 < 0.15 * np.sum(truth["gradient"][sur] ** 2), (sur, e)


def test_explicit_score_function(tiny_batches):
    """weighted_score with trajectory weights = (1/N) sum_i f(C_i) s(tau_i), s from jax.grad per episode."""
    cells, actions, costs, alive = jax.tree.map(lambda x: x[0, :50], tiny_batches[0])
    C = costs.sum(-1)

    def log_prob(th, s, a, m):
        return jnp.sum(m * jax.nn.log_softmax(th, -1)[s, a])

    scores = jax.jit(jax.vmap(jax.grad(log_prob), (None, 0, 0, 0)))(THETA, cells, actions, alive)
    expected = jnp.mean(C[:, None, None] ** 2 * scores, 0)
    got = jax.jit(cv.weighted_score)(THETA, cells, actions, C[:, None] ** 2 * alive / C.shape[0])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_canary_fig2_smoke(tmp_path):
    assert "canary-fig2" in reproduce.targets()
    reproduce.run("canary-fig2", "smoke", tmp_path)
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["target"] == "canary-fig2"
    assert len(saved["rows"]) == 3 * 2 * len(cv.settings("smoke")["epsilons"])
    for row in saved["rows"]:
        assert row["p"] <= row["epsilon"] <= row["cantelli_bound"] + 1e-6
        assert row["true_value"] > 0 and row["kappa2_value"] > 0 and row["kappa2_gradient"] > 0
    assert (tmp_path / saved["figures"][0]).read_bytes()[:4] == b"\x89PNG"
    slopes = saved["slopes"]
    for key in ("value", "gradient_mc", "gradient_gae"):
        assert abs(slopes["cantelli"][key]) < 0.25, (key, slopes)
        for sur in ("indicator", "cvar"):
            assert slopes[sur][key] < (-0.5 if key == "value" else -0.15), (sur, key, slopes)
            assert slopes[sur][key] < slopes["cantelli"][key] - 0.1, (sur, key, slopes)
