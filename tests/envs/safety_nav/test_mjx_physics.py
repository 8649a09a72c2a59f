"""The navigation tasks on MJX (``physics="mjx"``): PointGoal1, whose geoms MJX can collide, steps as MuJoCo's C
library does; the tasks whose geometry needs a collision MJX lacks say which in one line."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from saferl.envs.base import make, make_env_params  # noqa: E402

#: the worst differences over 30 random env steps from each of six layouts, MJX (float32) against MuJoCo C (float64)
#: from the same float32 state, with a margin of 2-10x: round-off, plus float32 error in the accelerometer (gravity
#: plus the floor's contact force); a substep more or less moves qpos by ~1e-3
TOLERANCE = {"qpos": 2e-5, "qvel": 2e-3, "sensors": 5e-2}


@pytest.mark.parametrize(
    "task, geoms",
    [
        ("PointPush1", "pointarrow and pillar0"),
        ("CarButton1", "left and gremlin0obj"),
        ("RacecarCircle1", "a geom of pos_change and a geom of left_front_wheel"),
    ],
)
def test_mjx_names_the_collision_it_lacks_in_one_line(task, geoms):
    env = make(task)
    params = make_env_params(env, {"physics": "mjx"})
    with pytest.raises(ValueError) as err:
        env.reset(jax.random.PRNGKey(0), params)
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{task}: physics 'mjx' needs cylinder-box collisions")
    assert f"({geoms})" in message and message.endswith("use physics 'mujoco' (MuJoCo's C library on the host)")


# MJX (an extra) compiles the navigation model (~30 s): make test-slow; test_velocity's MJX step against MuJoCo C stays
@pytest.mark.slow
def test_pointgoal1_mjx_steps_as_mujoco_c():
    """One env step (``frame_skip`` ``mjx.step``s, then ``mjx.forward``) against the host path (``mj_step`` x
    ``frame_skip``, ``mj_forward``) from the same states: reset states of two layouts, then random actions, outside
    the box too (both clamp to the actuators' range)."""
    env = make("PointGoal1")
    on_mjx = make_env_params(env, {"physics": "mjx"})
    world, c_world = env.world(on_mjx), env.world(make_env_params(env, {"physics": "mujoco"}))
    step = jax.jit(lambda state, ctrl: world.step(state, ctrl, on_mjx.frame_skip))
    rng = np.random.default_rng(0)
    for seed in (0, 1):
        state = env.reset(jax.random.PRNGKey(seed), on_mjx)[0].mujoco
        for _ in range(6):
            ctrl = jnp.asarray(rng.uniform(-1.5, 1.5, 2), jnp.float32)
            ours = step(state, ctrl)
            theirs = c_world.host.host_step(
                np.asarray(state.qpos),
                np.asarray(state.qvel),
                np.asarray(state.qacc_warmstart),
                np.asarray(ctrl),
                on_mjx.frame_skip,
                mocap_pos=np.asarray(state.mocap_pos),
            )
            np.testing.assert_allclose(ours.qpos, theirs["qpos"], atol=TOLERANCE["qpos"], rtol=0)
            np.testing.assert_allclose(ours.qvel, theirs["qvel"], atol=TOLERANCE["qvel"], rtol=0)
            sensors = c_world.observed_sensors(jnp.asarray(theirs["sensordata"]))
            np.testing.assert_allclose(ours.sensors, sensors, atol=TOLERANCE["sensors"], rtol=0)
            state = ours
