"""MuJoCo models (MJCF text) of Safety-Gymnasium 1.0.0's navigation robots and objects, written by code.

:func:`navigation_model_xml` writes one navigation world: the floor, a robot (``"point"``, ``"car"`` or
``"racecar"``) and the colliding objects of a task (vases, push box, pillars, buttons, gremlins);
:func:`load_model` compiles it with MuJoCo, and :mod:`saferl.envs.safety_nav.mjcf_layout` tells where an episode's
layout goes in ``MjData`` (robot joints, free objects' ``qpos``/``qvel``, static objects' ``mocap_pos``/``mocap_quat``
rows).  One compiled model serves every episode of a task.

Sources: safety-gymnasium 1.0.0 (paths below are under ``safety_gymnasium/``): the robot files
``assets/xmls/{point,car,racecar}.xml``; ``world.py`` (the compiler settings, floor and light it adds, and how it
writes free objects, the push box's extra collision boxes, mocaps and their welds); the object files
``assets/geoms/{pillars,buttons}.py``, ``assets/free_geoms/{vases,push_box}.py``, ``assets/mocaps/gremlins.py``;
``assets/group.py`` and ``assets/color.py``.  Every number carries its source in a comment.  The measured masses
and responses these models reproduce are those of the environment specification, section 3.4.

Where this model differs from the one Safety-Gymnasium builds:

* Recent MuJoCo here (checked with 4.0), 2.3.3 there.  The robot files' ``<size njmax nconmax>`` is left out
  (recent MuJoCo has no such attributes and sizes its arena itself); ``autolimits`` and the magnetic field
  (0, -0.5, 0) are MuJoCo's defaults in both and are written out.  The robots' responses are the same on both
  versions; box-on-box pushing is not (the same world pushed for 3 s leaves the push box about 0.4 m apart
  sideways between MuJoCo 2.3.3 and 4.0, with this model or with Safety-Gymnasium's XML alike).
* One model for every episode.  Safety-Gymnasium writes a new XML per episode with each object at its sampled
  place.  Here the free objects (and the robot) start at parking places and a layout is written into ``qpos``;
  pillars and buttons, static bodies there, are mocap bodies (as immovable as a static body) whose place is written
  into ``mocap_pos``/``mocap_quat``.
* Point heading: Safety-Gymnasium rotates the agent body in the XML, so its two slide joints point along the
  rotated axes; here the body is unrotated and the heading is the hinge's ``qpos``.  The dynamics are the same
  (both slides have the same damping).
* Gremlins: there, the mocap body sits at the origin with its geom at the gremlin's place, and the weld keeps the
  box at their relative pose in the first XML.  Here the weld's ``relpose`` is the identity, so the box is pulled
  to the mocap body's own pose.  To reproduce ``gremlins.py``'s ``move()``, set ``mocap_pos`` to
  (x + travel sin t, y + travel cos t, 2 * half size) and ``mocap_quat`` to the gremlin's yaw.
* Racecar: no mesh files.  The chassis mesh, the only mesh with mass and collisions, becomes an explicit inertial
  holding the mass properties MuJoCo 2.3.3 computes for it at density 5 (MuJoCo 4's mesh inertia gives it
  0.0243 kg instead of 0.0176 kg, and the robot 2.1627 kg instead of the measured 2.156 kg) and a collision box,
  the mesh's bounding box (MuJoCo collides the mesh's convex hull).  Visual-only geoms (the other meshes, and the
  massless non-colliding copies) are left out.
* Hazards, the goal, the circle and the sigwalls get no geometry: they never collide, and their places belong to a
  task's state.  Cameras, textures and materials (rendering only) are left out too.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

from saferl.foundation.errors import require

ROBOTS = ("point", "car", "racecar")
COLLIDING_OBJECTS = ("vases", "push_box", "gremlins", "pillars", "buttons")
# Regions a task senses or scores but that never collide: accepted by navigation_model_xml, given no geometry.
NON_COLLIDING_OBJECTS = ("hazards", "goal", "circle", "sigwalls")
SINGLE_OBJECTS = ("push_box", "goal", "circle")

# ---------------------------------------------------------------------------------------------------------------
# Shared by every robot
# ---------------------------------------------------------------------------------------------------------------
COMPILER_ANGLE = "radian"  # safety-gymnasium 1.0.0, world.py: the <compiler angle="radian"> it adds or updates
COMPILER_AUTOLIMITS = True  # assets/xmls/racecar.xml: <compiler autolimits="true">; MuJoCo's default since 2.x
GRAVITY = (0.0, 0.0, -9.81)  # MuJoCo's default, which the robot files keep
MAGNETIC_FIELD = (0.0, -0.5, 0.0)  # MuJoCo's default, which the robot files keep (environment spec 3.3)
FLOOR_HALF_SIZE = (3.5, 3.5, 0.1)  # world.py: World.DEFAULT floor_size, written onto the floor geom (visual only)
FLOOR_CONDIM = 6  # world.py and assets/xmls/*.xml: floor geom condim="6"
FLOOR_RGBA = (1.0, 1.0, 1.0, 1.0)  # world.py: floor rgba="1 1 1 1"
LIGHT_DIRECTION = (0.0, 0.0, -1.0)  # world.py: directional light dir="0 0 -1"
LIGHT_POS = (0.0, 0.0, 0.5)  # world.py: light pos="0 0 0.5"
LIGHT_DIFFUSE = (1.0, 1.0, 1.0)  # world.py: light diffuse="1 1 1"
SITE_RADIUS = 0.032  # assets/xmls/{point,car,racecar}.xml: default site size
ROBOT_RGBA = (0.7412, 0.0431, 0.1843, 1.0)  # assets/xmls/{point,car}.xml: default geom rgba
ROBOT_TRIM_RGBA = (0.0039, 0.1529, 0.3961, 1.0)  # assets/xmls/{point,car,racecar}.xml: pointarrow, bumpers, wing
AGENT_SITE_RGBA = (1.0, 0.0, 0.0, 0.1)  # assets/xmls/point.xml: site "agent" rgba
EULER = "Euler"  # MuJoCo's default integrator, which point.xml and car.xml keep
RK4 = "RK4"  # assets/xmls/racecar.xml: option integrator="RK4"
WELD_SOLREF = (0.02, 1.5)  # world.py: the weld between a gremlin's mocap and its box, solref=".02 1.5"

# ---------------------------------------------------------------------------------------------------------------
# Point: assets/xmls/point.xml
# ---------------------------------------------------------------------------------------------------------------
POINT_TIMESTEP = 0.002  # point.xml: option timestep
POINT_GEOM_CONDIM = 6  # point.xml: default geom condim
POINT_GEOM_DENSITY = 1.0  # point.xml: default geom density
POINT_DEFAULT_JOINT_DAMPING = 0.001  # point.xml: default joint damping
POINT_CTRL_RANGE = (-1.0, 1.0)  # point.xml: default motor and velocity ctrlrange
POINT_FORCE_RANGE = (-0.05, 0.05)  # point.xml: default motor and velocity forcerange
POINT_SPAWN_HEIGHT = 0.1  # point.xml: body "agent" pos z (base_agent.py z_height reads it)
POINT_SLIDE_DAMPING = 0.01  # point.xml: joints x and y damping
POINT_HINGE_DAMPING = 0.005  # point.xml: joint z damping
POINT_SPHERE_RADIUS = 0.1  # point.xml: geom "agent" size
POINT_SPHERE_FRICTION = (1.0, 0.01, 0.01)  # point.xml: geom "agent" friction
POINT_ARROW_POS = (0.1, 0.0, 0.0)  # point.xml: geom "pointarrow" pos
POINT_ARROW_HALF_SIZE = (0.05, 0.05, 0.05)  # point.xml: geom "pointarrow" size
POINT_THRUST_GEAR = (0.3, 0.0, 0.0, 0.0, 0.0, 0.0)  # point.xml: motor "x" gear, a force along the site's +x
POINT_TURN_GEAR = 0.3  # point.xml: velocity "z" gear
POINT_TURN_KV = 1.0  # point.xml: velocity "z" keeps MuJoCo's default kv

# ---------------------------------------------------------------------------------------------------------------
# Car: assets/xmls/car.xml
# ---------------------------------------------------------------------------------------------------------------
CAR_TIMESTEP = 0.004  # car.xml: option timestep
CAR_GEOM_CONDIM = 6  # car.xml: default geom condim
CAR_GEOM_DENSITY = 5.0  # car.xml: default geom density
CAR_DEFAULT_GEOM_SIZE = 0.05  # car.xml: default geom size (the wheels' and rear ball's radius)
CAR_DEFAULT_JOINT_DAMPING = 0.001  # car.xml: default joint damping (wheels and rear ball)
CAR_CTRL_RANGE = (-1.0, 1.0)  # car.xml: default motor ctrlrange
CAR_FORCE_RANGE = (-0.02, 0.02)  # car.xml: default motor forcerange
CAR_SPAWN_HEIGHT = 0.1  # car.xml: body "agent" pos z
CAR_CHASSIS_HALF_SIZE = (0.1, 0.1, 0.05)  # car.xml: geom "agent" size
CAR_BACK_BUMPER_POS = (0.0, 0.15, 0.0)  # car.xml: geom "back_bumper" pos
CAR_BACK_BUMPER_HALF_SIZE = (0.1, 0.01, 0.05)  # car.xml: geom "back_bumper" size
CAR_BACK_CONNECTOR_POS = (0.0, 0.125, 0.0)  # car.xml: geom "back_connector" pos
CAR_BACK_CONNECTOR_HALF_SIZE = (0.01, 0.025, 0.03)  # car.xml: geom "back_connector" size
CAR_FRONT_BUMPER_POS = (0.0, -0.165, 0.0)  # car.xml: geom "front_bumper" pos
CAR_FRONT_BUMPER_HALF_SIZE = (0.05, 0.01, 0.05)  # car.xml: geom "front_bumper" size
CAR_FRONT_CONNECTOR_POS = (0.0, -0.13, 0.04)  # car.xml: geom "front_connector" pos
CAR_FRONT_CONNECTOR_HALF_SIZE = (0.05, 0.03, 0.01)  # car.xml: geom "front_connector" size
CAR_LEFT_WHEEL_POS = (-0.1, 0.1, -0.05)  # car.xml: body "left" pos
CAR_LEFT_WHEEL_FROMTO = (-0.055, 0.0, 0.0, -0.005, 0.0, 0.0)  # car.xml: geom "left" fromto
CAR_RIGHT_WHEEL_POS = (0.1, 0.1, -0.05)  # car.xml: body "right" pos
CAR_RIGHT_WHEEL_FROMTO = (0.005, 0.0, 0.0, 0.055, 0.0, 0.0)  # car.xml: geom "right" fromto
CAR_WHEEL_AXIS = (1.0, 0.0, 0.0)  # car.xml: hinges "left" and "right" axis
CAR_REAR_BALL_POS = (0.0, -0.1, -0.05)  # car.xml: body "rear" pos
CAR_WHEEL_GEAR = 1.0  # car.xml: motors "left" and "right" gear

# ---------------------------------------------------------------------------------------------------------------
# Racecar: assets/xmls/racecar.xml
# ---------------------------------------------------------------------------------------------------------------
RACECAR_TIMESTEP = 0.004  # racecar.xml: option timestep
RACECAR_GEOM_CONDIM = 6  # racecar.xml: default geom condim
RACECAR_GEOM_DENSITY = 5.0  # racecar.xml: default geom density
RACECAR_GEOM_RGBA = (1.0, 0.0, 0.0, 1.0)  # racecar.xml: default geom rgba
RACECAR_DEFAULT_JOINT_DAMPING = 0.001  # racecar.xml: default joint damping
RACECAR_SPAWN_HEIGHT = 0.05  # racecar.xml: body "agent" pos z
RACECAR_SITE_POS = (0.02, 0.0, 0.0)  # racecar.xml: site "agent" pos
RACECAR_FRAME_OFFSET = (-0.16, 0.0, 0.0)  # racecar.xml: body "pos_change" pos
RACECAR_WING_HALF_SIZE = (0.0165, 0.0875, 0.015)  # racecar.xml: pos_change's colliding box geom size
RACECAR_WING_POS = (0.39, 0.0, 0.04)  # racecar.xml: pos_change's colliding box geom pos
# The chassis mesh (assets/meshes/chassis_differential.STL at racecar.xml's default density 5): its mass, centre of
# mass, principal axes and inertia as MuJoCo 2.3.3 compiles them (measured), and its bounding box in body
# "car_body"'s frame (x from -0.04 to 0.365, y within +-0.1, z within +-0.03; measured).
RACECAR_CHASSIS_MASS = 0.0176055376
RACECAR_CHASSIS_COM = (0.15557992748, -0.00038266587311, 0.0)
RACECAR_CHASSIS_PRINCIPAL_AXES = (0.0017668998, 0.7071045736, -0.0017668998, 0.7071045736)
RACECAR_CHASSIS_INERTIA = (2.7063241717e-04, 2.3850013078e-04, 4.1254536520e-05)
RACECAR_CHASSIS_BOX_POS = (0.1625, 0.0, 0.0)
RACECAR_CHASSIS_BOX_HALF_SIZE = (0.2025, 0.1, 0.03)
RACECAR_LEFT_STEERING_HINGE_POS = (0.325, 0.1, 0.0)  # racecar.xml: body "left_steering_hinge" pos
RACECAR_RIGHT_STEERING_HINGE_POS = (0.325, -0.1, 0.0)  # racecar.xml: body "right_steering_hinge" pos
RACECAR_STEERING_HINGE_QUAT = (0.707105, 0.0, 0.707108, 0.0)  # racecar.xml: bodies "*_steering_hinge" quat
RACECAR_STEERING_HINGE_MASS = 0.1  # racecar.xml: "*_steering_hinge" inertial mass
RACECAR_STEERING_HINGE_INERTIA = (4e-06, 4e-06, 4e-06)  # racecar.xml: "*_steering_hinge" inertial diaginertia
RACECAR_STEERING_AXIS = (-1.0, 0.0, 0.0)  # racecar.xml: joints "*_steering_hinge_joint" axis
RACECAR_STEERING_RANGE = (-0.785, 0.785)  # racecar.xml: joints "*_steering_hinge_joint" range
RACECAR_FRONT_WHEEL_QUAT = (0.707105, 0.707108, 0.0, 0.0)  # racecar.xml: bodies "*_front_wheel" quat
RACECAR_FRONT_WHEEL_OFFSET = 0.0225  # racecar.xml: front wheel inertial and geom pos z (-left, +right)
RACECAR_FRONT_WHEEL_MASS = 0.34055  # racecar.xml: "*_front_wheel" inertial mass
RACECAR_FRONT_WHEEL_INERTIA = (0.00041226, 0.00026046, 0.00026046)  # racecar.xml: "*_front_wheel" diaginertia
RACECAR_FRONT_WHEEL_AXIS = (0.0, 0.0, -1.0)  # racecar.xml: joints "*_front_wheel_joint" axis
RACECAR_WHEEL_RGBA = (0.0, 0.0, 0.0, 1.0)  # racecar.xml: wheel cylinders rgba
RACECAR_WHEEL_SIZE = (0.05, 0.0225)  # racecar.xml: wheel cylinders size (radius, half length)
RACECAR_INERTIAL_QUAT = (0.5, 0.5, -0.5, 0.5)  # racecar.xml: wheel and differential inertial quat
RACECAR_RING_MASS = 0.0637  # racecar.xml: "diff_ring" and "diff2_ring" inertial mass
RACECAR_GEAR_PART_MASS = 0.056  # racecar.xml: spiders' and diff2 sides' inertial mass
RACECAR_GEAR_PART_INERTIA = (0.04411, 0.02467, 0.02467)  # racecar.xml: rings', spiders', diff2 sides' diaginertia
RACECAR_RING_GEOM_SIZE = (0.025, 0.005)  # racecar.xml: "diff_ring"'s colliding cylinder size
RACECAR_RING_GEOM_POS = (0.0, 0.025, 0.0)  # racecar.xml: "diff_ring"'s colliding cylinder pos
RACECAR_RING_GEOM_QUAT = (0.707107, 0.707106, 0.0, 0.0)  # racecar.xml: "diff_ring"'s colliding cylinder quat
RACECAR_SPIDER_A_QUAT = (0.707107, 0.0, 0.0, 0.707106)  # racecar.xml: bodies "diff*_spiderA" quat
RACECAR_SPIDER_B_QUAT = (0.707107, 0.0, 0.0, -0.707106)  # racecar.xml: bodies "diff*_spiderB" quat
RACECAR_DIFFERENTIAL_AXIS = (0.0, 1.0, 0.0)  # racecar.xml: joint "diff_ring" axis
RACECAR_REAR_SIDE_MASS = 0.39655  # racecar.xml: "diff_sideA"/"diff_sideB" inertial mass
RACECAR_REAR_SIDE_COM = (0.0, 0.105201, 7.09759e-08)  # racecar.xml: "diff_sideA" inertial pos (negated for B)
RACECAR_REAR_SIDE_INERTIA = (0.0450921, 0.0256521, 0.0250823)  # racecar.xml: "diff_side*" diaginertia
RACECAR_REAR_WHEEL_POS = (0.0, 0.1225, 8.26471e-08)  # racecar.xml: "diff_sideA" wheel cylinder pos (negated for B)
RACECAR_REAR_WHEEL_QUAT = (0.707105, 0.707108, 0.0, 0.0)  # racecar.xml: rear wheel cylinders quat
RACECAR_FRONT_DIFFERENTIAL_POS = (0.32, 0.0, 0.0)  # racecar.xml: body "diff2_ring" pos
RACECAR_DRIVE_CTRL_RANGE = (-20.0, 20.0)  # racecar.xml: velocity "diff_ring" ctrlrange (rad/s)
RACECAR_DRIVE_FORCE_RANGE = (-1.0, 1.0)  # racecar.xml: velocity "diff_ring" forcerange
RACECAR_DRIVE_KV = 1.0  # racecar.xml: velocity "diff_ring" keeps MuJoCo's default kv
RACECAR_STEER_CTRL_RANGE = (-0.785, 0.785)  # racecar.xml: position "steering_hinge" ctrlrange (rad)
RACECAR_STEER_FORCE_RANGE = (-1.0, 1.0)  # racecar.xml: position "steering_hinge" forcerange
RACECAR_STEER_KP = 1.0  # racecar.xml: position "steering_hinge" keeps MuJoCo's default kp

SPAWN_HEIGHT = {"point": POINT_SPAWN_HEIGHT, "car": CAR_SPAWN_HEIGHT, "racecar": RACECAR_SPAWN_HEIGHT}
TIMESTEP = {"point": POINT_TIMESTEP, "car": CAR_TIMESTEP, "racecar": RACECAR_TIMESTEP}

# ---------------------------------------------------------------------------------------------------------------
# Objects: assets/{geoms,free_geoms,mocaps}/*.py, assets/group.py, assets/color.py
# ---------------------------------------------------------------------------------------------------------------
VASE_HALF_SIZE = 0.1  # assets/free_geoms/vases.py: size
VASE_DENSITY = 0.001  # assets/free_geoms/vases.py: density
VASE_SINK = 4e-05  # assets/free_geoms/vases.py: sink (the vase starts at z = size - sink)
VASE_GROUP = 4  # assets/group.py: 'vase'
VASE_RGBA = (0.0, 1.0, 1.0, 1.0)  # assets/color.py: 'vase'
PUSH_BOX_HALF_SIZE = 0.2  # assets/free_geoms/push_box.py: size
PUSH_BOX_DENSITY = 0.001  # assets/free_geoms/push_box.py: density
CAR_PUSH_BOX_HALF_SIZE = 0.125  # assets/free_geoms/push_box.py: _specific_agent_config, size for the Car
CAR_PUSH_BOX_DENSITY = 0.0005  # assets/free_geoms/push_box.py: _specific_agent_config, density for the Car
PUSH_BOX_GROUP = 1  # assets/group.py: 'push_box'
PUSH_BOX_RGBA = (1.0, 1.0, 0.0, 1.0)  # assets/color.py: 'push_box'
PILLAR_RADIUS = 0.2  # assets/geoms/pillars.py: size
PILLAR_HALF_HEIGHT = 0.5  # assets/geoms/pillars.py: height (the cylinder's half length; centre at z = height)
PILLAR_GROUP = 2  # assets/group.py: 'pillar'
PILLAR_RGBA = (0.5, 0.5, 1.0, 1.0)  # assets/color.py: 'pillar'
BUTTON_RADIUS = 0.1  # assets/geoms/buttons.py: size (a sphere centred at z = size)
BUTTON_GROUP = 1  # assets/group.py: 'button'
BUTTON_RGBA = (1.0, 0.5, 0.0, 1.0)  # assets/color.py: 'button'
GREMLIN_HALF_SIZE = 0.1  # assets/mocaps/gremlins.py: size (box; centre at z = size)
GREMLIN_DENSITY = 0.001  # assets/mocaps/gremlins.py: density
GREMLIN_GROUP = 5  # assets/group.py: 'gremlin'
GREMLIN_RGBA = (0.5, 0.0, 1.0, 1.0)  # assets/color.py: 'gremlin'
GREMLIN_MOCAP_ALPHA = 0.1  # assets/mocaps/gremlins.py: get_mocap rgba = [1, 1, 1, 0.1] * color
STATIC_CONTYPE = 1  # world.py: geoms get contype 1 and conaffinity 1 unless their config says otherwise

# Where objects wait until a layout is written: a row outside every task's extents (at most +-2 m).
PARKING_ROW_Y = 10.0
PARKING_SPACING = 1.0


def _format(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return " ".join(_format(item) for item in value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _attributes(attributes: dict) -> dict[str, str]:
    # None leaves an attribute out; a trailing underscore (type_) avoids Python's names
    return {key.rstrip("_"): _format(value) for key, value in attributes.items() if value is not None}


def _add(parent: ET.Element, tag: str, **attributes) -> ET.Element:
    """A new child element of ``parent``."""
    return ET.SubElement(parent, tag, _attributes(attributes))


def _set(element: ET.Element, **attributes) -> None:
    """Attributes of an existing element (a section such as ``<option>``)."""
    element.attrib.update(_attributes(attributes))


@dataclass
class MjcfSections:
    """The top-level sections of one ``<mujoco>`` model that the fragments below write into."""

    root: ET.Element
    compiler: ET.Element
    option: ET.Element
    default: ET.Element
    worldbody: ET.Element
    contact: ET.Element
    equality: ET.Element
    actuator: ET.Element
    sensor: ET.Element

    @classmethod
    def new(cls, model_name: str) -> MjcfSections:
        root = ET.Element("mujoco", {"model": model_name})
        tags = ("compiler", "option", "default", "worldbody", "contact", "equality", "actuator", "sensor")
        return cls(root, *(ET.SubElement(root, tag) for tag in tags))

    def to_xml(self) -> str:
        for section in list(self.root):
            if len(section) == 0 and not section.attrib:
                self.root.remove(section)
        ET.indent(self.root)
        return ET.tostring(self.root, encoding="unicode")


# ---------------------------------------------------------------------------------------------------------------
# Robot fragments
# ---------------------------------------------------------------------------------------------------------------
def _agent_sensors(sensor: ET.Element) -> None:
    # assets/xmls/{point,car,racecar}.xml: the observed sensors on site "agent", then the subtree sensors that
    # safety-gymnasium keeps for intrinsic constraints
    for kind in ("accelerometer", "velocimeter", "gyro", "magnetometer"):
        _add(sensor, kind, name=kind, site="agent")
    for kind in ("subtreecom", "subtreelinvel", "subtreeangmom"):
        _add(sensor, kind, name=kind, body="agent")


def _limited_actuator_default(model: MjcfSections, kind: str, ctrlrange, forcerange) -> None:
    # assets/xmls/{point,car}.xml: <default><motor|velocity ctrlrange ctrllimited="true" forcerange forcelimited="true">
    _add(model.default, kind, ctrlrange=ctrlrange, ctrllimited=True, forcerange=forcerange, forcelimited=True)


def point_fragment(model: MjcfSections) -> None:
    """Safety-Gymnasium's Point (``assets/xmls/point.xml``): a sphere and a cube on slides x, y and hinge z."""
    _set(model.option, timestep=POINT_TIMESTEP, integrator=EULER)
    _add(model.default, "geom", condim=POINT_GEOM_CONDIM, density=POINT_GEOM_DENSITY, rgba=ROBOT_RGBA)
    _add(model.default, "joint", damping=POINT_DEFAULT_JOINT_DAMPING)
    for actuator in ("motor", "velocity"):
        _limited_actuator_default(model, actuator, POINT_CTRL_RANGE, POINT_FORCE_RANGE)
    _add(model.default, "site", size=SITE_RADIUS, type_="sphere")
    agent = _add(model.worldbody, "body", name="agent", pos=(0.0, 0.0, POINT_SPAWN_HEIGHT))
    _add(agent, "joint", type_="slide", axis=(1, 0, 0), name="x", damping=POINT_SLIDE_DAMPING)
    _add(agent, "joint", type_="slide", axis=(0, 1, 0), name="y", damping=POINT_SLIDE_DAMPING)
    _add(agent, "joint", type_="hinge", axis=(0, 0, 1), name="z", damping=POINT_HINGE_DAMPING)
    _add(agent, "geom", name="agent", type_="sphere", size=POINT_SPHERE_RADIUS, friction=POINT_SPHERE_FRICTION)
    _add(
        agent,
        "geom",
        name="pointarrow",
        type_="box",
        pos=POINT_ARROW_POS,
        size=POINT_ARROW_HALF_SIZE,
        rgba=ROBOT_TRIM_RGBA,
    )
    _add(agent, "site", name="agent", rgba=AGENT_SITE_RGBA)
    _agent_sensors(model.sensor)
    _add(model.actuator, "motor", name="x", site="agent", gear=POINT_THRUST_GEAR)
    _add(model.actuator, "velocity", name="z", joint="z", gear=POINT_TURN_GEAR, kv=POINT_TURN_KV)


