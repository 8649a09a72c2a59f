"""The originals' side of the Safety-Gymnasium suite comparison (runs in benchmarks/fidelity/.venv).

Safety-Gymnasium 1.0.0 (gymnasium 0.28.1, mujoco 2.3.3): SafetyAntVelocity-v1,
SafetyHalfCheetahVelocity-v1, SafetyHopperVelocity-v1, SafetyHumanoidVelocity-v1,
SafetyPointPush1-v0, SafetyCarButton1-v0, SafetyRacecarCircle1-v0 (``suite_tasks.TASKS``):
random-policy and scripted-controller episodes, and for the velocity tasks a trajectory from a
set state under fixed actions (and the same from a start whose velocities are moved by 1e-6: the
original against itself).  Also the check of the robot model files: Gymnasium 0.28.1's
``ant.xml``, ``half_cheetah.xml``, ``hopper.xml`` and ``humanoid.xml`` (which these envs load)
against the main venv's Gymnasium (which saferl loads), compared as files and, where they
differ, as compiled MuJoCo models; and ``suite_tasks.margin_probe`` on MuJoCo 2.3.3.  Writes one
JSON (``--out``).

    benchmarks/fidelity/.venv/bin/python benchmarks/fidelity/suite_original.py --out FILE

Episodes are a plain loop, as in ``run_original.py``: ``reset(seed=episode index)``, return and
cost summed until ``terminated or truncated``.  Actions are in ``[-1, 1]^n`` and mapped onto
each env's action space by ``suite_tasks.to_original`` (C-TRPO's ``SafeRescaleAction``); the
random policy draws them from ``np.random.default_rng(1)``.
"""

from __future__ import annotations

import argparse
import hashlib
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import common  # noqa: E402
import suite_tasks as st  # noqa: E402

warnings.filterwarnings("ignore")
ROBOT_FILES = ("ant.xml", "half_cheetah.xml", "hopper.xml", "humanoid.xml")
ORIGINAL_MUJOCO = "2.3.3"  # safety-gymnasium 1.0.0's pin (requirements.txt)


def make_env(env_id: str):
    import safety_gymnasium

    return safety_gymnasium.make(env_id)


def heading_of(task) -> float:
    """World angle of the agent body's +x axis (from its rotation matrix)."""
    mat = task.agent.mat
    return float(np.arctan2(mat[1, 0], mat[0, 0]))


def scripted_action(label: str, env, t: int) -> np.ndarray:
    """The task's controller (suite_tasks) on the original's MuJoCo state, in [-1, 1]^n."""
    u = env.unwrapped
    if label in st.VELOCITY_TASKS:
        return st.VELOCITY_CONTROLLERS[label](np, t, u.data.qpos.copy(), u.data.qvel.copy())
    task = u.task
    pos = task.agent.pos[:2].copy()
    if label == "PointPush1":
        return st.point_push_controller(
            np, pos, heading_of(task), task.push_box.pos[:2].copy(), task.goal.pos[:2].copy()
        )
    if label == "CarButton1":
        goal = np.asarray(task.buttons.pos[task.buttons.goal_button])[:2]
        return st.car_button_controller(np, pos, heading_of(task), goal)
    return st.racecar_circle_controller(np, pos, heading_of(task))


# --------------------------------------------------------------------------- episodes


def episodes(label: str, env_id: str, policy: str, count: int, seed: int = 0) -> dict:
    env = make_env(env_id)
    low, high = env.action_space.low, env.action_space.high
    rng = np.random.default_rng(seed + 1)
    names = st.EXTRA_NAMES.get(label, ())
    returns, costs, lengths, extras = [], [], [], []
    start = time.perf_counter()
    for episode in range(count):
        env.reset(seed=episode)
        total_r = total_c = 0.0
        length = 0
        extra = np.zeros(len(names))
        done = False
        while not done:
            if policy == "random":
                action = rng.uniform(-1.0, 1.0, size=low.shape)
            else:
                action = np.asarray(scripted_action(label, env, length), np.float64)
            box_before = np.array(env.unwrapped.task.push_box.pos[:2]) if label == "PointPush1" else None
            _, reward, cost, terminated, truncated, info = env.step(st.to_original(action, low, high).astype(low.dtype))
            if box_before is not None:
                info = dict(info, **{st.BOX_MOVED: np.linalg.norm(env.unwrapped.task.push_box.pos[:2] - box_before)})
            total_r += float(reward)
            total_c += float(cost)
            length += 1
            if names:
                extra += [float(info.get(key, 0.0)) for _, key, _ in st.EXTRAS[label]]
            done = bool(terminated or truncated)
        returns.append(total_r)
        costs.append(total_c)
        lengths.append(length)
        extras.append(extra)
    env.close()
    record = common.episode_record(returns, costs, lengths, extras, names)
    record["seconds"] = time.perf_counter() - start
    return record


