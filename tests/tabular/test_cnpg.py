"""C-NPG on tabular discounted CMDPs (saferl.tabular.cnpg) and the ctrpo-fig2 reproduce target.

Checks: exact gradients vs finite differences and the policy gradient theorem; the occupancy vs power
iteration and Monte Carlo; the Gramian of eq. 79 vs the Hessian of the mirror function of eq. 9;
the LP optimum vs brute force; C-NPG stays safe and approaches the LP value while Kakade NPG crosses.
Discrete time: instances where the constant step leaves the safe set (a hand-written one and
a seeded search), the safeguarded step's rule by hand, its safety, where it converges and where it
stalls; x log x at the documented step; all against an independently written scipy LP and its dual.
"""

import functools
import inspect

import numpy as np
import pytest

from saferl import reproduce
from saferl.reproduce.ctrpo import fig2 as ctrpo
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


# --------------------------------------------------------------------------- discrete time: the safeguarded step
#
# Module docstring, "Discrete time".  References here are written independently of saferl.tabular.cnpg:
# the LP of eq. 33 built entry by entry (and its dual), a policy evaluated with numpy, a softmax in numpy.

MARGIN = 1e-12  # the safeguard keeps every exact margin b - V_c above this (cnpg._MIN_MARGIN)


def scipy_lp(m):
    """max r^T d  s.t.  sum_a d(s,a) - gamma sum_{s',a'} P(s|s',a') d(s',a') = (1 - gamma) mu(s), c^T d <= b, d >= 0.

    (eq. 33; the flow constraints written entry by entry, dual simplex.)  Returns (V*, d*).
    """
    from scipy.optimize import linprog

    S, A = m.r.shape
    A_eq = np.zeros((S, S * A))
    for s in range(S):
        for a in range(A):
            A_eq[s, s * A + a] += 1.0
            for s_next in range(S):
                A_eq[s_next, s * A + a] -= m.gamma * m.P[s, a, s_next]
    res = linprog(
        -m.r.reshape(-1),
        A_ub=m.c.reshape(len(m.b), -1),
        b_ub=m.b,
        A_eq=A_eq,
        b_eq=(1 - m.gamma) * m.mu,
        bounds=(0, None),
        method="highs-ds",
    )
    assert res.status == 0, res.message
    return -res.fun, res.x.reshape(S, A)


def scipy_dual_lp(m):
    """min (1 - gamma) mu^T v + lam^T b
    s.t.  v(s) >= r(s,a) - lam^T c(.,s,a) + gamma sum_s' P(s'|s,a) v(s'), lam >= 0."""
    from scipy.optimize import linprog

    S, A = m.r.shape
    k = len(m.b)
    rows, rhs = [], []
    for s in range(S):
        for a in range(A):
            row = np.zeros(S + k)
            row[:S] = m.gamma * m.P[s, a]
            row[s] -= 1.0
            row[S:] = -m.c[:, s, a]
            rows.append(row)  # gamma P v - v(s) - lam c <= -r
            rhs.append(-m.r[s, a])
    res = linprog(
        np.concatenate([(1 - m.gamma) * m.mu, m.b]),
        A_ub=np.array(rows),
        b_ub=np.array(rhs),
        bounds=[(None, None)] * S + [(0, None)] * k,
        method="highs-ds",
    )
    assert res.status == 0, res.message
    return res.fun, res.x[S:]


def margins(m, pi):
    """min_i (b_i - V_ci(pi)) with the numpy policy evaluation, for a batch of policies (..., S, A)."""
    return (m.b - C.policy_values(m, pi)[1]).min(-1)


def binding_cmdp(seed, S, A, n=5, gamma=0.9):
    """Random CMDP, one cost, b between the least cost and the cost of the unconstrained optimum; n safe starts.

    Starts: softmax parameters with margin > 1e-3, fewer than n (possibly none) if the draws find too few.
    """
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(S), size=(S, A))
    r, c, mu = rng.uniform(size=(S, A)), rng.uniform(size=(S, A)), rng.dirichlet(np.ones(S))
    loose = C.make_cmdp(P, r, c, 10.0, gamma, mu)
    hi = float((c * scipy_lp(loose)[1]).sum())
    lo = -scipy_lp(loose._replace(r=-c))[0]
    m = loose._replace(b=np.array([lo + rng.uniform(0.2, 0.8) * (hi - lo)]))
    theta = rng.normal(scale=2.0, size=(200 * n, S, A))
    return m, theta[margins(m, softmax(theta)) > 1e-3][:n]