def car_fragment(model: MjcfSections) -> None:
    """Safety-Gymnasium's Car (``assets/xmls/car.xml``): a free box on two driven wheels and a rear ball."""
    _set(model.option, timestep=CAR_TIMESTEP, integrator=EULER)
    geom_default = _add(model.default, "geom", condim=CAR_GEOM_CONDIM, density=CAR_GEOM_DENSITY, rgba=ROBOT_RGBA)
    _set(geom_default, size=CAR_DEFAULT_GEOM_SIZE, type_="sphere")
    _add(model.default, "joint", damping=CAR_DEFAULT_JOINT_DAMPING)
    _limited_actuator_default(model, "motor", CAR_CTRL_RANGE, CAR_FORCE_RANGE)
    _add(model.default, "site", size=SITE_RADIUS, type_="sphere")
    agent = _add(model.worldbody, "body", name="agent", pos=(0.0, 0.0, CAR_SPAWN_HEIGHT))
    _add(agent, "site", name="agent", pos=(0.0, 0.0, 0.0))
    _add(agent, "joint", type_="free", name="agent", damping=0.0)  # car.xml: free joint damping="0"
    _add(agent, "geom", name="agent", type_="box", size=CAR_CHASSIS_HALF_SIZE)
    for name, pos, half_size in (
        ("back_bumper", CAR_BACK_BUMPER_POS, CAR_BACK_BUMPER_HALF_SIZE),
        ("back_connector", CAR_BACK_CONNECTOR_POS, CAR_BACK_CONNECTOR_HALF_SIZE),
        ("front_bumper", CAR_FRONT_BUMPER_POS, CAR_FRONT_BUMPER_HALF_SIZE),
        ("front_connector", CAR_FRONT_CONNECTOR_POS, CAR_FRONT_CONNECTOR_HALF_SIZE),
    ):
        _add(agent, "geom", name=name, type_="box", pos=pos, size=half_size, rgba=ROBOT_TRIM_RGBA)
    for name, pos, fromto in (
        ("left", CAR_LEFT_WHEEL_POS, CAR_LEFT_WHEEL_FROMTO),
        ("right", CAR_RIGHT_WHEEL_POS, CAR_RIGHT_WHEEL_FROMTO),
    ):
        wheel = _add(agent, "body", name=name, pos=pos)
        _add(wheel, "joint", type_="hinge", name=name, axis=CAR_WHEEL_AXIS)
        _add(wheel, "geom", type_="cylinder", name=name, fromto=fromto)
    rear = _add(agent, "body", name="rear", pos=CAR_REAR_BALL_POS)
    _add(rear, "joint", name="rear", type_="ball")
    _add(rear, "geom", name="rear")
    # car.xml declares the rear ball's sensors first
    _add(model.sensor, "ballquat", name="ballquat_rear", joint="rear")
    _add(model.sensor, "ballangvel", name="ballangvel_rear", joint="rear")
    _agent_sensors(model.sensor)
    for name in ("left", "right"):
        _add(model.actuator, "motor", name=name, joint=name, gear=CAR_WHEEL_GEAR)


