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
it was made with, and the digests may legitimately differ under others.  The fixture also holds fingerprints of every
float array (:func:`fixture_rollouts.outcome_fingerprints`): on a CPU that rounds a reduction differently (the Ant's
and Humanoid's control cost over 8 and 17 actuators, AVX2 against AVX-512), an array whose digest differs passes when
its fingerprints agree to 1e-6 of its magnitude.  ``--add-fingerprints`` adds them to the fixture, digests unchanged.
Where rounding grows into another trajectory (the Humanoid's and EcoAnt's contacts), the fixture holds that CPU kind's
own digests (``by_cpu``, :func:`cpu_kind`; ``--add-cpu-digests`` records this machine's): the test then asks for
bit-identity with the trajectory recorded on a CPU of its kind.
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

from fixture_rollouts import assert_unchanged, outcome_digests, outcome_fingerprints, rollout  # noqa: E402

import saferl.envs  # noqa: E402,F401  (registers the tasks)
from saferl.envs import base  # noqa: E402

FIXTURE = Path(__file__).with_name("velocity_trajectories.json")
TASKS = ("SafetyAntVelocity", "SafetyHalfCheetahVelocity", "SafetyHopperVelocity", "SafetyHumanoidVelocity", "EcoAnt")
NUM_ENVS = 4
STEPS = 300
#: tasks stepped past their time limit instead, so that the trajectory holds a truncation
TO_TIME_LIMIT = ("SafetyHalfCheetahVelocity",)
ACTION_SCALE = 1.5


def trajectory_digests(name: str) -> tuple[dict[str, str], dict[str, list[float]]]:
    env = base.make(name)
    params = env.default_params()
    reset_keys = jax.random.split(jax.random.PRNGKey(20261202), NUM_ENVS)
    steps = int(params.max_steps) + 5 if name in TO_TIME_LIMIT else STEPS
    shape = (steps, NUM_ENVS, *env.action_space(params).shape)
    actions = ACTION_SCALE * jax.random.uniform(jax.random.PRNGKey(11), shape, minval=-1.0, maxval=1.0)

    first, first_obs, final, outs = rollout(env, params, reset_keys, actions)
    digests = outcome_digests(first, first_obs, final, outs)
    prints = outcome_fingerprints(first, first_obs, final, outs)
    _, _, cost, term, trunc, _ = outs
    # what the trajectory covers, so that a regenerated fixture shows it still does
    digests["episode_ends"] = str(int(np.sum(np.asarray(term) | np.asarray(trunc))))
    digests["cost_steps"] = str(int(np.sum(np.asarray(cost) > 0)))
    return digests, prints


def cpu_kind() -> str:
    """The widest x86 vector extension the CPU reports (``/proc/cpuinfo``), which sets how XLA vectorises a
    reduction: ``avx512``, ``avx2`` or ``other``."""
    try:
        flags = set(Path("/proc/cpuinfo").read_text().split())
    except OSError:
        return "other"
    return "avx512" if "avx512f" in flags else "avx2" if "avx2" in flags else "other"


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
    got, got_prints = trajectory_digests(name)
    own = fixture.get("by_cpu", {}).get(cpu_kind(), {}).get(name)
    if own is not None and got != expected:
        expected = own  # the trajectory as a CPU of this kind rounds it (module docstring)
    made_with = (
        f"{FIXTURE.name}, made with JAX {fixture['jax']}, MuJoCo {fixture['mujoco']}; "
        f"this is {jax.__version__}, {mujoco.__version__}"
    )
    assert_unchanged(got, expected, name, made_with, got_prints, fixture.get("fingerprints", {}).get(name))


if __name__ == "__main__":
    if not {"--write", "--add-fingerprints", "--add-cpu-digests"} & set(sys.argv):
        raise SystemExit(
            "usage: test_velocity_trajectories.py --write (overwrites the fixture) | --add-fingerprints "
            "(adds the float arrays' fingerprints where the digests are the fixture's but for float rounding) | "
            "--add-cpu-digests (records this CPU kind's digests of the tasks whose trajectory differs here)"
        )
    results = {name: trajectory_digests(name) for name in TASKS}
    if "--write" in sys.argv:
        out = {"jax": jax.__version__, "mujoco": mujoco.__version__, "tasks": {n: d for n, (d, _) in results.items()}}
    else:
        out = json.loads(FIXTURE.read_text())
        for name, (digests, prints) in results.items():
            same_keys = digests.keys() == out["tasks"][name].keys()
            if not same_keys or digests["episode_ends"] != out["tasks"][name]["episode_ends"]:
                print(f"{name}: not the fixture's trajectory on this machine (--add-cpu-digests records it)")
                continue
            differing = sorted(k for k in digests if digests[k] != out["tasks"][name][k])
            if any(k.startswith(("reset_state", "final_state", "reset_obs")) for k in differing):
                print(f"{name}: the states differ on this machine, not only rounded outputs (--add-cpu-digests)")
                continue
            print(f"{name}: digests differing from the fixture's on this machine: {differing or 'none'}")
            out.setdefault("fingerprints", {})[name] = prints
    if "--write" in sys.argv:
        out["fingerprints"] = {name: prints for name, (_, prints) in results.items()}
    if "--add-cpu-digests" in sys.argv:  # the tasks whose states differ here: this CPU kind's own trajectories
        own = {
            name: d
            for name, (d, _) in results.items()
            if any(d[k] != out["tasks"][name].get(k) for k in d if k.startswith(("reset_state", "final_state")))
        }
        out.setdefault("by_cpu", {})[cpu_kind()] = own
        print(f"{cpu_kind()}: own digests for {sorted(own)}")
    FIXTURE.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print({name: (d["episode_ends"], d["cost_steps"]) for name, (d, _) in results.items()})
