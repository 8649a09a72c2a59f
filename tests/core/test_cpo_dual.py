"""CPO / PCPO step solvers against scipy's SLSQP on random small problems.

Problem (maximisation convention, g = reward gradient, b = cost gradient):

    max_x g^T x   s.t.   b_i^T x + c_i <= 0,   x^T H x / 2 <= delta,

and, when that is infeasible, the recovery problem min_x max_{c_i > 0} b_i^T x
s.t. x^T H x / 2 <= delta (for one constraint: min_x b^T x).  The solvers see only
q, r, s (or S) and c; the step is assembled from H^-1 g and H^-1 b exactly as an
algorithm would.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import linprog, minimize

from saferl.core import cpo_dual as cd

N_DIM = 5


def _spd(rng, n):
    q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return (q * rng.uniform(0.2, 3.0, size=n)) @ q.T


def _slsqp(objective_vec, H, delta, B=None, c=None):
    """min objective_vec^T x  s.t. B x + c <= 0 (rows), x^T H x / 2 <= delta."""
    cons = [{"type": "ineq", "fun": lambda x: delta - 0.5 * x @ H @ x, "jac": lambda x: -(H @ x)}]
    if B is not None:
        cons.append({"type": "ineq", "fun": lambda x: -(B @ x + c), "jac": lambda x: -B})
    res = minimize(
        lambda x: objective_vec @ x,
        np.zeros(len(objective_vec)),
        jac=lambda x: objective_vec,
        constraints=cons,
        method="SLSQP",
        options={"ftol": 1e-13, "maxiter": 500},
    )
    return res.x, res.success


def _h_norm(x, H):
    return float(np.sqrt(max(x @ H @ x, 0.0)))


# --------------------------------------------------------------------------- single constraint


def _random_single_problems(seed, n_problems):
    rng = np.random.default_rng(seed)
    probs = []
    for i in range(n_problems):
        H = _spd(rng, N_DIM)
        g, b = rng.normal(size=N_DIM), rng.normal(size=N_DIM)
        delta = rng.uniform(0.01, 0.1)
        s = b @ np.linalg.solve(H, b)
        kind = i % 10
        if kind == 9:  # zero cost gradient with a satisfied constraint -> case 4
            b = np.zeros(N_DIM)
            c = -rng.uniform(0.01, 1.0)
        elif kind == 8:
            c = 0.0
        else:  # |c| below or above the distance from 0 to the boundary of the trust region
            c = rng.choice([-1.0, 1.0]) * np.sqrt(2 * delta * s) * rng.uniform(0.0, 2.0)
        probs.append((H, g, b, c, delta))
    return probs


_cpo_batch = jax.jit(jax.vmap(cd.cpo_dual))
_cpo_one = jax.jit(cd.cpo_dual)


def test_cpo_dual_matches_slsqp_in_every_case():
    probs = _random_single_problems(0, 200)
    hinv_g = np.stack([np.linalg.solve(H, g) for H, g, *_ in probs])
    hinv_b = np.stack([np.linalg.solve(H, b) for H, _, b, *_ in probs])
    q = np.einsum("ni,ni->n", np.stack([p[1] for p in probs]), hinv_g)
    r = np.einsum("ni,ni->n", np.stack([p[1] for p in probs]), hinv_b)
    s = np.einsum("ni,ni->n", np.stack([p[2] for p in probs]), hinv_b)
    c = np.array([p[3] for p in probs])
    delta = np.array([p[4] for p in probs])
    sol = _cpo_batch(*(jnp.asarray(a, jnp.float32) for a in (q, r, s, c, delta)))
    case, lam, nu = np.asarray(sol.case), np.asarray(sol.lam), np.asarray(sol.nu)
    coef_g, coef_b = np.asarray(sol.coef_g, np.float64), np.asarray(sol.coef_b, np.float64)
    assert set(case.tolist()) == {0, 1, 2, 3, 4}, np.bincount(case)
    assert np.all(np.isfinite(lam)) and np.all(np.isfinite(nu)) and np.all(lam >= 0) and np.all(nu >= 0)

    active_seen = set()
    n_checked = 0
    for i, (H, g, b, ci, di) in enumerate(probs):
        x = coef_g[i] * hinv_g[i] + coef_b[i] * hinv_b[i]
        radius = np.sqrt(2 * di)
        if case[i] == 0:
            ref, ok = _slsqp(b, H, di)  # recovery: min b^T x in the trust region
            assert ci > 0 and ci > np.sqrt(2 * di * s[i])  # truly infeasible
        else:
            ref, ok = _slsqp(-g, H, di, b[None], np.array([ci]))
            assert b @ x + ci <= 1e-4 * (abs(ci) + radius * np.sqrt(s[i])) + 1e-7, (i, case[i])
            assert g @ x >= g @ ref - 1e-4 * radius * np.sqrt(q[i])
            active_seen.add((int(case[i]), bool(nu[i] > 0)))
        assert 0.5 * x @ H @ x <= di * (1 + 1e-4)
        if ok:
            n_checked += 1
            assert _h_norm(x - ref, H) <= 2e-3 * radius, (i, case[i], x, ref)
    assert n_checked >= 0.95 * len(probs)
    # Both branches of the partially feasible cases occur: boundary active (nu > 0) and not.
    assert {(1, True), (2, True), (2, False), (3, False), (4, False)} <= active_seen, active_seen


def test_cpo_step_assembly_and_case_numbering():
    # H = I, g = e1, b = e1 + e2: explicit geometry.
    g, b = np.array([1.0, 0.0]), np.array([1.0, 1.0])
    delta = 0.5  # trust region radius 1
    q, r, s = 1.0, 1.0, 2.0
    expectations = {
        -5.0: 3,  # boundary far away on the safe side
        -0.5: 2,  # origin feasible, boundary cuts the ball
        0.5: 1,  # origin infeasible, part of the ball feasible
        5.0: 0,  # no feasible point
    }
    for c, case in expectations.items():
        sol = _cpo_one(q, r, s, c, delta)
        assert int(sol.case) == case
        x = np.asarray(cd.cpo_step(sol, jnp.asarray(g), jnp.asarray(b)))
        if case == 3:
            np.testing.assert_allclose(x, [1.0, 0.0], atol=1e-6)
        elif case == 0:
            np.testing.assert_allclose(x, -b / np.sqrt(2.0), atol=1e-6)
        else:
            # Optimum on the intersection of the line x1 + x2 = -c and the unit circle with the larger x1.
            x1 = (-c + np.sqrt(2.0 - c * c)) / 2.0
            np.testing.assert_allclose(x, [x1, -c - x1], atol=1e-5)
            # x = (H^-1 g - nu H^-1 b) / lam with the returned multipliers.
            np.testing.assert_allclose(x, (g - float(sol.nu) * b) / float(sol.lam), atol=1e-5)
    assert int(_cpo_one(q, 0.0, 0.0, -1.0, delta).case) == 4
    # Pytree assembly.
    tree = cd.cpo_step(_cpo_one(q, r, s, -5.0, delta), {"a": jnp.ones(2)}, {"a": jnp.zeros(2)})
    np.testing.assert_allclose(np.asarray(tree["a"]), np.ones(2), atol=1e-6)


def test_cpo_dual_degenerate_inputs_are_finite():
    # columns: q, r, s, c, delta
    rows = np.array(
        [
            [1.0, 0.0, 0.0, -1.0, 0.01],  # s = 0, satisfied -> case 4
            [1.0, 0.0, 0.0, 0.0, 0.01],  # s = 0, c = 0 -> case 4
            [1.0, 0.0, 0.0, 1.0, 0.01],  # s = 0, violated -> recovery with a zero direction
            [1.0, 1e-16, 1e-30, 1e-3, 0.01],
            [1.0, 1e-6, 1e-12, 0.0, 0.01],
            [0.0, 0.0, 1.0, -0.1, 0.01],  # g = 0
            [0.0, 0.0, 1.0, 0.1, 0.01],
            [1.0, 1.0, 1.0, 0.0, 0.01],  # g parallel to b: A = 0
            [1.0, 1.0, 1.0, -0.05, 0.01],
            [1.0, 1.0, 1.0, 0.05, 0.01],
            [1.0, -1.0, 1.0, 0.05, 0.01],  # g anti-parallel to b
            [1.0, 1.0001, 1.0, 0.05, 0.01],  # Cauchy-Schwarz violated by noise
            [1.0, 0.0, 1.0, 0.0, 0.01],  # c = 0, r = 0
            [1e8, 1e4, 1.0, 0.01, 0.01],  # ill-conditioned scales
            [1e-8, 1e-4, 1e4, -0.01, 0.01],
            [1.0, 0.5, 1.0, 0.0, 1e-8],  # tiny trust region
            [1.0, 0.5, 1.0, 1e-20, 0.01],
            [1.0, 0.5, 1e-3, 0.0447, 1.0],  # B ~ 0: tangent
        ],
        np.float32,
    )
    sol = _cpo_batch(*(jnp.asarray(rows[:, j]) for j in range(5)))
    for field in sol:
        assert np.all(np.isfinite(np.asarray(field))), (field, sol)
    assert np.asarray(sol.case)[:3].tolist() == [4, 4, 0]

    # g parallel to b with H = I: the optimum value is known even though x is not unique.
    for c, best in [(-0.05, 0.05), (0.0, 0.0), (0.05, -0.05)]:
        g = b = jnp.array([1.0, 0.0])
        x = np.asarray(cd.cpo_step(_cpo_one(1.0, 1.0, 1.0, c, 0.01), g, b))
        assert np.all(np.isfinite(x))
        assert x[0] == pytest.approx(best, abs=1e-3) and x @ x <= 0.02 * (1 + 1e-3)


# --------------------------------------------------------------------------- several constraints


def _random_multi_problems(seed, n_problems, m):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n_problems):
        H = _spd(rng, N_DIM + 1)
        g, B = rng.normal(size=N_DIM + 1), rng.normal(size=(m, N_DIM + 1))
        delta = rng.uniform(0.01, 0.1)
        s_ii = np.einsum("ij,ij->i", B, np.linalg.solve(H, B.T).T)
        c = rng.choice([-1.0, 1.0], size=m, p=[0.6, 0.4]) * np.sqrt(2 * delta * s_ii) * rng.uniform(0.0, 1.5, size=m)
        if i % 7 == 0:
            c[0] = 0.0
        if i == 1:  # degenerate: duplicated constraint (singular S) and, for m >= 3, an all-zero row
            B[1], c[1] = B[0], c[0]
            if m >= 3:
                B[2], c[2] = 0.0, -0.1
        if i == 2:
            c[:] = 0.0
        out.append((H, g, B, c, delta))
    return out


@pytest.mark.parametrize("m", [2, 3])
def test_cpo_dual_multi_matches_slsqp(m):
    probs = _random_multi_problems(m, 60, m)
    hinv_g = np.stack([np.linalg.solve(H, g) for H, g, *_ in probs])
    hinv_B = np.stack([np.linalg.solve(H, B.T).T for H, _, B, *_ in probs])  # (P, m, n)
    q = np.einsum("pi,pi->p", np.stack([p[1] for p in probs]), hinv_g)
    r = np.einsum("pmi,pi->pm", np.stack([p[2] for p in probs]), hinv_g)
    S = np.einsum("pmi,pki->pmk", np.stack([p[2] for p in probs]), hinv_B)
    c = np.stack([p[3] for p in probs])
    delta = np.array([p[4] for p in probs])
    sol = jax.jit(jax.vmap(cd.cpo_dual_multi))(*(jnp.asarray(a, jnp.float32) for a in (q, r, S, c, delta)))
    for field in sol:
        assert np.all(np.isfinite(np.asarray(field)))
    feasible = np.asarray(sol.feasible)
    coef_g, coef_b = np.asarray(sol.coef_g, np.float64), np.asarray(sol.coef_b, np.float64)
    assert 0 < feasible.sum() < len(probs), feasible.sum()
    n_active = np.asarray(sol.active).sum(axis=1)[feasible]
    assert {0, 1, 2} <= set(n_active.tolist())
    assert np.all(np.asarray(sol.nu)[feasible] >= -1e-4 * np.abs(np.asarray(sol.nu)).max())

    n_checked = 0
    for i, (H, g, B, ci, di) in enumerate(probs):
        x = coef_g[i] * hinv_g[i] + coef_b[i] @ hinv_B[i]
        radius = np.sqrt(2 * di)
        assert 0.5 * x @ H @ x <= di * (1 + 1e-3)
        # Is the problem feasible? min x^T H x / 2 s.t. B x + c <= 0 compared with delta.
        z, ok_z = _slsqp_min_norm(H, B, ci)
        min_kl = 0.5 * z @ H @ z
        if ok_z and abs(min_kl - di) > 1e-3 * di:
            assert feasible[i] == (min_kl < di), (i, min_kl, di)
        if feasible[i]:
            ref, ok = _slsqp(-g, H, di, B, ci)
            scale = np.abs(ci) + radius * np.sqrt(np.diag(B @ np.linalg.solve(H, B.T)))
            assert np.all(B @ x + ci <= 1e-3 * scale)
        else:
            violated = ci > 0
            ref, ok = _slsqp_minimax(B[violated], H, di)
            assert np.all(B[violated] @ x < 0), i  # every violated linearised constraint decreases
        if ok:
            n_checked += 1
            assert _h_norm(x - ref, H) <= 3e-3 * radius, (i, feasible[i], x, ref)
    assert n_checked >= 0.9 * len(probs)


def _slsqp_minimax(B, H, delta):
    """min_x max_i b_i^T x  s.t. x^T H x / 2 <= delta, as min_{x, t} t  s.t. B x <= t."""
    n = H.shape[0]
    cons = [
        {
            "type": "ineq",
            "fun": lambda z: delta - 0.5 * z[:n] @ H @ z[:n],
            "jac": lambda z: np.append(-(H @ z[:n]), 0.0),
        },
        {"type": "ineq", "fun": lambda z: z[n] - B @ z[:n], "jac": lambda z: np.hstack([-B, np.ones((B.shape[0], 1))])},
    ]
    obj = np.append(np.zeros(n), 1.0)
    res = minimize(
        lambda z: obj @ z,
        np.zeros(n + 1),
        jac=lambda z: obj,
        constraints=cons,
        method="SLSQP",
        options={"ftol": 1e-13, "maxiter": 500},
    )
    return res.x[:n], res.success


def _slsqp_min_norm(H, B, c):
    cons = [{"type": "ineq", "fun": lambda x: -(B @ x + c), "jac": lambda x: -B}]
    res = minimize(
        lambda x: 0.5 * x @ H @ x,
        np.zeros(H.shape[0]),
        jac=lambda x: H @ x,
        constraints=cons,
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    )
    return res.x, res.success


def test_cpo_dual_multi_reduces_to_single():
    probs = _random_single_problems(5, 40)
    rows = []
    for H, g, b, c, delta in probs:
        hg, hb = np.linalg.solve(H, g), np.linalg.solve(H, b)
        rows.append((g @ hg, g @ hb, b @ hb, c, delta))
    q, r, s, c, delta = (jnp.asarray(np.array(col), jnp.float32) for col in zip(*rows))
    single = _cpo_batch(q, r, s, c, delta)
    multi = jax.jit(jax.vmap(cd.cpo_dual_multi))(q, r[:, None], s[:, None, None], c[:, None], delta)
    np.testing.assert_allclose(np.asarray(multi.coef_g), np.asarray(single.coef_g), rtol=2e-3, atol=1e-5)
    np.testing.assert_allclose(np.asarray(multi.coef_b[:, 0]), np.asarray(single.coef_b), rtol=2e-3, atol=1e-5)
    np.testing.assert_array_equal(np.asarray(multi.feasible), np.asarray(single.case) != 0)

    with pytest.raises(ValueError):
        cd.cpo_dual_multi(1.0, jnp.zeros(9), jnp.eye(9), jnp.zeros(9), 0.01)


def _slsqp_simplex_qp(G, mask):
    """min_w w^T G w over the simplex on the entries of ``mask`` (scipy reference)."""
    idx = np.flatnonzero(mask)
    Gv = G[np.ix_(idx, idx)]
    k = len(idx)
    res = minimize(
        lambda w: w @ Gv @ w,
        np.full(k, 1.0 / k),
        jac=lambda w: 2 * Gv @ w,
        bounds=[(0, None)] * k,
        constraints=[{"type": "eq", "fun": lambda w: w.sum() - 1.0, "jac": lambda w: np.ones(k)}],
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    w = np.zeros(len(mask))
    w[idx] = res.x
    return w, res.success


_hull = jax.jit(jax.vmap(cd.min_norm_hull_weights))


@pytest.mark.parametrize("m", [2, 3, 4])
def test_min_norm_hull_weights_match_slsqp(m):
    """The simplex QP min_{w in simplex} w^T G w, G the Gram matrix of m gradients in the H^-1 metric (rank
    deficient in some problems: fewer dimensions than gradients, duplicated gradients)."""
    rng = np.random.default_rng(10 + m)
    Gs, masks = [], []
    for i in range(80):
        dim = [1, 2, N_DIM][i % 3] if m > 2 else [1, N_DIM][i % 2]
        B = rng.normal(size=(m, dim)) + rng.normal(size=dim) * rng.uniform(0, 2)  # shared component: all acute
        if i % 7 == 3:
            B[1] = B[0]
        Gs.append(B @ B.T)
        mask = rng.uniform(size=m) < 0.7
        mask[rng.integers(m)] = True
        masks.append(mask)
    w, value = map(np.asarray, _hull(jnp.asarray(np.stack(Gs), jnp.float32), jnp.asarray(np.stack(masks))))
    interior = checked = 0
    for i, (G, mask) in enumerate(zip(Gs, masks)):
        assert np.all(w[i] >= 0) and w[i].sum() == pytest.approx(1.0, abs=1e-5) and np.all(w[i][~mask] == 0)
        scale = np.max(np.diag(G)[mask])
        assert value[i] == pytest.approx(w[i] @ G @ w[i], rel=1e-4, abs=1e-6 * scale)
        ref, ok = _slsqp_simplex_qp(G, mask)
        if not ok:
            continue
        checked += 1
        assert w[i] @ G @ w[i] <= ref @ G @ ref + 1e-5 * scale, (i, w[i], ref)
        # the minimum-norm point B^T w is unique even where w is not: |B^T (w - ref)|^2 = (w - ref)^T G (w - ref)
        d = w[i] - ref
        assert d @ G @ d <= 1e-4 * scale, (i, w[i], ref)
        interior += int(np.sum(w[i] > 1e-3) >= 2)
    assert checked >= 0.9 * len(Gs) and interior >= 10  # supports of several gradients occur, not only vertices


def _infeasible_multi_problems(seed, n_problems, m):
    """Problems whose linearised constraints miss the trust region: several violated, c_i beyond the reach of
    the trust region for some, gradients at all angles; every third in 2 dimensions, where m >= 3 gradients
    often admit no direction that lowers them all."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n_problems):
        n = 2 if i % 3 == 0 else N_DIM + 1
        H = _spd(rng, n)
        g, B = rng.normal(size=n), rng.normal(size=(m, n))
        if rng.uniform() < 0.5:
            B += rng.normal(size=n) * rng.uniform(0.5, 2.0)  # correlated gradients
        delta = rng.uniform(0.01, 0.1)
        s_ii = np.einsum("ij,ij->i", B, np.linalg.solve(H, B.T).T)
        c = np.sqrt(2 * delta * s_ii) * rng.uniform(0.2, 3.0, size=m)
        c[rng.uniform(size=m) < 0.25] *= -1.0
        c[np.argmax(c)] = abs(c[np.argmax(c)]) + 2.0 * np.sqrt(2 * delta * s_ii[np.argmax(c)])  # infeasible
        if i == 1:  # opposite gradients, both violated: no step lowers both
            B[1] = -0.5 * B[0]
            c[:2] = np.abs(c[:2]) + 1.0
        out.append((H, g, B, c, delta))
    return out