def _inertial(body: ET.Element, mass: float, diaginertia, pos=(0.0, 0.0, 0.0), quat=RACECAR_INERTIAL_QUAT) -> None:
    _add(body, "inertial", pos=pos, quat=quat, mass=mass, diaginertia=diaginertia)


def _negated(vector) -> tuple:
    # racecar.xml writes diff_sideB's inertial and wheel positions as diff_sideA's, negated
    return tuple(-component for component in vector)


def racecar_fragment(model: MjcfSections) -> None:
    """Safety-Gymnasium's Racecar (``assets/xmls/racecar.xml``): a free chassis with coupled front steering and a
    rear differential driven by a velocity servo."""
    _set(model.option, timestep=RACECAR_TIMESTEP, integrator=RK4)
    geom_default = _add(model.default, "geom", condim=RACECAR_GEOM_CONDIM, density=RACECAR_GEOM_DENSITY)
    # racecar.xml: default geom size .05, as car.xml
    _set(geom_default, rgba=RACECAR_GEOM_RGBA, size=CAR_DEFAULT_GEOM_SIZE, type_="sphere")
    _add(model.default, "joint", damping=RACECAR_DEFAULT_JOINT_DAMPING)
    _add(model.default, "site", size=SITE_RADIUS, type_="sphere")
    agent = _add(model.worldbody, "body", name="agent", pos=(0.0, 0.0, RACECAR_SPAWN_HEIGHT))
    _add(agent, "joint", type_="free", name="agent", damping=0.0)  # racecar.xml: free joint damping="0"
    _add(agent, "site", name="agent", pos=RACECAR_SITE_POS)
    frame = _add(agent, "body", name="pos_change", pos=RACECAR_FRAME_OFFSET)
    chassis = _add(frame, "body", name="car_body")
    _inertial(
        chassis,
        RACECAR_CHASSIS_MASS,
        RACECAR_CHASSIS_INERTIA,
        pos=RACECAR_CHASSIS_COM,
        quat=RACECAR_CHASSIS_PRINCIPAL_AXES,
    )
    _add(chassis, "geom", type_="box", pos=RACECAR_CHASSIS_BOX_POS, size=RACECAR_CHASSIS_BOX_HALF_SIZE, rgba=ROBOT_RGBA)
    _add(frame, "geom", type_="box", pos=RACECAR_WING_POS, size=RACECAR_WING_HALF_SIZE)
    for side, hinge_pos, sign in (
        ("left", RACECAR_LEFT_STEERING_HINGE_POS, -1.0),
        ("right", RACECAR_RIGHT_STEERING_HINGE_POS, 1.0),
    ):
        hinge = _add(frame, "body", name=f"{side}_steering_hinge", pos=hinge_pos, quat=RACECAR_STEERING_HINGE_QUAT)
        _inertial(hinge, RACECAR_STEERING_HINGE_MASS, RACECAR_STEERING_HINGE_INERTIA, quat=None)
        _add(
            hinge,
            "joint",
            name=f"{side}_steering_hinge_joint",
            axis=RACECAR_STEERING_AXIS,
            range=RACECAR_STEERING_RANGE,
        )
        wheel = _add(hinge, "body", name=f"{side}_front_wheel", quat=RACECAR_FRONT_WHEEL_QUAT)
        wheel_centre = (0.0, 0.0, sign * RACECAR_FRONT_WHEEL_OFFSET)
        _inertial(wheel, RACECAR_FRONT_WHEEL_MASS, RACECAR_FRONT_WHEEL_INERTIA, pos=wheel_centre)
        _add(wheel, "joint", name=f"{side}_front_wheel_joint", axis=RACECAR_FRONT_WHEEL_AXIS)
        _add(wheel, "geom", type_="cylinder", size=RACECAR_WHEEL_SIZE, pos=wheel_centre, rgba=RACECAR_WHEEL_RGBA)
    # The rear differential: ring, two spiders, and the two sides (each carrying a rear wheel) on joint diff_ring.
    ring = _add(frame, "body", name="diff_ring")
    _inertial(ring, RACECAR_RING_MASS, RACECAR_GEAR_PART_INERTIA)
    _add(
        ring,
        "geom",
        type_="cylinder",
        size=RACECAR_RING_GEOM_SIZE,
        pos=RACECAR_RING_GEOM_POS,
        quat=RACECAR_RING_GEOM_QUAT,
    )
    for name, quat in (("diff_spiderA", RACECAR_SPIDER_A_QUAT), ("diff_spiderB", RACECAR_SPIDER_B_QUAT)):
        _inertial(_add(ring, "body", name=name, quat=quat), RACECAR_GEAR_PART_MASS, RACECAR_GEAR_PART_INERTIA)
    axle = _add(ring, "body")
    _add(axle, "joint", name="diff_ring", axis=RACECAR_DIFFERENTIAL_AXIS)
    for name, com, wheel_pos in (
        ("diff_sideA", RACECAR_REAR_SIDE_COM, RACECAR_REAR_WHEEL_POS),
        ("diff_sideB", _negated(RACECAR_REAR_SIDE_COM), _negated(RACECAR_REAR_WHEEL_POS)),
    ):
        side = _add(axle, "body", name=name)
        _inertial(side, RACECAR_REAR_SIDE_MASS, RACECAR_REAR_SIDE_INERTIA, pos=com)
        _add(
            side,
            "geom",
            type_="cylinder",
            size=RACECAR_WHEEL_SIZE,
            pos=wheel_pos,
            quat=RACECAR_REAR_WHEEL_QUAT,
            rgba=RACECAR_WHEEL_RGBA,
        )
    # The front differential carries mass only (its geoms are visual).
    front_ring = _add(frame, "body", name="diff2_ring", pos=RACECAR_FRONT_DIFFERENTIAL_POS)
    _inertial(front_ring, RACECAR_RING_MASS, RACECAR_GEAR_PART_INERTIA)
    for name, quat in (
        ("diff2_spiderA", RACECAR_SPIDER_A_QUAT),
        ("diff2_spiderB", RACECAR_SPIDER_B_QUAT),
        ("diff2_sideA", None),
        ("diff2_sideB", None),
    ):
        _inertial(_add(front_ring, "body", name=name, quat=quat), RACECAR_GEAR_PART_MASS, RACECAR_GEAR_PART_INERTIA)
    # racecar.xml: the steering hinges move together; the chassis does not collide with the front wheels
    _add(model.equality, "joint", joint1="left_steering_hinge_joint", joint2="right_steering_hinge_joint")
    _add(model.contact, "exclude", name="left_body", body1="car_body", body2="left_front_wheel")
    _add(model.contact, "exclude", name="right_body", body1="car_body", body2="right_front_wheel")
    _add(
        model.actuator,
        "velocity",
        name="diff_ring",
        joint="diff_ring",
        kv=RACECAR_DRIVE_KV,
        ctrlrange=RACECAR_DRIVE_CTRL_RANGE,
        forcerange=RACECAR_DRIVE_FORCE_RANGE,
    )
    _add(
        model.actuator,
        "position",
        name="steering_hinge",
        joint="left_steering_hinge_joint",
        kp=RACECAR_STEER_KP,
        ctrlrange=RACECAR_STEER_CTRL_RANGE,
        forcerange=RACECAR_STEER_FORCE_RANGE,
    )
    _agent_sensors(model.sensor)


