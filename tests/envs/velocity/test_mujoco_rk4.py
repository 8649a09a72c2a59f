"""RK4 as MuJoCo 2.3.3 steps it (:mod:`saferl.envs.mujoco_rk4`) against the original Ant's own steps.

The fixture holds 100 physics steps of Safety-Gymnasium 1.0's ``SafetyAntVelocity-v1`` on MuJoCo 2.3.3 (every
tenth of a scripted and a random run, a third of them with foot contacts), recorded by
``benchmarks/fidelity/ant_release_record.py``: the state before each step, its control, and the state after.  From
each state, :class:`UncorrectedRK4` on today's MuJoCo must give 2.3.3's result to round-off, while today's
``mj_step`` (MuJoCo 4.0's Munthe-Kaas RK4) must not: so the test can tell the two rules apart."""

from pathlib import Path

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from saferl.envs.mujoco_rk4 import UncorrectedRK4, differs_from_mujoco  # noqa: E402
from saferl.envs.velocity.gymnasium_models import gymnasium_asset, load_model, match_margin_rule  # noqa: E402

FIXTURE = Path(__file__).with_name("ant_mujoco233_steps.npz")
BEFORE = ("qpos", "qvel", "qacc_warmstart", "ctrl")


def _ant():
    model = load_model(mujoco, gymnasium_asset("ant.xml"))
    match_margin_rule(model)  # MuJoCo 2.3.3's pair margins (saferl's host model of the Ant)
    return model


def _start(model, data, steps, k):
    mujoco.mj_resetData(model, data)
    data.time = float(steps["time"][k])
    for name in BEFORE:
        getattr(data, name)[:] = steps[name][k]


def test_uncorrected_rk4_reproduces_mujoco_233_and_mj_step_does_not():
    steps = np.load(FIXTURE)
    model = _ant()
    assert differs_from_mujoco(mujoco, model)
    rk4 = UncorrectedRK4(mujoco, model)
    ours, engine = mujoco.MjData(model), mujoco.MjData(model)
    scratch = rk4.scratch(ours)
    worst_ours = worst_engine = 0.0
    for k in range(len(steps["time"])):
        _start(model, ours, steps, k)
        _start(model, engine, steps, k)
        rk4.step(ours, scratch)
        mujoco.mj_step(model, engine)
        assert ours.time == pytest.approx(steps["time"][k] + model.opt.timestep)
        np.testing.assert_allclose(ours.qpos, steps["after_qpos"][k], atol=1e-11, rtol=0)
        worst_ours = max(worst_ours, float(np.abs(ours.qvel - steps["after_qvel"][k]).max()))
        worst_engine = max(worst_engine, float(np.abs(engine.qvel - steps["after_qvel"][k]).max()))
    assert worst_ours < 1e-10  # round-off (the recording's runs: 4e-14)
    assert worst_engine > 1e-7  # MuJoCo 4.0's rule moves the free joint's steps


def test_models_without_a_rotating_joint_keep_mujocos_step():
    hopper = load_model(mujoco, gymnasium_asset("hopper.xml"))  # RK4 on slides and hinges only
    cheetah = load_model(mujoco, gymnasium_asset("half_cheetah.xml"))  # Euler
    assert not differs_from_mujoco(mujoco, hopper) and not differs_from_mujoco(mujoco, cheetah)
    assert differs_from_mujoco(mujoco, load_model(mujoco, gymnasium_asset("humanoid.xml")))


def _write_fixture(recording: Path) -> None:
    """Every twentieth step of both runs of ``ant_release_record.py``'s recording, as the fixture."""
    runs = np.load(recording)
    picked = {name: [] for name in ("time", *BEFORE, "after_qpos", "after_qvel")}
    for run in ("scripted", "random"):
        rows = np.arange(0, len(runs[f"{run}/before_time"]), 20)
        picked["time"].append(runs[f"{run}/before_time"][rows])
        for name in BEFORE:
            picked[name].append(runs[f"{run}/before_{name}"][rows])
        for name in ("qpos", "qvel"):
            picked[f"after_{name}"].append(runs[f"{run}/after_{name}"][rows])
    np.savez_compressed(FIXTURE, **{name: np.concatenate(parts) for name, parts in picked.items()})


if __name__ == "__main__":  # python tests/envs/velocity/test_mujoco_rk4.py runs/fidelity/ant_release/ant_steps.npz
    import sys

    _write_fixture(Path(sys.argv[1]))