_multi_one = jax.jit(cd.cpo_dual_multi)


def _decreasing_direction_exists(Bv):
    """Whether some d has b_i^T d < 0 for every row (LP: B_V d <= -1)."""
    res = linprog(
        np.zeros(Bv.shape[1]), A_ub=Bv, b_ub=-np.ones(Bv.shape[0]), bounds=[(None, None)] * Bv.shape[1], method="highs"
    )
    return res.status == 0


@pytest.mark.parametrize("m", [2, 3, 4])
def test_multi_recovery_lowers_every_violated_linearised_constraint(m):
    """Where a step that decreases all violated linearised constraints exists (scipy's linprog finds one), the
    recovery step decreases every one of them, lies on the trust-region boundary and is the minimax step
    min_x max_{i in V} b_i^T x (scipy).  The step minimising their sum raises one of them on some of
    these problems: it would fail this test."""
    probs = _infeasible_multi_problems(20 + m, 90, m)
    checked = sum_rule_raises = 0
    for i, (H, g, B, ci, di) in enumerate(probs):
        hinv_g, hinv_B = np.linalg.solve(H, g), np.linalg.solve(H, B.T).T
        sol = _multi_one(*(jnp.asarray(a, jnp.float32) for a in (g @ hinv_g, B @ hinv_g, B @ hinv_B.T, ci, di)))
        coef_g, coef_b = float(sol.coef_g), np.asarray(sol.coef_b, np.float64)
        violated = ci > 0
        assert not bool(sol.feasible)
        np.testing.assert_array_equal(np.asarray(sol.active), violated)
        assert coef_g == 0.0 and np.all(coef_b[~violated] == 0.0)
        x = coef_b @ hinv_B
        assert 0.5 * x @ H @ x <= di * (1 + 1e-3)
        if not _decreasing_direction_exists(B[violated]):
            continue
        checked += 1
        np.testing.assert_allclose(0.5 * x @ H @ x, di, rtol=1e-3)  # on the trust-region boundary
        assert np.all(B[violated] @ x < 0), (i, B[violated] @ x)
        ref, ok = _slsqp_minimax(B[violated], H, di)
        if ok:
            tol = 1e-3 * np.sqrt(2 * di * np.max(np.diag(B @ hinv_B.T)))
            assert np.max(B[violated] @ x) <= np.max(B[violated] @ ref) + tol, i
        x_sum = -np.linalg.solve(H, B[violated].sum(axis=0))
        sum_rule_raises += int(np.any(B[violated] @ x_sum > 0))
    assert 0.5 * len(probs) <= checked < len(probs) and sum_rule_raises >= 3, (checked, sum_rule_raises)


