"""Where an episode's layout goes in the ``MjData`` of a navigation model (:mod:`saferl.envs.safety_nav.mjcf`).

:func:`layout_addresses` reads, from a compiled model, the ``qpos``/``qvel`` addresses of the robot's joints and of
each free object, and the ``mocap_pos`` row of each static object; :func:`place_robot`, :func:`place_free_body`
and :func:`place_mocap_body` write a layout through them (host side, NumPy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class JointAddress:
    """Where one joint's coordinates start: ``qpos[qpos:...]`` and ``qvel[qvel:...]``."""

    qpos: int
    qvel: int


@dataclass(frozen=True)
class LayoutAddresses:
    """Where a layout goes in ``MjData``.

    ``robot_joints``: each joint of the robot (root body ``agent``) by name; ``robot_qpos``/``robot_qvel``: the
    robot's slices of ``qpos``/``qvel`` (Point: x, y, heading; Car and Racecar: free joint first).
    ``free_bodies``: each free object's body name (``vase0``, ``push_box``, ``gremlin0obj``...) -> its free joint
    (7 ``qpos``: position, quaternion; 6 ``qvel``).  ``mocap_bodies``: each mocap body's name (``pillar0``,
    ``button0``, ``gremlin0mocap``...) -> its row of ``mocap_pos``/``mocap_quat``.
    """

    robot_joints: dict[str, JointAddress]
    robot_qpos: slice
    robot_qvel: slice
    free_bodies: dict[str, JointAddress]
    mocap_bodies: dict[str, int]


# Coordinates per joint type, in mujoco.mjtJoint's order: free, ball, slide, hinge.
_QPOS_WIDTH = (7, 4, 1, 1)
_QVEL_WIDTH = (6, 3, 1, 1)
_FREE_JOINT = 0


def layout_addresses(model) -> LayoutAddresses:
    """The :class:`LayoutAddresses` of a model compiled from :func:`navigation_model_xml`."""
    agent = model.body("agent").id
    robot_joints, free_bodies, mocap_bodies = {}, {}, {}
    robot_qpos_end = robot_qvel_end = 0
    for joint in range(model.njnt):
        address = JointAddress(int(model.jnt_qposadr[joint]), int(model.jnt_dofadr[joint]))
        body = int(model.jnt_bodyid[joint])
        kind = int(model.jnt_type[joint])
        if int(model.body_rootid[body]) == agent:
            robot_joints[model.joint(joint).name] = address
            robot_qpos_end = max(robot_qpos_end, address.qpos + _QPOS_WIDTH[kind])
            robot_qvel_end = max(robot_qvel_end, address.qvel + _QVEL_WIDTH[kind])
        elif kind == _FREE_JOINT:
            free_bodies[model.body(body).name] = address
    for body in range(model.nbody):
        if int(model.body_mocapid[body]) >= 0:
            mocap_bodies[model.body(body).name] = int(model.body_mocapid[body])
    robot_qpos = slice(min(address.qpos for address in robot_joints.values()), robot_qpos_end)
    robot_qvel = slice(min(address.qvel for address in robot_joints.values()), robot_qvel_end)
    return LayoutAddresses(robot_joints, robot_qpos, robot_qvel, free_bodies, mocap_bodies)


def yaw_quaternion(yaw: float) -> tuple[float, float, float, float]:
    """The (w, x, y, z) quaternion of a rotation by ``yaw`` about +z (safety-gymnasium's ``rot2quat``)."""
    return (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))


def place_robot(data, addresses: LayoutAddresses, xy, yaw: float, height: float) -> None:
    """Write the robot's place into ``data.qpos`` and zero its velocity: Point slides and hinge, or the free joint
    of Car and Racecar at ``height`` (:data:`SPAWN_HEIGHT`)."""
    joints = addresses.robot_joints
    if "x" in joints and "y" in joints and "z" in joints:
        data.qpos[joints["x"].qpos] = xy[0]
        data.qpos[joints["y"].qpos] = xy[1]
        data.qpos[joints["z"].qpos] = yaw
    else:
        start = joints["agent"].qpos
        data.qpos[start : start + 3] = (xy[0], xy[1], height)
        data.qpos[start + 3 : start + 7] = yaw_quaternion(yaw)
    data.qvel[addresses.robot_qvel] = 0.0


def place_free_body(data, addresses: LayoutAddresses, name: str, position, yaw: float = 0.0) -> None:
    """Write a free object's pose into ``data.qpos`` and zero its velocity."""
    address = addresses.free_bodies[name]
    data.qpos[address.qpos : address.qpos + 3] = position
    data.qpos[address.qpos + 3 : address.qpos + 7] = yaw_quaternion(yaw)
    data.qvel[address.qvel : address.qvel + 6] = 0.0


def place_mocap_body(data, addresses: LayoutAddresses, name: str, position, yaw: float = 0.0) -> None:
    """Write a static object's (or gremlin mocap's) pose into ``data.mocap_pos``/``data.mocap_quat``."""
    row = addresses.mocap_bodies[name]
    data.mocap_pos[row] = position
    data.mocap_quat[row] = yaw_quaternion(yaw)
