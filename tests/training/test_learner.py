"""One learner for both trainers: the compiled Trainer and the Gymnasium bridge build the same
Learner from a config and, given the same trajectory, reach the same agent state bit for bit;
the bridge's runs resume from their checkpoints and refuse what they cannot run in one line."""

import json

import gymnasium as gym
import jax
import numpy as np
import pytest
from gymnasium import spaces

from saferl import cli
from saferl.envs.toy import ToyReach
from saferl.training import gym_trainer as bridge_train
from saferl.training import run_directory
from saferl.training.gym_trainer import GymTrainer
from saferl.training.trainer import Trainer

NET = {"actor_hidden": [16], "critic_hidden": [16], "activation": "tanh"}
TOY = ToyReach()
TOY_PARAMS = TOY.default_params()
TOY_RESET, TOY_STEP = jax.jit(TOY.reset), jax.jit(TOY.step)


class HostToyReach(gym.Env):
    """saferl's ToyReach stepped from the host (Safety-Gymnasium's 6-tuple)."""

    def __init__(self, params=TOY_PARAMS):
        self.observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.params = params

    def reset(self, seed=None, options=None):
        self.state, obs = TOY_RESET(jax.random.PRNGKey(seed or 0), self.params)
        return np.asarray(obs), {}

    def step(self, action):
        self.state, obs, reward, cost, term, trunc, _ = TOY_STEP(self.state, jax.numpy.asarray(action), self.params)
        return np.asarray(obs), float(reward), float(cost), bool(term), bool(trunc), {}


def test_same_trajectory_through_learn_gives_the_same_agent_on_both_paths():
    """PPO-Lag with a cost window and a discounted constraint: the set-ups the bridge once restated by hand."""
    config = {
        "algo": "ppo_lag",
        "env": "gym:toyreach",
        "num_envs": 2,
        "rollout_steps": 60,
        "seed": 5,
        "normalize_observations": False,
        "network": NET,
        "constraint": {"type": "expected", "limit": 5.0, "gamma_c": 0.99, "window": 3},
        "hparams": {"epochs": 2, "minibatches": 2, "cost_gamma": 0.95},
    }
    bridge = GymTrainer(config, [HostToyReach(), HostToyReach()])
    compiled = Trainer(bridge.config | {"env": "ToyReach"})
    np.testing.assert_array_equal(bridge.learner.gammas, compiled.learner.gammas)
    runner = jax.tree.map(lambda x: x[0], compiled.init_all())
    _, k_roll, k_upd = jax.random.split(runner.key, 3)
    _, _, traj = jax.jit(compiled.collect)(runner, k_roll)
    traj = jax.device_get(traj)
    expected = jax.jit(compiled.learner.learn)(runner.agent, runner.episodes, traj, k_upd)
    got = jax.jit(bridge.update)(bridge.agent, bridge.episodes, traj, k_upd)
    jax.tree.map(np.testing.assert_array_equal, jax.device_get(got), jax.device_get(expected))
    moved = jax.tree.map(lambda a, b: not np.array_equal(a, b), expected[0].actor_params, runner.agent.actor_params)
    assert any(jax.tree.leaves(moved))  # the update did something


class Slope(gym.Env):
    """x <- clip(x + 0.25 a); reward x; cost 1 while x > 0 (info['cost']); 20-step episodes."""

    def __init__(self):
        self.observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (1,), np.float32)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.x, self.t = 0.5, 0
        return np.array([self.x, 0.0], np.float32), {}

    def step(self, action):
        self.x = float(np.clip(self.x + 0.25 * float(np.clip(action[0], -1, 1)), -1.0, 1.0))
        self.t += 1
        return np.array([self.x, self.t / 20], np.float32), self.x, False, self.t >= 20, {"cost": float(self.x > 0)}


gym.register("SaferlLearnerSlope-v0", entry_point=Slope)
RESUMABLE = {
    "algo": "ppo_lag",
    "env": "gym:SaferlLearnerSlope-v0",
    "num_envs": 2,
    "rollout_steps": 40,
    "seeds": 2,
    "total_steps": 2 * 40 * 4,
    "iterations_per_chunk": 2,
    "network": NET,
    "hparams": {"epochs": 2, "minibatches": 2},
}


