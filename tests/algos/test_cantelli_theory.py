"""Canary's Prop. 4.1 (variance floor) and Theorem 4.2 (worst-case bound) as diagnostics.

Paper: "Canary: Value-at-Risk constraints via Cantelli's inequality", arXiv:2601.22993, Sec. 4.1, 4.4, App. A.

* the floor functions against Cantelli's bound (eq. 19) evaluated directly with numpy, by brute force over
  the mean and by scipy root finding, never against each other;
* eq. 33 against hand computations; its first ingredient (|mu - L_mu| <= K a, App. A.5) on exact tabular MDPs;
* the predicted change L_C(pi_{k+1}) - J_C(pi_k) (eq. 31 - eq. 28) against a hand computation;
* the metrics Canary and the other Cantelli VaR methods log, the start-up warning, the target's step table.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import optimize

from saferl.algos import base
from saferl.algos import cantelli_theory as theory
from saferl.analysis import diagnostics
from saferl.core import constraints, networks, risk
from saferl.core.rollout import Batch
from saferl.training import config as configlib
from saferl.training import run_directory


def _cantelli_tail(mu, variance, rho):
    """eq. 19: Cantelli's upper bound sigma^2 / (sigma^2 + (rho - mu)^2) on P(C >= rho), valid for mu < rho."""
    return variance / (variance + (rho - mu) ** 2)


# --------------------------------------------------------------------------- Prop. 4.1


def test_variance_floor_is_where_cantelli_can_certify_the_regime_at_some_mean():
    """Brute force: a variance is feasible iff Cantelli's bound is <= eps at some mean mu in [0, rho)."""
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(400):
        rho = rng.uniform(0.5, 200.0)
        eps = rng.uniform(0.005, 0.6)
        sd = rho * rng.uniform(0.0, 1.5)
        means = np.linspace(0.0, rho, 2001)[:-1]
        best = np.min(_cantelli_tail(means, sd**2, rho))
        if abs(best - eps) < 1e-4 * eps:  # float32 cannot settle the boundary
            continue
        expect = bool(best <= eps)
        assert bool(theory.floor_feasible(sd**2, rho, eps)) == expect, (rho, eps, sd)
        # the same statement in terms of mu and sigma: mu + sigma sqrt((1 - eps) / eps) <= rho for some mu >= 0
        assert bool(sd <= theory.sd_floor(rho, eps)) == bool(np.any(means + sd * np.sqrt((1 - eps) / eps) <= rho))
        checked += 1
    assert checked > 350


def test_variance_floor_and_sd_floor_values():
    # rho = 15, eps = 0.05 (Fig. 5): eps rho^2 / (1 - eps) = 11.25 / 0.95
    np.testing.assert_allclose(float(theory.variance_floor(15.0, 0.05)), 11.842105263, rtol=1e-6)
    np.testing.assert_allclose(float(theory.sd_floor(15.0, 0.05)), 3.441236008, rtol=1e-6)
    # rho = 100, eps = 0.05 (Table 1, PointGoal): SD <= 22.94
    np.testing.assert_allclose(float(theory.sd_floor(100.0, 0.05)), 22.941573387, rtol=1e-6)


def test_largest_variance_at_the_current_mean_by_root_finding():
    """The largest sigma^2 with eq. 19's bound <= eps at mean mu, found by scipy's brentq on the bound itself."""
    rng = np.random.default_rng(1)
    for _ in range(100):
        rho = rng.uniform(1.0, 150.0)
        eps = rng.uniform(0.01, 0.5)
        mu = rng.uniform(0.0, 0.999 * rho)
        root = optimize.brentq(lambda v: _cantelli_tail(mu, v, rho) - eps, 0.0, 1e3 * rho**2, xtol=1e-12, rtol=1e-12)
        np.testing.assert_allclose(float(theory.max_variance_at_mean(mu, rho, eps)), root, rtol=1e-4)
    # mu >= rho: eq. 19 is void (Sec. 4.5), no variance is certified
    assert float(theory.max_variance_at_mean(20.0, 15.0, 0.05)) == 0.0
    assert float(theory.max_variance_at_mean(15.0, 15.0, 0.05)) == 0.0


