"""The velocity tasks' default physics: MuJoCo's C ``mj_step`` on the host, called from compiled JAX code.

References are MuJoCo itself: every row of a batch against ``frame_skip`` ``mj_step``s of a fresh ``MjData``
from the same float32 state (what Gymnasium's ``do_simulation`` runs, plus ``mj_rnePostConstraint``), so a row
mixed up with another, a leftover of the previous row's data, a wrong frame skip, a missing field or a wrong
reshape under nested ``vmap`` fails.  The compiled programs are small (no MJX physics): a few seconds each.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")
pytest.importorskip("mujoco.mjx")
pytest.importorskip("gymnasium")

from saferl.envs.base import make_env_params  # noqa: E402
from saferl.envs.mujoco_host import HostPhysics  # noqa: E402
from saferl.envs.velocity import gymnasium_models  # noqa: E402
from saferl.envs.velocity.ant_velocity import AntVelocity  # noqa: E402
from saferl.envs.velocity.hopper_velocity import HopperVelocity  # noqa: E402
from saferl.envs.velocity.humanoid_velocity import HumanoidVelocity  # noqa: E402
from saferl.training.config import ConfigError, resolve  # noqa: E402

HOPPER, ANT, HUMANOID = HopperVelocity(), AntVelocity(), HumanoidVelocity()


def random_states(env, shape, seed):
    """float32 states reached by MuJoCo from noisy reset poses under random actions (some with contacts)."""
    rng = np.random.default_rng(seed)
    m, d = env.host_model, mujoco.MjData(env.host_model)
    n = int(np.prod(shape))
    qpos, qvel, warm = (np.empty((n, k), np.float32) for k in (env.nq, env.nv, env.nv))
    for i in range(n):
        mujoco.mj_resetData(m, d)
        d.qpos[:] = m.qpos0 + rng.uniform(-0.05, 0.05, env.nq)
        for _ in range(rng.integers(0, 40)):
            d.ctrl[:] = rng.uniform(-1, 1, env.nu) * m.actuator_ctrlrange[:, 1]
            mujoco.mj_step(m, d, nstep=2)
        qpos[i], qvel[i], warm[i] = d.qpos, d.qvel, d.qacc_warmstart
    ctrl = rng.uniform(-1, 1, (n, env.nu)).astype(np.float32) * np.float32(env.host_model.actuator_ctrlrange[:, 1])
    return [a.reshape(*shape, -1) for a in (qpos, qvel, warm, ctrl)]


def reference_step(env, qpos, qvel, warm, ctrl, frame_skip):
    """Gymnasium's ``do_simulation`` on a fresh MjData: the fields as float32."""
    m, d = env.host_model, mujoco.MjData(env.host_model)
    d.qpos[:], d.qvel[:], d.qacc_warmstart[:], d.ctrl[:] = qpos, qvel, warm, ctrl
    mujoco.mj_step(m, d, nstep=frame_skip)
    mujoco.mj_rnePostConstraint(m, d)
    return {
        name: np.float32(getattr(d, name))
        for name in ("qpos", "qvel", "qacc_warmstart", "xipos", "cinert", "cvel", "qfrc_actuator", "cfrc_ext")
    }


@pytest.mark.parametrize("env", [HOPPER, ANT, HUMANOID], ids=["hopper", "ant", "humanoid"])
def test_every_row_of_a_batch_is_its_own_mj_step_whatever_the_threads(env):
    frame_skip = env.default_params().frame_skip
    qpos, qvel, warm, ctrl = random_states(env, (2, 3), seed=0)
    results = [
        HostPhysics(mujoco, env.host_model, env.host_fields, env.needs_contact_forces, threads=t).host_step(
            qpos, qvel, warm, ctrl, frame_skip
        )
        for t in (1, 4)
    ]
    assert set(results[0]) == {"qpos", "qvel", "qacc_warmstart", *env.host_fields}
    for name in results[0]:  # the split over threads changes nothing, bit for bit
        np.testing.assert_array_equal(results[0][name], results[1][name])
    for index in np.ndindex(2, 3):
        expected = reference_step(env, qpos[index], qvel[index], warm[index], ctrl[index], frame_skip)
        for name, value in results[0].items():
            np.testing.assert_array_equal(value[index], expected[name].reshape(value[index].shape), err_msg=name)


def test_the_host_model_is_the_files_own_solver_with_233s_pair_margins():
    raw = gymnasium_models.load_model(mujoco, gymnasium_models.gymnasium_asset("humanoid.xml"))
    assert HUMANOID.host_model.opt.solver == raw.opt.solver == mujoco.mjtSolver.mjSOL_PGS  # humanoid.xml
    assert HUMANOID.host_model.opt.iterations == raw.opt.iterations == 50
    assert HUMANOID.mj_model.opt.solver == mujoco.mjtSolver.mjSOL_NEWTON  # MJX has no PGS
    np.testing.assert_array_equal(HUMANOID.host_model.geom_margin, raw.geom_margin / 2)
    raw = gymnasium_models.load_model(mujoco, gymnasium_models.gymnasium_asset("hopper.xml"))
    assert (
        (HOPPER.host_model.opt.iterations, HOPPER.host_model.opt.ls_iterations)
        == (raw.opt.iterations, raw.opt.ls_iterations)
        == (100, 50)
    )
    assert (HOPPER.mj_model.opt.iterations, HOPPER.mj_model.opt.ls_iterations) == (4, 8)  # MJX's caps only


