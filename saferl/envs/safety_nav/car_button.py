"""CarButton1: a JAX re-implementation of Safety-Gymnasium's ``SafetyCarButton1-v0``.

The Car (:mod:`saferl.envs.safety_nav.car`) must press the goal button, one of four colliding spheres,
while avoiding four hazard discs, the wrong buttons, and four gremlins circling their places.
It runs on the navigation engine (:mod:`saferl.envs.safety_nav.engine`: its layout sampler, pseudo-lidar,
action noise and hazard cost), pure ``jax.numpy``, jittable and vmappable.  Sources: the
safety-gymnasium 1.0.0 wheel, ``safety_gymnasium/tasks/safe_navigation/button/button_level{0,1}.py``,
``assets/geoms/buttons.py``, ``assets/mocaps/gremlins.py``, ``builder.py``, ``world.py`` (paths below
``safety_gymnasium/``); ``M-car`` marks what was measured for this port (see :mod:`saferl.envs.safety_nav.car`).

What matches Safety-Gymnasium (``ButtonLevel1`` on ``Car``)
-------------------------------------------------------------
* Layout (:func:`~saferl.envs.safety_nav.placement.sample_layout`): uniform in ``[-1.5, 1.5]^2`` shrunk by each object's
  keep-out, pairwise at least the sum of keep-outs apart, in Safety-Gymnasium's order: agent
  (0.4), four buttons (0.2), the goal (0.4, ``goal.py``'s default), four hazards (0.18), four
  gremlins (0.4); 100 tries per object, and a layout in which an object found no place is
  rejected whole, as ``RandomGenerator.build_layout`` does.  The goal is placed like any
  object and then moved onto the goal button (``build_goal_button``), so its sampled place
  only keeps the hazards and gremlins away, as in the original.  Agent heading uniform.
* The goal button is drawn uniformly from the four at reset and after every press, and may
  repeat.  The goal lidar sees the goal disc, which sits on it.
* Step order of ``Builder.step``: physics; reward ``(last_dist - dist) * 1`` to the goal
  button plus 1 when the car touches it (``goal_achieved`` ignores the timer); cost; the
  timer ticks (``max(0, timer - 1)``); on a press a new goal button, ``last_dist`` to it and
  the timer set to 10 (``resampling_delay``); then the observation.  ``specific_reset`` sets
  the timer to 0.  So after a press 10 observations have ``buttons_lidar`` zeroed, and
  touching a wrong button is free for the next 10 steps.
* Cost terms: ``cost_buttons`` (1 per wrong button touched, only while the timer is 0),
  ``cost_hazards`` (``0.2 - d`` for each hazard with ``d <= 0.2``, ``d`` the xy distance of
  the body origin), ``cost_gremlins`` (1 per gremlin touched); the step's cost is the
  indicator of their sum (``constrain_indicator``).  Gremlins' ``dist_threshold`` and
  ``dist_cost`` are unused in the original and here.
* Gremlins: each mocap sits at ``place + 0.35 (sin t, cos t)``, ``t`` the simulation time
  (``Gremlins.move``; all in phase), and the gremlin box is welded to it.  The weld makes the
  box trail the mocap; measured, it follows like a first-order lag of 0.090 s: steady phase
  lag 0.0898 rad (= atan 0.090) and radius 0.3488 (0.3486 for the lag), from its place at
  ``t = 0`` (M-car).  The boxes move by that lag's exact solution (:func:`gremlin_advance`;
  ``gremlin_lag = 0`` puts them on the circle itself).  The lidar sees the boxes, as the
  original does.
* Observation (88,) in the original's order: the Car's 24 sensors, then the lidars of
  buttons, goal, hazards and gremlins (16 bins, max distance 3, aliasing).  Episodes of 1000
  steps, then ``truncated``; ``terminated`` is always False.

Where it differs, and why
-------------------------
* Contacts are 2-D discs, not MuJoCo's geom collisions: the car's footprint (radius 0.162
  about the body origin) touches a button when their centres are within ``0.162 + 0.1``, and
  a gremlin box within ``0.162 + 0.103``, plus a tolerance of 1e-3 so that a car pushed out
  to touching distance still touches.  These are the mean measured contact distances over
  directions: 0.262 m for buttons (0.207-0.308 by direction: box, bumpers and wheels) and
  0.265 m for gremlins (0.200-0.316 over directions and the box's yaw; riding at z 0.1-0.3,
  a box touches only the chassis; M-car).
* Buttons collide: the car is pushed out and loses its velocity into the button, as it stops
  dead in the original, and the contact has MuJoCo's Coulomb friction 1 at the footprint's
  rim (:func:`saferl.envs.safety_nav.car.push_out_of_discs`): a car pushing into a button off centre is
  held and rolls round it, as in the original, but the disc holds it within a wider cone
  than the original's bumper, and nothing turns it away (see :mod:`saferl.envs.safety_nav.car`).  So
  it touches wrong buttons for longer (below).  Gremlins do not push the car; the car holds
  a gremlin back: each box is kept out of the car's footprint and follows its lag from
  there.  In MuJoCo the box weighs 8e-6 kg against the car's 0.03 and its weld is as soft as
  the contact: measured, a car parked on a gremlin's circle held its box back for 40 steps
  (up to 0.27 m off its orbit) and itself moved 2 cm (M-car).  Box-button contacts are not modelled (the keep-outs
  keep a circling box at least 0.01 m clear of every button).
* The car's dynamics and sensors are the planar model of :mod:`saferl.envs.safety_nav.car`, calibrated
  against the original; see its docstring for the residuals.
* Placement draws its candidates from the engine's counter hash, all of an attempt at once,
  and keeps the least-violating layout after ``layout_restarts`` = 2000 rejected ones
  (Safety-Gymnasium raises after 10000).  Measured: 1.9% of attempts are valid (1.5% in
  Safety-Gymnasium, which needed 57 layouts per reset on average over 200 resets); no layout
  violated a keep-out in 2048 resets.  A reset therefore costs about 50 attempts (~8 ms on
  one CPU core; with one reset per 1000-step episode, resets cost ~1.5 times as much as the
  steps), and a vmapped batch of resets as many attempts as its unluckiest member.

On MuJoCo itself (``physics="mujoco"``, the default)
---------------------------------------------------
The default physics is ``"mujoco"``; ``"planar"`` (the car of :mod:`saferl.envs.safety_nav.car`, about 10x faster
on the host) stays as a labelled fast option: its disc footprint holds the car at a wrong button where the
original's car slides off, which the fidelity rule calls different (docs/decisions/065).
``CarButtonParams(physics="mujoco")`` steps the world of :mod:`saferl.envs.safety_nav.mjcf` (the Car, four
buttons as mocap spheres, four free gremlin boxes welded to their mocaps) with MuJoCo's C library from inside
the compiled step (:mod:`saferl.envs.safety_nav.mujoco_physics`; :class:`ButtonWorld`).  The car's motion and
its 24 sensors, the gremlin boxes and every contact come from MuJoCo; the layout, lidar, hazard cost, goal
choice and timer stay the task's JAX code, and the planar model's differences above (discs, footprint
radii, the boxes' lag and hold-back, the missing box-button contacts) do not apply.  As
``Underlying.simulation_forward`` steps: each of the ``frame_skip`` ``mj_step``s is preceded by
``Gremlins.move`` (mocap at ``place + travel (sin t, cos t)``, ``t`` = substeps x 0.004 s since the reset;
each box keeps the yaw sampled at reset through its weld), and ``mj_forward`` follows the last, so sensors and
contacts are those of the final state.  A button press, a wrong-button touch and a gremlin touch are
contacts in MuJoCo's list between any car geom and that button's sphere or gremlin's box, counted per contact
as ``Buttons``/``Gremlins.cal_cost`` count them.  The state carries MuJoCo's (:class:`ButtonMujocoState`,
float32 between env steps); its mocap places follow ``buttons`` and ``gremlin_places`` every step.  The reset
observation's sensors are the planar car's at rest.  Engine versions differ (MuJoCo 4 here, 2.3.3 there).
Measured, the approach of :mod:`saferl.envs.safety_nav.car`'s docstring (both motors at 1 from 0.5 m at a lone
button 0.05 / 0.10 / 0.15 / 0.20 m off the line of travel): 89 / 70 / 71 / 23 of 100 steps touching it, the
original 89 / 74 / 71 / 24, the planar model 90 / 90 / 89 / 87.

Measured consequences (ours against the original; 64 / 12 episodes of uniform random
actions, 10 / 10 of a lidar-steered goal seeker that ignores hazards, same code for both):
random return -0.92 +- 1.79 / -1.09 +- 1.84, cost 92 +- 80 / 83 +- 91, presses 0.25 / 0.17;
seeker return 19.0 +- 5.5 / 20.1 +- 6.2, cost 451 +- 170 / 304 +- 140, presses 11.3 / 11.7 per
episode.  The fidelity suite's 30 + 30 episodes (``benchmarks/fidelity``, scripted: drive
straight at the goal button): scripted return 18.1 +- 8.5 / 18.7 +- 8.2, cost 418 +- 270 /
324 +- 197, presses 9.5 / 9.7, steps touching a wrong button 336 / 217, in a hazard 25 / 30,
touching a gremlin 67 / 92; random return -1.41 / -1.37, cost 94 / 80, wrong button 39 / 12.
Without button friction (``disc_friction = 0``) the car slid round a wrong button at once and
pressed 39% more often: scripted return 25.3, cost 216, presses 13.5, wrong button 93 (seeker
24.7, 284, 13.9).  The remaining excess of wrong-button steps is the wider holding cone and
the missing turn-away of an off-centre hit (:mod:`saferl.envs.safety_nav.car`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from saferl.envs.base import register
from saferl.envs.mujoco_host import HostPhysics
from saferl.envs.safety_nav import engine, mjcf, mujoco_physics
from saferl.envs.safety_nav.car import (
    CarParams,
    CarState,
    car_at,
    car_sensors,
    car_step,
    footprint_distances,
    forward_direction,
    left_direction,
    push_out_of_discs,
)
from saferl.envs.safety_nav.engine import TWO_PI, NavParams, NavTask
from saferl.envs.safety_nav.placement import keepouts, sample_layout
from saferl.foundation import struct


@struct.dataclass
class CarButtonParams(CarParams, NavParams):
    """ButtonLevel1's numbers; the Car's are in ``CarParams``, the shared reward, cost and lidar in ``NavParams``."""

    # layout (SG ButtonLevel1 and the asset defaults)
    num_buttons: int = struct.field(static=True, default=4)
    num_hazards: int = struct.field(static=True, default=4)
    num_gremlins: int = struct.field(static=True, default=4)
    placement_extent: float = 1.5  # button_level1.py: extents [-1.5, -1.5, 1.5, 1.5]
    agent_keepout: float = 0.4  # agents/car.py
    button_keepout: float = 0.2  # buttons.py
    goal_keepout: float = 0.4  # goal.py default (button_level0 does not change it)
    hazard_keepout: float = 0.18  # button_level1.py
    gremlin_keepout: float = 0.4  # button_level1.py
    placement_tries: int = struct.field(static=True, default=100)  # random_generator.py: 100 tries per object
    layout_restarts: int = struct.field(static=True, default=2000)  # layouts before the fallback (SG: 10000)
    # objects
    button_radius: float = 0.1  # buttons.py size
    hazard_radius: float = 0.2  # hazards.py size
    gremlin_travel: float = 0.35  # button_level1.py
    gremlin_lag: float = 0.09  # s; first-order lag of the welded box behind its mocap (M-car)
    gremlin_contact_radius: float = 0.103  # measured mean contact distance 0.265 minus the footprint
    contact_tolerance: float = 1e-3
    resampling_delay: int = 10  # buttons.py: steps with buttons unobserved and free after a press
    # reward and cost (buttons.py, hazards.py, gremlins.py, base_task.py)
    reward_distance: float = 1.0
    button_cost: float = 1.0
    gremlin_cost: float = 1.0
    # "mujoco" (MuJoCo itself; the module docstring) or "planar" (the JAX model of saferl.envs.safety_nav.car, which
    # fails the fidelity rule at the buttons: docs/decisions/065)
    physics: str = struct.field(static=True, default="mujoco")


@struct.dataclass
class CarButtonState:
    car: CarState
    buttons: jax.Array  # (num_buttons, 2)
    goal_button: jax.Array  # () int32
    hazards: jax.Array  # (num_hazards, 2)
    gremlin_places: jax.Array  # (num_gremlins, 2) the sampled places the gremlins circle
    gremlins: jax.Array  # (num_gremlins, 2) where the gremlin boxes are now
    timer: jax.Array  # () int32, steps left with buttons unobserved and free
    last_dist_goal: jax.Array  # ()
    time: jax.Array  # () int32, steps taken in this episode
    key: jax.Array
    mujoco: ButtonMujocoState | None = None  # physics="mujoco" only: MuJoCo's state of the world


@struct.dataclass
class ButtonMujocoState(mujoco_physics.MujocoState):
    """:class:`~saferl.envs.safety_nav.mujoco_physics.MujocoState` plus the mocap bodies' orientations: each
    gremlin's box is welded to its mocap's pose, so the mocap holds the gremlin's sampled yaw."""

    mocap_quat: jax.Array  # (nmocap, 4)


