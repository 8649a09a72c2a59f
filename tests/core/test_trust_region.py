"""Checks of the trust-region machinery against dense linear algebra.

* CG == numpy.linalg.solve on random SPD matrices (well and ill conditioned).
* Fisher-vector products == dense Hessian of the mean KL (jax.hessian) ==
  closed-form Fisher J^T F_dist J == E[grad log pi grad log pi^T], on a tiny
  MLP with a Gaussian and with a categorical head.
* The line search returns the first accepted candidate, or a zero step.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from saferl.core import trust_region as tr

# --------------------------------------------------------------------------- helpers


def _spd(rng, n, eigs):
    q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return (q * eigs) @ q.T


def _mlp_init(seed, sizes):
    rng = np.random.default_rng(seed)
    return [
        {
            "w": jnp.asarray(rng.normal(size=(n_in, n_out)) / np.sqrt(n_in), jnp.float32),
            "b": jnp.asarray(0.1 * rng.normal(size=n_out), jnp.float32),
        }
        for n_in, n_out in zip(sizes[:-1], sizes[1:])
    ]


def _mlp(params, x):
    for layer in params[:-1]:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


OBS = jnp.asarray(np.random.default_rng(0).normal(size=(6, 3)), jnp.float32)
ACT_DIM, N_ACTIONS = 2, 4
DAMPING = 0.1


def _gaussian_policy(params, obs):
    return _mlp(params["mlp"], obs), params["log_std"]


def _gaussian_kl_fn(params0):
    mean0, log_std0 = jax.lax.stop_gradient(_gaussian_policy(params0, OBS))

    def kl_fn(p):
        mean, log_std = _gaussian_policy(p, OBS)
        return jnp.mean(tr.diag_gaussian_kl(mean0, log_std0, mean, log_std))

    return kl_fn


def _categorical_kl_fn(params0):
    logits0 = jax.lax.stop_gradient(_mlp(params0, OBS))

    def kl_fn(p):
        return jnp.mean(tr.categorical_kl(logits0, _mlp(p, OBS)))

    return kl_fn


def _dense_hessian(kl_fn, params):
    flat, unravel = ravel_pytree(params)
    return jax.hessian(lambda f: kl_fn(unravel(f)))(flat)


# --------------------------------------------------------------------------- conjugate gradient


# iters is traced (it only enters the while_loop condition), so the three cases share one compile.
_cg_batch = jax.jit(
    jax.vmap(
        lambda a, b, iters: tr.conjugate_gradient(lambda v: a @ v, b, iters=iters, residual_tol=0.0),
        in_axes=(0, 0, None),
    )
)


@pytest.mark.parametrize(
    "eigs, iters, rtol",
    [
        (np.linspace(0.5, 3.0, 12), 12, 1e-4),  # well conditioned
        (np.logspace(-4, 0, 12), 40, 2e-3),  # condition number 1e4
        (np.repeat([1e-5, 1e-3, 1.0], 4), 6, 1e-2),  # cond 1e5, three clusters: exact in 3 steps
    ],
)
def test_cg_matches_dense_solve(eigs, iters, rtol):
    rng = np.random.default_rng(0)
    n = len(eigs)
    mats = np.stack([_spd(rng, n, eigs) for _ in range(4)])
    bs = rng.normal(size=(4, n))
    expected = np.stack([np.linalg.solve(a, b) for a, b in zip(mats, bs)])

    got = np.asarray(_cg_batch(jnp.asarray(mats, jnp.float32), jnp.asarray(bs, jnp.float32), iters))
    err = np.linalg.norm(got - expected, axis=1) / np.linalg.norm(expected, axis=1)
    assert np.all(err < rtol), err


def test_cg_early_stop_zero_rhs_and_indefinite():
    rng = np.random.default_rng(1)
    a = jnp.asarray(_spd(rng, 8, np.linspace(1.0, 2.0, 8)), jnp.float32)
    b = jnp.asarray(rng.normal(size=8), jnp.float32)
    x, info = tr.conjugate_gradient(lambda v: a @ v, b, iters=50, residual_tol=1e-8, return_info=True)
    assert int(info.iterations) <= 9 and float(info.residual_sq) < 1e-8
    np.testing.assert_allclose(np.asarray(a @ x), np.asarray(b), atol=1e-4)
    # b = 0: zero iterations, x = 0, no NaN.
    x0, info0 = tr.conjugate_gradient(lambda v: a @ v, jnp.zeros(8), iters=10, return_info=True)
    assert int(info0.iterations) == 0 and np.all(np.asarray(x0) == 0)
    # Zero matrix (p^T A p = 0): stops without NaN.
    xz = tr.conjugate_gradient(lambda v: 0.0 * v, b, iters=10, residual_tol=0.0)
    assert np.all(np.isfinite(np.asarray(xz)))


# --------------------------------------------------------------------------- Fisher-vector products


@jax.jit
def _gaussian_quantities(params, vs):
    """Dense Hessian of the mean KL, closed-form Fisher, and the three FVP variants on the rows of vs."""
    kl_fn = _gaussian_kl_fn(params)
    flat, unravel = ravel_pytree(params)
    hess = _dense_hessian(kl_fn, params)

    # Closed-form Fisher: mean_s J_s^T F_dist J_s, J_s = d(mean(s), log_std)/d theta.
    def dist_params(f, s):
        mean, log_std = _gaussian_policy(unravel(f), s[None])
        return jnp.concatenate([mean[0], log_std])

    jac = jax.vmap(lambda s: jax.jacobian(dist_params)(flat, s))(OBS)  # (N, 2d, P)
    mean, log_std = _gaussian_policy(params, OBS)
    f_dist = tr.diag_gaussian_fisher(mean, log_std)  # (N, 2d, 2d)
    fisher = jnp.mean(jnp.einsum("nip,nij,njq->npq", jac, f_dist, jac), axis=0)
    # F_dist at one state equals the Hessian of the KL in the distribution parameters.
    theta0 = jnp.concatenate([mean[0], log_std])

    def kl_theta(t):
        return tr.diag_gaussian_kl(theta0[:ACT_DIM], theta0[ACT_DIM:], t[:ACT_DIM], t[ACT_DIM:])

    hess_dist = jax.hessian(kl_theta)(theta0)

    fvp_tree = jax.vmap(lambda v: ravel_pytree(tr.fisher_vector_product(kl_fn, params, unravel(v), DAMPING))[0])(vs)
    fvp_flat = jax.vmap(lambda v: tr.flat_fisher_vector_product(kl_fn, params, v, DAMPING))(vs)
    matvec, _, _ = tr.make_fisher_matvec(kl_fn, params, DAMPING)
    fvp_lin = jax.vmap(matvec)(vs)
    return hess, fisher, hess_dist, f_dist[0], fvp_tree, fvp_flat, fvp_lin


def test_fvp_gaussian_head_matches_dense_fisher():
    params = {"mlp": _mlp_init(1, (3, 5, ACT_DIM)), "log_std": jnp.array([-0.3, 0.4])}
    n_params = ravel_pytree(params)[0].shape[0]
    vs = jnp.asarray(np.random.default_rng(0).normal(size=(3, n_params)), jnp.float32)
    hess, fisher, hess_dist, f_dist, *fvps = map(np.asarray, _gaussian_quantities(params, vs))
    np.testing.assert_allclose(hess, fisher, atol=2e-5)
    np.testing.assert_allclose(hess_dist, f_dist, rtol=1e-5, atol=1e-6)
    expected = np.asarray(vs) @ (hess + DAMPING * np.eye(n_params)).T
    for got in fvps:
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


@jax.jit
def _categorical_quantities(params, v, g):
    kl_fn = _categorical_kl_fn(params)
    flat, unravel = ravel_pytree(params)
    hess = _dense_hessian(kl_fn, params)

    # E_s E_{a ~ pi} [grad log pi(a|s) grad log pi(a|s)^T], exact sum over the actions.
    def logp(f):
        return jax.nn.log_softmax(_mlp(unravel(f), OBS), axis=-1)  # (N, K)

    scores = jax.jacobian(logp)(flat)  # (N, K, P)
    score_fisher = jnp.einsum("nk,nkp,nkq->pq", jnp.exp(logp(flat)), scores, scores) / OBS.shape[0]
    # Closed form through the logits: J^T (diag p - p p^T) J.
    jac = jax.jacobian(lambda f: _mlp(unravel(f), OBS))(flat)  # (N, K, P)
    logit_fisher = jnp.einsum("nip,nij,njq->pq", jac, tr.categorical_fisher(_mlp(params, OBS)), jac) / OBS.shape[0]
    matvec_lin, flat_p, _ = tr.make_fisher_matvec(kl_fn, params, DAMPING)
    matvec_jvp, _, _ = tr.make_fisher_matvec(kl_fn, params, DAMPING, linearize=False)
    # FVP + CG reproduce a dense damped natural-gradient solve.
    nat = tr.conjugate_gradient(matvec_lin, g, iters=2 * flat.shape[0], residual_tol=1e-12)
    return hess, score_fisher, logit_fisher, flat_p, matvec_lin(v), matvec_jvp(v), nat


def test_fvp_categorical_head_matches_score_outer_product():
    params = _mlp_init(2, (3, 5, N_ACTIONS))
    flat = np.asarray(ravel_pytree(params)[0])
    rng = np.random.default_rng(3)
    v = jnp.asarray(rng.normal(size=flat.shape), jnp.float32)
    g = jnp.asarray(rng.normal(size=flat.shape), jnp.float32)
    hess, score_fisher, logit_fisher, flat_p, fvp_lin, fvp_jvp, nat = map(
        np.asarray, _categorical_quantities(params, v, g)
    )
    np.testing.assert_allclose(hess, score_fisher, atol=2e-5)
    np.testing.assert_allclose(logit_fisher, score_fisher, atol=2e-5)
    np.testing.assert_array_equal(flat_p, flat)
    damped = hess.astype(np.float64) + DAMPING * np.eye(len(flat))
    np.testing.assert_allclose(fvp_lin, damped @ np.asarray(v), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(fvp_jvp, damped @ np.asarray(v), rtol=1e-4, atol=1e-5)
    expected_x = np.linalg.solve(damped, np.asarray(g, np.float64))
    assert np.linalg.norm(nat - expected_x) / np.linalg.norm(expected_x) < 1e-3


@jax.jit
def _kl_examples(p, q):
    mean = jnp.array([[0.3, -1.0]])
    same = tr.diag_gaussian_kl(mean, jnp.array([0.1, 0.2]), mean, jnp.array([0.1, 0.2]))[0]
    one_d = tr.diag_gaussian_kl(jnp.zeros((1, 1)), jnp.zeros(1), jnp.ones((1, 1)), jnp.log(2.0) * jnp.ones(1))[0]
    cat = tr.categorical_kl(jnp.log(p) + 1.0, jnp.log(q) - 2.0)  # logits are shift invariant
    return same, one_d, cat


def test_kl_helpers_basic_identities():
    p, q = np.array([0.2, 0.3, 0.5]), np.array([0.4, 0.4, 0.2])
    same, one_d, cat = map(float, _kl_examples(jnp.asarray(p, jnp.float32), jnp.asarray(q, jnp.float32)))
    assert same == pytest.approx(0.0, abs=1e-7)
    # KL(N(0,1) || N(1, 2^2)) = log 2 + (1 + 1)/8 - 1/2.
    assert one_d == pytest.approx(np.log(2.0) + 2.0 / 8.0 - 0.5, rel=1e-6)
    assert cat == pytest.approx(float(np.sum(p * np.log(p / q))), rel=1e-5)


# --------------------------------------------------------------------------- line search


def _toy_problem(delta):
    """kl = |step|^2 / 2, surrogate = a.step; accept kl <= delta and surrogate > 0."""
    a = jnp.array([1.0, -2.0, 0.5])

    def evaluate(step):
        return {"kl": 0.5 * jnp.sum(step**2), "surrogate": a @ step}

    def accept(m):
        return (m["kl"] <= delta) & (m["surrogate"] > 0)

    return a, evaluate, accept


SEARCHES = [tr.backtracking_line_search, tr.backtracking_line_search_sequential]


@pytest.mark.parametrize("search", SEARCHES)
def test_line_search_picks_first_feasible_and_zero_when_none(search):
    decay, n = 0.8, 15
    full = jnp.array([2.0, -1.0, 1.0])
    kl_full = 0.5 * float(full @ full)

    @jax.jit
    def run(full, delta):
        _, evaluate, accept = _toy_problem(delta)
        return search(evaluate, full, accept=accept, decay=decay, max_backtracks=n, return_metrics=True)

    deltas = np.array([10.0, 0.5, 0.05, 1e-6])
    (res, metrics) = jax.vmap(run, in_axes=(None, 0))(full, jnp.asarray(deltas, jnp.float32))
    for i, delta in enumerate(deltas):
        feasible = [j for j in range(n) if decay ** (2 * j) * kl_full <= delta]
        if feasible:
            j = feasible[0]
            assert bool(res.accepted[i]) and int(res.index[i]) == j
            np.testing.assert_allclose(np.asarray(res.step[i]), decay**j * np.asarray(full), rtol=1e-5)
            assert float(metrics["kl"][i]) == pytest.approx(decay ** (2 * j) * kl_full, rel=1e-4)
        else:
            assert not bool(res.accepted[i]) and int(res.index[i]) == n
            assert np.all(np.asarray(res.step[i]) == 0.0)

    # Surrogate never improves (wrong direction): nothing accepted, zero step.
    res_bad = run(-full, jnp.float32(10.0))[0]
    assert not bool(res_bad.accepted) and int(res_bad.index) == n and np.all(np.asarray(res_bad.step) == 0)


@pytest.mark.parametrize("search", SEARCHES)
def test_line_search_on_pytree_step(search):
    full = {"w": jnp.ones((2, 2)), "b": jnp.array([1.0, 1.0])}

    def evaluate(step):
        sq = sum(jnp.sum(x**2) for x in jax.tree_util.tree_leaves(step))
        return {"kl": 0.5 * sq}

    res = jax.jit(lambda f: search(evaluate, f, accept=lambda m: m["kl"] <= 0.5, decay=0.5, max_backtracks=5))(full)
    # kl_full = 3; 0.25^j * 3 <= 0.5 first at j = 2.
    assert bool(res.accepted) and int(res.index) == 2
    np.testing.assert_allclose(np.asarray(res.step["w"]), 0.25 * np.ones((2, 2)))
