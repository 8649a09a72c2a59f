"""The units of the cost surrogate of the trust-region family (``hparams.cost_scale``,
:mod:`saferl.algos.second_order`): b = grad s * mean(ratio * A_c) against c = J_c - limit.

* CPO's dual picks its case from (g, b, c) and the trust region; with ``per_sample`` (s = 1) b is a
  per-sample quantity, s = b^T H^-1 b is O(1) and the linearised constraint b^T x + c <= 0 only cuts
  the trust region when |c| < sqrt(2 delta s) ~ 0.1: for |c| = O(1) CPO recovers when infeasible and
  takes the plain TRPO step when feasible.  With ``length`` (s = L, the mean episode length, for an
  undiscounted constraint) the same batches give the constrained cases 1 and 2 up to |c| ~ L * 0.1.
  The cases are checked against an independent numpy evaluation of Achiam et al. 2017, App. 10.2.
* On a finite-horizon tabular CMDP with exact values, b^T x predicts the exact change of J_c under
  ``length`` and is smaller by the factor L = T under ``per_sample``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import HP, agent_for, linearise, make_algo, make_batch  # noqa: E402  (shared synthetic-batch helpers)
from jax.flatten_util import ravel_pytree

from saferl.algos import base
from saferl.core import cpo_dual as cd
from saferl.core import networks
from saferl.core.rollout import Batch
from saferl.foundation.spaces import Discrete

LIMIT = 10.0


# --------------------------------------------------------------------------- CPO's case under each scale

EPISODE_LENGTH = 50.0
NETWORK_SEEDS = (0, 1, 2)
#: c = J_c - limit: O(1) offsets both sides of the limit, a tiny one (constrained even per sample) and a
#: large one (beyond sqrt(2 delta s) even in J_c units, where s ~ 0.45 L^2 on these batches)
OFFSETS = (-8.0, -2.0, -0.5, -0.03, 0.03, 0.5, 2.0, 8.0)
#: c in units of each batch's own boundary sqrt(2 delta s): just inside (|k| < 1) and just outside it
BOUNDARY_MULTIPLES = (-3.0, -1.2, -0.85, -0.5, 0.5, 0.85, 1.2, 3.0)


def reference_case(g, b, hinv_g, hinv_b, c, delta):
    """CPO's case (Achiam et al. 2017, App. 10.2; the numbering of their reference code) in float64, and
    how far c^2 / s is from the trust region's 2 delta (relative), so that rounding cannot flip it."""
    g, b, hinv_g, hinv_b = (np.asarray(v, np.float64) for v in (g, b, hinv_g, hinv_b))
    c, delta = float(c), float(delta)
    s = float(b @ hinv_b)
    assert s > 1e-6 and float(g @ hinv_g) > 0.0  # the cost gradient matters (no case 4 here)
    cuts = c * c / s - 2.0 * delta < 0.0  # the boundary b^T x + c = 0 crosses the trust region
    if c < 0.0:
        case = cd.CASE_PARTIAL_FEASIBLE_ORIGIN if cuts else cd.CASE_WHOLE_REGION_FEASIBLE
    else:
        case = cd.CASE_PARTIAL_INFEASIBLE_ORIGIN if cuts else cd.CASE_INFEASIBLE
    return case, abs(c * c / (2.0 * delta * s) - 1.0)


def _checked_cases(results, delta, label):
    """The case CPO reported on every batch, asserted equal to :func:`reference_case` on that batch."""
    grads, hinv, case = results
    want = []
    for i in range(case.shape[0]):
        ref, margin = reference_case(grads.g[i], grads.B[i, 0], hinv[i, 0], hinv[i, 1], grads.c[i, 0], delta)
        assert margin > 0.25, (label, i, float(grads.c[i, 0]), margin)  # the family keeps clear of case boundaries
        want.append(ref)
    case = np.asarray(case).astype(int)
    np.testing.assert_array_equal(case, want, err_msg=f"{label}: CPO's case != App. 10.2")
    return case