def test_floor_metrics_by_hand():
    rho, eps, mu = 15.0, 0.05, 4.0
    feasible = theory.floor_metrics(jnp.float32(mu), jnp.float32(mu**2 + 10.0), rho, eps)
    assert set(feasible) == {
        "cantelli_variance",
        "cantelli_variance_floor",
        "cantelli_variance_max",
        "cantelli_feasible",
    }
    np.testing.assert_allclose(float(feasible["cantelli_variance"]), 10.0, rtol=1e-5)
    np.testing.assert_allclose(float(feasible["cantelli_variance_floor"]), 225 * 0.05 / 0.95, rtol=1e-6)
    np.testing.assert_allclose(float(feasible["cantelli_variance_max"]), 121.0 / 19.0, rtol=1e-6)
    assert float(feasible["cantelli_feasible"]) == 1.0
    infeasible = theory.floor_metrics(jnp.float32(mu), jnp.float32(mu**2 + 13.0), rho, eps)
    assert float(infeasible["cantelli_feasible"]) == 0.0


# --------------------------------------------------------------------------- Theorem 4.2


def test_theorem42_bound_by_hand():
    # delta 0.01, gamma_c 0.9, rho 15, eps 0.05 (beta 19), a = 2, a~ = 30, mu_k = 4:
    # K = sqrt(0.02) 0.9 / 0.01 = 12.727922; 19 * 30 + 2 * 15 * 2 + (2 * 2 / 0.05) (4 + 2 / 0.1) = 570 + 60 + 1920
    np.testing.assert_allclose(
        float(theory.theorem42_bound(2.0, 30.0, 4.0, 15.0, 0.05, 0.01, 0.9)), 12.727922061 * 2550.0, rtol=1e-5
    )
    # delta 0.02, gamma_c 0.5, rho 10, eps 0.2 (beta 4), a = 1, a~ = 4, mu_k = 3:
    # K = 0.2 * 0.5 / 0.25 = 0.4; 4 * 4 + 2 * 10 * 1 + (2 / 0.2) (3 + 1 / 0.5) = 16 + 20 + 50
    np.testing.assert_allclose(
        float(theory.theorem42_bound(1.0, 4.0, 3.0, 10.0, 0.2, 0.02, 0.5)), 0.4 * 86.0, rtol=1e-5
    )
    # gamma_c = 1 (the paper's experiments): K is infinite, the bound void
    assert float(theory.theorem42_bound(1.0, 4.0, 3.0, 10.0, 0.2, 0.02, 1.0)) == math.inf
    assert float(theory.theorem42_bound(0.0, 0.0, 3.0, 10.0, 0.2, 0.02, 1.0)) == math.inf


def _tabular(rng, n_s=5, n_a=3):
    P = rng.dirichlet(np.ones(n_s), (n_s, n_a))
    cost = rng.uniform(0.0, 2.0, (n_s, n_a))
    start = rng.dirichlet(np.ones(n_s))
    return P, cost, start


def _policy_terms(P, cost, start, pi, gamma):
    P_pi = np.einsum("sa,sat->st", pi, P)
    V = np.linalg.solve(np.eye(len(start)) - gamma * P_pi, np.sum(pi * cost, 1))
    Q = cost + gamma * P @ V
    d = (1 - gamma) * np.linalg.solve((np.eye(len(start)) - gamma * P_pi).T, start)  # eq. 5
    return start @ V, Q - V[:, None], d


