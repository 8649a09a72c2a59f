"""The navigation tasks on MuJoCo itself: a task's world stepped by MuJoCo's C library from inside the compiled step.

``physics="mujoco"`` in a navigation task's parameters replaces the planar robot model with the MuJoCo model of
:mod:`saferl.envs.safety_nav.mjcf` (Safety-Gymnasium 1.0.0's robot and colliding objects, written from its
numbers), stepped on the host through :class:`saferl.envs.mujoco_host.HostPhysics` (``jax.pure_callback``; the
step stays a pure, vmappable function of JAX arrays, and the training loop one compiled program).  What the task
computes in JAX stays the same on both physics: the layout, the lidar, the reward, the cost and the goal's
resampling read positions; only the robot's motion, the movable objects' motion and the robot's sensors come from
MuJoCo.

:class:`NavWorld` holds one task's model (one per task and level: every episode sets its layout through the
data, so one compiled program serves them all), the addresses of the robot's joints and of each object in
``qpos``/``qvel``/``mocap_pos``, and the host stepper.  :class:`MujocoState` is what a task's state carries
between env steps under this physics: the integration state (``qpos``, ``qvel``, ``qacc_warmstart``), the static
objects' places (``mocap_pos``) and the sensor readings of the last step.

``physics="mjx"`` steps the same model with MJX inside the compiled program instead (float32, for an accelerator;
:meth:`NavWorld.step`), where MJX has a collision function for every pair of geom types the model can collide:
PointGoal1's spheres, boxes and plane.  A world whose geoms need one MJX lacks (a cylinder against a box: the
pillars, the Car's and the Racecar's wheels) is refused when it is built, in one line naming two geoms that need it
(:func:`mjx_model`).  CarButton1 counts its button and gremlin contacts from MuJoCo C's contact list, so it runs on
``"mujoco"`` only.

Where this differs from Safety-Gymnasium's own stepping:

* The integration state lives in JAX between env steps in float32 (x64 is off), so every env step starts from
  MuJoCo's float64 state rounded to float32 (a relative perturbation of ~6e-8 per step), as on the velocity
  tasks (:mod:`saferl.envs.mujoco_host`).
* Safety-Gymnasium writes a new XML per episode, with every object at its sampled place; here one model serves
  every episode, with the layout written into ``qpos`` and ``mocap_pos`` (:mod:`saferl.envs.safety_nav.mjcf`).
* The reset observation's sensors are those of a robot at rest (accelerometer +9.81 on z, velocimeter and gyro
  zero, the magnetic field rotated into the robot's frame), computed in JAX: Safety-Gymnasium reads them from the
  data after building the world, where the robot rests on the floor and reads the same up to the floor contact's
  first transient.
"""

from __future__ import annotations

import importlib.metadata

import jax
import jax.numpy as jnp
import numpy as np

from saferl.envs.mujoco_host import HostPhysics
from saferl.envs.safety_nav import mjcf, mjcf_layout
from saferl.envs.safety_nav.car import quat_to_matrix
from saferl.foundation import struct

#: a navigation task's physics backends (the parameter ``physics``)
NAV_PHYSICS = ("planar", "mujoco", "mjx")
#: the backends that step the MuJoCo model: MuJoCo's C library on the host, or MJX inside the compiled program
SIMULATED_PHYSICS = ("mujoco", "mjx")
#: the robot sensors Safety-Gymnasium observes, in observation order (``bases/base_agent.py``, ``SensorConf``)
OBSERVED_SENSORS = ("accelerometer", "velocimeter", "gyro", "magnetometer")
#: each robot's sensors read as they are, in observation order: ``SensorConf.sensors``, then the ball joints'
#: angular velocities (``BaseAgent.obs_sensor``: explicit sensors, hinge velocities, ball angular velocities, ...)
ROBOT_SENSORS = {"point": OBSERVED_SENSORS, "car": (*OBSERVED_SENSORS, "ballangvel_rear"), "racecar": OBSERVED_SENSORS}
#: each robot's ball-joint quaternion sensors, observed last as 3x3 rotation matrices (``obs_sensor`` with
#: ``sensors_angle_components``: ``quat2mat``, MuJoCo's ``mju_quat2Mat``, row-major)
ROBOT_QUATERNION_SENSORS = {"point": (), "car": ("ballquat_rear",), "racecar": ()}


