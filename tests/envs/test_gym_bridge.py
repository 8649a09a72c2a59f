"""Gymnasium bridge: the host rollout builds the Trajectory the compiled loop builds (hand-checked
rewards, costs, episode statistics, auto-reset, final observations at truncation; and equal to the
compiled rollout on ToyReach), cost read from step or info, the shared update, a PPO-Lag run, bad envs."""

import json
import sys

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gymnasium import spaces

from saferl.core.rollout import collect
from saferl.envs.gym_bridge import HostVecEnv, NonFiniteError, make_gym_env
from saferl.envs.toy import ToyReach
from saferl.foundation.errors import MissingExtraError
from saferl.training.gym_trainer import GymTrainer, load_learner_states, run
from saferl.training.run_directory import load_checkpoint, read_progress
from saferl.training.trainer import Trainer

FAST = {"epochs": 2, "minibatches": 2}
NET = {"actor_hidden": [16], "critic_hidden": [16], "activation": "tanh"}
#: one configuration for every test that runs the update, so it compiles once (conftest's persistent cache)
LEARN = {
    "algo": "ppo_lag",
    "env": "gym:slope",
    "num_envs": 8,
    "rollout_steps": 64,
    "seed": 0,
    "network": NET,
    "constraint": {"type": "expected", "limit": 3.0},
    "hparams": {"epochs": 4, "minibatches": 4, "actor_lr": 1e-3, "critic_lr": 1e-3, "lagrange_lr": 0.2},
}


