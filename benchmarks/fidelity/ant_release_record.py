"""Record every ``mj_step`` of the original SafetyAntVelocity-v1 (runs in benchmarks/fidelity/.venv: Safety-Gymnasium
1.0.0, Gymnasium 0.28.1, MuJoCo 2.3.3), so that any MuJoCo release can replay each step on its own
(``ant_release_replay.py``).

    benchmarks/fidelity/.venv/bin/python benchmarks/fidelity/ant_release_record.py [--out runs/fidelity/ant_release]

Two runs of ``--steps`` env steps each: the scripted gait (``suite_tasks.ant_controller``, as ``suite_original.py``
plays it) and uniform random actions in [-1, 1]^8 (``np.random.default_rng(1)``); each starts at ``reset(seed=0)``
and is reset (seed + 1, ...) where the Ant becomes unhealthy.  Gymnasium's ``MujocoEnv`` takes the env step's
``frame_skip`` physics steps in one ``mujoco.mj_step(model, data, nstep=frame_skip)``; a stand-in for the
``mujoco`` module of ``gymnasium.envs.mujoco.mujoco_env`` takes them one ``mj_step`` at a time (what ``nstep`` does
inside MuJoCo) and records around each one:

* before: ``time``, ``qpos``, ``qvel``, ``act``, ``qacc_warmstart``, ``ctrl``, ``qfrc_applied``, ``xfrc_applied``
  (the whole integration state of this model: it has no mocap bodies, plugins or user data) and ``ncon`` of
  ``mj_forward`` at that state (on a scratch ``MjData``);
* after: ``qpos``, ``qvel``, ``qacc`` and ``ncon`` (the contacts the step's last evaluation left in ``data``).

Writes ``ant_steps.npz`` (arrays ``<run>/<field>``, no pickled objects), ``ant.xml`` (``mj_saveLastXML`` of the
env's compiled model) and ``ant_xml_roundtrip.json``: every numeric ``MjModel`` array and ``opt`` field that
differs between the env's model and ``ant.xml`` reloaded in this MuJoCo (what the XML round trip loses), and
whether this MuJoCo replays its own recording exactly from ``ant.xml``.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import suite_tasks as st  # noqa: E402

warnings.filterwarnings("ignore")
ENV_ID = "SafetyAntVelocity-v1"
BEFORE_FIELDS = ("time", "qpos", "qvel", "act", "qacc_warmstart", "ctrl", "qfrc_applied", "xfrc_applied")
AFTER_FIELDS = ("qpos", "qvel", "qacc")


class PhysicsStepRecorder:
    """Stands in for the ``mujoco`` module inside ``gymnasium.envs.mujoco.mujoco_env``: ``mj_step(m, d, nstep=n)``
    becomes ``n`` single ``mj_step`` calls, each recorded before and after."""

    def __init__(self, mujoco):
        self._mujoco = mujoco
        self.rows: list[dict] = []
        self.env_step = 0
        self.scratch = None

    def __getattr__(self, name):
        return getattr(self._mujoco, name)

    def contacts_at(self, model, data) -> int:
        """``ncon`` of ``mj_forward`` at ``data``'s state, computed on a scratch copy."""
        if self.scratch is None:
            self.scratch = self._mujoco.MjData(model)
        scratch = self.scratch
        scratch.time = data.time
        scratch.qpos[:], scratch.qvel[:], scratch.ctrl[:] = data.qpos, data.qvel, data.ctrl
        scratch.act[:], scratch.qacc_warmstart[:] = data.act, data.qacc_warmstart
        scratch.qfrc_applied[:], scratch.xfrc_applied[:] = data.qfrc_applied, data.xfrc_applied
        self._mujoco.mj_forward(model, scratch)
        return int(scratch.ncon)

    def mj_step(self, model, data, nstep: int = 1):
        for _ in range(nstep):
            row = {f"before_{name}": np.array(getattr(data, name), np.float64) for name in BEFORE_FIELDS}
            row["before_ncon"] = self.contacts_at(model, data)
            row["env_step"] = self.env_step
            self._mujoco.mj_step(model, data)
            row.update({f"after_{name}": np.array(getattr(data, name), np.float64) for name in AFTER_FIELDS})
            row["after_ncon"] = int(data.ncon)
            self.rows.append(row)


