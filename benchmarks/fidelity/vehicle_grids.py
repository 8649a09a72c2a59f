"""Before and after, on the grids that found them wrong: saferl's planar Car and Racecar (the fast option, the
default before docs/decisions/065) and MuJoCo physics (CarButton1's and RacecarCircle1's default since) against the
original Safety-Gymnasium 1.0.0 (MuJoCo 2.3.3), from the originals' records in ``benchmarks/calibration``.

* Car, the approach grid (``car/approach_grid.json``, ``car/record.py approach-grid``): the car driven from rest at
  a lone wrong button and at a gremlin box held still (``gremlin_travel`` 0 on both sides), the target 0-0.25 m to
  its left of the line of travel, the box at three yaws to it, at full speed and at about 0.36 m/s.  Each cell is
  replayed here object for object from the original's layout (buttons, goal button, gremlin boxes with their yaws,
  hazards) and start.  Per cell: the steps of 100 touching the target, and where the car ends (its distance from
  the original's end position, the difference of its yaw).
* Racecar, steady turns (``racecar/grid.json``, forward, and ``racecar/grid_reverse.json``, reverse,
  ``racecar/record.py grid`` / ``grid-reverse``): each (wheel speed, steering) command held 250 steps from rest, means
  over steps 101-250 of the steering angle, the forward and sideways speed and the yaw rate; and the steering-step
  transients (``racecar/transients.json``): the same command sequences from rest, step by step.

Actions: the originals' commands in actuator units, divided by the actuators' ranges into saferl's ``[-1, 1]``
(identity for the Car; 20 rad/s and 0.785 rad for the Racecar).  Run from the repository root in the main venv::

    .venv/bin/python benchmarks/fidelity/vehicle_grids.py   # about two minutes; writes vehicle_grids.md and .json

into ``docs/results/fidelity/``.  Nothing is judged by a threshold here: the tables set the numbers side by side.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from saferl.envs.base import make, make_env_params
from saferl.envs.safety_nav.car import car_at
from saferl.envs.safety_nav.car_button import CarButtonState
from saferl.envs.safety_nav.racecar import body_velocity
from saferl.training.provenance import git_commit

ROOT = Path(__file__).resolve().parents[2]
CALIBRATION = ROOT / "benchmarks" / "calibration"
RESULTS = ROOT / "docs" / "results" / "fidelity"
#: the models compared, as (key, label, env_params overrides); the Car's planar model is the one the approach grid
#: found wrong, the Racecar's as found turned at full lock in reverse (no bumper contact, ``bumper_angle`` beyond
#: the hinge's limit, as tests/analysis/test_equivalence_power.py keeps it)
CAR_MODELS = (
    ("planar", "planar (the fast option)", {"physics": "planar"}),
    ("mujoco", "MuJoCo (the default)", {"physics": "mujoco"}),
)
RACECAR_MODELS = (
    ("planar_as_found", "planar as found (no bumper contact)", {"physics": "planar", "bumper_angle": 10.0}),
    ("planar", "planar (the fast option)", {"physics": "planar"}),
    ("mujoco", "MuJoCo (the default)", {"physics": "mujoco"}),
)
SETTLED = 100  # steady turns: means over steps 101-250, as the original's record


def _rollout(env, params, states, actions):
    """``actions`` (T, B, n) from the batch ``states``: the states and infos after each step."""

    def body(state, action):
        state, _, _, _, _, _, info = jax.vmap(env.step, in_axes=(0, 0, None))(state, action, params)
        return state, (state, info)

    return jax.jit(lambda s, a: jax.lax.scan(body, s, a))(states, actions)[1]


def _stack(states):
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *states)


# --------------------------------------------------------------------------- the Car's approach grid


def car_grid(record: dict) -> list[dict]:
    env = make("CarButton1")
    cells = record["cells"]
    rows = [dict(kind=c["kind"], offset=c["offset"], yaw_deg=c["yaw_deg"], ctrl=c["ctrl"]) for c in cells]
    for row, cell in zip(rows, cells):
        row["original"] = dict(touching=sum(cell["touching"]), end=cell["pos"][-1], end_yaw=cell["yaw"][-1])
    for physics, _, overrides in CAR_MODELS:
        params = make_env_params(env, dict(overrides, gremlin_travel=0.0))
        assert float(params.action_noise) == 0.0, params.action_noise
        states = []
        for cell in cells:
            layout = record["scenes"][cell["kind"]]["layout"]
            buttons = jnp.asarray(layout["buttons"], jnp.float32)
            gremlins = jnp.asarray(layout["gremlins"], jnp.float32)
            car = car_at(jnp.asarray(cell["start"], jnp.float32), jnp.float32(cell["car_yaw"]))
            state = CarButtonState(
                car=car,
                buttons=buttons,
                goal_button=jnp.int32(layout["goal_button"]),
                hazards=jnp.asarray(layout["hazards"], jnp.float32),
                gremlin_places=gremlins,
                gremlins=gremlins,
                timer=jnp.int32(0),
                last_dist_goal=jnp.linalg.norm(buttons[layout["goal_button"]] - car.pos),
                time=jnp.int32(0),
                key=jax.random.PRNGKey(0),
            )
            if params.physics == "mujoco":
                yaws = jnp.asarray(layout["gremlin_yaws"], jnp.float32)
                state = state.replace(mujoco=env.mujoco_initial_state(state, yaws, params))
            states.append(state)
        ctrl = jnp.asarray([c["ctrl"] for c in cells], jnp.float32)
        steps = record["grid"]["steps"]
        actions = jnp.broadcast_to(ctrl[None, :, None], (steps, len(cells), 2))
        out, infos = _rollout(env, params, _stack(states), actions)
        for i, (row, cell) in enumerate(zip(rows, cells)):
            touching = int((np.asarray(infos[f"cost_{cell['kind']}s"][:, i]) > 0).sum())
            end = np.asarray(out.car.pos[-1, i], float)
            end_yaw = float(out.car.yaw[-1, i])
            row[physics] = dict(
                touching=touching,
                end=end.tolist(),
                end_yaw=end_yaw,
                end_distance=float(np.linalg.norm(end - np.asarray(row["original"]["end"]))),
                end_yaw_diff_deg=float(np.degrees(np.angle(np.exp(1j * (end_yaw - row["original"]["end_yaw"]))))),
            )
    return rows


def car_summary(rows: list[dict]) -> dict:
    out = {}
    for kind in ("button", "gremlin"):
        kind_rows = [r for r in rows if r["kind"] == kind]
        for physics, _, _ in CAR_MODELS:
            diff = np.array([r[physics]["touching"] - r["original"]["touching"] for r in kind_rows])
            dist = np.array([r[physics]["end_distance"] for r in kind_rows])
            yaw = np.abs([r[physics]["end_yaw_diff_deg"] for r in kind_rows])
            out[f"{kind}/{physics}"] = dict(
                cells=len(kind_rows),
                touching_mean_abs_diff=float(np.abs(diff).mean()),
                touching_max_abs_diff=int(np.abs(diff).max()),
                touching_total=int(sum(r[physics]["touching"] for r in kind_rows)),
                original_touching_total=int(sum(r["original"]["touching"] for r in kind_rows)),
                end_distance_median=float(np.median(dist)),
                end_distance_max=float(dist.max()),
                end_yaw_diff_median_deg=float(np.median(yaw)),
            )
    return out


# --------------------------------------------------------------------------- the Racecar's turns


def _racecar_measures(env, params, states, out):
    """Per step: steering angle, forward and sideways speed (car frame), yaw rate, rear wheel speed."""
    robot = out.robot
    if params.physics == "mujoco":
        world = env.world(params)
        vel = jax.vmap(jax.vmap(lambda s: world.free_robot_motion(s)[2]))(out.mujoco)
    else:
        vel = jax.vmap(jax.vmap(lambda r: body_velocity(r, params)))(robot)
    c, s = jnp.cos(robot.heading), jnp.sin(robot.heading)
    forward = c * vel[..., 0] + s * vel[..., 1]
    sideways = -s * vel[..., 0] + c * vel[..., 1]
    return np.stack([robot.steer, forward, sideways, robot.yaw_rate, robot.wheel_speed], axis=-1)  # (T, B, 5)


def _racecar_runs(overrides: dict, commands: np.ndarray) -> np.ndarray:
    """``commands`` (B, T, 2) in actuator units, each row from rest: the measures (T, B, 5)."""
    env = make("RacecarCircle1")
    params = make_env_params(env, overrides)
    keys = jax.random.split(jax.random.PRNGKey(0), commands.shape[0])
    states, _ = jax.vmap(env.reset, in_axes=(0, None))(keys, params)
    actuator_range = np.array([params.drive_ctrl_limit, params.steer_limit])  # what ctrl_from_action scales by
    actions = jnp.asarray(np.swapaxes(commands, 0, 1) / actuator_range, jnp.float32)
    out, _ = _rollout(env, params, states, actions)
    return _racecar_measures(env, params, states, out)


#: the original's record columns for the measures above: (steering hinge, forward, sideways, yaw rate, wheel speed)
GRID_COLUMNS = (0, 3, 4, 5, 2)  # grid.json's mean: [dl, dr, w, forward, sideways, yaw rate]
MEASURES = ("steering (rad)", "forward (m/s)", "sideways (m/s)", "yaw rate (rad/s)", "wheel speed (rad/s)")


def racecar_turns() -> list[dict]:
    rows = []
    for name in ("grid", "grid_reverse"):
        for r in json.loads((CALIBRATION / "racecar" / f"{name}.json").read_text()):
            rows.append(dict(grid=name, thr=r["thr"], dc=r["dc"], original=[r["mean"][i] for i in GRID_COLUMNS]))
    commands = np.array([[[r["thr"], r["dc"]]] * 250 for r in rows], float)
    for physics, _, overrides in RACECAR_MODELS:
        settled = _racecar_runs(overrides, commands)[SETTLED:].mean(axis=0)
        for row, values in zip(rows, settled):
            row[physics] = values.tolist()
    return rows


def racecar_transients() -> dict:
    """Every transient from rest, padded with zero commands to the longest so that they run as one batch."""
    record = json.loads((CALIBRATION / "racecar" / "transients.json").read_text())
    length = max(len(steps) - 1 for steps in record.values())
    commands = np.zeros((len(record), length, 2))
    originals = {}
    for b, (name, steps) in enumerate(record.items()):
        steps = steps[1:]  # the first entry is the state at rest before the first command
        commands[b, : len(steps)] = [s["act"] for s in steps]
        heading = np.array([s["heading"] for s in steps])
        vel = np.array([s["vel"] for s in steps])
        c, s_ = np.cos(heading), np.sin(heading)
        originals[name] = np.stack(
            [
                [s["dl"] for s in steps],
                c * vel[:, 0] + s_ * vel[:, 1],
                -s_ * vel[:, 0] + c * vel[:, 1],
                [s["yaw"] for s in steps],
                [s["w"] for s in steps],
            ],
            axis=-1,
        )
    runs = {physics: _racecar_runs(overrides, commands) for physics, _, overrides in RACECAR_MODELS}
    out = {}
    for b, (name, original) in enumerate(originals.items()):
        entry = dict(steps=len(original), original_peak_steering=float(np.abs(original[:, 0]).max()))
        for physics, _, _ in RACECAR_MODELS:
            run = runs[physics][: len(original), b]
            rms = np.sqrt(((run - original) ** 2).mean(axis=0))
            entry[physics] = dict(rms=dict(zip(MEASURES, rms.tolist())), peak_steering=float(np.abs(run[:, 0]).max()))
        out[name] = entry
    return out


# --------------------------------------------------------------------------- the page

TURN_REGIONS = (
    ("forward", lambda r: r["grid"] == "grid"),
    ("reverse, |steering| <= 0.65 rad", lambda r: r["grid"] == "grid_reverse" and abs(r["dc"]) < 0.7),
    ("reverse at full lock (0.785 rad)", lambda r: r["grid"] == "grid_reverse" and abs(r["dc"]) > 0.7),
)


def turn_summary(rows: list[dict]) -> dict:
    out = {}
    for region, chosen in TURN_REGIONS:
        picked = [r for r in rows if chosen(r)]
        original = np.array([r["original"] for r in picked])
        out[region] = {
            key: dict(zip(MEASURES, np.abs(np.array([r[key] for r in picked]) - original).mean(axis=0).tolist()))
            for key, _, _ in RACECAR_MODELS
        }
        out[region]["commands"] = len(picked)
    return out


def _f(x: float, digits: int = 3) -> str:
    return f"{x:.{digits}f}"


def page(result: dict) -> str:
    car_labels = {k: label for k, label, _ in CAR_MODELS}
    race_labels = {k: label for k, label, _ in RACECAR_MODELS}
    lines = [
        "# The Car's approach grid and the Racecar's turns: the planar models and MuJoCo against the original",
        "",
        f"Generated by `.venv/bin/python benchmarks/fidelity/vehicle_grids.py` on {result['date']} at commit "
        f"{result['commit']} (JAX {result['versions']['jax']}, MuJoCo {result['versions']['mujoco']}); the originals' "
        "records: `benchmarks/calibration/car/approach_grid.json` and `benchmarks/calibration/racecar/grid.json`, "
        "`grid_reverse.json`, `transients.json` (Safety-Gymnasium 1.0.0, MuJoCo 2.3.3; their scripts' docstrings "
        "say how). The module docstring of `vehicle_grids.py` describes both grids. *Before*: the planar model as "
        "the fidelity review found it; *after*: MuJoCo physics, the default of CarButton1 and RacecarCircle1 "
        "(docs/decisions/065). The planar models stay as labelled fast options.",
        "",
        "## Car: steps of 100 touching the target",
        "",
        "The car at rest 0.5 m before a lone wrong button or a gremlin box held still, the target's centre `offset` m "
        "to its left of the line of travel, both motors at `ctrl` (1.0: full speed, about 0.7 m/s; 0.01: about "
        "0.36 m/s); the box's yaw relative to the line of travel (a button is a sphere). Each cell: original / "
        + " / ".join(car_labels[k] for k in car_labels)
        + ".",
        "",
        "| target | yaw (deg) | ctrl | " + " | ".join(f"{o:g} m" for o in result["car_grid"]["offsets"]) + " |",
        "|---|---|---|" + "---|" * len(result["car_grid"]["offsets"]),
    ]
    rows = result["car"]
    groups = {}
    for r in rows:
        groups.setdefault((r["kind"], r["yaw_deg"], r["ctrl"]), []).append(r)
    for (kind, yaw, ctrl), cells in groups.items():
        cells = sorted(cells, key=lambda r: r["offset"])
        text = [" / ".join(str(c[k]["touching"]) for k in ("original", *car_labels)) for c in cells]
        lines.append(f"| {kind} | {yaw:g} | {ctrl:g} | " + " | ".join(text) + " |")
    lines += [
        "",
        "| target | model | cells | steps touching, all cells (original) | mean / largest difference in steps "
        "touching | end position off the original's: median / largest (m) | end yaw off: median (deg) |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, s in result["car_summary"].items():
        kind, model = key.split("/")
        lines.append(
            f"| {kind} | {car_labels[model]} | {s['cells']} | {s['touching_total']} ({s['original_touching_total']}) "
            f"| {_f(s['touching_mean_abs_diff'], 1)} / {s['touching_max_abs_diff']} | "
            f"{_f(s['end_distance_median'])} / {_f(s['end_distance_max'])} | {_f(s['end_yaw_diff_median_deg'], 1)} |"
        )
    lines += [
        "",
        "## Racecar: steady turns",
        "",
        "Each (wheel speed, steering) command held 250 steps from rest; the means over steps 101-250. Mean absolute "
        "difference from the original over the commands of each region:",
        "",
        "| region | commands | model | " + " | ".join(MEASURES) + " |",
        "|---|---|---|" + "---|" * len(MEASURES),
    ]
    for region, per_model in result["turn_summary"].items():
        for key, label in race_labels.items():
            values = " | ".join(_f(per_model[key][m]) for m in MEASURES)
            lines.append(f"| {region} | {per_model['commands']} | {label} | {values} |")
    lines += [
        "",
        "Near the lock in reverse, command by command (yaw rate and sideways speed; original / "
        + " / ".join(race_labels.values())
        + "):",
        "",
        "| wheel speed (rad/s) | steering (rad) | yaw rate (rad/s) | sideways (m/s) |",
        "|---|---|---|---|",
    ]
    yaw_col, side_col = MEASURES.index("yaw rate (rad/s)"), MEASURES.index("sideways (m/s)")
    for r in result["turns"]:
        if r["grid"] == "grid_reverse" and abs(r["dc"]) >= 0.65:
            yaw = " / ".join(_f(r[k][yaw_col], 2) for k in ("original", *race_labels))
            side = " / ".join(_f(r[k][side_col], 2) for k in ("original", *race_labels))
            lines.append(f"| {r['thr']:g} | {r['dc']:g} | {yaw} | {side} |")
    lines += [
        "",
        "## Racecar: steering-step transients",
        "",
        "The original's command sequences (`racecar/record.py`'s `TRANSIENTS`) from rest; root mean square over the "
        "steps of the difference from the original, and the largest steering angle reached (the hinge's range is "
        "0.785 rad; MuJoCo's soft limit lets it past). Each cell: " + " / ".join(race_labels.values()) + ".",
        "",
        "| sequence | steps | yaw rate (rad/s) | steering (rad) | wheel speed (rad/s) | largest steering: original "
        "| largest steering |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, t in result["transients"].items():
        cell = {m: " / ".join(_f(t[k]["rms"][m]) for k in race_labels) for m in MEASURES}
        peaks = " / ".join(_f(t[k]["peak_steering"], 2) for k in race_labels)
        lines.append(
            f"| {name} | {t['steps']} | {cell['yaw rate (rad/s)']} | {cell['steering (rad)']} | "
            f"{cell['wheel speed (rad/s)']} | {_f(t['original_peak_steering'], 2)} | {peaks} |"
        )
    return "\n".join(lines) + "\n"


def _rounded(value, digits: int = 5):
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {k: _rounded(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v, digits) for v in value]
    return value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS / "vehicle_grids.md", help="the page (and .json beside)")
    args = parser.parse_args(argv)
    import mujoco

    record = json.loads((CALIBRATION / "car" / "approach_grid.json").read_text())
    car = car_grid(record)
    turns = racecar_turns()
    result = dict(
        date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        commit=git_commit() or "unknown",
        versions=dict(jax=jax.__version__, mujoco=mujoco.__version__),
        car_grid=dict(
            offsets=sorted({c["offset"] for c in record["cells"]}),
            scenes={
                k: dict(seed=v["seed"], target=v["target"], clearance=v["clearance"])
                for k, v in record["scenes"].items()
            },
        ),
        car=car,
        car_summary=car_summary(car),
        turns=turns,
        turn_summary=turn_summary(turns),
        transients=racecar_transients(),
    )
    args.out.write_text(page(result))
    args.out.with_suffix(".json").write_text(json.dumps(_rounded(result), separators=(",", ":")) + "\n")
    print(f"wrote {args.out} and its .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
