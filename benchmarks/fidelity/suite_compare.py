"""Compare the Safety-Gymnasium suite's two JSONs; write docs/results/fidelity/{safety_gymnasium.md,
suite_comparison.json}.

    python benchmarks/fidelity/suite_compare.py docs/results/fidelity

Reads ``suite_original.json`` (suite_original.py) and ``suite_saferl.json`` (suite_saferl.py) from that folder; runs
in the main venv (``compare.py`` and ``saferl.analysis.equivalence``). The verdict is ``compare.py``'s equivalence
rule: per policy (random and scripted) and per recorded per-episode quantity (return, cost, length, and CarButton1's
goal presses, wrong-button, hazard and gremlin steps, PointPush1's goals), *equivalent* / *different* /
*inconclusive* from the 90% BCa interval of saferl's mean over the original's against the band
``[1 / 1.1, 1.1]`` (:func:`saferl.analysis.equivalence.equivalence_verdict`, two one-sided tests, Schuirmann 1987);
a task is *faithful* only when every quantity is equivalent, *differs* when any is different. The MuJoCo 4.0
diagnosis rows of the velocity tasks are judged the same way and do not count towards the task's verdict.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import compare  # noqa: E402
import suite_tasks as st  # noqa: E402

CHECK_STEPS = (1, 10, 25, 50, 100)
THRESHOLDS = (1e-3, 1e-1)

#: what we found, per task (measured here: the tables of this file; read in the task files' docstrings)
FINDINGS = {
    "AntVelocity": (
        "saferl integrates RK4 as the original's MuJoCo 2.3.3 (docs/decisions/066): MuJoCo 4.0's own mj_step "
        "turns a free joint's orientation with the Munthe-Kaas correction, which 2.3.3 lacks, and that alone made "
        "MuJoCo 4.0's trajectories part from the original's within 6-10 steps (ant_mujoco_releases.md). Step by step "
        "saferl now follows the original for 29 / 29 steps, further than the original against itself (21, 30), where "
        "MuJoCo 4.0 itself (the rows above, its own rule) parts at 6 / 10. The Ant plays 300 episodes a side: at 30 "
        "the original's random episodes were atypical (return -38 against -66 over 300) and the rule called saferl's "
        "random return different (ratio 2.67). The scripted Ant flips over in some episodes on both sides, hence the "
        "spread of its return; its cost is a few steps an episode. With MJX physics (`mjx_tasks` in "
        "suite_saferl.json, 30 episodes) saferl parted at step 3 / 5, through MJX's contact frame for capsules "
        "steeper than 60 degrees (saferl/envs/velocity/ant_velocity.py docstring), and its scripted return was 388."
    ),
    "HalfCheetahVelocity": (
        "The statistics agree to 1% (the scripted cost is 76.57 on both sides). The HalfCheetah's geoms have no "
        "margin, so the pair-margin rule does not touch it: MuJoCo 4.0 reproduces MuJoCo 2.3.3 exactly for about 50"
        " steps. saferl parts earlier (step 16 above 1e-3; step 8 with MJX physics): its state is rounded to "
        "float32 between env steps, and that 6e-8 grows as fast as any small difference does in this gait (the "
        "original against itself parts at step 8 when its start velocities move by 1e-6), which hits the floor with"
        " both feet four times a second."
    ),
    "HopperVelocity": (
        "The scripted return is 4% lower and the cost 13% lower, both inconclusive (MJX physics: return 404.8; MJX "
        "with the file's margins, before saferl halved them: 384.0). Step by step saferl follows the original to "
        "1e-6 until the hop ends (both terminate at step 30; the errors after it compare two finished episodes); "
        "with the file's margins MJX parted at step 10, as MuJoCo 4.0 with them does, while MuJoCo 4.0 with halved "
        "margins reproduces the original to the last digit over all 100 steps. So the Hopper's whole trajectory "
        "difference was the pair-margin rule: at step 10 MuJoCo 4.0 with the file's margins already has a "
        "foot-floor contact at 1.26 mm, inside the summed margin of 2 mm and outside 2.3.3's 1 mm. The random "
        "policy's cost comes from a few episodes of falls forwards faster than 0.74 m/s."
    ),
    "HumanoidVelocity": (
        "Return and episode length agree within 3% (inconclusive at 30 episodes). The scripted cost, a step or two "
        "an episode while falling, is half the original's (0.97 against 2.07), and the rule calls it different. "
        "saferl integrates RK4 as the original's MuJoCo 2.3.3 (docs/decisions/066; one step from the original's "
        "state now 6.4e-7 in qvel, was 2.7e-5 with MuJoCo 4.0's rule). "
        "Step by step saferl's qpos and qvel follow the original until the fall ends the episode (both at step 25; "
        "above 1e-3 at step 26); with the file's margins MJX parted at step 11, as MuJoCo 4.0 with them does (the "
        "Humanoid's geoms have margin 0.001: 2 mm instead of 1 mm). saferl steps humanoid.xml's own PGS solver (the"
        " MJX rows used Newton: MJX has no PGS). The observation parts earlier (step 11 above 1e-3) through "
        "`cfrc_ext`, whose entries are sensitive and reach the hundreds on impact."
    ),
    "PointPush1": (
        "At 300 episodes a side the scripted pusher's box travels 17% less on saferl (3.20 against 3.84 m an "
        "episode: different) while its return (3.07 against 3.05) is equivalent and its cost and goals undecided; "
        "the planar port (below) differs the same way (3.07 m). The engine is not the cause: the original itself "
        "on MuJoCo 4.0.1 moves the box 3.74 m (the rows above; 3.75 with its state rounded to float32 between env "
        "steps, as saferl's host stepper rounds it), and saferl against it is 0.86 [0.78, 0.93]. Nor are the "
        "layouts: 300 resets a side agree in distribution (two-sample Kolmogorov-Smirnov p 0.15-0.91 for the "
        "agent-box, box-goal and agent-goal distances), and so do the box-goal distances after a goal is reached "
        "(p 0.32). While pushed the original's box moves faster (median 8.0 against 6.6 mm an env step); no step "
        "of saferl's model from the original's recorded states misses by more than mujoco_models.md lists. At "
        "1,000 episodes from the original's resets the gap is gone (push_box_precision.md): saferl's env moves the "
        "box as the original's model on MuJoCo 4.0.1 does, 0.985 [0.958, 1.011] from the same layouts, equivalent; "
        "float32 rounding shortens the path 2-3%. The 300-episode samples above fell apart by chance: the "
        "original's seeds 0..299 are long-path layouts (3.70 m against 3.51 over 1,000) and saferl's drew short "
        "(3.20 against 3.39). Where policies learned on the planar port drive they return about half as much on "
        "MuJoCo (cross_physics.md)."
    ),
    "CarButton1": (
        "On MuJoCo, the default, no quantity is called different at 30 episodes: the random policy touches wrong "
        "buttons on 7.7 steps an episode against the original's 12.1 (ratio 0.63, inconclusive), where the planar "
        "port's 38.8 is called different (below). The scripted cost is 26% higher (410 against 324) and the scripted "
        "wrong-button steps 47% (319 against 217), both inconclusive, as on the planar port (418, 336): MuJoCo's car "
        "follows the original's step by step (mujoco_models.md), so that gap is not the car's contact; at a spread "
        "of 230-280 steps an episode, 1,847 episodes a side would decide it."
    ),
    "RacecarCircle1": (
        "On MuJoCo, the default, the scripted return and cost agree within 2% (equivalent), as they do on the planar "
        "port (below), whose difference these two policies do not reach: in reverse at full lock the planar car "
        "turns at 1.56 rad/s and MuJoCo's (as the original's) at 0.02-0.18 (tests/analysis/test_equivalence_power.py), "
        "and a CPO policy trained on the planar port returns 12 times as much there as on the original "
        "(racecar_transfer.md). The random policy's cost is heavy-tailed (a random car seldom drives far enough to "
        "cross |x| = 1.125), so its mean differs by a factor between the two samples."
    ),
}

#: what the runs on a navigation task's other physics show (the rows marked "not the default")
ALTERNATE_FINDINGS = {
    "CarButton1": (
        "The planar port differs through the random policy's wrong-button steps (3.2 times the original's, "
        "the interval "
        "wholly above the band). The scripted return agrees within 3%; the scripted cost is 29% higher and the "
        "wrong-button steps 55% higher, both inconclusive at 30 episodes (their intervals' lower ends, 0.98 and "
        "0.99, are just short of the band's top). saferl's button contact has Coulomb friction 1, MuJoCo's default,"
        " which neither car.xml nor buttons.py changes (saferl/envs/safety_nav/car.py docstring); before it had "
        "none, and the car slid off a wrong button at once: return 25.3 (+36%), cost 215.8 (-33%), wrong-button "
        "steps 93 against the original's 217, goal presses 13.5 against 9.7. With friction the car is held and "
        "rolls round a button as the original does: presses 9.5 against 9.7, hazards 25 against 30, gremlins 67 "
        "against 92, but wrong-button steps 336 against 217: the footprint disc holds the car within a wider cone "
        "than the original's flat bumper with its corners, which turn the car away from an off-centre hit (car.py: "
        "at 0.2 m off the line of travel the original slips off after 24 steps, saferl's car holds for 87). The "
        "random policy touches wrong buttons on 39 steps an episode against the original's 12 (frictionless: 23). "
        "The fitted car also turns faster (car.py residuals: 1.43 against 1.33 rad/s spinning, the one-wheel turn "
        "50% faster). Other coefficients, measured (scripted return / cost): 0: 25.3 / 216; 0.25: 20.9 / 338; 0.5: "
        "20.3 / 362; 1: 18.1 / 418; 2: 15.2 / 504; the default is MuJoCo's, not a fit."
    ),
    "RacecarCircle1": (
        "The planar port's scripted return and cost agree within 3% (equivalent). A learned policy tells the two "
        "apart where "
        "these two do not: a CPO policy trained on the port returns 12 times as much there as on the original "
        "(racecar_transfer.md; the equivalence test on its per-seed means calls return and cost different). The "
        "controller closes the loop on the position, so the fitted bicycle model's 2-8% error of the turning radius"
        " near the circle's (saferl/envs/safety_nav/racecar_circle.py docstring) does not show. The random policy's"
        " cost is heavy-tailed (a random car seldom drives far enough to cross |x| = 1.125), so its mean differs by"
        " a factor between the two samples."
    ),
    "PointPush1": (
        "The planar port's scripted return and cost agree within 4% and its goals are equivalent (1.41 an episode on "
        "both) at 300 episodes, but its box travels 20% less (3.07 against 3.84 m: different), as on MuJoCo "
        "(above), so the 2-D quasi-static box contact "
        "(saferl/envs/safety_nav/point_push.py docstring: the box turns less under an off-centre push and is not "
        "tipped round) is not needed to explain it. The random policy's cost is heavy-tailed: most episodes cost 0 "
        "and one long stay in a hazard costs hundreds, so its mean moves by a factor between two samples."
    ),
}


PACKAGE = HERE.parents[1] / "saferl"


def _defines(path: Path, name: str) -> bool:
    text = path.read_text()
    return f"def {name}(" in text or f"class {name}(" in text or f"class {name}:" in text


def current_name(dotted: str) -> str:
    """A ``saferl.x.y.attr`` name recorded by an earlier run, under the module that defines it today (the package's
    modules move; suite_saferl.json keeps the names of its run). Unchanged when it still resolves or is not found."""
    parts = dotted.split(".")
    for i in range(len(parts), 1, -1):  # still a module (with the attribute after it defined there)?
        module = PACKAGE.joinpath(*parts[1:i]).with_suffix(".py")
        if module.is_file() and (i == len(parts) or _defines(module, parts[i])):
            return dotted
    for i in range(len(parts) - 1, 1, -1):  # else the module that defines the last name it can find
        found = sorted(f for f in PACKAGE.rglob("*.py") if _defines(f, parts[i]))
        if len(found) == 1:
            module = ".".join(found[0].relative_to(PACKAGE.parent).with_suffix("").parts)
            return ".".join([module, *parts[i:]])
    return dotted


def current_names(text: str) -> str:
    """``text`` with every ``saferl.`` dotted name as :func:`current_name` gives it."""
    return re.sub(r"saferl(?:\.\w+)+", lambda m: current_name(m.group(0)), text)


def first_above(err: np.ndarray, threshold: float):
    above = np.flatnonzero(err > threshold)
    return int(above[0]) + 1 if above.size else None


def state_error(a: dict, b: dict) -> np.ndarray:
    """Per step, the largest |difference| of qpos and qvel."""
    dq = np.abs(np.asarray(a["qpos"]) - np.asarray(b["qpos"])).max(axis=1)
    dv = np.abs(np.asarray(a["qvel"]) - np.asarray(b["qvel"])).max(axis=1)
    return np.maximum(dq, dv)


def trajectory_errors(ours: dict, orig: dict) -> dict:
    obs = np.abs(np.asarray(ours["obs"]) - np.asarray(orig["obs"])).max(axis=1)
    reward = np.abs(np.asarray(ours["rewards"]) - np.asarray(orig["rewards"]))
    agree = first_above(obs, THRESHOLDS[0]) or obs.size + 1
    term_o, term_s = np.asarray(orig["terminated"]), np.asarray(ours["terminated"])
    return {
        "steps": int(obs.size),
        "obs_error": obs.tolist(),
        "state_error": state_error(ours, orig).tolist(),
        "start_obs_error": float(np.abs(np.asarray(ours["start_obs"]) - np.asarray(orig["start"]["obs"])).max()),
        "first_obs_above": {str(t): first_above(obs, t) for t in THRESHOLDS},
        "max_reward_error_while_agreeing": float(reward[: agree - 1].max()) if agree > 1 else None,
        "max_reward_error": float(reward.max()),
        "cost_steps_differing": int(np.sum(np.asarray(ours["costs"]) != np.asarray(orig["costs"]))),
        "cost_steps_original": int(np.sum(orig["costs"])),
        "terminated_original": int(np.argmax(term_o)) + 1 if term_o.any() else None,
        "terminated_saferl": int(np.argmax(term_s)) + 1 if term_s.any() else None,
    }


def trajectory_section(ours: dict, orig: dict) -> tuple[list[str], dict]:
    lines = [
        "## Velocity tasks: trajectories from identical states",
        "",
        f"The original is reset with seed {st.TRAJECTORY_RESET_SEED} and `set_state` puts back the state it "
        "drew (fresh kinematics, zero solver warm start); saferl's state is built from the same qpos and qvel "
        "(`LocomotionEnv.state_from`, in float32). Both then take the same "
        f"{st.TRAJECTORY_STEPS} actions (`suite_tasks.trajectory_actions`: the task's gait without its feedback "
        f"plus {st.TRAJECTORY_NOISE} U(-1, 1) from a seeded generator; the Hopper and the Humanoid fall). "
        "Obs error: the largest |difference| over the observation's entries at that step (the Humanoid's "
        "376 include `cinert`, `cvel`, `qfrc_actuator`, `cfrc_ext`, whose entries reach the hundreds). "
        "Reward error while agreeing: the largest |reward difference| over the steps before the obs error "
        "first exceeds 1e-3.",
        "",
        "| task | start obs error | obs error at steps "
        + " / ".join(map(str, CHECK_STEPS))
        + " | first step > 1e-3 | first step > 1e-1 | reward error while agreeing (overall) | cost steps "
        "differing (original's cost steps) | terminated at step (original / saferl) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    table = {}
    for label in st.VELOCITY_TASKS:
        o_task, s_task = orig["tasks"].get(label, {}), ours["tasks"].get(label, {})
        if "trajectory" not in o_task or "trajectory" not in s_task:
            continue
        e = trajectory_errors(s_task["trajectory"], o_task["trajectory"])
        table[label] = e
        at = " / ".join(f"{e['obs_error'][t - 1]:.2g}" for t in CHECK_STEPS if t <= e["steps"])
        agreeing = e["max_reward_error_while_agreeing"]
        lines.append(
            f"| {label} | {e['start_obs_error']:.2g} | {at} | {e['first_obs_above']['0.001'] or 'none'} | "
            f"{e['first_obs_above']['0.1'] or 'none'} | {'-' if agreeing is None else f'{agreeing:.2g}'} "
            f"({e['max_reward_error']:.2g}) | {e['cost_steps_differing']} ({e['cost_steps_original']}) | "
            f"{e['terminated_original'] or '-'} / {e['terminated_saferl'] or '-'} |"
        )
    lines += [
        "",
        "Where the divergence comes from: the first step at which the largest |qpos or qvel difference| "
        "from the original exceeds 1e-3 (and 1e-1), for saferl (its default physics, MuJoCo 4.0 on the host, "
        "float64 with the state rounded to float32 between env steps); for MuJoCo 4.0 itself (the main venv's "
        "`mujoco`, float64, `mj_step`, the "
        "model's own solver; the Humanoid's Newton as saferl's); for MuJoCo 4.0 with every geom margin halved; "
        f"and for the original against itself with every start velocity moved by {st.SELF_PERTURBATION:g} "
        "(how fast a tiny difference grows on its own).",
        "",
        "| task | saferl | MuJoCo 4.0 | MuJoCo 4.0, margins halved | original, start moved by "
        f"{st.SELF_PERTURBATION:g} |",
        "|---|---|---|---|---|",
    ]
    for label in table:
        o_task, s_task = orig["tasks"][label], ours["tasks"][label]
        runs = {"saferl": s_task["trajectory"]}
        for tag in ("mujoco", "mujoco_half_margin"):
            if "trajectory" in s_task.get("native", {}).get(tag, {}):
                runs[tag] = s_task["native"][tag]["trajectory"]
        if "trajectory_perturbed" in o_task:
            runs["original_perturbed"] = o_task["trajectory_perturbed"]
        cells, firsts = [], {}
        for tag in ("saferl", "mujoco", "mujoco_half_margin", "original_perturbed"):
            if tag not in runs:
                cells.append("-")
                continue
            err = state_error(runs[tag], o_task["trajectory"])
            firsts[tag] = [first_above(err, t) for t in THRESHOLDS]
            cells.append(" / ".join(str(f or "none") for f in firsts[tag]))
        table[label]["first_state_above"] = firsts
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines + [""], table


def native_rows(task: dict, orig_task: dict) -> list[str]:
    """The scripted controller on MuJoCo 4.0 (diagnosis rows, not saferl's environment; not in the verdict)."""
    rows = []
    for tag, what in (("mujoco", "MuJoCo 4.0"), ("mujoco_half_margin", "MuJoCo 4.0, margins halved")):
        run = task.get("native", {}).get(tag)
        if run is None:
            continue
        mine, theirs = run["scripted"], orig_task["policies"]["scripted"]
        for key in ("return", "cost", "length"):
            v = compare.equivalence(compare.episode_values(mine, key), compare.episode_values(theirs, key))
            row = f"scripted on {what}, float64 (not saferl; n={mine[key]['n']})"
            rows.append(compare.check_line(row, f"episode {key}", mine[key], theirs[key], v))
    return rows


def engine_rows(ours: dict, orig_task: dict, engine_task: dict | None, engine: str) -> list[str]:
    """The original itself on saferl's MuJoCo release (``make engine``), against the original on its own 2.3.3, and
    saferl against it: where the two differ as saferl does, the difference is the engine's (diagnosis rows, not in
    the verdict)."""
    if engine_task is None:
        return []
    rows = []
    for policy, run in engine_task["policies"].items():
        theirs, mine = orig_task["policies"][policy], ours["policies"][policy]
        pairs = (
            (f"{policy}, the original on MuJoCo {engine} (not saferl; n={run['return']['n']})", run, theirs),
            (f"{policy}, saferl against the original on MuJoCo {engine} (in the original's column)", mine, run),
        )
        for key, name in compare.quantities(run):
            for row, a, b in pairs:
                v = compare.equivalence(compare.episode_values(a, key), compare.episode_values(b, key))
                rows.append(
                    compare.check_line(
                        row, name, compare.summary_of_values(a, key), compare.summary_of_values(b, key), v
                    )
                )
    return rows


def task_section(
    label: str, env_id: str, ours: dict, orig: dict, engine_task: dict | None = None, engine: str = ""
) -> tuple[list[str], dict]:
    lines, verdict = compare.task_section(label, env_id, ours, orig)
    if ours.get("physics"):
        lines[0] += f", physics `{ours['physics']}` (the default)"
    verdict_at = next(i for i, line in enumerate(lines) if line.startswith("**Verdict"))
    lines[verdict_at - 1 : verdict_at - 1] = native_rows(ours, orig) + engine_rows(ours, orig, engine_task, engine)
    lines[-2] = FINDINGS.get(label, "")
    return lines, verdict


def alternate_section(label: str, env_id: str, ours: dict, orig: dict) -> tuple[list[str], dict]:
    """The same episodes on a navigation task's other physics (not its default), judged the same way."""
    lines, verdict = compare.task_section(label, env_id, ours, orig)
    lines[0] = lines[0].replace("### ", "#### ", 1) + f", physics `{ours['physics']}` (not the default)"
    lines[-2] = ALTERNATE_FINDINGS.get(label, "")
    return lines, verdict


def assets_section(orig: dict, ours: dict) -> list[str]:
    a = orig["assets"]
    lines = [
        "## Model files and MuJoCo versions",
        "",
        f"saferl loads the robots from the main venv's Gymnasium ({ours['versions']['gymnasium']}, "
        f"`{a['saferl_dir']}`); the originals load them from Gymnasium {orig['versions']['gymnasium']} "
        f"(`{a['original_dir']}`). Where the files differ, both are compiled by MuJoCo "
        f"{orig['versions']['mujoco']} and compared: the largest differences of masses, inertias, geom sizes and "
        "friction, joint ranges, gears, damping and armature; of the world kinematics (body and geom frames, "
        "joint anchors and axes) at qpos0 and three random poses; and of qpos and qvel after 100 `mj_step`s "
        "under the same random controls.",
        "",
        "| file | identical | compiled models: largest difference |",
        "|---|---|---|",
    ]
    for name, entry in a["files"].items():
        compiled = entry.get("compiled")
        text = "-" if compiled is None else f"{max(v for v in compiled.values() if isinstance(v, float)):.3g}"
        lines.append(f"| {name} | {'yes' if entry['identical'] else 'no'} | {text} |")
    same = [
        n
        for n, e in a["files"].items()
        if "compiled" in e and max(v for v in e["compiled"].values() if isinstance(v, float)) == 0.0
    ]
    if same:
        lines += [
            "",
            f"{', '.join(same)}: the files differ in form only; compiled, every number above is the same to "
            "the last bit. Gymnasium 1.x rewrote hopper.xml in local coordinates (0.28.1's uses "
            '`coordinate="global"`, which MuJoCo 2.3.3 still reads and 4.0 rejects: "global coordinates no '
            'longer supported ... load and save them in MuJoCo 2.3.3 or older").',
        ]
    p, q = orig["margin_probe"], ours["margin_probe"]
    lines += [
        "",
        f"The physics engines differ: the originals run MuJoCo {orig['versions']['mujoco']} (float64); saferl's "
        f"velocity tasks run MuJoCo {ours['versions']['mujoco']} on the host by default (float64, the state "
        f"rounded to float32 between env steps; saferl/envs/mujoco_host.py), or MJX "
        f"{ours['versions']['mujoco-mjx']} (float32) with `env_params.physics=mjx`, whose earlier results are "
        "quoted in the findings below. One difference between those versions matters here, the contact "
        "margin of a geom pair (`suite_tasks.margin_probe`: a sphere 0.015 above a plane, both with margin "
        f"0.01): MuJoCo {p['mujoco']} makes {len(p['contacts'])} contact"
        f"{'' if len(p['contacts']) == 1 else 's'} (it takes the larger margin, 0.01), MuJoCo {q['mujoco']} "
        f"makes {len(q['contacts'])} with margin {q['contacts'][0]['includemargin'] if q['contacts'] else '-'} "
        f"(the sum), and MJX's candidate contact has margin {q['mjx']['includemargin'][0]:.3g} "
        "(`mujoco/mjx/_src/collision_driver.py`: `geom_margin[geom1] + geom_margin[geom2]`). The Ant's geoms "
        "have margin 0.01, the Hopper's and the Humanoid's 0.001, the HalfCheetah's 0, the same on every "
        "geom of a model, so saferl halves each (`saferl.envs.velocity.gymnasium_models.match_margin_rule`) and "
        "every pair gets 2.3.3's margin; with the file's margins the Ant's feet felt the floor from 2 cm instead "
        "of 1 cm, the Hopper's and the Humanoid's from 2 mm instead of 1 mm. The MuJoCo 4.0 rows below read the file's "
        "margins (and halve them where they say so).",
        "",
    ]
    return lines


def summary_of(ours: dict, orig: dict, verdict: dict) -> dict:
    o, b = ours["policies"]["scripted"], orig["policies"]["scripted"]
    return {
        "physics": ours.get("physics"),
        **{k: verdict[k] for k in ("verdict", "counts", "different", "episodes_needed")},
        "return_saferl": o["return"]["mean"],
        "return_original": b["return"]["mean"],
        "cost_saferl": o["cost"]["mean"],
        "cost_original": b["cost"]["mean"],
    }


def document(ours: dict, orig: dict, engine: dict | None = None) -> tuple[str, dict]:
    v, w = orig["versions"], ours["versions"]
    lines = [
        "# Fidelity: saferl's Safety-Gymnasium ports against Safety-Gymnasium 1.0.0",
        "",
        f"Generated by `make fidelity` (benchmarks/fidelity/suite_*.py) on {orig.get('date', '?')} (original side, "
        f"{orig.get('wall_seconds', 0):.0f} s) and {ours.get('date', '?')} (saferl side, "
        f"{ours.get('wall_seconds', 0):.0f} s)"
        + "".join(
            f"; {', '.join(r['tasks'])} rerun on saferl's side on {r['date']} after a change "
            f"({current_names(r['why'])})"
            for r in ours.get("reruns", [])
        )
        + "".join(
            f"; {', '.join(r['tasks'])} rerun on the original's side on {r['date']} ({r['why']})"
            for r in orig.get("reruns", [])
        )
        + f". The originals: safety-gymnasium {v['safety-gymnasium']} (gymnasium "
        f"{v['gymnasium']}, mujoco {v['mujoco']}, numpy {v['numpy']}) in benchmarks/fidelity/.venv, Python "
        f"{orig['python']}. saferl: JAX {w['jax']} ({ours['backend']}), MJX {w['mujoco-mjx']}, mujoco {w['mujoco']}, "
        f"gymnasium {w['gymnasium']} (the robot files), Python {ours['python']}. PointGoal1, the eighth task, is "
        "in [README.md](README.md).",
        "",
        "Each task runs a uniform random policy and a scripted controller (`benchmarks/fidelity/suite_tasks.py`), "
        "the same code on both sides. The original's controller reads MuJoCo (`env.unwrapped.data.qpos/qvel`; "
        "`env.unwrapped.task`: agent position and heading from its rotation matrix, box, goal, goal button), "
        "saferl's its state pytree. Velocity tasks: a periodic gait in the step index plus state feedback "
        "(HalfCheetah a 4-step gait with the front leg pushed against the body pitch; Hopper a 10-step hop "
        "with feedback on the torso angle, its rate and the forward speed against 0.7 m/s; Ant an 8-step gait "
        "with three joints fed back on the torso height; Humanoid a PD hold of its pose with the hips swung "
        "and the abdomen leant). PointPush1: pure pursuit of the box-goal line from behind the box, going "
        "round it first. CarButton1: differential drive to the goal button. RacecarCircle1: full throttle "
        "counter-clockwise along the circle of radius 1.5 (it crosses the walls at |x| = 1.125). Actions are "
        "in [-1, 1] on both sides; on the original they are mapped affinely onto the env's action space "
        "(C-TRPO's `SafeRescaleAction`: the Humanoid's +-0.4, the Racecar's [-20, 20] x [-0.785, 0.785]). "
        "Seeding: the original is reset with seed = episode index, its random policy draws from "
        "`np.random.default_rng(1)`; saferl's episodes are one vmapped batch per policy. Spread: the standard "
        "deviation of the episodes and a percentile-bootstrap 95% interval of the mean (10,000 resamples).",
        "",
        "**Verdict rule:** `compare.py`'s equivalence test, described in [README.md](README.md): per policy and "
        f"per-episode quantity, the {compare.LEVEL:.0%} BCa interval of saferl's mean over the original's is "
        f"*equivalent* inside [1/{1 + compare.MARGIN:g}, {1 + compare.MARGIN:g}], *different* wholly outside, "
        f"*inconclusive* otherwise (±{compare.MARGIN:g} pooled standard deviations on the difference where the "
        "original's mean is near zero); a task is *faithful* when every quantity of both policies is equivalent, "
        "*differs* when any is different. The last column gives the episodes a side at which equivalent would be "
        "reached with probability 0.8 if the means were equal. For the velocity tasks "
        "the tables add the scripted controller on MuJoCo 4.0 itself (the main venv's `mujoco`, float64; with "
        "the model's margins and with them halved): a diagnosis of where a difference comes from, not saferl, "
        "judged the same way and left out of the verdict; for PointPush1 they add the original itself on MuJoCo "
        "4.0.1 (`make -C benchmarks/fidelity engine`), and saferl against that. The navigation tasks run on "
        "their default physics "
        "(`mujoco` for PointPush1, CarButton1 and RacecarCircle1, docs/decisions/065) and, in rows "
        "marked *not the default*, on their other one.",
        "",
    ]
    summary_rows = [
        "| task | verdict (equivalent quantities of all) | scripted return (saferl / original) | scripted cost "
        "(saferl / original) | episodes a side for the inconclusive ones |",
        "|---|---|---|---|---|",
    ]
    sections, summary = [], {}
    for label, env_id, *_ in st.TASKS:
        if label not in orig["tasks"] or label not in ours["tasks"]:
            continue
        body, verdict = task_section(
            label,
            env_id,
            ours["tasks"][label],
            orig["tasks"][label],
            (engine or {}).get("tasks", {}).get(label),
            (engine or {}).get("versions", {}).get("mujoco", ""),
        )
        sections += body
        summary[label] = {
            **summary_of(ours["tasks"][label], orig["tasks"][label], verdict),
            "checks": verdict["checks"],
        }
        s = summary[label]
        physics = ours["tasks"][label].get("physics")
        summary_rows.append(
            f"| {label}{f' ({physics})' if physics else ''} | {compare.verdict_cell(s)} | "
            f"{s['return_saferl']:.2f} / {s['return_original']:.2f} | "
            f"{s['cost_saferl']:.2f} / {s['cost_original']:.2f} | {compare.needed_summary(s)} |"
        )
        other = ours.get("alternate_physics", {}).get(label)
        if other is not None:
            body, verdict = alternate_section(label, env_id, other, orig["tasks"][label])
            sections += body
            summary[label]["alternate"] = {
                **summary_of(other, orig["tasks"][label], verdict),
                "checks": verdict["checks"],
            }
            a = summary[label]["alternate"]
            summary_rows.append(
                f"| {label} ({other['physics']}, not the default) | {compare.verdict_cell(a)} | "
                f"{a['return_saferl']:.2f} / {a['return_original']:.2f} | "
                f"{a['cost_saferl']:.2f} / {a['cost_original']:.2f} | {compare.needed_summary(a)} |"
            )
    trajectory_lines, trajectories = trajectory_section(ours, orig)
    lines += ["## Summary", ""] + summary_rows + [""] + assets_section(orig, ours)
    lines += ["## Per task", ""] + sections + trajectory_lines
    lines += [
        "## Files",
        "",
        "* `suite_original.json`, `suite_saferl.json`: every episode's return, cost and length, "
        "the trajectories (per step obs, reward, cost, termination, qpos, qvel), the model-file check and the "
        "margin probe of each side;",
        "* `suite_comparison.json`: the verdicts and the trajectory errors above;",
        "* `suite_original_mujoco4.json`: the original's scripted PointPush1 episodes on MuJoCo 4.0.1 "
        "(`make -C benchmarks/fidelity engine`), the rows marked *the original on MuJoCo 4.0.1*.",
        "",
    ]
    compile_s = {k: round(t["compile_seconds"]) for k, t in ours["tasks"].items()}
    return "\n".join(lines), {
        "margin": compare.MARGIN,
        "level": compare.LEVEL,
        "summary": summary,
        "trajectories": trajectories,
        "compile_seconds": compile_s,
    }


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    folder = Path(argv[0] if argv else "docs/results/fidelity")
    orig = json.loads((folder / "suite_original.json").read_text())
    ours = json.loads((folder / "suite_saferl.json").read_text())
    engine_file = folder / "suite_original_mujoco4.json"
    engine = json.loads(engine_file.read_text()) if engine_file.is_file() else None
    text, comparison = document(ours, orig, engine)
    (folder / "safety_gymnasium.md").write_text(text)
    (folder / "suite_comparison.json").write_text(json.dumps(comparison, indent=1))
    for label, s in comparison["summary"].items():
        print(f"{label:19s} {s['verdict']:12s} ({compare.verdict_reason(s)})")
    print(f"wrote {folder / 'safety_gymnasium.md'}, {folder / 'suite_comparison.json'}")


if __name__ == "__main__":
    main()
