"""network.action_std_anneal: RL-Safety-Algorithms' fixed action std, annealed a (1 - k/K) + b over K iterations."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from saferl.core import networks
from saferl.envs.base import Box
from saferl.training import config

CFG = {
    "env": "ToyReach",
    "total_steps": 3 * 200,
    "seeds": 1,
    "num_envs": 2,
    "rollout_steps": 100,
    "iterations_per_chunk": 1,
    "constraint": {"type": "expected", "limit": 10.0},
    "network": {"actor_hidden": [8], "critic_hidden": [8], "action_std_anneal": [0.499, 0.01]},
}


def test_a_fixed_std_takes_no_gradient():
    actor = networks.make_actor(3, Box(-1, 1, (2,)), [8], "tanh", init_log_std=0.3, fixed_std=True)
    params = actor.init(jax.random.PRNGKey(0))
    obs, action = jnp.ones((4, 3)), jnp.full((4, 2), 0.5)
    grad = jax.grad(lambda p: jnp.sum(actor.log_prob(actor.distribution(p, obs), action)))(params)
    np.testing.assert_array_equal(grad["log_std"], 0.0)
    assert float(jnp.abs(jax.tree.leaves(grad["mean"])[0]).sum()) > 0  # the mean still learns
    np.testing.assert_allclose(actor.distribution(params, obs)["log_std"], 0.3)  # the value is the parameter's
    learned = networks.make_actor(3, Box(-1, 1, (2,)), [8], "tanh", init_log_std=0.3)
    grad = jax.grad(lambda p: jnp.sum(learned.log_prob(learned.distribution(p, obs), action)))(params)
    assert float(jnp.abs(grad["log_std"]).sum()) > 0


@pytest.mark.parametrize("algo", ["trpo", "ppo"])
def test_each_iteration_collects_at_the_scheduled_std_and_learning_leaves_it(algo):
    """The reference's schedule: before epoch k of K the std is 0.499 (1 - k/K) + 0.01 (iwpg.py learn,
    core.py set_log_std); neither TRPO's natural-gradient step nor PPO's Adam moves it."""
    from saferl.training.trainer import Trainer

    trainer = Trainer(config.resolve({**CFG, "algo": algo}))
    assert trainer.learner.total_iterations == 3
    runner = jax.jit(trainer.init)(jax.random.PRNGKey(0))
    step = jax.jit(trainer.iteration)
    for k in range(3):
        expected = np.log(0.499 * (1 - k / 3) + 0.01)
        scheduled = trainer.learner.scheduled_actor(runner.agent, runner.iteration)
        np.testing.assert_allclose(scheduled.actor_params["log_std"], expected, rtol=1e-6)
        runner, _ = step(runner)
        np.testing.assert_allclose(runner.agent.actor_params["log_std"], expected, rtol=1e-6)


def test_a_shorter_run_follows_the_reference_runs_schedule():
    """action_std_anneal_steps: K of the reference run (here twice this run's steps); past K the std stays at b."""
    from saferl.training.trainer import Trainer

    cfg = config.resolve({**CFG, "algo": "trpo", "network": {**CFG["network"], "action_std_anneal_steps": 1200}})
    learner = Trainer(cfg).learner
    assert learner.total_iterations == 6
    agent = learner.algo.init(jax.random.PRNGKey(0), learner.constraint)
    for k, std in ((0, 0.509), (2, 0.499 * (1 - 2 / 6) + 0.01), (6, 0.01), (9, 0.01)):
        np.testing.assert_allclose(learner.scheduled_actor(agent, k).actor_params["log_std"], np.log(std), rtol=1e-6)
    with pytest.raises(config.ConfigError, match="network.action_std_anneal_steps must be null or a positive integer"):
        config.resolve({**CFG, "algo": "trpo", "network": {"action_std_anneal_steps": 0}})


def test_bad_anneal_is_named():
    for bad in ([0.5], [0.5, 0.0], [-0.1, 0.01], "0.5,0.01", [0.5, float("nan")]):
        with pytest.raises(config.ConfigError, match="network.action_std_anneal must be null or"):
            config.resolve({**CFG, "algo": "trpo", "network": {"action_std_anneal": bad}})
    assert config.resolve({"algo": "trpo", "env": "ToyReach"})["network"]["action_std_anneal"] is None