def test_multi_recovery_by_hand_and_its_fallback():
    """H = I: two violated constraints with gradients (1, 0) and (1, 2).  Their hull's minimum-norm point is
    (1, 0) (w = (1, 0): (G w)_2 = 1 >= w^T G w = 1), so the recovery step is -sqrt(2 delta) (1, 0) and lowers
    both (b_2^T x = -sqrt(2 delta)); the sum rule's -(2, 2) / |(2, 2)| * sqrt(2 delta) would also lower both
    here, but with gradients (1, 0) and (-1.5, 2) it raises the first: there the min-norm point is interior.
    Opposite gradients ((1, 0), (-1, 0): 0 in the hull, no step lowers both) fall back to the sum rule."""
    delta = 0.02
    radius = np.sqrt(2 * delta)

    def recovery(B, c):
        B = np.asarray(B, np.float64)
        sol = cd.cpo_dual_multi(
            1.0,
            jnp.asarray(B @ np.array([0.0, 1.0]), jnp.float32),
            jnp.asarray(B @ B.T, jnp.float32),
            jnp.asarray(c, jnp.float32),
            delta,
        )
        assert not bool(sol.feasible)
        return np.asarray(sol.coef_b, np.float64) @ B  # H = I: H^-1 B^T w = B^T w

    np.testing.assert_allclose(recovery([[1.0, 0.0], [1.0, 2.0]], [1.0, 1.0]), [-radius, 0.0], atol=1e-6)
    B = np.array([[1.0, 0.0], [-1.5, 2.0]])
    x = recovery(B, [1.0, 1.0])
    w1 = (B[1] @ B[1] - B[0] @ B[1]) / ((B[0] - B[1]) @ (B[0] - B[1]))  # min-norm point of a segment
    point = w1 * B[0] + (1 - w1) * B[1]
    np.testing.assert_allclose(x, -radius * point / np.linalg.norm(point), atol=1e-5)
    np.testing.assert_allclose(B @ x, -radius * np.linalg.norm(point), rtol=1e-5)  # both decrease, equally
    assert B[0] @ -(B.sum(axis=0)) > 0  # the sum rule would raise the first
    # only the violated constraints count: a satisfied third constraint with a huge gradient is ignored
    x3 = cd.cpo_dual_multi(
        1.0,
        jnp.zeros(3),
        jnp.asarray(np.vstack([B, [0.0, -50.0]]) @ np.vstack([B, [0.0, -50.0]]).T, jnp.float32),
        jnp.asarray([1.0, 1.0, -0.01]),
        delta,
    )
    np.testing.assert_allclose(np.asarray(x3.coef_b)[:2] @ B, x, atol=1e-5)
    assert float(np.asarray(x3.coef_b)[2]) == 0.0
    # 0 in the hull: the fallback, the sum of the violated constraints (here a zero step)
    np.testing.assert_allclose(recovery([[1.0, 0.0], [-1.0, 0.0]], [1.0, 1.0]), [0.0, 0.0], atol=1e-6)
    w, used = cd.recovery_weights(jnp.asarray([[1.0, -1.0], [-1.0, 1.0]]), jnp.asarray([True, True]))
    np.testing.assert_array_equal(np.asarray(w), [1.0, 1.0])
    assert not bool(used)


