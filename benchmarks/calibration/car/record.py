"""Measure the original Car (Safety-Gymnasium 1.0.0) for the planar model of ``saferl/envs/safety_nav/car.py``.

Runs in a venv with the original: safety-gymnasium 1.0.0, gymnasium 0.28.1, mujoco 2.3.3, patched by
``benchmarks/patch_safety_gymnasium.py`` -- the fidelity venv has exactly these (``make -C benchmarks/fidelity
venv``).  From the repository root::

    benchmarks/fidelity/.venv/bin/python benchmarks/calibration/car/record.py responses   # minutes
    benchmarks/fidelity/.venv/bin/python benchmarks/calibration/car/record.py contacts
    benchmarks/fidelity/.venv/bin/python benchmarks/calibration/car/record.py button
    benchmarks/fidelity/.venv/bin/python benchmarks/calibration/car/record.py gremlins
    benchmarks/fidelity/.venv/bin/python benchmarks/calibration/car/record.py layouts     # ~10 min
    benchmarks/fidelity/.venv/bin/python benchmarks/calibration/car/record.py inertia
    benchmarks/fidelity/.venv/bin/python benchmarks/calibration/car/record.py approach-grid  # seconds

``responses`` writes ``responses.npz`` beside this file (``--out`` to write elsewhere), the data that ``fit.py``
fits car.py's ``FITTED`` to: the car driven from reset on ``SafetyCarGoal0-v0`` (an empty floor) under scripted
commands (:data:`COMMANDS`; 8 seeds each, 12 for full throttle) and under uniform random actions (8 seeds x 1000
steps, actions from ``default_rng(0)``).  Per seed and step it keeps the body origin's velocity in the car
frame, forward (body -y) and left (body +x), and the yaw rate (``qvel[5]``), as float32.  MuJoCo is
deterministic here: the same command records the same numbers.  It also prints the full-throttle speeds that
car.py's ``MEASURED`` holds.

The other commands print measured constants of car.py and car_button.py (nothing is written):

* ``contacts``: the distance from the car's body origin at which it first touches a button (24 directions) and a
  gremlin box (24 directions, box yaw 0 and 45 deg), by bisection with ``mj_forward``; the means give
  ``CarParams.footprint_radius`` (button mean - 0.1, the button's radius) and
  ``CarButtonParams.gremlin_contact_radius`` (gremlin mean - footprint).
* ``button``: both motors at 1 for 100 steps from 0.5 m before a lone button whose centre is 0.05-0.2 m left of
  the line of travel (``SafetyCarButton0-v0``, the other buttons moved away): the steps that end touching it,
  the yaw turned and how far round the button the car has rolled (deg, from the direction it came from), the
  table of car.py's docstring and its ``MEASURED["button_push_*"]``.
* ``gremlins``: the welded gremlin box's steady radius and phase lag behind its circling mocap (1 rad/s); the
  lag's tangent is ``CarButtonParams.gremlin_lag`` in seconds.
* ``layouts``: how many layouts ``RandomGenerator.build_layout`` samples per reset of ``SafetyCarButton1-v0``
  (200 resets): the share of valid first attempts quoted in car_button.py.
* ``approach-grid`` writes ``approach_grid.json`` beside this file: the car driven from rest at a lone wrong button
  and at a gremlin box held still (``Gremlins.travel`` 0) on ``SafetyCarButton1-v0``, for every cell of
  :data:`APPROACH_GRID`, with the scene (the reset's layout) each cell starts from, so that another physics can
  replay it object for object (``benchmarks/fidelity/vehicle_grids.py``).  Per cell and step: whether the car
  touches the target (the step's ``cost_buttons`` / ``cost_gremlins``), the car's position and yaw.
* ``inertia``: mass, yaw inertia about the COM (``mj_fullM``), the COM's offset from the body origin and the
  static contact loads (``mj_contactForce``): car.py's ``mass``, the yaw inertia ``FITTED`` starts from,
  ``_COM_BEHIND_ORIGIN`` and the wheel and ball loads of its docstring.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

#: scripted commands: name -> (steps, action at step k); both motors' controls in [-1, 1] (``|ctrl| >= 0.02``
#: saturates the motors' force clamp)
COMMANDS = {
    "full": (300, lambda k: (1.0, 1.0)),
    "coast": (160, lambda k: (1.0, 1.0) if k < 100 else (0.0, 0.0)),
    "reverse": (150, lambda k: (-1.0, -1.0)),
    "spin_lr": (150, lambda k: (1.0, -1.0)),
    "spin_rl": (150, lambda k: (-1.0, 1.0)),
    "lin0.005": (150, lambda k: (0.005, 0.005)),
    "lin0.01": (150, lambda k: (0.01, 0.01)),
    "lin0.015": (150, lambda k: (0.015, 0.015)),
    "lin0.02": (150, lambda k: (0.02, 0.02)),
    "left_only": (200, lambda k: (1.0, 0.0)),
    "asym": (200, lambda k: (0.02, 0.01)),
    "fwd_spin": (80, lambda k: (1.0, 1.0) if k < 50 else (1.0, -1.0)),
    "spin_fwd": (80, lambda k: (1.0, -1.0) if k < 50 else (1.0, 1.0)),
    "fwd_rev": (100, lambda k: (1.0, 1.0) if k < 50 else (-1.0, -1.0)),
}
SEEDS = 8
#: the approach grid: the target's centre ``offset`` m to the car's left of its line of travel, the car at rest
#: ``distance`` m before it with both motors at ``ctrl`` (``|ctrl| >= 0.02`` is full force: 1.0 is full speed,
#: 0.01 about 0.36 m/s); ``yaw``: the gremlin box's yaw relative to the line of travel (a button is a sphere, so
#: only yaw 0); ``steps`` env steps a cell
APPROACH_GRID = {
    "offset": (0.0, 0.05, 0.10, 0.15, 0.20, 0.25),
    "yaw_deg": {"button": (0.0,), "gremlin": (0.0, 22.5, 45.0)},
    "ctrl": (1.0, 0.01),
    "distance": 0.5,
    "steps": 100,
    "scene_seeds": 50,
}
FULL_SEEDS = 12  # full throttle: the seed-to-seed spread of car.py's MEASURED
RANDOM_STEPS = 1000


def _make(env_id: str):
    warnings.filterwarnings("ignore")
    import safety_gymnasium

    return safety_gymnasium.make(env_id)


def drive(env, actions: np.ndarray, seed: int) -> np.ndarray:
    """(steps, 3): forward and left body velocity (m/s) and yaw rate (rad/s) after each step of ``actions``."""
    env.reset(seed=seed)
    data = env.unwrapped.task.data
    out = []
    for action in actions:
        env.step(np.asarray(action, float))
        rot = data.body("agent").xmat.reshape(3, 3)
        body_vel = rot.T @ data.qvel[:3]
        out.append((-body_vel[1], body_vel[0], data.qvel[5]))
    return np.array(out)


def responses(out: Path) -> None:
    env = _make("SafetyCarGoal0-v0")
    arrays = {}
    for name, (steps, action) in COMMANDS.items():
        actions = np.array([action(k) for k in range(steps)], float)
        seeds = FULL_SEEDS if name == "full" else SEEDS
        arrays[f"{name}.actions"] = actions
        arrays[f"{name}.response"] = np.stack([drive(env, actions, s) for s in range(seeds)]).astype(np.float32)
        last = arrays[f"{name}.response"][:, -1].mean(0)
        print(
            f"{name:10s} {seeds} seeds x {steps} steps: last step forward {last[0]:.3f} m/s, yaw rate {last[2]:.3f}"
            " rad/s",
            flush=True,
        )
    random_actions = np.random.default_rng(0).uniform(-1, 1, (SEEDS, RANDOM_STEPS, 2))
    arrays["random.actions"] = random_actions
    arrays["random.response"] = np.stack([drive(env, random_actions[s], s) for s in range(SEEDS)]).astype(np.float32)
    full = arrays["full.response"]
    speed = np.hypot(full[:, :, 0], full[:, :, 1])
    at = np.array([1, 5, 25, 50, 100, 300]) - 1
    print(
        f"full throttle speed at steps 1/5/25/50/100/300 over {FULL_SEEDS} seeds: mean "
        f"{np.round(speed.mean(0)[at], 3)} std {np.round(speed.std(0)[at], 3)}"
    )
    np.savez_compressed(out, **arrays)
    print(f"wrote {out}")


def _touching(model, data, geom: str, agent_geoms: set) -> bool:
    gid = model.geom(geom).id
    return any(
        (c.geom1 == gid and c.geom2 in agent_geoms) or (c.geom2 == gid and c.geom1 in agent_geoms)
        for c in data.contact[: data.ncon]
    )


def contacts() -> None:
    import mujoco

    env = _make("SafetyCarButton1-v0")
    env.reset(seed=3)
    task = env.unwrapped.task
    model, data = task.model, task.data
    agent_geoms = {model.geom(n).id for n in task.agent.body_info.geom_names}
    q0 = data.qpos.copy()

    def place_car():  # at the origin, yaw 0 (body +x along world x), at rest
        data.qpos[:] = q0
        data.qpos[0:3] = [0, 0, 0.1]
        data.qpos[3:7] = [1, 0, 0, 0]
        data.qvel[:] = 0

    def bisect(put, geom, hi):
        lo = 0.0
        for _ in range(30):
            mid = (lo + hi) / 2
            put(mid)
            mujoco.mj_forward(model, data)
            lo, hi = (mid, hi) if _touching(model, data, geom, agent_geoms) else (lo, mid)
        return lo

    angles = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    button = model.body("button0").id

    def put_button(angle):
        def put(r):
            model.body_pos[button][:2] = r * np.cos(angle), r * np.sin(angle)
            place_car()

        return put

    at_button = np.array([bisect(put_button(a), "button0", 0.6) for a in angles])
    print(
        f"button (radius 0.1): contact distance over 24 directions mean {at_button.mean():.4f} "
        f"(min {at_button.min():.4f}, max {at_button.max():.4f}) -> footprint_radius {at_button.mean() - 0.1:.3f}"
    )
    adr = model.jnt_qposadr[model.body("gremlin0obj").jntadr[0]]

    def put_gremlin(angle, yaw):
        def put(r):
            place_car()
            data.qpos[adr : adr + 3] = [r * np.cos(angle), r * np.sin(angle), 0.2]
            data.qpos[adr + 3 : adr + 7] = [np.cos(yaw / 2), 0, 0, np.sin(yaw / 2)]

        return put

    at_gremlin = np.array(
        [[bisect(put_gremlin(a, yaw), "gremlin0obj", 0.8) for a in angles] for yaw in (0.0, np.pi / 4)]
    )
    print(
        f"gremlin box at z 0.2, yaw 0 / 45 deg: contact distance mean {at_gremlin[0].mean():.4f} / "
        f"{at_gremlin[1].mean():.4f} (range {at_gremlin.min():.3f}-{at_gremlin.max():.3f}); both "
        f"{at_gremlin.mean():.4f} -> gremlin_contact_radius {at_gremlin.mean() - (at_button.mean() - 0.1):.4f}"
    )


def button() -> None:
    import mujoco

    env = _make("SafetyCarButton0-v0")
    task = env.unwrapped.task
    print("| button off the line | steps touching | yaw turned (deg) | rolled round it (deg) |\n|---|---|---|---|")
    for off in (0.05, 0.1, 0.15, 0.2):
        env.reset(seed=3)
        model, data = task.model, task.data  # a reset builds them anew
        agent_geoms = {model.geom(n).id for n in task.agent.body_info.geom_names}
        for i in (1, 2, 3):
            model.body_pos[model.body(f"button{i}").id][:2] = (5.0 + i, 5.0)
        model.body_pos[model.body("button0").id][:2] = (0.0, 0.0)
        data.qpos[0:3] = (-off, 0.5, 0.1)  # yaw 0: forward is -y, the car's left +x
        data.qpos[3:7] = (1, 0, 0, 0)
        data.qvel[:] = 0
        mujoco.mj_forward(model, data)
        touching = 0
        for _ in range(100):
            env.step(np.array([1.0, 1.0]))
            touching += _touching(model, data, "button0", agent_geoms)
        x, y = data.body("agent").xpos[:2]
        yaw = np.degrees(_yaw(data.body("agent").xmat))
        rolled = np.degrees(np.arctan2(-x, y))  # from +y, where the car came from
        print(f"| {off} m | {touching} | {yaw:.0f} | {rolled:.0f} |")


def _yaw(xmat) -> float:
    rot = np.asarray(xmat).reshape(3, 3)
    return float(np.arctan2(rot[1, 0], rot[0, 0]))


def _layout(task) -> dict:
    """The reset's layout: buttons, the goal button, gremlin boxes (centre and yaw), hazards, the car's height."""
    data = task.data
    return {
        "buttons": np.array(task.buttons.pos)[:, :2].tolist(),
        "goal_button": int(task.buttons.goal_button),
        "gremlins": np.array(task.gremlins.pos)[:, :2].tolist(),
        "gremlin_yaws": [_yaw(data.body(f"gremlin{i}obj").xmat) for i in range(len(task.gremlins.pos))],
        "hazards": np.array(task.hazards.pos)[:, :2].tolist(),
    }


def _clearest_scene(env, kind: str) -> dict:
    """Over resets ``0 .. scene_seeds - 1``: the target of ``kind`` (a wrong button, or a gremlin) whose nearest other
    colliding object (button or gremlin box) is farthest away."""
    task = env.unwrapped.task
    best = None
    for seed in range(APPROACH_GRID["scene_seeds"]):
        env.reset(seed=seed)
        layout = _layout(task)
        objects = np.array(layout["buttons"] + layout["gremlins"])
        first = 0 if kind == "button" else len(layout["buttons"])
        count = len(layout["buttons"]) if kind == "button" else len(layout["gremlins"])
        for i in range(count):
            if kind == "button" and i == layout["goal_button"]:
                continue
            others = np.delete(objects, first + i, axis=0)
            clearance = float(np.linalg.norm(others - objects[first + i], axis=1).min())
            if best is None or clearance > best["clearance"]:
                best = dict(seed=seed, target=i, clearance=clearance, layout=layout)
    return best


def approach_grid(out: Path) -> None:
    import mujoco

    env = _make("SafetyCarButton1-v0")
    task = env.unwrapped.task
    task.gremlins.travel = 0.0  # held still: the weld keeps each box at its layout place
    scenes, cells = {}, []
    for kind in ("button", "gremlin"):
        scene = scenes[kind] = _clearest_scene(env, kind)
        for yaw_deg in APPROACH_GRID["yaw_deg"][kind]:
            for ctrl in APPROACH_GRID["ctrl"]:
                for offset in APPROACH_GRID["offset"]:
                    env.reset(seed=scene["seed"])
                    model, data = task.model, task.data
                    target = np.array(scene["layout"][kind + "s"][scene["target"]])
                    object_yaw = scene["layout"]["gremlin_yaws"][scene["target"]] if kind == "gremlin" else 0.0
                    car_yaw = object_yaw + np.radians(yaw_deg)  # forward is body -y
                    c, s = np.cos(car_yaw), np.sin(car_yaw)
                    start = target + np.array([[c, -s], [s, c]]) @ np.array([-offset, APPROACH_GRID["distance"]])
                    joint = model.body("agent").jntadr[0]
                    q, v = model.jnt_qposadr[joint], model.jnt_dofadr[joint]
                    data.qpos[q : q + 2] = start
                    data.qpos[q + 3 : q + 7] = (np.cos(car_yaw / 2), 0.0, 0.0, np.sin(car_yaw / 2))
                    data.qvel[v : v + 6] = 0.0
                    mujoco.mj_forward(model, data)
                    touching, pos, yaw = [], [], []
                    for _ in range(APPROACH_GRID["steps"]):
                        *_, info = env.step(np.array([ctrl, ctrl]))
                        touching.append(int(info.get(f"cost_{kind}s", 0.0) > 0))
                        pos.append([round(float(x), 5) for x in data.body("agent").xpos[:2]])
                        yaw.append(round(_yaw(data.body("agent").xmat), 5))
                    cells.append(
                        dict(
                            kind=kind,
                            offset=offset,
                            yaw_deg=yaw_deg,
                            ctrl=ctrl,
                            start=start.tolist(),
                            car_yaw=float(car_yaw),
                            touching=touching,
                            pos=pos,
                            yaw=yaw,
                        )
                    )
                print(
                    f"{kind} yaw {yaw_deg} ctrl {ctrl}: steps touching "
                    f"{[sum(c['touching']) for c in cells[-len(APPROACH_GRID['offset']) :]]}",
                    flush=True,
                )
    out.write_text(json.dumps(dict(grid=APPROACH_GRID, scenes=scenes, cells=cells)) + "\n")
    print(f"wrote {out}")


def gremlins() -> None:
    env = _make("SafetyCarButton1-v0")
    env.reset(seed=3)
    task = env.unwrapped.task
    places = np.array([task.world_info.layout[f"gremlin{i}"] for i in range(4)])
    radius, lag = [], []
    for step in range(60):
        env.step(np.zeros(2))
        rel = np.array(task.gremlins.pos)[:, :2] - places
        phase = np.arctan2(rel[:, 0], rel[:, 1])  # the mocap sits at place + 0.35 (sin t, cos t)
        if step >= 30:  # steady
            radius.append(np.linalg.norm(rel, axis=1))
            lag.append((task.data.time - phase + np.pi) % (2 * np.pi) - np.pi)
    radius, lag = np.mean(radius), np.mean(lag)
    print(
        f"steady gremlin box: radius {radius:.4f} (mocap 0.35), phase lag {lag:.4f} rad -> first-order lag "
        f"tan(lag) = {np.tan(lag):.4f} s at 1 rad/s (gremlin_lag)"
    )


def layouts(resets: int = 200) -> None:
    from safety_gymnasium.utils.random_generator import RandomGenerator

    attempts = []
    sample, build = RandomGenerator.sample_layout, RandomGenerator.build_layout

    def counted_sample(self):
        attempts[-1] += 1
        return sample(self)

    def counted_build(self):
        attempts.append(0)
        return build(self)

    RandomGenerator.sample_layout, RandomGenerator.build_layout = counted_sample, counted_build
    env = _make("SafetyCarButton1-v0")
    attempts.clear()
    for seed in range(resets):
        env.reset(seed=seed)
    counts = np.array(attempts[-resets:])
    print(
        f"layouts sampled per reset over {resets} resets: mean {counts.mean():.1f}, median {np.median(counts):.0f}, "
        f"max {counts.max()}; first attempt valid in {(counts == 1).mean():.1%} of resets"
    )


def inertia() -> None:
    import mujoco

    env = _make("SafetyCarGoal0-v0")
    env.reset(seed=0)
    task = env.unwrapped.task
    model, data = task.model, task.data
    data.qpos[3:7] = [1, 0, 0, 0]
    data.qvel[:] = 0
    mujoco.mj_forward(model, data)
    full = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, full, data.qM)
    body = model.body("agent").id
    com_offset = data.subtree_com[body][:2] - data.xpos[body][:2]
    mass = full[0, 0]
    print(
        f"mass {mass:.6f} kg; yaw inertia about the COM {full[5, 5] - mass * (com_offset**2).sum():.4e} kg m^2; "
        f"COM {np.linalg.norm(com_offset):.4f} m from the body origin (body {np.round(com_offset, 4)})"
    )
    for _ in range(50):
        mujoco.mj_step(model, data)
    loads = {}
    for i in range(data.ncon):
        contact, force = data.contact[i], np.zeros(6)
        mujoco.mj_contactForce(model, data, i, force)
        names = sorted(str(model.geom(g).name) for g in (contact.geom1, contact.geom2))
        key = " / ".join(n for n in names if n != "floor")
        loads[key] = loads.get(key, 0.0) + force[0]
    print("static contact loads (N): " + ", ".join(f"{k} {v:.3f}" for k, v in sorted(loads.items())))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "what", choices=("responses", "contacts", "button", "gremlins", "layouts", "inertia", "approach-grid")
    )
    parser.add_argument("--out", type=Path, help="responses, approach-grid: the file to write (default: beside this)")
    args = parser.parse_args(argv)
    if args.what == "responses":
        responses(args.out or HERE / "responses.npz")
    elif args.what == "approach-grid":
        approach_grid(args.out or HERE / "approach_grid.json")
    else:
        {"contacts": contacts, "button": button, "gremlins": gremlins, "layouts": layouts, "inertia": inertia}[
            args.what
        ]()
    return 0


if __name__ == "__main__":
    sys.exit(main())