def test_env_step_under_nested_vmap_is_mujocos_step_with_gymnasiums_reward():
    """Two seeds x three environments in one compiled step: each state moves as MuJoCo moves it, and the
    reward is hopper_v4's on that motion (forward velocity + 1 - 1e-3 |a|^2).  Half the actions lie outside
    [-1, 1], as the C-TRPO harness's unclipped samples do: MuJoCo given them raw clamps them for the physics
    (the reference), and the control cost squares them unclipped (hopper_v4's ``control_cost(action)``)."""
    params = HOPPER.default_params()
    assert params.physics == "mujoco" and not HOPPER.clip_actions
    qpos, qvel, warm, ctrl = random_states(HOPPER, (2, 3), seed=1)
    ctrl = ctrl * np.array([[1.0], [3.0]], np.float32)[:, None]  # the second seed's actions outside the box
    assert np.abs(ctrl[1]).max() > 1.5
    state = jax.vmap(jax.vmap(HOPPER.state_from))(qpos, qvel)[0].replace(qacc_warmstart=jnp.asarray(warm))
    step = jax.jit(jax.vmap(jax.vmap(HOPPER.step, in_axes=(0, 0, None)), in_axes=(0, 0, None)))
    new, obs, reward, cost, terminated, truncated, info = step(state, jnp.asarray(ctrl), params)  # ctrlrange +-1
    dt = params.frame_skip * HOPPER.host_model.opt.timestep
    for index in np.ndindex(2, 3):
        expected = reference_step(HOPPER, qpos[index], qvel[index], warm[index], ctrl[index], params.frame_skip)
        np.testing.assert_array_equal(new.qpos[index], expected["qpos"])
        np.testing.assert_array_equal(new.qacc_warmstart[index], expected["qacc_warmstart"])
        np.testing.assert_array_equal(
            obs[index], np.concatenate([expected["qpos"][1:], np.clip(expected["qvel"], -10, 10)])
        )
        v_x = (np.float64(expected["qpos"][0]) - qpos[index][0]) / dt
        assert float(reward[index]) == pytest.approx(v_x + 1.0 - 1e-3 * np.sum(ctrl[index] ** 2), abs=1e-4)
        assert float(cost[index]) == float(v_x > params.velocity_threshold)


def test_an_unstable_simulation_ends_the_episode_instead_of_resetting_inside_mj_step(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MuJoCo writes its warning to MUJOCO_LOG.TXT in the working directory
    params = HOPPER.default_params()
    state, _ = HOPPER.state_from(HOPPER.host_model.qpos0, np.full(HOPPER.nv, 1e12))
    new, obs, reward, cost, terminated, _, _ = jax.jit(HOPPER.step)(state, jnp.zeros(HOPPER.nu), params)
    assert bool(terminated) and float(reward) == 0.0 and float(cost) == 0.0
    np.testing.assert_array_equal(new.qpos, state.qpos)  # the last finite state, not MuJoCo's reset pose
    assert np.all(np.isfinite(obs))


def test_the_physics_is_checked_before_anything_runs():
    with pytest.raises(ValueError, match="env_params.physics must be one of mujoco, mjx, got 'bullet'"):
        make_env_params(HOPPER, {"physics": "bullet"})
    assert make_env_params(HOPPER, {"physics": "mjx"}).physics == "mjx"
    with pytest.raises(ConfigError, match="physics must be one of"):
        resolve({"algo": "ppo", "env": "SafetyHopperVelocity", "env_params": {"physics": "MJX"}})


ONE_ENVIRONMENT_SCAN = """
import jax
from saferl.envs.base import make
from saferl.envs.wrappers import AutoReset, VecEnv
env = make("SafetyHopperVelocity")
params = env.default_params()
venv = VecEnv(AutoReset(env), 1)
def run(key):
    state, _ = venv.reset(key, params)
    def body(state, k):
        actions = jax.vmap(env.action_space(params).sample)(jax.random.split(k, 1))
        return venv.step(state, actions, params)[0], None
    return jax.lax.scan(body, state, jax.random.split(key, 100))[0]
jax.block_until_ready(jax.jit(run)(jax.random.PRNGKey(0)))
print("stepped")
"""


def test_one_environment_steps_on_the_pool_not_on_xlas_callback_thread():
    """A batch of one row was once stepped on the thread XLA calls back from, whose per-call Python thread state
    freed the thread-local MjData with no thread state: a segfault within 100 steps (module docstring, "Threads").
    A fresh process, so that a crash is this test's failure and not its worker's."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", ONE_ENVIRONMENT_SCAN], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "stepped" in done.stdout, (done.returncode, done.stderr[-2000:])
