"""The MuJoCo model check's page (docs/results/fidelity/mujoco_models.md) from ``model_check_saferl.py``'s results."""

from __future__ import annotations

import time

import model_check as mc

#: why a parameter differs between the two compiled models, by a fragment of its key
EXPLANATIONS = {
    "actuator_trntype": "`jointinparent` there, `joint` here: for hinge and slide joints the two transmissions "
    "are the same (they differ only for ball and free joints)",
    "actuator x actuator_biasprm": "unused: the actuator's bias type is `none` on both sides",
    "mocap eq_data": "the weld's `relpose`: `world.py` declares each gremlin's mocap body at the origin (its geom "
    "at the gremlin's place), so the weld keeps the box at its place relative to the mocap; saferl's mocap sits at "
    "the box's pose with the identity `relpose`. The same constraint in the world frame; the replay moves "
    "saferl's mocap to the original's mocap pose composed with that `relpose`",
    "equality #0 eq_data": "MuJoCo 4.0 stores 12 numbers per equality constraint, 2.3.3 11; the 11 are equal",
    "body agent body_i": "the Racecar's `agent` body is massless (mass 0 on both sides): its inertial frame is unused",
    "pos_change body_": "the same inertia tensor (equal to the last bit once rotated): 2.3.3 orders the principal "
    "axes differently and turns them with `body_iquat`",
    "geom car_body[0]": "the chassis' collision geometry: there the mesh `chassis_differential.STL` (MuJoCo collides "
    "its convex hull), here a box of about the same extent (half sizes 0.2025 x 0.1 x 0.03 against the hull's "
    "0.2096 x 0.1013 x 0.03), as no mesh file is copied; the recorded episodes never touch it (their contacts: "
    "wheels and differential sides with the floor, front wheels with the bumper `pos_change`)",
}
STATE = ("position", "yaw", "velocity", "angular velocity", "robot joints", "objects")


def _explain(key: str) -> str:
    return next((text for fragment, text in EXPLANATIONS.items() if fragment in key), "**not explained**")


def _worst(gaps: dict, state_only: bool) -> tuple[str, float]:
    chosen = {k: v for k, v in gaps.items() if k.startswith(STATE) == state_only}
    name = max(chosen, key=chosen.get)
    return name, chosen[name]


def _cell(gaps: dict, state_only: bool) -> str:
    name, value = _worst(gaps, state_only)
    return f"{value:.1e} ({name})"


def _numbers_section(label: str, numbers: dict) -> list[str]:
    only_saferl, only_original = len(numbers["only saferl"]), len(numbers["only original"])
    lines = [
        f"Parameters compared: {numbers['compared']}; on one side only: {only_saferl} (saferl), {only_original} "
        f"(original); differing: {len(numbers['differing'])}."
    ]
    if numbers["differing"]:
        lines += ["", "| parameter | saferl | original | why |", "|---|---|---|---|"]
        for key, row in numbers["differing"].items():
            lines.append(f"| {key} | {_short(row['saferl'])} | {_short(row['original'])} | {_explain(key)} |")
    return lines


def _short(values: list) -> str:
    return ", ".join(v if isinstance(v, str) else f"{v:.6g}" for v in values)


def _task_section(label: str, result: dict) -> list[str]:
    saferl, engine = result["saferl"], result["engine"]
    kinds = result["judgement"]["kinds"]
    lines = [f"### {label}", "", *_numbers_section(label, result["numbers"]), ""]
    lines += [
        "One env step from each recorded state (largest gap over the episodes, its quantity):",
        "",
        "| action kind | saferl's model: state | saferl's model: sensors | the original's model on MuJoCo 4.0: "
        "state | the original's model on MuJoCo 4.0: sensors | judgement |",
        "|---|---|---|---|---|---|",
    ]
    for kind in dict.fromkeys(mc.SEGMENTS):
        a, b = saferl["one_step"][kind], engine["one_step"][kind]
        lines.append(f"| {kind} | {_cell(a, True)} | {_cell(a, False)} | {_cell(b, True)} | {_cell(b, False)} | "
                     f"{kinds[kind]} |")  # fmt: skip
    lines += [
        "",
        f"{mc.WINDOW} env steps from every {mc.WINDOW}th recorded state (the largest state gap):",
        "",
        "| window | action kinds | saferl's model | the original's model on MuJoCo 4.0 |",
        "|---|---|---|---|",
    ]
    for index, (ours, theirs) in enumerate(zip(saferl["windows"], engine["windows"])):
        kinds_text = ", ".join(ours["kinds"])
        lines.append(f"| {index} | {kinds_text} | {_cell(ours['gaps'], True)} | {_cell(theirs['gaps'], True)} |")
    if "perturbed" in result:
        perturbed = result["perturbed"]
        cells = ", ".join(f"{kind} {_worst(gaps, True)[1]:.1e}" for kind, gaps in perturbed["one_step"].items())
        lines += ["", f"Power: saferl's model with {perturbed['change']}: **{perturbed['judgement']['verdict']}** "
                  f"(largest one-step state gap per action kind: {cells})."]  # fmt: skip
    return lines + [""]