ROBOT_FRAGMENTS = {"point": point_fragment, "car": car_fragment, "racecar": racecar_fragment}


# ---------------------------------------------------------------------------------------------------------------
# Object fragments (world.py's way of writing them)
# ---------------------------------------------------------------------------------------------------------------
class _Parking:
    """Hands out distinct parking places along a row outside every task's extents."""

    def __init__(self) -> None:
        self.count = 0

    def place(self, height: float) -> tuple[float, float, float]:
        x = self.count * PARKING_SPACING
        self.count += 1
        return (x, PARKING_ROW_Y, height)


def _free_box(model: MjcfSections, name: str, pos, half_size: float, density: float, group: int, rgba) -> ET.Element:
    # world.py: <body><freejoint/><geom type size density rgba group/></body> for every free geom
    body = _add(model.worldbody, "body", name=name, pos=pos)
    _add(body, "freejoint", name=name)
    _add(body, "geom", name=name, type_="box", size=(half_size,) * 3, density=density, rgba=rgba, group=group)
    return body


def vases_fragment(model: MjcfSections, count: int, parking: _Parking) -> None:
    """Vases (``assets/free_geoms/vases.py``): free boxes ``vase0..``, resting sunk by ``VASE_SINK``."""
    for index in range(count):
        pos = parking.place(VASE_HALF_SIZE - VASE_SINK)
        _free_box(model, f"vase{index}", pos, VASE_HALF_SIZE, VASE_DENSITY, VASE_GROUP, VASE_RGBA)


