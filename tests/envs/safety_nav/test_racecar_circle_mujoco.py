"""RacecarCircle1 on MuJoCo itself (``physics="mujoco"``): the compiled step is MuJoCo's, the task reads it right,
and the reverse at full lock that the planar model gets wrong comes out as the original's.

Three compiled programs: a vmapped reset, a vmapped rollout (row 0 random actions, rows 1-4 reverse at full lock)
and the same rollout of one row."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from saferl.envs.base import make, make_env_params  # noqa: E402
from saferl.envs.safety_nav import mjcf  # noqa: E402
from saferl.envs.safety_nav.mujoco_physics import OBSERVED_SENSORS  # noqa: E402
from saferl.envs.safety_nav.racecar import ctrl_from_action  # noqa: E402

ENV = make("RacecarCircle1")
PARAMS = make_env_params(ENV, {"physics": "mujoco"})
ROWS, STEPS = 5, 250  # every rollout has this shape, so it compiles once
COMPARED = 20  # steps compared with mj_step run here (contacts part float32 and float64 trajectories later)
SETTLED = 100  # reverse at full lock: averaged over steps 101-250, as the original's record (grid_reverse.json)
REVERSE_FULL_LOCK = jnp.array([-1.0, 1.0])


def _rollout(state, actions):
    world = ENV.world(PARAMS)

    def body(state, action):
        state, obs, reward, cost, *_ = ENV.step(state, action, PARAMS)
        pos, heading, vel, yaw_rate = world.free_robot_motion(state.mujoco)
        out = dict(
            qpos=state.mujoco.qpos,
            obs=obs,
            reward=reward,
            cost=cost,
            pos=state.robot.pos,
            heading=state.robot.heading,
            yaw_rate=state.robot.yaw_rate,
            motion=jnp.stack([pos[0], pos[1], heading, vel[0], vel[1], yaw_rate]),
        )
        return state, out

    return jax.lax.scan(body, state, actions)[1]


@pytest.fixture(scope="module")
def rollouts():
    """The reset states, the actions and the vmapped rollout: row 0 uniform random actions, rows 1-4 reverse at
    full lock from rest."""
    states, reset_obs = jax.jit(jax.vmap(ENV.reset, in_axes=(0, None)), static_argnums=1)(
        jax.random.split(jax.random.PRNGKey(7), ROWS), PARAMS
    )
    random_actions = jax.random.uniform(jax.random.PRNGKey(8), (1, STEPS, 2), minval=-1.0, maxval=1.0)
    actions = jnp.concatenate([random_actions, jnp.broadcast_to(REVERSE_FULL_LOCK, (ROWS - 1, STEPS, 2))])
    out = jax.jit(jax.vmap(_rollout))(states, actions)
    return states, actions, jax.tree.map(np.asarray, dict(out, reset_obs=reset_obs))


def _circle_reward(pos, vel):
    """``RacecarCircleParams``' reward recomputed in NumPy (float64) from a position and velocity."""
    rho = math.hypot(pos[0], pos[1])
    tangential = (-vel[0] * pos[1] + vel[1] * pos[0]) / rho
    reward = PARAMS.reward_factor * tangential / (1.0 + abs(rho - PARAMS.circle_radius))
    return float(np.clip(reward, -PARAMS.reward_clip, PARAMS.reward_clip))


