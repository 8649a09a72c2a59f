"""What both sides of the fidelity comparison share: the tasks, the scripted controllers,
the fixed action sequences of the trajectory checks, and the statistics.

This file is imported by ``run_original.py`` (the fidelity venv: numpy, no JAX) and by
``run_saferl.py`` (the main venv: JAX).  The controllers therefore take the array module
``xp`` (``numpy`` or ``jax.numpy``) as their first argument: the same lines of code compute
the action on both sides, the original reading the simulator through ``env.unwrapped`` and
saferl reading its state pytree.
"""

from __future__ import annotations

import math

import numpy as np

#: (label, original Gymnasium id, saferl registered name, saferl constructor kwargs, episodes per policy)
TASKS = [
    ("BallRun", "SafetyBallRun-v0", "SafetyBallRun", {"version": "1.4.0"}, 50),
    ("BallCircle", "SafetyBallCircle-v0", "SafetyBallCircle", {"version": "1.4.0"}, 50),
    ("BallGather", "SafetyBallGather-v0", "SafetyBallGather", {"version": "1.4.0"}, 50),
    ("BallReach", "SafetyBallReach-v0", "SafetyBallReach", {"version": "1.4.0"}, 50),
    ("PointGoal1", "SafetyPointGoal1-v0", "PointGoal1", {}, 30),
]
POLICIES = ("random", "scripted")
TRAJECTORY_STEPS = 50
BALL_RADIUS = 0.5

# --------------------------------------------------------------------------- scripted controllers
# Deterministic feedback laws, one per task.  Gains are round numbers chosen so that each
# controller does the task visibly (not optimally); they are the same on both sides.

CIRCLE_RADIUS = 7.0  # the reward's circle (CircleTask: CircleZone radius 7)
CIRCLE_KP, CIRCLE_KD = 0.5, 0.5
GOTO_KP, GOTO_KD = 1.0, 0.5
POINT_TURN_GAIN = 2.0


def run_controller(xp, pos, vel):
    """BallRun: full force along +x."""
    return xp.stack([xp.ones_like(pos[0]), xp.zeros_like(pos[0])])


def circle_controller(xp, pos, vel):
    """BallCircle: clockwise tangential push plus a radial PD term towards radius 7 (against the
    speed it reaches, the ball settles near radius 10, inside the octagon's walls)."""
    r = xp.sqrt(pos[0] ** 2 + pos[1] ** 2) + 1e-9
    radial = pos / r
    tangent = xp.stack([radial[1], -radial[0]])  # clockwise (the reward's positive direction)
    radial_speed = vel[0] * radial[0] + vel[1] * radial[1]
    push = CIRCLE_KP * (CIRCLE_RADIUS - r) - CIRCLE_KD * radial_speed
    return xp.clip(tangent + push * radial, -1.0, 1.0)


def goto_controller(xp, pos, vel, target):
    """BallReach / BallGather: PD push towards ``target`` (the goal, the nearest apple)."""
    return xp.clip(GOTO_KP * (target - pos) - GOTO_KD * vel, -1.0, 1.0)


def nearest(xp, pos, points, available):
    """The nearest of ``points`` (k, 2) whose ``available`` flag is set (pos itself if none)."""
    d = xp.sqrt((points[:, 0] - pos[0]) ** 2 + (points[:, 1] - pos[1]) ** 2)
    d = xp.where(available, d, xp.inf)
    chosen = points[xp.argmin(d)]
    return xp.where(xp.any(available), chosen, pos)


def point_goal_controller(xp, pos, heading, goal):
    """PointGoal1: turn towards the goal, thrust while facing it (action = [thrust, turn])."""
    bearing = xp.arctan2(goal[1] - pos[1], goal[0] - pos[0])
    error = xp.arctan2(xp.sin(bearing - heading), xp.cos(bearing - heading))  # wrapped to (-pi, pi]
    thrust = xp.clip(xp.cos(error), 0.0, 1.0)
    turn = xp.clip(POINT_TURN_GAIN * error, -1.0, 1.0)
    return xp.stack([thrust, turn])


# --------------------------------------------------------------------------- trajectory checks
# Start states (ball centre and velocity) and open-loop action sequences.  The walled tasks
# start near a wall and push into it, so the wall contact is part of the check; Reach keeps
# to the x > 3 half of the room (the original resets until its box is far from that path).

TRAJECTORY_STARTS = {
    "BallRun": {"pos": [0.005, -0.003], "vel": [0.5, 0.2]},
    "BallCircle": {"pos": [9.0, 3.0], "vel": [1.5, 0.5]},
    "BallGather": {"pos": [6.0, -6.0], "vel": [1.0, -1.0]},
    "BallReach": {"pos": [6.0, -6.0], "vel": [0.0, 0.5]},
}
REACH_BOX_MAX_X = 0.5  # the original is reset until its box centre has x below this

