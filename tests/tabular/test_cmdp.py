"""Ground-truth CMDP quantities: safe subgraph vs brute force, exact evaluation vs Monte Carlo,
C(M) and Var* on the study instances."""

import itertools

import numpy as np
import pytest

from saferl.tabular import cmdp as cm
from saferl.tabular import envs


def _all_policies(m, h0):
    """Every deterministic policy on steps h0..H-1, as (H, S) arrays (earlier steps zero)."""
    steps = range(h0, m.H)
    for combo in itertools.product(range(m.A), repeat=m.S * len(steps)):
        pi = np.zeros((m.H, m.S), dtype=int)
        pi[h0:] = np.array(combo).reshape(len(steps), m.S)
        yield pi


def _safe_from(m, h, s, a, pi):
    """Brute force: taking a at (h, s) and then pi, is every action on every positive-probability
    path cost-feasible (c <= tau)?"""
    if m.c[h, s, a] > m.tau:
        return False
    frontier = {int(x) for x in np.flatnonzero(m.P[h, s, a] > 0)}
    for t in range(h + 1, m.H):
        nxt = set()
        for x in frontier:
            b = pi[t, x]
            if m.c[t, x, b] > m.tau:
                return False
            nxt |= {int(y) for y in np.flatnonzero(m.P[t, x, b] > 0)}
        frontier = nxt
    return True


@pytest.mark.parametrize("seed", range(6))
def test_safe_subgraph_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    m = cm.random_cmdp(rng, S=3, A=2, H=3, tau=0.55, branch=2)
    g = cm.safe_subgraph(m)
    best = -np.inf
    for h in range(m.H):
        pols = list(_all_policies(m, h + 1)) if h + 1 < m.H else [np.zeros((m.H, m.S), dtype=int)]
        for s in range(m.S):
            for a in range(m.A):
                brute = any(_safe_from(m, h, s, a, pi) for pi in pols)
                assert brute == g.actions[h, s, a], (h, s, a)
            assert g.states[h, s] == g.actions[h, s].any()
    # optimal safe value = best value over policies whose whole trajectory tree is cost-feasible
    _, V = cm.optimal_safe_policy(m, g)
    for pi in _all_policies(m, 0):
        if _safe_from(m, 0, m.s1, pi[0, m.s1], pi):
            best = max(best, cm.evaluate(m, pi)[0, m.s1])
    if g.states[0, m.s1]:
        assert np.isclose(V[0, m.s1], best)
    else:
        assert best == -np.inf


def test_exact_evaluation_matches_monte_carlo():
    rng = np.random.default_rng(7)
    m = cm.random_cmdp(rng, S=4, A=3, H=4, tau=0.5, branch=3, bernoulli_rewards=True)
    pi = rng.integers(0, m.A, size=(m.H, m.S))
    V = cm.evaluate(m, pi)[0, m.s1]
    ev = cm.expected_violation(m, pi)
    var = cm.return_variance(m, pi)
    # the reference sampler, a few episodes: well-formed trajectories under pi
    for _ in range(20):
        ss, aa, rr, cc = cm.rollout(m, pi, rng)
        assert (aa == pi[np.arange(m.H), ss[:-1]]).all() and set(rr) <= {0.0, 1.0} and set(cc) <= {0.0, 1.0}
        assert (m.P[np.arange(m.H), ss[:-1], aa, ss[1:]] > 0).all()
    # Monte Carlo with the same sampling law, vectorised over episodes
    n = 8000
    s = np.full(n, m.s1)
    rets, viols = np.zeros(n), np.zeros(n)
    for h in range(m.H):
        a = pi[h, s]
        rets += rng.random(n) < m.r[h, s, a]
        viols += np.maximum(m.c[h, s, a] - m.tau, 0)
        s = (rng.random(n)[:, None] > np.cumsum(m.P[h, s, a], -1)).sum(-1).clip(max=m.S - 1)
    assert abs(rets.mean() - V) < 4 * rets.std() / np.sqrt(n)
    assert abs(viols.mean() - ev) < 4 * viols.std() / np.sqrt(n) + 1e-12
    assert abs(rets.var() - var) < 0.05 * var + 0.01  # law of total variance (eq. 4 summand)


@pytest.mark.parametrize("p,gap", [(0.4, 0.2), (0.05, 0.2), (0.2, 0.1), (0.2, 0.3)])
def test_identification_complexity_h4(p, gap):
    m = envs.identification_two_step(p, gap)
    summ = cm.instance_summary(m)
    assert np.isclose(summ["C"], 2 / (p * gap**2))
    assert summ["Var_star"] == 0.0 and np.isclose(summ["V_star"], 0.4)
    g = cm.safe_subgraph(m)
    assert not g.actions[0, 0, envs.UNSAFE_ROOT_ACTION_H4] and g.actions[0, 0, 0]


@pytest.mark.parametrize("u", [0.0, 0.15, 0.30])
def test_variance_instance_h3(u):
    summ = cm.instance_summary(envs.variance_two_step(u))
    assert np.isclose(summ["Var_star"], u**2)
    assert np.isclose(summ["S_star"], 2 * u)
    assert summ["B_safe"] == 1 and np.isclose(summ["C"], 50.0) and np.isclose(summ["V_star"], 0.5)