def _crossing_cmdp():
    """Found by a seeded search over 2-state CMDPs with entries on a 0.1 grid.

    The search: docs/decisions/041-cnpg-safeguarded-step.md."""
    P_to_0 = np.array([[0.8, 0.1], [0.1, 0.4]])  # P(s' = 0 | s, a)
    return C.make_cmdp(
        np.stack([P_to_0, 1 - P_to_0], -1),
        r=[[0.8, 0.9], [0.1, 0.1]],
        c=[[0.6, 0.0], [0.6, 0.4]],
        b=0.4,
        gamma=0.9,
        mu=[0.5, 0.5],
    )


CROSSING = _crossing_cmdp()
# pi(a=0 | s) for s = 0, 1: the first start crosses with the constant step (margin 0.0036), the others do not
CROSSING_STARTS = np.log(
    np.array([[[p, 1 - p], [q, 1 - q]] for p, q in [(0.2, 0.5), (0.1, 0.1), (0.3, 0.3), (0.5, 0.2), (0.6, 0.1)]])
)
# One batch for every 300-iteration run below (one compile per CMDP shape): ctrpo-fig2's step (-log x,
# eta = 0.3) at beta = 1e-2 and 1, then x log x at beta = 1 and a step given per run; constant, safeguarded.
RULES = ("constant", "safeguarded") * 3
PHIS6 = ("log",) * 4 + ("xlogx",) * 2
BETAS6 = (1e-2, 1e-2, 1.0, 1.0, 1.0, 1.0)


def run6(m, theta0, eta_xlogx, betas=BETAS6, phis=PHIS6, eta=0.3):
    return C.run_cnpg(m, theta0, betas, (eta,) * 4 + (eta_xlogx,) * 2, 300, phis, RULES)


@functools.lru_cache(maxsize=1)
def crossing_run():
    """CROSSING: ctrpo-fig2's step (-log x, eta = 0.3) at beta = 1e-2, 1, then -log x at eta = 0.03, beta = 1e-2."""
    return run6(CROSSING, CROSSING_STARTS, 0.03, betas=(1e-2, 1e-2, 1.0, 1.0, 1e-2, 1e-2), phis=("log",) * 6)


def test_independent_lp_agrees_with_its_dual_a_hand_optimum_and_lp_optimum():
    # CROSSING by hand: the optimum takes a=1 in s=1 and mixes in s=0 so that V_c = b; with
    # pi(0|0) = 2/3 it does: V_c = 0.4 exactly, V_r = 0.45372549... (policy evaluation, no LP)
    pi = np.array([[2 / 3, 1 / 3], [0.0, 1.0]])
    V_r, V_c = C.policy_values(CROSSING, pi)
    assert np.isclose(V_c[0], 0.4, atol=1e-14)
    for m, v_hand in ((CROSSING, V_r), (C.figure2_cmdp(), 211 / 360)):  # Figure 2: V* = 0.586111 (docstring)
        v, d = scipy_lp(m)
        v_dual, lam = scipy_dual_lp(m)
        assert np.isclose(v, v_dual, atol=1e-10) and np.isclose(v, v_hand, atol=1e-10)
        assert np.isclose(C.lp_optimum(m)["value"], v, atol=1e-10)
        assert lam[0] > 0.1 and np.isclose((m.c[0] * d).sum(), m.b[0], atol=1e-10)  # active constraint
    assert np.allclose(C.policy_values(CROSSING, C.lp_optimum(CROSSING)["pi"])[0], V_r, atol=1e-10)


def test_constant_step_leaves_the_safe_set_on_the_crossing_cmdp_and_the_safeguard_stops_short():
    m = CROSSING
    v_star = scipy_lp(m)[0]
    out = crossing_run()
    x = margins(m, out["pi"])  # (6, 5, 301), numpy
    assert (x[:, :, 0] > 1e-3).all()
    # constant, ctrpo-fig2's step: from the first start it leaves at iteration ~20 (beta = 1e-2: by
    # 8.7e-5; beta = 1: by 6.1e-6) and stays out; the other starts do not leave
    for k, worst, t_cross in ((0, 8.6e-5, 20), (2, 6.0e-6, 19)):
        assert -x[k, 0].min() > worst and np.argmax(x[k, 0] < 0) == t_cross, (k, x[k, 0].min())
        assert (x[k, 1:] > 0).all()
    # safeguarded: every iterate keeps its exact margin above 1e-12 ...
    assert (x[1::2] > 0).all() and (m.b[0] - out["V_c"][1::2, ..., 0] > MARGIN - 1e-15).all()
    # ... but (docstring, "not guaranteed") from the first start it stalls on the surface 0.03 below V*
    # (V_r no longer moves between iterations 150 and 300), while the other starts end near V* (beta = 1e-2)
    # or are still climbing (beta = 1, more conservative)
    for k in (1, 3):
        assert v_star - out["V_r"][k, 0, -1] > 0.03 and x[k, 0, -1] < 1e-8
        assert abs(out["V_r"][k, 0, -1] - out["V_r"][k, 0, 150]) < 1e-6
    assert (np.abs(out["V_r"][1, 1:, -1] - v_star) < 2e-4).all()
    assert (out["V_r"][3, 1:, -1] - out["V_r"][3, 1:, 150] > 1e-4).all()
    # a ten times smaller constant step stays inside from every start (and the safeguard never acts)
    assert (x[4] > 1e-4).all() and (out["eta_used"][5] == 0.03).all()