def test_cpo_case_distribution_per_sample_vs_length_units():
    """Under ``per_sample`` CPO takes no constrained step (cases 1, 2) unless |c| < ~0.1; under ``length`` the
    same batches (L = 50) give cases 1 and 2 for |c| up to ~5; on every batch the reported case is App. 10.2's."""
    algos = {scale: make_algo("cpo", cost_scale=scale, cg_damping=1e-3) for scale in ("per_sample", "length")}
    delta = algos["length"].hp["target_kl"]
    builder = algos["per_sample"]  # the batches do not depend on the scale: one compile of each helper
    agents, batches, offsets = [], [], []
    for seed in NETWORK_SEEDS:
        agent = agent_for(builder, LIMIT, seed=seed)
        for c in OFFSETS:
            agents.append(agent)
            batches.append(make_batch(builder, agent.actor_params, cost=LIMIT + c, length=EPISODE_LENGTH))
            offsets.append(c)
    stack = lambda items: jax.tree.map(lambda *x: jnp.stack(x), *items)  # noqa: E731
    agents, batches, offsets = stack(agents), stack(batches), np.asarray(offsets)

    solvers = {}
    for scale, algo in algos.items():

        def one(agent, batch, algo=algo):
            grads, hinv, _ = linearise(algo, agent, batch)
            _, metrics = algo.policy_step(agent, batch)  # the case CPO reports
            return grads, hinv, metrics["case"]

        solvers[scale] = jax.jit(jax.vmap(one))
    results = {scale: jax.device_get(solve(agents, batches)) for scale, solve in solvers.items()}

    # the scale itself: s = 1 and s = L (gamma_c = 1), the same batches' b differing by exactly that factor
    (g1, _, _), (gl, _, _) = results["per_sample"], results["length"]
    np.testing.assert_allclose(g1.scale, 1.0)
    np.testing.assert_allclose(gl.scale, EPISODE_LENGTH)
    np.testing.assert_allclose(gl.g, g1.g, rtol=1e-6)
    np.testing.assert_allclose(gl.B, EPISODE_LENGTH * g1.B, rtol=1e-4, atol=1e-6 * np.abs(gl.B).max())
    np.testing.assert_allclose(gl.c[:, 0], offsets, atol=1e-5)

    cases = {scale: _checked_cases(result, delta, scale) for scale, result in results.items()}
    infeasible = offsets > 0
    tiny, huge = np.abs(offsets) < 0.1, np.abs(offsets) > 5.0
    # per sample: whenever |c| is O(1), recovery if infeasible and the TRPO step if feasible -- no constrained step
    np.testing.assert_array_equal(
        cases["per_sample"][~tiny], np.where(infeasible, cd.CASE_INFEASIBLE, cd.CASE_WHOLE_REGION_FEASIBLE)[~tiny]
    )
    # in J_c units the same |c| = O(1) batches are constrained steps (cases 1 and 2) ...
    np.testing.assert_array_equal(
        cases["length"][~huge],
        np.where(infeasible, cd.CASE_PARTIAL_INFEASIBLE_ORIGIN, cd.CASE_PARTIAL_FEASIBLE_ORIGIN)[~huge],
    )
    # ... and the two scales agree only where |c| is tiny or huge for both
    for far in (tiny, huge):
        np.testing.assert_array_equal(cases["per_sample"][far], cases["length"][far])
    constrained = {
        k: int(np.isin(v, (cd.CASE_PARTIAL_INFEASIBLE_ORIGIN, cd.CASE_PARTIAL_FEASIBLE_ORIGIN)).sum())
        for k, v in cases.items()
    }
    assert constrained == {"per_sample": int(tiny.sum()), "length": int((~huge).sum())}, constrained

    # the boundary itself, in each scale's units: c = k sqrt(2 delta s) on the same batches is a constrained
    # step exactly when |k| < 1 (c enters neither g, b nor H, so only the cost estimate changes)
    k = np.tile(BOUNDARY_MULTIPLES, len(NETWORK_SEEDS))
    for scale, solve in solvers.items():
        grads, hinv, _ = results[scale]
        s = np.einsum("in,in->i", grads.B[:, 0].astype(np.float64), hinv[:, 1].astype(np.float64))
        c = k * np.sqrt(2.0 * delta * s)
        shifted = batches.replace(
            episodes={**batches.episodes, "discounted_cost": jnp.asarray(LIMIT + c[:, None], jnp.float32)}
        )
        case = _checked_cases(jax.device_get(solve(agents, shifted)), delta, f"{scale}, c = k sqrt(2 delta s)")
        inside = np.abs(k) < 1.0
        np.testing.assert_array_equal(
            case,
            np.where(
                inside,
                np.where(k > 0, cd.CASE_PARTIAL_INFEASIBLE_ORIGIN, cd.CASE_PARTIAL_FEASIBLE_ORIGIN),
                np.where(k > 0, cd.CASE_INFEASIBLE, cd.CASE_WHOLE_REGION_FEASIBLE),
            ),
        )
        if scale == "per_sample":  # there the boundary is at |c| ~ 0.1 ...
            assert np.all(np.abs(c) < 0.5), c
        else:  # ... and L times further out in J_c units
            assert np.all(np.abs(c)[np.abs(k) >= 0.85] > 3.0), c