def test_the_bound_on_the_linearised_cost_return_holds_on_exact_tabular_mdps():
    """App. A.5's first ingredient, |mu(pi') - L_mu(pi')| <= K a with K = sqrt(2 delta) gamma_c / (1 - gamma_c)^2
    (eq. 9, the CPO bound), exactly.  K a is read off eq. 33, which is affine in rho with slope 2 K a."""
    rng = np.random.default_rng(2)
    ratios = []
    for trial in range(60):
        gamma = [0.5, 0.9, 0.97][trial % 3]
        P, cost, start = _tabular(rng)
        logits = rng.normal(size=cost.shape)
        pi_k = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
        new = logits + rng.uniform(0.05, 1.0) * rng.normal(size=cost.shape)
        pi = np.exp(new) / np.exp(new).sum(1, keepdims=True)
        mu_k, adv, d_k = _policy_terms(P, cost, start, pi_k, gamma)
        mu_new = _policy_terms(P, cost, start, pi, gamma)[0]
        linear = mu_k + d_k @ np.sum(pi * adv, 1) / (1 - gamma)  # eq. 9
        delta = d_k @ np.sum(pi * np.log(pi / pi_k), 1)  # mean KL(pi' || pi_k) over d^c_k
        alpha = np.max(np.abs(np.sum(pi * adv, 1)))
        bound = lambda rho: float(theory.theorem42_bound(alpha, 0.0, 0.0, rho, 0.99, delta, gamma))  # noqa: E731
        k_alpha = bound(0.5) - bound(0.0)
        assert abs(mu_new - linear) <= k_alpha * (1 + 1e-3) + 1e-7, trial
        ratios.append(abs(mu_new - linear) / k_alpha)
    assert max(ratios) > 1e-3  # the check is not vacuous


def test_theorem42_metrics_by_hand():
    rng = np.random.default_rng(3)
    n = 40
    ratio = rng.uniform(0.8, 1.2, n)
    adv_c, adv_tilde = rng.normal(1.0, 2.0, n), rng.normal(5.0, 20.0, n)
    timestep = np.arange(n) % 10
    length, mu, mu2, rho, eps, delta, gamma_c = 10.0, 4.0, 26.0, 15.0, 0.05, 0.01, 0.9
    out = theory.theorem42_metrics(
        jnp.asarray(ratio, jnp.float32),
        jnp.asarray(adv_c, jnp.float32),
        jnp.asarray(adv_tilde, jnp.float32),
        jnp.asarray(timestep),
        length,
        mu,
        mu2,
        rho,
        eps,
        delta,
        gamma_c,
    )
    a_c, a_t = adv_c - adv_c.mean(), adv_tilde - adv_tilde.mean()
    w = gamma_c**timestep
    z = length * np.mean(w * (ratio - 1) * a_c)
    z_t = length * np.mean(w * (ratio - 1) * a_t)
    beta = 1 / eps - 1
    l_c = beta * (mu2 + z_t) + 2 * rho * (mu + z) - (mu**2 / eps + rho**2 + (2 * mu * z + z**2) / eps)  # eq. 30-31
    j_c = beta * (mu2 - mu**2) - (rho - mu) ** 2  # eq. 20
    np.testing.assert_allclose(float(out["theorem42_predicted_change"]), l_c - j_c, rtol=1e-4, atol=1e-4)
    alpha_c, alpha_t = np.max(np.abs((ratio - 1) * a_c)), np.max(np.abs((ratio - 1) * a_t))
    np.testing.assert_allclose(float(out["theorem42_alpha_c"]), alpha_c, rtol=1e-5)
    np.testing.assert_allclose(float(out["theorem42_alpha_tilde"]), alpha_t, rtol=1e-5)
    k = np.sqrt(2 * delta) * gamma_c / (1 - gamma_c) ** 2
    hand = k * (beta * alpha_t + 2 * rho * alpha_c + 2 * alpha_c / eps * (mu + alpha_c / (1 - gamma_c)))
    np.testing.assert_allclose(float(out["theorem42_bound"]), hand, rtol=1e-4)
    a_max, t_max = np.max(np.abs(a_c)), np.max(np.abs(a_t))
    hand_max = k * (beta * t_max + 2 * rho * a_max + 2 * a_max / eps * (mu + a_max / (1 - gamma_c)))
    np.testing.assert_allclose(float(out["theorem42_bound_max_adv"]), hand_max, rtol=1e-4)


# --------------------------------------------------------------------------- the metrics the algorithms log


def _var_algo(name, surrogate="cantelli"):
    cls = base.get(name)
    actor = networks.GaussianActor(2, 1, (8,))
    critics = networks.Critics(2, 1 + len(risk.CHANNELS[surrogate]), (8,))
    return cls(cls.resolve_hparams({}), actor, critics, "var", surrogate)


