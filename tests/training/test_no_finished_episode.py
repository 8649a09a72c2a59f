"""A batch in which no episode finished: the episode estimates stay unknown (NaN) until the first
episode has finished and a constrained algorithm's learning step is held meanwhile (``update_skipped``),
instead of reading zeros (a maximally safe batch); later batches without a finished episode carry the
previous estimate; the unconstrained PPO learns on any batch.

ToyReach's episodes last 50 steps; with 30-step rollouts the first batch has no finished episode, the
second has one per environment (step 50) and the third none again (the next end is step 100).
"""

from __future__ import annotations

from functools import lru_cache

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saferl.algos import base
from saferl.core.rollout import episode_estimates, make_batch
from saferl.training import config
from saferl.training.trainer import Trainer

NET = {"actor_hidden": [8], "critic_hidden": [8], "activation": "tanh", "value_normalization": True}
CONSTRAINTS = {
    "ppo_lag": {"type": "expected", "limit": 5.0},
    "cpo": {"type": "expected", "limit": 5.0},
    "canary": {"type": "var", "rho": 5.0, "epsilon": 0.1},
    "ppo": {"type": "expected", "limit": 5.0},
}


@lru_cache(maxsize=None)
def stepper(algo):
    """(trainer, its initial runners for 2 seeds, one jitted and seed-vmapped training iteration)."""
    cfg = config.resolve(
        {
            "algo": algo,
            "env": "ToyReach",
            "seeds": 2,
            "num_envs": 2,
            "rollout_steps": 30,
            "total_steps": 60,
            "normalize_observations": False,
            "network": NET,
            "env_params": {"cost_threshold": 0.05},  # a random walk pays some cost
            "constraint": CONSTRAINTS[algo],
            "hparams": {"epochs": 2, "minibatches": 2}
            if "ppo" in algo
            else {"cg_iters": 2, "backtracks": 2, "critic_epochs": 1, "critic_minibatches": 1},
        }
    )
    trainer = Trainer(cfg)
    return trainer, trainer.init_all(), jax.jit(jax.vmap(trainer.iteration))


def get(tree):
    return jax.tree.map(np.asarray, jax.device_get(tree))


def assert_same(a, b):
    jax.tree.map(np.testing.assert_array_equal, get(a), get(b))


def seed(tree, i):
    return jax.tree.map(lambda x: x[i], tree)


def moved(a, b):
    return any(not np.array_equal(x, y) for x, y in zip(jax.tree.leaves(get(a)), jax.tree.leaves(get(b))))


@pytest.mark.parametrize(
    "algo", [pytest.param("cpo", marks=pytest.mark.slow), "canary"]
)  # a Lagrangian's hold: the later-batch test below (ppo_lag)
def test_no_finished_episode_holds_a_constrained_update(algo):
    trainer, runners, step = stepper(algo)
    after, metrics = step(runners)
    metrics = get(metrics)
    assert np.all(metrics["episodes"] == 0)  # the premise: no episode finished in 30 of 50 steps
    np.testing.assert_array_equal(metrics["update_skipped"], [1.0, 1.0])
    assert_same(after.agent, runners.agent)  # critics (PopArt included), multipliers, policy, eta: all held
    episodes = get(after.episodes)
    for key in ("discounted_cost", "cost", "discounted_cost_sq") + (
        ("violation", "excess") if algo == "canary" else ()
    ):
        assert np.all(np.isnan(episodes[key])), key  # unknown, not zero
    np.testing.assert_array_equal(episodes["count"], [0.0, 0.0])
    # the held step's own metrics describe no update: missing, as the episode means of such a batch
    assert all(np.all(np.isnan(v)) for k, v in metrics.items() if k not in ("episodes", "update_skipped"))