def gremlin_orbit(sim_time, travel, lag) -> jax.Array:
    """The steady orbit of a gremlin box relative to its place at simulation time ``sim_time``.

    The mocap is at ``travel (sin t, cos t)``; a box obeying ``lag x' = target - x`` settles on
    ``p(t) = travel / (1 + lag^2) (sin t - lag cos t, cos t + lag sin t)``, and from any
    ``x(t0)`` it is at ``p(t) + (x(t0) - p(t0)) exp(-(t - t0) / lag)`` (the exact solution)."""
    t = jnp.asarray(sim_time, jnp.float32)
    scale = travel / (1.0 + lag * lag)
    return scale * jnp.stack([jnp.sin(t) - lag * jnp.cos(t), jnp.cos(t) + lag * jnp.sin(t)], axis=-1)


def gremlin_advance(offsets, t0, dt, travel, lag) -> jax.Array:
    """Offsets (n, 2) of the boxes from their places after ``dt`` more seconds of free motion."""
    decay = jnp.exp(-dt / jnp.maximum(lag, 1e-9))
    return gremlin_orbit(t0 + dt, travel, lag) + (offsets - gremlin_orbit(t0, travel, lag)) * decay


class ButtonWorld(mujoco_physics.NavWorld):
    """CarButton1's MuJoCo world: the Car, ``num_buttons`` buttons and ``num_gremlins`` gremlins, stepped by
    :meth:`step_touching` on a :class:`~saferl.envs.mujoco_host.HostPhysics` that moves the gremlins before every
    substep and counts the contacts of the buttons and gremlin boxes with the car; the inherited ``step`` holds
    the mocaps and knows no gremlin yaw."""

    def __init__(self, num_buttons: int, num_gremlins: int, threads: int | None = None, backend: str = "mujoco"):
        import mujoco  # on first use, as NavWorld: importing the task (the registry imports it) stays cheap

        objects = {"buttons": num_buttons, "gremlins": num_gremlins}
        super().__init__("car", objects, threads=threads, backend=backend, task="CarButton1")
        if backend != "mujoco":  # the button and gremlin contacts are counted from MuJoCo C's contact list
            raise ValueError("CarButton1: physics 'mjx' is not implemented (its contact costs read MuJoCo C's list)")
        self.button_names = [f"button{i}" for i in range(num_buttons)]
        self.gremlin_names = [f"gremlin{i}obj" for i in range(num_gremlins)]
        watched = [self.model.geom(name).id for name in self.button_names + self.gremlin_names]
        self.contact_host = HostPhysics(
            mujoco,
            self.model,
            ("sensordata",),
            forward=True,
            threads=threads,
            watched_geoms=watched,
            robot_body="agent",
        )
        self.timestep = float(self.model.opt.timestep)
        self.button_rows = np.array([self.addresses.mocap_bodies[n] for n in self.button_names], np.int64)
        gremlin_mocaps = [f"gremlin{i}mocap" for i in range(num_gremlins)]
        self.gremlin_rows = np.array([self.addresses.mocap_bodies[n] for n in gremlin_mocaps], np.int64)
        self.ball_qpos = self.addresses.robot_joints["rear"].qpos

    def mocap_path(self, mocap_pos, buttons, gremlin_places, travel, steps, frame_skip: int) -> jax.Array:
        """The ``(frame_skip, nmocap, 3)`` mocap places of an env step after ``steps`` env steps: the buttons on
        the floor where the task has them, each gremlin's mocap at ``place + travel (sin t, cos t)`` at the height
        that lifts its box to ``2 * size`` (``Gremlins.move``; :mod:`saferl.envs.safety_nav.mjcf`), ``t`` the
        simulation time at the start of each substep."""
        times = (steps * frame_skip + jnp.arange(frame_skip)).astype(jnp.float32) * self.timestep
        path = jnp.broadcast_to(mocap_pos, (frame_skip, *mocap_pos.shape))
        button_z = jnp.full((buttons.shape[0], 1), mjcf.BUTTON_RADIUS, jnp.float32)
        path = path.at[:, self.button_rows].set(jnp.concatenate([buttons, button_z], axis=1))
        circle = travel * jnp.stack([jnp.sin(times), jnp.cos(times)], axis=-1)  # (frame_skip, 2)
        gremlin_xy = gremlin_places[None] + circle[:, None]
        gremlin_z = jnp.full((*gremlin_xy.shape[:2], 1), 2 * mjcf.GREMLIN_HALF_SIZE, jnp.float32)
        return path.at[:, self.gremlin_rows].set(jnp.concatenate([gremlin_xy, gremlin_z], axis=-1))

    def step_touching(self, state: ButtonMujocoState, ctrl, path, frame_skip: int):
        """``frame_skip`` substeps along the mocap ``path``: the new state, and the contacts of each button and
        gremlin box with the car (counts) in the final state."""
        host = self.contact_host
        data = host(
            state.qpos, state.qvel, state.qacc_warmstart, ctrl, frame_skip, mocap_path=path, mocap_quat=state.mocap_quat
        )
        sensors = self.observed_sensors(data.sensordata)
        new = ButtonMujocoState(data.qpos, data.qvel, data.qacc_warmstart, path[-1], sensors, state.mocap_quat)
        return new, data.touches

    def car_state(self, state: ButtonMujocoState) -> CarState:
        """The task's :class:`~saferl.envs.safety_nav.car.CarState` read from MuJoCo's: body origin, yaw of body
        +x, the origin's velocity as (forward, left), the yaw rate, and the rear ball's joint quaternion."""
        pos, yaw, vel, yaw_rate = self.free_robot_motion(state)
        planar_vel = jnp.stack([vel @ forward_direction(yaw), vel @ left_direction(yaw)])
        ball = state.qpos[self.ball_qpos : self.ball_qpos + 4]
        return CarState(pos, yaw, planar_vel, yaw_rate, jnp.zeros((), jnp.float32), ball)