# --------------------------------------------------------------------------- PCPO


_pcpo_proj = jax.jit(cd.pcpo_projection, static_argnames="norm")
_pcpo_step = jax.jit(cd.pcpo_step, static_argnames="norm")


def test_pcpo_projection_matches_slsqp_projection():
    rng = np.random.default_rng(7)
    n_proj = 0
    for _ in range(12):
        H = _spd(rng, N_DIM)
        g, b = rng.normal(size=N_DIM), rng.normal(size=N_DIM)
        delta = 0.05
        hinv_g, hinv_b = np.linalg.solve(H, g), np.linalg.solve(H, b)
        x_r = np.sqrt(2 * delta / (g @ hinv_g)) * hinv_g
        c = rng.normal() * 0.3
        for norm, L in (("kl", H), ("l2", np.eye(N_DIM))):
            got = np.asarray(
                _pcpo_proj(jnp.asarray(x_r), jnp.asarray(b), c, hinv_cost_grad=jnp.asarray(hinv_b), norm=norm)
            )
            cons = [{"type": "ineq", "fun": lambda x: -(b @ x + c), "jac": lambda x: -b}]
            res = minimize(
                lambda x: 0.5 * (x - x_r) @ L @ (x - x_r),
                x_r,
                jac=lambda x: L @ (x - x_r),
                constraints=cons,
                method="SLSQP",
                options={"ftol": 1e-14},
            )
            np.testing.assert_allclose(got, res.x, atol=1e-4)
            if b @ x_r + c > 0:
                n_proj += 1
                assert b @ got + c == pytest.approx(0.0, abs=1e-5)  # lands on the boundary
            else:
                np.testing.assert_allclose(got, x_r, rtol=1e-6)  # feasible: untouched
            full = np.asarray(
                _pcpo_step(
                    jnp.asarray(g), jnp.asarray(hinv_g), jnp.asarray(b), jnp.asarray(hinv_b), c, delta, norm=norm
                )
            )
            np.testing.assert_allclose(full, got, atol=1e-5)
    assert n_proj > 0
    # Vanishing cost gradient: no projection, no NaN.
    out = cd.pcpo_projection(jnp.ones(3), jnp.zeros(3), 1.0, hinv_cost_grad=jnp.zeros(3))
    np.testing.assert_array_equal(np.asarray(out), np.ones(3))
    with pytest.raises(ValueError):
        cd.pcpo_projection(jnp.ones(3), jnp.ones(3), 1.0, norm="kl")