def test_the_step_is_mujoco_stepped_from_the_same_state(rollouts):
    """20 env steps of the task against 20 x 10 ``mj_step`` of the same model from the same place, run here
    directly with the same control: the same trajectory up to the float32 rounding of the state between env
    steps; the task's reward and cost are those of MuJoCo's body position and velocity."""
    states, actions, out = rollouts
    model = mjcf.load_model("racecar")
    data = mujoco.MjData(model)
    data.qpos[:] = np.asarray(states.mujoco.qpos[0], np.float64)
    sensor_rows = np.concatenate(
        [np.arange(model.sensor(n).adr[0], model.sensor(n).adr[0] + 3) for n in OBSERVED_SENSORS]
    )
    ctrl = np.asarray(ctrl_from_action(actions[0], PARAMS), np.float64)
    for t in range(COMPARED):
        data.ctrl[:] = ctrl[t]
        mujoco.mj_step(model, data, nstep=PARAMS.frame_skip)
        mujoco.mj_forward(model, data)  # as Safety-Gymnasium's simulation_forward, for the sensors
        np.testing.assert_allclose(out["qpos"][0, t], data.qpos, rtol=2e-4, atol=2e-4, err_msg=f"qpos at {t}")
        np.testing.assert_allclose(
            out["obs"][0, t, :12], data.sensordata[sensor_rows], rtol=2e-4, atol=2e-3, err_msg=f"sensors at {t}"
        )
        expected = _circle_reward(data.qpos[:2], data.qvel[:2])
        assert out["reward"][0, t] == pytest.approx(expected, rel=2e-4, abs=1e-6), f"reward at {t}"
        assert out["cost"][0, t] == float(abs(data.qpos[0]) > PARAMS.sigwall_x)
    # the task's robot fields are the free joint's: body origin and the yaw of its x axis in [0, 2 pi)
    np.testing.assert_allclose(out["pos"][0, COMPARED - 1], data.qpos[:2], atol=2e-4)
    rotation = np.zeros(9)
    mujoco.mju_quat2Mat(rotation, data.qpos[3:7])
    yaw = np.mod(math.atan2(rotation[3], rotation[0]), 2 * math.pi)
    assert float(out["heading"][0, COMPARED - 1]) == pytest.approx(yaw, abs=2e-4)


def test_the_reset_observation_reads_a_car_at_rest(rollouts):
    """As the planar model's at rest: accelerometer +9.81 on z, velocimeter and gyro zero, the magnetic field
    ``(0, -0.5, 0)`` rotated into the car's frame."""
    states, _, out = rollouts
    obs = out["reset_obs"]
    heading = np.asarray(states.robot.heading)
    np.testing.assert_allclose(obs[:, :3], np.tile([0.0, 0.0, PARAMS.gravity], (ROWS, 1)), atol=1e-6)
    np.testing.assert_allclose(obs[:, 3:9], 0.0, atol=1e-6)
    field = PARAMS.magnetic_field_y * np.stack([np.sin(heading), np.cos(heading), 0 * heading], axis=1)
    np.testing.assert_allclose(obs[:, 9:12], field, atol=1e-6)


def test_reverse_at_full_lock_crabs_sideways_without_turning(rollouts):
    """Action (-1, +1) held from rest: the original's car (Safety-Gymnasium 1.0.0 on MuJoCo 2.3.3) reverses at
    0.52 m/s, slides sideways at 0.30 m/s and barely turns (mean yaw rate 0.013 rad/s, per-step std 0.18;
    benchmarks/calibration/racecar/grid_reverse.json); the planar model turns on a circle instead.  MuJoCo 4
    reproduces the original here."""
    _, _, out = rollouts
    motion = out["motion"][1:, SETTLED:]  # rows 1-4, steps 101-250
    heading, vx, vy, yaw_rate = motion[..., 2], motion[..., 3], motion[..., 4], motion[..., 5]
    forward = vx * np.cos(heading) + vy * np.sin(heading)
    sideways = -vx * np.sin(heading) + vy * np.cos(heading)
    assert abs(yaw_rate.mean()) <= 0.04  # over the four cars
    assert np.all(np.abs(yaw_rate.mean(axis=1)) <= 0.08)  # each car
    assert 0.25 <= np.abs(sideways).mean() <= 0.35
    assert np.all(np.abs(sideways.mean(axis=1)) >= 0.25)  # each car slides one way
    assert -0.6 <= forward.mean() <= -0.45
    # the task's yaw rate is the free joint's, in the world frame
    np.testing.assert_array_equal(out["yaw_rate"][1:, SETTLED:], yaw_rate)


def test_vmapped_episodes_are_stepped_row_by_row(rollouts):
    """A row of the vmapped rollout is what that environment gives alone: the same MuJoCo trajectory and
    observations bit for bit (the host stepper sets every row's whole state before stepping it); what JAX derives
    from it by small matrix products (the world-frame yaw rate, hence the reward) to float32 rounding."""
    states, actions, out = rollouts
    alone = jax.tree.map(np.asarray, jax.jit(_rollout)(jax.tree.map(lambda x: x[0], states), actions[0]))
    for name in ("qpos", "obs", "cost", "pos", "heading"):
        np.testing.assert_array_equal(out[name][0], alone[name], err_msg=name)
    for name in ("reward", "yaw_rate", "motion"):
        np.testing.assert_allclose(out[name][0], alone[name], rtol=1e-6, atol=1e-7, err_msg=name)
