"""What both sides of the MuJoCo model check share: the tasks, the action schedule, and the model's numbers by name.

saferl writes the navigation robots and objects as MJCF itself (``saferl.envs.safety_nav.mjcf``).  The check
holds those models against the ones Safety-Gymnasium 1.0.0 builds, in two ways:

* **numbers**: :func:`model_numbers` reads a compiled model's parameters keyed by name (bodies' masses and
  inertias, each body's geoms in order, joints, actuators, sensors, equality constraints, the global options), so
  the two sides' dictionaries compare key by key whatever the order of elements in the files;
* **dynamics**: ``model_check_original.py`` records the original's episodes under :func:`schedule`'s actions
  (the MuJoCo state after every env step, the controls and the mocap positions before every ``mj_step``),
  and ``model_check_saferl.py`` replays them on saferl's model: from each recorded state one env step and from
  every 20th state twenty env steps, under the recorded controls, compared quantity by quantity.

This file is imported in both venvs (numpy and the ``mujoco`` module passed in; no JAX).
"""

from __future__ import annotations

import numpy as np

#: (label, original Gymnasium id, saferl robot, saferl objects (mjcf.navigation_model_xml's counts))
TASKS = [
    ("PointGoal1", "SafetyPointGoal1-v0", "point", {"vases": 1}),
    ("PointPush1", "SafetyPointPush1-v0", "point", {"push_box": 1, "pillars": 1}),
    ("CarButton1", "SafetyCarButton1-v0", "car", {"buttons": 4, "gremlins": 4}),
    ("RacecarCircle1", "SafetyRacecarCircle1-v0", "racecar", {}),
]
EPISODES = 4
SEGMENT_STEPS = 10
#: the episode's action kinds, SEGMENT_STEPS env steps each; "scripted" is the task's controller
SEGMENTS = (
    "scripted",
    "scripted",
    "random",
    "outside the box",
    "full forward",
    "reverse at full lock",
    "full turn",
    "scripted",
)
STEPS = SEGMENT_STEPS * len(SEGMENTS)
WINDOW = 20  # env steps of the k-step comparison, from every WINDOW-th recorded state
#: constant actions in [-1, 1]^2 units (before the affine map onto the actuators' range), per robot:
#: Point (thrust, turn), Car (left motor, right motor), Racecar (wheel speed, steering)
CONSTANT_ACTIONS = {
    "point": {"full forward": (1.0, 0.0), "reverse at full lock": (-1.0, 1.0), "full turn": (0.0, 1.0)},
    "car": {"full forward": (1.0, 1.0), "reverse at full lock": (-1.0, -0.2), "full turn": (1.0, -1.0)},
    "racecar": {"full forward": (1.0, 0.0), "reverse at full lock": (-1.0, 1.0), "full turn": (1.0, 1.0)},
}


