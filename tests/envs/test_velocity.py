"""The Safety-Gymnasium velocity tasks: reward, cost and termination on hand-set states, the
cost threshold, observation layouts and sizes, reset noise, action rescaling, position integration,
and one MJX step (``physics="mjx"``) against MuJoCo's C ``mj_step`` from the same state.  The default physics,
MuJoCo C through a host callback, is tested in test_mujoco_host.py.

MJX programs take ~10 s (lightly loaded) to over a minute (heavily loaded) to compile on this 2-core
CPU, so only one is compiled by default: one ``env.step`` for Hopper (RK4, saferl's integrator);
HalfCheetah's (Euler, ``mjx.step``) is marked ``slow``, and ``SAFERL_TEST_ALL_MJX=1`` adds the Ant's
step and the Humanoid's reset kinematics.  Everything else goes through
:meth:`LocomotionEnv.outcome` (the step's bookkeeping after the physics) on hand-set MJX data, in
small compiled programs, and is checked against numbers computed here from Gymnasium's v4 rules
(``gymnasium/envs/mujoco/*_v4.py``) and Safety-Gymnasium's ``safety_*_velocity_v1.py`` thresholds.
"""

import os
import sys
from functools import lru_cache

import jax
import jax.numpy as jnp
import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")
mjx = pytest.importorskip("mujoco.mjx")
pytest.importorskip("gymnasium")

from saferl.envs import base  # noqa: E402
from saferl.envs.velocity.ant_velocity import AntVelocity  # noqa: E402
from saferl.envs.velocity.half_cheetah_velocity import HalfCheetahVelocity  # noqa: E402
from saferl.envs.velocity.hopper_velocity import HopperVelocity  # noqa: E402
from saferl.envs.velocity.humanoid_velocity import HumanoidVelocity  # noqa: E402
from saferl.envs.velocity.locomotion import LocomotionState  # noqa: E402
from saferl.foundation.errors import MissingExtraError  # noqa: E402

ANT, CHEETAH, HOPPER, HUMANOID = AntVelocity(), HalfCheetahVelocity(), HopperVelocity(), HumanoidVelocity()
NAMES = {
    "SafetyAntVelocity": ANT,
    "SafetyHalfCheetahVelocity": CHEETAH,
    "SafetyHopperVelocity": HOPPER,
    "SafetyHumanoidVelocity": HUMANOID,
}


def f32(x):
    return jnp.asarray(x, jnp.float32)


@lru_cache(maxsize=None)
def compiled_outcome(env):
    return jax.jit(env.outcome)  # small programs (no physics): cheaper compiled than run op by op


def scripted(env, qpos_after, qvel_after=None, position_before=(0.0,), ctrl=None, params=None, **fields):
    """One step's bookkeeping from a state at ``position_before`` to hand-set MJX data."""
    params = params or env.default_params()
    state = LocomotionState(
        qpos=f32(env.mj_model.qpos0),
        qvel=jnp.zeros(env.nv),
        qacc_warmstart=jnp.zeros(env.nv),
        position=f32(position_before),
        time=jnp.zeros((), jnp.int32),
    )
    qvel_after = np.zeros(env.nv) if qvel_after is None else qvel_after
    data = mjx.make_data(env.model).replace(
        qpos=f32(qpos_after), qvel=f32(qvel_after), **{k: f32(v) for k, v in fields.items()}
    )
    ctrl = jnp.zeros(env.nu) if ctrl is None else f32(ctrl)
    new_state, obs, reward, cost, term, trunc, info = compiled_outcome(env)(state, data, ctrl, params)
    return new_state, np.asarray(obs), float(reward), float(cost), bool(term), bool(trunc), info


# --------------------------------------------------------------------------- registry, spaces, params


