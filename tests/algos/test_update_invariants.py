"""Invariants of single updates that one-line slips in the mathematics would break.

* C-TRPO: recovery uses the plain KL (beta = 0, Algorithm 1 line 7 of arXiv:2411.02957), and the line
  search refuses steps that lower the objective (the reward when safe, -J_c when recovering);
* P3O: the slack of eq. 11 is (1 - gamma_c)(J_c - b);
* the trust-region family only centres the cost advantage (its scale is kept);
* CPO, case 1 (c >= 0, part of the trust region feasible): the line search accepts a step that lowers
  the cost surrogate without asking for a reward improvement -- and asks for one in case 2;
* the Lagrange multipliers: Adam against a hand-written bias-corrected Adam, and the PID Lagrangian
  against Stooke et al. 2020's equations written out as a time-indexed sequence.

Acceptance tests are probed directly: the algorithm's ``line_search`` is wrapped so that, inside the
same compiled ``policy_step``, the ``accept`` closure the step built is evaluated on hand-made candidate
metrics as well.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import agent_for, linearise, make_algo, make_batch  # noqa: E402  (shared synthetic batches)
from jax.flatten_util import ravel_pytree

from saferl.algos import base
from saferl.algos.p3o import exact_penalty_cost_loss
from saferl.core import cpo_dual as cd
from saferl.core import lagrange, networks

LIMIT = 10.0


def _flat(params):
    return np.asarray(ravel_pytree(params)[0], np.float64)


def _probe(kl, reward, cost):
    return {"kl": jnp.float32(kl), "reward": jnp.float32(reward), "cost": jnp.asarray([cost], jnp.float32)}


ORIGIN = _probe(0.0, 0.0, 0.0)


def _probing_policy_step(algo, probes):
    """jit(algo.policy_step) whose metrics also hold ``probe_<name>`` = accept(m, m0) for each probe."""
    original = algo.line_search

    def line_search(agent, batch, adv_r, adv_c, scale, step, accept):
        params, metrics = original(agent, batch, adv_r, adv_c, scale, step, accept)
        for name, (m, m0) in probes.items():
            metrics["probe_" + name] = accept(m, m0)
        return params, metrics

    algo.line_search = line_search  # policy_step calls self.line_search
    return jax.jit(algo.policy_step)


# --------------------------------------------------------------------------- C-TRPO


@pytest.fixture(scope="module")
def ctrpo_setup():
    algo = make_algo("ctrpo")
    delta = algo.hp["target_kl"]
    probes = {
        # safe: the reward surrogate is the objective
        "reward_down": (_probe(delta / 2, -1e-3, 0.0), ORIGIN),
        "reward_up": (_probe(delta / 2, 1e-3, 0.0), ORIGIN),
        # recovery: -J_c is the objective (whatever the reward does)
        "cost_up": (_probe(delta / 2, 1.0, 1e-3), ORIGIN),
        "cost_down": (_probe(delta / 2, -1.0, -1e-3), ORIGIN),
    }
    step = _probing_policy_step(algo, probes)
    lin = jax.jit(lambda agent, batch: linearise(algo, agent, batch)[:2])
    return algo, step, lin


def test_ctrpo_recovery_drops_the_barrier(ctrpo_setup):
    """Algorithm 1, line 7: while recovering beta = 0, so the step is the plain-KL TRPO step on -A_c,
    -sqrt(2 delta / s) F^-1 b (up to the line search's decay**j), not one shrunk by the barrier's Hessian."""
    algo, step_fn, lin = ctrpo_setup
    agent = agent_for(algo, LIMIT)
    batch = make_batch(algo, agent.actor_params, cost=LIMIT + 40.0)
    grads, hinv = lin(agent, batch)

    beta, _ = algo.barrier_coefficients(agent, grads, jnp.asarray(True), jnp.asarray([True]))
    assert np.all(np.asarray(beta) == 0.0)
    beta_safe, _ = algo.barrier_coefficients(agent, grads, jnp.asarray(False), jnp.asarray([False]))
    assert np.all(np.asarray(beta_safe) == algo.hp["beta"])

    new, metrics = step_fn(agent, batch)
    assert float(metrics["recovering"]) == 1.0 and float(metrics["accepted"]) == 1.0
    b, hinv_b = np.asarray(grads.B[0], np.float64), np.asarray(hinv[1], np.float64)
    s = b @ hinv_b
    full = -np.sqrt(2.0 * algo.hp["target_kl"] / s) * hinv_b
    taken = _flat(new.actor_params) - _flat(agent.actor_params)
    expected = algo.hp["decay"] ** float(metrics["backtracks"]) * full
    # direction and length, not element by element: the 30 undamped CG iterations on this 82-parameter Fisher
    # leave ~1% per element that depends on the CPU's rounding (an AMD EPYC failed elementwise, 2026-12-02)
    cosine = taken @ expected / (np.linalg.norm(taken) * np.linalg.norm(expected))
    assert cosine > 0.999, cosine
    assert abs(np.linalg.norm(taken) / np.linalg.norm(expected) - 1.0) < 0.02
    assert b @ taken < 0  # the cost surrogate falls


def test_ctrpo_line_search_requires_the_objective_not_to_decrease(ctrpo_setup):
    algo, step_fn, _ = ctrpo_setup
    agent = agent_for(algo, LIMIT)
    _, safe = step_fn(agent, make_batch(algo, agent.actor_params, cost=LIMIT - 5.0))
    assert float(safe["recovering"]) == 0.0
    assert not bool(safe["probe_reward_down"]), "a step lowering the reward surrogate was accepted"
    assert bool(safe["probe_reward_up"])

    _, rec = step_fn(agent, make_batch(algo, agent.actor_params, cost=LIMIT + 40.0))
    assert float(rec["recovering"]) == 1.0
    assert not bool(rec["probe_cost_up"]), "a recovery step raising the cost surrogate was accepted"
    assert bool(rec["probe_cost_down"])


# --------------------------------------------------------------------------- P3O eq. 11


def test_p3o_slack_is_one_minus_gamma_times_the_violation():
    gamma_c = 0.95
    cls = base.get("p3o")
    algo = cls(
        cls.resolve_hparams({"cost_gamma": gamma_c}),
        networks.GaussianActor(3, 1, (8,)),
        networks.Critics(3, 2, (8,)),
        "expected",
    )
    agent = agent_for(algo, LIMIT)
    for cost in (LIMIT + 4.0, LIMIT - 3.0):
        batch = make_batch(algo, agent.actor_params, cost=cost)
        want = (1.0 - gamma_c) * (cost - LIMIT)  # eq. 11 by hand
        np.testing.assert_allclose(float(algo.slack(agent, batch)), want, rtol=1e-5)
        inputs = algo.loss_inputs(agent, batch)
        np.testing.assert_allclose(np.asarray(inputs["slack"]), want, rtol=1e-5)
        # at pi = pi_k the standardised surrogate is 0, so the penalty is kappa * max(0, slack)
        ratio = jnp.ones(batch.obs.shape[0])
        loss = exact_penalty_cost_loss(
            ratio, inputs["cost_advantage"], inputs["slack"][0], algo.hp["clip"], algo.hp["kappa"]
        )
        np.testing.assert_allclose(float(loss), algo.hp["kappa"] * max(want, 0.0), atol=1e-4)


# --------------------------------------------------------------------------- centred cost advantages


@pytest.mark.parametrize("name", ["trpo_lag", "cpo", "pcpo", "ctrpo"])
def test_trust_region_cost_advantage_is_centred_not_standardised(name):
    algo = make_algo(name)
    agent = agent_for(algo, LIMIT)
    batch = make_batch(algo, agent.actor_params, cost=LIMIT)
    raw = batch.advantages.at[:, 1].multiply(6.0).at[:, 1].add(2.5)  # std far from 1, mean far from 0
    batch = batch.replace(advantages=raw)
    raw_c = np.asarray(raw[:, 1], np.float64)
    assert raw_c.std() > 2.0

    _, adv_c = algo.advantages(batch)
    adv_c = np.asarray(adv_c[:, 0], np.float64)
    np.testing.assert_allclose(adv_c.mean(), 0.0, atol=1e-4 * raw_c.std())
    np.testing.assert_allclose(adv_c.std(), raw_c.std(), rtol=1e-4)
    np.testing.assert_allclose(adv_c, raw_c - raw_c.mean(), rtol=1e-4, atol=1e-4)

    # and the update's cost gradient b is that of s * E[ratio (A_c - mean A_c)] on the raw advantage
    adv_r, adv_c_used = algo.advantages(batch)
    grads = algo.gradients(agent, batch, adv_r, adv_c_used)
    flat, unravel = ravel_pytree(agent.actor_params)
    centred = jnp.asarray(raw_c - raw_c.mean(), jnp.float32)
    scale = algo.surrogate_scale(batch)

    def cost_surrogate(p):
        logp = algo.actor.log_prob(algo.actor.distribution(unravel(p), batch.obs), batch.action)
        return scale * jnp.mean(jnp.exp(logp - batch.log_prob) * centred)

    np.testing.assert_allclose(
        np.asarray(grads.B[0]),
        np.asarray(jax.grad(cost_surrogate)(flat)),
        rtol=1e-3,
        atol=1e-5 * float(jnp.abs(grads.B[0]).max()),
    )


# --------------------------------------------------------------------------- CPO case 1


@pytest.fixture(scope="module")
def cpo_setup():
    algo = make_algo("cpo", cg_damping=1e-3)
    delta = algo.hp["target_kl"]
    probes = {
        "cost_down_reward_down": (_probe(delta / 2, -1e-3, -1e-3), ORIGIN),
        "cost_up_reward_up": (_probe(delta / 2, 1e-3, 1e-3), ORIGIN),
    }
    step = _probing_policy_step(algo, probes)
    lin = jax.jit(lambda agent, batch: linearise(algo, agent, batch)[:2])
    return algo, step, lin


def test_cpo_case_1_accepts_a_cost_decrease_without_reward_improvement(cpo_setup):
    algo, step_fn, lin = cpo_setup
    delta = algo.hp["target_kl"]
    agent = agent_for(algo, LIMIT)
    grads, hinv = lin(agent, make_batch(algo, agent.actor_params, cost=LIMIT))
    s = float(jnp.vdot(grads.B[0], hinv[1]))
    c = 0.5 * np.sqrt(2.0 * delta * s)  # c > 0 and c^2 / s = delta / 2 < 2 delta: case 1
    batch = make_batch(algo, agent.actor_params, cost=LIMIT + c)
    _, metrics = step_fn(agent, batch)
    assert int(metrics["case"]) == cd.CASE_PARTIAL_INFEASIBLE_ORIGIN
    assert bool(metrics["probe_cost_down_reward_down"]), "case 1 asked for a reward improvement"
    assert not bool(metrics["probe_cost_up_reward_up"])  # the cost may not grow where x = 0 is infeasible


def test_cpo_case_2_still_requires_a_reward_improvement(cpo_setup):
    algo, step_fn, _ = cpo_setup
    agent = agent_for(algo, LIMIT)
    _, metrics = step_fn(agent, make_batch(algo, agent.actor_params, cost=LIMIT - 1e-3))
    assert int(metrics["case"]) in (cd.CASE_PARTIAL_FEASIBLE_ORIGIN, cd.CASE_WHOLE_REGION_FEASIBLE)
    assert not bool(metrics["probe_cost_down_reward_down"])


# --------------------------------------------------------------------------- Lagrange multipliers


def test_adam_multiplier_matches_hand_written_adam():
    lr, b1, b2, eps = 0.05, 0.9, 0.999, 1e-8  # optax.adam's defaults
    costs = [4.0, 2.0, 12.0, 14.0, 13.0, 11.0, 9.0, 1.0, 1.0, 2.0, 12.0, 10.5]
    limit = 10.0
    state = lagrange.init(0.1, "adam", lr)
    step = jax.jit(lambda st, j: lagrange.update(st, j, jnp.float32(limit), "adam", lr))
    lam, m, v = 0.1, 0.0, 0.0
    hit_zero = False
    for t, cost in enumerate(costs, start=1):
        grad = -(cost - limit)
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad**2
        m_hat, v_hat = m / (1 - b1**t), v / (1 - b2**t)
        lam = max(lam - lr * m_hat / (np.sqrt(v_hat) + eps), 0.0)
        hit_zero |= lam == 0.0
        state = step(state, jnp.float32(cost))
        np.testing.assert_allclose(float(state.multiplier), lam, rtol=1e-5, atol=1e-6, err_msg=f"step {t}")
    assert hit_zero  # the projection onto lambda >= 0 was exercised


def test_pid_multiplier_matches_stooke_et_al_equations():
    """Stooke, Achiam, Abbeel 2020 (Alg. 2 with Sec. 5's smoothing), as a sequence over t:
    e_t = J_t - b,   P_t = EMA_p(e)_t,   I_t = [I_{t-1} + Ki e_t]_+,
    S_t = EMA_d(J)_t,   D_t = [S_t - S_{t-k}]_+  (k = d_delay - 1 updates back; S before t = 0 is S_0 = J_0),
    lambda_t = clip(Kp P_t + I_t + Kd D_t, 0, lambda_max)."""
    kp, ki, kd, p_ema, d_ema, d_delay, lam_max = 0.3, 0.05, 2.0, 0.8, 0.6, 3, 5.0
    limit = 10.0
    J = np.array(
        [12.0, 15.0, 20.0, 18.0, 11.0, 6.0, 3.0, 9.0, 30.0, 40.0, 2.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 14.0], np.float64
    )
    k = d_delay - 1
    e = J - limit
    P = np.empty_like(J)
    S = np.empty_like(J)
    integral = np.empty_like(J)
    lam = np.empty_like(J)
    for t in range(len(J)):
        P[t] = e[0] if t == 0 else p_ema * P[t - 1] + (1 - p_ema) * e[t]
        S[t] = J[0] if t == 0 else d_ema * S[t - 1] + (1 - d_ema) * J[t]
        integral[t] = max((integral[t - 1] if t else 0.0) + ki * e[t], 0.0)
        D = max(S[t] - S[max(t - k, 0)], 0.0)
        lam[t] = min(max(kp * P[t] + integral[t] + kd * D, 0.0), lam_max)
    assert lam.max() == lam_max and lam.min() == 0.0  # both clips exercised

    state = lagrange.pid_init(0.0, d_delay)
    step = jax.jit(lambda st, j: lagrange.pid_update(st, j, jnp.float32(limit), kp, ki, kd, p_ema, d_ema, lam_max))
    for t, cost in enumerate(J):
        state = step(state, jnp.float32(cost))
        np.testing.assert_allclose(float(state.multiplier), lam[t], rtol=1e-5, atol=1e-5, err_msg=f"t = {t}")
        np.testing.assert_allclose(float(state.integral), integral[t], rtol=1e-5, atol=1e-6)
    before = state
    state = step(state, jnp.float32(np.nan))  # no finished episode: nothing moves
    np.testing.assert_array_equal(np.asarray(state.multiplier), np.asarray(before.multiplier))
