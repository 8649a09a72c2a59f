"""What both sides of the Safety-Gymnasium suite comparison share: the seven tasks, their scripted
controllers, the velocity tasks' trajectory actions, and the action mapping.

The C-TRPO paper's eight Safety-Gymnasium 1.0 tasks (arXiv:2411.02957, "Embedding Safety into RL:
A New Take on Trust Region Methods") against saferl's ports.  PointGoal1 is in ``common.py``; these
are the other seven.  Imported by ``suite_original.py`` (the fidelity venv: numpy, no JAX) and
``suite_saferl.py`` (the main venv, JAX), so the controllers take the array module ``xp``
(``numpy`` or ``jax.numpy``) as their first argument, as in ``common.py``: the same lines compute
the action on both sides, the original reading MuJoCo (``env.unwrapped.data``,
``env.unwrapped.task``), saferl its state pytree.

Actions.  The C-TRPO harness wraps every task in ``SafeRescaleAction(-1, 1)`` (the authors' code,
milosen/ctrpo ``algo/common/env.py``, ``make_sa_mujoco_env``): the policy acts in ``[-1, 1]^n``.
saferl's tasks take ``[-1, 1]^n`` and map it themselves; on the original, :func:`to_original`
maps it affinely onto the env's ``action_space`` (identity for Ant, HalfCheetah, Hopper, Point
and Car; ``0.4 a`` for the Humanoid; ``(20 a_0, 0.785 a_1)`` for the Racecar), so a controller
output means the same on both sides.

The controllers are deterministic, with round-number gains chosen on the original (a few
short random searches over periods, phases and gains; the chosen ones kept where they did the
task visibly and, for the velocity tasks, crossed the cost's velocity threshold on some steps).
"""

from __future__ import annotations

import math

import numpy as np

#: (label, original Gymnasium id, saferl registered name, saferl constructor kwargs, episodes per policy)
TASKS = [
    ("AntVelocity", "SafetyAntVelocity-v1", "SafetyAntVelocity", {}, 300),  # 30 decided on an atypical random sample
    ("HalfCheetahVelocity", "SafetyHalfCheetahVelocity-v1", "SafetyHalfCheetahVelocity", {}, 30),
    ("HopperVelocity", "SafetyHopperVelocity-v1", "SafetyHopperVelocity", {}, 30),
    ("HumanoidVelocity", "SafetyHumanoidVelocity-v1", "SafetyHumanoidVelocity", {}, 30),
    ("PointPush1", "SafetyPointPush1-v0", "PointPush1", {}, 300),  # at 30 the box path was not decided
    ("CarButton1", "SafetyCarButton1-v0", "CarButton1", {}, 30),
    ("RacecarCircle1", "SafetyRacecarCircle1-v0", "RacecarCircle1", {}, 30),
]
VELOCITY_TASKS = ("AntVelocity", "HalfCheetahVelocity", "HopperVelocity", "HumanoidVelocity")
POLICIES = ("random", "scripted")
#: PointPush1's box displacement in a step (m), which no info dict holds: each side computes it from the box's
#: position before and after the step (the original's ``task.push_box.pos``, saferl's ``state.box_pos``)
BOX_MOVED = "box_moved"
#: what each task counts per episode besides return and cost: (name, the original's info key, saferl's info key);
#: PointPush1's box path is the quantity its learners exploit (the pushing regime), beside the goals it earns
EXTRAS = {
    "PointPush1": (("goals reached", "goal_met", "goal_reached"), ("box moved (m)", BOX_MOVED, BOX_MOVED)),
    "CarButton1": (
        ("goals reached", "goal_met", "goal_reached"),
        ("steps touching a wrong button", "cost_buttons", "cost_buttons"),
        ("steps in a hazard", "cost_hazards", "cost_hazards"),
        ("steps touching a gremlin", "cost_gremlins", "cost_gremlins"),
    ),
}
EXTRA_NAMES = {label: tuple(e[0] for e in extras) for label, extras in EXTRAS.items()}


def to_original(action, low, high, clip: bool = True):
    """``SafeRescaleAction(-1, 1)``: ``[-1, 1]^n`` onto ``[low, high]``, affinely; ``clip``: clipped to ``[-1, 1]``
    first (the C-TRPO harness clips on the navigation tasks and passes the sample unclipped on the velocity tasks,
    whose MuJoCo actuators then clamp the control while the reward's control cost sees the action as given)."""
    a = np.asarray(action, np.float64)
    a = np.clip(a, -1.0, 1.0) if clip else a
    low, high = np.asarray(low, np.float64), np.asarray(high, np.float64)
    return low + 0.5 * (a + 1.0) * (high - low)


