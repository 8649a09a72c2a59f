"""Canary's mathematics (Canary paper Sec. 4, App. A) and the risk surrogates' plumbing.

* eq. 24: sum_t gamma_c^t c~_t = C(tau)^2 through the augmentation wrapper, and the indicator /
  CVaR channels summing to I(tau) and (C - eta)^+;
* eq. 20 = eq. 28; Cantelli's bound never below the empirical violation probability;
* eq. 30/31/37 on a bandit where everything is exact; the switch into and out of recovery;
* the per-episode cost surrogate equals the occupancy form for gamma_c < 1;
* the sample estimators (quantile, CVaR, indicator) against numpy.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saferl.algos import base
from saferl.algos.risk import episode_cost_weights
from saferl.core import constraints, networks, risk
from saferl.core.rollout import Batch
from saferl.envs.base import Box, Environment
from saferl.envs.risk import RiskAugmentation
from saferl.foundation import struct
from saferl.training import config

# --------------------------------------------------------------------------- a scripted-cost env


@struct.dataclass
class ScriptParams:
    costs: jax.Array  # (T,)


class ScriptedCost(Environment):
    """Cost c_t = params.costs[t]; truncated after len(costs) steps."""

    def default_params(self):
        return ScriptParams(jnp.zeros(5))

    def reset(self, key, params):
        return jnp.zeros((), jnp.int32), jnp.zeros((1,), jnp.float32)

    def step(self, state, action, params):
        cost = params.costs[state]
        t = state + 1
        return t, t[None].astype(jnp.float32), 0.0, cost, jnp.asarray(False), t >= params.costs.shape[0], {}

    def observation_space(self, params):
        return Box(-jnp.inf, jnp.inf, (1,))

    def action_space(self, params):
        return Box(-1.0, 1.0, (1,))


def _channel_sums(surrogate, costs, gamma_c, rho=1.0, eta=0.0):
    env = RiskAugmentation(ScriptedCost(), surrogate, gamma_c)
    params = env.lift_params(ScriptParams(jnp.asarray(costs, jnp.float32)), rho=rho, eta=eta)
    state, obs = env.reset(jax.random.PRNGKey(0), params)

    def body(state, t):
        state, obs, _, c, *_ = env.step(state, jnp.zeros(1), params)
        return state, (gamma_c**t) * c

    _, discounted = jax.lax.scan(body, state, jnp.arange(len(costs), dtype=jnp.float32))
    return np.asarray(discounted.sum(0))


def test_finite_horizon_augmentation_observes_time_over_the_time_limit():
    from saferl.envs.toy import ToyReach

    base = ToyReach()
    plain = RiskAugmentation(base, "cantelli", 1.0)
    timed = RiskAugmentation(base, "cantelli", 1.0, finite_horizon=True)
    params = timed.lift_params(base.default_params(), rho=10.0)
    assert timed.observation_space(params).shape[0] == plain.observation_space(params).shape[0] + 1
    state, obs = timed.reset(jax.random.PRNGKey(0), params)
    assert float(obs[-1]) == 0.0
    for t in range(1, 4):
        state, obs, *_ = timed.step(state, jnp.zeros(base.action_space(base.default_params()).shape), params)
        np.testing.assert_allclose(float(obs[-1]), t / base.default_params().max_steps, rtol=1e-6)
    with pytest.raises(config.ConfigError, match="finite_horizon must be true or false"):
        config.resolve({"algo": "canary", "env": "IcyLake", "constraint": {"finite_horizon": "yes"}})
    cfg = config.resolve({"algo": "canary", "env": "IcyLake", "constraint": {"finite_horizon": True}})
    assert cfg["constraint"]["finite_horizon"] is True
    assert config.resolve({"algo": "canary", "env": "IcyLake"})["constraint"]["finite_horizon"] is False


@pytest.mark.parametrize("gamma_c", [0.9, 1.0])
def test_augmented_cost_sums_to_the_squared_cost_return_eq_24(gamma_c):
    rng = np.random.default_rng(0)
    for _ in range(3):
        costs = rng.exponential(1.0, 20) * (rng.random(20) < 0.6)
        total = np.sum(gamma_c ** np.arange(20) * costs)
        sums = _channel_sums("cantelli", costs, gamma_c)
        np.testing.assert_allclose(sums[0], total, rtol=1e-5)
        np.testing.assert_allclose(sums[1], total**2, rtol=1e-4)


@pytest.mark.parametrize("gamma_c", [0.9, 1.0])
def test_indicator_and_cvar_channels_sum_to_their_episode_terms(gamma_c):
    rng = np.random.default_rng(1)
    costs = rng.random(25)
    total = np.sum(gamma_c ** np.arange(25) * costs)
    for rho in (0.5 * total, 2.0 * total):
        np.testing.assert_allclose(
            _channel_sums("indicator", costs, gamma_c, rho=rho)[0], float(total >= rho), atol=1e-5
        )
    for eta in (0.3 * total, 1.5 * total):
        np.testing.assert_allclose(
            _channel_sums("cvar", costs, gamma_c, eta=eta)[0], max(total - eta, 0.0), rtol=1e-4, atol=1e-5
        )


# --------------------------------------------------------------------------- eq. 20, 28 and the bound


def test_cantelli_value_eq_28_equals_eq_20():
    rng = np.random.default_rng(2)
    for _ in range(10):
        c = rng.gamma(2.0, rng.uniform(1, 20), 500)
        rho, eps = rng.uniform(10, 100), rng.uniform(0.01, 0.5)
        mu, var = c.mean(), c.var()
        eq20 = (1 / eps - 1) * var - (rho - mu) ** 2
        eq28 = float(risk.cantelli_value(mu, np.mean(c**2), rho, eps))
        np.testing.assert_allclose(eq28, eq20, rtol=1e-6, atol=1e-6 * rho**2)
        np.testing.assert_allclose(
            float(risk.cantelli_estimate(jnp.asarray(c), jnp.ones(500), rho, eps)), eq20, rtol=1e-3, atol=1e-3 * rho**2
        )


def test_cantelli_bound_is_never_below_the_empirical_violation_probability():
    rng = np.random.default_rng(3)
    draws = [
        lambda n: rng.exponential(10, n),
        lambda n: rng.lognormal(2, 1, n),
        lambda n: 30.0 * (rng.random(n) < 0.1),
        lambda n: rng.poisson(5, n).astype(float),
        lambda n: rng.uniform(0, 40, n),
    ]
    for draw in draws:
        c = draw(2000)
        for rho in np.quantile(c, [0.3, 0.6, 0.9, 0.99]) + 1e-3:
            bound = float(risk.cantelli_bound(c.mean(), c.var(), rho))
            assert bound >= np.mean(c >= rho) - 1e-6
            # J_C <= 0 (eq. 20) implies the bound is <= eps (eq. 19)
            for eps in (0.05, 0.2, 0.5):
                if float(risk.cantelli_value(c.mean(), np.mean(c**2), rho, eps)) <= 0:
                    assert np.mean(c >= rho) <= bound <= eps + 1e-6


# --------------------------------------------------------------------------- eq. 30, 31, 37 on a bandit


def test_linearised_cantelli_constraint_on_an_exact_bandit():
    """One-step problem: action a has cost return with mean m_a and second moment s_a.  There
    L_mu is exact (mu = mu_k + Z), so eq. 30-31 reproduce J_C exactly, and the gradient of
    eq. 37 matches a finite difference of J_C."""
    m = jnp.array([2.0, 8.0, 15.0])
    s = m**2 + jnp.array([1.0, 9.0, 30.0])
    rho, eps = 20.0, 0.1

    def moments(theta):
        pi = jax.nn.softmax(theta)
        return pi @ m, pi @ s

    def j_c(theta):
        mu, mu2 = moments(theta)
        return risk.cantelli_value(mu, mu2, rho, eps)

    theta_k = jnp.array([0.3, -0.2, 0.1])
    mu_k, mu2_k = moments(theta_k)

    def l_c(theta):  # eq. 31 with Z = E_{a~pi}[A^C_k(a)], A^C_k(a) = m_a - mu_k (same for C~)
        pi = jax.nn.softmax(theta)
        return risk.cantelli_surrogate(mu_k, mu2_k, pi @ (m - mu_k), pi @ (s - mu2_k), rho, eps)

    np.testing.assert_allclose(float(l_c(theta_k)), float(j_c(theta_k)), rtol=1e-6)  # eq. 36
    for d in np.random.default_rng(4).normal(size=(3, 3)):
        theta = theta_k + 0.5 * jnp.asarray(d)
        np.testing.assert_allclose(float(l_c(theta)), float(j_c(theta)), rtol=1e-5)
    # eq. 37: b = beta grad L_mu~ + (2 rho - 2 mu / eps) grad L_mu
    w_c, w_tilde = risk.cantelli_gradient_weights(mu_k, rho, eps)
    b = w_tilde * jax.grad(lambda t: moments(t)[1])(theta_k) + w_c * jax.grad(lambda t: moments(t)[0])(theta_k)
    h = 1e-3
    fd = np.array([(float(j_c(theta_k + h * e)) - float(j_c(theta_k - h * e))) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(np.asarray(b), fd, rtol=2e-3, atol=1e-3)
    np.testing.assert_allclose(np.asarray(jax.grad(l_c)(theta_k)), fd, rtol=2e-3, atol=1e-3)


# --------------------------------------------------------------------------- recovery switch


def _risk_algo(name="canary", surrogate="cantelli"):
    cls = base.get(name)
    actor = networks.GaussianActor(2, 1, (8,))
    channels = len(risk.CHANNELS[surrogate])
    critics = networks.Critics(2, 1 + channels, (8,))
    return cls(cls.resolve_hparams({}), actor, critics, "var", surrogate)


def _risk_batch(algo, agent, mu, mu2, n=64, violation=0.0, excess=0.0):
    key = jax.random.PRNGKey(0)
    obs = jax.random.normal(key, (n, 2))
    dist = algo.actor.distribution(agent.actor_params, obs)
    action = algo.actor.sample(dist, key)
    channels = algo.critics.num_channels
    adv = jax.random.normal(jax.random.PRNGKey(1), (n, channels))
    zeros = jnp.zeros((n,))
    episodes = {
        "discounted_cost": jnp.array([mu]),
        "discounted_cost_sq": jnp.array([mu2]),
        "length": jnp.float32(50),
        "violation": jnp.float32(violation),
        "excess": jnp.float32(excess),
    }
    return Batch(
        obs=obs,
        action=action,
        log_prob=algo.actor.log_prob(dist, action),
        dist=dist,
        advantages=adv,
        returns=jnp.zeros((n, channels)),
        values=jnp.zeros((n, channels)),
        episode_done=zeros,
        episode_return=zeros,
        episode_cost=jnp.zeros((n, 1)),
        episode_discounted_cost=jnp.zeros((n, 1)),
        episode_length=zeros,
        timestep=jnp.arange(n) % 50,
        episodes=episodes,
    )


def _var_constraint(rho, eps, gamma_c=1.0, surrogate="cantelli"):
    f = jnp.float32
    return constraints.Constraint(limit=f(rho), epsilon=f(eps), gamma_c=f(gamma_c), kind="var", surrogate=surrogate)


def test_canary_switches_into_and_out_of_recovery():
    algo = _risk_algo()
    rho, eps = 20.0, 0.1
    agent = algo.init(jax.random.PRNGKey(0), _var_constraint(rho, eps))
    for mu, mu2, recovering in [(12.0, 160.0, False), (25.0, 700.0, True), (19.9, 400.0, False), (20.0, 400.0, True)]:
        batch = _risk_batch(algo, agent, mu, mu2)
        _, new, metrics = algo.prepare_batch(agent, batch)
        assert float(metrics["recovery"]) == float(recovering)
        value, limit = float(new.episodes["discounted_cost"][0]), float(new.episodes["constraint_limit"][0])
        assert limit == 1.0
        if recovering:  # eq. 34: L_mu <= rho, i.e. mu / rho <= 1, gradient of L_mu
            np.testing.assert_allclose(value, mu / rho, rtol=1e-6)
            np.testing.assert_allclose(
                np.asarray(new.advantages[:, 1]), np.asarray(batch.advantages[:, 1]) / rho, rtol=1e-5
            )
        else:  # eq. 36-37, divided by rho^2
            j_c = (1 / eps - 1) * (mu2 - mu**2) - (rho - mu) ** 2
            np.testing.assert_allclose(value, 1 + j_c / rho**2, rtol=1e-5)
            w_c, w_t = 2 * rho - 2 * mu / eps, 1 / eps - 1
            expected = (w_c * batch.advantages[:, 1] + w_t * batch.advantages[:, 2]) / rho**2
            np.testing.assert_allclose(np.asarray(new.advantages[:, 1]), np.asarray(expected), rtol=1e-4, atol=1e-6)
        assert new.advantages.shape == (64, 2)
        # the CPO step runs and, in recovery, does not increase the cost surrogate
        stepped, step_metrics = jax.jit(algo.policy_step)(agent, new)
        assert np.isfinite(float(step_metrics["kl"]))


def test_indicator_and_cvar_constraint_terms():
    rho, eps = 20.0, 0.1
    algo = _risk_algo("cpo_var", "indicator")
    agent = algo.init(jax.random.PRNGKey(0), _var_constraint(rho, eps, surrogate="indicator"))
    _, new, _ = algo.prepare_batch(agent, _risk_batch(algo, agent, 10.0, 150.0, violation=0.25))
    np.testing.assert_allclose(float(new.episodes["discounted_cost"][0]), 0.25)
    np.testing.assert_allclose(float(new.episodes["constraint_limit"][0]), eps, rtol=1e-6)
    algo = _risk_algo("cpo", "cvar")
    agent = algo.init(jax.random.PRNGKey(0), _var_constraint(rho, eps, surrogate="cvar"))
    eta = float(agent.extra["eta"])
    batch = _risk_batch(algo, agent, 10.0, 150.0, excess=1.5)
    _, new, metrics = algo.prepare_batch(agent, batch)
    np.testing.assert_allclose(float(new.episodes["discounted_cost"][0]), (eta + 1.5 / eps) / rho, rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(new.advantages[:, 1]), np.asarray(batch.advantages[:, 1]) / (eps * rho), rtol=1e-5
    )


# --------------------------------------------------------------------------- per-episode vs occupancy


def test_per_episode_cost_surrogate_equals_the_occupancy_form():
    """E_tau[sum_t gamma^t f(s_t, a_t)] (per episode, estimated as L * mean(gamma^t f) over the
    samples, L the mean episode length) equals 1/(1 - gamma) E_{s~d^c, a~pi}[f] (eq. 5, 9)."""
    rng = np.random.default_rng(5)
    n_s, n_a, gamma = 4, 2, 0.9
    P = rng.dirichlet(np.ones(n_s + 1), (n_s, n_a))  # last column: termination
    pi = rng.dirichlet(np.ones(n_a), n_s)
    f = rng.normal(size=(n_s, n_a))
    mu0 = np.array([1.0, 0, 0, 0])
    P_pi = np.einsum("sa,sat->st", pi, P[:, :, :n_s])
    d_c = (1 - gamma) * mu0 @ np.linalg.inv(np.eye(n_s) - gamma * P_pi)
    occupancy = (d_c @ np.sum(pi * f, 1)) / (1 - gamma)
    timesteps, values = [], []
    for _ in range(4000):
        s, t = 0, 0
        while s < n_s:
            a = rng.choice(n_a, p=pi[s])
            timesteps.append(t), values.append(f[s, a])
            s, t = rng.choice(n_s + 1, p=P[s, a]), t + 1
    timesteps, values = np.array(timesteps), np.array(values)
    mean_length = len(values) / 4000
    weights = np.asarray(episode_cost_weights(jnp.asarray(timesteps), gamma))
    per_episode = mean_length * np.mean(weights * values)
    se = np.std(np.bincount(np.cumsum(timesteps == 0) - 1, weights * values)) / np.sqrt(4000)
    assert abs(per_episode - occupancy) < 4 * se + 1e-3


# --------------------------------------------------------------------------- estimators vs numpy


def test_sample_estimators_against_numpy():
    rng = np.random.default_rng(6)
    x = rng.lognormal(1, 1, 257)
    mask = rng.random(257) < 0.7
    xm = x[mask]
    for q in (0.05, 0.5, 0.9, 0.95, 0.99):
        np.testing.assert_allclose(
            float(risk.masked_quantile(jnp.asarray(x), jnp.asarray(mask), q)),
            np.quantile(xm, q, method="inverted_cdf"),
            rtol=1e-6,
        )
    for eps in (0.05, 0.2):
        eta = np.quantile(xm, 1 - eps, method="inverted_cdf")
        expected = eta + np.mean(np.maximum(xm - eta, 0)) / eps
        np.testing.assert_allclose(
            float(risk.cvar_estimate(jnp.asarray(x), jnp.asarray(mask), eps)), expected, rtol=1e-5
        )
        # with n eps an integer the RU estimate is the mean of the worst n eps samples
    y = np.arange(100.0)
    np.testing.assert_allclose(
        float(risk.cvar_estimate(jnp.asarray(y), jnp.ones(100, bool), 0.1)), np.mean(y[90:]), rtol=1e-6
    )
    np.testing.assert_allclose(
        float(risk.violation_rate(jnp.asarray(x), jnp.asarray(mask), 5.0)), np.mean(xm >= 5.0), rtol=1e-6
    )


# --------------------------------------------------------------------------- learning (IcyLake)


def _train_tail(algo, seeds=2, steps=150_000):
    """Seed-mean of the first three iterations' return (episode-weighted: 384 steps, past the 200-step time
    limit, so that truncated episodes count, not only the quick successes) and of the last third's return,
    cost and violation rate."""
    from saferl.training.config import resolve
    from saferl.training.trainer import Trainer

    user = {
        "algo": algo,
        "env": "IcyLake",
        "total_steps": steps,
        "seeds": seeds,
        "iterations_per_chunk": 15,
        "network": {"actor_hidden": [64, 64], "critic_hidden": [64, 64], "value_normalization": True},
        "constraint": {"type": "var", "rho": 15.0, "epsilon": 0.05},
    }
    trainer = Trainer(resolve(user))
    runners = trainer.init_all()
    chunk = trainer.compile_chunk(runners)
    history = []
    for _ in range(trainer.num_chunks):
        runners, metrics = chunk(runners)
        history.append(jax.tree.map(np.asarray, metrics))
    metrics = jax.tree.map(lambda *xs: np.concatenate(xs, axis=1), *history)  # (seeds, iterations)
    tail = slice(2 * metrics["episode_return"].shape[1] // 3, None)
    done = metrics["episodes"][:, :3]
    first = float(np.nansum(metrics["episode_return"][:, :3] * done) / np.sum(done))
    return (
        first,
        float(np.mean(metrics["episode_return"][:, tail])),
        float(np.mean(metrics["episode_cost"][:, tail])),
        float(np.mean(metrics["violation_probability"][:, tail])),
    )


# a learning run (~40 s on 2 cores): make test-slow; the recovery switch and the constraint terms stay in make test
@pytest.mark.slow
def test_canary_learns_the_task_with_fewer_violations_than_ppo():
    """IcyLake (8x8, slippery), P(C >= 15) <= 0.05: the random initial policy breaches ~60% of the
    time.  In 150k steps Canary learns to reach the goal as reliably as PPO while spending less
    time on ice and breaching less often (measured with 200-step episodes: return 0.49 -> 0.98, P 0.016,
    cost 4.0, against PPO's 1.00, 0.11 and 8.2)."""
    first, ret, cost, violation = _train_tail("canary")
    _, ppo_ret, ppo_cost, ppo_violation = _train_tail("ppo")
    assert ret > 0.8 and ret > first + 0.4 and ppo_ret > 0.8
    assert violation < ppo_violation and cost < ppo_cost - 0.5
    assert violation < 0.15


@pytest.mark.parametrize("algo", ["ppo_lag", "trpo_lag", "ctrpo", "cpo", "pcpo"])
@pytest.mark.parametrize("surrogate,channels", [("cantelli", 2), ("indicator", 1), ("cvar", 1)])
def test_risk_surrogates_plug_into_the_constrained_algorithms(algo, surrogate, channels):
    from saferl.training.config import resolve
    from saferl.training.trainer import Trainer

    cfg = resolve({"algo": algo, "env": "ToyReach", "constraint": {"type": "var", "rho": 20, "surrogate": surrogate}})
    trainer = Trainer(cfg)
    assert trainer.critics.num_channels == 1 + channels
    assert trainer.actor.obs_dim == 2 + 2  # (x, t) + (y / rho, gamma_c^t)
    plain = Trainer(resolve({"algo": "ppo", "env": "ToyReach", "constraint": {"type": "var", "rho": 20}}))
    assert plain.actor.obs_dim == 2  # PPO ignores the constraint: no augmentation
