"""The ball tasks compute exactly what they computed when ``ball_trajectories.json`` was written.

For each task and each version (``"0.1"``, the default, and ``"1.4.0"``): four vmapped environments under the
version's default parameters, reset from a fixed key, then stepped through :class:`~saferl.envs.wrappers.AutoReset`
(a pool of one fresh reset per environment) for a few steps past the time limit, with actions drawn from a fixed
key uniformly in ``[-1.5, 1.5]^2`` (past the action bounds).  Random actions seldom reach a goal or an apple, so
every ``NUDGE_EVERY`` steps Reach's goal and Gather's apples and bombs are moved to the ball, and the next step
reaches them (goal bonus and re-spawn, collection, bomb cost, Gather's termination).  The test compares sha256
digests of the bytes of every observation, reward, cost, ``terminated``, ``truncated`` and info entry, and of
every leaf of the initial and final states.  Regenerate the fixture only on purpose::

    JAX_PLATFORMS=cpu python tests/envs/bullet_ball/test_ball_trajectories.py --write

Bit-identity is a property of one JAX/XLA version on one kind of CPU: the fixture records the JAX version it was
made with, and the digests may legitimately differ under another.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from fixture_rollouts import assert_unchanged, outcome_digests, rollout

import saferl.envs  # noqa: F401  (registers the tasks)
from saferl.envs import base

FIXTURE = Path(__file__).with_name("ball_trajectories.json")
TASKS = ("SafetyBallRun", "SafetyBallCircle", "SafetyBallGather", "SafetyBallReach")
VERSIONS = ("0.1", "1.4.0")
NUM_ENVS = 4
EXTRA_STEPS = 5  # steps past the time limit
ACTION_SCALE = 1.5
NUDGE_EVERY = 60

#: per task, a state whose next step reaches its goal (Reach) or every apple and bomb (Gather)
NUDGES = {
    "SafetyBallRun": lambda s: s,
    "SafetyBallCircle": lambda s: s,
    "SafetyBallGather": lambda s: s.replace(
        apples=jnp.broadcast_to(s.pos, s.apples.shape), bombs=jnp.broadcast_to(s.pos, s.bombs.shape)
    ),
    "SafetyBallReach": lambda s: s.replace(goal=s.pos),
}


def trajectory_digests(name: str, version: str) -> dict[str, str]:
    env = base.make(name, version=version)
    params = env.default_params()
    steps = int(params.max_steps) + EXTRA_STEPS
    reset_keys = jax.random.split(jax.random.PRNGKey(20261203), NUM_ENVS)
    actions = ACTION_SCALE * jax.random.uniform(jax.random.PRNGKey(5), (steps, NUM_ENVS, 2), minval=-1.0, maxval=1.0)

    outs = rollout(env, params, reset_keys, actions, nudge=NUDGES[name], nudge_every=NUDGE_EVERY)
    digests = outcome_digests(*outs)
    _, _, cost, term, trunc, info = outs[-1]
    # what the trajectory covers, so that a regenerated fixture shows it still does
    digests["terminations"] = str(int(np.sum(np.asarray(term))))
    digests["truncations"] = str(int(np.sum(np.asarray(trunc))))
    digests["cost_steps"] = str(int(np.sum(np.asarray(cost) > 0)))
    digests["goals_reached"] = str(int(np.sum(np.asarray(info.get("goal_reached", 0.0)))))
    return digests


@pytest.fixture(scope="module")
def fixture():
    return json.loads(FIXTURE.read_text())


# version 1.4.0 differs from 0.1 in parameters only (the same step): it runs in make test-slow
@pytest.mark.parametrize(
    "version", [pytest.param(v, marks=pytest.mark.slow) if v != VERSIONS[0] else v for v in VERSIONS]
)
@pytest.mark.parametrize("name", TASKS)
def test_trajectory_is_bit_identical(name, version, fixture):
    expected = fixture["tasks"][f"{name}@{version}"]
    got = trajectory_digests(name, version)
    assert int(expected["terminations"]) + int(expected["truncations"]) >= NUM_ENVS
    made_with = f"{FIXTURE.name}, made with JAX {fixture['jax']}; this is {jax.__version__}"
    assert_unchanged(got, expected, f"{name} {version}", made_with)


if __name__ == "__main__":
    if "--write" not in sys.argv:
        raise SystemExit("usage: test_ball_trajectories.py --write  (overwrites the fixture)")
    out = {
        "jax": jax.__version__,
        "tasks": {f"{name}@{version}": trajectory_digests(name, version) for name in TASKS for version in VERSIONS},
    }
    FIXTURE.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(
        {
            key: (d["terminations"], d["truncations"], d["cost_steps"], d["goals_reached"])
            for key, d in out["tasks"].items()
        }
    )
