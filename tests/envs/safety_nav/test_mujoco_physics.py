"""PointGoal1 on MuJoCo itself (``physics="mujoco"``): the compiled step is MuJoCo's, and the task reads it right."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from saferl.envs.base import make, make_env_params  # noqa: E402
from saferl.envs.safety_nav import mjcf  # noqa: E402
from saferl.envs.safety_nav.mujoco_physics import OBSERVED_SENSORS  # noqa: E402

STEPS = 20


@pytest.fixture(scope="module")
def point_goal():
    env = make("PointGoal1")
    return env, make_env_params(env, {"physics": "mujoco"})


def _rollout(env, params, state, actions):
    def body(state, action):
        state, obs, reward, cost, *_ = env.step(state, action, params)
        return state, (state.mujoco.qpos, state.mujoco.qvel, obs, state.pos, state.heading, state.vases)

    return jax.jit(lambda s, a: jax.lax.scan(body, s, a))(state, actions)


def test_the_step_is_mujoco_stepped_from_the_same_state(point_goal):
    """20 env steps of the task against 20 x 10 ``mj_step`` of the same model from the same layout, run here
    directly: the same trajectory up to float32 rounding of the state between env steps."""
    env, params = point_goal
    state, _ = env.reset(jax.random.PRNGKey(3), params)
    actions = jnp.stack([jnp.array([1.0, 0.6]), jnp.array([0.4, -1.0])] * (STEPS // 2))
    _, (qpos, qvel, obs, pos, heading, _) = _rollout(env, params, state, actions)

    model = mjcf.load_model("point", {"vases": params.num_vases})
    data = mujoco.MjData(model)
    data.qpos[:] = np.asarray(state.mujoco.qpos, np.float64)
    sensor_rows = np.concatenate(
        [np.arange(model.sensor(n).adr[0], model.sensor(n).adr[0] + 3) for n in OBSERVED_SENSORS]
    )
    for t in range(STEPS):
        data.ctrl[:] = np.asarray(actions[t], np.float64)
        mujoco.mj_step(model, data, nstep=params.frame_skip)
        mujoco.mj_forward(model, data)  # as Safety-Gymnasium's simulation_forward, for the sensors
        np.testing.assert_allclose(qpos[t], data.qpos, atol=2e-4, err_msg=f"qpos at step {t}")
        np.testing.assert_allclose(qvel[t], data.qvel, atol=2e-3, err_msg=f"qvel at step {t}")
        np.testing.assert_allclose(obs[t, :12], data.sensordata[sensor_rows], atol=2e-2, rtol=1e-3)
    # the task's robot fields are the MuJoCo joints: slides x, y and hinge z
    np.testing.assert_allclose(pos[-1], data.qpos[:2], atol=2e-4)
    assert float(heading[-1]) == pytest.approx(float(np.mod(data.qpos[2], 2 * np.pi)), abs=2e-4)


def test_the_robot_pushes_a_vase_it_drives_into(point_goal):
    """The vase is a free MuJoCo body: driven into at full thrust it moves, and the task's lidar sees it move."""
    env, params = point_goal
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    world = env.world(params)
    vase = jnp.array([0.4, 0.0, mjcf.VASE_HALF_SIZE - mjcf.VASE_SINK])
    sensors = state.mujoco.sensors
    state = state.replace(
        pos=jnp.zeros(2),
        heading=jnp.zeros(()),
        vases=vase[None, :2],
        mujoco=world.initial_state(jnp.zeros(2), jnp.zeros(()), {"vase0": vase}, {}, sensors),
    )
    actions = jnp.tile(jnp.array([1.0, 0.0]), (40, 1))
    _, (_, _, _, pos, _, vases) = _rollout(env, params, state, actions)
    assert float(pos[-1, 0]) > 0.3  # the robot reached the vase's first place
    assert float(vases[-1, 0, 0]) > 0.45  # and shoved the vase ahead of it


@pytest.mark.parametrize("task", ["PointGoal1", "PointPush1", "CarButton1", "RacecarCircle1"])
def test_a_physics_the_family_lacks_is_a_one_line_error(task):
    env = make(task)
    params = make_env_params(env, {"physics": "bullet"})
    allowed = "planar, mujoco, mjx"
    with pytest.raises(ValueError, match=rf"^physics 'bullet' is not a navigation physics; allowed: {allowed}$"):
        env.reset(jax.random.PRNGKey(0), params)


@pytest.mark.slow  # the racecar and push tests check the same rows on cheaper compiles
@pytest.mark.parametrize("task", ["PointGoal1", "CarButton1"])
def test_vmapped_episodes_are_stepped_row_by_row(task):
    """Four environments in one vmapped step give what each gives alone (the host stepper sets every row's whole
    state before stepping it)."""
    env = make(task)
    params = make_env_params(env, {"physics": "mujoco"})
    keys = jax.random.split(jax.random.PRNGKey(1), 4)
    states, _ = jax.vmap(env.reset, in_axes=(0, None))(keys, params)
    actions = jax.random.uniform(jax.random.PRNGKey(2), (4, 2), minval=-1.0, maxval=1.0)
    step = jax.jit(env.step, static_argnums=2)
    batched = jax.jit(jax.vmap(env.step, in_axes=(0, 0, None)), static_argnums=2)(states, actions, params)
    for i in range(4):
        alone = step(jax.tree.map(lambda x: x[i], states), actions[i], params)
        np.testing.assert_array_equal(batched[1][i], alone[1])
        np.testing.assert_array_equal(batched[0].mujoco.qpos[i], alone[0].mujoco.qpos)
