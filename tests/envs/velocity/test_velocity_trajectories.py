"""The MuJoCo robots compute exactly what they computed when ``velocity_trajectories.json`` was written.

For each velocity task (default physics, MuJoCo C on the host) and EcoAnt (MJX): four vmapped environments under
the task's default parameters, reset from a fixed key, then stepped ``STEPS`` times (HalfCheetah, which never
falls: past its time limit) through
:class:`~saferl.envs.wrappers.AutoReset` (a pool of one fresh reset per environment) in one compiled
``lax.scan``, with actions drawn from a fixed key uniformly in ``[-1.5, 1.5]^nu`` (past the action bounds, which
the velocity tasks' control cost squares unclipped).  The test compares sha256 digests of the bytes of every
observation, reward, cost, ``terminated``, ``truncated`` and info entry, and of every leaf of the initial and
final states.  Regenerate the fixture only on purpose::

    JAX_PLATFORMS=cpu python tests/envs/velocity/test_velocity_trajectories.py --write

Bit-identity is a property of one JAX/XLA and MuJoCo version on one kind of CPU: the fixture records the versions
it was made with, and the digests may legitimately differ under others.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")
pytest.importorskip("mujoco.mjx")
pytest.importorskip("gymnasium")

from fixture_rollouts import assert_unchanged, outcome_digests, rollout  # noqa: E402

import saferl.envs  # noqa: E402,F401  (registers the tasks)
from saferl.envs import base  # noqa: E402

FIXTURE = Path(__file__).with_name("velocity_trajectories.json")
TASKS = ("SafetyAntVelocity", "SafetyHalfCheetahVelocity", "SafetyHopperVelocity", "SafetyHumanoidVelocity", "EcoAnt")
NUM_ENVS = 4
STEPS = 300
#: tasks stepped past their time limit instead, so that the trajectory holds a truncation
TO_TIME_LIMIT = ("SafetyHalfCheetahVelocity",)
ACTION_SCALE = 1.5


def trajectory_digests(name: str) -> dict[str, str]:
    env = base.make(name)
    params = env.default_params()
    reset_keys = jax.random.split(jax.random.PRNGKey(20261202), NUM_ENVS)
    steps = int(params.max_steps) + 5 if name in TO_TIME_LIMIT else STEPS
    shape = (steps, NUM_ENVS, *env.action_space(params).shape)
    actions = ACTION_SCALE * jax.random.uniform(jax.random.PRNGKey(11), shape, minval=-1.0, maxval=1.0)

    first, first_obs, final, outs = rollout(env, params, reset_keys, actions)
    digests = outcome_digests(first, first_obs, final, outs)
    _, _, cost, term, trunc, _ = outs
    # what the trajectory covers, so that a regenerated fixture shows it still does
    digests["episode_ends"] = str(int(np.sum(np.asarray(term) | np.asarray(trunc))))
    digests["cost_steps"] = str(int(np.sum(np.asarray(cost) > 0)))
    return digests


@pytest.fixture(scope="module")
def fixture():
    return json.loads(FIXTURE.read_text())


#: the two longest compiles (about 20 s each on 2 cores) run in make test-slow; the family's shared hooks are
#: pinned by the other three in make test
SLOW_TASKS = ("SafetyHumanoidVelocity", "EcoAnt")


@pytest.mark.parametrize(
    "name", [pytest.param(name, marks=pytest.mark.slow) if name in SLOW_TASKS else name for name in TASKS]
)
def test_trajectory_is_bit_identical(name, fixture):
    expected = fixture["tasks"][name]
    got = trajectory_digests(name)
    made_with = (
        f"{FIXTURE.name}, made with JAX {fixture['jax']}, MuJoCo {fixture['mujoco']}; "
        f"this is {jax.__version__}, {mujoco.__version__}"
    )
    assert_unchanged(got, expected, name, made_with)


if __name__ == "__main__":
    if "--write" not in sys.argv:
        raise SystemExit("usage: test_velocity_trajectories.py --write  (overwrites the fixture)")
    out = {
        "jax": jax.__version__,
        "mujoco": mujoco.__version__,
        "tasks": {name: trajectory_digests(name) for name in TASKS},
    }
    FIXTURE.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print({name: (d["episode_ends"], d["cost_steps"]) for name, d in out["tasks"].items()})
