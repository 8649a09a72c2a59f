"""PointPush1 on MuJoCo itself (``physics="mujoco"``): the compiled step is MuJoCo's, the box and the pillar are
MuJoCo's bodies, and the task's reward reads MuJoCo's positions.

Two compiled rollouts (one per physics) of ``STEPS`` steps over a batch of ``len(LAYOUTS)`` hand-placed layouts
serve every test but the vmap one; the full-thrust comparison prints its table (``pytest -s``).
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from saferl.envs.base import make, make_env_params  # noqa: E402
from saferl.envs.safety_nav import mjcf, mjcf_layout  # noqa: E402
from saferl.envs.safety_nav.mujoco_physics import OBSERVED_SENSORS  # noqa: E402

ENV = make("PointPush1")
PHYSICS = {name: make_env_params(ENV, {"physics": name}) for name in ("planar", "mujoco")}
STEPS = 200
COMPARED = 20  # env steps compared with mj_step run here
FULL_THRUST = (1.0, 0.0)
# one hazard on the pushing path (y = 0) past the goal, one beside it
HAZARDS = [[3.5, 0.0], [1.6, -0.45]]
FAR = (5.0, 5.0)

#: name -> robot heading, box (x, y), box yaw, pillar, goal, action; the robot starts at the origin
LAYOUTS = {
    # compared with mj_step: the box pushed, turned and driven against the pillar within 20 steps (the turning
    # servo saturated: unsaturated, MuJoCo's explicit servo chatters and amplifies the float32 rounding)
    "contact": (0.0, (0.42, 0.08), 0.3, (0.9, -0.35), (2.5, 0.0), (1.0, -1.0)),
    "centred": (0.0, (0.8, 0.0), 0.0, FAR, (2.5, 0.0), FULL_THRUST),
    "off 0.1": (0.0, (0.8, 0.1), 0.0, FAR, (2.5, 0.0), FULL_THRUST),
    "off 0.2": (0.0, (0.8, 0.2), 0.0, FAR, (2.5, 0.0), FULL_THRUST),
    "corner first": (0.0, (0.8, 0.0), math.pi / 4, FAR, (2.5, 0.0), FULL_THRUST),
    "into pillar": (0.0, (0.8, 0.0), 0.0, (2.0, 0.0), (-2.5, 0.0), FULL_THRUST),
    "pillar only": (0.0, (-4.0, -2.0), 0.0, (0.8, 0.0), (-2.5, 0.0), FULL_THRUST),
    "angled": (0.6, (0.66, 0.45), 1.0, FAR, (1.5, 1.5), (1.0, 0.15)),
}
ROW = {name: i for i, name in enumerate(LAYOUTS)}


def f32(x):
    return jnp.asarray(x, jnp.float32)


def place(params, heading, box, box_yaw, pillar, goal, _action):
    """The state of a hand-placed layout, the robot at the origin."""
    layout = (f32(heading), f32(goal), f32(HAZARDS), f32([pillar]), f32(box), f32(box_yaw))
    return ENV.state_at(jax.random.PRNGKey(0), f32((0.0, 0.0)), *layout, params)


ACTIONS = jnp.stack([jnp.tile(f32(layout[-1]), (STEPS, 1)) for layout in LAYOUTS.values()])


def _rollout(params):
    """One environment's rollout: the states, observations, rewards, costs and successes after each step."""

    def body(state, action):
        state, obs, reward, cost, _, _, info = ENV.step(state, action, params)
        return state, (state, obs, reward, cost, info["goal_reached"])

    return lambda state, actions: jax.lax.scan(body, state, actions)[1]


def _rollouts(params):
    states = [place(params, *layout) for layout in LAYOUTS.values()]
    states = jax.tree.map(lambda *rows: jnp.stack(rows), *states)
    return states, jax.jit(jax.vmap(_rollout(params)))(states, ACTIONS)


@pytest.fixture(scope="module")
def rollouts():
    """MuJoCo's rollouts of every layout; the planar model's only where a test asks (it compiles a second program)."""
    computed = {"mujoco": _rollouts(PHYSICS["mujoco"])}

    class Rollouts(dict):
        def __missing__(self, name):
            self[name] = _rollouts(PHYSICS[name])
            return self[name]

    return Rollouts(computed)


def _row(tree, name):
    return jax.tree.map(lambda x: np.asarray(x[ROW[name]]), tree)


