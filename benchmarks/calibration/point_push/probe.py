"""PointPush1's contacts, the original (Safety-Gymnasium 1.0.0) and saferl's port, in the same scripted scenes.

The push box, the pillar and the Point robot's nose of ``saferl/envs/safety_nav/point_push.py`` and
``nav_contact.py`` are not fitted: their model was built from the original's geometry and checked against these
scenes, whose numbers its docstring quotes ("Measured against Safety-Gymnasium 1.0.0").  One scene per command;
the original side runs in a venv with the original (safety-gymnasium 1.0.0, gymnasium 0.28.1, mujoco 2.3.3,
patched by ``benchmarks/patch_safety_gymnasium.py``: the fidelity venv, ``make -C benchmarks/fidelity venv``),
the port in the main venv.  From the repository root::

    benchmarks/fidelity/.venv/bin/python benchmarks/calibration/point_push/probe.py original box
    benchmarks/fidelity/.venv/bin/python benchmarks/calibration/point_push/probe.py original push   # and so on
    .venv/bin/python benchmarks/calibration/point_push/probe.py port push

Scenes (both sides, the same output, so that the two can be diffed): the robot at the origin facing +x, the
hazards out of the way, the goal far off; printed per chosen step: robot x, y, heading, box x, y, z, yaw, robot
speed.

* ``push``: full thrust from rest into the box 0.8 ahead, centred, 0.1 and 0.2 off the axis, turned 45 deg and
  0.3 rad; then 40 steps of thrust, 30 without, 30 backwards.
* ``pillar``: full thrust into the pillar 0.7 ahead, 0, 0.1, 0.2 and 0.25 off the axis: closest distance.
* ``box-pillar``: the box pushed into the pillar behind it.
* ``turn``: 40 steps pushing straight, then 100 turning (action (1, 0.3) and (1, 1)): does the box stay on the
  nose, and where.
* ``spin``: the robot spinning on the spot with its nose in the box's notch.
* ``box`` (the original only): the box's mass and its 20 floor contacts' loads, whose load-weighted mean radius
  is ``PointPushParams.box_friction_radius`` (0.296); ``box_mass`` is the mass printed.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

FAR = ((-5.0, -5.0), (-6.0, -5.0))  # the hazards, out of the way


def wrap(angle):
    return (angle + np.pi) % (2 * np.pi) - np.pi


class Original:
    """Safety-Gymnasium's SafetyPointPush1-v0 with its bodies moved into a scene."""

    def __init__(self):
        warnings.filterwarnings("ignore")
        import mujoco
        import safety_gymnasium

        self.mujoco = mujoco
        self.env = safety_gymnasium.make("SafetyPointPush1-v0")
        self.env.reset(seed=0)
        self.task = self.env.unwrapped.task

    def setup(self, robot=(0.0, 0.0003), heading=0.0, box=(0.8, 0.0), box_yaw=0.0, pillar=(5.0, 5.0)):
        self.env.reset(seed=1)
        model, data = self.task.model, self.task.data
        model.body_pos[model.body("pillar0").id][:2] = pillar
        for name, place in zip(("hazard0", "hazard1"), FAR):
            model.body_pos[model.body(name).id][:2] = place
        data.qpos[:] = 0
        data.qvel[:] = 0
        agent = model.body("agent").id
        model.body_pos[agent][:2] = robot  # the Point's slide joints move it from its body position
        model.body_quat[agent] = (1, 0, 0, 0)
        data.qpos[0:3] = (0.0, 0.0, heading)
        data.qpos[3:6] = (box[0], box[1], 0.2)
        data.qpos[6:10] = (np.cos(box_yaw / 2), 0, 0, np.sin(box_yaw / 2))
        self.mujoco.mj_forward(model, data)
        self.task.last_dist_box = self.task.dist_box()  # the reward's baselines, for the new layout
        self.task.last_box_goal = self.task.dist_box_goal()

    def run(self, action, n):
        data, out = self.task.data, []
        for _ in range(n):
            self.env.step(np.asarray(action, float))
            q = data.qpos[6:10]
            out.append(
                (
                    data.xpos[1][0],
                    data.xpos[1][1],
                    data.qpos[2],
                    data.qpos[3],
                    data.qpos[4],
                    data.qpos[5],
                    wrap(2 * np.arctan2(q[3], q[0])),
                    np.hypot(*data.qvel[:2]),
                )
            )
        return np.array(out)


