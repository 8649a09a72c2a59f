"""CarButton1 on MuJoCo itself (``physics="mujoco"``): the compiled step is MuJoCo's, gremlins move as
``Gremlins.move`` moves them, and presses and touches are MuJoCo's contacts."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from saferl.envs.base import make, make_env_params  # noqa: E402
from saferl.envs.safety_nav import mjcf  # noqa: E402
from saferl.envs.safety_nav.car import car_at  # noqa: E402
from saferl.envs.safety_nav.car_button import CarButtonState  # noqa: E402
from saferl.envs.safety_nav.mujoco_physics import OBSERVED_SENSORS  # noqa: E402

FAR = 50.0  # objects parked out of lidar range and out of reach
STEPS = 25


@pytest.fixture(scope="module")
def car_button():
    env = make("CarButton1")
    return env, make_env_params(env, {"physics": "mujoco"})


def far(n, offset=0.0):
    return jnp.array([[FAR + 3.0 * i + offset, FAR] for i in range(n)], jnp.float32)


def placed(env, params, pos, buttons, goal_button, gremlins=None, gremlin_yaws=None, time=0):
    """A state with the car at ``pos`` facing -y (yaw 0), the buttons and gremlins where given, the rest far."""
    gremlins = far(4, offset=1.0) if gremlins is None else jnp.asarray(gremlins, jnp.float32)
    car = car_at(jnp.asarray(pos, jnp.float32), jnp.float32(0.0))
    state = CarButtonState(
        car=car,
        buttons=buttons,
        goal_button=jnp.int32(goal_button),
        hazards=far(4, offset=2.0),
        gremlin_places=gremlins,
        gremlins=gremlins,
        timer=jnp.int32(0),
        last_dist_goal=jnp.linalg.norm(buttons[goal_button] - car.pos),
        time=jnp.int32(time),
        key=jax.random.PRNGKey(0),
    )
    yaws = jnp.zeros((4,)) if gremlin_yaws is None else jnp.asarray(gremlin_yaws, jnp.float32)
    return state.replace(mujoco=env.mujoco_initial_state(state, yaws, params))


def rollout(env, params, states, actions):
    """``actions`` (T, B, 2) from the batch ``states``: the states after each step, and the infos."""

    def body(state, action):
        state, _, reward, cost, _, _, info = jax.vmap(env.step, in_axes=(0, 0, None))(state, action, params)
        return state, (state, reward, info)

    return jax.jit(lambda s, a: jax.lax.scan(body, s, a))(states, actions)[1]


def batch(*states):
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *states)


def contact_counts(model, data, geoms: list[str]) -> np.ndarray:
    """Contacts of each named geom with the car's geoms in ``data``'s contact list (the original's reading)."""
    agent = model.body("agent").id
    robot = {g for g in range(model.ngeom) if model.body_rootid[model.geom_bodyid[g]] == agent}
    ids = [model.geom(name).id for name in geoms]
    counts = np.zeros(len(ids))
    for contact in data.contact[: data.ncon]:
        g1, g2 = int(contact.geom1), int(contact.geom2)
        for i, gid in enumerate(ids):
            counts[i] += (g1 == gid and g2 in robot) or (g2 == gid and g1 in robot)
    return counts


def test_the_step_is_mujoco_stepped_with_the_gremlin_schedule_and_its_contacts(car_button):
    """25 env steps against 25 x 10 ``mj_step`` + ``mj_forward`` run here on the same model from each env step's
    state, the gremlin mocaps set before every substep at ``place + 0.35 (sin t, cos t)`` (``Gremlins.move``,
    ``t`` from the episode's step count): the same states, sensors and boxes, and the task's button and gremlin
    costs are the contacts of MuJoCo's list.  The car drives into a wrong button while a gremlin circles over it."""
    env, params = car_button
    buttons = far(4).at[0].set(jnp.zeros(2))  # button 0 on the car's path, the goal (button 1) far
    gremlins = far(4, offset=1.0).at[0].set(jnp.array([-0.3, 0.0]))
    yaws = jnp.array([0.7, 0.0, 1.3, 2.0])
    state = placed(env, params, (0.0, 0.5), buttons, 1, gremlins, yaws, time=7)
    actions = jnp.tile(jnp.array([[1.0, 0.9]]), (STEPS, 1, 1)).at[12:, 0].set(jnp.array([-0.3, 0.8]))
    states, _, infos = rollout(env, params, batch(state), actions)

    world = env.world(params)
    model = mjcf.load_model("car", {"buttons": 4, "gremlins": 4})
    data = mujoco.MjData(model)
    sensors = [np.arange(model.sensor(n).adr[0], model.sensor(n).adr[0] + 3) for n in OBSERVED_SENSORS]
    sensors.append(np.arange(model.sensor("ballangvel_rear").adr[0], model.sensor("ballangvel_rear").adr[0] + 3))
    quat_rows = model.sensor("ballquat_rear").adr[0] + np.arange(4)
    gremlin_mocaps = [model.body(f"gremlin{i}mocap").mocapid[0] for i in range(4)]
    places = np.asarray(gremlins, np.float64)
    before = state.mujoco
    touched = {"buttons": 0, "gremlins": 0}
    for t in range(STEPS):
        data.qpos[:], data.qvel[:] = np.asarray(before.qpos), np.asarray(before.qvel)
        data.qacc_warmstart[:] = np.asarray(before.qacc_warmstart)
        data.mocap_pos[:], data.mocap_quat[:] = np.asarray(before.mocap_pos), np.asarray(before.mocap_quat)
        data.ctrl[:] = np.asarray(actions[t, 0], np.float64)
        for substep in range(params.frame_skip):
            phase = ((7 + t) * params.frame_skip + substep) * mjcf.CAR_TIMESTEP
            circle = params.gremlin_travel * np.array([np.sin(phase), np.cos(phase)])
            data.mocap_pos[gremlin_mocaps] = np.c_[places + circle, np.full(4, 2 * mjcf.GREMLIN_HALF_SIZE)]
            mujoco.mj_step(model, data)
        mujoco.mj_forward(model, data)
        after = jax.tree.map(lambda x: x[t, 0], states)
        np.testing.assert_allclose(after.mujoco.qpos, data.qpos, atol=1e-5, err_msg=f"qpos at step {t}")
        np.testing.assert_allclose(after.mujoco.qvel, data.qvel, atol=1e-4, err_msg=f"qvel at step {t}")
        expected = np.r_[data.sensordata[np.concatenate(sensors)], quat_to_matrix(data.sensordata[quat_rows])]
        np.testing.assert_allclose(after.mujoco.sensors, expected, atol=1e-3, rtol=1e-4, err_msg=f"step {t}")
        boxes = np.stack([data.qpos[world.addresses.free_bodies[f"gremlin{i}obj"].qpos :][:2] for i in range(4)])
        np.testing.assert_allclose(after.gremlins, boxes, atol=1e-5)
        counts = contact_counts(model, data, ["button0", "gremlin0obj"])
        assert float(infos["cost_buttons"][t, 0]) == float(counts[0] > 0), t
        assert float(infos["cost_gremlins"][t, 0]) == float(counts[1] > 0), t
        touched["buttons"] += counts[0] > 0
        touched["gremlins"] += counts[1] > 0
        before = after.mujoco
    assert touched["buttons"] >= 2 and touched["gremlins"] >= 5, touched  # the contacts were exercised
    # the task's car is MuJoCo's free joint
    np.testing.assert_allclose(states.car.pos[-1, 0], data.qpos[:2], atol=1e-5)


def quat_to_matrix(q):
    out = np.zeros(9)
    mujoco.mju_quat2Mat(out, np.asarray(q, np.float64))
    return out


def test_a_car_driven_into_the_goal_button_presses_it(car_button):
    """Full throttle from 0.5 m at the goal button: MuJoCo's contact is a press (reward bonus, timer 10, the
    buttons' lidar hidden), and the car then rests against the button."""
    env, params = car_button
    buttons = far(4).at[2].set(jnp.zeros(2))
    state = placed(env, params, (0.0, 0.5), buttons, 2)
    states, rewards, infos = rollout(env, params, batch(state), jnp.ones((STEPS, 1, 2)))
    pressed = np.flatnonzero(np.asarray(infos["goal_reached"][:, 0]))
    assert pressed.size > 0 and 4 <= pressed[0] <= 10, pressed
    first = int(pressed[0])
    assert float(rewards[first, 0]) > 1.0  # the bonus and the last step's progress
    assert int(states.timer[first, 0]) == params.resampling_delay
    assert float(infos["cost_buttons"][first, 0]) == 0.0


def test_the_approach_grid_against_the_original(car_button):
    """Both motors at 1 from 0.5 m at a lone wrong button off the line of travel (car.py's docstring): steps of
    100 touching it.  The original (safety-gymnasium 1.0, MuJoCo 2.3.3): 89 / 74 / 71 / 24 at 0.05 / 0.10 /
    0.15 / 0.20 m; measured here on MuJoCo 4: 89 / 70 / 71 / 23 (and 64 head on, 1 at 0.25 m); the planar model:
    90 / 90 / 89 / 87.  At ``ctrl`` 0.01 (0.36 m/s) MuJoCo gives 83 / 83 / 73 / 67 / 28 / 1 from 0 to 0.25 m."""
    env, params = car_button
    offsets = (0.0, 0.05, 0.10, 0.15, 0.20, 0.25)
    buttons = far(4).at[0].set(jnp.zeros(2))
    states = batch(*(placed(env, params, (-off, 0.5), buttons, 1) for off in offsets))
    _, _, infos = rollout(env, params, states, jnp.ones((100, len(offsets), 2)))
    touching = np.asarray(infos["cost_buttons"]).sum(axis=0)
    original = np.array([89, 74, 71, 24])
    assert np.all(np.abs(touching[1:5] - original) <= 6), touching
    assert touching[5] <= 5, touching  # at 0.25 m the bumper's corner only grazes it
