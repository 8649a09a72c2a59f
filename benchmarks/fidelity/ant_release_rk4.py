"""Replay the original Ant's recorded physics steps (``ant_release_record.py``) through an RK4 step written here on top
of this MuJoCo's ``mj_forward`` and ``mj_integratePos``, to tell MuJoCo 4.0's change of the RK4 integrator apart from
everything else that changed since MuJoCo 2.3.3 (runs in any venv with numpy and mujoco).

    PYTHON benchmarks/fidelity/ant_release_rk4.py --xml GYMNASIUM_0.28.1/envs/mujoco/assets/ant.xml \\
        [--recording runs/fidelity/ant_release/ant_steps.npz] [--halve-margins] [--json OUT]

The step is the classical four-stage Runge-Kutta scheme of ``mj_RungeKutta`` (A = 1/2, 1/2, 1 on the subdiagonal,
B = 1/6, 1/3, 1/3, 1/6): ``mj_forward`` at the start, three more stages, and the state advanced by the B-weighted
velocities and accelerations.  Rules for the free joint's orientation, ``--rule``:

* ``plain``: each stage's orientation is the start's rotated by the A-weighted sum of the stages' angular velocities,
  and the end's by the B-weighted sum (what ``mj_RungeKutta`` does up to MuJoCo 3.x);
* ``munthe-kaas``: each stage's angular velocity w is first mapped into the Lie algebra increment's rate,
  w + theta x w / 2 + theta x (theta x w) / 12, where theta is that stage's rotation from the start in the body frame
  (the Runge-Kutta-Munthe-Kaas correction, second order in theta); ``munthe-kaas-exact`` uses the exact inverse
  derivative of the exponential map instead of the series.

Warm start, ``--warmstart``: ``stage`` starts each stage's constraint solver from the previous stage's accelerations
(MuJoCo up to 3.3.5 updated ``qacc_warmstart`` inside every ``mj_forward``); ``step`` starts all four from the
recorded ``qacc_warmstart`` (MuJoCo 3.3.6 and later).

For every recorded step: max |difference| of qpos, qvel and qacc between this step and MuJoCo 2.3.3's recorded
result, and between this step and this release's own ``mj_step`` from the same state.  With ``--rollout``, also the
scripted run played open loop from its first recorded state under the recorded controls, once with this release's
``mj_step`` and once with this step: the first env step (``frame_skip`` physics steps) whose qpos is more than 1e-9,
1e-6 and 1e-3 away from MuJoCo 2.3.3's.  ``qacc`` after the step is
the last stage's accelerations, as MuJoCo 2.3.3 to 3.x leave it (MuJoCo 4.0's ``mj_step`` leaves another quantity
there, so its qacc column compares unlike things).  Prints one JSON line per run
(scripted, random); ``--json OUT`` writes them.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import mujoco
import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent
BEFORE_FIELDS = ("qpos", "qvel", "act", "qacc_warmstart", "ctrl", "qfrc_applied", "xfrc_applied")
AFTER_FIELDS = ("qpos", "qvel", "qacc")
RK4_A = ((0.5,), (0.0, 0.5), (0.0, 0.0, 1.0))
RK4_B = (1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0)
RK4_C = (0.5, 0.5, 1.0)
RULES = ("plain", "munthe-kaas", "munthe-kaas-exact")


def free_rotation_dofs(model) -> list[np.ndarray]:
    """The qvel indices of every free or ball joint's angular velocity (body frame)."""
    out = []
    for j in range(model.njnt):
        start = model.jnt_dofadr[j]
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            out.append(np.arange(start + 3, start + 6))
        elif model.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL:
            out.append(np.arange(start, start + 3))
    return out


def algebra_rate(theta: np.ndarray, omega: np.ndarray, rule: str) -> np.ndarray:
    """The rate of theta (R = R0 exp(theta), body-frame angular velocity omega) under ``rule``."""
    if rule == "plain":
        return omega
    cross = np.cross(theta, omega)
    double = np.cross(theta, cross)
    if rule == "munthe-kaas":
        return omega + 0.5 * cross + double / 12.0
    angle = float(np.linalg.norm(theta))
    if angle < 1e-8:
        return omega + 0.5 * cross + double / 12.0
    coefficient = (1.0 - angle * np.sin(angle) / (2.0 * (1.0 - np.cos(angle)))) / angle**2
    return omega + 0.5 * cross + coefficient * double


