"""The first-order baselines of the C-TRPO paper: FOCOPS, IPO, P3O, CUP -- their losses against hand
computations, and short learning runs on ToyReach (unconstrained optimum ~45 cost, limit 10)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import train_toy  # noqa: E402  (the ToyReach training helper)

from saferl.algos import base
from saferl.algos.ipo import barrier_penalty
from saferl.algos.p3o import exact_penalty_cost_loss
from saferl.core import constraints, networks
from saferl.core.rollout import Batch

LIMIT = 10.0


def _algo(name, **hp):
    cls = base.get(name)
    return cls(cls.resolve_hparams(hp), networks.GaussianActor(3, 2, (8,)), networks.Critics(3, 2, (8,)), "expected")


CONSTRAINT = constraints.Constraint(limit=jnp.float32(LIMIT), epsilon=jnp.float32(1.0), gamma_c=jnp.float32(1.0))


def _episodes_batch(cost, advantages=None):
    """A batch holding only what a multiplier or penalty reads: J_c (and the advantages)."""
    return Batch(
        obs=None,
        action=None,
        log_prob=None,
        dist={},
        advantages=advantages,
        returns=None,
        values=None,
        episode_done=None,
        episode_return=None,
        episode_cost=None,
        episode_discounted_cost=None,
        episode_length=None,
        episodes={"discounted_cost": jnp.asarray([cost], jnp.float32)},
    )


def _gauss_kl(m1, s1, m2, s2):
    """KL(N(m1, s1^2) || N(m2, s2^2)) summed over action dimensions."""
    return np.sum(np.log(s2 / s1) + (s1**2 + (m1 - m2) ** 2) / (2 * s2**2) - 0.5, axis=-1)


def _focops_minibatch(algo, n=64, seed=0):
    """A minibatch of old and new diagonal Gaussians with the per-state KL(pi || pi_k), ratios and advantages by numpy:
    (policy_loss's arguments (new dist, new log-prob, minibatch), state KL, ratio, advantage)."""
    rng = np.random.default_rng(seed)
    old = {"mean": rng.normal(size=(n, 2)).astype(np.float32), "log_std": np.full((n, 2), -0.5, np.float32)}
    new = {
        "mean": old["mean"] + rng.normal(scale=0.1, size=(n, 2)).astype(np.float32),
        "log_std": np.full((n, 2), -0.48, np.float32),
    }
    action = rng.normal(size=(n, 2)).astype(np.float32)
    adv = rng.normal(size=n).astype(np.float32)
    old_lp = np.asarray(algo.actor.log_prob(jax.tree.map(jnp.asarray, old), jnp.asarray(action)))
    new_lp = algo.actor.log_prob(jax.tree.map(jnp.asarray, new), jnp.asarray(action))
    mb = {"dist": jax.tree.map(jnp.asarray, old), "log_prob": jnp.asarray(old_lp), "advantage": jnp.asarray(adv)}
    state_kl = _gauss_kl(new["mean"], np.exp(new["log_std"]), old["mean"], np.exp(old["log_std"]))  # KL(pi || pi_k)
    ratio = np.exp(np.asarray(new_lp) - old_lp)
    return (jax.tree.map(jnp.asarray, new), new_lp, mb), state_kl, ratio, adv


def test_focops_loss_is_eq_10_with_the_per_state_indicator():
    algo = _algo("focops")
    args, state_kl, ratio, adv = _focops_minibatch(algo)
    loss, kl = algo.policy_loss(None, *args)
    inside = state_kl <= 0.02
    assert 0 < inside.sum() < len(adv)  # both sides of the indicator occur
    expected = np.mean((state_kl - ratio * adv / 1.5) * inside)
    np.testing.assert_allclose(float(loss), expected, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(float(kl), state_kl.mean(), rtol=1e-4)


def test_focops_in_bound_fraction_is_the_authors_broadcast_loss():
    """indicator_scope in_bound_fraction, the C-TRPO paper's FOCOPS runs (SafePO's focops.py):
    (temp_kl[:, None] - ratio * adv / lambda) * (temp_kl <= eta)[:, None], averaged over the (B, B) broadcast."""
    algo = _algo("focops", indicator_scope="in_bound_fraction")
    args, state_kl, ratio, adv = _focops_minibatch(algo, n=48)
    loss, _ = algo.policy_loss(None, *args)
    temp_kl = state_kl[:, None]
    inside = (temp_kl <= 0.02).astype(np.float32)
    assert 0 < inside.sum() < len(adv)
    authors = np.mean((temp_kl - (1 / 1.5) * ratio * adv) * inside)
    np.testing.assert_allclose(float(loss), authors, rtol=1e-4, atol=1e-6)
    per_state, _ = _algo("focops").policy_loss(None, *args)
    assert abs(float(per_state) - authors) > 1e-3  # the two scopes differ on this batch


def test_focops_multiplier_takes_one_projected_step_onto_0_nu_max():
    algo = _algo("focops")
    agent = algo.init(jax.random.PRNGKey(0), CONSTRAINT)

    def step(agent, cost):
        return algo.before_update(agent, _episodes_batch(cost))[0]

    agent = step(agent, LIMIT + 30.0)
    assert float(agent.extra["lagrange"].multiplier) == pytest.approx(0.01 * 30.0)  # nu + alpha_nu (J_c - b)
    for _ in range(10):
        agent = step(agent, LIMIT + 300.0)
    assert float(agent.extra["lagrange"].multiplier) == pytest.approx(2.0)  # nu_max
    agent = step(agent, LIMIT - 1000.0)
    assert float(agent.extra["lagrange"].multiplier) == 0.0


def test_ipo_penalty_is_the_log_barriers_weight_on_the_cost_gradient():
    """grad_theta log(b - J(theta)) / t = -kappa grad J with kappa = 1 / (t (b - J)) (IPO eq. 6-7)."""
    t, b = 20.0, 10.0

    def cost(theta):
        return 6.0 + jnp.sum(theta**2) + theta[0]

    theta = jnp.asarray([0.3, -0.7, 1.1])
    barrier_grad = jax.grad(lambda th: jnp.log(b - cost(th)) / t)(theta)
    kappa = barrier_penalty(cost(theta), b, t, penalty_max=1e9)
    np.testing.assert_allclose(barrier_grad, -kappa * jax.grad(cost)(theta), rtol=1e-5)
    assert float(barrier_penalty(9.99, b, t, 1.0)) == 1.0  # capped near the boundary
    assert float(barrier_penalty(12.0, b, t, 1.0)) == 1.0  # and beyond it, where the barrier is undefined
    assert float(barrier_penalty(5.0, b, t, 1.0)) == pytest.approx(1.0 / (20.0 * 5.0))


def test_ipo_recovers_on_the_cost_alone_where_the_barrier_is_undefined():
    algo = _algo("ipo")
    rng = np.random.default_rng(3)
    adv = jnp.asarray(rng.normal(size=(50, 2)), jnp.float32)
    agent = algo.init(jax.random.PRNGKey(0), CONSTRAINT)

    def advantage(algo, cost):
        return np.asarray(algo.policy_advantage(agent, _episodes_batch(cost, adv)))

    a_r = (adv[:, 0] - adv[:, 0].mean()) / (adv[:, 0].std() + 1e-8)
    a_c = adv[:, 1] - adv[:, 1].mean()
    kappa = 1.0 / (20.0 * (LIMIT - 5.0))
    np.testing.assert_allclose(advantage(algo, 5.0), (a_r - kappa * a_c) / (1 + kappa), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(advantage(algo, LIMIT + 3.0), -a_c / (a_c.std() + 1e-8), rtol=1e-5, atol=1e-6)
    capped = _algo("ipo", infeasible="cap")
    np.testing.assert_allclose(advantage(capped, LIMIT + 3.0), (a_r - a_c) / 2.0, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="hparams.infeasible"):
        _algo("ipo", infeasible="ignore").init(jax.random.PRNGKey(0), CONSTRAINT)


def test_p3o_exact_penalty_matches_its_definition():
    rng = np.random.default_rng(1)
    ratio = np.exp(rng.normal(scale=0.3, size=200)).astype(np.float32)
    adv_c = rng.normal(size=200).astype(np.float32)
    clipped = np.clip(ratio, 0.8, 1.2)
    surrogate = np.mean(np.maximum(ratio * adv_c, clipped * adv_c))  # pessimistic for the cost
    for slack in (-1.0, -surrogate + 0.05, 0.3):
        got = float(exact_penalty_cost_loss(jnp.asarray(ratio), jnp.asarray(adv_c), slack, 0.2, 20.0))
        np.testing.assert_allclose(got, 20.0 * max(surrogate + slack, 0.0), rtol=1e-5, atol=1e-6)
    # inside the linearised constraint the penalty and its gradient vanish (the exact penalty is inactive)
    grad = jax.grad(lambda r: exact_penalty_cost_loss(r, jnp.asarray(adv_c), -1.0, 0.2, 20.0))(jnp.asarray(ratio))
    assert float(jnp.abs(grad).max()) == 0.0


def _advantages_batch(cost, seed=3, n=64):
    rng = np.random.default_rng(seed)
    adv = np.stack([rng.normal(2.0, 3.0, n), rng.normal(5.0, 7.0, n)], 1).astype(np.float32)
    return _episodes_batch(cost, jnp.asarray(adv)).replace(obs=jnp.zeros((n, 3))), adv


def test_p3o_centred_cost_advantage_keeps_its_scale():
    """cost_advantage centred (the C-TRPO authors' P3O): A_c - mean, against the paper's standardised A_c."""
    batch, adv = _advantages_batch(LIMIT + 5.0)
    for option, want in (
        ("centred", adv[:, 1] - adv[:, 1].mean()),
        ("standardised", (adv[:, 1] - adv[:, 1].mean()) / adv[:, 1].std()),
    ):
        algo = _algo("p3o", cost_advantage=option)
        agent = algo.init(jax.random.PRNGKey(0), CONSTRAINT)
        got = algo.loss_inputs(agent, batch)
        np.testing.assert_allclose(np.asarray(got["cost_advantage"]), want, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(np.asarray(got["slack"]), 0.01 * 5.0, rtol=1e-5)  # (1 - gamma_c)(J_c - b)


def test_focops_advantage_over_one_plus_nu():
    """advantage_scaling one_plus_nu (SafePO's FOCOPS): (std(A_r) - nu (A_c - mean)) / (1 + nu)."""
    batch, adv = _advantages_batch(LIMIT)
    a_r = (adv[:, 0] - adv[:, 0].mean()) / adv[:, 0].std()
    a_c = adv[:, 1] - adv[:, 1].mean()
    for option, divisor in (("none", 1.0), ("one_plus_nu", 1.5)):
        algo = _algo("focops", advantage_scaling=option)
        agent = algo.init(jax.random.PRNGKey(0), CONSTRAINT)
        agent = agent.replace(
            extra={**agent.extra, "lagrange": agent.extra["lagrange"].replace(multiplier=jnp.float32(0.5))}
        )
        np.testing.assert_allclose(
            np.asarray(algo.policy_advantage(agent, batch)), (a_r - 0.5 * a_c) / divisor, rtol=1e-4, atol=1e-4
        )


def test_cup_projection_loss_is_eq_10():
    algo = _algo("cup")
    rng = np.random.default_rng(2)
    n = 32
    mid = {"mean": rng.normal(size=(n, 2)).astype(np.float32), "log_std": np.full((n, 2), -0.5, np.float32)}
    new = {"mean": mid["mean"] + 0.1, "log_std": np.full((n, 2), -0.45, np.float32)}
    old_lp = rng.normal(size=n).astype(np.float32)
    new_lp = old_lp + rng.normal(scale=0.1, size=n).astype(np.float32)
    adv_c = rng.normal(size=n).astype(np.float32)
    nu = 0.7
    agent = type("A", (), {"extra": {"lagrange": type("L", (), {"multiplier": jnp.float32(nu)})()}})()
    mb = {
        "mid_dist": jax.tree.map(jnp.asarray, mid),
        "log_prob": jnp.asarray(old_lp),
        "cost_advantage": jnp.asarray(adv_c),
    }
    loss, kl = algo.projection_loss(agent, jax.tree.map(jnp.asarray, new), jnp.asarray(new_lp), mb)
    state_kl = _gauss_kl(new["mean"], np.exp(new["log_std"]), mid["mean"], np.exp(mid["log_std"]))
    coef = (1 - 0.99 * 0.95) / (1 - 0.99)  # (1 - gamma lambda) / (1 - gamma)
    expected = np.mean(nu * coef * np.exp(new_lp - old_lp) * adv_c + state_kl)
    np.testing.assert_allclose(float(loss), expected, rtol=1e-5)
    np.testing.assert_allclose(float(kl), state_kl.mean(), rtol=1e-5)


def test_cup_projection_stage_lowers_the_cost_surrogate():
    """One CUP update on a batch where reward and cost both grow with the action: with nu > 0 the second
    stage ends at a lower cost surrogate than with nu = 0, and both end within a small KL of pi_k."""
    from helpers import make_batch

    cls = base.get("cup")
    algo = cls(
        cls.resolve_hparams({"minibatches": 4, "epochs": 5, "actor_lr": 1e-3}),
        networks.GaussianActor(3, 1, (16,)),
        networks.Critics(3, 2, (8,)),
        "expected",
    )
    agent = algo.init(jax.random.PRNGKey(0), CONSTRAINT)
    batch = make_batch(algo, agent.actor_params, cost=LIMIT)  # J_c = b: the multiplier's Adam step is 0
    update = jax.jit(algo.update)

    def after(nu):
        lagrange = agent.extra["lagrange"].replace(multiplier=jnp.float32(nu))
        new, metrics = update(agent.replace(extra={**agent.extra, "lagrange": lagrange}), batch, jax.random.PRNGKey(3))
        dist = algo.actor.distribution(new.actor_params, batch.obs)
        ratio = jnp.exp(algo.actor.log_prob(dist, batch.action) - batch.log_prob)
        cost_adv = batch.advantages[:, 1] - jnp.mean(batch.advantages[:, 1])
        return float(jnp.mean(ratio * cost_adv)), float(jnp.mean(algo.actor.kl(batch.dist, dist)))

    cost_free, kl_free = after(0.0)
    cost_projected, kl_projected = after(1.0)
    assert cost_free > 0  # the reward stage alone raised the action, and so the cost
    assert cost_projected < cost_free
    assert max(kl_free, kl_projected) < 0.2


def test_cup_stays_near_the_limit_on_average_and_its_multiplier_reacts():
    """CUP's Adam multiplier lags and its projection is strong ((1 - gamma lambda) / (1 - gamma) ~ 6 per unit
    of nu), so on ToyReach it oscillates between the costly and the safe side (as its high cost regret in the
    C-TRPO paper); over the run its mean cost stays far below PPO's ~45."""
    metrics = train_toy("cup")
    cost = np.nanmean(metrics["episode_cost"], axis=1)
    print("cup: mean cost per seed over the run", cost)
    assert np.all(cost <= 2 * LIMIT), cost
    assert np.max(metrics["lagrange_multiplier"]) > 0.1


@pytest.fixture(scope="module")
def toy_runs():
    return {algo: train_toy(algo) for algo in ("focops", "ipo", "p3o")}


# three learning runs (~35 s on 2 cores): make test-slow; each loss's definition and CUP's learning run stay
@pytest.mark.slow
@pytest.mark.parametrize("algo", ["focops", "ipo", "p3o"])
def test_first_order_baselines_respect_the_limit_and_still_move(toy_runs, algo):
    metrics = toy_runs[algo]
    cost = np.nanmean(metrics["episode_cost"][:, -8:])
    print(f"{algo}: cost {cost:.2f}, return {np.nanmean(metrics['episode_return'][:, -8:]):.2f}")
    assert cost <= 1.25 * LIMIT, cost  # PPO on the same task: ~45 (tests/algos/test_ppo.py)
    assert np.min(np.nanmean(metrics["episode_return"][:, -8:], axis=0)) > 5.0  # not the do-nothing policy (0)