def test_the_step_is_mujoco_stepped_from_the_same_state(rollouts):
    """20 env steps against 20 x 10 ``mj_step`` of the same model from the same state, run here with the pillar
    placed through ``mocap_pos``: the same trajectory (robot pushing the turned box towards the pillar) up to
    float32 rounding of the state between env steps; the task's box pose, sensors and reward read it."""
    params = PHYSICS["mujoco"]
    first, (states, obs, reward, _, _) = (_row(tree, "contact") for tree in rollouts["mujoco"])
    heading, box, box_yaw, pillar, goal, action = LAYOUTS["contact"]

    model = mjcf.load_model("point", {"pillars": 1, "push_box": 1})
    addresses = mjcf_layout.layout_addresses(model)
    data = mujoco.MjData(model)
    data.qpos[:] = np.asarray(first.mujoco.qpos, np.float64)
    data.mocap_pos[addresses.mocap_bodies["pillar0"]] = (*pillar, mjcf.PILLAR_HALF_HEIGHT)
    # the layout went where it belongs: the robot's joints, the box's free joint (turned), the pillar's mocap row
    q = addresses.free_bodies["push_box"].qpos
    np.testing.assert_allclose(data.qpos[:3], (0.0, 0.0, heading), atol=1e-7)
    np.testing.assert_allclose(data.qpos[q : q + 3], (*box, mjcf.PUSH_BOX_HALF_SIZE), atol=1e-7)
    np.testing.assert_allclose(data.qpos[q + 3 : q + 7], mjcf_layout.yaw_quaternion(box_yaw), atol=1e-7)
    np.testing.assert_allclose(first.mujoco.mocap_pos, data.mocap_pos, atol=1e-7)
    sensor_rows = np.concatenate(
        [np.arange(model.sensor(n).adr[0], model.sensor(n).adr[0] + 3) for n in OBSERVED_SENSORS]
    )

    def dist(a, b):
        return math.dist(a, b)

    last_box = dist((0.0, 0.0, params.agent_height), (*box, mjcf.PUSH_BOX_HALF_SIZE))
    last_goal = dist((*box, mjcf.PUSH_BOX_HALF_SIZE), (*goal, params.goal_height))
    ctrl = np.asarray(f32(action), np.float64)  # the float32 control the task hands MuJoCo
    for t in range(COMPARED):
        data.ctrl[:] = ctrl
        mujoco.mj_step(model, data, nstep=params.frame_skip)
        mujoco.mj_forward(model, data)  # as Safety-Gymnasium's simulation_forward, for the sensors
        np.testing.assert_allclose(states.mujoco.qpos[t], data.qpos, atol=2e-4, err_msg=f"qpos at step {t}")
        np.testing.assert_allclose(states.mujoco.qvel[t], data.qvel, atol=2e-2, err_msg=f"qvel at step {t}")
        np.testing.assert_allclose(obs[t, :12], data.sensordata[sensor_rows], atol=5e-2, rtol=1e-3)
        # the task's fields are MuJoCo's bodies: robot slides and hinge, the box's free joint (yaw of its x axis)
        np.testing.assert_allclose(states.pos[t], data.qpos[:2], atol=2e-4)
        np.testing.assert_allclose(states.box_pos[t], data.qpos[q : q + 2], atol=2e-4)
        w, x, y, z = data.qpos[q + 3 : q + 7]
        yaw = math.atan2(2 * (x * y + w * z), 1 - 2 * (y * y + z * z)) % (2 * math.pi)
        assert float(states.box_yaw[t]) == pytest.approx(yaw, abs=5e-4)
        # the reward: the task's 3-D distances, with the box's centre where MuJoCo has it (its z too)
        box_centre = data.qpos[q : q + 3]
        dist_box = dist((*data.qpos[:2], params.agent_height), box_centre)
        dist_goal = dist(box_centre, (*goal, params.goal_height))
        assert float(reward[t]) == pytest.approx((last_box - dist_box) + (last_goal - dist_goal), abs=2e-4)
        last_box, last_goal = dist_box, dist_goal
    moved = data.qpos[q : q + 2] - np.asarray(box)
    assert np.hypot(*moved) > 0.02  # the robot reached the box and pushed it within the compared steps


