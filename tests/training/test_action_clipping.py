"""Who clips a continuous action: the trainer's ``ClipAction`` before an environment with ``clip_actions``
(saferl's default), nobody before one without it (the velocity tasks, whose control cost squares the raw sample
as the C-TRPO authors' harness passes it); the exported policy returns what the environment received."""

import jax
import jax.numpy as jnp
import numpy as np

from saferl import api
from saferl.envs import base
from saferl.envs.toy import ToyReach
from saferl.training import config as configlib
from saferl.training.trainer import Trainer


class EchoAction(ToyReach):
    """ToyReach whose reward is the action it received, as received."""

    def step(self, state, action, params):
        state, obs, _, cost, terminated, truncated, info = super().step(state, action, params)
        return state, obs, jnp.reshape(action, ()), cost, terminated, truncated, info


class EchoRawAction(EchoAction):
    clip_actions = False


base.register("SaferlTestEchoAction", "tests: reward = the action received")(EchoAction)
base.register("SaferlTestEchoRawAction", "tests: reward = the action received, unclipped")(EchoRawAction)


def trainer_for(env: str) -> Trainer:
    return Trainer(
        configlib.resolve(
            {
                "algo": "ppo",
                "env": env,
                "num_envs": 2,
                "rollout_steps": 32,
                "total_steps": 64,
                "normalize_observations": False,
            }
        )
    )


def test_the_trainer_clips_only_where_the_environment_asks_and_the_policy_returns_what_it_received():
    for env, clipped in (("SaferlTestEchoAction", True), ("SaferlTestEchoRawAction", False)):
        trainer = trainer_for(env)
        assert trainer.clips_actions is clipped
        state, obs = trainer.venv.reset(jax.random.PRNGKey(0), trainer.env_params)
        actions = jnp.array([[3.0], [-0.5]])
        reward = trainer.venv.step(state, actions, trainer.env_params)[2]
        np.testing.assert_allclose(reward, [1.0, -0.5] if clipped else [3.0, -0.5])
        agent = trainer.learner.init_agent(jax.random.PRNGKey(1))
        wide = {**agent.actor_params, "log_std": jnp.full_like(agent.actor_params["log_std"], 2.0)}  # std 7.4
        policy = api.Policy(trainer, wide, state.stats, seed=0)
        sample = policy(jnp.zeros((256, 2)), jax.random.PRNGKey(2))
        assert (float(jnp.abs(sample).max()) <= 1.0) is clipped