def test_registered_with_their_spaces_and_gymnasium_v4_observation_sizes():
    sizes = {
        "SafetyAntVelocity": (27, 8),
        "SafetyHalfCheetahVelocity": (17, 6),
        "SafetyHopperVelocity": (11, 3),
        "SafetyHumanoidVelocity": (376, 17),
    }
    for name, (obs_dim, act_dim) in sizes.items():
        assert name in base.registered() and base.config_defaults(name)["constraint"]["limit"] == 25.0
        env = NAMES[name]
        params = env.default_params()
        assert env.observation_space(params).shape == (obs_dim,)
        space = env.action_space(params)
        assert (
            space.shape == (act_dim,)
            and np.all(np.asarray(space.low) == -1.0)
            and np.all(np.asarray(space.high) == 1.0)
        )
        # the observation an env computes from MJX data has that size too
        obs = env.observation(mjx.make_data(env.model))
        assert obs.shape == (obs_dim,), name
        assert isinstance(params, base.EnvParams) and params.max_steps == 1000


def test_defaults_are_gymnasium_v4_and_safety_gymnasium_v1():
    thresholds = {ANT: 2.6222, CHEETAH: 3.2096, HOPPER: 0.7402, HUMANOID: 1.4149}
    dts = {ANT: 0.05, CHEETAH: 0.05, HOPPER: 0.008, HUMANOID: 0.015}
    for env, threshold in thresholds.items():
        params = env.default_params()
        assert params.velocity_threshold == threshold
        assert env.dt(params) == pytest.approx(dts[env], rel=1e-12)
    assert (ANT.rk4, CHEETAH.rk4, HOPPER.rk4, HUMANOID.rk4) == (True, False, True, True)
    # the Humanoid is the one model changed for MJX: PGS -> Newton
    assert HUMANOID.mj_model.opt.solver == mujoco.mjtSolver.mjSOL_NEWTON
    assert ANT.mj_model.opt.solver == mujoco.mjtSolver.mjSOL_NEWTON


def test_half_cheetah_total_mass_applied_after_compiling_is_the_compilers_model(tmp_path, monkeypatch):
    """locomotion.load_model drops ``settotalmass`` (deprecated in MuJoCo 4, a warning per load) and scales the
    masses itself: the model must be the one MuJoCo's compiler builds from the file, array for array."""
    from saferl.envs.velocity.gymnasium_models import gymnasium_asset, load_model

    monkeypatch.chdir(tmp_path)  # the compiler's deprecation warning writes MUJOCO_LOG.TXT into the working directory
    path = gymnasium_asset("half_cheetah.xml")
    assert 'settotalmass="14"' in path.read_text()
    ours, compiled = load_model(mujoco, path), mujoco.MjModel.from_xml_path(str(path))
    assert ours.body_mass.sum() == pytest.approx(14.0, rel=1e-12)
    arrays = [
        name
        for name in dir(compiled)
        if not name.startswith("_") and isinstance(getattr(compiled, name, None), np.ndarray)
    ]
    assert len(arrays) > 100
    for name in arrays:
        np.testing.assert_array_equal(getattr(ours, name), getattr(compiled, name), err_msg=name)


def test_pair_margins_are_mujoco_233s_larger_margin_not_the_sum():
    """Safety-Gymnasium 1.0 runs MuJoCo 2.3.3, whose pair margin is max(m1, m2); MJX adds them, so every geom
    carries half the file's margin (all geoms of a model share one, read here from the XML itself)."""
    import re

    from saferl.envs.velocity.gymnasium_models import gymnasium_asset, match_margin_rule

    for env, margin in ((ANT, 0.01), (HOPPER, 0.001), (HUMANOID, 0.001), (CHEETAH, 0.0)):
        in_file = {float(m) for m in re.findall(r'margin="([^"]+)"', gymnasium_asset(env.asset).read_text())}
        assert in_file <= {margin}
        pair = env.mj_model.geom_margin[:, None] + env.mj_model.geom_margin[None, :]  # MJX's rule
        np.testing.assert_allclose(pair, margin, rtol=1e-12)
    uneven = mujoco.MjModel.from_xml_string(
        '<mujoco><worldbody><geom size="1 1 1" type="plane"/><geom size=".1" margin=".01"/></worldbody></mujoco>'
    )
    with pytest.raises(ValueError, match="geom margins differ"):
        match_margin_rule(uneven)


def test_missing_mujoco_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)  # makes ``import mujoco`` fail
    with pytest.raises(MissingExtraError, match=r"pip install 'saferl\[mjx\]'"):
        base.make("SafetyHopperVelocity")


