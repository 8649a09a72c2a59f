"""C-TRPO: the surrogate divergence (eq. 58-61), its Hessian (App. B.2.3), the beta -> 0 limit
(Prop. 4.2), the hysteresis switch (Algorithm 1), and several constraints at once (Sec. 3.2)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import agent_for, make_algo, make_batch  # noqa: E402  (shared synthetic batches)
from jax.flatten_util import ravel_pytree

from saferl.algos.ctrpo import next_recovering, phi_second_derivative, surrogate_phi_divergence
from saferl.core import cpo_dual as cd
from saferl.core.rollout import Batch

# --------------------------------------------------------------------------- eq. 58-61 by hand


def _normal_logpdf(x, mean, log_std):
    return -0.5 * ((x - mean) / np.exp(log_std)) ** 2 - log_std - 0.5 * np.log(2 * np.pi)


@pytest.mark.parametrize("kind", ["xlogx", "neglog"])
def test_divergence_matches_eq_61_on_hand_built_distributions(kind):
    algo = make_algo("ctrpo", hidden=(), obs_dim=2, phi=kind)
    obs = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, -1.0], [0.5, 0.5]], np.float32)
    action = np.array([[0.3], [-0.2], [0.1], [0.4]], np.float32)
    w_old, b_old, ls_old = np.array([[0.2], [-0.1]]), np.array([0.05]), np.array([-0.5])
    w_new, b_new, ls_new = np.array([[0.3], [-0.05]]), np.array([0.0]), np.array([-0.4])
    old = {
        "mean": [{"w": jnp.asarray(w_old, jnp.float32), "b": jnp.asarray(b_old, jnp.float32)}],
        "log_std": jnp.asarray(ls_old, jnp.float32),
    }
    new = {
        "mean": [{"w": jnp.asarray(w_new, jnp.float32), "b": jnp.asarray(b_new, jnp.float32)}],
        "log_std": jnp.asarray(ls_new, jnp.float32),
    }
    adv_c = np.array([1.0, -2.0, 0.5, 0.5], np.float32)  # mean zero
    dist = algo.actor.distribution(old, jnp.asarray(obs))
    batch = Batch(
        obs=jnp.asarray(obs),
        action=jnp.asarray(action),
        log_prob=algo.actor.log_prob(dist, jnp.asarray(action)),
        dist=dist,
        advantages=None,
        returns=None,
        values=None,
        episode_done=None,
        episode_return=None,
        episode_cost=None,
        episode_discounted_cost=None,
        episode_length=None,
    )
    scale, beta, margin = 40.0, 0.7, np.array([2.5])
    _, cost = algo.surrogates(new, batch, jnp.zeros(4), jnp.asarray(adv_c)[:, None], scale)
    ours = algo.divergence(algo.mean_kl(new, batch), cost, jnp.asarray([beta]), jnp.asarray(margin, jnp.float32))

    # by hand, float64: eq. 58 (mean KL(pi_k || pi)), eq. 59 (importance-weighted cost advantage)
    mu_old, mu_new = obs @ w_old + b_old, obs @ w_new + b_new
    kl = np.mean(ls_new - ls_old + (np.exp(2 * ls_old) + (mu_old - mu_new) ** 2) / (2 * np.exp(2 * ls_new)) - 0.5)
    ratio = np.exp(_normal_logpdf(action, mu_new, ls_new) - _normal_logpdf(action, mu_old, ls_old))[:, 0]
    a_hat = scale * np.mean(ratio * adv_c)
    d = margin[0]
    if kind == "xlogx":
        d_phi = a_hat - (d - a_hat) * np.log(d / (d - a_hat))  # eq. 61
    else:  # eq. 60 with phi = -log x (and the + phi'(d) A sign of eq. 18)
        d_phi = -np.log(d - a_hat) + np.log(d) - a_hat / d
    assert abs(a_hat) > 0.05  # the test is not vacuous
    np.testing.assert_allclose(float(cost[0]), a_hat, rtol=1e-5)
    np.testing.assert_allclose(float(ours), kl + beta * d_phi, rtol=1e-5)


@pytest.mark.parametrize("kind", ["xlogx", "neglog"])
def test_psi_is_the_bregman_divergence_and_infinite_outside_the_domain(kind):
    d = 2.0
    a = np.array([-3.0, -0.5, -1e-3, 0.0, 1e-3, 0.5, 1.9], np.float32)
    phi = {"xlogx": lambda x: x * np.log(x), "neglog": lambda x: -np.log(x)}[kind]
    dphi = {"xlogx": lambda x: np.log(x) + 1.0, "neglog": lambda x: -1.0 / x}[kind]
    a64 = a.astype(np.float64)
    generic = phi(d - a64) - phi(d) + dphi(d) * a64  # eq. 18 / 56
    ours = np.asarray(surrogate_phi_divergence(jnp.asarray(a), jnp.float32(d), kind))
    np.testing.assert_allclose(ours, generic, rtol=2e-3, atol=1e-7)
    assert np.all(ours >= 0) and ours[3] == 0
    out = surrogate_phi_divergence(jnp.asarray([2.0, 3.0]), jnp.float32(d), kind)
    assert np.all(np.isinf(np.asarray(out)))
    # Psi''(0) = phi''(d) (App. B.2.3, step b)
    second = jax.grad(jax.grad(lambda x: surrogate_phi_divergence(x, jnp.float32(d), kind)))(jnp.float32(0.0))
    np.testing.assert_allclose(float(second), float(phi_second_derivative(jnp.float32(d), kind)), rtol=1e-4)


# --------------------------------------------------------------------------- App. B.2.3: closed-form Hessian


@pytest.mark.parametrize("kind,m", [("xlogx", 1), ("neglog", 2)])
def test_closed_form_hessian_equals_autodiff_hvp_of_surrogate_divergence(kind, m):
    algo = make_algo("ctrpo", m=m, phi=kind, beta=0.5)
    limit = np.array([20.0, 30.0][:m])
    agent = agent_for(algo, limit)
    batch = make_batch(algo, agent.actor_params, cost=np.array([12.0, 25.0][:m]), m=m)

    @jax.jit
    def both(agent, batch, v):
        adv_r, adv_c = algo.advantages(batch)
        grads = algo.gradients(agent, batch, adv_r, adv_c)
        recovering, violated = next_recovering(
            agent.extra["recovering"], grads.cost, grads.limit, agent.extra["hysteresis"]
        )
        beta, margin = algo.barrier_coefficients(agent, grads, recovering, violated)
        flat, unravel = ravel_pytree(agent.actor_params)

        def d_c(p):  # bar D_C(pi_p || pi_k) on the batch, exactly (eq. 14, 16-18)
            _, cost = algo.surrogates(unravel(p), batch, adv_r, adv_c, grads.scale)
            return algo.divergence(algo.mean_kl(unravel(p), batch), cost, beta, margin)

        _, autodiff = jax.jvp(jax.grad(d_c), (flat,), (v,))
        closed = algo.hessian_matvec(agent, batch, grads, beta, margin)(v)  # cg_damping = 0 here
        rank_one = (beta * phi_second_derivative(margin, kind) * (grads.B @ v)) @ grads.B
        return autodiff, closed, rank_one, recovering, beta

    n = ravel_pytree(agent.actor_params)[0].shape[0]
    autodiff, closed, rank_one, recovering, beta = both(agent, batch, jax.random.normal(jax.random.PRNGKey(7), (n,)))
    assert not bool(recovering) and np.all(np.asarray(beta) == 0.5)
    assert float(jnp.linalg.norm(rank_one)) > 0.1 * float(jnp.linalg.norm(closed))  # the barrier term matters
    np.testing.assert_allclose(
        np.asarray(closed), np.asarray(autodiff), rtol=2e-3, atol=2e-4 * float(jnp.abs(autodiff).max())
    )


# --------------------------------------------------------------------------- Prop. 4.2: beta -> 0 gives CPO


def _exact_ctrpo_step(g, H, b_vec, margin, beta, delta, kind, n_angles=20000):
    """max g^T x s.t. x^T H x / 2 + beta Psi(b^T x) <= delta, by search over rays (2-D)."""
    ang = np.linspace(0, 2 * np.pi, n_angles, endpoint=False)
    u = np.stack([np.cos(ang), np.sin(ang)], 1)

    def div(rho):
        x = rho[:, None] * u
        quad = 0.5 * np.einsum("ki,ij,kj->k", x, H, x)
        psi = np.asarray(surrogate_phi_divergence(jnp.asarray(x @ b_vec, jnp.float32), jnp.float32(margin), kind))
        return quad + beta * psi

    lo, hi = np.zeros(n_angles), np.full(n_angles, 10.0)
    for _ in range(50):  # the feasible part of each ray is [0, rho*] (convex constraint, 0 at rho = 0)
        mid = 0.5 * (lo + hi)
        ok = div(mid) <= delta
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    x = lo[:, None] * u
    return x[np.argmax(x @ g)]


@pytest.mark.parametrize("kind", ["xlogx", "neglog"])
def test_ctrpo_step_approaches_cpo_step_as_beta_goes_to_zero(kind):
    H = np.array([[2.0, 0.3], [0.3, 1.0]])
    g, b_vec = np.array([1.0, 0.4]), np.array([0.8, -0.2])
    delta, c = 0.05, -0.1  # feasible origin, the boundary cuts the trust region (CPO case 2)
    Hinv = np.linalg.inv(H)
    dual = cd.cpo_dual(g @ Hinv @ g, g @ Hinv @ b_vec, b_vec @ Hinv @ b_vec, c, delta)
    assert int(dual.case) == cd.CASE_PARTIAL_FEASIBLE_ORIGIN
    x_cpo = np.asarray(cd.cpo_step(dual, Hinv @ g, Hinv @ b_vec))
    assert abs(b_vec @ x_cpo + c) < 1e-4  # constraint active
    errors, costs = [], []
    for beta in (1.0, 1e-2, 1e-4):
        x = _exact_ctrpo_step(g, H, b_vec, -c, beta, delta, kind)
        errors.append(np.linalg.norm(x - x_cpo) / np.linalg.norm(x_cpo))
        costs.append(b_vec @ x)
    assert errors[0] > errors[1] > errors[2] and errors[2] < 0.02, errors
    assert costs[0] < costs[1] < costs[2] < -c + 1e-6  # more conservative for larger beta, always safe


# --------------------------------------------------------------------------- Algorithm 1: hysteresis


def test_hysteresis_switch():
    limit, hyst = jnp.float32(10.0), jnp.float32(0.8)
    rec = jnp.asarray(False)
    trace = []
    for cost in (9.0, 10.0, 10.5, 9.5, 8.5, 8.0, 9.9, 10.1):
        rec, _ = next_recovering(rec, jnp.asarray([cost]), limit, hyst)
        trace.append(bool(rec))
    # enter above b = 10; stay while above b_H = 8; leave at <= 8; re-enter only above 10
    assert trace == [False, False, True, True, True, False, False, True]


def test_recovery_step_lowers_the_cost_surrogate_and_is_remembered():
    algo = make_algo("ctrpo", cg_damping=0.1)
    agent = agent_for(algo, 10.0)
    step = jax.jit(algo.policy_step)
    flags = []
    for cost in (12.0, 9.0, 7.0):
        batch = make_batch(algo, agent.actor_params, cost=cost)
        new, metrics = step(agent, batch)
        adv_r, adv_c = algo.advantages(batch)
        _, c_new = algo.surrogates(new.actor_params, batch, adv_r, adv_c, algo.surrogate_scale(batch))
        r_new, _ = algo.surrogates(new.actor_params, batch, adv_r, adv_c, algo.surrogate_scale(batch))
        flags.append(bool(new.extra["recovering"]))
        assert float(metrics["accepted"]) == 1.0
        if flags[-1]:
            assert float(c_new[0]) < 0  # recovery: minimise the cost (Algorithm 1, line 7)
        else:
            assert float(r_new) > float(jnp.mean(adv_r))  # safe: reward surrogate improves
        agent = new
    assert flags == [True, True, False]  # 9 is in (b_H, b]: still recovering


# --------------------------------------------------------------------------- several constraints (Sec. 3.2)


def test_two_constraints_safe_step_respects_both_barriers():
    algo = make_algo("ctrpo", m=2, cg_damping=0.1)
    agent = agent_for(algo, [10.0, 10.0])
    batch = make_batch(algo, agent.actor_params, cost=[9.0, 5.0], m=2)
    step = jax.jit(algo.policy_step)
    new, metrics = step(agent, batch)
    adv_r, adv_c = algo.advantages(batch)
    _, c_new = algo.surrogates(new.actor_params, batch, adv_r, adv_c, algo.surrogate_scale(batch))
    assert float(metrics["accepted"]) == 1.0 and not bool(new.extra["recovering"])
    assert np.all(np.asarray(c_new) < np.array([1.0, 5.0]))  # inside both barrier domains
    # beta traced: a larger beta gives a step that raises the tighter constraint's cost less
    big = agent.replace(extra={**agent.extra, "beta": jnp.float32(20.0)})
    new_big, _ = step(big, batch)
    _, c_big = algo.surrogates(new_big.actor_params, batch, adv_r, adv_c, algo.surrogate_scale(batch))
    assert abs(float(c_big[0])) < abs(float(c_new[0]))  # the barrier's curvature slows motion along b_1


def test_two_constraints_recovery_on_one_keeps_the_others_barrier():
    """Recovering on a violated constraint must not push a satisfied one over its limit: the satisfied
    constraint keeps its barrier during the recovery step (beta_2 > 0, beta_1 = 0)."""
    algo = make_algo("ctrpo", m=2, cg_damping=0.1)
    agent = agent_for(algo, [10.0, 10.0])
    batch = make_batch(algo, agent.actor_params, cost=[15.0, 9.9], m=2)
    # the second channel's cost rises where the first one's falls
    adv = batch.advantages
    batch = batch.replace(advantages=adv.at[:, 2].set(-adv[:, 1] + 0.1 * adv[:, 2]))
    adv_r, adv_c = algo.advantages(batch)
    grads = algo.gradients(agent, batch, adv_r, adv_c)
    recovering, violated = next_recovering(
        agent.extra["recovering"], grads.cost, grads.limit, agent.extra["hysteresis"]
    )
    beta, margin = algo.barrier_coefficients(agent, grads, recovering, violated)
    np.testing.assert_array_equal(np.asarray(beta), [0.0, algo.hp["beta"]])
    new, metrics = jax.jit(algo.policy_step)(agent, batch)
    _, c_new = algo.surrogates(new.actor_params, batch, adv_r, adv_c, grads.scale)
    assert float(metrics["recovering"]) == 1.0 and float(metrics["accepted"]) == 1.0
    assert float(c_new[0]) < 0.0  # the violated constraint's cost surrogate falls
    assert float(c_new[1]) < float(margin[1])  # the satisfied one stays inside its limit (A_2 < b_2 - J_c,2)
    # without the barrier (every beta 0 while recovering, the single-constraint rule) the same step
    # would cross it: the test has teeth
    keep = algo.barrier_coefficients
    algo.barrier_coefficients = lambda *args: (jnp.zeros(2), keep(*args)[1])
    try:
        crossed, _ = algo.policy_step(agent, batch)
    finally:
        algo.barrier_coefficients = keep
    _, c_plain = algo.surrogates(crossed.actor_params, batch, adv_r, adv_c, grads.scale)
    assert float(c_plain[1]) > float(margin[1])