def play(env, recorder: PhysicsStepRecorder, policy: str, steps: int) -> dict[str, np.ndarray]:
    """``steps`` env steps of ``policy`` (reset where an episode ends); the recorded physics steps as arrays."""
    u = env.unwrapped
    low, high = env.action_space.low, env.action_space.high
    rng = np.random.default_rng(1)
    recorder.rows = []
    episode, t = 0, 0
    env.reset(seed=episode)
    resets = []
    for step in range(steps):
        recorder.env_step = step
        if policy == "random":
            action = rng.uniform(-1.0, 1.0, size=low.shape)
        else:
            action = np.asarray(st.ant_controller(np, t, u.data.qpos.copy(), u.data.qvel.copy()), np.float64)
        _, _, _, terminated, truncated, _ = env.step(st.to_original(action, low, high).astype(low.dtype))
        t += 1
        if terminated or truncated:
            episode, t = episode + 1, 0
            env.reset(seed=episode)
            resets.append(step)
    rows = recorder.rows
    out = {name: np.stack([np.asarray(row[name]) for row in rows]) for name in rows[0]}
    out["resets_after_env_step"] = np.asarray(resets, np.int64)
    return out


def numeric_fields(model) -> dict[str, np.ndarray]:
    """Every numeric array of an ``MjModel`` (``ant_release_replay.compiled_arrays``) and of its ``opt``, by name
    (``opt.<field>``)."""
    from ant_release_replay import compiled_arrays  # this script's folder is on sys.path when it runs

    out = compiled_arrays(model)
    for name in dir(model.opt):
        if not name.startswith("_"):
            value = getattr(model.opt, name)
            if isinstance(value, (int, float, np.ndarray)):
                out[f"opt.{name}"] = np.asarray(value)
    return out


def roundtrip_differences(model, reloaded) -> dict[str, object]:
    """The fields that differ between the env's model and the reloaded XML: max |difference| (or the shapes)."""
    original, back = numeric_fields(model), numeric_fields(reloaded)
    out: dict[str, object] = {}
    for name in sorted(set(original) | set(back)):
        if name not in original or name not in back:
            out[name] = "only in " + ("the env's model" if name in original else "the reloaded XML")
        elif original[name].shape != back[name].shape:
            out[name] = f"shape {original[name].shape} vs {back[name].shape}"
        elif original[name].size and not np.array_equal(original[name], back[name]):
            out[name] = float(np.max(np.abs(original[name].astype(np.float64) - back[name].astype(np.float64))))
    return out


def self_replay_gap(mujoco, model, run: dict[str, np.ndarray]) -> dict[str, float]:
    """Max |difference| of one ``mj_step`` from every recorded state on ``model`` against the recorded result."""
    data = mujoco.MjData(model)
    worst = {name: 0.0 for name in AFTER_FIELDS}
    for k in range(len(run["before_qpos"])):
        mujoco.mj_resetData(model, data)
        data.time = float(run["before_time"][k])
        for name in BEFORE_FIELDS[1:]:
            getattr(data, name)[:] = run[f"before_{name}"][k]
        mujoco.mj_step(model, data)
        for name in AFTER_FIELDS:
            gap = float(np.max(np.abs(getattr(data, name) - run[f"after_{name}"][k])))
            worst[name] = max(worst[name], gap)
    return worst


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "runs" / "fidelity" / "ant_release"))
    parser.add_argument("--steps", type=int, default=200, help="env steps per run")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    import mujoco
    import safety_gymnasium
    from gymnasium.envs.mujoco import mujoco_env

    recorder = PhysicsStepRecorder(mujoco)
    mujoco_env.mujoco = recorder
    env = safety_gymnasium.make(ENV_ID)
    env.reset(seed=0)
    model = env.unwrapped.model
    runs = {policy: play(env, recorder, policy, args.steps) for policy in ("scripted", "random")}
    env.close()

    arrays = {f"{policy}/{name}": value for policy, run in runs.items() for name, value in run.items()}
    arrays["frame_skip"] = np.asarray(env.unwrapped.frame_skip)
    arrays.update({f"model/{name}": value for name, value in numeric_fields(model).items()})
    np.savez_compressed(out / "ant_steps.npz", **arrays)
    xml_path = out / "ant.xml"
    mujoco.mj_saveLastXML(str(xml_path), model)
    saved = mujoco.MjModel.from_xml_path(str(xml_path))
    source = mujoco.MjModel.from_xml_path(env.unwrapped.fullpath)
    report = {
        "env_id": ENV_ID,
        "versions": {"safety_gymnasium": safety_gymnasium.__version__, "mujoco": mujoco.__version__},
        # the file inside its package, not this machine's path to it
        "source_xml": "gymnasium/" + env.unwrapped.fullpath.replace("\\", "/").split("/gymnasium/", 1)[-1],
        "physics_steps": {policy: len(run["before_qpos"]) for policy, run in runs.items()},
        "resets_after_env_step": {policy: run["resets_after_env_step"].tolist() for policy, run in runs.items()},
        "saved_xml_differences": roundtrip_differences(model, saved),
        "source_xml_differences": roundtrip_differences(model, source),
        "self_replay": {
            label: {policy: self_replay_gap(mujoco, m, run) for policy, run in runs.items()}
            for label, m in (("env_model", model), ("saved_xml", saved), ("source_xml", source))
        },
    }
    (out / "ant_xml_roundtrip.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