# --------------------------------------------------------------------------- b^T x against the exact change of J_c

N_STATES, N_ACTIONS, HORIZON = 3, 2, 5
N_EPISODES = 4000
P = np.random.default_rng(0).dirichlet(np.ones(N_STATES), size=(N_STATES, N_ACTIONS))  # P[s, a, s']
COST = np.array([[0.0, 0.4], [0.3, 0.0], [0.1, 0.5]])  # c(s, a), paid at each of the T steps
MU0 = np.array([0.6, 0.3, 0.1])


def exact_cost(pi):
    """J_c = E[sum_{t<T} c(s_t, a_t)] of the stationary policy ``pi`` (S, A) and the advantages A_t(s, a)
    of the cost, t = 0..T-1, by backward induction (undiscounted, T fixed)."""
    value, advantages = np.zeros(N_STATES), []
    for _ in range(HORIZON):
        q = COST + P @ value  # Q_t(s, a) = c(s, a) + E[V_{t+1}(s')]
        value = (pi * q).sum(axis=1)
        advantages.append(q - value[:, None])
    return float(MU0 @ value), advantages[::-1]


def policy_probs(actor, params):
    """pi(a | s) from the actor, the observation being the one-hot state."""
    logits = actor.distribution(params, jnp.eye(N_STATES, dtype=jnp.float32))["logits"]
    return np.exp(np.asarray(logits, np.float64))