@struct.dataclass
class MujocoState:
    """What a navigation task's state carries under ``physics="mujoco"``."""

    qpos: jax.Array  # (nq,)
    qvel: jax.Array  # (nv,)
    qacc_warmstart: jax.Array  # (nv,)
    mocap_pos: jax.Array  # (nmocap, 3): the static objects' places (a layout's pillars, buttons)
    sensors: jax.Array  # (n_sensors,) the observed sensors after the last step


def yaw_quaternion(yaw) -> jax.Array:
    """The (w, x, y, z) quaternion of a rotation by ``yaw`` about +z (safety-gymnasium's ``rot2quat``)."""
    half = jnp.asarray(yaw, jnp.float32) / 2
    zero = jnp.zeros_like(half)
    return jnp.stack([jnp.cos(half), zero, zero, jnp.sin(half)])


def check_physics(physics: str, world=None) -> None:
    """A one-line error for a physics a navigation task does not have; for ``"mjx"``, ``world()`` (the task's world
    on MJX) is built, which raises one where MJX lacks a collision the task's geometry needs."""
    if physics not in NAV_PHYSICS:
        raise ValueError(f"physics {physics!r} is not a navigation physics; allowed: {', '.join(NAV_PHYSICS)}")
    if physics == "mjx" and world is not None:
        world()


def simulated(physics: str) -> bool:
    """Whether ``physics`` steps the MuJoCo model (``"mujoco"`` or ``"mjx"``), not the planar one."""
    return physics in SIMULATED_PHYSICS


def _colliding_pairs(model):
    """The geom pairs MuJoCo's collision filter lets through (``engine_collision_driver.c``: not in one body, not a
    body and its parent's unless either is the world, ``contype``/``conaffinity`` bits shared), with explicit pairs."""
    weld = model.body_weldid
    parent = weld[model.body_parentid[weld]]
    for g1 in range(model.ngeom):
        for g2 in range(g1 + 1, model.ngeom):
            b1, b2 = weld[model.geom_bodyid[g1]], weld[model.geom_bodyid[g2]]
            if b1 == b2 or (b1 and b2 and (parent[b1] == b2 or parent[b2] == b1)):
                continue
            if (model.geom_contype[g1] & model.geom_conaffinity[g2]) or (
                model.geom_contype[g2] & model.geom_conaffinity[g1]
            ):
                yield g1, g2
    for g1, g2 in zip(model.pair_geom1, model.pair_geom2):
        yield int(g1), int(g2)


def _geom_label(model, geom: int) -> str:
    """A geom's name, or ``a geom of BODY`` for an unnamed one."""
    return model.geom(geom).name or f"a geom of {model.body(int(model.geom_bodyid[geom])).name}"


def mjx_model(model, task: str):
    """``(mjx.Model, mjx.Data)`` of ``model``; where MJX has no collision function for a pair of geom types the
    model can collide, a one-line ``ValueError`` naming the task, the types and two geoms that need it."""
    import re

    from mujoco import mjx

    try:
        put = mjx.put_model(model)
    except NotImplementedError as err:
        import mujoco

        missing = [name.lower() for name in re.findall(r"mjGEOM_(\w+)", str(err))]
        example = ""
        for g1, g2 in _colliding_pairs(model):
            kinds = [mujoco.mjtGeom(int(model.geom_type[g])).name.removeprefix("mjGEOM_").lower() for g in (g1, g2)]
            if sorted(kinds) == sorted(missing):
                example = f" ({_geom_label(model, g1)} and {_geom_label(model, g2)})"
                break
        try:
            version = importlib.metadata.version("mujoco-mjx")
        except importlib.metadata.PackageNotFoundError:
            version = mujoco.__version__
        raise ValueError(
            f"{task}: physics 'mjx' needs {'-'.join(missing) or 'a'} collisions{example}, which MJX {version} does "
            "not have; use physics 'mujoco' (MuJoCo's C library on the host)"
        ) from None
    return put, mjx.make_data(put)


