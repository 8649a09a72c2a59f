"""The navigation tasks compute exactly what they computed when ``trajectories.json`` was written.

For each task: four vmapped environments under the task's default parameters (and, where the task has
action noise, which is 0 by default, two more with ``action_noise = 0.5``), reset from a fixed key, then
stepped through :class:`~saferl.envs.wrappers.AutoReset` (a pool of one fresh reset per environment) for
a few steps past the end of the first episode, with actions drawn from a fixed key uniformly in
``[-1.5, 1.5]^2`` (past the action bounds).  Random actions seldom reach a goal, so every
``NUDGE_EVERY`` steps the goal is moved to where the robot (PointPush1: the box) is, or the goal
button next to the car, and the next step reaches it (reward bonus, goal resampling, CarButton1's
timer).  The test compares sha256 digests of the bytes of every observation, reward, cost,
``terminated``, ``truncated`` and info entry, and of every leaf of the initial and final states, for
the default and the noisy environments apart.  Regenerate the fixture only on purpose::

    JAX_PLATFORMS=cpu python tests/envs/safety_nav/test_trajectories_unchanged.py --write

Bit-identity is a property of one JAX/XLA version on one kind of CPU: the fixture records the JAX
version it was made with, and the digests may legitimately differ under another.
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

FIXTURE = Path(__file__).with_name("trajectories.json")
TASKS = ("PointGoal1", "PointPush1", "CarButton1", "RacecarCircle1")
NUM_ENVS = 4  # under the default parameters
NOISY_ENVS, NOISE = 2, 0.5  # more, with action noise, where the task has it
EXTRA_STEPS = 5  # steps past the first episode's end
ACTION_SCALE = 1.5
NUDGE_EVERY = 150


def _left(yaw):
    return jnp.stack([jnp.cos(yaw), jnp.sin(yaw)])


#: per task, a state with its goal where the next step reaches it
NUDGES = {
    "PointGoal1": lambda s: s.replace(goal=s.pos),
    "PointPush1": lambda s: s.replace(goal=s.box_pos),
    # the goal button 0.25 to the car's left: inside the touching reach 0.263, so pushed out and pressed
    "CarButton1": lambda s: s.replace(buttons=s.buttons.at[s.goal_button].set(s.car.pos + 0.25 * _left(s.car.yaw))),
    "RacecarCircle1": lambda s: s,  # no goal
}


def _lanes(params):
    """The parameters of each environment, stacked: the defaults, then (where the task has any) noisy ones."""
    noisy = hasattr(params, "action_noise")
    n = NUM_ENVS + (NOISY_ENVS if noisy else 0)
    stacked = jax.tree.map(lambda x: jnp.broadcast_to(jnp.asarray(x), (n,) + jnp.shape(x)), params)
    if noisy:
        stacked = stacked.replace(action_noise=jnp.where(jnp.arange(n) < NUM_ENVS, 0.0, NOISE))
    return stacked, n


def trajectory_digests(name: str) -> dict[str, str]:
    env = base.make(name)
    params = env.default_params().replace(physics="planar")  # the planar ports these digests fix
    steps = int(params.max_steps) + EXTRA_STEPS
    lanes, n = _lanes(params)
    reset_keys = jax.random.split(jax.random.PRNGKey(20261201), n)
    actions = ACTION_SCALE * jax.random.uniform(jax.random.PRNGKey(7), (steps, n, 2), minval=-1.0, maxval=1.0)

    first, first_obs, final, outs = rollout(
        env, lanes, reset_keys, actions, params_per_env=True, nudge=NUDGES[name], nudge_every=NUDGE_EVERY
    )
    digests = {}
    for group, envs in (("", slice(0, NUM_ENVS)), ("noisy.", slice(NUM_ENVS, n))):
        if envs.start == envs.stop:
            continue
        group_outs = jax.tree.map(lambda x: x[:, envs], outs)  # (step, env, ...)
        _, _, _, term, trunc, info = group_outs
        group_state = [jax.tree.map(lambda x: x[envs], tree) for tree in (first, first_obs, final)]
        digests.update(outcome_digests(*group_state, group_outs, group=group))
        # what the trajectory covers, so that a regenerated fixture shows it still does
        digests[group + "episode_ends"] = str(int(np.sum(np.asarray(term) | np.asarray(trunc))))
        digests[group + "goals_reached"] = str(int(np.sum(np.asarray(info.get("goal_reached", 0.0)))))
    return digests


@pytest.fixture(scope="module")
def fixture():
    return json.loads(FIXTURE.read_text())


@pytest.mark.parametrize("name", TASKS)
def test_trajectory_is_bit_identical(name, fixture):
    expected = fixture["tasks"][name]
    got = trajectory_digests(name)
    assert int(expected["episode_ends"]) >= NUM_ENVS
    made_with = f"{FIXTURE.name}, made with JAX {fixture['jax']}; this is {jax.__version__}"
    assert_unchanged(got, expected, name, made_with)


if __name__ == "__main__":
    if "--write" not in sys.argv:
        raise SystemExit("usage: test_trajectories_unchanged.py --write  (overwrites the fixture)")
    out = {"jax": jax.__version__, "tasks": {name: trajectory_digests(name) for name in TASKS}}
    FIXTURE.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(
        {
            name: {k: v for k, v in d.items() if k.endswith(("episode_ends", "goals_reached"))}
            for name, d in out["tasks"].items()
        }
    )