class Port:
    """saferl's PointPush1 with its state set to a scene."""

    def __init__(self):
        import jax
        import jax.numpy as jnp

        from saferl.envs.safety_nav.point_push import PointPush

        self.jnp = jnp
        env = PointPush()
        self.params = env.default_params()
        self.step = jax.jit(env.step)
        self.base, _ = jax.jit(env.reset)(jax.random.PRNGKey(0), self.params)
        self.state = self.base

    def setup(self, robot=(0.0, 0.0003), heading=0.0, box=(0.8, 0.0), box_yaw=0.0, pillar=(5.0, 5.0)):
        f = lambda x: self.jnp.asarray(x, self.jnp.float32)  # noqa: E731
        self.state = self.base.replace(
            pos=f(robot),
            heading=f(heading),
            vel=f([0, 0]),
            ang_vel=f(0.0),
            box_pos=f(box),
            box_yaw=f(box_yaw),
            box_vel=f([0, 0]),
            pillars=f([pillar]),
            hazards=f(FAR),
            goal=f([-3, 3]),
        )

    def run(self, action, n):
        out = []
        for _ in range(n):
            self.state = self.step(self.state, self.jnp.asarray(action, self.jnp.float32), self.params)[0]
            s = self.state
            out.append(
                (
                    s.pos[0],
                    s.pos[1],
                    s.heading,
                    s.box_pos[0],
                    s.box_pos[1],
                    self.params.box_height,
                    wrap(float(s.box_yaw)),
                    float(self.jnp.linalg.norm(s.vel)),
                )
            )
        return np.array(out, float)


def push(side) -> None:
    for yaw, off in [(0.0, 0.0), (0.0, 0.1), (0.0, 0.2), (np.pi / 4, 0.0), (0.3, 0.0)]:
        side.setup(box=(0.8, off), box_yaw=yaw)
        rows = side.run([1, 0], 100)
        print(f"box yaw {yaw:.3f}, {off} off the axis")
        for k in (0, 4, 9, 19, 29, 49, 99):
            print(k + 1, rows[k])
    side.setup(box=(0.8, 0.0))
    print("after 40 steps of thrust:", side.run([1, 0], 40)[-1])
    print("then 30 without, steps 1, 5, 10, 30:\n", side.run([0, 0], 30)[[0, 4, 9, 29]])
    print("then 30 backwards, steps 1, 5, 10, 30:\n", side.run([-1, 0], 30)[[0, 4, 9, 29]])


def pillar(side) -> None:
    for y in (0.0, 0.1, 0.2, 0.25):
        side.setup(pillar=(0.7, y))
        rows = side.run([1, 0], 150)
        dist = np.hypot(rows[:, 0] - 0.7, rows[:, 1] - y)
        print(
            f"pillar at (0.7, {y}): closest {dist.min():.4f}, robot at the end {rows[-1, :3]}, speed {rows[-1, 7]:.4f}"
        )
        for k in (9, 19, 29, 49, 99, 149):
            print("  ", k + 1, rows[k, :3], round(float(dist[k]), 4), round(float(rows[k, 7]), 4))


def box_pillar(side) -> None:
    side.setup(box=(0.8, 0.0), pillar=(1.4, 0.0))
    rows = side.run([1, 0], 150)
    for k in (9, 19, 29, 49, 99, 149):
        print(k + 1, rows[k])


def turn(side) -> None:
    for amount in (0.3, 1.0):
        side.setup(box=(0.8, 0.0))
        side.run([1, 0], 40)
        rows = side.run([1, amount], 100)
        rel = rows[:, 3:5] - rows[:, 0:2]
        print(f"turning {amount}")
        for k in (9, 24, 49, 74, 99):
            print(
                f"   {k + 1} robot {rows[k, :3]} box-robot distance {np.linalg.norm(rel[k]):.4f}, bearing from the "
                f"heading {wrap(np.arctan2(rel[k, 1], rel[k, 0]) - rows[k, 2]):.4f}, box yaw {rows[k, 6]:.4f}"
            )


def spin(side) -> None:
    side.setup(robot=(0.45, 0.0003), box=(0.8, 0.0))  # the nose against the notch's floor
    for k in range(8):
        print(k, side.run([0.0, 1.0], 2)[-1])


def box(side) -> None:
    if not isinstance(side, Original):
        sys.exit("probe: box measures the original only")
    side.setup(box=(0.7, 0.0))
    model, data, mujoco = side.task.model, side.task.data, side.mujoco
    for _ in range(50):
        mujoco.mj_step(model, data)
    body = model.body("push_box").id
    radii, loads = [], []
    for i in range(data.ncon):
        contact = data.contact[i]
        if body in (model.geom_bodyid[contact.geom1], model.geom_bodyid[contact.geom2]):
            force = np.zeros(6)
            mujoco.mj_contactForce(model, data, i, force)
            radii.append(np.hypot(*(contact.pos[:2] - data.qpos[3:5])))
            loads.append(force[0])
    radii, loads = np.array(radii), np.array(loads)
    mass = model.body_subtreemass[body]
    print(f"box mass {mass:.4g} kg (weight {mass * 9.81:.4g} N); {len(loads)} floor contacts carry {loads.sum():.4g} N")
    print(f"load-weighted mean contact radius c = {(loads * radii).sum() / loads.sum():.4f} m (box_friction_radius)")


SCENES = {"push": push, "pillar": pillar, "box-pillar": box_pillar, "turn": turn, "spin": spin, "box": box}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("side", choices=("original", "port"))
    parser.add_argument("scene", choices=list(SCENES))
    args = parser.parse_args(argv)
    np.set_printoptions(precision=4, suppress=True, linewidth=150)
    SCENES[args.scene](Original() if args.side == "original" else Port())
    return 0


if __name__ == "__main__":
    sys.exit(main())