def rk4_step(model, data, rule: str, warmstart: str) -> None:
    """One RK4 step of ``data`` in place (``data`` holds the start state; ``mj_forward`` is called here)."""
    h, time0 = model.opt.timestep, data.time
    qpos0, qvel0 = data.qpos.copy(), data.qvel.copy()
    rotations = free_rotation_dofs(model)
    mujoco.mj_forward(model, data)
    velocities, accelerations = [data.qvel.copy()], [data.qacc.copy()]
    rates = [data.qvel.copy()]  # the velocities that integrate the positions (algebra rates for rotations)
    for i, weights in enumerate(RK4_A):
        position_rate = sum(w * rates[j] for j, w in enumerate(weights))
        velocity = qvel0 + h * sum(w * accelerations[j] for j, w in enumerate(weights))
        qpos = qpos0.copy()
        mujoco.mj_integratePos(model, qpos, position_rate, h)
        previous_qacc = data.qacc.copy()
        data.qpos[:], data.qvel[:], data.time = qpos, velocity, time0 + RK4_C[i] * h
        if warmstart == "stage":
            data.qacc_warmstart[:] = previous_qacc
        mujoco.mj_forward(model, data)
        rate = velocity.copy()
        for dofs in rotations:
            rate[dofs] = algebra_rate(h * position_rate[dofs], velocity[dofs], rule)
        velocities.append(velocity)
        accelerations.append(data.qacc.copy())
        rates.append(rate)
    position_rate = sum(b * r for b, r in zip(RK4_B, rates))
    qpos = qpos0.copy()
    mujoco.mj_integratePos(model, qpos, position_rate, h)
    data.qpos[:] = qpos
    data.qvel[:] = qvel0 + h * sum(b * a for b, a in zip(RK4_B, accelerations))
    data.time = time0 + h


def set_state(model, data, run: dict[str, np.ndarray], k: int) -> None:
    mujoco.mj_resetData(model, data)
    data.time = float(run["before_time"][k])
    for name in BEFORE_FIELDS:
        getattr(data, name)[:] = run[f"before_{name}"][k]


def compare(model, run: dict[str, np.ndarray], rule: str, warmstart: str) -> dict[str, object]:
    mine, engine = mujoco.MjData(model), mujoco.MjData(model)
    steps = len(run["before_qpos"])
    to_recorded = {name: np.zeros(steps) for name in AFTER_FIELDS}
    to_engine = {name: np.zeros(steps) for name in AFTER_FIELDS}
    for k in range(steps):
        set_state(model, mine, run, k)
        set_state(model, engine, run, k)
        rk4_step(model, mine, rule, warmstart)
        mujoco.mj_step(model, engine)
        for name in AFTER_FIELDS:
            value = getattr(mine, name)
            to_recorded[name][k] = np.max(np.abs(value - run[f"after_{name}"][k]))
            to_engine[name][k] = np.max(np.abs(value - getattr(engine, name)))

    def summary(gaps):
        first = np.flatnonzero(gaps["qvel"] > 1e-9)
        return {
            "max": {name: float(gaps[name].max()) for name in AFTER_FIELDS},
            "median_qvel": float(np.median(gaps["qvel"])),
            "first_qvel_step_above_1e-9": int(first[0]) if first.size else None,
        }

    return {"against_mujoco_2.3.3": summary(to_recorded), "against_this_mj_step": summary(to_engine)}


def rollout_departure(model, run: dict[str, np.ndarray], step, frame_skip: int) -> dict[str, int | None]:
    """The first env step of an open-loop replay of ``run`` (``step(data)`` per physics step, the recorded controls)
    whose qpos is further than each threshold from the recorded one."""
    data = mujoco.MjData(model)
    set_state(model, data, run, 0)
    first: dict[str, int | None] = {f"{t:g}": None for t in (1e-9, 1e-6, 1e-3)}
    for k in range(len(run["before_qpos"])):
        data.ctrl[:] = run["before_ctrl"][k]
        step(data)
        gap = float(np.max(np.abs(data.qpos - run["after_qpos"][k])))
        for key in first:
            if first[key] is None and gap > float(key):
                first[key] = k // frame_skip
    return first


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--xml", required=True, help="the model file the original env compiles")
    parser.add_argument("--recording", default=str(ROOT / "runs" / "fidelity" / "ant_release" / "ant_steps.npz"))
    parser.add_argument("--halve-margins", action="store_true")
    parser.add_argument("--rule", choices=RULES, default="plain")
    parser.add_argument("--warmstart", choices=("stage", "step"), default="stage")
    parser.add_argument("--rollout", action="store_true", help="also the open-loop replay of the scripted run")
    parser.add_argument("--json", help="write every run's result here")
    args = parser.parse_args(argv)

    with np.load(args.recording) as archive:
        recording = {name: archive[name] for name in archive.files}
    model = mujoco.MjModel.from_xml_path(args.xml)
    if model.opt.integrator != mujoco.mjtIntegrator.mjINT_RK4:
        raise ValueError("the model does not use the RK4 integrator")
    if args.halve_margins:
        model.geom_margin[:] = model.geom_margin / 2
    results = []
    for policy in ("scripted", "random"):
        run = {name.split("/", 1)[1]: value for name, value in recording.items() if name.startswith(f"{policy}/")}
        result = {
            "mujoco": mujoco.__version__,
            "margins": "halved" if args.halve_margins else "file",
            "rule": args.rule,
            "warmstart": args.warmstart,
            "policy": policy,
            **compare(model, run, args.rule, args.warmstart),
        }
        if args.rollout and policy == "scripted":
            frame_skip = int(recording["frame_skip"])
            result["rollout_first_env_step_above"] = {
                "mj_step": rollout_departure(model, run, lambda d: mujoco.mj_step(model, d), frame_skip),
                "this_step": rollout_departure(
                    model, run, lambda d: rk4_step(model, d, args.rule, args.warmstart), frame_skip
                ),
            }
        results.append(result)
        print(json.dumps(result), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results))


if __name__ == "__main__":
    main()