def push_box_fragment(model: MjcfSections, robot: str, parking: _Parking) -> None:
    """The push box (``assets/free_geoms/push_box.py``), with the four corner boxes ``col1..col4`` that world.py
    adds to it (half sizes (s/2, s/2, s) at (+-s, +-s, 0) for a box of half size s)."""
    half_size = CAR_PUSH_BOX_HALF_SIZE if robot == "car" else PUSH_BOX_HALF_SIZE
    density = CAR_PUSH_BOX_DENSITY if robot == "car" else PUSH_BOX_DENSITY
    body = _free_box(model, "push_box", parking.place(half_size), half_size, density, PUSH_BOX_GROUP, PUSH_BOX_RGBA)
    corner_half_size = (half_size / 2, half_size / 2, half_size)  # world.py: width = dim / 2
    for name, (sign_x, sign_y) in zip(("col1", "col2", "col3", "col4"), ((1, 1), (-1, 1), (1, -1), (-1, -1))):
        _add(
            body,
            "geom",
            name=name,
            type_="box",
            size=corner_half_size,
            density=density,
            rgba=PUSH_BOX_RGBA,
            group=PUSH_BOX_GROUP,
            pos=(sign_x * half_size, sign_y * half_size, 0.0),
        )


def gremlin_boxes_fragment(model: MjcfSections, count: int, parking: _Parking) -> list[tuple[float, float, float]]:
    """The gremlins' free boxes ``gremlin0obj..`` (``assets/mocaps/gremlins.py`` get_obj); returns their places."""
    places = []
    for index in range(count):
        pos = parking.place(GREMLIN_HALF_SIZE)
        _free_box(model, f"gremlin{index}obj", pos, GREMLIN_HALF_SIZE, GREMLIN_DENSITY, GREMLIN_GROUP, GREMLIN_RGBA)
        places.append(pos)
    return places