# --------------------------------------------------------------------------- velocity trajectories


def trajectory(label: str, env_id: str, perturbation: float = 0.0) -> dict:
    """``reset(seed=100)``, then ``set_state`` with the state it gave (so the start is the set
    state, fresh kinematics), then the task's fixed actions; every step's obs, reward, cost,
    termination, qpos and qvel.  ``perturbation`` is added to every start velocity (the
    original against itself: how fast a tiny difference grows on its own)."""
    env = make_env(env_id)
    u = env.unwrapped
    low, high = env.action_space.low, env.action_space.high
    env.reset(seed=st.TRAJECTORY_RESET_SEED)
    qpos, qvel = u.data.qpos.copy(), u.data.qvel.copy()
    u.set_state(qpos, qvel + perturbation)
    obs0 = u._get_obs()
    actions = st.trajectory_actions(label, low.size)
    rows = {"obs": [], "rewards": [], "costs": [], "terminated": [], "qpos": [], "qvel": []}
    for action in actions:
        obs, reward, cost, terminated, _, _ = env.step(st.to_original(action, low, high).astype(low.dtype))
        rows["obs"].append(np.asarray(obs, np.float64).tolist())
        rows["rewards"].append(float(reward))
        rows["costs"].append(float(cost))
        rows["terminated"].append(bool(terminated))
        rows["qpos"].append(u.data.qpos.tolist())
        rows["qvel"].append(u.data.qvel.tolist())
    env.close()
    return {
        "start": {"qpos": qpos.tolist(), "qvel": qvel.tolist(), "obs": np.asarray(obs0).tolist()},
        "perturbation": perturbation,
        "actions": actions.tolist(),
        **rows,
    }


# --------------------------------------------------------------------------- the robot model files


def saferl_assets() -> Path | None:
    """The main venv's gymnasium/envs/mujoco/assets (what saferl's gymnasium_models.gymnasium_asset reads)."""
    found = sorted(ROOT.glob(".venv/lib/python*/site-packages/gymnasium/envs/mujoco/assets"))
    return found[0] if found else None


def compiled_difference(path_a: Path, path_b: Path, seed: int = 0) -> dict:
    """Largest differences between two model files compiled by this venv's MuJoCo: masses,
    inertias, geom sizes and friction, joint ranges, gears, damping; world kinematics (body and
    geom frames, joint anchors and axes) at qpos0 and at 3 random poses; and 100 mj_steps from
    the same state under the same random controls (qpos, qvel)."""
    import mujoco

    a, b = mujoco.MjModel.from_xml_path(str(path_a)), mujoco.MjModel.from_xml_path(str(path_b))
    out = {}
    for name in (
        "body_mass",
        "body_inertia",
        "geom_size",
        "geom_friction",
        "jnt_range",
        "actuator_gear",
        "dof_damping",
        "dof_armature",
        "actuator_ctrlrange",
    ):
        x, y = getattr(a, name), getattr(b, name)
        out[name] = float(np.abs(x - y).max()) if x.shape == y.shape else f"shapes {x.shape} vs {y.shape}"
    out["opt_timestep"] = [float(a.opt.timestep), float(b.opt.timestep)]
    da, db = mujoco.MjData(a), mujoco.MjData(b)
    rng = np.random.default_rng(seed)
    kinematics = 0.0
    for k in range(4):
        q = a.qpos0 + (0.0 if k == 0 else rng.uniform(-0.3, 0.3, a.nq))
        for m, d in ((a, da), (b, db)):
            d.qpos[:] = q
            mujoco.mj_forward(m, d)
        for name in ("xpos", "xmat", "xipos", "geom_xpos", "geom_xmat", "xanchor", "xaxis"):
            kinematics = max(kinematics, float(np.abs(getattr(da, name) - getattr(db, name)).max()))
    out["world_kinematics"] = kinematics
    for m, d in ((a, da), (b, db)):
        mujoco.mj_resetData(m, d)
    controls = rng.uniform(-1.0, 1.0, (100, a.nu))
    for ctrl in controls:
        for m, d in ((a, da), (b, db)):
            d.ctrl[:] = ctrl
            mujoco.mj_step(m, d)
    out["after_100_steps_qpos"] = float(np.abs(da.qpos - db.qpos).max())
    out["after_100_steps_qvel"] = float(np.abs(da.qvel - db.qvel).max())
    return out


