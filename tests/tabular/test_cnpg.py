"""C-NPG on tabular discounted CMDPs (saferl.tabular.cnpg) and the ctrpo-fig2 reproduce target.

Checks: exact gradients vs finite differences and the policy gradient theorem; the occupancy vs power
iteration and Monte Carlo; the Gramian of eq. 79 vs the Hessian of the mirror function of eq. 9;
the LP optimum vs brute force; C-NPG stays safe and approaches the LP value while Kakade NPG crosses.
"""

import numpy as np
import pytest

from saferl import reproduce
from saferl.reproduce import ctrpo
from saferl.tabular import cnpg as C


def random_cmdp(seed, S=3, A=2, m=2, b=None, gamma=0.8):
    """Random CMDP; by default b = the uniform policy's cost values (feasible, and usually binding)."""
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(S), size=(S, A))
    r = rng.uniform(size=(S, A))
    c = rng.uniform(size=(m, S, A))
    mu = rng.dirichlet(np.ones(S))
    if b is None:
        b = C.policy_values(C.make_cmdp(P, r, c, np.zeros(m), gamma, mu), np.full((S, A), 1.0 / A))[1]
    return C.make_cmdp(P, r, c, b, gamma, mu)


def softmax(theta):
    e = np.exp(theta - theta.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_gradients_match_finite_differences_and_policy_gradient_theorem():
    m = random_cmdp(0)
    theta = np.random.default_rng(1).normal(size=m.r.shape)
    g_r, J_c = C.value_gradients(m, theta)
    # central differences of the independent numpy evaluation
    h = 1e-6
    E = h * np.eye(theta.size).reshape((theta.size,) + theta.shape)
    (rp, cp), (rm, cm) = C.policy_values(m, softmax(theta + E)), C.policy_values(m, softmax(theta - E))
    np.testing.assert_allclose(g_r, ((rp - rm) / (2 * h)).reshape(theta.shape), atol=1e-8)
    np.testing.assert_allclose(J_c, ((cp - cm) / (2 * h)).T.reshape(J_c.shape), atol=1e-8)
    np.testing.assert_allclose(C.policy_gradient_theorem(m, theta), g_r, atol=1e-12)
    for i in range(len(m.b)):
        np.testing.assert_allclose(C.policy_gradient_theorem(m, theta, m.c[i]), J_c[i], atol=1e-12)


def test_occupancy_matches_power_iteration_and_monte_carlo():
    m = random_cmdp(2)
    theta = np.random.default_rng(3).normal(size=m.r.shape)
    pi, d = C.policy(theta), C.occupancy(m, theta)
    assert np.isclose(d.sum(), 1.0)
    # power iteration of eq. 3: (1 - gamma) sum_t gamma^t P(s_t = s) pi(a|s)
    P_pi = np.einsum("sa,sat->st", pi, m.P)
    rho, acc = m.mu.copy(), np.zeros(m.mu.shape)
    for t in range(400):
        acc += (1 - m.gamma) * m.gamma**t * rho
        rho = rho @ P_pi
    np.testing.assert_allclose(d, acc[:, None] * pi, atol=1e-12)
    # Monte Carlo: d is the law of (s_T, a_T) with T ~ Geometric, P(T = t) = (1 - gamma) gamma^t
    rng = np.random.default_rng(4)
    n = 40_000
    S, A = m.r.shape
    s = rng.choice(S, size=n, p=m.mu)
    a = (rng.random(n)[:, None] > np.cumsum(pi[s], -1)).sum(-1)
    alive = rng.random(n) < m.gamma
    while alive.any():
        k = np.nonzero(alive)[0]
        s[k] = (rng.random(len(k))[:, None] > np.cumsum(m.P[s[k], a[k]], -1)).sum(-1)
        a[k] = (rng.random(len(k))[:, None] > np.cumsum(pi[s[k]], -1)).sum(-1)
        alive[k] = rng.random(len(k)) < m.gamma
    freq = np.zeros((S, A))
    np.add.at(freq, (s, a), 1.0 / n)
    assert (np.abs(freq - d) <= 4.5 * np.sqrt(d * (1 - d) / n) + 1e-3).all(), (freq, d)


@pytest.mark.parametrize("phi", C.PHIS)
def test_cnpg_gramian_is_the_gramian_of_the_safe_mirror_function(phi):
    """eq. 79 (G_K + beta phi'' grad V_c grad V_c^T) == d_theta^T hess Phi_C d_theta with Phi_C of eq. 9."""
    m = random_cmdp(5)
    m = m._replace(b=m.b + 0.05)
    theta = np.random.default_rng(6).normal(size=m.r.shape)
    assert (C.policy_values(m, softmax(theta))[1] < m.b).all()
    for beta in (0.0, 0.3):
        G = C.cnpg_gramian(m, theta, beta, phi)
        np.testing.assert_allclose(G, C.mirror_gramian(m, theta, beta, phi), atol=1e-10)
    # over-complete softmax: per-state constant shifts span the null space; the C-NPG step avoids it
    step = C.cnpg_direction(m, theta, 0.3, phi)
    np.testing.assert_allclose(step.sum(-1), 0.0, atol=1e-10)
    g_r = C.value_gradients(m, theta)[0].reshape(-1)
    np.testing.assert_allclose(step.reshape(-1), np.linalg.pinv(C.cnpg_gramian(m, theta, 0.3, phi)) @ g_r, atol=1e-9)


def test_lp_optimum_vs_brute_force():
    # constraint loose: a deterministic policy is optimal, the LP must find its value
    for seed in range(3):
        m = random_cmdp(10 + seed, b=np.array([10.0, 10.0]))
        assert np.isclose(C.lp_optimum(m)["value"], C.best_deterministic(m)["value"], atol=1e-9)
    # binding constraint: LP >= every safe deterministic policy, and its policy achieves the LP value
    for seed in range(3):
        m = random_cmdp(20 + seed)
        lp = C.lp_optimum(m)
        V_r, V_c = C.policy_values(m, lp["pi"])
        assert np.isclose(V_r, lp["value"], atol=1e-9) and (V_c <= m.b + 1e-9).all()
        assert lp["value"] >= C.best_deterministic(m)["value"] - 1e-12
    # the Figure 2 CMDP: mixed optimum on the constraint surface; compare with a dense policy grid
    m = C.figure2_cmdp()
    lp = C.lp_optimum(m)
    g = np.linspace(0.0, 1.0, 401)
    X, Y = np.meshgrid(g, g)
    V_r, V_c = C.policy_values(m, np.stack([np.stack([X, 1 - X], -1), np.stack([Y, 1 - Y], -1)], -2))
    grid_best = V_r[V_c[..., 0] <= m.b[0]].max()
    assert lp["value"] - 1e-3 < grid_best <= lp["value"] + 1e-12
    assert np.isclose(lp["cost_values"][0], m.b[0]) and lp["cost_duals"][0] > 0.1  # active constraint
    assert C.best_deterministic(m)["value"] < lp["value"] - 0.1  # the optimum is stochastic
    assert 0.05 < lp["pi"][0, 1] < 0.95


def test_cnpg_stays_safe_and_approaches_lp_value_while_npg_crosses():
    m = C.figure2_cmdp()
    v_star = C.lp_optimum(m)["value"]
    theta0 = ctrpo.safe_initialisations(m)
    assert theta0.shape == (10, 2, 2)
    beta, eta, phi = zip(*ctrpo.CONFIGS)  # the smoke target's batch: its compile is shared
    assert beta[:3] == (0.0, 1e-2, 1.0) and phi[:3] == ("log",) * 3 and phi[3:5] == ("xlogx",) * 2
    out = C.run_cnpg(m, theta0, beta, eta, 300, phi)
    V_r, V_c = out["V_r"], out["V_c"][..., 0]
    assert V_r.shape == (len(beta), 10, 301)
    assert (V_c[:, :, 0] < m.b[0]).all()
    # C-NPG (beta = 1e-2, 1): never crosses, and ends near V* (beta = 1 is slower: more conservative)
    assert (V_c[1:3] <= m.b[0]).all()
    gap = np.abs(V_r[1:3, :, -1] - v_star)
    assert gap[0].max() < 1e-3 and gap[1].max() < 2e-2, gap
    assert (gap[1] > gap[0]).all()
    # unconstrained Kakade NPG from the same safe starts crosses the surface (the barrier matters)
    assert (V_c[0].max(-1) > m.b[0] + 0.1).all()
    # and the barrier's form matters in discrete time: x log x with the same step crosses at beta = 1e-2
    assert V_c[3].max() > m.b[0] + 0.01


def test_smoke_target_writes_rows(tmp_path):
    assert "ctrpo-fig2" in reproduce.targets()
    res = reproduce.run("ctrpo-fig2", "smoke", tmp_path)
    keys = {"beta", "max constraint value", "final |V_r - V*| (max over inits)", "iterations", "all trajectories safe"}
    assert [row["beta"] for row in res["rows"]] == [1e-2, 1.0]
    for row in res["rows"]:
        assert keys <= set(row)
        assert row["max constraint value"] <= row["b"] and row["all trajectories safe"]
        assert row["final |V_r - V*| (max over inits)"] < 0.05
    assert res["reference_npg"]["max constraint value"] > res["reference_npg"]["b"]
    assert (tmp_path / res["figures"][0]).stat().st_size > 0
    assert (tmp_path / "results.json").exists()
