"""The SCPO targets' planned runs build: every method's config, resolved on each task it trains, makes its networks
(CartSafe's discrete actions take no fixed action std; the ball tasks' baselines do)."""

from __future__ import annotations

import pytest

from saferl.envs import base as envs
from saferl.reproduce.scpo import cartsafe, common
from saferl.training import config as configlib
from saferl.training.learner import Learner


def _learner(algo: str, over: dict, task: str) -> Learner:
    cfg = configlib.resolve({"algo": algo, "env": task, **over})
    env = envs.make(task)
    params = env.default_params()
    obs_dim = env.observation_space(params).shape[0] + (1 if algo == "scpo" else 0)
    return Learner(cfg, obs_dim, env.action_space(params), 1, 1)


@pytest.mark.parametrize("label, algo, over", cartsafe.CARTSAFE_METHODS, ids=[m[0] for m in cartsafe.CARTSAFE_METHODS])
def test_every_cartsafe_method_builds_a_categorical_policy(label, algo, over):
    learner = _learner(algo, over, "CartSafe")
    assert learner.action_std_anneal is None, label


def test_the_ball_baselines_keep_their_annealed_std_and_cartsafe_drops_only_that():
    ball = {label: over for label, _, over in common.METHODS}
    for label, _, over in cartsafe.CARTSAFE_METHODS:
        assert "action_std_anneal" not in over.get("network", {}), label
        stripped = {k: v for k, v in ball[label].get("network", {}).items() if k != "action_std_anneal"}
        assert over.get("network", {}) == stripped and over.get("hparams") == ball[label].get("hparams"), label
    learner = _learner("trpo_lag", ball["TRPO-L"], "SafetyBallRun")
    assert learner.action_std_anneal == (0.499, 0.01)