def test_bad_solver_caps_are_one_line_errors():
    with pytest.raises(ValueError, match="solver_iterations must be a positive integer.*got 0"):
        base.make("SafetyHopperVelocity", solver_iterations=0)
    with pytest.raises(ValueError, match="ls_iterations must be a positive integer.*got 2.5"):
        base.make("SafetyHopperVelocity", ls_iterations=2.5)


def test_actions_are_rescaled_to_the_ctrlrange_and_clamped_only_for_the_physics():
    action = np.array([1.0, -1.0, 0.5, 2.0, -3.0] + [0.25] * 12, np.float32)
    np.testing.assert_allclose(HUMANOID.ctrl_from_action(action), 0.4 * np.clip(action, -1, 1), rtol=1e-6)
    np.testing.assert_allclose(HOPPER.ctrl_from_action(action[:3]), np.clip(action[:3], -1, 1), rtol=1e-6)
    # what the task receives (SafeRescaleAction does not clip): the control cost squares these
    np.testing.assert_allclose(HUMANOID.controls_from_action(action), 0.4 * action, rtol=1e-6)
    np.testing.assert_allclose(ANT.controls_from_action(action[:8]), action[:8], rtol=1e-6)
    # the trainer passes the raw sample to every velocity task (saferl.envs.base.Environment.clip_actions)
    assert not any(env.clip_actions for env in NAMES.values())
    assert base.make("PointGoal1").clip_actions


# --------------------------------------------------------------------------- reward, cost, termination


def test_hopper_reward_is_forward_velocity_plus_healthy_minus_control_on_a_scripted_step():
    dt, dx = 0.008, 0.004  # 0.5 m/s forward: under the 0.7402 threshold
    qpos = np.array([0.3 + dx, 1.2, 0.1, -0.2, -0.3, 0.1])
    ctrl = np.array([0.5, -1.0, 0.25])
    state, obs, reward, cost, term, trunc, info = scripted(HOPPER, qpos, position_before=[0.3], ctrl=ctrl)
    expected = 1.0 * dx / dt + 1.0 - 1e-3 * (0.25 + 1.0 + 0.0625)
    assert reward == pytest.approx(expected, abs=2e-5)
    assert float(info["x_velocity"]) == pytest.approx(dx / dt, abs=2e-5)
    assert cost == 0.0 and not term and not trunc
    assert float(state.position[0]) == pytest.approx(0.3 + dx) and int(state.time) == 1


@pytest.mark.parametrize(
    "change, unhealthy",
    [
        ({"z": 0.69}, True),
        ({"z": 0.7}, True),
        ({"z": 0.71}, False),  # healthy z in (0.7, inf)
        ({"angle": 0.2}, True),
        ({"angle": -0.21}, True),
        ({"angle": 0.19}, False),  # angle in (-0.2, 0.2)
        ({"qvel4": 100.0}, True),
        ({"qvel4": -99.0}, False),
        ({"qvel0": 150.0}, True),  # state_vector()[2:] in (-100, 100)
    ],
)
def test_hopper_termination_follows_the_v4_healthy_ranges(change, unhealthy):
    qpos = np.array([0.0, change.get("z", 1.25), change.get("angle", 0.0), 0.0, 0.0, 0.0])
    qvel = np.zeros(6)
    for i in range(6):
        qvel[i] = change.get(f"qvel{i}", 0.0)
    _, obs, reward, cost, term, _, _ = scripted(HOPPER, qpos, qvel, position_before=[0.0])
    assert term == unhealthy
    # terminate_when_unhealthy: the healthy reward is paid on every step, the last one included
    assert reward == pytest.approx(1.0, abs=1e-6)
    # obs: qpos[1:], then qvel clipped to +-10
    np.testing.assert_allclose(obs, np.concatenate([qpos[1:], np.clip(qvel, -10, 10)]), rtol=1e-6)


def test_hopper_without_termination_pays_the_healthy_reward_only_while_healthy():
    params = HOPPER.default_params().replace(terminate_when_unhealthy=False)
    _, _, reward, _, term, _, _ = scripted(HOPPER, [0.0, 0.5, 0, 0, 0, 0], position_before=[0.0], params=params)
    assert not term and reward == pytest.approx(0.0, abs=1e-6)


