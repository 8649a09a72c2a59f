"""The CVaR baselines of the Canary paper (Sec. 6.1): CPPO (Ying et al. 2022) and CVaR-CPO (Zhang et al.
2025) with its quantile cost critic.

* the quantile-Huber loss (QR-DQN, kappa = 1) against a hand computation;
* a quantile critic fitted on samples of known distributions recovers their quantiles;
* the remaining-cost targets of the quantile critic on a scripted batch;
* CPPO's eta step moves eta to the empirical (1 - eps)-quantile;
* on ToyReach with P(C >= rho) <= eps that PPO violates, CPPO and CVaR-CPO bring the violation
  rate and their CVaR estimate down.
"""

from __future__ import annotations

from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saferl.algos.cppo import eta_step
from saferl.algos.cvar_cpo import remaining_cost_targets
from saferl.core import quantile
from saferl.training import config
from saferl.training.trainer import Trainer


def test_quantile_huber_loss_by_hand():
    # K = 2 quantiles at tau = 1/4, 3/4; sample 0: theta = (0, 1), target atoms (0.5, 3)
    #   tau 1/4: u = 0.5, 3   -> 1/4 * (0.125 + 2.5) / 2             = 0.328125
    #   tau 3/4: u = -0.5, 2  -> (1/4 * 0.125 + 3/4 * 1.5) / 2         = 0.578125
    pred = jnp.asarray([[0.0, 1.0], [5.0, 5.0]])
    targets = jnp.asarray([[0.5, 3.0], [0.0, 0.0]])
    np.testing.assert_allclose(np.asarray(quantile.midpoints(2)), [0.25, 0.75])
    mask = jnp.asarray([True, False])
    np.testing.assert_allclose(float(quantile.quantile_huber_loss(pred, targets, mask)), 0.90625, rtol=1e-6)
    # sample 1 alone: u = -5 for both quantiles: (3/4 + 1/4) * (5 - 0.5)
    np.testing.assert_allclose(float(quantile.quantile_huber_loss(pred[1:], targets[1:])), 4.5, rtol=1e-6)
    np.testing.assert_allclose(float(quantile.quantile_huber_loss(pred, targets)), (0.90625 + 4.5) / 2, rtol=1e-6)


