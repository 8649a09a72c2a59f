"""CarButton1: a JAX re-implementation of Safety-Gymnasium's ``SafetyCarButton1-v0``.

The Car (:mod:`saferl.envs.safety_nav.car`) must press the goal button, one of four colliding spheres,
while avoiding four hazard discs, the wrong buttons, and four gremlins circling their places.
It runs on PointGoal1's 2-D engine (:mod:`saferl.envs.safety_nav.point_goal`: its candidate placement and
pseudo-lidar), pure ``jax.numpy``, jittable and vmappable.  Sources are tagged as in
``/work/shared/specs/environments.md`` section 3.5 (``SG:`` the 1.0.0 wheel:
``tasks/safe_navigation/button/button_level{0,1}.py``, ``assets/geoms/buttons.py``,
``assets/mocaps/gremlins.py``, ``builder.py``, ``world.py``; ``M-car``: measured for this
port, see :mod:`saferl.envs.safety_nav.car`).

What matches Safety-Gymnasium (``ButtonLevel1`` on ``Car``)
-------------------------------------------------------------
* Layout (:func:`sample_layout`): uniform in ``[-1.5, 1.5]^2`` shrunk by each object's
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
* Placement draws its candidates from PointGoal1's counter hash, all of an attempt at once,
  and keeps the least-violating layout after ``layout_restarts`` = 2000 rejected ones
  (Safety-Gymnasium raises after 10000).  Measured: 1.9% of attempts are valid (1.5% in
  Safety-Gymnasium, which needed 57 layouts per reset on average over 200 resets); no layout
  violated a keep-out in 2048 resets.  A reset therefore costs about 50 attempts (~8 ms on
  one CPU core; with one reset per 1000-step episode, resets cost ~1.5 times as much as the
  steps), and a vmapped batch of resets as many attempts as its unluckiest member.

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

import math

import jax
import jax.numpy as jnp

from saferl.foundation import struct
from saferl.envs.base import Box, Environment, register
from saferl.envs.safety_nav.car import CarParams, CarState, car_at, car_sensors, car_step, footprint_distances, push_out_of_discs
from saferl.envs.safety_nav.point_goal import hash_uniform, pick_placement, pseudo_lidar

TWO_PI = 2.0 * math.pi


@struct.dataclass
class CarButtonParams(CarParams):
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
    reward_goal: float = 1.0
    reward_clip: float = 10.0
    button_cost: float = 1.0
    hazard_cost: float = 1.0
    gremlin_cost: float = 1.0
    constrain_indicator: bool = struct.field(static=True, default=True)
    # episode
    max_steps: int = struct.field(default=1000, kw_only=True)
    # pseudo-lidar (base_task.py LidarConf)
    lidar_num_bins: int = struct.field(static=True, default=16)
    lidar_max_dist: float = 3.0
    lidar_alias: bool = struct.field(static=True, default=True)


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


def sample_layout(key, keepout, half, tries, restarts):
    """Safety-Gymnasium's rejection sampler (``RandomGenerator.build_layout``) in fixed shapes.

    An attempt places the objects in order, each at the first of ``tries`` uniform candidates
    in ``[-half_i, half_i]^2`` that keeps ``keepout_i + keepout_j`` from those placed before
    it (PointGoal1's :func:`~saferl.envs.safety_nav.point_goal.pick_placement`); an attempt in which some
    object found no such candidate is rejected and a new one drawn, as Safety-Gymnasium
    rejects a layout (it allows 100 tries per object and 10000 layouts).  After ``restarts``
    attempts the least-violating one is kept.  Returns the (n, 2) layout.

    CarButton1 is crowded: measured, 1.9% of attempts are valid (1.5% in Safety-Gymnasium,
    which needed 57 layouts per reset on average over 200 resets), so a reset costs about
    50 attempts, and a vmapped batch of resets as many as its unluckiest member."""
    n = keepout.shape[0]
    need = keepout[:, None] + keepout[None, :]
    upper = jnp.arange(n)[:, None] < jnp.arange(n)[None, :]

    def attempt(i):
        candidates = (2.0 * hash_uniform(jax.random.fold_in(key, i), (n, tries, 2)) - 1.0) * half[:, None, None]

        def place(layout, inputs):  # one loop body for all objects: quick to compile
            j, cands = inputs
            min_dist = jnp.where(jnp.arange(n) < j, keepout + keepout[j], -jnp.inf)
            return layout.at[j].set(pick_placement(cands, layout, min_dist)), None

        layout, _ = jax.lax.scan(place, jnp.zeros((n, 2), jnp.float32), (jnp.arange(n), candidates))
        dx = layout[:, 0, None] - layout[None, :, 0]
        dy = layout[:, 1, None] - layout[None, :, 1]
        return layout, jnp.min(jnp.where(upper, jnp.sqrt(dx * dx + dy * dy) - need, jnp.inf))

    def rejected(carry):
        i, _, slack = carry
        return (slack < 0.0) & (i < restarts)

    def retry(carry):
        i, best, best_slack = carry
        layout, slack = attempt(i)
        better = slack > best_slack
        return i + 1, jnp.where(better, layout, best), jnp.where(better, slack, best_slack)

    layout, slack = attempt(jnp.int32(0))
    _, layout, _ = jax.lax.while_loop(rejected, retry, (jnp.int32(1), layout, slack))
    return layout


_DESCRIPTION = "Safety-Gymnasium CarButton1 in JAX: car presses the goal button past hazards, gremlins, wrong buttons"


@register("CarButton1", _DESCRIPTION)
class CarButton(Environment):
    """Safety-Gymnasium ``SafetyCarButton1-v0`` (see the module docstring for differences)."""

    description = _DESCRIPTION
    cost_shape = ()
    config_defaults = {"num_envs": 16, "rollout_steps": 1000, "reset_pool": 1,
                       "constraint": {"type": "expected", "limit": 25.0}}  # C-TRPO: cost limit 25 (spec 3.1)

    def default_params(self) -> CarButtonParams:
        return CarButtonParams()

    def observation_space(self, params: CarButtonParams) -> Box:
        n = params.lidar_num_bins
        low = jnp.concatenate([jnp.full((24,), -jnp.inf), jnp.zeros((4 * n,))])
        high = jnp.concatenate([jnp.full((24,), jnp.inf), jnp.ones((4 * n,))])
        return Box(low=low, high=high, shape=(24 + 4 * n,))

    def action_space(self, params: CarButtonParams) -> Box:
        return Box(low=-1.0, high=1.0, shape=(2,))

    # ---------------------------------------------------------------- reset

    @staticmethod
    def _check(params: CarButtonParams):
        for name in ("num_buttons", "placement_tries", "layout_restarts", "frame_skip"):
            if getattr(params, name) < 1:
                raise ValueError(f"CarButton1: {name} must be >= 1, got {getattr(params, name)}")
        if params.num_hazards < 0 or params.num_gremlins < 0:
            raise ValueError(f"CarButton1: num_hazards and num_gremlins must be >= 0, got {params.num_hazards}, {params.num_gremlins}")

    def reset(self, key: jax.Array, params: CarButtonParams):
        self._check(params)
        key, layout_key, rot_key, goal_key = jax.random.split(key, 4)
        nb, nh, ng = params.num_buttons, params.num_hazards, params.num_gremlins
        keepout = jnp.concatenate([
            jnp.reshape(params.agent_keepout, (1,)),
            jnp.full((nb,), params.button_keepout),
            jnp.reshape(params.goal_keepout, (1,)),
            jnp.full((nh,), params.hazard_keepout),
            jnp.full((ng,), params.gremlin_keepout),
        ]).astype(jnp.float32)
        layout = sample_layout(layout_key, keepout, params.placement_extent - keepout, params.placement_tries, params.layout_restarts)
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
        return state, self._obs(state, jnp.zeros((2,), jnp.float32), params)

    # ---------------------------------------------------------------- step

    def step(self, state: CarButtonState, action: jax.Array, params: CarButtonParams):
        if jnp.shape(action) != (2,):
            raise ValueError(f"CarButton1: the action must have shape (2,) (the two wheel motors), got {jnp.shape(action)}")
        key, sub = jax.random.split(state.key)
        u = hash_uniform(sub, (3,))
        ctrl = jnp.clip(jnp.asarray(action, jnp.float32), -1.0, 1.0)
        gauss = math.sqrt(2.0) * jax.scipy.special.erfinv(jnp.clip(2.0 * u[:2] - 1.0, -1.0 + 1e-7, 1.0 - 1e-7))
        ctrl = jnp.clip(ctrl + params.action_noise * gauss, -1.0, 1.0)  # MuJoCo clamps ctrl to ctrlrange

        car = car_step(state.car, ctrl, params)
        button_radii = jnp.full((params.num_buttons,), params.button_radius)
        car = push_out_of_discs(car, state.buttons, button_radii, params, state.car)
        time = state.time + 1

        # contacts: a car pushed out of a button sits at touching distance, within the tolerance
        touch_reach = params.footprint_radius + params.button_radius + params.contact_tolerance
        button_dist = footprint_distances(car, state.buttons)
        touching = button_dist <= touch_reach
        is_goal = jnp.arange(params.num_buttons) == state.goal_button
        goal_achieved = jnp.any(touching & is_goal)

        # reward (ButtonLevel0.calculate_reward)
        dist_goal = jnp.sum(jnp.where(is_goal, button_dist, 0.0))
        reward = (state.last_dist_goal - dist_goal) * params.reward_distance
        reward = reward + jnp.where(goal_achieved, params.reward_goal, 0.0)
        reward = jnp.clip(reward, -params.reward_clip, params.reward_clip)

        # cost (Buttons, Hazards, Gremlins cal_cost), with the timer before its tick
        wrong = jnp.sum((touching & ~is_goal).astype(jnp.float32))
        cost_buttons = jnp.where(state.timer == 0, params.button_cost * wrong, 0.0)
        hazard_dist = footprint_distances(car, state.hazards)
        cost_hazards = jnp.sum(jnp.where(hazard_dist <= params.hazard_radius, params.hazard_cost * (params.hazard_radius - hazard_dist), 0.0))
        gremlins = self._move_gremlins(state, car, params)
        gremlin_reach = params.footprint_radius + params.gremlin_contact_radius
        gremlin_touch = footprint_distances(car, gremlins) <= gremlin_reach + params.contact_tolerance
        cost_gremlins = params.gremlin_cost * jnp.sum(gremlin_touch.astype(jnp.float32))
        cost = cost_buttons + cost_hazards + cost_gremlins
        if params.constrain_indicator:
            cost = (cost > 0.0).astype(jnp.float32)

        # timer tick, then a new goal button on a press (Builder.step; ButtonLevel0.update_world)
        timer = jnp.maximum(state.timer - 1, 0)
        new_goal = jnp.minimum(jnp.floor(u[2] * params.num_buttons).astype(jnp.int32), params.num_buttons - 1)
        goal_button = jnp.where(goal_achieved, new_goal, state.goal_button)
        timer = jnp.where(goal_achieved, params.resampling_delay, timer)
        last_dist_goal = jnp.where(goal_achieved, button_dist[goal_button], dist_goal)

        state = state.replace(
            car=car, gremlins=gremlins, goal_button=goal_button, timer=timer, last_dist_goal=last_dist_goal, time=time, key=key
        )
        obs = self._obs(state, ctrl, params)
        truncated = time >= params.max_steps
        info = {
            "goal_reached": goal_achieved.astype(jnp.float32),
            "cost_buttons": (cost_buttons > 0).astype(jnp.float32),
            "cost_hazards": (cost_hazards > 0).astype(jnp.float32),
            "cost_gremlins": (cost_gremlins > 0).astype(jnp.float32),
        }
        return state, obs, reward.astype(jnp.float32), cost.astype(jnp.float32), jnp.zeros((), bool), truncated, info

    # ---------------------------------------------------------------- pieces

    def _move_gremlins(self, state: CarButtonState, car: CarState, params: CarButtonParams):
        """One env step of the boxes: the lag towards the circling mocap, then out of the car.

        The car is 4000 times heavier than a box, so in MuJoCo a box that runs into it is held
        back (measured: the car moved 2 cm while a box pressed against it for 40 steps)."""
        dt = params.timestep * params.frame_skip
        t0 = state.time.astype(jnp.float32) * dt
        offsets = gremlin_advance(state.gremlins - state.gremlin_places, t0, dt, params.gremlin_travel, params.gremlin_lag)
        gremlins = state.gremlin_places + offsets
        delta = gremlins - car.pos
        dist = jnp.sqrt(delta[:, 0] ** 2 + delta[:, 1] ** 2)
        reach = params.footprint_radius + params.gremlin_contact_radius
        direction = delta / jnp.maximum(dist, 1e-9)[:, None]
        return jnp.where((dist < reach)[:, None], car.pos + reach * direction, gremlins)

    def _obs(self, state: CarButtonState, ctrl, params: CarButtonParams):
        car = state.car
        lidar = dict(num_bins=params.lidar_num_bins, max_dist=params.lidar_max_dist, alias=params.lidar_alias)
        buttons_lidar = pseudo_lidar(car.pos, car.yaw, state.buttons, **lidar)
        buttons_lidar = jnp.where(state.timer == 0, buttons_lidar, 0.0)
        goal = jnp.sum(jnp.where((jnp.arange(params.num_buttons) == state.goal_button)[:, None], state.buttons, 0.0), axis=0)
        return jnp.concatenate([
            car_sensors(car, ctrl, params),
            buttons_lidar,
            pseudo_lidar(car.pos, car.yaw, goal[None], **lidar),
            pseudo_lidar(car.pos, car.yaw, state.hazards, **lidar),
            pseudo_lidar(car.pos, car.yaw, state.gremlins, **lidar),
        ]).astype(jnp.float32)