def wrap(xp, angle):
    """``angle`` wrapped to (-pi, pi]."""
    return xp.arctan2(xp.sin(angle), xp.cos(angle))


# --------------------------------------------------------------------------- velocity tasks
# A periodic gait in the step index t (sinusoids, phases in multiples of pi/4) plus simple state
# feedback.  qpos and qvel are MuJoCo's (the original's data.qpos/qvel, saferl's state.qpos/qvel).

#: HalfCheetah (actuators bthigh, bshin, bfoot, fthigh, fshin, ffoot): a 4-step (0.2 s) gait, and
#: the front thigh and shin pushed against the body pitch rooty = qpos[2] (stops it flipping over)
CHEETAH_PERIOD = 4
CHEETAH_PHASE = np.array([1, 4, 3, 4, 5, 4]) * (math.pi / 4)
CHEETAH_PITCH_WEIGHT = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 0.0])
CHEETAH_KP, CHEETAH_KD = 2.0, 0.1

#: Hopper (actuators thigh, leg, foot): a 10-step (0.08 s) hop, feedback on the torso angle
#: rooty = qpos[2], its rate, and the forward speed qvel[0] against 0.7 m/s (the cost threshold
#: is 0.7402, so the hopper crosses it on some steps)
HOPPER_PERIOD = 10
HOPPER_PHASE = np.array([7, 7, 6]) * (math.pi / 4)
HOPPER_K_ANGLE = np.array([-1.0, -1.0, 5.0])
HOPPER_K_RATE = np.array([0.0, -0.2, -0.5])
HOPPER_K_SPEED = np.array([0.0, -0.5, -0.5])
HOPPER_TARGET_SPEED = 0.7

#: Ant (actuators hip_4, ankle_4, hip_1, ankle_1, hip_2, ankle_2, hip_3, ankle_3): an 8-step
#: (0.4 s) gait of amplitude 0.5, three joints fed back on the torso height qpos[2] against 0.6
ANT_PERIOD = 8
ANT_AMPLITUDE = 0.5
ANT_PHASE = np.array([5, 3, 3, 0, 6, 1, 5, 1]) * (math.pi / 4)
ANT_K_HEIGHT = np.array([0.0, 0.0, 2.0, 0.0, 0.0, -2.0, 0.0, 2.0])
ANT_HEIGHT = 0.6

#: Humanoid: a PD hold of every actuated joint at 0 (qpos0's pose), the hips (hip_y) swung in
#: anti-phase with a 40-step (0.6 s) period, and the abdomen (abdomen_y) leant by -0.5
HUMANOID_KP, HUMANOID_KD = 2.0, 0.1
HUMANOID_PERIOD = 40
#: the joint each actuator drives (humanoid.xml: actuator i -> joint ids 2, 1, 3, 4, ..., 17; joint
#: j >= 1 has qpos index 6 + j and qvel index 5 + j)
HUMANOID_JOINTS = np.array([2, 1, 3] + list(range(4, 18)))
HUMANOID_HIPS = np.zeros(17)
HUMANOID_HIPS[5], HUMANOID_HIPS[9] = 1.0, -1.0  # right_hip_y, left_hip_y
HUMANOID_LEAN = np.zeros(17)
HUMANOID_LEAN[0] = -0.5  # abdomen_y


def _gait(xp, t, period, phase):
    return xp.sin(2.0 * math.pi * (t * 1.0) / period + phase)


def cheetah_controller(xp, t, qpos, qvel):
    pitch = CHEETAH_KP * qpos[2] + CHEETAH_KD * qvel[2]
    return xp.clip(_gait(xp, t, CHEETAH_PERIOD, CHEETAH_PHASE) - CHEETAH_PITCH_WEIGHT * pitch, -1.0, 1.0)


def hopper_controller(xp, t, qpos, qvel):
    feedback = HOPPER_K_ANGLE * qpos[2] + HOPPER_K_RATE * qvel[2] + HOPPER_K_SPEED * (qvel[0] - HOPPER_TARGET_SPEED)
    return xp.clip(_gait(xp, t, HOPPER_PERIOD, HOPPER_PHASE) + feedback, -1.0, 1.0)