def _var_batch(algo, agent, mu, mu2, n=64):
    key = jax.random.PRNGKey(0)
    obs = jax.random.normal(key, (n, 2))
    dist = algo.actor.distribution(agent.actor_params, obs)
    action = algo.actor.sample(dist, key)
    channels = algo.critics.num_channels
    adv = jax.random.normal(jax.random.PRNGKey(1), (n, channels)) * jnp.asarray([1.0] + [2.0] * (channels - 1))
    zeros = jnp.zeros((n,))
    episodes = {
        "discounted_cost": jnp.array([mu]),
        "discounted_cost_sq": jnp.array([mu2]),
        "length": jnp.float32(16),
        "violation": jnp.float32(0.0),
        "excess": jnp.float32(0.0),
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
        timestep=jnp.arange(n) % 16,
        episodes=episodes,
    )


def _constraint(rho, eps, gamma_c, surrogate="cantelli"):
    f = jnp.float32
    return constraints.Constraint(limit=f(rho), epsilon=f(eps), gamma_c=f(gamma_c), kind="var", surrogate=surrogate)


@pytest.mark.parametrize("name", ["canary", "ppo_lag"])
def test_cantelli_var_methods_log_the_floor_metrics(name):
    algo = _var_algo(name)
    agent = algo.init(jax.random.PRNGKey(0), _constraint(15.0, 0.05, 1.0))
    _, _, metrics = algo.prepare_batch(agent, _var_batch(algo, agent, 4.0, 29.0))
    np.testing.assert_allclose(float(metrics["cantelli_variance"]), 13.0, rtol=1e-5)
    np.testing.assert_allclose(float(metrics["cantelli_variance_floor"]), 225 * 0.05 / 0.95, rtol=1e-6)
    np.testing.assert_allclose(float(metrics["cantelli_variance_max"]), 121.0 / 19.0, rtol=1e-6)
    assert float(metrics["cantelli_feasible"]) == 0.0


def test_other_surrogates_log_no_floor_metrics():
    algo = _var_algo("cpo_var", "indicator")
    agent = algo.init(jax.random.PRNGKey(0), _constraint(15.0, 0.05, 1.0, "indicator"))
    _, _, metrics = algo.prepare_batch(agent, _var_batch(algo, agent, 4.0, 29.0))
    assert "cantelli_feasible" not in metrics


def test_canary_update_logs_theorem42_terms_of_the_step_it_took():
    algo = _var_algo("canary")
    rho, eps, gamma_c = 15.0, 0.05, 0.9
    agent = algo.init(jax.random.PRNGKey(0), _constraint(rho, eps, gamma_c))
    batch = _var_batch(algo, agent, 4.0, 20.0)
    new_agent, metrics = jax.jit(algo.update)(agent, batch, jax.random.PRNGKey(2))
    assert float(metrics["accepted"]) == 1.0
    dist = algo.actor.distribution(new_agent.actor_params, batch.obs)
    ratio = jnp.exp(algo.actor.log_prob(dist, batch.action) - batch.log_prob)
    assert float(jnp.max(jnp.abs(ratio - 1.0))) > 1e-3  # the policy moved
    expected = theory.theorem42_metrics(
        ratio,
        batch.advantages[:, 1],
        batch.advantages[:, 2],
        batch.timestep,
        16.0,
        4.0,
        20.0,
        rho,
        eps,
        algo.hp["target_kl"],
        gamma_c,
    )
    for key, value in expected.items():
        np.testing.assert_allclose(float(metrics[key]), float(value), rtol=1e-4, atol=1e-5, err_msg=key)
    assert 0.0 < float(metrics["theorem42_bound"]) <= float(metrics["theorem42_bound_max_adv"]) < math.inf


# --------------------------------------------------------------------------- the start-up warning