def segment_of(t: int) -> str:
    return SEGMENTS[t // SEGMENT_STEPS]


def unscripted_action(robot: str, t: int, rng: np.random.Generator) -> np.ndarray | None:
    """The action of step ``t`` in [-1, 1]^2 units (``outside the box``: in [-2, 2]^2), or None where scripted."""
    kind = segment_of(t)
    if kind == "scripted":
        return None
    if kind == "random":
        return rng.uniform(-1.0, 1.0, 2)
    if kind == "outside the box":
        return rng.uniform(-2.0, 2.0, 2)
    return np.asarray(CONSTANT_ACTIONS[robot][kind], np.float64)


def affine(action, low, high) -> np.ndarray:
    """[-1, 1] onto [low, high], affinely and without clipping (the env's own clip then applies)."""
    low, high = np.asarray(low, np.float64), np.asarray(high, np.float64)
    return low + 0.5 * (np.asarray(action, np.float64) + 1.0) * (high - low)


# --------------------------------------------------------------------------- the model's numbers by name

BODY_FIELDS = ("body_mass", "body_inertia", "body_ipos", "body_iquat")
CHILD_BODY_FIELDS = ("body_pos", "body_quat")  # a robot's inner frames; roots are placed by the layout
GEOM_FIELDS = (
    "geom_type", "geom_size", "geom_pos", "geom_quat", "geom_friction", "geom_condim", "geom_contype",
    "geom_conaffinity", "geom_solref", "geom_solimp", "geom_solmix", "geom_margin", "geom_gap", "geom_priority",
)  # fmt: skip
JOINT_FIELDS = ("jnt_type", "jnt_pos", "jnt_axis", "jnt_range", "jnt_limited", "jnt_stiffness", "jnt_solref")
DOF_FIELDS = ("dof_damping", "dof_armature", "dof_frictionloss")
ACTUATOR_FIELDS = (
    "actuator_trntype", "actuator_dyntype", "actuator_gaintype", "actuator_biastype", "actuator_gear",
    "actuator_gainprm", "actuator_biasprm", "actuator_ctrlrange", "actuator_forcerange", "actuator_ctrllimited",
    "actuator_forcelimited",
)  # fmt: skip
SENSOR_FIELDS = ("sensor_type", "sensor_objtype", "sensor_dim", "sensor_noise", "sensor_cutoff")
EQUALITY_FIELDS = ("eq_type", "eq_data", "eq_solref", "eq_solimp")
OPTION_FIELDS = (
    "timestep", "gravity", "integrator", "cone", "impratio", "iterations", "tolerance", "noslip_iterations",
    "o_margin", "disableflags", "enableflags", "density", "viscosity", "wind",
)  # fmt: skip
PARAMETER_COUNTS = {"actuator_gainprm": 3, "actuator_biasprm": 3}  # the entries the types used here read
#: integer fields whose values are MuJoCo enums (numbered differently across releases): compared by name
ENUMS = {
    "geom_type": "mjtGeom", "jnt_type": "mjtJoint", "actuator_trntype": "mjtTrn", "actuator_dyntype": "mjtDyn",
    "actuator_gaintype": "mjtGain", "actuator_biastype": "mjtBias", "sensor_type": "mjtSensor",
    "sensor_objtype": "mjtObj", "eq_type": "mjtEq", "integrator": "mjtIntegrator", "cone": "mjtCone",
}  # fmt: skip


def _as_list(mujoco, field: str, value) -> list:
    row = np.atleast_1d(np.asarray(value, np.float64)).ravel()
    if field in ENUMS:
        return [getattr(mujoco, ENUMS[field])(int(v)).name for v in row]
    return [float(v) for v in row[: PARAMETER_COUNTS.get(field, row.size)]]


def _name(mujoco, model, kind: str, index: int) -> str:
    return mujoco.mj_id2name(model, getattr(mujoco.mjtObj, kind), index) or f"#{index}"


def body_name(mujoco, model, body: int) -> str:
    """A body's name, or ``#index`` for an unnamed one (the Racecar's differential carrier)."""
    return _name(mujoco, model, "mjOBJ_BODY", body)


def model_numbers(mujoco, model, body_ids: list[int]) -> dict[str, list | None]:
    """``model``'s parameters of the bodies ``body_ids`` (their colliding geoms, joints), the world's colliding
    geoms (the floor), every actuator, sensor and equality constraint, and the options, as
    ``{"kind name field": values}``; None where this MuJoCo has no such field.  Geoms are numbered among their
    body's colliding geoms (contype or conaffinity non-zero): visual geoms carry no mass here or there."""
    out: dict[str, list | None] = {}

    def put(key: str, field: str, index: int) -> None:
        values = getattr(model, field, None)
        out[f"{key} {field}"] = None if values is None else _as_list(mujoco, field, values[index])

    colliding = (model.geom_contype != 0) | (model.geom_conaffinity != 0)
    for body in [0, *body_ids]:
        name = _name(mujoco, model, "mjOBJ_BODY", body)
        if body:
            for field in BODY_FIELDS + (CHILD_BODY_FIELDS if model.body_parentid[body] != 0 else ()):
                put(f"body {name}", field, body)
        for k, geom in enumerate(np.flatnonzero((model.geom_bodyid == body) & colliding)):
            for field in GEOM_FIELDS:
                put(f"geom {name}[{k}]", field, geom)
    for j in np.flatnonzero(np.isin(model.jnt_bodyid, body_ids)):
        for field in JOINT_FIELDS:
            put(f"joint {_name(mujoco, model, 'mjOBJ_JOINT', j)}", field, j)
        for field in DOF_FIELDS:
            put(f"joint {_name(mujoco, model, 'mjOBJ_JOINT', j)}", field, model.jnt_dofadr[j])
    for kind, count, fields in (
        ("mjOBJ_ACTUATOR", model.nu, ACTUATOR_FIELDS),
        ("mjOBJ_SENSOR", model.nsensor, SENSOR_FIELDS),
        ("mjOBJ_EQUALITY", model.neq, EQUALITY_FIELDS),
    ):
        for i in range(count):
            for field in fields:
                put(f"{kind[6:].lower()} {_name(mujoco, model, kind, i)}", field, i)
    for field in OPTION_FIELDS:
        value = getattr(model.opt, field, None)
        out[f"option {field}"] = None if value is None else _as_list(mujoco, field, value)
    return out


def robot_bodies(mujoco, model) -> list[int]:
    """The robot's bodies (the ``agent`` body's subtree) and the free objects' bodies."""
    agent = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "agent")
    ids = []
    for b in range(1, model.nbody):
        root = b
        while model.body_parentid[root] != 0:
            root = model.body_parentid[root]
        free = model.body_jntnum[b] > 0 and model.jnt_type[model.body_jntadr[b]] == mujoco.mjtJoint.mjJNT_FREE
        if root == agent or free:
            ids.append(b)
    return ids


