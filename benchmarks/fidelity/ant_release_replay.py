"""Replay the original Ant's recorded physics steps (``ant_release_record.py``) one ``mj_step`` at a time on whatever
MuJoCo this Python imports (needs only numpy and mujoco), and measure how far each step lands from MuJoCo 2.3.3's.

    PYTHON benchmarks/fidelity/ant_release_replay.py --xml GYMNASIUM_0.28.1/envs/mujoco/assets/ant.xml \\
        [--recording runs/fidelity/ant_release/ant_steps.npz] [--halve-margins] [--json OUT]

``--xml`` is the model file the original env compiles (Gymnasium 0.28.1's ``ant.xml``, in benchmarks/fidelity/.venv;
``ant_xml_roundtrip.json`` names it): each release compiles it itself, as saferl compiles its own copy.  The
recording's ``ant.xml`` (``mj_saveLastXML``) also loads, but MuJoCo 2.3.3 writes it with too few digits to replay
exactly.  For every recorded step: ``mj_resetData``, the recorded time, qpos, qvel, act, qacc_warmstart, ctrl and
applied forces, one ``mj_step``; then max |difference| of qpos, qvel and qacc against the recorded result, and
``ncon`` at the start state (``mj_forward`` on a scratch ``MjData``) and after the step, beside the recorded ones.

Options that change the model before replaying (for finding which setting restores the old behaviour):
``--halve-margins`` (every geom margin halved, as ``saferl.envs.velocity.gymnasium_models.match_margin_rule`` does);
``--set FIELD=VALUE`` (an ``MjModel`` scalar or ``opt`` field, e.g. ``opt.iterations=50``; repeatable);
``--disable NAME`` / ``--enable NAME`` (an ``mjtDisableBit`` / ``mjtEnableBit`` name without prefix, e.g.
``--disable WARMSTART``; repeatable); ``--recorded-arrays FIELD,...`` (copy MuJoCo 2.3.3's compiled arrays, saved in
the recording as ``model/<field>``, over this release's; ``all`` copies every one whose name and shape match and
whose values differ).  Prints one JSON line per run (scripted, random); ``--json OUT`` writes them all, with the
per-step differences and the compiled arrays that differ from MuJoCo 2.3.3's.
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
THRESHOLDS = (1e-12, 1e-9, 1e-6)
#: compiled fields whose meaning is a version's own (flag bits, enum codes, buffer sizes): never copied by ``all``
NOT_COPIED = ("opt.", "nbuffer", "bvh_", "light_", "cam_", "vis", "stat", "tex_", "mat_", "names", "name_")


def compiled_arrays(model) -> dict[str, np.ndarray]:
    """Every numeric array of an ``MjModel`` by name (what the recording saved as ``model/<name>``)."""
    out = {}
    for name in dir(model):
        if name.startswith("_"):
            continue
        try:
            value = getattr(model, name)
        except Exception:  # some attributes raise on models without the element
            continue
        if isinstance(value, np.ndarray) and value.dtype.kind in "fiub":
            out[name] = value
    return out


def array_differences(model, recorded: dict[str, np.ndarray]) -> dict[str, object]:
    """Compiled arrays of this release that differ from MuJoCo 2.3.3's: max |difference|, or why not comparable."""
    out: dict[str, object] = {}
    for name, value in sorted(compiled_arrays(model).items()):
        if name not in recorded:
            continue
        old = recorded[name]
        if old.shape != value.shape:
            out[name] = f"shape {old.shape} -> {value.shape}"
        elif old.size and not np.array_equal(old, value):
            out[name] = float(np.max(np.abs(old.astype(np.float64) - value.astype(np.float64))))
    return out


def parse_value(text: str):
    try:
        return int(text)
    except ValueError:
        return float(text)


def configure(model, args, recorded: dict[str, np.ndarray]) -> list[str]:
    """Apply the model options of ``args``; returns what was changed, in words."""
    changes = []
    if args.recorded_arrays:
        current = compiled_arrays(model)
        names = args.recorded_arrays.split(",")
        if names == ["all"]:
            names = [
                name
                for name, value in current.items()
                if name in recorded
                and not name.startswith(NOT_COPIED)
                and recorded[name].shape == value.shape
                and not np.array_equal(recorded[name], value)
            ]
        for name in names:
            getattr(model, name)[...] = recorded[name]
            changes.append(f"MuJoCo 2.3.3's {name}")
    if args.halve_margins:
        model.geom_margin[:] = model.geom_margin / 2
        changes.append("geom margins halved")
    for assignment in args.set:
        field, text = assignment.split("=", 1)
        owner, attribute = (model.opt, field[4:]) if field.startswith("opt.") else (model, field)
        old = getattr(owner, attribute)
        if isinstance(old, np.ndarray):
            old[...] = np.asarray([parse_value(v) for v in text.split(",")]).reshape(old.shape)
        else:
            setattr(owner, attribute, type(old)(parse_value(text)))
        changes.append(f"{field}={text}")
    for name in args.disable:
        model.opt.disableflags |= int(getattr(mujoco.mjtDisableBit, f"mjDSBL_{name}"))
        changes.append(f"disable {name}")
    for name in args.enable:
        model.opt.enableflags |= int(getattr(mujoco.mjtEnableBit, f"mjENBL_{name}"))
        changes.append(f"enable {name}")
    return changes