def test_ant_reads_the_torso_com_and_costs_its_xy_speed():
    dt, threshold = 0.05, 2.6222
    # the torso's xipos moves by (vx, vy) dt with |(vx, vy)| just above the threshold while vx alone is under it;
    # qpos[0] is set elsewhere on purpose: Gymnasium reads get_body_com("torso"), not qpos
    for scale, expected_cost in ((1.001, 1.0), (0.999, 0.0)):
        vx = vy = scale * threshold / np.sqrt(2.0)
        xipos = np.zeros((ANT.mj_model.nbody, 3))
        xipos[1] = [vx * dt, vy * dt, 0.6]
        qpos = ANT.mj_model.qpos0.copy()
        qpos[0], qpos[2] = 5.0, 0.6
        ctrl = np.full(8, 0.5)
        _, obs, reward, cost, term, _, info = scripted(ANT, qpos, position_before=[0.0, 0.0], ctrl=ctrl, xipos=xipos)
        assert cost == expected_cost
        assert float(info["cost_velocity"]) == pytest.approx(scale * threshold, rel=1e-5)
        assert reward == pytest.approx(vx + 1.0 - 0.5 * 8 * 0.25, abs=1e-4)  # v_x + healthy - 0.5 |a|^2
        assert not term
        np.testing.assert_allclose(obs, np.concatenate([qpos[2:], np.zeros(14)]), rtol=1e-6)  # qpos[2:], qvel


@pytest.mark.parametrize("z, unhealthy", [(0.19, True), (0.2, False), (1.0, False), (1.01, True)])
def test_ant_termination_band_is_inclusive(z, unhealthy):
    qpos = ANT.mj_model.qpos0.copy()
    qpos[2] = z
    xipos = np.zeros((ANT.mj_model.nbody, 3))
    assert scripted(ANT, qpos, position_before=[0.0, 0.0], xipos=xipos)[4] == unhealthy


def test_a_non_finite_state_terminates_with_zero_reward_and_keeps_the_last_finite_state():
    qpos = ANT.mj_model.qpos0.copy()
    qpos[7] = np.nan
    state, obs, reward, cost, term, _, _ = scripted(
        ANT, qpos, position_before=[0.0, 0.0], xipos=np.zeros((ANT.mj_model.nbody, 3))
    )
    assert term and reward == 0.0 and cost == 0.0
    assert np.all(np.isfinite(state.qpos)) and np.all(np.isfinite(obs))
    # HalfCheetah never terminates otherwise, but a diverged simulation ends its episode too
    assert scripted(CHEETAH, np.full(9, np.inf), position_before=[0.0])[4]


def test_half_cheetah_costs_its_signed_x_velocity_and_never_terminates():
    dt, threshold = 0.05, 3.2096
    for velocity, expected_cost in ((threshold * 1.001, 1.0), (threshold * 0.999, 0.0), (-2.0 * threshold, 0.0)):
        qpos = np.zeros(9)
        qpos[0], qpos[1], qpos[2] = velocity * dt, -0.6, 2.5  # fallen on its back, far below the start height
        ctrl = np.array([1.0, -1.0, 0.5, 0.0, 0.0, 0.5])
        _, obs, reward, cost, term, _, _ = scripted(CHEETAH, qpos, position_before=[0.0], ctrl=ctrl)
        assert cost == expected_cost and not term
        assert reward == pytest.approx(velocity - 0.1 * 2.5, abs=1e-4)  # 1.0 v_x - 0.1 |a|^2, no healthy reward
        np.testing.assert_allclose(obs, np.concatenate([qpos[1:], np.zeros(9)]), rtol=1e-6)


def test_hopper_cost_threshold_crossing():
    dt, threshold = 0.008, 0.7402
    costs = [
        scripted(HOPPER, [v * dt, 1.25, 0, 0, 0, 0], position_before=[0.0])[3]
        for v in (0.999 * threshold, 1.001 * threshold, -5.0)
    ]
    assert costs == [0.0, 1.0, 0.0]