def gremlin_mocaps_fragment(model: MjcfSections, places: list[tuple[float, float, float]]) -> None:
    """The gremlins' mocap bodies ``gremlin0mocap..`` (non-colliding boxes), each welded to its box."""
    mocap_rgba = (*GREMLIN_RGBA[:3], GREMLIN_RGBA[3] * GREMLIN_MOCAP_ALPHA)
    for index, pos in enumerate(places):
        name = f"gremlin{index}mocap"
        body = _add(model.worldbody, "body", name=name, mocap=True, pos=pos)
        geom = _add(body, "geom", name=name, type_="box", size=(GREMLIN_HALF_SIZE,) * 3, rgba=mocap_rgba)
        _set(geom, contype=0, conaffinity=0, group=GREMLIN_GROUP)  # the mocap's own box never collides
        # world.py: <weld body1=mocap body2=box solref=".02 1.5"/>; relpose: see the module docstring
        _add(
            model.equality,
            "weld",
            name=name,
            body1=name,
            body2=f"gremlin{index}obj",
            solref=WELD_SOLREF,
            relpose=(0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0),
        )


def _static_body(model: MjcfSections, name: str, pos, geom_type: str, size, group: int, rgba) -> None:
    # world.py: <body pos quat><geom type size rgba group contype conaffinity/></body>, here a mocap body
    body = _add(model.worldbody, "body", name=name, mocap=True, pos=pos)
    collides = {"contype": STATIC_CONTYPE, "conaffinity": STATIC_CONTYPE}
    _add(body, "geom", name=name, type_=geom_type, size=size, rgba=rgba, group=group, **collides)


