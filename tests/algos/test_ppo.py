"""PPO and PPO-Lag: the clipped surrogate and multiplier maths, and short learning runs with fixed seeds."""

import jax.numpy as jnp
import numpy as np
import pytest
from helpers import train_toy  # noqa: E402  (the ToyReach training helper)

from saferl.algos.ppo import approx_kl, clipped_surrogate_loss
from saferl.core import lagrange


def test_clipped_surrogate_matches_definition():
    log_ratio = jnp.log(jnp.asarray([0.5, 0.9, 1.0, 1.1, 1.5]))
    adv = jnp.asarray([1.0, -1.0, 2.0, 1.0, -2.0])
    loss = clipped_surrogate_loss(log_ratio, jnp.zeros(5), adv, clip=0.2)
    ratio = np.exp(np.asarray(log_ratio))
    expected = -np.mean(np.minimum(ratio * adv, np.clip(ratio, 0.8, 1.2) * adv))
    np.testing.assert_allclose(loss, expected, rtol=1e-6)
    # pessimism: ratio 0.5 with A > 0 and ratio 1.5 with A < 0 keep the unclipped (lower) value
    assert expected == pytest.approx(-np.mean([0.5, -0.9, 2.0, 1.1, -3.0]))


def test_approx_kl_is_nonnegative_and_zero_at_identity():
    assert float(approx_kl(jnp.zeros(4), jnp.zeros(4))) == 0.0
    rng = np.random.default_rng(0)
    assert float(approx_kl(jnp.asarray(rng.normal(size=100)), jnp.zeros(100))) > 0.0


def test_lagrange_multiplier_ascends_on_violation_and_stays_nonnegative():
    state = lagrange.init(0.0, "sgd", lr=0.1)
    state = lagrange.update(state, jnp.asarray(30.0), jnp.asarray(25.0), "sgd", 0.1)
    assert float(state.multiplier) == pytest.approx(0.5)
    for _ in range(10):
        state = lagrange.update(state, jnp.asarray(0.0), jnp.asarray(25.0), "sgd", 0.1)
    assert float(state.multiplier) == 0.0


def test_pid_lagrangian_terms():
    state = lagrange.pid_init()
    state = lagrange.pid_update(state, jnp.asarray(30.0), jnp.asarray(25.0), kp=0.1, ki=0.01, kd=0.0)
    # lambda = Kp * e + Ki * e (integral after one step) = 0.5 + 0.05; the first J_c gives no derivative kick
    assert float(state.multiplier) == pytest.approx(0.55)


def test_pid_lagrangian_by_hand_over_several_updates():
    """Stooke et al. Alg. 2 with EMA-smoothed P and a delayed derivative of the EMA-smoothed cost,
    replayed in numpy."""
    kp, ki, kd, a_p, a_d, delay, limit = 0.3, 0.05, 0.2, 0.9, 0.8, 3, 25.0
    costs = [40.0, 35.0, 45.0, 50.0, 20.0, 10.0, 30.0, 60.0]
    state = lagrange.pid_init(0.0, d_delay=delay)
    p = integral = 0.0
    history = None
    for k, cost in enumerate(costs):
        state = lagrange.pid_update(state, jnp.asarray(cost), jnp.asarray(limit), kp, ki, kd, a_p, a_d, 100.0)
        e = cost - limit
        p = e if k == 0 else a_p * p + (1 - a_p) * e
        if history is None:
            history = [cost] * delay
        smoothed = a_d * history[-1] + (1 - a_d) * cost
        history = history[1:] + [smoothed]
        integral = max(0.0, integral + ki * e)
        expected = min(max(kp * p + integral + kd * max(0.0, smoothed - history[0]), 0.0), 100.0)
        assert float(state.multiplier) == pytest.approx(expected, rel=1e-5, abs=1e-6), k
    # no finished episode (NaN): nothing moves; the output is clipped to [0, max]
    same = lagrange.pid_update(state, jnp.asarray(jnp.nan), jnp.asarray(limit), kp, ki, kd, a_p, a_d, 100.0)
    assert float(same.multiplier) == pytest.approx(float(state.multiplier))
    capped = lagrange.pid_update(state, jnp.asarray(1e6), jnp.asarray(limit), kp, ki, kd, a_p, a_d, 3.0)
    assert float(capped.multiplier) == 3.0
    with pytest.raises(ValueError, match="pid_d_delay"):
        lagrange.pid_init(0.0, d_delay=0)


@pytest.fixture(scope="module")
def toy_runs():
    return {algo: train_toy(algo) for algo in ("ppo", "ppo_lag", "cppo_pid")}


# the two learning tests share three training runs (~35 s on 2 cores): make test-slow; PPO-Lag's learning run in
# tests/envs/test_gym_bridge.py and the PID multiplier's equations stay in make test
@pytest.mark.slow
def test_ppo_ignores_the_constraint_and_ppo_lag_respects_it(toy_runs):
    ppo_cost = np.nanmean(toy_runs["ppo"]["episode_cost"][:, -8:])
    lag_cost = np.nanmean(toy_runs["ppo_lag"]["episode_cost"][:, -8:])
    lag_return = np.nanmean(toy_runs["ppo_lag"]["episode_return"][:, -8:])
    assert ppo_cost > 30.0  # the unconstrained optimum sits in the costly region
    assert lag_cost <= 10.0 * 1.25, lag_cost
    # still moving right up to the threshold (the always-safe policy that stays at 0 earns 0)
    assert np.max(np.nanmean(toy_runs["ppo_lag"]["episode_return"][:, -8:], axis=0)) > 0.0, lag_return
    assert np.all(toy_runs["ppo_lag"]["lagrange_multiplier"] >= 0.0)
    assert np.max(toy_runs["ppo_lag"]["lagrange_multiplier"]) > 0.1  # the constraint was active


@pytest.mark.slow  # the runs above
def test_cppo_pid_respects_the_limit_and_its_multiplier_reacts_at_once(toy_runs):
    pid = toy_runs["cppo_pid"]
    cost = np.nanmean(pid["episode_cost"][:, -8:])
    assert cost <= 10.0 * 1.25, cost
    assert np.max(np.nanmean(pid["episode_return"][:, -8:], axis=0)) > 0.0
    # the proportional term: the first update already sets lambda ~ Kp (J_c - b) where Adam would move by lr
    first_cost = pid["cost_estimate"][:, 0]
    ok = np.isfinite(first_cost)
    np.testing.assert_allclose(
        pid["lagrange_multiplier"][ok, 0],
        np.clip(0.1 * (first_cost[ok] - 10.0) + 0.01 * (first_cost[ok] - 10.0), 0, None),
        rtol=1e-4,
        atol=1e-5,
    )
