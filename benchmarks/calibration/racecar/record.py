"""Measure the original Racecar (Safety-Gymnasium 1.0.0) for the planar model of ``saferl/envs/safety_nav/racecar.py``.

Runs in a venv with the original: safety-gymnasium 1.0.0, gymnasium 0.28.1, mujoco 2.3.3, patched by
``benchmarks/patch_safety_gymnasium.py`` -- the fidelity venv has exactly these (``make -C benchmarks/fidelity
venv``).  From the repository root, each writes one JSON file beside this file (``--out`` to write elsewhere)::

    benchmarks/fidelity/.venv/bin/python benchmarks/calibration/racecar/record.py transients     # transients.json
    benchmarks/fidelity/.venv/bin/python benchmarks/calibration/racecar/record.py grid           # grid.json
    benchmarks/fidelity/.venv/bin/python benchmarks/calibration/racecar/record.py grid-reverse   # grid_reverse.json
    benchmarks/fidelity/.venv/bin/python benchmarks/calibration/racecar/record.py episodes       # episodes.json
    benchmarks/fidelity/.venv/bin/python benchmarks/calibration/racecar/record.py inertia        # prints only

All on ``SafetyRacecarCircle1-v0``, actions in the actuators' units (rad/s of the rear axle, rad of steering).

* ``transients``: the scripted command sequences of :data:`TRANSIENTS` from ``reset(seed=5)``; per env step the
  command, the body origin's position and world velocity, the heading, the rear axle's speed (``qvel[10]``),
  the two steering hinges (``qpos[7]``, ``qpos[9]``) and the yaw rate (``qvel[5]``).  ``fit.py`` fits eight of
  them (:data:`fit.TRANSIENTS`) and checks the model on the rest.
* ``grid``: steady turns: each (throttle, steering) command of 4-20 rad/s x 0.025-0.785 rad held for 250 steps
  from ``reset(seed=3)``; mean and std over steps 101-250 of the hinges, the axle speed, the forward and
  sideways velocity and the yaw rate.  ``fit.py`` fits the 60 means.  ``grid-reverse``: the same at throttles
  -4 to -20 (not fitted: the record of the reverse turn, where the port and the original part;
  docs/results/ctrpo-table1-cpu/README.md, section "RacecarCircle1").
* ``episodes``: 30 episodes (``reset(seed=100 + i)``) each of uniform random actions and of the constant actions
  (1, 0.5) and (1, 0.3) in ``[-1, 1]^2``: returns and costs, the original's column of racecar_circle.py's table.
* ``inertia``: the entries of MuJoCo's mass matrix at reset that racecar.py uses (the rear axle's, a front
  wheel's spin and a steering hinge's with its wheel) and the car's mass.

MuJoCo is deterministic here: the same command writes the same file (grid.json as committed).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
THROTTLE, STEER = 20.0, 0.785  # the actuators' ctrlrange

#: name -> the command (rad/s, rad) of each env step
TRANSIENTS = {
    "straight20": [(20, 0.0)] * 60,
    "straight8": [(8, 0.0)] * 60,
    "reverse20": [(-20, 0.0)] * 60,
    "brake": [(20, 0.0)] * 40 + [(0, 0.0)] * 40 + [(-20, 0.0)] * 40,
    "steer_still_785": [(0, 0.785)] * 30,
    "steer_still_03": [(0, 0.3)] * 30,
    "turn20_03": [(20, 0.0)] * 40 + [(20, 0.3)] * 60 + [(20, -0.3)] * 60,
    "turn12_05": [(12, 0.0)] * 40 + [(12, 0.5)] * 60 + [(12, 0.0)] * 40,
    "turn20_785": [(20, 0.0)] * 40 + [(20, 0.785)] * 60,
    "turn8_02": [(8, 0.0)] * 40 + [(8, 0.2)] * 60 + [(8, 0.6)] * 60,
    "random": [tuple(x) for x in np.random.default_rng(0).uniform([-20, -0.785], [20, 0.785], (200, 2))],
    "slowrandom": [
        tuple(x) for x in np.repeat(np.random.default_rng(1).uniform([-20, -0.785], [20, 0.785], (20, 2)), 10, axis=0)
    ],
}
GRID = ([4.0, 8.0, 12.0, 16.0, 20.0], [0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.65, 0.785, -0.2, -0.785])
GRID_REVERSE = ([-4.0, -8.0, -12.0, -16.0, -20.0], [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.65, 0.785, -0.3, -0.785])


def _make():
    warnings.filterwarnings("ignore")
    import safety_gymnasium

    return safety_gymnasium.make("SafetyRacecarCircle1-v0")


def _heading(task) -> float:
    mat = task.agent.mat
    return float(np.arctan2(mat[1, 0], mat[0, 0]))


def transients(out: Path) -> None:
    env = _make()
    task = env.unwrapped.task
    runs = {}
    for name, commands in TRANSIENTS.items():
        env.reset(seed=5)

        def snap(action):
            data = task.data
            return {
                "act": [float(a) for a in action],
                "pos": task.agent.pos[:2].tolist(),
                "vel": task.agent.vel[:2].tolist(),
                "heading": _heading(task),
                "w": float(data.qvel[10]),
                "dl": float(data.qpos[7]),
                "dr": float(data.qpos[9]),
                "yaw": float(data.qvel[5]),
            }

        record = [snap((0.0, 0.0))]
        for action in commands:
            env.step(np.array(action, float))
            record.append(snap(action))
        runs[name] = record
        print(f"{name:16s} {len(commands)} steps", flush=True)
    out.write_text(json.dumps(runs) + "\n")
    print(f"wrote {out}")


def steady_turns(throttles, steerings, out: Path) -> None:
    """Per (throttle, steering) command held from reset(seed=3): mean and std over steps 101-250 of the steering
    hinges, the rear wheel speed, forward and sideways body velocity and yaw rate."""
    env = _make()
    task = env.unwrapped.task
    rows = []
    for thr in throttles:
        for dc in steerings:
            env.reset(seed=3)
            rec = []
            for t in range(250):
                env.step(np.array([thr, dc]))
                if t >= 100:
                    data, h, vel = task.data, _heading(task), task.agent.vel
                    fwd = vel[0] * np.cos(h) + vel[1] * np.sin(h)
                    lat = -vel[0] * np.sin(h) + vel[1] * np.cos(h)
                    rec.append([data.qpos[7], data.qpos[9], data.qvel[10], fwd, lat, data.qvel[5]])
            rec = np.array(rec)
            rows.append(dict(thr=thr, dc=dc, mean=rec.mean(0).tolist(), std=rec.std(0).tolist()))
        print(f"throttle {thr:g}: {len(steerings)} steerings", flush=True)
    out.write_text(json.dumps(rows))
    print(f"wrote {out}")


def episodes(out: Path) -> None:
    env = _make()
    rng = np.random.default_rng(0)
    actions = {
        "random": lambda: rng.uniform(-1, 1, 2),
        "const_1_05": lambda: np.array([1.0, 0.5]),
        "const_1_03": lambda: np.array([1.0, 0.3]),
    }
    res = {}
    for name, action in actions.items():
        rets, costs = [], []
        for ep in range(30):
            env.reset(seed=100 + ep)
            ret = cost = 0.0
            for _ in range(500):
                _, r, c, terminated, truncated, _ = env.step(action() * np.array([THROTTLE, STEER]))
                ret, cost = ret + r, cost + c
                if terminated or truncated:
                    break
            rets.append(ret)
            costs.append(cost)
        res[name] = dict(ret=rets, cost=costs)
        print(
            f"{name}: return {np.mean(rets):.3f} +- {np.std(rets):.3f}, cost {np.mean(costs):.1f} +- "
            f"{np.std(costs):.1f}",
            flush=True,
        )
    out.write_text(json.dumps(res))
    print(f"wrote {out}")


def inertia() -> None:
    import mujoco

    env = _make()
    env.reset(seed=0)
    task = env.unwrapped.task
    model, data = task.model, task.data
    full = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, full, data.qM)
    joints = {mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j): model.jnt_dofadr[j] for j in range(model.njnt)}
    for name, dof in joints.items():
        if model.jnt_type[list(joints).index(name)] == mujoco.mjtJoint.mjJNT_HINGE:
            print(
                f"hinge {name:20s} dof {dof:2d}: mass-matrix diagonal {full[dof, dof]:.8f} kg m^2, damping "
                f"{model.dof_damping[dof]:g}"
            )
    print(f"mass {model.body_subtreemass[model.body('agent').id]:.6f} kg")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("transients", "grid", "grid-reverse", "episodes", "inertia"))
    parser.add_argument("--out", type=Path, help="the file to write (default: WHAT.json beside this file)")
    args = parser.parse_args(argv)
    out = args.out or HERE / f"{args.what.replace('-', '_')}.json"
    if args.what == "transients":
        transients(out)
    elif args.what == "grid":
        steady_turns(*GRID, out)
    elif args.what == "grid-reverse":
        steady_turns(*GRID_REVERSE, out)
    elif args.what == "episodes":
        episodes(out)
    else:
        inertia()
    return 0


if __name__ == "__main__":
    sys.exit(main())