def test_full_thrust_pushes_the_box_and_the_pillar_stops_robot_and_box(rollouts):
    """Safety-Gymnasium 1.0.0's measured responses (point_push.py's docstring), from rest at full thrust: the box
    0.8 ahead is at x 2.44 after 100 steps with the robot 0.351 behind it at 1.348 m/s; the pillar 0.8 ahead stops
    the robot with centres 0.349 apart; a box pushed into the pillar stops 0.472 from it.  A centred push is
    unstable in MuJoCo (a start 1e-6 off the axis leaves the box 0.07 sideways after 100 steps, float64 or
    float32), hence the loose sideways bound."""
    _, (states, _, _, _, _) = rollouts["mujoco"]
    centred = _row(states, "centred")
    box, robot = centred.box_pos[99], centred.pos[99]
    assert 2.3 < box[0] < 2.55  # moved 1.5-1.75 m along the push direction (+x) ...
    assert abs(box[1]) < 0.25  # ... and stayed near it
    assert 0.34 < np.hypot(*(box - robot)) < 0.37  # the nose in the box's notch
    assert centred.vel[99, 0] == pytest.approx(1.348, abs=0.03)

    alone = _row(states, "pillar only")
    assert np.all(alone.pos[:, 0] < 0.8 - 0.34)  # never through the pillar
    assert 0.8 - alone.pos[-1, 0] == pytest.approx(0.349, abs=0.005)
    assert np.all(alone.mujoco.mocap_pos == np.asarray([[0.8, 0.0, mjcf.PILLAR_HALF_HEIGHT]], np.float32))
    np.testing.assert_allclose(alone.box_pos[-1], (-4.0, -2.0), atol=1e-4)  # the box nobody touched rests

    blocked = _row(states, "into pillar")
    assert 2.0 - blocked.box_pos[-1, 0] == pytest.approx(0.472, abs=0.01)
    assert np.all(blocked.box_pos[:, 0] < 2.0 - 0.46)
    assert blocked.box_pos[-1, 0] - blocked.pos[-1, 0] == pytest.approx(0.35, abs=0.01)


@pytest.mark.slow  # a printed comparison: nothing asks the two to agree, and the planar program is a second compile
def test_full_thrust_pushing_under_both_physics(rollouts):
    """The pushes at full thrust, 200 steps, on both physics: box displacement, reward and cost sums side by side
    (printed; the planar model is a 2-D approximation, so nothing here asks them to agree).  MuJoCo must keep the
    box on the floor and outside the robot, and its rewards must be the task's (finite, clipped, cost 0/1)."""
    rows = []
    for name in LAYOUTS:
        if name == "contact":
            continue
        line = [f"{name:>13}"]
        for physics in ("mujoco", "planar"):
            first, (states, _, reward, cost, _) = (_row(tree, name) for tree in rollouts[physics])
            moved = states.box_pos[-1] - first.box_pos
            line.append(
                f"{physics}: box moved ({moved[0]:+.2f}, {moved[1]:+.2f}) yaw {float(states.box_yaw[-1]):.2f}"
                f" reward {float(reward.sum()):+.2f} cost {float(cost.sum()):3.0f}"
            )
            if physics == "mujoco":
                q = ENV.world(PHYSICS["mujoco"]).addresses.free_bodies["push_box"].qpos
                box_z = states.mujoco.qpos[:, q + 2]
                # on the floor: the pushed box tilts (its centre rises up to 2.2 cm here), never lifts off or sinks
                assert np.all((box_z > mjcf.PUSH_BOX_HALF_SIZE - 0.005) & (box_z < mjcf.PUSH_BOX_HALF_SIZE + 0.04)), (
                    name
                )
                apart = np.hypot(*(states.box_pos - states.pos).T)
                assert np.all(apart > 0.28), name  # the robot's sphere never inside the box
                assert np.all(np.isfinite(reward)) and np.all(np.abs(reward) <= 10.0), name
                assert set(np.unique(cost)) <= {0.0, 1.0}, name
                if name != "pillar only":
                    assert moved[0] > 0.3, name  # pushed forward
        rows.append("  |  ".join(line))
    print("\nPointPush1, full thrust, 200 steps from rest:\n" + "\n".join(rows))


def test_vmapped_rows_are_stepped_row_by_row(rollouts):
    """The layouts rolled out in one vmapped program give, bit for bit, what each gives rolled out alone (the
    host stepper sets every row's whole state before stepping it)."""
    params = PHYSICS["mujoco"]
    states, batched = rollouts["mujoco"]
    alone = jax.jit(_rollout(params))
    for name in ("contact", "off 0.1", "angled"):
        row = alone(jax.tree.map(lambda x: x[ROW[name]], states), ACTIONS[ROW[name]])
        for got, want in zip(jax.tree.leaves(batched), jax.tree.leaves(row)):
            np.testing.assert_array_equal(got[ROW[name]], want, err_msg=name)