def test_first_order_change_of_the_margin_is_a_over_1_plus_wq():
    """Module docstring: grad V_c^T G_C^+ grad V_r = a / (1 + w q) (Sherman-Morrison on eq. 79), numpy pinv of G_K."""
    m = CROSSING
    theta = CROSSING_STARTS[0] + np.random.default_rng(7).normal(scale=0.1, size=m.r.shape)
    x = m.b[0] - C.policy_values(m, softmax(theta))[1][0]
    assert x > 0
    g_r, J_c = (g.reshape(-1) for g in C.value_gradients(m, theta))
    K_plus = np.linalg.pinv(C.kakade_gramian(m, theta))
    a, q = J_c @ K_plus @ g_r, J_c @ K_plus @ J_c
    for phi, curvature in (("log", 1 / x**2), ("xlogx", 1 / x)):
        for beta in (1e-2, 1.0):
            lhs = J_c @ C.cnpg_direction(m, theta, beta, phi).reshape(-1)
            assert np.isclose(lhs, a / (1 + beta * curvature * q), rtol=1e-8, atol=1e-14), (phi, beta)


def test_safeguarded_step_is_the_first_halving_that_stays_inside():
    """Hand check of the rule on CROSSING's crossing start: recompute each step from pi_k with numpy."""
    m, beta, eta = CROSSING, 1e-2, 0.3
    out = crossing_run()  # configuration 1: -log x, beta = 1e-2, eta = 0.3, safeguarded; start 0 crosses
    used = out["eta_used"][1, 0]
    h = np.log2(eta / used)
    assert np.allclose(h, np.round(h)) and (h >= 0).all() and (h <= C.MAX_HALVINGS).all()
    assert (out["eta_used"][0:4:2] == eta).all() and (out["eta_used"][4] == 0.03).all()  # constant: always eta
    assert (used[:40] < eta).sum() >= 5  # the safeguard acts from iteration ~20 on
    for k in range(40):
        pi = out["pi"][1, 0, k]
        d = C.cnpg_direction(m, np.log(pi), beta, "log")  # the direction depends on theta only through pi
        margin_at = lambda e: margins(m, softmax(np.log(pi) + e * d))  # noqa: E731
        np.testing.assert_allclose(softmax(np.log(pi) + used[k] * d), out["pi"][1, 0, k + 1], atol=1e-9)
        assert margin_at(used[k]) > MARGIN - 1e-14
        if used[k] < eta:  # the previous (twice as long) candidate left {margin > 1e-12}
            assert margin_at(2 * used[k]) < MARGIN + 1e-14, (k, used[k], margin_at(2 * used[k]))


# Seeded search over random CMDPs (2-3 states, 2-3 actions; instances with fewer than 5 safe starts skipped)
SEARCH = {(2, 2): range(8), (3, 2): range(6), (3, 3): range(4)}


