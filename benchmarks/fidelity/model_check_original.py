"""The original's side of the MuJoCo model check (runs in benchmarks/fidelity/.venv): Safety-Gymnasium 1.0.0's
navigation models, their numbers and their episodes under ``model_check.schedule``.

    benchmarks/fidelity/.venv/bin/python benchmarks/fidelity/model_check_original.py --out FILE

For each task of ``model_check.TASKS``: the compiled model's numbers by name (``model_check.model_numbers``)
and ``model_check.EPISODES`` episodes (``reset(seed=episode index)``) of ``model_check.STEPS`` env steps.  Every
``mj_step`` of ``simulation_forward`` goes through a recorder (Safety-Gymnasium calls
``mujoco.mj_step`` from ``safety_gymnasium/bases/underlying.py``; the recorder stands in for that module's
``mujoco``), which keeps the mocap bodies' positions as the gremlins' ``move()`` left them before the step.
After each env step the MuJoCo state by name (``model_check.read_state``), the controls the agent applied
(``data.ctrl``, after ``apply_action``'s clip to the control range), reward and cost.  Static objects
(pillars, buttons) are bodies of the rebuilt model: their world positions are kept per episode, and so are the
gremlins' weld ``relpose`` (the model is rebuilt at every reset, and the weld keeps each box at its place relative
to a mocap body that ``world.py`` declares at the origin), and the agent body's frame (``world.py`` places the
agent body at its layout pose, so the Point's slide and hinge joints start at zero there).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import model_check as mc  # noqa: E402
import suite_original  # noqa: E402
import suite_tasks as st  # noqa: E402

warnings.filterwarnings("ignore")
STATIC_PREFIXES = ("pillar", "button")


class StepRecorder:
    """Stands in for the ``mujoco`` module inside Safety-Gymnasium's ``underlying.py``: records the mocap
    bodies' positions and orientations before every ``mj_step``."""

    def __init__(self, mujoco):
        self._mujoco = mujoco
        self.substeps: list[tuple[list, list]] = []

    def __getattr__(self, name):
        return getattr(self._mujoco, name)

    def mj_step(self, model, data, *args, **kwargs):
        self.substeps.append((data.mocap_pos.tolist(), data.mocap_quat.tolist()))
        return self._mujoco.mj_step(model, data, *args, **kwargs)


def scripted_action(label: str, env, t: int) -> np.ndarray:
    if label == "PointGoal1":
        task = env.unwrapped.task
        return st.point_towards(
            np, task.agent.pos[:2].copy(), suite_original.heading_of(task), task.goal.pos[:2].copy()
        )
    return suite_original.scripted_action(label, env, t)


def saved_xml(mujoco, model) -> str:
    """The episode's model as MuJoCo writes it back (``mj_saveLastXML``; meshes by absolute path into this venv),
    so that the main venv's MuJoCo can step the original's own model too."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "world.xml"
        mujoco.mj_saveLastXML(str(path), model)
        return path.read_text()


def statics(mujoco, model, data) -> dict[str, list]:
    out = {}
    for b in range(model.nbody):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) or ""
        if name.startswith(STATIC_PREFIXES):
            out[name] = [data.xpos[b].tolist(), data.xquat[b].tolist()]
    return out


def episode(label: str, env, robot: str, seed: int, recorder: StepRecorder) -> dict:
    import mujoco

    env.reset(seed=seed)
    task = env.unwrapped.task
    model, data = task.model, task.data
    low, high = env.action_space.low, env.action_space.high
    rng = np.random.default_rng(1000 + seed)
    record = {
        "statics": statics(mujoco, model, data),
        "mocap_names": mc.mocap_names(mujoco, model),
        "welds": mc.weld_relpose(mujoco, model),
        "agent_frame": [model.body("agent").pos.tolist(), model.body("agent").quat.tolist()],
        "xml": saved_xml(mujoco, model),
        "states": [mc.read_state(mujoco, model, data)],
        "ctrl": [],
        "substeps": [],
        "reward": [],
        "cost": [],
    }
    for t in range(mc.STEPS):
        action = mc.unscripted_action(robot, t, rng)
        if action is None:
            action = np.asarray(scripted_action(label, env, t), np.float64)
        recorder.substeps = []
        _, reward, cost, terminated, truncated, _ = env.step(mc.affine(action, low, high))
        record["ctrl"].append(data.ctrl.tolist())
        record["substeps"].append(recorder.substeps)
        record["states"].append(mc.read_state(mujoco, model, data))
        record["reward"].append(float(reward))
        record["cost"].append(float(cost))
        if terminated or truncated:
            raise RuntimeError(f"{label}: the episode ended at step {t}")
    return record


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)

    import mujoco
    import safety_gymnasium
    from safety_gymnasium.bases import underlying

    recorder = StepRecorder(mujoco)
    underlying.mujoco = recorder
    start = time.time()
    out = {"versions": {"safety_gymnasium": safety_gymnasium.__version__, "mujoco": mujoco.__version__}, "tasks": {}}
    for label, env_id, robot, _ in mc.TASKS:
        env = safety_gymnasium.make(env_id)
        env.reset(seed=0)
        model = env.unwrapped.task.model
        numbers = mc.model_numbers(mujoco, model, mc.robot_bodies(mujoco, model))
        runs = [episode(label, env, robot, seed, recorder) for seed in range(mc.EPISODES)]
        out["tasks"][label] = {"env_id": env_id, "numbers": numbers, "episodes": runs}
        print(f"{label}: {len(numbers)} numbers, {len(runs)} episodes of {mc.STEPS} steps", flush=True)
    out["seconds"] = time.time() - start
    Path(args.out).write_text(json.dumps(out))


if __name__ == "__main__":
    main()