class CountDown(gym.Env):
    """Discrete, Safety-Gymnasium style 6-tuple: reward 1 per step, cost = action (0 or 1),
    terminates after ``length`` steps; observation: steps left / length."""

    def __init__(self, length=3):
        self.observation_space = spaces.Box(0.0, 1.0, (1,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.length = length

    def _obs(self):
        return np.array([(self.length - self.t) / self.length], np.float32)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        self.t += 1
        return self._obs(), 1.0, float(action), self.t >= self.length, False, {}


class Slope(gym.Env):
    """Continuous, Bullet-Safety-Gym style 5-tuple with ``info["cost"]``: x starts at 0.5,
    x <- clip(x + 0.25 clip(a)); reward x; cost 1 while x > 0; truncated after ``length`` steps.
    Observation (x, t / length)."""

    def __init__(self, length=20):
        self.observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.length = length

    def _obs(self):
        return np.array([self.x, self.t / self.length], np.float32)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.x, self.t = 0.5, 0
        return self._obs(), {}

    def step(self, action):
        self.x = float(np.clip(np.float32(self.x) + np.float32(0.25) * np.float32(action[0]), -1.0, 1.0))
        self.t += 1
        return self._obs(), self.x, False, self.t >= self.length, {"cost": float(self.x > 0.0)}


TOY = ToyReach()
TOY_PARAMS = TOY.default_params()
TOY_RESET, TOY_STEP = jax.jit(TOY.reset), jax.jit(TOY.step)


class JaxToyReach(gym.Env):
    """saferl's JAX ToyReach stepped from the host, 6-tuple: the same env on both paths."""

    def __init__(self):
        self.observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (1,), np.float32)

    def reset(self, seed=None, options=None):
        self.state, obs = TOY_RESET(jax.random.PRNGKey(seed or 0), TOY_PARAMS)
        return np.asarray(obs), {}

    def step(self, action):
        self.state, obs, reward, cost, term, trunc, _ = TOY_STEP(self.state, jnp.asarray(action), TOY_PARAMS)
        return np.asarray(obs), float(reward), float(cost), bool(term), bool(trunc), {}


def config(**changes):
    cfg = {
        "algo": "ppo_lag",
        "env": "gym:test",
        "num_envs": 2,
        "rollout_steps": 8,
        "normalize_observations": False,
        "network": NET,
        "hparams": dict(FAST),
    }
    cfg.update(changes)
    return cfg


def test_discrete_six_tuple_rollout_by_hand():
    lengths = (3, 4)
    gamma_c = 0.5
    trainer = GymTrainer(
        config(constraint={"type": "expected", "limit": 1.0, "gamma_c": gamma_c}), [CountDown(n) for n in lengths]
    )
    assert trainer.venv.cost_from == "step"
    traj = trainer.collect(jax.random.PRNGKey(1))
    assert traj.obs.shape == (8, 2, 1) and traj.action.shape == (8, 2) and traj.cost.shape == (8, 2, 1)
    np.testing.assert_array_equal(traj.cost[..., 0], traj.action.astype(np.float32))  # cost from step
    np.testing.assert_array_equal(traj.reward, 1.0)
    assert not traj.truncated.any()
    for i, length in enumerate(lengths):
        t_in_episode = np.arange(8) % length  # steps taken before this one
        done = t_in_episode == length - 1
        np.testing.assert_array_equal(traj.terminated[:, i], done)
        np.testing.assert_array_equal(traj.episode_done[:, i], done)
        np.testing.assert_allclose(traj.obs[:, i, 0], (length - t_in_episode) / length)  # auto-reset: back to 1
        np.testing.assert_allclose(traj.final_obs[:, i, 0], (length - t_in_episode - 1) / length)  # 0 at the end
        for t in np.flatnonzero(done):
            episode = slice(t - length + 1, t + 1)
            costs = traj.action[episode, i].astype(np.float32)
            assert traj.episode_return[t, i] == length and traj.episode_length[t, i] == length
            assert traj.episode_cost[t, i, 0] == costs.sum()
            discounted = np.sum(gamma_c ** np.arange(length) * costs)
            np.testing.assert_allclose(traj.episode_discounted_cost[t, i, 0], discounted)


def test_continuous_info_cost_truncation_and_final_obs():
    venv = gym.vector.SyncVectorEnv([lambda: Slope(length=5)] * 3)
    trainer = GymTrainer(config(num_envs=3, rollout_steps=12), venv)
    assert trainer.venv.cost_from == "info" and trainer.venv.num_envs == 3
    traj = trainer.collect(jax.random.PRNGKey(2))
    for i in range(3):
        x = 0.5
        for t in range(12):
            if t % 5 == 0:  # a new episode
                np.testing.assert_allclose(traj.obs[t, i], [0.5, 0.0])
                x = 0.5
            x = float(np.clip(np.float32(x) + np.float32(0.25) * np.clip(traj.action[t, i, 0], -1, 1), -1, 1))
            assert traj.reward[t, i] == np.float32(x)
            assert traj.cost[t, i, 0] == float(x > 0)  # cost from info
            truncated = t % 5 == 4
            assert traj.truncated[t, i] == truncated and not traj.terminated[t, i]
            np.testing.assert_allclose(traj.final_obs[t, i], [x, (t % 5 + 1) / 5], rtol=1e-6)
            if truncated:
                assert traj.episode_length[t, i] == 5
                np.testing.assert_allclose(traj.episode_return[t, i], traj.reward[t - 4 : t + 1, i].sum(), rtol=1e-6)
                assert traj.episode_cost[t, i, 0] == traj.cost[t - 4 : t + 1, i, 0].sum()
            elif t + 1 < 12:
                np.testing.assert_array_equal(traj.final_obs[t, i], traj.obs[t + 1, i])


def test_same_trajectory_as_the_compiled_rollout():
    """ToyReach through the bridge gives the compiled rollout's Trajectory (normalisation on, truncation at 50)."""
    common = {
        "algo": "ppo_lag",
        "num_envs": 2,
        "rollout_steps": 60,
        "normalize_observations": True,
        "network": NET,
        "hparams": dict(FAST),
        "seed": 3,
    }
    bridge = GymTrainer({**common, "env": "gym:toyreach"}, [JaxToyReach(), JaxToyReach()])
    compiled = Trainer(bridge.config | {"env": "ToyReach"})
    runner = jax.tree.map(lambda x: x[0], compiled.init_all())  # seed 0 of the vmapped init
    jax.tree.map(np.testing.assert_array_equal, bridge.agent.actor_params, runner.agent.actor_params)  # same init
    _, k_roll, _ = jax.random.split(runner.key, 3)
    _, _, expected = jax.jit(collect, static_argnums=(0, 2, 7))(
        compiled.venv,
        compiled.env_params,
        compiled.actor,
        runner.agent.actor_params,
        runner.env_state,
        runner.obs,
        k_roll,
        60,
    )
    bridge.key, k_roll_bridge, _ = jax.random.split(bridge.key, 3)
    np.testing.assert_array_equal(k_roll_bridge, k_roll)
    got = bridge.collect(k_roll_bridge)
    assert got.truncated[49].all() and got.truncated.sum() == 2
    for name in (
        "obs",
        "action",
        "log_prob",
        "reward",
        "cost",
        "final_obs",
        "episode_return",
        "episode_cost",
        "episode_discounted_cost",
    ):
        np.testing.assert_allclose(getattr(got, name), getattr(expected, name), rtol=1e-5, atol=1e-5, err_msg=name)
    for name in ("terminated", "truncated", "episode_done", "episode_length"):
        np.testing.assert_array_equal(getattr(got, name), getattr(expected, name), err_msg=name)


def test_update_runs_and_changes_parameters():
    trainer = GymTrainer(LEARN, Slope)
    before = jax.device_get(trainer.agent)
    row = trainer.iterate()
    after = jax.device_get(trainer.agent)
    assert row["iteration"] == 1 and row["env_steps"] == 8 * 64
    assert row["episodes"] == 8 * 3 and row["episode_length"] == 20  # 64 // 20 episodes per env
    for name in ("actor_loss", "critic_loss", "lagrange_multiplier", "cost_estimate", "episode_cost"):
        assert np.isfinite(row[name]), name
    for params in ("actor_params", "critic_params"):
        changed = jax.tree.map(lambda a, b: not np.allclose(a, b), getattr(before, params), getattr(after, params))
        assert any(jax.tree.leaves(changed)), params
    assert trainer.iterate()["iteration"] == 2  # the compiled update is reused


def test_discrete_actions_fit_the_update():
    """Categorical actions (int32) go through make_batch and the update (traced, not compiled: fast)."""
    trainer = GymTrainer(config(rollout_steps=16), [CountDown(3), CountDown(4)])
    traj = trainer.collect(jax.random.PRNGKey(0))
    assert traj.action.dtype == np.int32 and traj.dist["logits"].shape == (16, 2, 2)
    agent, episodes, metrics = jax.eval_shape(
        trainer.update, trainer.agent, trainer.episodes, traj, jax.random.PRNGKey(1)
    )
    assert jax.tree.structure(agent) == jax.tree.structure(trainer.agent)
    assert metrics["episodes"].shape == () and episodes["cost"].shape == (1,)


def test_gym_id_and_env_params():
    gym.register("SaferlTestSlope-v0", entry_point=Slope)
    env = make_gym_env("gym:SaferlTestSlope-v0", length=7)
    assert env.unwrapped.length == 7
    params = {"length": 4, "cost_from": "info"}  # an environment argument and a bridge option
    trainer = GymTrainer(config(env="gym:SaferlTestSlope-v0", num_envs=3, env_params=params))
    assert trainer.venv.num_envs == 3 and trainer.venv.cost_from == "info"
    assert all(e.unwrapped.length == 4 for e in trainer.venv.envs)


def test_ppo_lag_learning_run_lowers_cost_towards_the_limit(tmp_path):
    """Unconstrained, Slope pays ~every step (cost ~18 of 20); with limit 3 PPO-Lag must walk below x = 0."""
    summary = run({**LEARN, "total_steps": 8 * 64 * 16}, tmp_path, env=Slope, show_progress=False)
    assert (tmp_path / "progress.csv").is_file() and (tmp_path / "config.yaml").is_file()
    assert json.loads((tmp_path / "summary.json").read_text())["env"] == "gym:slope"
    assert summary["env_steps"] == 8 * 64 * 16
    rows = read_progress(tmp_path)
    cost = np.array([r["episode_cost"] for r in rows])  # seeds 0-2: ~18 -> ~2 by iteration 13
    assert cost[:2].mean() > 12.0
    assert cost[-3:].mean() < 6.0
    assert rows[-1]["lagrange_multiplier"] > 1.0
    # the run's learner states read back without its environment, as the bridge's own resume reads them
    probe = GymTrainer({**LEARN, "total_steps": 8 * 64 * 16}, env=Slope)
    seeds = range(json.loads((tmp_path / "summary.json").read_text())["seeds"])
    template = jax.tree.map(lambda x: np.stack([np.asarray(x)] * len(seeds)), probe.state())
    expected, _ = load_checkpoint(tmp_path, template)
    learner, states = load_learner_states(tmp_path, probe.venv.obs_dim, probe.venv.action_space)
    assert jax.tree.structure(states) == jax.tree.structure(expected)
    assert all(np.array_equal(a, b) for a, b in zip(jax.tree.leaves(states), jax.tree.leaves(expected)))
    assert np.asarray(states["iteration"]).tolist() == [16] * len(seeds)
    assert learner.actor is not None


# --------------------------------------------------------------------------- bad environments


class FourTuple(CountDown):
    def step(self, action):
        obs, reward, _, term, trunc, info = super().step(action)
        return obs, reward, term or trunc, info


class NoCost(Slope):
    def step(self, action):
        obs, reward, term, trunc, _ = super().step(action)
        return obs, reward, term, trunc, {"other": 1}


class DictObs(CountDown):
    def __init__(self):
        super().__init__()
        self.observation_space = spaces.Dict({"a": spaces.Box(0.0, 1.0, (1,))})


class EchoAction(Slope):
    """Slope whose reward is the action it received, as received."""

    def step(self, action):
        obs, _, terminated, truncated, info = super().step(action)
        return obs, float(action[0]), terminated, truncated, info


@pytest.mark.parametrize("clip", [True, False])
def test_box_actions_are_clipped_unless_clip_actions_is_false(clip):
    venv = HostVecEnv([EchoAction(), EchoAction()], clip_actions=clip)
    venv.reset([0, 1])
    reward = venv.step(np.array([[3.0], [-0.5]], np.float32)).reward
    np.testing.assert_array_equal(reward, [1.0, -0.5] if clip else [3.0, -0.5])


@pytest.mark.parametrize(
    "env, options, message",
    [
        (FourTuple(), {}, r"step returned 4 values.*pre-0.26 Gym API"),
        (NoCost(), {}, r"no cost found.*info has no 'cost' key \(info keys: other\)"),
        (Slope(), {"cost_from": "step"}, r"step returned 5 values, expected 6 values.*cost_from='step'"),
        (CountDown(), {"cost_from": "info"}, r"step returned 6 values, expected 5 values.*cost_from='info'"),
        (NoCost(), {"cost_from": "info"}, r"no cost in this step's info \(key 'cost'\)"),
        (Slope(), {"cost_key": "risk"}, r"info has no 'risk' key"),
        (Slope(), {"cost_from": "reward"}, r"cost_from must be one of auto, step, info"),
        (Slope(), {"clip_actions": "no"}, r"clip_actions must be true or false; got 'no'"),
        (DictObs(), {}, r"unsupported observation space Dict.*FlattenObservation"),
    ],
)
def test_bad_env_gives_a_clear_value_error(env, options, message):
    with pytest.raises(ValueError, match=message):
        HostVecEnv([env], **options)


def test_bad_env_through_the_trainer():
    with pytest.raises(ValueError, match="4 values"):
        GymTrainer(config(num_envs=1), FourTuple)
    with pytest.raises(ValueError, match="num_envs=3 but 2 environments"):
        GymTrainer(config(num_envs=3), [CountDown(), CountDown()])


def test_algorithm_that_augments_the_environment_is_refused(monkeypatch):
    from saferl.algos.ppo_lag import PPOLag

    monkeypatch.setattr(PPOLag, "wrap_env", classmethod(lambda cls, env, hparams, constraint: ToyReach()))
    with pytest.raises(ValueError, match="algorithm ppo_lag augments the environment"):
        GymTrainer(config(), [CountDown(), CountDown()])


# ------------------------------------------------------------------- registered 6-tuple envs, NaNs, no gymnasium


def register(env_id, entry_point, **options):
    if env_id not in gym.registry:
        gym.register(id=env_id, entry_point=entry_point, **options)
    return env_id


def test_registered_six_tuple_env_steps_through_gymnasium_make():
    """gymnasium.make's passive checker and TimeLimit reject 6 values; the bridge builds and steps them."""
    env_id = register("SaferlTestCountDown-v0", CountDown, kwargs={"length": 3})
    venv = HostVecEnv([make_gym_env("gym:" + env_id) for _ in range(2)])
    assert venv.cost_from == "step" and venv.name == env_id
    venv.reset(seeds=[0, 1])
    for t in range(6):
        step = venv.step(np.array([1, 0]))
        np.testing.assert_array_equal(step.cost[:, 0], [1.0, 0.0])
        np.testing.assert_array_equal(step.terminated, t % 3 == 2)
        np.testing.assert_allclose(step.final_obs[:, 0], (2 - t % 3) / 3)
    np.testing.assert_array_equal(step.episode_cost[:, 0], [3.0, 0.0])
    np.testing.assert_array_equal(step.episode_length, [3, 3])


def test_registered_six_tuple_env_with_time_limit_and_checker():
    """max_episode_steps (TimeLimit) truncates a 6-tuple env; an env made with the checker on also works."""
    env_id = register("SaferlTestCountDownLimit-v0", CountDown, kwargs={"length": 5}, max_episode_steps=2)
    for venv in (
        HostVecEnv([make_gym_env("gym:" + env_id)]),
        HostVecEnv(gym.vector.SyncVectorEnv([lambda: gym.make(env_id, disable_env_checker=False)] * 2)),
    ):
        assert venv.cost_from == "step"
        venv.reset()
        for t in range(4):
            step = venv.step(np.ones((venv.num_envs,), np.int32))
            assert (step.truncated == (t % 2 == 1)).all() and not step.terminated.any()
            np.testing.assert_allclose(step.final_obs[:, 0], (4 - t % 2) / 5)
        np.testing.assert_array_equal(step.episode_length, 2)
        np.testing.assert_array_equal(step.obs[:, 0], 1.0)  # reset after the truncation


def test_registered_env_without_cost_gives_one_line_naming_it():
    env_id = register("SaferlTestNoCost-v0", NoCost)
    for options, key in (({}, "cost"), ({"cost_key": "risk"}, "risk")):
        with pytest.raises(ValueError) as err:
            HostVecEnv([make_gym_env("gym:" + env_id)], **options)
        message = str(err.value)
        assert "\n" not in message
        assert message.startswith(f"{env_id}: no cost found: looked for it as the third of 6 step values")
        assert f"in info['{key}']" in message and "info keys: other" in message


class NonFinite(CountDown):
    """CountDown (length 5) whose ``field`` is NaN (or inf) on the ``at``-th step of each episode (0: reset)."""

    def __init__(self, field, at=3, value=np.nan):
        super().__init__(length=5)
        self.field, self.at, self.value = field, at, value

    def reset(self, seed=None, options=None):
        obs, info = super().reset(seed=seed)
        if self.field == "observation" and self.at == 0:  # at=0: the reset observation
            obs = np.array([self.value], np.float32)
        return obs, info

    def step(self, action):
        obs, reward, cost, term, trunc, info = super().step(action)
        if self.t == self.at:
            if self.field == "observation":
                obs = np.array([self.value], np.float32)
            elif self.field == "reward":
                reward = self.value
            else:
                cost = self.value
        return obs, reward, cost, term, trunc, info


class NaNInfoCost(Slope):
    def step(self, action):
        obs, reward, term, trunc, info = super().step(action)
        return obs, reward, term, trunc, {"cost": np.nan if self.t == 2 else info["cost"]}


@pytest.mark.parametrize(
    "field, value",
    [("observation", np.nan), ("reward", np.nan), ("cost", np.nan), ("reward", np.inf), ("observation", -np.inf)],
)
def test_non_finite_step_values_are_refused(field, value):
    venv = HostVecEnv([CountDown(5), NonFinite(field, at=3, value=value)], name="gym:nan-test")
    venv.reset()
    venv.step(np.array([1, 1]))
    venv.step(np.array([1, 1]))
    with pytest.raises(NonFiniteError) as err:
        venv.step(np.array([1, 1]))
    message = str(err.value)
    assert "\n" not in message and isinstance(err.value, ValueError)
    assert message == (
        f"gym:nan-test: environment 1 of 2 returned a non-finite {field} at step 3 "
        f"(episode step 3): {np.float32(value)}"
    )
    with pytest.raises(RuntimeError, match="call reset"):  # the vector is not stepped on after the error
        venv.step(np.array([1, 1]))


def test_non_finite_info_cost_reset_and_probe_are_refused():
    venv = HostVecEnv([NaNInfoCost()])
    venv.reset()
    venv.step(np.zeros((1, 1), np.float32))
    with pytest.raises(NonFiniteError, match=r"^NaNInfoCost: the environment returned a non-finite cost at step 2 "):
        venv.step(np.zeros((1, 1), np.float32))
    with pytest.raises(NonFiniteError, match=r"non-finite observation on the probe step"):
        HostVecEnv([NonFinite("observation", at=1)])
    with pytest.raises(NonFiniteError, match=r"environment 1 of 2 returned a non-finite observation from reset\(\)"):
        HostVecEnv([CountDown(5), NonFinite("observation", at=0)]).reset()
    venv = HostVecEnv([CountDown(5), NonFinite("observation", at=0)])
    venv.envs[1].at = -1  # not at reset(), only at the automatic reset after an episode
    venv.reset()
    venv.envs[1].at = 0
    for _ in range(4):
        venv.step(np.array([0, 0]))
    with pytest.raises(
        NonFiniteError,
        match=r"environment 1 of 2 returned a non-finite observation from the "
        r"automatic reset after step 5: nan",
    ):
        venv.step(np.array([0, 0]))


def test_missing_gymnasium_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "gymnasium", None)  # import gymnasium now fails
    message = (
        r"^Gymnasium environments \(env gym:\.\.\.\) needs the optional extra 'gym' \(module 'gymnasium' "
        r"is not installed\): pip install 'saferl\[gym\]'$"
    )
    with pytest.raises(MissingExtraError, match=message):
        make_gym_env("gym:CartPole-v1")
    with pytest.raises(MissingExtraError, match=message):
        HostVecEnv([CountDown()])
