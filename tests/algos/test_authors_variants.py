"""The variants the C-TRPO paper's baseline runs took (milosen/ctrpo algorithms/baselines/, SafePO's code) where they
differ from the methods' papers: PCPO's reward step along the Fisher product and IPO's reversed-sign barrier term,
each against a numpy evaluation of the authors' expression (FOCOPS's in-bound fraction: test_first_order.py)."""

from __future__ import annotations

import jax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import agent_for, linearise, make_algo, make_batch  # noqa: E402  (shared synthetic-batch helpers)

from saferl.algos import base
from saferl.algos.pcpo import projected_step
from saferl.algos.second_order import natural_step
from saferl.core import constraints, networks
from saferl.core.rollout import Batch

LIMIT = 10.0


def _spd(n, seed):
    a = np.random.default_rng(seed).normal(size=(n, n))
    return a @ a.T + 0.5 * np.eye(n)


@pytest.mark.parametrize("violation", [-3.0, 0.4, 50.0])
def test_pcpo_fisher_product_step_is_the_authors_alpha_g_minus_the_projection(violation):
    """SafePO's pcpo.py: alpha H (H^-1 g) - max(0, (alpha r + c) / s) H^-1 b, r = g^T H^-1 b, s = b^T H^-1 b,
    alpha = sqrt(2 delta / g^T H^-1 g); ``natural`` keeps PCPO eq. 4-5 on alpha H^-1 g."""
    rng = np.random.default_rng(1)
    h = _spd(5, 0)
    g, b = rng.normal(size=5), rng.normal(size=5)
    delta = 0.02
    hinv_g, hinv_b = np.linalg.solve(h, g), np.linalg.solve(h, b)
    alpha = np.sqrt(2 * delta / (g @ hinv_g))
    coef = max(0.0, (alpha * (g @ hinv_b) + violation) / (b @ hinv_b))
    matvec = lambda v: jnp.asarray(h) @ v  # noqa: E731
    x_r = natural_step(jnp.asarray(g), jnp.asarray(hinv_g), delta)
    args = (x_r, jnp.asarray(b)[None], jnp.asarray([violation]), jnp.asarray(hinv_b)[None], matvec)
    np.testing.assert_allclose(
        np.asarray(projected_step(*args, "fisher_product")), alpha * g - coef * hinv_b, rtol=1e-5, atol=1e-8
    )
    np.testing.assert_allclose(
        np.asarray(projected_step(*args, "natural")), alpha * hinv_g - coef * hinv_b, rtol=1e-5, atol=1e-8
    )
    with pytest.raises(ValueError, match="reward_direction must be one of natural, fisher_product, got 'euclid'"):
        projected_step(*args, "euclid")


def test_pcpo_fisher_product_with_two_constraints_adds_the_same_reward_correction():
    """Several constraints: the multi-constraint projection of alpha H^-1 g, its reward part alpha H^-1 g replaced by
    alpha g; with both constraints slack (no projection) the step is alpha g itself."""
    rng = np.random.default_rng(2)
    h = _spd(4, 3)
    g, big_b = rng.normal(size=4), rng.normal(size=(2, 4))
    hinv_g, hinv_b = np.linalg.solve(h, g), np.linalg.solve(h, big_b.T).T
    alpha = np.sqrt(2 * 0.01 / (g @ hinv_g))
    x_r = natural_step(jnp.asarray(g), jnp.asarray(hinv_g), 0.01)
    step = projected_step(
        x_r,
        jnp.asarray(big_b),
        jnp.asarray([-1e3, -1e3]),
        jnp.asarray(hinv_b),
        lambda v: jnp.asarray(h) @ v,
        "fisher_product",
    )
    np.testing.assert_allclose(np.asarray(step), alpha * g, rtol=1e-5, atol=1e-8)


def test_pcpo_policy_step_with_fisher_product_moves_along_the_gradient():
    """On a synthetic batch with a slack constraint the accepted step of ``fisher_product`` is parallel to the
    Euclidean gradient g (the authors' direction), that of ``natural`` to H^-1 g."""
    for direction in ("fisher_product", "natural"):
        algo = make_algo("pcpo", cg_damping=1e-3, cg_iters=30, reward_direction=direction)
        agent = agent_for(algo, LIMIT)
        batch = make_batch(algo, agent.actor_params, cost=0.0)
        grads, hinv = jax.jit(lambda a, b: linearise(algo, a, b)[:2])(agent, batch)
        new, metrics = jax.jit(algo.policy_step)(agent, batch)
        assert float(metrics["accepted"]) == 1.0
        moved = np.asarray(
            jax.flatten_util.ravel_pytree(new.actor_params)[0] - jax.flatten_util.ravel_pytree(agent.actor_params)[0]
        )
        want = np.asarray(grads.g if direction == "fisher_product" else hinv[0])
        cosine = moved @ want / (np.linalg.norm(moved) * np.linalg.norm(want))
        assert cosine > 0.999, (direction, cosine)