def test_humanoid_reward_cost_and_termination_use_the_mass_centre():
    dt, threshold = 0.015, 1.4149
    mass = HUMANOID.mj_model.body_mass
    nbody = HUMANOID.mj_model.nbody
    xipos = np.zeros((nbody, 3))
    # only the torso moves: the mass centre moves by (torso mass / total mass) of its displacement
    share = mass[1] / mass.sum()
    for scale, expected_cost in ((1.001, 1.0), (0.999, 0.0)):
        speed = scale * threshold
        xipos[1] = [0.6 * speed * dt / share, 0.8 * speed * dt / share, 1.4]  # direction (0.6, 0.8)
        qpos = HUMANOID.mj_model.qpos0.copy()
        qpos[2] = 1.3
        action = np.linspace(-1.0, 1.0, 17)
        ctrl = HUMANOID.ctrl_from_action(action)
        _, obs, reward, cost, term, _, info = scripted(
            HUMANOID, qpos, position_before=[0.0, 0.0], ctrl=ctrl, xipos=xipos
        )
        assert cost == expected_cost and not term
        assert float(info["x_velocity"]) == pytest.approx(0.6 * speed, rel=1e-4)
        # 1.25 v_x + 5 - 0.1 |ctrl|^2 with ctrl = 0.4 action (the +-0.4 ctrlrange)
        expected = 1.25 * 0.6 * speed + 5.0 - 0.1 * np.sum((0.4 * action) ** 2)
        assert reward == pytest.approx(expected, abs=1e-4)
    for z, unhealthy in ((1.0, True), (1.01, False), (1.99, False), (2.0, True)):  # healthy z in (1, 2)
        qpos = HUMANOID.mj_model.qpos0.copy()
        qpos[2] = z
        assert scripted(HUMANOID, qpos, position_before=[0.0, 0.0], xipos=np.zeros((nbody, 3)))[4] == unhealthy


def test_humanoid_observation_layout():
    nbody, nv = HUMANOID.mj_model.nbody, HUMANOID.nv  # 14 bodies (world included), 23 dofs
    rng = np.random.default_rng(0)
    qpos, qvel = rng.normal(size=24), rng.normal(size=23)
    cinert, cvel = rng.normal(size=(nbody, 10)), rng.normal(size=(nbody, 6))
    qfrc, cfrc = rng.normal(size=nv), rng.normal(size=(nbody, 6))
    data = mjx.make_data(HUMANOID.model)
    data = data.replace(qpos=f32(qpos), qvel=f32(qvel), cvel=f32(cvel), qfrc_actuator=f32(qfrc))
    data = data.replace(_impl=data._impl.replace(cinert=f32(cinert), cfrc_ext=f32(cfrc)))
    obs = np.asarray(HUMANOID.observation(data))
    expected = np.concatenate([qpos[2:], qvel, cinert.ravel(), cvel.ravel(), qfrc, cfrc.ravel()])
    assert expected.shape == (376,)
    np.testing.assert_allclose(obs, expected, rtol=1e-6)


def test_truncation_at_max_steps():
    params = CHEETAH.default_params().replace(max_steps=1)
    assert scripted(CHEETAH, np.zeros(9), position_before=[0.0], params=params)[5]


# --------------------------------------------------------------------------- reset


def test_reset_noise_is_gymnasium_v4s():
    # one compiled single-key reset called 128 times (a vmapped one compiles for twice as long)
    keys = np.asarray(jax.random.split(jax.random.PRNGKey(0), 128))  # numpy: jax indexing compiles per index
    # Hopper: U(-5e-3, 5e-3) on qpos and qvel; HalfCheetah: U(-0.1, 0.1) on qpos, 0.1 N(0, 1) on qvel
    for env, scale, normal in ((HOPPER, 5e-3, False), (CHEETAH, 0.1, True)):
        reset = jax.jit(env.reset)
        states = [reset(key, env.default_params())[0] for key in keys]
        qpos, qvel = np.stack([s.qpos for s in states]), np.stack([s.qvel for s in states])
        dq = qpos - env.mj_model.qpos0
        assert np.abs(dq).max() <= scale and np.abs(dq).max() > 0.98 * scale
        assert np.std(dq) == pytest.approx(scale / np.sqrt(3.0), rel=0.08)
        if normal:
            assert np.std(qvel) == pytest.approx(scale, rel=0.08) and np.abs(qvel).max() > 2.5 * scale
        else:
            assert np.abs(qvel).max() <= scale and np.std(qvel) == pytest.approx(scale / np.sqrt(3.0), rel=0.08)
        np.testing.assert_allclose([s.position[0] for s in states], qpos[:, 0])  # rootx
        assert all(int(s.time) == 0 for s in states)