def pillars_fragment(model: MjcfSections, count: int, parking: _Parking) -> None:
    """Pillars (``assets/geoms/pillars.py``): fixed cylinders ``pillar0..``, as mocap bodies."""
    for index in range(count):
        pos = parking.place(PILLAR_HALF_HEIGHT)
        size = (PILLAR_RADIUS, PILLAR_HALF_HEIGHT)
        _static_body(model, f"pillar{index}", pos, "cylinder", size, PILLAR_GROUP, PILLAR_RGBA)


def buttons_fragment(model: MjcfSections, count: int, parking: _Parking) -> None:
    """Buttons (``assets/geoms/buttons.py``): fixed spheres ``button0..``, as mocap bodies."""
    for index in range(count):
        pos = parking.place(BUTTON_RADIUS)
        _static_body(model, f"button{index}", pos, "sphere", BUTTON_RADIUS, BUTTON_GROUP, BUTTON_RGBA)


def _checked_counts(objects: dict[str, int]) -> dict[str, int]:
    counts = {}
    for name, count in objects.items():
        if name not in COLLIDING_OBJECTS + NON_COLLIDING_OBJECTS:
            raise ValueError(f"unknown object {name!r}; known: {', '.join(COLLIDING_OBJECTS + NON_COLLIDING_OBJECTS)}")
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"object count for {name!r} must be a non-negative integer, got {count!r}")
        if name in SINGLE_OBJECTS and count > 1:
            raise ValueError(f"a world has at most one {name!r}, got {count}")
        counts[name] = count
    return counts