def _algo(name, **hp):
    cls = base.get(name)
    return cls(cls.resolve_hparams(hp), networks.GaussianActor(3, 2, (8,)), networks.Critics(3, 2, (8,)), "expected")


# FOCOPS's in-bound fraction: tests/algos/test_first_order.py, beside eq. 10's per-state indicator


CONSTRAINT = constraints.Constraint(limit=jnp.float32(LIMIT), epsilon=jnp.float32(1.0), gamma_c=jnp.float32(1.0))


def _ipo_batch(cost, n=40, seed=5):
    rng = np.random.default_rng(seed)
    adv = np.stack([rng.normal(1.0, 2.0, n), rng.normal(3.0, 4.0, n)], 1).astype(np.float32)
    batch = Batch(
        obs=jnp.zeros((n, 3)),
        action=None,
        log_prob=None,
        dist={},
        advantages=jnp.asarray(adv),
        returns=None,
        values=None,
        episode_done=None,
        episode_return=None,
        episode_cost=None,
        episode_discounted_cost=None,
        episode_length=None,
        episodes={"discounted_cost": jnp.asarray([cost], jnp.float32)},
    )
    return batch, adv


@pytest.mark.parametrize("cost", [4.0, 9.5, LIMIT, LIMIT + 3.0])
def test_ipo_reversed_sign_is_the_authors_loss(cost):
    """SafePO's ipo.py: J_c < b: -mean(min(r A_r, clip(r) A_r)) + mean(r A_c) / (t (J_c - b)); J_c >= b:
    mean(max(r A_c, clip(r) A_c)); A_r standardised, A_c centred."""
    algo = _algo("ipo", barrier_form="reversed_sign")
    agent = algo.init(jax.random.PRNGKey(0), CONSTRAINT)
    batch, adv = _ipo_batch(cost)
    n = adv.shape[0]
    a_r = (adv[:, 0] - adv[:, 0].mean()) / (adv[:, 0].std() + 1e-8)
    a_c = adv[:, 1] - adv[:, 1].mean()
    rng = np.random.default_rng(9)
    old_lp, new_lp = rng.normal(size=n).astype(np.float32), rng.normal(scale=0.3, size=n).astype(np.float32)
    old_lp_j = jnp.asarray(old_lp)
    mb = {"log_prob": old_lp_j, "advantage": algo.policy_advantage(agent, batch), **algo.loss_inputs(agent, batch)}
    loss, _ = algo.policy_loss(agent, None, jnp.asarray(old_lp + new_lp), mb)
    ratio = np.exp(new_lp)
    clipped = np.clip(ratio, 0.8, 1.2)
    if cost < LIMIT:
        authors = -np.mean(np.minimum(ratio * a_r, clipped * a_r)) + np.mean(ratio * a_c) / (20.0 * (cost - LIMIT))
    else:
        authors = np.mean(np.maximum(ratio * a_c, clipped * a_c))
    np.testing.assert_allclose(float(loss), authors, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("cost", [4.0, 9.5, LIMIT, LIMIT + 3.0])
def test_ipo_logged_penalty_is_the_weight_on_the_cost_advantage(cost):
    """``penalty`` is the loss's weight on A_c: 1 / (t (J_c - b)) < 0 (reversed_sign) or min(1 / (t (b - J_c)), 1)
    (log_barrier) while J_c < b; 0 (reversed_sign: recovery has no term) or the cap (log_barrier) from J_c = b on."""
    batch, _ = _ipo_batch(cost)
    feasible = cost < LIMIT
    for form, expected in [
        ("reversed_sign", 1.0 / (20.0 * (cost - LIMIT)) if feasible else 0.0),
        ("log_barrier", min(1.0 / (20.0 * (LIMIT - cost)), 1.0) if feasible else 1.0),
    ]:
        algo = _algo("ipo", barrier_form=form)
        agent = algo.init(jax.random.PRNGKey(0), CONSTRAINT)
        _, metrics = algo.before_update(agent, batch)
        np.testing.assert_allclose(float(metrics["penalty"]), expected, rtol=1e-5)
        assert float(metrics["recovering"]) == (0.0 if feasible else 1.0)


def test_ipo_log_barrier_has_no_separate_term_and_rejects_unknown_forms():
    assert _algo("ipo").loss_inputs(None, None) == {}
    with pytest.raises(ValueError, match="hparams.barrier_form"):
        _algo("ipo", barrier_form="inverse").init(jax.random.PRNGKey(0), CONSTRAINT)