def test_position_integration_is_mujocos():
    """``integrate_pos`` (the RK4 stages' positions: free-joint quaternions, hinges, slides) against
    MuJoCo's ``mj_integratePos``, no MJX program needed."""
    rng = np.random.default_rng(0)
    for env in (ANT, HUMANOID, HOPPER):
        for _ in range(3):
            qpos = env.mj_model.qpos0 + rng.uniform(-0.5, 0.5, env.nq)
            if env is not HOPPER:
                qpos[3:7] /= np.linalg.norm(qpos[3:7])
            qvel = rng.normal(0.0, 3.0, env.nv)
            expected = qpos.copy()
            mujoco.mj_integratePos(env.mj_model, expected, qvel, 0.01)
            ours = np.asarray(jax.jit(env.integrate_pos)(f32(qpos), f32(qvel), 0.01))
            np.testing.assert_allclose(ours, expected, atol=2e-6)


# --------------------------------------------------------------------------- MJX against MuJoCo C


@lru_cache(maxsize=None)
def compiled_step(env):
    # XLA backend optimisation level 0: a quarter less compile time; the few steps run fast anyway
    return jax.jit(env.step, compiler_options={"xla_backend_optimization_level": 0})


def c_state_with_contact(env, seed, max_steps=200):
    """A float32 state reached by MuJoCo C from ``qpos0`` under random actions, on a step with contacts."""
    rng = np.random.default_rng(seed)
    m, d = env.mj_model, mujoco.MjData(env.mj_model)
    for _ in range(max_steps):
        d.ctrl[:] = rng.uniform(-1, 1, env.nu) * m.actuator_ctrlrange[:, 1]
        mujoco.mj_step(m, d, nstep=env.default_params().frame_skip)
        if d.ncon > 0:
            break
    assert d.ncon > 0
    return (np.float32(d.qpos), np.float32(d.qvel), np.float32(d.qacc_warmstart))


# Tolerances (qpos, qvel) from the agreement measured over 208 random-action states per robot (module
# docstrings of hopper_velocity.py, half_cheetah_velocity.py, ant_velocity.py), with margin: Hopper agrees to
# round-off (at most 1.9e-7 in qpos, 4.7e-6 in qvel; the two states here 5.6e-8 and 2.4e-6), HalfCheetah to at
# most 9.9e-6 and 1.1e-3 at its stiffest contacts (here 2.7e-7 and 3.3e-5), the Ant to round-off away from
# contacts (its contacts differ: MJX's friction pyramid, see ant_velocity.py).  Hopper's are tight enough to
# see RK4 with equal weights (1/4 each instead of 1/6, 1/3, 1/3, 1/6): qvel off by 3.4e-5.
TOLERANCE = {"hopper": (1e-6, 1e-5), "half_cheetah": (5e-5, 2e-3), "ant": (1e-5, 5e-5)}
FRAME_SKIP = {"hopper": 4, "half_cheetah": 5, "ant": 5}  # gymnasium/envs/mujoco/*_v4.py
# One MJX program per robot, ~10 s to compile on a lightly loaded 2-core CPU (up to ~60 s under heavy load):
# Hopper (RK4, saferl's integrator) always, HalfCheetah (Euler, mjx.step) with the slow tests; SAFERL_TEST_ALL_MJX=1
# adds the Ant (free joint) from a reset state, in the air
ALL_MJX = os.environ.get("SAFERL_TEST_ALL_MJX", "") not in ("", "0")