def ant_controller(xp, t, qpos, qvel):
    gait = ANT_AMPLITUDE * _gait(xp, t, ANT_PERIOD, ANT_PHASE)
    return xp.clip(gait + ANT_K_HEIGHT * (qpos[2] - ANT_HEIGHT), -1.0, 1.0)


def humanoid_controller(xp, t, qpos, qvel):
    hold = -HUMANOID_KP * qpos[6 + HUMANOID_JOINTS] - HUMANOID_KD * qvel[5 + HUMANOID_JOINTS]
    swing = _gait(xp, t, HUMANOID_PERIOD, 0.0) * HUMANOID_HIPS
    return xp.clip(hold + swing + HUMANOID_LEAN, -1.0, 1.0)


VELOCITY_CONTROLLERS = {
    "AntVelocity": ant_controller,
    "HalfCheetahVelocity": cheetah_controller,
    "HopperVelocity": hopper_controller,
    "HumanoidVelocity": humanoid_controller,
}
#: the gait alone (no feedback), the open-loop part of the trajectory actions
OPEN_LOOP_GAITS = {
    "AntVelocity": lambda t: ANT_AMPLITUDE * _gait(np, t, ANT_PERIOD, ANT_PHASE),
    "HalfCheetahVelocity": lambda t: _gait(np, t, CHEETAH_PERIOD, CHEETAH_PHASE),
    "HopperVelocity": lambda t: _gait(np, t, HOPPER_PERIOD, HOPPER_PHASE),
    "HumanoidVelocity": lambda t: _gait(np, t, HUMANOID_PERIOD, 0.0) * HUMANOID_HIPS + HUMANOID_LEAN,
}

# --------------------------------------------------------------------------- navigation tasks

POINT_TURN_GAIN = 2.0  # as common.point_goal_controller
POINT_THRUST = 0.02  # point.xml: thrust saturates at |ctrl| >= 0.05 (1.5 m/s); 0.02 settles at 0.6 m/s
PUSH_LOOKAHEAD = 0.3  # pure pursuit of the box-goal line: the target is this far ahead of the robot's projection
PUSH_CLEAR = 0.25  # the robot follows the line when it is behind the box by more than this plus |lateral| / 2
PUSH_SIDE, PUSH_BACK = 0.7, 0.8  # else it goes round the box on its own side: beside it, then behind it


def point_towards(xp, pos, heading, target):
    """[thrust, turn] of the Point robot: turn to ``target``, thrust (at most 0.02) while facing it."""
    error = wrap(xp, xp.arctan2(target[1] - pos[1], target[0] - pos[0]) - heading)
    return xp.stack([POINT_THRUST * xp.clip(xp.cos(error), 0.0, 1.0), xp.clip(POINT_TURN_GAIN * error, -1.0, 1.0)])


def point_push_controller(xp, pos, heading, box, goal):
    """PointPush1: follow the line from the box to the goal, from behind the box, so that the
    robot runs into the box and pushes it along the line (pure pursuit, lookahead 0.3).

    In the frame of the box-goal line (``u`` towards the goal, the robot at ``along``,
    ``lateral``): where ``along < -(0.25 + |lateral| / 2)`` (a cone behind the box) the target
    is the line's point 0.3 ahead of the robot's projection; elsewhere the robot goes round the
    box on its own side without pushing it the wrong way: to the point 0.7 beside the box while
    it is level with or ahead of the box and within 0.6 of the line, else to the point 0.7 to
    the side and 0.8 behind (which is inside the cone)."""
    d = goal - box
    u = d / (xp.sqrt(d[0] ** 2 + d[1] ** 2) + 1e-9)
    perp = xp.stack([-u[1], u[0]])
    r = pos - box
    along, lateral = r[0] * u[0] + r[1] * u[1], r[0] * perp[0] + r[1] * perp[1]
    side = xp.where(lateral >= 0.0, 1.0, -1.0)
    on_line = box + (along + PUSH_LOOKAHEAD) * u
    beside = box + side * PUSH_SIDE * perp
    behind = beside - PUSH_BACK * u
    detour = xp.where((along > -0.3) & (xp.abs(lateral) < 0.6), beside, behind)
    target = xp.where(along < -(PUSH_CLEAR + 0.5 * xp.abs(lateral)), on_line, detour)
    return point_towards(xp, pos, heading, target)