def asset_check() -> dict:
    import gymnasium
    import mujoco

    if mujoco.__version__ != ORIGINAL_MUJOCO:  # a venv with another engine (make engine): nothing to compare
        return {
            "skipped": f"MuJoCo {mujoco.__version__}: the files are compared as {ORIGINAL_MUJOCO} compiles them",
            "files": {},
        }

    ours = Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets"
    theirs = saferl_assets()
    result = {
        "original_dir": str(ours.relative_to(ROOT)) if ours.is_relative_to(ROOT) else str(ours),
        "saferl_dir": None if theirs is None else str(theirs.relative_to(ROOT)),
        "files": {},
    }
    if theirs is None:
        return result
    for name in ROBOT_FILES:
        a, b = (ours / name).read_bytes(), (theirs / name).read_bytes()
        entry = {
            "identical": a == b,
            "sha256_original": hashlib.sha256(a).hexdigest()[:16],
            "sha256_saferl": hashlib.sha256(b).hexdigest()[:16],
        }
        if a != b:
            entry["compiled"] = compiled_difference(ours / name, theirs / name)
        result["files"][name] = entry
    return result


# --------------------------------------------------------------------------- main


def versions() -> dict:
    from importlib.metadata import version

    return {n: version(n) for n in ("safety-gymnasium", "gymnasium", "mujoco", "numpy")}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--episodes-scale", type=float, default=1.0, help="multiply every episode count")
    parser.add_argument("--tasks", nargs="*", default=None, help="labels to run (default: all seven)")
    parser.add_argument(
        "--merge",
        metavar="WHY",
        help="put these tasks' runs into the existing --out in place of its own, noting the date and why",
    )
    parser.add_argument(
        "--policies", nargs="*", choices=st.POLICIES, default=None, help="the policies to run (default: both)"
    )
    args = parser.parse_args(argv)
    wall = time.perf_counter()
    result = {
        "side": "original",
        "python": platform.python_version(),
        "versions": versions(),
        "assets": asset_check(),
        "margin_probe": st.margin_probe(),
        "tasks": {},
    }
    for name, entry in result["assets"]["files"].items():
        print(f"{name:17s} identical: {entry['identical']}", flush=True)
    for label, env_id, _, _, count in st.TASKS:
        if args.tasks and label not in args.tasks:
            continue
        count = max(2, int(round(count * args.episodes_scale)))
        entry = {"env_id": env_id, "policies": {}}
        for policy in args.policies or st.POLICIES:
            entry["policies"][policy] = rec = episodes(label, env_id, policy, count)
            print(
                f"{label:19s} {policy:8s} return {rec['return']['mean']:9.3f} +- {rec['return']['std']:8.3f}  "
                f"cost {rec['cost']['mean']:7.3f} +- {rec['cost']['std']:7.3f}  length {rec['length']['mean']:6.1f}"
                f"  ({rec['seconds']:.0f} s)",
                flush=True,
            )
        if label in st.VELOCITY_TASKS:
            entry["trajectory"] = trajectory(label, env_id)
            perturbed = trajectory(label, env_id, st.SELF_PERTURBATION)
            entry["trajectory_perturbed"] = {k: perturbed[k] for k in ("perturbation", "qpos", "qvel")}
        result["tasks"][label] = entry
    if args.merge is None:
        common.write_side(result, args.out, wall)
        return
    common.merge_side(result, args.out, args.merge, wall)


if __name__ == "__main__":
    main()