# HalfCheetah's (Euler: mjx.step itself) is marked slow since MJX stopped being the default physics: the default
# run keeps the Hopper's, which checks saferl's own RK4 in MJX
@pytest.mark.parametrize(
    "name",
    [
        "hopper",
        pytest.param("half_cheetah", marks=pytest.mark.slow),
        pytest.param(
            "ant", marks=pytest.mark.skipif(not ALL_MJX, reason="set SAFERL_TEST_ALL_MJX=1 (one more MJX compile)")
        ),
    ],
)
def test_one_mjx_step_matches_mujoco_c(name):
    """From the same float32 state and action, one MJX env step against ``frame_skip`` ``mj_step``s of
    the CPU model (float64): from a reset state and (Hopper, HalfCheetah) from a state with contacts.

    The tolerances are the measured worst cases with margin (``TOLERANCE``): MJX computes in float32
    and its differences from MuJoCo are round-off (plus float32 solver error at stiff contacts).
    Equal RK4 weights move Hopper's qvel by 3.4e-5; a wrong stage offset or frame skip by far more.
    """
    env = {"hopper": HOPPER, "half_cheetah": CHEETAH, "ant": ANT}[name]
    atol_qpos, atol_qvel = TOLERANCE[name]
    params = env.default_params().replace(physics="mjx")
    step = compiled_step(env)
    m, d = env.mj_model, mujoco.MjData(env.mj_model)
    rng = np.random.default_rng(1)
    reset_state, _ = env.reset(jax.random.PRNGKey(3), params)
    starts = [(np.float32(reset_state.qpos), np.float32(reset_state.qvel), np.zeros(env.nv, np.float32))]
    if env is not ANT:
        starts.append(c_state_with_contact(env, seed=2))
    for qpos, qvel, warmstart in starts:
        action = rng.uniform(-1, 1, env.nu).astype(np.float32)
        d.qpos[:], d.qvel[:], d.qacc_warmstart[:], d.ctrl[:] = qpos, qvel, warmstart, action
        mujoco.mj_step(m, d, nstep=FRAME_SKIP[name])
        state, _ = env.state_from(qpos, qvel)
        state = state.replace(qacc_warmstart=f32(warmstart))
        new, obs, reward, cost, term, trunc, info = step(state, f32(action), params)
        np.testing.assert_allclose(new.qpos, d.qpos, atol=atol_qpos, rtol=0)
        np.testing.assert_allclose(new.qvel, d.qvel, atol=atol_qvel, rtol=0)
        # the step's reward and cost, by hand from the C trajectory (Gymnasium v4 weights)
        v_x = (d.qpos[0] - qpos[0]) / (
            FRAME_SKIP[name] * m.opt.timestep
        )  # the Ant's torso COM is its free joint's origin
        healthy_reward, ctrl_weight = {"hopper": (1.0, 1e-3), "half_cheetah": (0.0, 0.1), "ant": (1.0, 0.5)}[name]
        assert float(reward) == pytest.approx(
            v_x + healthy_reward - ctrl_weight * np.sum(action**2), abs=atol_qpos / env.dt(params) * 2
        )
        if env is not ANT and abs(v_x - params.velocity_threshold) > 1e-3:
            assert float(cost) == float(v_x > params.velocity_threshold)


@pytest.mark.skipif(not ALL_MJX, reason="set SAFERL_TEST_ALL_MJX=1 (a ~10 s kinematics compile)")
def test_humanoid_reset_observation_and_mass_centre_match_mj_forward():
    """At reset Gymnasium's ``set_state`` runs ``mj_forward``: fresh ``cinert``/``cvel`` and mass centre,
    zero actuator and contact forces (after ``mj_resetData``)."""
    m, d = HUMANOID.mj_model, mujoco.MjData(HUMANOID.mj_model)
    rng = np.random.default_rng(0)
    qpos = m.qpos0 + rng.uniform(-0.3, 0.3, m.nq)
    qpos[3:7] /= np.linalg.norm(qpos[3:7])
    qvel = rng.normal(size=m.nv)
    state, obs = jax.jit(HUMANOID.state_from)(np.float32(qpos), np.float32(qvel))
    d.qpos[:], d.qvel[:] = np.float32(qpos), np.float32(qvel)
    mujoco.mj_forward(m, d)
    expected = np.concatenate(
        [d.qpos[2:], d.qvel, d.cinert.ravel(), d.cvel.ravel(), np.zeros(m.nv), np.zeros(6 * m.nbody)]
    )
    np.testing.assert_allclose(obs, expected, atol=1e-5 * np.abs(expected).max())
    np.testing.assert_allclose(state.position, (m.body_mass @ d.xipos / m.body_mass.sum())[:2], atol=1e-6)