CAR_MOTOR_LIMIT = 0.02  # car.xml: motor forcerange +-0.02 (|ctrl| >= 0.02 saturates)
CAR_TURN_GAIN = 2.0


def car_button_controller(xp, pos, yaw, goal):
    """CarButton1: differential drive to the goal button.  ``yaw`` is the world angle of body +x;
    the car drives along body -y (angle ``yaw - pi/2``), and motor 0 alone turns it counter-
    clockwise (saferl/envs/safety_nav/car.py docstring), so ``(forward + turn, forward - turn)``, scaled
    to the motors' force limit so that the command stays proportional."""
    error = wrap(xp, xp.arctan2(goal[1] - pos[1], goal[0] - pos[0]) - (yaw - 0.5 * math.pi))
    forward = xp.clip(xp.cos(error), 0.0, 1.0)
    turn = xp.clip(CAR_TURN_GAIN * error, -1.0, 1.0)
    return CAR_MOTOR_LIMIT * xp.clip(xp.stack([forward + turn, forward - turn]), -1.0, 1.0)


RACECAR_RADIUS = 1.5  # CircleLevel0: the circle's radius
RACECAR_RADIAL_GAIN = 1.0  # rad of heading towards the circle per metre off it (clipped at 1 rad)
RACECAR_STEER_GAIN = 2.0
RACECAR_THROTTLE = 1.0  # [-1, 1] units: 20 rad/s, about 1 m/s


def racecar_circle_controller(xp, pos, heading):
    """RacecarCircle1: full throttle counter-clockwise (the reward's direction) along the tangent,
    turned towards the radius-1.5 circle by 1 rad per metre off it; steering 2 x heading error.
    It ignores the walls at |x| = 1.125, so it pays the cost on the circle's two sides."""
    rho = xp.sqrt(pos[0] ** 2 + pos[1] ** 2)
    phi = xp.arctan2(pos[1], pos[0])
    desired = phi + 0.5 * math.pi + xp.clip(RACECAR_RADIAL_GAIN * (rho - RACECAR_RADIUS), -1.0, 1.0)
    steer = xp.clip(RACECAR_STEER_GAIN * wrap(xp, desired - heading), -1.0, 1.0)
    return xp.stack([RACECAR_THROTTLE + 0.0 * steer, steer])


# --------------------------------------------------------------------------- velocity trajectories

TRAJECTORY_STEPS = 100
TRAJECTORY_RESET_SEED = 100  # the original's reset(seed) that gives the start state (then set_state)
TRAJECTORY_NOISE = 0.3
SELF_PERTURBATION = 1e-6  # added to every start velocity for the original-against-itself run


def trajectory_actions(label: str, nu: int, steps: int = TRAJECTORY_STEPS) -> np.ndarray:
    """A fixed (steps, nu) action sequence in [-1, 1]: the task's gait without feedback plus
    0.3 U(-1, 1) from a generator seeded by the task's position in :data:`TASKS`."""
    if label not in OPEN_LOOP_GAITS:
        raise ValueError(f"no trajectory actions for task {label!r} (velocity tasks: {VELOCITY_TASKS})")
    seed = [t[0] for t in TASKS].index(label)
    noise = np.random.default_rng(seed).uniform(-1.0, 1.0, (steps, nu))
    gait = np.stack([np.broadcast_to(OPEN_LOOP_GAITS[label](t), (nu,)) for t in range(steps)])
    return np.clip(gait + TRAJECTORY_NOISE * noise, -1.0, 1.0).astype(np.float32)


# --------------------------------------------------------------------------- the contact-margin probe

MARGIN_PROBE_XML = """<mujoco><worldbody>
  <geom type="plane" size="1 1 0.1" margin="0.01"/>
  <body pos="0 0 0.115"><freejoint/><geom type="sphere" size="0.1" margin="0.01"/></body>
</worldbody></mujoco>"""


def margin_probe() -> dict:
    """How this side's MuJoCo combines two geoms' margins: a sphere 0.015 above a plane, both
    with margin 0.01, makes a contact if the pair's margin is their sum (0.02), none if it is
    the larger of the two (0.01)."""
    import mujoco

    model = mujoco.MjModel.from_xml_string(MARGIN_PROBE_XML)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    contacts = [{"dist": float(c.dist), "includemargin": float(c.includemargin)} for c in data.contact[: data.ncon]]
    return {"mujoco": mujoco.__version__, "gap": 0.015, "geom_margins": [0.01, 0.01], "contacts": contacts}