def markdown(results: dict) -> str:
    versions = results["versions"]
    lines = [
        "# Fidelity: saferl's MuJoCo models of the navigation robots against Safety-Gymnasium 1.0.0's",
        "",
        f"Generated by `make fidelity` (benchmarks/fidelity/model_check_*.py) on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. "  # noqa: E501
        f"The original: safety-gymnasium {versions['original']['safety_gymnasium']}, MuJoCo "
        f"{versions['original']['mujoco']} (benchmarks/fidelity/.venv). saferl: `saferl.envs.safety_nav.mjcf`, "
        f"MuJoCo {versions['saferl mujoco']} (the main venv), float64.",
        "",
        f"**What is checked.** The compiled models' parameters, by name (masses, inertias, colliding geoms, joints, "
        f"actuators, sensors, equality constraints, options); and the dynamics: the original's {mc.EPISODES} "
        f"episodes a task (`reset(seed=0..{mc.EPISODES - 1})`, {mc.STEPS} env steps under the action kinds "
        f"{', '.join(dict.fromkeys(mc.SEGMENTS))}, {mc.SEGMENT_STEPS} steps each; outside the box is "
        "[-2, 2], which the env clips to the control range) are replayed on saferl's model: from every recorded "
        "MuJoCo state (each joint's qpos, qvel and warm-start acceleration, the static objects' and the gremlins' "
        "per-substep mocap positions) under the recorded controls, one env step, and twenty env steps from every "
        "20th state; each quantity's largest gap to the original's next state. The same replay of the original's own "
        "model (its XML, written back by MuJoCo 2.3.3's `mj_saveLastXML`, with the bodies' masses and inertias "
        "2.3.3 compiled: 4.0 computes the Racecar's chassis mesh differently) on MuJoCo 4.0 separates the engine "
        "release from the model. Gaps are in the quantities' units (m, rad, m/s, rad/s, the sensors' units).",
        "",
        "**Judgement per action kind** (one env step): *exact* where saferl's model reproduces MuJoCo 2.3.3 within "
        "1e-6 in every quantity; *as the engine* where it does not, but the original's own model on MuJoCo 4.0 misses "
        "by at least half as much, so the gap is MuJoCo 2.3.3 against 4.0 and not the model; *differs* otherwise. "
        "Twenty-step windows are reported, not judged: contacts make the gaps grow by orders of magnitude in a few "
        "steps. Power: each task's model with one number changed must be judged *differs*.",
        "",
        "## Summary",
        "",
        "| task | parameters compared | differing (all explained below) | judgement | perturbed model |",
        "|---|---|---|---|---|",
    ]
    for label, result in results["tasks"].items():
        numbers = result["numbers"]
        explained = all(_explain(k) != "**not explained**" for k in numbers["differing"])
        perturbed = result.get("perturbed")
        power = f"{perturbed['change']}: {perturbed['judgement']['verdict']}" if perturbed else "-"
        lines.append(
            f"| {label} | {numbers['compared']} | {len(numbers['differing'])}{'' if explained else ' (not all explained)'} "  # noqa: E501
            f"| {result['judgement']['verdict']} | {power} |"
        )
    lines += ["", "## Per task", ""]
    for label, result in results["tasks"].items():
        lines += _task_section(label, result)
    return "\n".join(lines)