_DESCRIPTION = "Safety-Gymnasium CarButton1 in JAX: car presses the goal button past hazards, gremlins, wrong buttons"


@register("CarButton1", _DESCRIPTION)
class CarButton(NavTask):
    """Safety-Gymnasium ``SafetyCarButton1-v0`` (see the module docstring for differences)."""

    description = _DESCRIPTION
    sensor_size = 24
    lidars = ("buttons", "goal", "hazards", "gremlins")

    def default_params(self) -> CarButtonParams:
        return CarButtonParams()

    def check(self, params: CarButtonParams, action=None):
        mujoco_physics.check_physics(params.physics, lambda: self.world(params))
        for name in ("num_buttons", "placement_tries", "layout_restarts", "frame_skip"):
            if getattr(params, name) < 1:
                raise ValueError(f"CarButton1: {name} must be >= 1, got {getattr(params, name)}")
        if params.num_hazards < 0 or params.num_gremlins < 0:
            raise ValueError(
                "CarButton1: num_hazards and num_gremlins must be >= 0, "
                f"got {params.num_hazards}, {params.num_gremlins}"
            )
        if action is not None and jnp.shape(action) != (2,):
            raise ValueError(
                f"CarButton1: the action must have shape (2,) (the two wheel motors), got {jnp.shape(action)}"
            )

    def world(self, params: CarButtonParams) -> ButtonWorld:
        """The MuJoCo world of ``physics="mujoco"`` (built once per button and gremlin count)."""
        counts = (params.num_buttons, params.num_gremlins)
        return self.mujoco_world(counts, params.physics, lambda backend: ButtonWorld(*counts, backend=backend))

    def initial_state(self, key: jax.Array, params: CarButtonParams) -> CarButtonState:
        key, layout_key, rot_key, goal_key = jax.random.split(key, 4)
        nb, nh = params.num_buttons, params.num_hazards
        # Safety-Gymnasium's order: agent, buttons, goal, hazards, gremlins
        keepout = keepouts(
            (1, params.agent_keepout),
            (nb, params.button_keepout),
            (1, params.goal_keepout),
            (nh, params.hazard_keepout),
            (params.num_gremlins, params.gremlin_keepout),
        )
        half = params.placement_extent - keepout  # each object's square shrunk by its keep-out
        layout = sample_layout(layout_key, keepout, half, params.placement_tries, params.layout_restarts)
        car = car_at(layout[0], jax.random.uniform(rot_key, (), minval=0.0, maxval=TWO_PI))
        buttons = layout[1 : 1 + nb]
        goal_button = jax.random.randint(goal_key, (), 0, nb)
        state = CarButtonState(
            car=car,
            buttons=buttons,
            goal_button=goal_button,
            hazards=layout[2 + nb : 2 + nb + nh],
            gremlin_places=layout[2 + nb + nh :],
            gremlins=layout[2 + nb + nh :],
            timer=jnp.zeros((), jnp.int32),
            last_dist_goal=footprint_distances(car, buttons)[goal_button],
            time=jnp.zeros((), jnp.int32),
            key=key,
        )
        if mujoco_physics.simulated(params.physics):
            # the gremlins' yaws (Safety-Gymnasium's generate_rots), from a key the planar path does not use
            yaws = jax.random.uniform(jax.random.fold_in(rot_key, 1), (params.num_gremlins,), maxval=TWO_PI)
            state = state.replace(mujoco=self.mujoco_initial_state(state, yaws, params))
        return state

    def mujoco_initial_state(self, state: CarButtonState, gremlin_yaws, params) -> ButtonMujocoState:
        """The episode's MuJoCo state: the car at rest, each gremlin box resting on the floor at its place with its
        yaw, its mocap holding it there until the first substep moves it, and the buttons at their places."""
        world = self.world(params)
        box_z = jnp.full((params.num_gremlins, 1), mjcf.GREMLIN_HALF_SIZE, jnp.float32)
        boxes = jnp.concatenate([state.gremlin_places, box_z], axis=1)
        button_z = jnp.full((params.num_buttons, 1), mjcf.BUTTON_RADIUS, jnp.float32)
        mocaps = dict(zip(world.button_names, jnp.concatenate([state.buttons, button_z], axis=1)))
        mocaps.update({f"gremlin{i}mocap": boxes[i] for i in range(params.num_gremlins)})
        at_rest = car_sensors(state.car, jnp.zeros((2,), jnp.float32), params)
        yaws = dict(zip(world.gremlin_names, gremlin_yaws))
        boxes = dict(zip(world.gremlin_names, boxes))
        base = world.initial_state(state.car.pos, state.car.yaw, boxes, mocaps, at_rest, free_body_yaws=yaws)
        quats = jax.vmap(mujoco_physics.yaw_quaternion)(gremlin_yaws)
        mocap_quat = jnp.tile(jnp.array([1.0, 0.0, 0.0, 0.0], jnp.float32), (world.model.nmocap, 1))
        mocap_quat = mocap_quat.at[world.gremlin_rows].set(quats)
        fields = {name: getattr(base, name) for name in ("qpos", "qvel", "qacc_warmstart", "mocap_pos", "sensors")}
        return ButtonMujocoState(mocap_quat=mocap_quat, **fields)

    def transition(self, state: CarButtonState, action: jax.Array, params: CarButtonParams):
        key, u = engine.step_uniforms(state.key, (3,))
        ctrl = engine.noisy_control(action, u[:2], params.action_noise)
        is_goal = jnp.arange(params.num_buttons) == state.goal_button
        if mujoco_physics.simulated(params.physics):
            world = self.world(params)
            path = world.mocap_path(
                state.mujoco.mocap_pos,
                state.buttons,
                state.gremlin_places,
                params.gremlin_travel,
                state.time,
                params.frame_skip,
            )
            simulated, touches = world.step_touching(state.mujoco, ctrl, path, params.frame_skip)
            car = world.car_state(simulated)
            gremlins = world.free_body_xy(simulated, world.gremlin_names)
            # contacts from MuJoCo's list, counted per contact as Buttons/Gremlins.cal_cost do
            button_contacts, gremlin_contacts = touches[: params.num_buttons], touches[params.num_buttons :]
            state = state.replace(mujoco=simulated)
        else:
            car = car_step(state.car, ctrl, params)
            button_radii = jnp.full((params.num_buttons,), params.button_radius)
            car = push_out_of_discs(car, state.buttons, button_radii, params, state.car)
            gremlins = self._move_gremlins(state, car, params)
            # contacts: a car pushed out of a button sits at touching distance, within the tolerance
            touch_reach = params.footprint_radius + params.button_radius + params.contact_tolerance
            button_contacts = footprint_distances(car, state.buttons) <= touch_reach
            gremlin_reach = params.footprint_radius + params.gremlin_contact_radius + params.contact_tolerance
            gremlin_contacts = footprint_distances(car, gremlins) <= gremlin_reach
        touching = button_contacts > 0
        button_dist = footprint_distances(car, state.buttons)
        goal_achieved = jnp.any(touching & is_goal)

        # reward (ButtonLevel0.calculate_reward)
        dist_goal = jnp.sum(jnp.where(is_goal, button_dist, 0.0))
        progress = (state.last_dist_goal - dist_goal) * params.reward_distance
        reward = engine.goal_reward(progress, goal_achieved, params)

        # cost (Buttons, Hazards, Gremlins cal_cost), with the timer before its tick
        wrong = jnp.sum(jnp.where(is_goal, 0.0, button_contacts.astype(jnp.float32)))
        cost_buttons = jnp.where(state.timer == 0, params.button_cost * wrong, 0.0)
        hazard_dist = footprint_distances(car, state.hazards)
        cost_hazards = engine.hazard_cost(hazard_dist, params.hazard_radius, params.hazard_cost)
        cost_gremlins = params.gremlin_cost * jnp.sum(gremlin_contacts.astype(jnp.float32))
        cost = engine.indicator(cost_buttons + cost_hazards + cost_gremlins, params.constrain_indicator)

        # timer tick, then a new goal button on a press (Builder.step; ButtonLevel0.update_world)
        timer = jnp.maximum(state.timer - 1, 0)
        new_goal = jnp.minimum(jnp.floor(u[2] * params.num_buttons).astype(jnp.int32), params.num_buttons - 1)
        goal_button = jnp.where(goal_achieved, new_goal, state.goal_button)
        timer = jnp.where(goal_achieved, params.resampling_delay, timer)
        last_dist_goal = jnp.where(goal_achieved, button_dist[goal_button], dist_goal)

        state = state.replace(
            car=car, gremlins=gremlins, goal_button=goal_button, timer=timer, last_dist_goal=last_dist_goal, key=key
        )
        info = {
            "goal_reached": goal_achieved.astype(jnp.float32),
            "cost_buttons": (cost_buttons > 0).astype(jnp.float32),
            "cost_hazards": (cost_hazards > 0).astype(jnp.float32),
            "cost_gremlins": (cost_gremlins > 0).astype(jnp.float32),
        }
        return state, ctrl, reward, cost, info

    def _move_gremlins(self, state: CarButtonState, car: CarState, params: CarButtonParams):
        """One env step of the boxes: the lag towards the circling mocap, then out of the car.

        The car is 4000 times heavier than a box, so in MuJoCo a box that runs into it is held
        back (measured: the car moved 2 cm while a box pressed against it for 40 steps)."""
        dt = params.timestep * params.frame_skip
        t0 = state.time.astype(jnp.float32) * dt
        offsets = gremlin_advance(
            state.gremlins - state.gremlin_places, t0, dt, params.gremlin_travel, params.gremlin_lag
        )
        gremlins = state.gremlin_places + offsets
        delta = gremlins - car.pos
        dist = jnp.sqrt(delta[:, 0] ** 2 + delta[:, 1] ** 2)
        reach = params.footprint_radius + params.gremlin_contact_radius
        direction = delta / jnp.maximum(dist, 1e-9)[:, None]
        return jnp.where((dist < reach)[:, None], car.pos + reach * direction, gremlins)

    # ---------------------------------------------------------------- observation

    def pose(self, state: CarButtonState):
        return state.car.pos, state.car.yaw

    def planar_sensors(self, state: CarButtonState, ctrl, params: CarButtonParams):
        return car_sensors(state.car, ctrl, params)

    def lidar_objects(self, state: CarButtonState, params: CarButtonParams):
        is_goal = jnp.arange(params.num_buttons) == state.goal_button
        goal = jnp.sum(jnp.where(is_goal[:, None], state.buttons, 0.0), axis=0)
        return state.buttons, goal[None], state.hazards, state.gremlins

    def lidar_readings(self, state: CarButtonState, params: CarButtonParams):
        """The buttons' lidar reads zero while the timer runs (``Buttons``' ``resampling_delay``)."""
        buttons, *others = super().lidar_readings(state, params)
        return [jnp.where(state.timer == 0, buttons, 0.0), *others]