@pytest.fixture(scope="module")
def tabular():
    actor = networks.make_actor(N_STATES, Discrete(N_ACTIONS), (8,), "tanh")
    critics = networks.Critics(N_STATES, 2, (8,))
    cls = base.get("cpo")
    algos = {
        scale: cls(cls.resolve_hparams({**HP, "cost_scale": scale}), actor, critics, "expected")
        for scale in ("per_sample", "length")
    }
    agent = agent_for(algos["length"], 1.0)  # gamma_c = 1: the undiscounted constraint
    params = agent.actor_params  # logits of O(1) (the init's are ~0.01): a policy far from uniform
    params = {"logits": [params["logits"][0], {**params["logits"][1], "w": 100.0 * params["logits"][1]["w"]}]}
    agent = agent.replace(actor_params=params)
    pi = policy_probs(actor, params)
    assert pi.min() > 0.1 and np.abs(pi - 0.5).max() > 0.15
    cost, advantages = exact_cost(pi)

    rng = np.random.default_rng(1)
    state = rng.choice(N_STATES, size=N_EPISODES, p=MU0)
    states, actions, adv_c = [], [], []
    for t in range(HORIZON):  # N_EPISODES time-limited episodes of exactly T steps, sampled from pi
        action = (rng.random(N_EPISODES) >= pi[state, 0]).astype(np.int32)
        states.append(state)
        actions.append(action)
        adv_c.append(advantages[t][state, action])
        cumulative = np.cumsum(P[state, action], axis=1)
        state = np.minimum((rng.random(N_EPISODES)[:, None] >= cumulative).sum(axis=1), N_STATES - 1)
    obs = jnp.asarray(np.eye(N_STATES)[np.concatenate(states)], jnp.float32)
    action = jnp.asarray(np.concatenate(actions))
    adv_c = np.concatenate(adv_c)
    assert adv_c.std() < 0.3  # far from 1: standardising the cost advantage would change b by > 3x
    n = obs.shape[0]
    dist = actor.distribution(params, obs)
    adv = np.stack([rng.standard_normal(n), adv_c], axis=1)  # the reward channel is noise (unused here)
    zeros = jnp.zeros((n,))
    batch = Batch(
        obs=obs,
        action=action,
        log_prob=actor.log_prob(dist, action),
        dist=dist,
        advantages=jnp.asarray(adv, jnp.float32),
        returns=jnp.zeros((n, 2)),
        values=jnp.zeros((n, 2)),
        episode_done=zeros,
        episode_return=zeros,
        episode_cost=jnp.zeros((n, 1)),
        episode_discounted_cost=jnp.zeros((n, 1)),
        episode_length=zeros,
        episodes={"discounted_cost": jnp.asarray([cost], jnp.float32), "length": jnp.float32(HORIZON)},
    )
    return actor, algos, agent, batch, cost


@pytest.mark.parametrize("scale, factor", [("length", 1.0), ("per_sample", float(HORIZON))])
def test_linearised_cost_change_predicts_the_exact_change_of_J_c(tabular, scale, factor):
    """b^T x (times T under ``per_sample``) = J_c(theta + x) - J_c(theta), J_c exact, for small x."""
    actor, algos, agent, batch, cost = tabular
    algo = algos[scale]
    gradients = jax.jit(lambda batch: algo.gradients(agent, batch, *algo.advantages(batch)))
    adv_r, adv_c = algo.advantages(batch)
    grads = gradients(batch)
    np.testing.assert_allclose(float(grads.scale), HORIZON if scale == "length" else 1.0)  # s = L = T
    np.testing.assert_allclose(float(grads.c[0]), cost - 1.0, rtol=1e-5)

    flat, unravel = ravel_pytree(agent.actor_params)
    b = np.asarray(grads.B[0], np.float64)
    base_surrogate = algo.surrogates(agent.actor_params, batch, adv_r, adv_c, grads.scale)[1][0]
    errors = []
    for size in (1e-2, 5e-3):  # the halved step checks that second-order terms are negligible
        x = -size * b / np.linalg.norm(b)
        params = unravel(jnp.asarray(np.asarray(flat, np.float64) + x, jnp.float32))
        change = exact_cost(policy_probs(actor, params))[0] - cost
        assert abs(change) > 1e-3  # far above float32 rounding of J_c (~1e-7)
        predicted = factor * float(b @ x)
        errors.append(predicted / change - 1.0)
        np.testing.assert_allclose(predicted, change, rtol=0.05, err_msg=f"{scale}: b^T x vs exact dJ_c (size {size})")
        # the surrogate the line search reads moves by the same amount
        surrogate = algo.surrogates(params, batch, adv_r, adv_c, grads.scale)[1][0]
        np.testing.assert_allclose(factor * float(surrogate - base_surrogate), change, rtol=0.05)
    assert abs(errors[0] - errors[1]) < 0.01, errors  # linear regime: the relative error does not depend on |x|

    # a baseline added to A_c (a constant: its expected score term is 0) leaves b as it is -- the cost advantage
    # is centred; on these 20000 samples the empirical mean score would otherwise move b by ~10%
    shifted = gradients(batch.replace(advantages=batch.advantages.at[:, 1].add(3.0)))
    np.testing.assert_allclose(
        np.asarray(shifted.B[0]), np.asarray(grads.B[0]), rtol=1e-3, atol=1e-3 * float(np.abs(b).max())
    )
