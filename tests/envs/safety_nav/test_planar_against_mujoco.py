"""The planar Point held against MuJoCo itself, from the same states, quantity by quantity.

States are sampled along MuJoCo trajectories of PointGoal1 under random actions (outside the action box too:
[-2, 2]^2, which the task clips); from each, both physics take the same actions for one env step and for
``K`` env steps, and every quantity's 95th-percentile gap is compared with its tolerance.  The tolerances are
about 1.5x the largest gap measured over the action kinds (MuJoCo 4.0), and what the planar model's documented
simplifications explain (``saferl.envs.safety_nav.point_goal``): the velocity's ~0.1 m/s is the centre of mass
1.9 cm ahead of the joint, around which the MuJoCo Point's origin circles at up to ``omega r`` (3 rad/s x 0.019 m)
while the planar origin does not; position and heading follow from it.  A sensor in the wrong frame or with a
flipped sign fails the sensor rows at once (their gaps are a few hundredths of the readings).

Known gaps are asserted to still be there (``KNOWN_GAPS``): MuJoCo integrates the Point's turning servo
explicitly, and as ``kv gear^2 dt / I ~ 7 > 2`` its yaw rate chatters in a period-2 limit cycle of about
+-0.5 rad/s around the set-point, which the gyro's z and (through the centre of mass 1.9 cm ahead of the joint)
the accelerometer's y read; the planar model solves the servo implicitly and converges smoothly.  When the planar
model learns the chatter, these assertions fail, and the gap moves into ``TOLERANCES``.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("mujoco")

from physics_pairs import physics_pair  # noqa: E402

from saferl.envs.base import make  # noqa: E402

ENVS = 32
WARMUP_STEPS = 30
K = 10
#: 95th-percentile gap allowed after 1 and after K env steps (metres, radians, m/s, rad/s, reward units)
TOLERANCES = {
    "position": (0.0025, 0.03),
    "heading": (0.009, 0.04),
    "velocity": (0.16, 0.15),
    "reward": (0.003, 0.003),
    "velocimeter": (0.16, 0.15),
    "magnetometer": (0.01, 0.02),
}
#: quantities the planar Point gets wrong, with the smallest 95th-percentile gap measured under steady full
#: thrust (ctrl (1, 0)): the gyro's z chatters by ~0.5 rad/s, the accelerometer's y by ~13 m/s^2
KNOWN_GAPS = {"yaw_rate": 0.3, "gyro_z": 0.3, "accelerometer_y": 5.0}

ACTIONS = {
    "random": lambda key: jax.random.uniform(key, (K, ENVS, 2), minval=-1.0, maxval=1.0),
    "outside the box": lambda key: jax.random.uniform(key, (K, ENVS, 2), minval=-2.0, maxval=2.0),
    "full thrust": lambda key: jnp.tile(jnp.array([1.0, 0.0]), (K, ENVS, 1)),
    "full turn": lambda key: jnp.tile(jnp.array([0.0, 1.0]), (K, ENVS, 1)),
    "reverse and turn": lambda key: jnp.tile(jnp.array([-1.0, -1.0]), (K, ENVS, 1)),
}


@pytest.fixture(scope="module")
def gaps():
    """Per action kind, the 95th-percentile gap of each quantity after 1 and after K env steps."""
    env = make("PointGoal1")
    pair = physics_pair(
        env, lambda p, s, o, r: (s.pos, s.heading, s.vel, s.ang_vel, o[:, :12], r), ENVS, WARMUP_STEPS, K
    )
    states, run_planar, run_mujoco = pair.states, pair.run_planar, pair.run_mujoco

    out = {}
    for index, (kind, make_actions) in enumerate(ACTIONS.items()):
        actions = make_actions(jax.random.PRNGKey(10 + index))
        ours, theirs = run_planar(states, actions)[1], run_mujoco(states, actions)[1]
        pos, heading, vel, yaw_rate, sensors, reward = (np.asarray(a) - np.asarray(b) for a, b in zip(ours, theirs))
        heading = (heading + np.pi) % (2 * np.pi) - np.pi
        per_quantity = {
            "position": np.linalg.norm(pos, axis=-1),
            "heading": np.abs(heading),
            "velocity": np.linalg.norm(vel, axis=-1),
            "yaw_rate": np.abs(yaw_rate),
            "reward": np.abs(reward),
            "velocimeter": np.linalg.norm(sensors[..., 3:5], axis=-1),
            "magnetometer": np.linalg.norm(sensors[..., 9:11], axis=-1),
            "gyro_z": np.abs(sensors[..., 8]),
            "accelerometer_y": np.abs(sensors[..., 1]),
        }
        out[kind] = {
            name: (float(np.percentile(gap[0], 95)), float(np.percentile(gap[-1], 95)))
            for name, gap in per_quantity.items()
        }
    return out


@pytest.mark.parametrize("kind", list(ACTIONS))
def test_the_planar_point_follows_mujoco_within_its_tolerances(gaps, kind):
    for name, (one_step, k_steps) in TOLERANCES.items():
        measured = gaps[kind][name]
        assert measured[0] <= one_step, f"{kind}: {name} after 1 step {measured[0]:.4g} > {one_step}"
        assert measured[1] <= k_steps, f"{kind}: {name} after {K} steps {measured[1]:.4g} > {k_steps}"


def test_the_turning_servo_chatter_is_still_a_known_gap(gaps):
    for name, smallest in KNOWN_GAPS.items():
        measured = gaps["full thrust"][name]
        assert min(measured) >= smallest, f"{name}: the gap closed ({measured}): move it into TOLERANCES"