#: control steps the wall-bounce probe waits for the impact: 60 at 60 Hz is 1 s, in which the slowest probe
#: (1 m/s from a 0.36 m gap) reaches the wall (20 steps did at 1.4.0's 30 Hz and 10 Hz only; the probe stops at the
#: first impact, so the longer wait changes none of 1.4.0's impacts)
PROBE_STEPS = 60


def trajectory_actions(task: str, steps: int = TRAJECTORY_STEPS) -> np.ndarray:
    """A fixed (steps, 2) action sequence in [-1, 1]^2 for ``task``."""
    t = np.arange(steps, dtype=np.float64)
    if task == "BallRun":  # accelerate, weave, brake
        a = np.stack([np.where(t < 30, 1.0, -1.0), 0.6 * np.sin(2 * math.pi * t / 20)], axis=1)
    elif task == "BallCircle":  # into the x = 11.4 face, then up along it and back
        a = np.stack([np.where(t < 20, 1.0, -0.3), np.where(t < 35, 0.8, -1.0)], axis=1)
    elif task in ("BallGather", "BallReach"):  # into the (9.4, -9.4) corner, then north along the wall
        a = np.stack([np.where(t < 20, 1.0, 0.4), np.where(t < 20, -1.0, 0.9)], axis=1)
    elif task == "PointGoal1":  # thrust with alternating turns, then reverse
        a = np.stack([np.where(t < 35, 1.0, -1.0), np.sign(np.sin(2 * math.pi * t / 25))], axis=1)
    else:
        raise ValueError(f"no trajectory action sequence for task {task!r}")
    return np.clip(a, -1.0, 1.0).astype(np.float32)


# --------------------------------------------------------------------------- statistics


def summarize(values, seed: int = 0, resamples: int = 10_000) -> dict:
    """Mean, standard deviation (ddof 1) and percentile-bootstrap 95% interval of the mean."""
    x = np.asarray(values, np.float64)
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return {
        "n": int(x.size),
        "mean": float(x.mean()),
        "std": float(x.std(ddof=1)) if x.size > 1 else 0.0,
        "ci95": [float(low), float(high)],
        "min": float(x.min()),
        "max": float(x.max()),
    }


def episode_record(returns, costs, lengths, extras=None, extra_names=()) -> dict:
    """The per-episode values of one (task, policy) and their summaries; ``extras`` (episodes, k)
    holds the per-episode counts named by ``extra_names``."""
    record = {
        "returns": [float(v) for v in returns],
        "costs": [float(v) for v in costs],
        "lengths": [int(v) for v in lengths],
        "return": summarize(returns),
        "cost": summarize(costs),
        "length": summarize(lengths),
        "extras": {},
    }
    for i, name in enumerate(extra_names):
        values = np.asarray(extras, np.float64)[:, i]
        record["extras"][name] = {"values": values.tolist(), **summarize(values)}
    return record


#: what each task counts per episode besides return and cost
EXTRA_NAMES = {
    "BallGather": ("apples collected",),
    "BallReach": ("goals reached", "steps touching the box"),
    "PointGoal1": ("goals reached",),
}


def machine() -> dict:
    """nproc, CPU model, platform and the load averages when the side finished (the machine is shared)."""
    import os
    import platform

    model = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu_model": model,
        "platform": platform.platform(),
        "load_average_1_5_15min": [round(x, 2) for x in os.getloadavg()],
    }


def write_side(result: dict, out, started: float) -> None:
    """Stamp one side's ``result`` (machine, date, wall seconds since ``started``, a ``time.perf_counter()``) and
    write it to ``out`` as compact JSON (the suite's trajectories are long)."""
    import json
    import time
    from pathlib import Path

    result["machine"] = machine()
    result["date"] = time.strftime("%Y-%m-%d %H:%M %Z")
    result["wall_seconds"] = time.perf_counter() - started
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, separators=(",", ":")))
    print(f"wrote {out} ({result['wall_seconds']:.0f} s)")


def merge_side(result: dict, out, why: str, started: float, alternate: bool = False) -> None:
    """Put ``result``'s tasks into the side already written at ``out`` in place of its own, or, ``alternate``, beside
    them under ``alternate_physics`` (label -> entry); the file keeps its first run's date, machine and wall time, and
    a ``reruns`` note records this one's tasks, date, wall seconds since ``started`` and ``why``."""
    import json
    import time
    from pathlib import Path

    out = Path(out)
    existing = json.loads(out.read_text())
    if alternate:
        existing.setdefault("alternate_physics", {}).update(result["tasks"])
    else:
        existing["tasks"].update(result["tasks"])
    existing.setdefault("reruns", []).append(
        {
            "tasks": sorted(result["tasks"]),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "wall_seconds": time.perf_counter() - started,
            "why": why,
        }
    )
    existing["versions"] = result["versions"]
    out.write_text(json.dumps(existing, separators=(",", ":")))
    print(f"merged {', '.join(result['tasks'])} into {out} ({time.perf_counter() - started:.0f} s)")