def _run_dir(tmp_path, feasible_tail, constraint=None, with_metrics=True, iterations=20, algo="canary"):
    cfg = configlib.resolve(
        {
            "algo": algo,
            "env": "IcyLake",
            "seeds": 2,
            "constraint": constraint or {"type": "var", "rho": 15.0, "epsilon": 0.05},
        }
    )
    run_dir = tmp_path / "run"
    run_directory.write_config(run_dir, cfg)
    rows = []
    for it in range(1, iterations + 1):
        for seed in (0, 1):
            row = {"iteration": it, "env_steps": it * 2048, "seed": seed, "episode_discounted_cost": 6.0}
            if with_metrics:
                tail = it > iterations - 2
                ok = feasible_tail if tail else not feasible_tail
                row.update(cantelli_feasible=float(ok), cantelli_variance=9.0 if ok else 16.0)
            rows.append(row)
    run_directory.write_progress(run_dir, rows)
    return run_dir


def test_variance_floor_warning_reads_the_last_iterations(tmp_path, capsys):
    run_dir = _run_dir(tmp_path, feasible_tail=False)
    warning = diagnostics.variance_floor_warning(run_dir)
    assert warning is not None and "\n" not in warning
    for text in ("rho = 15", "epsilon = 0.05", "mean 6", "SD 4", "3.441", "last 2 iteration"):
        assert text in warning, text
    diagnostics.print_resume_warnings(run_dir)  # the resume hook of the run drivers
    assert capsys.readouterr().err.strip() == warning
    # infeasible early on, feasible over the last 10%: nothing to say
    assert diagnostics.variance_floor_warning(_run_dir(tmp_path / "b", feasible_tail=True)) is None


def test_variance_floor_warning_is_silent_without_its_statistics(tmp_path, capsys):
    assert diagnostics.variance_floor_warning(tmp_path / "missing") is None
    assert diagnostics.variance_floor_warning(_run_dir(tmp_path / "a", False, with_metrics=False)) is None
    cvar = {"type": "var", "rho": 15.0, "epsilon": 0.05, "surrogate": "cvar"}
    assert diagnostics.variance_floor_warning(_run_dir(tmp_path / "b", False, constraint=cvar, algo="cpo")) is None
    expected = _run_dir(tmp_path / "c", False, constraint={"type": "expected", "limit": 3.0}, algo="cpo")
    assert diagnostics.variance_floor_warning(expected) is None
    diagnostics.print_resume_warnings(tmp_path / "missing")
    assert capsys.readouterr().err == ""


# --------------------------------------------------------------------------- the target's bookkeeping


def test_theorem42_step_table_pairs_step_k_with_iteration_k_plus_1():
    from saferl.reproduce.canary.theory import step_table, theorem42_checks

    values = {
        "cantelli_value": [0.0, 10.0, 30.0, 20.0],
        "theorem42_predicted_change": [5.0, 5.0, -4.0, 0.0],
        "theorem42_bound": [6.0, 14.0, 100.0, 1.0],
        "theorem42_bound_max_adv": [9.0, 90.0, 900.0, 9.0],
        "accepted": [1.0, 1.0, 0.0, 1.0],
        "episodes": [3.0, 3.0, 3.0, 3.0],
        "recovery": [0.0] * 4,
    }
    progress = [{"iteration": i + 1, "seed": 0, **{k: v[i] for k, v in values.items()}} for i in range(4)]
    table = step_table(progress, [0])
    np.testing.assert_allclose(table["measured"][0], [10.0, 20.0, np.nan])
    np.testing.assert_allclose(table["error"][0], [5.0, 15.0, np.nan])  # step 2 (not accepted) left out
    np.testing.assert_allclose(table["j_next"][0], [10.0, 30.0, np.nan])
    assert list(table["keep"][0]) == [True, True, False]
    rows = [
        {
            "accepted_steps": 2,
            "within_bound": 1,
            "literal_steps": 0,
            "literal_within": 0,
            "median_bound": 10.0,
            "max_error_over_bound": 15.0 / 14.0,
            "final_floor_feasible": 1.0,
        }
    ]
    checks = theorem42_checks(rows)
    assert checks["eq. 33 holds on every accepted step"] is False
    assert checks["fraction of accepted steps within eq. 33"] == 0.5