def test_seeded_search_constant_step_leaves_the_safe_set_and_safeguarded_never_does():
    log_crossings, xlogx_crossings, instances = [], [], 0
    for (S, A), seeds in SEARCH.items():
        for seed in seeds:
            m, theta0 = binding_cmdp(seed, S, A)
            if len(theta0) < 5:
                continue
            instances += 1
            lam = scipy_dual_lp(m)[1][0]
            # x log x at beta = 1 and the documented step eta = beta / (5 lambda) (the first-order bound / 5)
            out = run6(m, theta0, 1.0 / (5 * lam))
            x = margins(m, out["pi"])
            const, safe = x[0::2].min((1, 2)), x[1::2].min((1, 2))
            if min(const[0], const[1]) < 0:
                log_crossings.append(((S, A, seed), -min(const[0], const[1])))
            if const[2] < 0:
                xlogx_crossings.append(((S, A, seed), -const[2]))
            # the safeguard: never leaves (numpy check) and keeps the exact margin above 1e-12
            assert (safe > 0).all() and (m.b[0] - out["V_c"][1::2, ..., 0] > MARGIN - 1e-15).all(), (S, A, seed, safe)
            # where the constant step never comes within 1e-12 of the surface, the safeguard changes nothing
            for k in range(3):
                if (m.b[0] - out["V_c"][2 * k, ..., 0] > MARGIN - 1e-15).all():
                    np.testing.assert_array_equal(out["V_r"][2 * k + 1], out["V_r"][2 * k])
                    assert (out["eta_used"][2 * k + 1] == out["eta_used"][2 * k]).all()
    assert instances == 14
    # ctrpo-fig2's step (-log x, eta = 0.3) leaves the safe set on 4 of 14, by small margins (< 1e-3)
    assert [i for i, _ in log_crossings] == [(2, 2, 4), (2, 2, 6), (3, 2, 5), (3, 3, 2)], log_crossings
    assert all(1e-5 < v < 1e-3 for _, v in log_crossings), log_crossings
    # x log x at the documented step leaves it on every instance
    assert len(xlogx_crossings) == instances, xlogx_crossings


def test_safeguarded_step_converges_on_figure2_where_the_constant_step_leaves():
    """figure2_cmdp, x log x at eta = 0.3 (beta = 1e-2: 20x the first-order bound; beta = 1: below it)."""
    m = C.figure2_cmdp()
    v_star, d_star = scipy_lp(m)
    pi_star = d_star / d_star.sum(-1, keepdims=True)
    theta0 = ctrpo.safe_initialisations(m)[:5]
    out = run6(m, theta0, 0.3, betas=(1e-2, 1e-2, 1.0, 1.0, 1e-2, 1e-2), phis=("xlogx",) * 6)
    x = margins(m, out["pi"])
    assert -x[0].min() > 0.03 and x[2].min() < 0  # constant: leaves (beta = 1: by ~4e-11 within 300 iterations)
    assert np.abs(out["V_r"][0, :, -1] - v_star).max() > 0.01  # ... and ends outside, away from V*
    for k in (1, 3):  # safeguarded: stays inside and converges to the LP optimum
        assert (x[k] > 0).all() and (m.b[0] - out["V_c"][k, ..., 0] > MARGIN - 1e-15).all()
        assert np.abs(out["V_r"][k, :, -1] - v_star).max() < 1e-6
        assert np.abs(out["V_c"][k, :, -1, 0] - m.b[0]).max() < 1e-6
        assert np.abs(out["pi"][k, :, -1] - pi_star).max() < 1e-3
    assert (out["eta_used"][1] < 0.3).any() and (out["eta_used"][3] < 0.3).any()  # the safeguard did act


def test_xlogx_at_the_documented_step_leaves_the_safe_set_on_figure2():
    """Theorem 4.4's invariance for phi = x log x at the documented step eta = 0.003 (< beta / lambda = 0.014).

    It does not hold in discrete time: all three starts below leave (by ~1e-10, after 5,500-6,400
    iterations).  The safeguarded step at the same eta keeps them inside and they still converge.
    """
    m = C.figure2_cmdp()
    v_star = scipy_lp(m)[0]
    assert 0.003 < 1e-2 / scipy_dual_lp(m)[1][0] < 0.014
    theta0 = ctrpo.safe_initialisations(m)[[2, 3, 7]]
    out = C.run_cnpg(m, theta0, (1e-2, 1e-2), 0.003, 6500, "xlogx", ("constant", "safeguarded"))
    x = margins(m, out["pi"])
    assert (x[0, :, :5000] > 0).all() and (x[0].min(-1) < 0).all() and x[0].min() > -1e-8, x[0].min(-1)
    assert (x[1] > 0).all() and (m.b[0] - out["V_c"][1, ..., 0] > MARGIN - 1e-15).all()
    assert np.abs(out["V_r"][1, :, -1] - v_star).max() < 1e-6


def test_step_rule_is_validated_and_defaults_to_constant():
    assert inspect.signature(C.run_cnpg).parameters["step_rule"].default == "constant"  # Figure 2's (our reading)
    m = C.figure2_cmdp()
    theta0 = ctrpo.safe_initialisations(m)[:2]
    for kwargs in ({"step_rule": "armijo"}, {"step_rule": ("constant", "armijo")}, {"max_halvings": -1}):
        with pytest.raises(ValueError):
            C.run_cnpg(m, theta0, (1e-2, 1.0), 0.3, 3, "log", **kwargs)