def test_a_later_batch_without_a_finished_episode_carries_the_previous_estimate():
    """PPO-Lag: batch 1 no episode (held), batch 2 one per environment (learns), batch 3 none: the estimate of
    batch 2 is carried and the step runs on it.  In batch 3 seed 0 is handed the unknown estimate again (as at
    the start): it alone is held, within the one vmapped program."""
    trainer, runners, step = stepper("ppo_lag")
    first, m1 = step(runners)
    second, m2 = step(first)
    m1, m2 = get(m1), get(m2)
    np.testing.assert_array_equal(m1["update_skipped"], [1.0, 1.0])
    np.testing.assert_array_equal(m2["episodes"], [2.0, 2.0])
    np.testing.assert_array_equal(m2["update_skipped"], [0.0, 0.0])
    assert moved(second.agent.actor_params, first.agent.actor_params)
    estimate = get(second.episodes)
    assert np.all(np.isfinite(estimate["discounted_cost"])) and np.all(estimate["count"] == 2.0)
    np.testing.assert_allclose(estimate["discounted_cost"][:, 0], m2["episode_discounted_cost"], rtol=1e-6)
    assert all(np.all(np.isfinite(x)) for x in jax.tree.leaves(get(second.agent)))  # no NaN reached the agent
    # seed 0 back to the unknown initial estimate; seed 1 keeps its own
    unknown = trainer.learner.init_episodes()
    episodes = jax.tree.map(lambda e, u: e.at[0].set(u), second.episodes, unknown)
    third, m3 = step(second.replace(episodes=episodes))
    m3 = get(m3)
    np.testing.assert_array_equal(m3["episodes"], [0.0, 0.0])
    np.testing.assert_array_equal(m3["update_skipped"], [1.0, 0.0])
    carried = get(third.episodes)
    assert np.all(np.isnan(carried["discounted_cost"][0]))
    np.testing.assert_array_equal(carried["discounted_cost"][1], estimate["discounted_cost"][1])  # not zeros
    assert estimate["discounted_cost"][1, 0] != 0.0  # ToyReach's random walk pays some cost in 50 steps
    assert_same(seed(third.agent, 0), seed(second.agent, 0))
    assert moved(seed(third.agent, 1).actor_params, seed(second.agent, 1).actor_params)
    # the multiplier seed 1 stepped on the carried J_c: lambda moves with J_c - b
    np.testing.assert_array_equal(m3["cost_estimate"][1], estimate["discounted_cost"][1, 0])
    assert np.isnan(m3["cost_estimate"][0])


def test_unconstrained_ppo_learns_on_a_batch_without_a_finished_episode():
    trainer, runners, step = stepper("ppo")
    after, metrics = step(runners)
    metrics = get(metrics)
    assert np.all(metrics["episodes"] == 0)
    np.testing.assert_array_equal(metrics["update_skipped"], [0.0, 0.0])
    assert moved(after.agent.actor_params, runners.agent.actor_params)
    assert moved(after.agent.critic_params, runners.agent.critic_params)
    assert np.all(np.isfinite(metrics["approx_kl"]))
    assert np.all(np.isnan(get(after.episodes)["discounted_cost"]))  # its estimate is unknown all the same


def test_only_the_unconstrained_algorithms_learn_without_a_cost_estimate():
    """The declaration is the class's own (not inherited): PPO-Lag, IPO, P3O, TRPO-Lag... need the estimate; SCPO
    reads the trajectory's running episode costs, not J_c."""
    needs = {name: bool(base.get(name).needs_cost_estimate) for name in base.registered()}
    assert {name for name, need in needs.items() if not need} == {"ppo", "trpo", "scpo"}
    assert {"ppo_lag", "ipo", "p3o", "trpo_lag", "cpo", "canary"} <= set(needs)


def test_a_batch_with_finished_episodes_learns_exactly_as_before():
    """Batch 2 (an episode finished in every environment) through the trainer's iteration against the
    iteration written out as it was before the change: the estimate over the batch's episodes (zeros
    standing in for an unknown previous one), PopArt, the algorithm's update.  Bit for bit, agent and
    estimate, after an unknown previous estimate (the first finished episodes) and after a finite one."""
    trainer, runners, step = stepper("ppo_lag")
    learner = trainer.learner

    def before(runner):
        _, k_roll, k_upd = jax.random.split(runner.key, 3)
        _, _, traj = trainer.collect(runner, k_roll)
        agent = runner.agent
        batch = make_batch(
            traj,
            learner.critics,
            agent.critic_params,
            learner.gammas,
            learner.algo.hp["gae_lambda"],
            learner.end_at_truncation,
        )
        episodes = jax.tree.map(lambda x: jnp.nan_to_num(x, nan=0.0), runner.episodes)
        batch = batch.replace(episodes=episode_estimates(batch, episodes))
        agent = agent.replace(critic_params=learner.critics.update_normalizer(agent.critic_params, batch.returns))
        agent, _ = learner.algo.update(agent, batch, k_upd)
        return agent, batch.episodes

    before = jax.jit(jax.vmap(before))
    first, _ = step(runners)
    finite = first.replace(episodes=jax.tree.map(lambda x: jnp.full_like(x, 3.0), first.episodes))
    for runner in (first, finite):
        after, metrics = step(runner)
        np.testing.assert_array_equal(get(metrics)["episodes"], [2.0, 2.0])
        np.testing.assert_array_equal(get(metrics)["update_skipped"], [0.0, 0.0])
        assert_same((after.agent, after.episodes), before(runner))
        assert moved(after.agent.actor_params, runner.agent.actor_params)