_pcpo_multi = jax.jit(cd.pcpo_projection_multi)


def _slsqp_projection(x_r, H, B, c):
    cons = [{"type": "ineq", "fun": lambda x: -(B @ x + c), "jac": lambda x: -B}]
    res = minimize(
        lambda x: 0.5 * (x - x_r) @ H @ (x - x_r),
        x_r,
        jac=lambda x: H @ (x - x_r),
        constraints=cons,
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 500},
    )
    return res.x, res.success


@pytest.mark.parametrize("m", [2, 3])
def test_pcpo_projection_multi_matches_slsqp(m):
    """The KL projection of the reward step onto the intersection of m linearised constraints (PCPO eq. 4 with
    several rows) against SLSQP, with none, one and several constraints active."""
    rng = np.random.default_rng(30 + m)
    n_active = set()
    for i in range(40):
        n = N_DIM + 1
        H = _spd(rng, n)
        g, B = rng.normal(size=n), rng.normal(size=(m, n))
        if i % 2:
            B += rng.normal(size=n)  # correlated rows: several active at once
        delta = 0.05
        x_r = np.sqrt(2 * delta / (g @ np.linalg.solve(H, g))) * np.linalg.solve(H, g)
        c = rng.normal(size=m) * 0.3 - 0.5 * (B @ x_r)
        if i == 5:  # a duplicated constraint (singular S)
            B[1], c[1] = B[0], c[0]
        hinv_B = np.linalg.solve(H, B.T).T
        got = np.asarray(
            _pcpo_multi(
                jnp.asarray(x_r, jnp.float32),
                jnp.asarray(B, jnp.float32),
                jnp.asarray(c, jnp.float32),
                jnp.asarray(hinv_B, jnp.float32),
            ),
            np.float64,
        )
        ref, ok = _slsqp_projection(x_r, H, B, c)
        assert ok, i
        scale = np.linalg.norm(x_r) + np.linalg.norm(ref - x_r)
        np.testing.assert_allclose(got, ref, atol=2e-4 * scale)
        assert np.all(B @ got + c <= 1e-3 * (np.abs(c) + np.abs(B @ x_r))), i
        n_active.add(int(np.sum(B @ ref + c > -1e-6 * (np.abs(c) + np.abs(B @ x_r)))))
    assert {0, 1, 2} <= n_active, n_active