def test_mixture_var_cvar_pools_the_atoms():
    atoms = jnp.asarray([[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [100.0, 100.0, 100.0, 100.0]])
    var, cvar = quantile.mixture_var_cvar(atoms, jnp.asarray([True, True, False]), 0.25)
    assert float(var) == 5.0 and float(cvar) == pytest.approx(6.5)  # upper quarter of 0..7: {6, 7}
    var, _ = quantile.mixture_var_cvar(atoms, jnp.zeros(3, bool), 0.25)
    assert np.isnan(float(var))


def _huber_quantile(z, tau, kappa=1.0):
    """argmin_theta mean_i rho^kappa_tau(z_i - theta) on a fine grid (numpy)."""
    grid = np.linspace(z.min(), z.max(), 4001)
    u = z[None, :] - grid[:, None]
    huber = np.where(np.abs(u) <= kappa, 0.5 * u**2, kappa * (np.abs(u) - 0.5 * kappa))
    return grid[np.argmin(np.mean(np.abs(tau - (u < 0)) * huber, axis=1))]


def test_quantile_critic_recovers_known_quantiles():
    """Context -1: Z ~ U(0, 20); context +1: Z ~ 30 + Exp(scale 5); K = 8 quantiles at the
    midpoints, outputs scaled by 20, kappa = 1.  The fit reaches the minimisers of the
    quantile-Huber loss, which sit within kappa |1 - 2 tau| / 2 of the quantiles (towards the
    median) where the density is flat, so within 0.5 of the true quantiles here."""
    rng = np.random.default_rng(0)
    n, k = 2048, 8
    ctx = rng.choice([-1.0, 1.0], n)
    z = np.where(ctx < 0, rng.uniform(0, 20, n), 30 + rng.exponential(5.0, n))
    critic = quantile.QuantileCritic(1, k, (32, 32))
    opt = quantile.optimizer(3e-3)
    params = critic.init(jax.random.PRNGKey(0))
    params, _, loss = jax.jit(
        lambda p, s, key: quantile.fit(
            critic,
            p,
            s,
            opt,
            jnp.asarray(ctx[:, None], jnp.float32),
            jnp.asarray(z[:, None], jnp.float32),
            None,
            key,
            epochs=150,
            minibatches=2,
            kappa=1.0,
            scale=20.0,
        )
    )(params, opt.init(params), jax.random.PRNGKey(1))
    taus = np.asarray(quantile.midpoints(k))
    pred = 20.0 * np.asarray(critic.apply(params, jnp.asarray([[-1.0], [1.0]])))
    for row, c in ((0, -1.0), (1, 1.0)):
        sample = z[ctx == c]
        np.testing.assert_allclose(pred[row], [_huber_quantile(sample, t) for t in taus], atol=0.25)
    np.testing.assert_allclose(pred[0], 20 * taus, atol=0.8)  # U(0, 20)
    np.testing.assert_allclose(pred[1], 30 - 5 * np.log(1 - taus), atol=1.5)  # 30 + Exp(5), sampling noise in the tail
    assert np.isfinite(float(loss))


def test_remaining_cost_targets_on_a_scripted_batch():
    """T = 4 steps, N = 2 envs, gamma_c = 0.5.  Env 0: an episode already running (t = 3, y = 1)
    that ends after step 1, then a new one cut by the rollout; env 1: one episode from its start."""
    g = 0.5
    c = np.array([[1.0, 2.0], [4.0, 0.0], [1.0, 4.0], [2.0, 8.0]])  # (T, N) raw costs
    t_ep = np.array([[3, 0], [4, 1], [0, 2], [1, 3]])
    done = np.array([[False, False], [True, False], [False, False], [False, False]])
    y = np.array([1.0, 0.0])  # cost accumulated before the batch
    running = np.zeros((4, 2))
    for t in range(4):
        y = np.where(t_ep[t] == 0, 0.0, y) + g ** t_ep[t] * c[t]
        running[t] = y
    batch = SimpleNamespace(
        rollout_shape=(4, 2),
        timestep=jnp.asarray(t_ep.reshape(8)),
        episode_discounted_cost=jnp.asarray(running.reshape(8, 1), jnp.float32),
        episode_done=jnp.asarray(done.reshape(8)),
    )
    bootstrap = jnp.asarray([[10.0, 20.0], [30.0, 40.0]])  # quantiles at x_{T-1} per env, K = 2
    atoms, mask = remaining_cost_targets(batch, bootstrap, g)
    atoms = np.asarray(atoms).reshape(4, 2, 2)
    np.testing.assert_allclose(atoms[1, 0], [4.0, 4.0], rtol=1e-5)  # last step of the first episode
    np.testing.assert_allclose(atoms[2, 0], 1.0 + g * np.array([10.0, 20.0]), rtol=1e-5)  # bootstrapped
    np.testing.assert_allclose(atoms[0, 1], 2 + g * 0 + g**2 * 4 + g * np.array([30.0, 40.0]) * g**2, rtol=1e-5)
    np.testing.assert_allclose(atoms[2, 1], 4 + g * np.array([30.0, 40.0]), rtol=1e-5)
    # env 0 step 0 (episode began in an earlier batch) and both x_{T-1} have no target
    np.testing.assert_array_equal(
        np.asarray(mask).reshape(4, 2), [[False, True], [True, True], [True, True], [False, False]]
    )


def test_cppo_eta_step_moves_eta_to_the_quantile():
    rng = np.random.default_rng(1)
    costs = jnp.asarray(rng.lognormal(2.0, 0.5, 400), jnp.float32)
    mask = jnp.ones(400, bool)
    eps = 0.1
    q = float(np.quantile(np.asarray(costs), 1 - eps, method="inverted_cdf"))
    step = jax.jit(lambda e: eta_step(e, costs, mask, eps, 0.01, 1.0)[0])
    run = jax.jit(lambda e: jax.lax.fori_loop(0, 5000, lambda i, x: eta_step(x, costs, mask, eps, 0.01, 1.0)[0], e))
    for start in (0.0, 2 * q):
        first = float(step(jnp.float32(start)))
        assert (first > start) if start < q else (first < start)  # towards the quantile
        eta = run(jnp.float32(start))
        # SGD on the RU objective settles within a few steps' size (0.01 up 0.09 per step) of the VaR
        assert abs(float(eta) - q) < 0.15, (float(eta), q)
    kept, _ = eta_step(jnp.float32(5.0), costs, jnp.zeros(400, bool), eps, 0.01, 1.0)
    assert float(kept) == 5.0


# --------------------------------------------------------------------------- learning on ToyReach


# ToyReach: reward x, cost 1 per step beyond x = 0.5, 50 steps; PPO runs to x = 1 (C ~ 45 >= rho)
RHO, EPS, ITERATIONS, ENVS = 15.0, 0.2, 60, 16
HPARAMS = {
    "ppo": {"minibatches": 4, "epochs": 5, "actor_lr": 1e-3, "critic_lr": 1e-3},
    # lambda from 0 (the default starts at 10): the test sees the multiplier grow to control the violation
    "cppo": {
        "minibatches": 4,
        "epochs": 5,
        "actor_lr": 1e-3,
        "critic_lr": 1e-3,
        "lagrange_lr": 0.1,
        "lagrange_init": 0.0,
    },
    "cvar_cpo": {"critic_minibatches": 4, "critic_epochs": 5, "target_kl": 0.02, "quantiles": 16, "quantile_lr": 1e-2},
}


def _train(algo):
    cfg = config.resolve(
        {
            "algo": algo,
            "env": "ToyReach",
            "seeds": 2,
            "num_envs": ENVS,
            "rollout_steps": 100,
            "total_steps": 100 * ENVS * ITERATIONS,
            "iterations_per_chunk": ITERATIONS,
            "constraint": {"type": "var", "rho": RHO, "epsilon": EPS, "gamma_c": 1.0},
            "hparams": HPARAMS[algo],
            "network": {"actor_hidden": [16, 16], "critic_hidden": [16, 16]},
        }
    )
    trainer = Trainer(cfg)
    runners = trainer.init_all()
    _, metrics = trainer.compile_chunk(runners)(runners)
    return jax.device_get(metrics)


@pytest.fixture(scope="module")
def toy_runs():
    return {algo: _train(algo) for algo in HPARAMS}


def _tail(metrics, key, n=10):  # per seed, the mean over the last n iterations
    return np.nanmean(np.asarray(metrics[key])[:, -n:], axis=1)


# a learning run of four algorithms (~40 s on 2 cores): make test-slow; the CVaR terms' mathematics is tested above
@pytest.mark.slow
def test_cvar_baselines_bring_the_violation_rate_down_where_ppo_violates(toy_runs):
    ppo_cost = _tail(toy_runs["ppo"], "episode_cost")
    assert np.all(_tail(toy_runs["ppo"], "violation_probability") > 0.9) and np.all(ppo_cost > 2 * RHO)
    # CPPO: the multiplier grows until the violation rate is (well) under control
    cppo = toy_runs["cppo"]
    assert np.all(_tail(cppo, "violation_probability") < 0.3), _tail(cppo, "violation_probability")
    assert np.all(_tail(cppo, "cvar", 5) < np.nanmax(np.asarray(cppo["cvar"]), axis=1))  # RU bound came down
    assert np.all(np.asarray(cppo["lagrange_multiplier"]) >= 0.0) and np.all(_tail(cppo, "lagrange_multiplier") > 0.5)
    # CVaR-CPO hovers at its constraint (it overshoots both ways, Canary Sec. 6.3): a fraction of PPO's
    # cost and violation rate, and a CVaR estimate (quantile critic) below 2 rho -- PPO's CVaR >= E[C] > 2 rho
    cvar_cpo = toy_runs["cvar_cpo"]
    assert np.mean(_tail(cvar_cpo, "episode_cost")) < 0.6 * np.mean(ppo_cost)
    assert np.mean(_tail(cvar_cpo, "violation_probability")) < 0.75
    assert np.mean(_tail(cvar_cpo, "cvar")) < 2 * RHO
    assert np.all(np.isfinite(np.asarray(cvar_cpo["quantile_loss"])))