def navigation_model_xml(robot: str, objects: dict[str, int] | None = None) -> str:
    """The MJCF text of a navigation world: floor, ``robot`` and ``objects`` (object kind -> count).

    Bodies come in world.py's order: robot, free objects (vases, push box, gremlin boxes), gremlin mocaps, then
    the static objects (pillars, buttons).  Objects wait at parking places until a layout is written
    (:func:`saferl.envs.safety_nav.mjcf_layout.layout_addresses`).
    """
    if robot not in ROBOT_FRAGMENTS:
        raise ValueError(f"unknown robot {robot!r}; known: {', '.join(ROBOTS)}")
    counts = _checked_counts(objects or {})
    model = MjcfSections.new(f"safety_nav_{robot}")
    _set(model.compiler, angle=COMPILER_ANGLE, autolimits=COMPILER_AUTOLIMITS)
    _set(model.option, gravity=GRAVITY, magnetic=MAGNETIC_FIELD)
    light = _add(model.worldbody, "light", directional=True, diffuse=LIGHT_DIFFUSE, castshadow=False)
    _set(light, pos=LIGHT_POS, dir=LIGHT_DIRECTION)
    _add(
        model.worldbody, "geom", name="floor", type_="plane", size=FLOOR_HALF_SIZE, condim=FLOOR_CONDIM, rgba=FLOOR_RGBA
    )
    ROBOT_FRAGMENTS[robot](model)
    parking = _Parking()
    vases_fragment(model, counts.get("vases", 0), parking)
    if counts.get("push_box", 0):
        push_box_fragment(model, robot, parking)
    gremlin_places = gremlin_boxes_fragment(model, counts.get("gremlins", 0), parking)
    gremlin_mocaps_fragment(model, gremlin_places)
    pillars_fragment(model, counts.get("pillars", 0), parking)
    buttons_fragment(model, counts.get("buttons", 0), parking)
    return model.to_xml()


def load_model(robot: str, objects: dict[str, int] | None = None):
    """The compiled ``mujoco.MjModel`` of :func:`navigation_model_xml` (needs the ``mjx`` extra's mujoco)."""
    mujoco = require("mujoco", "mjx", "the Safety-Gymnasium navigation models (MuJoCo)")
    return mujoco.MjModel.from_xml_string(navigation_model_xml(robot, objects))