def first_above(values: np.ndarray, threshold: float) -> int | None:
    above = np.flatnonzero(values > threshold)
    return int(above[0]) if above.size else None


def replay(model, run: dict[str, np.ndarray]) -> dict[str, object]:
    """One ``mj_step`` from every recorded state of ``run``; per-step differences and contact counts."""
    data, scratch = mujoco.MjData(model), mujoco.MjData(model)
    steps = len(run["before_qpos"])
    gaps = {name: np.zeros(steps) for name in AFTER_FIELDS}
    ncon_before, ncon_after = np.zeros(steps, np.int64), np.zeros(steps, np.int64)
    for k in range(steps):
        for target in (scratch, data):
            mujoco.mj_resetData(model, target)
            target.time = float(run["before_time"][k])
            for name in BEFORE_FIELDS:
                getattr(target, name)[:] = run[f"before_{name}"][k]
        mujoco.mj_forward(model, scratch)
        ncon_before[k] = scratch.ncon
        mujoco.mj_step(model, data)
        ncon_after[k] = data.ncon
        for name in AFTER_FIELDS:
            gaps[name][k] = np.max(np.abs(getattr(data, name) - run[f"after_{name}"][k]))
    without_contact = (run["before_ncon"] == 0) & (run["after_ncon"] == 0) & (ncon_before == 0) & (ncon_after == 0)
    qvel = gaps["qvel"]
    return {
        "steps": steps,
        "first_step_above": {f"{t:g}": {name: first_above(gaps[name], t) for name in AFTER_FIELDS} for t in THRESHOLDS},
        "max": {name: float(gaps[name].max()) for name in AFTER_FIELDS},
        "median_qvel": float(np.median(qvel)),
        "steps_without_contact": int(without_contact.sum()),
        "max_qvel_without_contact": float(qvel[without_contact].max()) if without_contact.any() else None,
        "max_qvel_with_contact": float(qvel[~without_contact].max()) if (~without_contact).any() else None,
        "ncon_before_mismatches": int((ncon_before != run["before_ncon"]).sum()),
        "ncon_after_mismatches": int((ncon_after != run["after_ncon"]).sum()),
        "per_step": {
            **{name: gaps[name].tolist() for name in AFTER_FIELDS},
            "ncon_before": ncon_before.tolist(),
            "ncon_after": ncon_after.tolist(),
            "recorded_ncon_before": run["before_ncon"].tolist(),
            "recorded_ncon_after": run["after_ncon"].tolist(),
        },
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--xml", required=True, help="the model file the original env compiles")
    parser.add_argument("--recording", default=str(ROOT / "runs" / "fidelity" / "ant_release" / "ant_steps.npz"))
    parser.add_argument("--halve-margins", action="store_true")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE")
    parser.add_argument("--disable", action="append", default=[], metavar="NAME")
    parser.add_argument("--enable", action="append", default=[], metavar="NAME")
    parser.add_argument("--recorded-arrays", default="", metavar="FIELD,...")
    parser.add_argument("--label", default="", help="a name for this configuration in the output")
    parser.add_argument("--json", help="write every run's result (with the per-step differences) here")
    args = parser.parse_args(argv)

    with np.load(args.recording) as archive:
        recording = {name: archive[name] for name in archive.files}
    recorded_arrays = {name[6:]: value for name, value in recording.items() if name.startswith("model/")}
    model = mujoco.MjModel.from_xml_path(args.xml)
    model_differences = array_differences(model, recorded_arrays)
    changes = configure(model, args, recorded_arrays)
    results = []
    for policy in ("scripted", "random"):
        run = {name.split("/", 1)[1]: value for name, value in recording.items() if name.startswith(f"{policy}/")}
        result = {
            "mujoco": mujoco.__version__,
            "label": args.label,
            "margins": "halved" if args.halve_margins else "file",
            "changes": changes,
            "policy": policy,
            **replay(model, run),
        }
        results.append(result)
        print(json.dumps({key: value for key, value in result.items() if key != "per_step"}), flush=True)
    if args.json:
        out = {"compiled_array_differences": model_differences, "runs": results}
        Path(args.json).write_text(json.dumps(out))


if __name__ == "__main__":
    main()