def weld_relpose(mujoco, model) -> dict[str, list[float]]:
    """Each named weld's ``relpose`` (position, quaternion: ``eq_data[3:10]``, MuJoCo 2.3-4.0's layout)."""
    return {
        _name(mujoco, model, "mjOBJ_EQUALITY", e): model.eq_data[e, 3:10].tolist()
        for e in range(model.neq)
        if model.eq_type[e] == mujoco.mjtEq.mjEQ_WELD
    }


# --------------------------------------------------------------------------- the MuJoCo state by name


def joint_slices(mujoco, model) -> dict[str, tuple[slice, slice]]:
    """Joint name -> (its qpos slice, its qvel slice)."""
    widths = {0: (7, 6), 1: (4, 3), 2: (1, 1), 3: (1, 1)}  # free, ball, slide, hinge
    out = {}
    for j in range(model.njnt):
        nq, nv = widths[int(model.jnt_type[j])]
        q, v = model.jnt_qposadr[j], model.jnt_dofadr[j]
        out[mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j)] = (slice(q, q + nq), slice(v, v + nv))
    return out


def sensor_slices(mujoco, model) -> dict[str, slice]:
    return {
        mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_SENSOR, s): slice(
            model.sensor_adr[s], model.sensor_adr[s] + model.sensor_dim[s]
        )
        for s in range(model.nsensor)
    }


def mocap_names(mujoco, model) -> list[str]:
    """Mocap bodies' names in mocap order."""
    names = [""] * model.nmocap
    for b in range(model.nbody):
        if model.body_mocapid[b] >= 0:
            names[model.body_mocapid[b]] = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b)
    return names


def read_state(mujoco, model, data) -> dict:
    """The MuJoCo state after an env step, by name: per joint qpos, qvel, qacc_warmstart; per sensor its reading;
    the contacts as body-name pairs (diagnosis only)."""
    joints = joint_slices(mujoco, model)
    body = lambda geom: _name(mujoco, model, "mjOBJ_BODY", model.geom_bodyid[geom])  # noqa: E731
    contacts = sorted(f"{body(c.geom1)}-{body(c.geom2)}" for c in data.contact[: data.ncon])
    return {
        "contacts": contacts,
        "qpos": {j: data.qpos[q].tolist() for j, (q, _) in joints.items()},
        "qvel": {j: data.qvel[v].tolist() for j, (_, v) in joints.items()},
        "warmstart": {j: data.qacc_warmstart[v].tolist() for j, (_, v) in joints.items()},
        "sensors": {s: data.sensordata[a].tolist() for s, a in sensor_slices(mujoco, model).items()},
    }