def test_bridge_run_resumes_from_its_checkpoint(tmp_path):
    """Interrupted after seed 0's first chunk, the run resumes: seed 0 continues from iteration 2 with
    the saved agent, seed 1 trains from scratch, and no row is lost or repeated."""
    calls = {"n": 0}
    original = GymTrainer.iterate

    def interrupting(self):
        calls["n"] += 1
        if calls["n"] == 3:  # the first iteration of seed 0's second chunk
            raise KeyboardInterrupt
        return original(self)

    GymTrainer.iterate = interrupting
    try:
        with pytest.raises(KeyboardInterrupt):
            bridge_train.run(RESUMABLE, tmp_path, show_progress=False)
    finally:
        GymTrainer.iterate = original
    saved = json.loads((tmp_path / "summary.json").read_text())
    assert saved["interrupted"] and [r["iteration"] for r in run_directory.read_progress(tmp_path)] == [1, 2]
    assert cli.main(["train", "--resume", str(tmp_path), "--quiet"]) == 0
    rows = run_directory.read_progress(tmp_path)
    assert [(r["seed"], r["iteration"]) for r in rows] == [
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (1, 1),
        (1, 2),
        (1, 3),
        (1, 4),
    ]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert not summary["interrupted"] and summary["env_steps"] == 4 * 80
    assert summary["training_seconds"] > summary["wall_seconds"]  # both sittings counted
    state, _ = run_directory.load_checkpoint(
        tmp_path, jax.tree.map(lambda x: np.stack([np.asarray(x)] * 2), GymTrainer(RESUMABLE, seed_index=0).state())
    )
    np.testing.assert_array_equal(state["iteration"], [4, 4])


@pytest.mark.parametrize("surrogate", ["cantelli", pytest.param("cvar", marks=pytest.mark.slow)])
def test_var_augmentation_around_the_host_step_matches_the_compiled_rollout(surrogate):
    """The risk augmentation (y_t / rho, gamma_c^t, t / T and the surrogate's per-step costs) applied around
    host-stepped ToyReach gives the compiled rollout's trajectory, episode ends and resets included."""
    common = {
        "algo": "ppo_lag",
        "num_envs": 2,
        "rollout_steps": 60,
        "seed": 3,
        "normalize_observations": True,
        "network": NET,
        "hparams": {"epochs": 2, "minibatches": 2},
        "constraint": {"type": "var", "rho": 4.0, "epsilon": 0.1, "gamma_c": 0.98, "surrogate": surrogate},
    }
    gym.register(f"SaferlHostToy{surrogate}-v0", entry_point=HostToyReach, max_episode_steps=None)
    near = TOY_PARAMS.replace(cost_threshold=0.05)  # a random walk pays some cost
    bridge = GymTrainer({**common, "env": f"gym:SaferlHostToy{surrogate}-v0"}, [HostToyReach(near), HostToyReach(near)])
    compiled = Trainer(bridge.config | {"env": "ToyReach", "env_params": {"cost_threshold": 0.05}})
    assert bridge.wrappers is not None and bridge.learner.critics.num_channels == compiled.critics.num_channels
    runner = jax.tree.map(lambda x: x[0], compiled.init_all())
    _, k_roll, _ = jax.random.split(runner.key, 3)
    _, _, expected = jax.jit(compiled.collect)(runner, k_roll)
    bridge.key, k_roll_bridge, _ = jax.random.split(bridge.key, 3)
    got = bridge.collect(k_roll_bridge)
    assert got.truncated[49].all() and got.obs.shape == expected.obs.shape == (60, 2, 4)
    for name in ("obs", "cost", "final_obs", "episode_cost", "episode_discounted_cost", "reward"):
        np.testing.assert_allclose(getattr(got, name), getattr(expected, name), rtol=1e-5, atol=1e-5, err_msg=name)
    assert np.abs(np.asarray(expected.cost)[..., -1]).sum() > 0  # the surrogate's channel saw costs
    row = bridge.iterate()
    assert np.isfinite(row["violation_probability"]) and np.isfinite(row["lagrange_multiplier"])


def test_bridge_refuses_what_it_cannot_wrap_in_one_line(tmp_path, capsys):
    code = cli.main(
        [
            "train",
            "--algo",
            "canary",
            "--env",
            "gym:SaferlLearnerSlope-v0",
            "--out",
            str(tmp_path / "r"),
            "--quiet",
            "--set",
            "constraint.finite_horizon=true",
        ]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "finite_horizon needs the time limit" in err
    assert not (tmp_path / "r").exists()