def test_recursive_elimination_h5():
    for d in (1, 3):
        m = envs.recursive_elimination(d, safe_continuation=False)
        g = cm.safe_subgraph(m)
        assert not g.actions[0, 0, 1] and not g.states[1, 2]  # eliminated through propagation
        assert np.isclose(cm.instance_summary(m)["V_star"], 0.4)
        ms = envs.recursive_elimination(d, safe_continuation=True)
        assert np.isclose(cm.instance_summary(ms)["V_star"], 1.0)
        # kappa: 2 actions x 0.2^-2 at the dead end, and both actions of every branch state above
        # it inherit it (deterministic transitions: no reachability factor), so C = 25 * 2^d
        assert np.isclose(cm.identification_complexity(m), 25 * 2**d)


def test_navigation_generator():
    """H.2: start middle-left, absorbing goal middle-right, Bernoulli rewards 0.9 / 0.1, the slip law
    (intended move with q in [0.8, 0.95], (1 - q) / 2 to each perpendicular move, off-grid moves stay),
    costs in [0.7, 0.85] for actions that can cross the column-3/4 boundary in rows 2-4, [0.15, 0.3]
    for the other non-goal actions, 0 at the goal; stationary over steps."""
    n = 5
    m = envs.navigation_gridworld(np.random.default_rng(0))
    assert (m.S, m.A, m.H) == (25, 4, 20) and m.bernoulli_rewards and m.tau == 0.6
    start, goal = 2 * n + 0, 2 * n + 4  # (row 3, column 1) and (row 3, column 5), 1-based
    assert m.s1 == start
    assert (m.P == m.P[0]).all() and (m.r == m.r[0]).all() and (m.c == m.c[0]).all()
    P, r, c = m.P[0], m.r[0], m.c[0]
    assert (P[goal, :, goal] == 1.0).all() and (c[goal] == 0).all() and (r[goal] == 0.9).all()
    assert (np.delete(r, goal, 0) == 0.1).all()
    moves = {0: (-1, 0), 1: (0, 1), 2: (1, 0), 3: (0, -1)}  # up, right, down, left

    def dest(s, k):
        row, col = divmod(s, n)
        r2, c2 = row + moves[k][0], col + moves[k][1]
        return r2 * n + c2 if 0 <= r2 < n and 0 <= c2 < n else s

    for s in range(m.S):
        if s == goal:
            continue
        row, col = divmod(s, n)
        for a in range(m.A):
            perp = ((a + 1) % 4, (a + 3) % 4)
            # P(. | s, a) = q e_dest(a) + (1 - q) / 2 (e_dest(perp1) + e_dest(perp2)): solve for q
            base = np.zeros(m.S)
            base[dest(s, perp[0])] += 0.5
            base[dest(s, perp[1])] += 0.5
            slope = -base.copy()
            slope[dest(s, a)] += 1.0
            q = float(slope @ (P[s, a] - base) / (slope @ slope))
            np.testing.assert_allclose(P[s, a], base + q * slope, atol=1e-12)
            assert 0.8 <= q <= 0.95
            crosses = 1 <= row <= 3 and ((col == 2 and 1 in (a, *perp)) or (col == 3 and 3 in (a, *perp)))
            lo, hi = (0.7, 0.85) if crosses else (0.15, 0.3)
            assert lo <= c[s, a] <= hi, (s, a)
    g = cm.safe_subgraph(m)
    assert g.states[0, m.s1]
    # rows 2-4 of columns 3 and 4: every action but the one moving away can cross; all viable
    assert (~g.actions[0]).sum() == 18 and g.states.all()
    summ = cm.instance_summary(m)
    assert 9.0 < summ["V_star"] < 12.0


def test_branching_depth_and_kappa_hand_example():
    # root: action 0 branches into states 1/2 (p=0.3/0.7); action 1 stays at 0 but costs 0.9.
    H, S, A = 2, 3, 2
    P = np.zeros((H, S, A, S))
    P[:, :, :, 0] = 1.0
    P[0, 0, 0] = [0.0, 0.3, 0.7]
    c = np.zeros((H, S, A))
    c[0, 0, 1] = 0.9
    c[1, 1, :] = 0.8  # state 1 at step 2 non-viable -> root action 0 unsafe too... then infeasible
    m = cm.CMDP(P, np.zeros((H, S, A)), c, 0.5)
    g = cm.safe_subgraph(m)
    assert not g.states[0, 0]
    k_sa, k_s = cm.kappa(m, g)
    assert np.isclose(k_sa[1, 1, 0], 0.3**-2) and np.isclose(k_s[1, 1], 2 * 0.3**-2)
    assert np.isclose(k_sa[0, 0, 0], k_s[1, 1] / 0.3)
    assert np.isclose(k_sa[0, 0, 1], 0.4**-2)
    c[1, 1, 1] = 0.0
    m2 = cm.CMDP(P, np.zeros((H, S, A)), c, 0.5)
    assert cm.branching_depth(m2) == 1