class NavWorld:
    """One navigation task's MuJoCo world: the model, where each thing lives in the data, and the host stepper.

    ``robot`` is ``"point"``, ``"car"`` or ``"racecar"``; ``objects`` the colliding objects' counts, as
    :func:`saferl.envs.safety_nav.mjcf.navigation_model_xml` takes them.
    """

    def __init__(
        self,
        robot: str,
        objects: dict[str, int] | None = None,
        threads: int | None = None,
        backend: str = "mujoco",
        task: str = "this task",
    ):
        import mujoco  # the main dependency set has it; imported here so that importing the family stays cheap

        if backend not in SIMULATED_PHYSICS:
            raise ValueError(f"a MuJoCo world steps on {' or '.join(SIMULATED_PHYSICS)}, not {backend!r}")
        self.robot, self.backend = robot, backend
        self.model = mjcf.load_model(robot, objects)
        self.mjx = mjx_model(self.model, task) if backend == "mjx" else None
        self.addresses = mjcf_layout.layout_addresses(self.model)
        # forward: the sensors read the state after the steps (Underlying.simulation_forward's closing mj_forward)
        self.host = HostPhysics(mujoco, self.model, fields=("sensordata",), forward=True, threads=threads)
        self.qpos0 = np.asarray(self.model.qpos0, np.float32)
        mocap_rows = np.argsort(self.model.body_mocapid)[self.model.nbody - self.model.nmocap :]
        self.mocap_pos0 = np.asarray(self.model.body_pos[mocap_rows], np.float32).reshape(-1, 3)
        self.sensor_index = self._sensor_rows(ROBOT_SENSORS[robot])
        self.quaternion_index = self._sensor_rows(ROBOT_QUATERNION_SENSORS[robot]).reshape(-1, 4)
        joints = self.addresses.robot_joints
        if robot == "point":
            self.planar_qpos = (joints["x"].qpos, joints["y"].qpos, joints["z"].qpos)
            self.planar_qvel = (joints["x"].qvel, joints["y"].qvel, joints["z"].qvel)

    def _sensor_rows(self, names) -> np.ndarray:
        """The rows of ``sensordata`` that the sensors ``names`` fill, in that order."""
        rows = [np.arange(s.adr[0], s.adr[0] + s.dim[0]) for s in (self.model.sensor(name) for name in names)]
        return np.concatenate(rows) if rows else np.zeros((0,), int)

    @property
    def free_robot(self) -> bool:
        """Whether the robot hangs on a free joint (Car, Racecar), not on slides and a hinge (Point)."""
        return "agent" in self.addresses.robot_joints

    def observed_sensors(self, sensordata) -> jax.Array:
        """The robot's sensor readings in observation order from a ``sensordata`` row (quaternions as matrices)."""
        matrices = [quat_to_matrix(sensordata[rows]).reshape(9) for rows in self.quaternion_index]
        return jnp.concatenate([sensordata[self.sensor_index], *matrices])

    # ---------------------------------------------------------------- the layout

    def initial_state(
        self, robot_xy, robot_yaw, free_bodies: dict, mocap_bodies: dict, sensors, free_body_yaws: dict | None = None
    ) -> MujocoState:
        """The state of a new episode: the robot at ``robot_xy`` facing ``robot_yaw`` and at rest, each free object
        (name -> ``(x, y, z)``, turned by ``free_body_yaws[name]`` where given) and each static object (name ->
        ``(x, y, z)``) at its place, and the reset observation's ``sensors``."""
        free_body_yaws = free_body_yaws or {}
        qpos = jnp.asarray(self.qpos0)
        if self.free_robot:  # the free joint: position at the spawn height, then the yaw's quaternion
            start = self.addresses.robot_joints["agent"].qpos
            place = jnp.stack([robot_xy[0], robot_xy[1], jnp.asarray(mjcf.SPAWN_HEIGHT[self.robot], jnp.float32)])
            qpos = qpos.at[start : start + 3].set(place).at[start + 3 : start + 7].set(yaw_quaternion(robot_yaw))
        else:
            x, y, yaw = self.planar_qpos
            qpos = qpos.at[x].set(robot_xy[0]).at[y].set(robot_xy[1]).at[yaw].set(robot_yaw)
        for name, place in free_bodies.items():
            start = self.addresses.free_bodies[name].qpos
            turn = yaw_quaternion(free_body_yaws.get(name, 0.0))
            qpos = qpos.at[start : start + 3].set(place).at[start + 3 : start + 7].set(turn)
        mocap_pos = jnp.asarray(self.mocap_pos0)
        for name, place in mocap_bodies.items():
            mocap_pos = mocap_pos.at[self.addresses.mocap_bodies[name]].set(place)
        zeros = jnp.zeros((self.model.nv,), jnp.float32)
        return MujocoState(qpos.astype(jnp.float32), zeros, zeros, mocap_pos, jnp.asarray(sensors, jnp.float32))

    # ---------------------------------------------------------------- a step

    def step(self, state: MujocoState, ctrl, frame_skip: int) -> MujocoState:
        """``frame_skip`` MuJoCo steps from ``state`` with ``ctrl`` held (MuJoCo clamps it to each actuator's
        ``ctrlrange``, as Safety-Gymnasium's ``apply_action`` does)."""
        if self.mjx is not None:
            return self._mjx_step(state, ctrl, frame_skip)
        mocap = {"mocap_pos": state.mocap_pos} if self.model.nmocap else {}
        data = self.host(state.qpos, state.qvel, state.qacc_warmstart, ctrl, frame_skip, **mocap)
        sensors = self.observed_sensors(data.sensordata)
        return MujocoState(data.qpos, data.qvel, data.qacc_warmstart, state.mocap_pos, sensors)

    def _mjx_step(self, state: MujocoState, ctrl, frame_skip: int) -> MujocoState:
        """:meth:`step` on MJX: ``frame_skip`` ``mjx.step``s (float32), then ``mjx.forward`` for the sensors, as
        the host path's closing ``mj_forward``; ``ctrl`` clamped to the actuators' ``ctrlrange`` as MuJoCo C
        clamps it."""
        from mujoco import mjx

        model, data = self.mjx
        limited = np.asarray(self.model.actuator_ctrllimited, bool)
        ranges = np.asarray(self.model.actuator_ctrlrange, np.float32)
        ctrl = jnp.clip(ctrl, np.where(limited, ranges[:, 0], -np.inf), np.where(limited, ranges[:, 1], np.inf))
        data = data.replace(
            qpos=state.qpos, qvel=state.qvel, qacc_warmstart=state.qacc_warmstart, ctrl=ctrl, mocap_pos=state.mocap_pos
        )
        data = jax.lax.fori_loop(0, frame_skip, lambda _, d: mjx.step(model, d), data)
        data = mjx.forward(model, data)
        sensors = self.observed_sensors(data.sensordata)
        return MujocoState(data.qpos, data.qvel, data.qacc_warmstart, state.mocap_pos, sensors)

    # ---------------------------------------------------------------- reading the state

    def point_motion(self, state: MujocoState):
        """The Point's ``(pos, heading, vel, ang_vel)`` as the planar model keeps them (world frame)."""
        x, y, yaw = self.planar_qpos
        vx, vy, wz = self.planar_qvel
        pos = jnp.stack([state.qpos[x], state.qpos[y]])
        vel = jnp.stack([state.qvel[vx], state.qvel[vy]])
        return pos, state.qpos[yaw], vel, state.qvel[wz]

    def free_robot_motion(self, state: MujocoState):
        """A free-jointed robot's ``(pos, yaw, vel, yaw_rate)``: the body origin on the floor, the yaw of its x axis,
        the world-frame velocity of its origin (a free joint's linear ``qvel``) and the world-frame yaw rate (its
        angular ``qvel`` is in the body frame, rotated here)."""
        q, v = self.addresses.robot_joints["agent"].qpos, self.addresses.robot_joints["agent"].qvel
        rotation = quat_to_matrix(state.qpos[q + 3 : q + 7])
        yaw = jnp.arctan2(rotation[1, 0], rotation[0, 0])
        yaw_rate = rotation[2] @ state.qvel[v + 3 : v + 6]
        return state.qpos[q : q + 2], yaw, state.qvel[v : v + 2], yaw_rate

    def free_body_yaw(self, state: MujocoState, name: str) -> jax.Array:
        """The yaw of a free object's x axis (from its free joint's quaternion)."""
        start = self.addresses.free_bodies[name].qpos
        rotation = quat_to_matrix(state.qpos[start + 3 : start + 7])
        return jnp.arctan2(rotation[1, 0], rotation[0, 0])

    def free_body_xy(self, state: MujocoState, names) -> jax.Array:
        """The ``(n, 2)`` places on the floor of the free objects ``names``."""
        starts = [self.addresses.free_bodies[name].qpos for name in names]
        if not starts:
            return jnp.zeros((0, 2), jnp.float32)
        return jnp.stack([state.qpos[start : start + 2] for start in starts])