def test_pcpo_projection_multi_reduces_to_the_closed_form_and_survives_degenerate_rows():
    rng = np.random.default_rng(8)
    for _ in range(20):
        H = _spd(rng, N_DIM)
        g, b = rng.normal(size=N_DIM), rng.normal(size=N_DIM)
        hinv_g, hinv_b = np.linalg.solve(H, g), np.linalg.solve(H, b)
        x_r = jnp.asarray(np.sqrt(0.1 / (g @ hinv_g)) * hinv_g, jnp.float32)
        c = rng.normal() * 0.3
        single = _pcpo_proj(
            x_r, jnp.asarray(b, jnp.float32), c, hinv_cost_grad=jnp.asarray(hinv_b, jnp.float32), norm="kl"
        )
        multi = _pcpo_multi(
            x_r,
            jnp.asarray(b[None], jnp.float32),
            jnp.asarray([c], jnp.float32),
            jnp.asarray(hinv_b[None], jnp.float32),
        )
        np.testing.assert_allclose(np.asarray(multi), np.asarray(single), rtol=1e-4, atol=1e-6)
    # a vanishing gradient with c > 0 (no step can move it) is skipped, as the closed form skips it; the other
    # constraint is still projected onto
    x_r = jnp.asarray([1.0, 1.0])
    out = np.asarray(
        cd.pcpo_projection_multi(
            x_r, jnp.asarray([[0.0, 0.0], [1.0, 0.0]]), jnp.asarray([1.0, -0.5]), jnp.asarray([[0.0, 0.0], [1.0, 0.0]])
        )
    )
    np.testing.assert_allclose(out, [0.5, 1.0], atol=1e-6)
    # contradictory rows (x_1 <= -1 and x_1 >= 1): finite, the least largest violation
    out = np.asarray(
        cd.pcpo_projection_multi(
            x_r, jnp.asarray([[1.0, 0.0], [-1.0, 0.0]]), jnp.asarray([1.0, 1.0]), jnp.asarray([[1.0, 0.0], [-1.0, 0.0]])
        )
    )
    assert np.all(np.isfinite(out))
    with pytest.raises(ValueError):
        cd.pcpo_projection_multi(jnp.ones(2), jnp.ones((9, 2)), jnp.zeros(9), jnp.ones((9, 2)))
