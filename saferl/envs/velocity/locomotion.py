"""The shared base of the Safety-Gymnasium velocity tasks: Gymnasium's MuJoCo v4 robots, stepped by MuJoCo C or MJX.

Safety-Gymnasium 1.0's ``Safety<Robot>Velocity-v1`` tasks (``safety_gymnasium/tasks/safe_velocity/
safety_*_velocity_v{0,1}.py``) subclass Gymnasium's MuJoCo v4 environments
(``gymnasium/envs/mujoco/<robot>_v4.py``), keep their reward, termination, observation and reset
and add one cost: ``1`` on a step whose finite-difference velocity exceeds a threshold
(``float(velocity > threshold)``).  The v1 classes only change the thresholds.  This module holds
what the four tasks share, Gymnasium's v4 reward, termination and observation included, with the defaults
the robots share (:class:`RobotParams`, :class:`HealthParams`); each task file (``ant_velocity.py``,
``half_cheetah_velocity.py``, ``hopper_velocity.py``, ``humanoid_velocity.py``) holds the defaults it
changes and what of its robot differs: the position its velocity is taken of, its health test, its
observation.  Every constant comes from gymnasium 0.28.1 (the version safety-gymnasium 1.0.0 pins),
``gymnasium/envs/mujoco/<robot>_v4.py`` (reward weights, health ranges, observation, reset noise, frame skip)
and ``gymnasium/envs/mujoco/assets/<robot>.xml`` (timesteps, gears, control ranges), or from safety-gymnasium
1.0.0's ``safety_*_velocity_v1.py`` (the cost thresholds); each parameter's declaration names its file.

Physics
-------
``LocomotionParams.physics`` (static) chooses what steps the robot; everything else (reward, cost, termination,
observation, reset) is the same JAX code for both:

* ``"mujoco"`` (the default): MuJoCo's C library on the host, reached from the compiled step by a callback
  (:mod:`saferl.envs.mujoco_host`), on the model file as written -- float64, the file's own solver and
  iteration limits, MuJoCo's contact frames: the engine Safety-Gymnasium runs, so the faithful choice, and on a CPU the
  fast one (Hopper ~4x MJX's env-steps/s, Humanoid ~10x; docs/results/measurements.md, "CPO on
  SafetyHopperVelocity" and "Random-action rollouts").  The state is carried between env steps in float32 (see
  that module).
* ``"mjx"``: MJX, in JAX, for accelerators (the callback would move the batch to the host every step).  The
  items below that name MJX (its float32, solver caps, contact candidates and frames) describe this backend.

What matches the original
-------------------------
* The robots are Gymnasium's own model files, read at run time from the installed ``gymnasium``
  package (``gymnasium/envs/mujoco/assets/<robot>.xml``) with ``mujoco.MjModel.from_xml_path`` and
  put on the device with ``mujoco.mjx.put_model``; no model file is copied into saferl.  Their
  timestep, integrator, joints, actuators, contacts and solver tolerance are used as written; the
  solver's iteration caps (below) and the Humanoid's solver (its task file) are the changes.
* Step (``MujocoEnv.do_simulation``): ``ctrl`` is held for ``frame_skip`` physics steps, so
  ``dt = timestep * frame_skip``; the velocity is ``(p_after - p_before) / dt`` where ``p`` is the
  task's position read the way Gymnasium reads it.  Gymnasium reads body positions (``xipos``,
  which ``get_body_com`` and ``mass_center`` use) from ``mjData`` after ``mj_step``, where they
  still hold the kinematics of the last forward evaluation, not of the final ``qpos`` (for RK4,
  the fourth stage of the last sub-step).  The state carries that read-out, ``position``, from one
  step to the next, so ``p_before`` is exactly what Gymnasium's next ``step`` reads; at reset it is
  computed from fresh kinematics, as ``set_state``'s ``mj_forward`` leaves it.
* Cost: ``1.0`` if the task's velocity is ``> velocity_threshold`` (strict), else ``0.0``.
* Actions: the C-TRPO harness wraps each task in ``SafeRescaleAction(-1, 1)`` (milosen/ctrpo
  ``algorithms/baselines/common/env.py``), so the action space here is ``[-1, 1]^nu`` and the action is mapped
  affinely onto the actuators' ``ctrlrange`` (the identity for Ant, HalfCheetah and Hopper; ``0.4 a`` for the
  Humanoid).  That wrapper does not clip, and the authors step their envs with the actor's Gaussian sample as
  drawn, so a task receives controls outside ``ctrlrange``: MuJoCo clamps them for the physics (the actuators
  are ``ctrllimited``), while ``ant_v4``'s ``control_cost(action)``, ``half_cheetah_v4``'s and ``hopper_v4``'s
  alike, and ``humanoid_v4``'s ``data.ctrl`` (which MuJoCo leaves as written) square the unclipped value.  So
  here: ``clip_actions = False`` (the trainer does not clip, :mod:`saferl.envs.base`), the physics runs on the
  controls clamped to ``ctrlrange`` (:meth:`LocomotionEnv.ctrl_from_action`) and the reward's control cost is on
  the unclipped ones (:meth:`LocomotionEnv.controls_from_action`).  Until 2026-12-02 saferl clipped first, which
  left exploration noise outside ``[-1, 1]`` unpenalised (docs/decisions/058-ctrpo-harness-raw-actions-and-std.md).
* Reset (``reset_model``): ``qpos = qpos0 + U(-s, s)`` (every coordinate, quaternions included and
  not renormalised, as ``set_state`` writes them) and ``qvel = s N(0, 1)`` (Ant, HalfCheetah) or
  ``U(-s, s)`` (Hopper, Humanoid); ``qpos0`` is the model's reference pose, Gymnasium's
  ``init_qpos``.  Episodes are truncated at ``max_steps = 1000`` (Safety-Gymnasium's registered
  ``max_episode_steps``).
* RK4 (Ant, Hopper, Humanoid): MuJoCo's ``mj_RungeKutta`` scheme -- four forward evaluations at
  ``X0``, ``X0 + h/2 F1``, ``X0 + h/2 F2``, ``X0 + h F3`` (positions by ``mj_integratePos``), the
  weighted sum ``(1, 2, 2, 1) / 6``, all four stages warm-started from the step's
  ``qacc_warmstart`` and the next step's being the last stage's ``qacc`` (checked in MuJoCo 4.0:
  ``mj_forward`` leaves ``qacc_warmstart``, ``mj_step`` sets it to the last stage's), and the
  derived quantities (``xipos``, ``cinert``, ``cvel``, ``qfrc_actuator``, contacts) left from the
  last stage, as ``mj_step`` leaves them.
  Euler (HalfCheetah) is ``mjx.step``, with MuJoCo's implicit joint damping.

Where it differs, and why
-------------------------
* RK4 is written as a ``lax.scan`` over the four stages with one ``mjx.forward`` in its body
  (``mjx.step`` unrolls the stages: four copies of the forward pass), so an RK4 task compiles one
  forward pass instead of four.  Measured on the Ant (one env step, XLA optimisation level 0, the
  same process): 75 s to the first result against 150 s with ``mjx.step``; the two agree to 2e-6 in
  ``qvel`` (float32 round-off), and the one-step comparison with ``mujoco.mj_step`` (tests) checks
  the arithmetic.
* MJX computes in float32 (MuJoCo in float64).  One env step from the same float32 state, against
  ``mujoco.mj_step`` (208 states of random-action trajectories per robot, the tasks' default solver
  caps), largest ``|qvel|`` difference: Hopper 4.7e-6 and Humanoid 8.4e-5 (round-off: MuJoCo's own
  change for a 1e-7 relative perturbation is of the same size), HalfCheetah 1.1e-3 at its stiffest
  contacts (round-off elsewhere), Ant up to ~1 (next item).
* MJX's plane-capsule contact frame (``mujoco/mjx/_src/collision_primitive.py``, ``plane_capsule``)
  aligns the first tangent with the capsule's axis projected on the plane, as MuJoCo does, but falls
  back to the world y axis when that projection is shorter than 0.5 (a capsule steeper than 60
  degrees); MuJoCo aligns it whatever the tilt.  With the models' pyramidal friction cones the
  friction pyramid of such a contact is then rotated (by 45 degrees for the Ant's diagonal legs),
  and the contact forces differ.  The planar robots (Hopper, HalfCheetah) are unaffected (both
  frames are axis-aligned with their plane); for the Ant, 19% of capsule-floor contacts under a
  random policy are that steep, and those steps differ from MuJoCo by up to ~1 in ``qvel`` (in
  float64 MJX too: it is the model, not the precision).  Measured consequences in ``ant_velocity``.
* MJX's Newton solver is capped at ``solver_iterations = 4`` with ``ls_iterations = 8`` line-search
  steps by default (the models leave MuJoCo's 100 and 50; the Humanoid 50 and 50).  MJX stops on a
  relative improvement of 1e-8, which float32 rarely reaches, and under ``vmap`` every environment
  waits for the slowest and every line search runs all its steps, so uncapped it spends most of its
  time on iterations that change nothing.  Measured on the 208 states per robot: (4, 8) agrees with
  MuJoCo to the same digits as the uncapped solver for Hopper, HalfCheetah and the Humanoid, and
  to the same size for the Ant (whose differences are the contact frames above); (2, 4) does for
  Hopper but not HalfCheetah.  The caps double the speed (task files).
  ``LocomotionEnv(solver_iterations=None, ls_iterations=None)`` keeps the model's.
* MJX evaluates a fixed set of candidate contacts every step (every geom pair that may collide, two
  per capsule-plane pair: 25 for the Ant, 16 HalfCheetah, 11 Hopper, 138 Humanoid), where MuJoCo
  keeps only those within the margin; only those within the margin become constraints in either.
* Contact margins.  MuJoCo 2.3.3 (what Safety-Gymnasium 1.0 pins) gives a geom pair the larger of
  its two geoms' margins; MuJoCo 4 and MJX give it their sum (``collision_driver.py``:
  ``geom_margin[g1] + geom_margin[g2]``), so with the file's margins a foot would feel the floor from
  twice the distance (Ant 2 cm instead of 1 cm, Hopper and Humanoid 2 mm instead of 1 mm).  Every
  geom of each model has the same margin (HalfCheetah 0), so halving each
  (:func:`~saferl.envs.velocity.gymnasium_models.match_margin_rule`) gives every pair exactly 2.3.3's margin.
  Measured (``benchmarks/fidelity``, 100 fixed steps from
  one state against Safety-Gymnasium 1.0; docs/results/fidelity/safety_gymnasium.md): with the
  file's margins MJX parted from the original at step 10 (Hopper) and 11 (Humanoid) by more than
  1e-3 in the observation; MuJoCo 4.0 in float64 with halved margins matches 2.3.3's Hopper to the
  last digit over all 100 steps.  The one-step agreement figures above are against MuJoCo 4.0 on
  the same (halved) model, so they are unaffected.
* A non-finite state ends the episode (``terminated``) with reward 0 and the state replaced by the
  last finite one; MuJoCo would instead print a warning and reset the simulation inside
  ``mj_step``, unseen by the agent.  Only the Ant's termination tests finiteness in Gymnasium.

Speed
-----
Uniform random actions, episodes reset in place, one compiled ``vmap`` of a ``lax.scan`` of env steps, on
the CPU (2 cores shared with other jobs); ``saferl bench --env TASK --env-grid 16x1`` measures it (until
2026-12-02 a manual tool in this module did).  Default physics, MuJoCo C on the host, 16 envs x 500 steps
at load 5: Hopper 4,800 env-steps/s (compile 4 s), HalfCheetah 8,300 (5 s), Ant 2,500 (14 s), Humanoid
2,400 (22 s).  MJX physics is several times slower on the CPU (:mod:`saferl.envs.velocity.mjx_physics`).

Modules: the MJX backend is :mod:`saferl.envs.velocity.mjx_physics`, the MuJoCo C one
:mod:`saferl.envs.mujoco_host`; both load the model files with :mod:`saferl.envs.velocity.gymnasium_models`.
"""

from __future__ import annotations

from typing import ClassVar

import jax
import jax.numpy as jnp

from saferl.envs.base import Box, Environment, EnvParams
from saferl.envs.mujoco_host import PHYSICS, RK4_ORIENTATIONS, HostPhysics
from saferl.envs.velocity import mjx_physics
from saferl.envs.velocity.gymnasium_models import gymnasium_asset, load_model, match_margin_rule
from saferl.foundation import struct


@struct.dataclass
class RobotParams(EnvParams):
    """The episode, step and reward weights of Gymnasium's MuJoCo robots (``gymnasium/envs/mujoco/<robot>_v4.py``),
    with the defaults most of them share; a robot's parameters redeclare the ones it changes, with their source."""

    max_steps: int = struct.field(default=1000, kw_only=True)  # Safety-Gymnasium and Gymnasium: max_episode_steps
    frame_skip: int = struct.field(static=True, default=5)  # physics steps per env step: the v4 robots but the Hopper
    reset_noise_scale: float = 0.1  # ant_v4.py, half_cheetah_v4.py
    forward_reward_weight: float = 1.0  # half_cheetah_v4.py, hopper_v4.py; ant_v4.py: forward_reward = x_velocity
    ctrl_cost_weight: float = 0.1  # half_cheetah_v4.py, humanoid_v4.py


@struct.dataclass
class HealthParams(RobotParams):
    """A robot that can fall (Gymnasium's Ant, Hopper, Humanoid): ``healthy_reward`` on healthy steps and, with
    ``terminate_when_unhealthy``, the episode's end on an unhealthy one; the torso's height range is the Ant's."""

    healthy_reward: float = 1.0  # ant_v4.py, hopper_v4.py
    terminate_when_unhealthy: bool = struct.field(static=True, default=True)  # ant_v4.py, hopper_v4.py, humanoid_v4.py
    healthy_z_min: float = 0.2  # ant_v4.py healthy_z_range
    healthy_z_max: float = 1.0


@struct.dataclass
class LocomotionParams(RobotParams):
    """What every velocity task has; the tasks that can fall add :class:`HealthParams`."""

    velocity_threshold: float = 1.0  # cost = 1 where the task's velocity exceeds it
    # the env step's physics: MuJoCo's C library on the host ("mujoco", what Safety-Gymnasium runs; the CPU's fast
    # path) or MJX ("mjx", for accelerators); see the module docstring
    physics: str = struct.field(static=True, default="mujoco", kw_only=True)
    # how RK4 moves a free or ball joint's orientation: "uncorrected" as the original's MuJoCo 2.3.3 (the default;
    # saferl.envs.mujoco_rk4 on the host, mjx_physics.rk4_step on MJX) or "munthe-kaas" as MuJoCo 4.0's mj_step
    # (physics "mujoco" only); docs/decisions/066
    rk4_orientation: str = struct.field(static=True, default="uncorrected", kw_only=True)

    def __post_init__(self):
        if self.physics not in PHYSICS:
            raise ValueError(f"env_params.physics must be one of {', '.join(PHYSICS)}, got {self.physics!r}")
        if self.rk4_orientation not in RK4_ORIENTATIONS:
            raise ValueError(
                f"env_params.rk4_orientation must be one of {', '.join(RK4_ORIENTATIONS)}, got {self.rk4_orientation!r}"
            )
        if self.physics == "mjx" and self.rk4_orientation != "uncorrected":
            raise ValueError(
                f"env_params.rk4_orientation {self.rk4_orientation!r} is MuJoCo 4.0's mj_step (physics 'mujoco'); "
                "physics 'mjx' steps RK4 uncorrected"
            )


@struct.dataclass
class LocomotionState:
    qpos: jax.Array  # (nq,)
    qvel: jax.Array  # (nv,)
    qacc_warmstart: jax.Array  # (nv,) the constraint solver's warm start
    position: jax.Array  # (k,) the task's position as the next step reads it (see the module docstring)
    time: jax.Array  # () int32, steps taken in this episode


class LocomotionEnv(Environment):
    """A Gymnasium MuJoCo v4 robot in MJX with Safety-Gymnasium's velocity cost.

    ``solver_iterations`` and ``ls_iterations`` cap MJX's Newton solver (default 4 and 8; ``None``
    keeps the model file's own, MuJoCo's 100 and 50): see "Where it differs" above.

    Subclasses set ``params_class``, ``asset`` and ``velocity_noise``; the hooks below give Gymnasium's v4 forms,
    which a task overrides where its robot differs: :meth:`body_position` and :meth:`cost_velocity` (a planar
    robot's x), :meth:`is_healthy` (a robot that cannot fall), :meth:`observation` and :meth:`observation_size`
    (``qpos`` less the root's ``unobserved_positions``, then ``qvel``); :meth:`configure_model` may change the
    MuJoCo model before it goes to MJX.
    """

    #: the raw sample reaches the task, whose control cost squares it (module docstring, "Actions")
    clip_actions: ClassVar[bool] = False
    # the C-TRPO benchmark's cost limit (milosen/ctrpo runs' config.json); 16 x 1000 steps per iteration as PointGoal1
    config_defaults: ClassVar[dict] = {
        "num_envs": 16,
        "rollout_steps": 1000,
        "constraint": {"type": "expected", "limit": 25.0},
    }
    #: model file in gymnasium/envs/mujoco/assets/
    asset: ClassVar[str] = ""
    #: reset noise of qvel: "normal" (s N(0, 1)) or "uniform" (U(-s, s))
    velocity_noise: ClassVar[str] = "uniform"
    #: whether :meth:`body_position` or :meth:`observation` read kinematics (then reset computes them)
    reset_kinematics: ClassVar[bool] = False
    #: whether :meth:`observation` reads the external contact forces (``cfrc_ext``)
    needs_contact_forces: ClassVar[bool] = False
    #: the data fields :meth:`body_position` and :meth:`observation` read beyond ``qpos`` and ``qvel``
    #: (what the host physics returns; ``mujoco_host.FIELD_SHAPES``)
    host_fields: ClassVar[tuple[str, ...]] = ()
    #: how many leading ``qpos`` entries, the root's position in the plane, the observation leaves out (Gymnasium's
    #: ``exclude_current_positions_from_observation``): x for the planar robots, x and y for the others
    unobserved_positions: ClassVar[int] = 1

    def __init__(self, solver_iterations: int | None = 4, ls_iterations: int | None = 8):
        mujoco, mjx = mjx_physics.import_mjx(f"{type(self).__name__} (MuJoCo MJX)")
        self._mjx = mjx
        self._mujoco = mujoco
        mj_model = load_model(mujoco, gymnasium_asset(self.asset))
        match_margin_rule(mj_model)
        # the host physics steps the file's model as Safety-Gymnasium does (its solver and iteration caps),
        # with 2.3.3's pair margins; configure_model and the caps below are for MJX
        self.host_model = load_model(mujoco, gymnasium_asset(self.asset))
        match_margin_rule(self.host_model)
        self._host_physics: dict[str, HostPhysics] = {}
        self.configure_model(mj_model)
        mjx_physics.cap_solver(mj_model, self.asset, solver_iterations, ls_iterations)
        self.mj_model = mj_model
        self.model = mjx.put_model(mj_model)
        self._data0 = mjx.make_data(self.model)
        self.nq, self.nv, self.nu = mj_model.nq, mj_model.nv, mj_model.nu
        self.timestep = float(mj_model.opt.timestep)
        self.rk4 = mjx_physics.uses_rk4(mj_model)
        self._qpos0 = jnp.asarray(mj_model.qpos0, jnp.float32)
        ctrl_low, ctrl_high = mj_model.actuator_ctrlrange.T
        self._ctrl_mid = jnp.asarray((ctrl_high + ctrl_low) / 2.0, jnp.float32)
        self._ctrl_half = jnp.asarray((ctrl_high - ctrl_low) / 2.0, jnp.float32)
        self._joints = mjx_physics.model_joints(mj_model, self.asset)

    # ---------------------------------------------------------------- task hooks

    def configure_model(self, mj_model) -> None:
        """Change the MuJoCo model in place before it goes to MJX (default: nothing)."""

    def body_position(self, data) -> jax.Array:
        """The position whose finite difference over one step is the task's velocity, ``(k,)``: the root's x
        (``qpos[0]``, the ``rootx`` slide joint of the planar robots)."""
        return data.qpos[:1]

    def cost_velocity(self, velocity: jax.Array) -> jax.Array:
        """The scalar the cost compares with ``velocity_threshold``: the signed x-velocity of a position ``(x,)``,
        the speed ``|(v_x, v_y)|`` of a position ``(x, y)`` (``safety_*_velocity_v1.py``)."""
        if velocity.shape[-1] == 1:
            return velocity[0]
        return jnp.sqrt(jnp.sum(velocity * velocity))

    def is_healthy(self, qpos, qvel, params) -> jax.Array | None:
        """Gymnasium's ``is_healthy`` of a robot that can fall (its params a :class:`HealthParams`); ``None`` for
        one that cannot (no healthy reward, no termination)."""
        return None

    def reward(self, velocity, ctrl, qpos, qvel, params) -> jax.Array:
        """Gymnasium's v4 reward: ``forward_reward_weight * v_x``, plus ``healthy_reward`` on a healthy step (on
        every step with ``terminate_when_unhealthy``) for a robot that can fall, less ``ctrl_cost_weight |ctrl|^2``;
        ``ctrl`` is the unclipped controls (:meth:`controls_from_action`)."""
        reward = params.forward_reward_weight * velocity[0]
        healthy = self.is_healthy(qpos, qvel, params)
        if healthy is not None:
            healthy = healthy | params.terminate_when_unhealthy
            reward = reward + params.healthy_reward * healthy.astype(jnp.float32)
        return reward - params.ctrl_cost_weight * jnp.sum(ctrl * ctrl)

    def terminated(self, qpos, qvel, params) -> jax.Array:
        """Gymnasium's v4 termination: an unhealthy state, with ``terminate_when_unhealthy``; never for a robot
        that cannot fall."""
        healthy = self.is_healthy(qpos, qvel, params)
        if healthy is None or not params.terminate_when_unhealthy:
            return jnp.zeros((), bool)
        return ~healthy

    def observation(self, data) -> jax.Array:
        """Gymnasium's v4 observation of the robots without sensors: ``qpos`` less the root's
        ``unobserved_positions``, then ``qvel``."""
        return jnp.concatenate([data.qpos[self.unobserved_positions :], data.qvel])

    def observation_size(self) -> int:
        return self.nq - self.unobserved_positions + self.nv

    # ---------------------------------------------------------------- spaces

    def observation_space(self, params) -> Box:
        return Box(low=-jnp.inf, high=jnp.inf, shape=(self.observation_size(),))

    def action_space(self, params) -> Box:
        return Box(low=-1.0, high=1.0, shape=(self.nu,))

    def dt(self, params: LocomotionParams) -> float:
        return self.timestep * params.frame_skip

    def controls_from_action(self, action: jax.Array) -> jax.Array:
        """The controls the original task receives: ``[-1, 1]^nu`` mapped affinely onto ``ctrlrange``
        (``SafeRescaleAction(-1, 1)``), not clipped; the control cost squares these."""
        return self._ctrl_mid + self._ctrl_half * jnp.asarray(action, jnp.float32)

    def ctrl_from_action(self, action: jax.Array) -> jax.Array:
        """The controls the physics applies: :meth:`controls_from_action` clamped to ``ctrlrange``, as MuJoCo
        clamps a ``ctrllimited`` actuator's control (the same as clipping the action to ``[-1, 1]`` first)."""
        return self._ctrl_mid + self._ctrl_half * jnp.clip(jnp.asarray(action, jnp.float32), -1.0, 1.0)

    # ---------------------------------------------------------------- reset

    def reset(self, key: jax.Array, params: LocomotionParams):
        kq, kv = jax.random.split(key)
        s = params.reset_noise_scale
        qpos = self._qpos0 + jax.random.uniform(kq, (self.nq,), minval=-s, maxval=s)
        if self.velocity_noise == "normal":
            qvel = s * jax.random.normal(kv, (self.nv,))
        else:
            qvel = jax.random.uniform(kv, (self.nv,), minval=-s, maxval=s)
        return self.state_from(qpos, qvel)

    def state_from(self, qpos, qvel):
        """``(state, obs)`` at ``(qpos, qvel)`` as Gymnasium's ``set_state`` leaves it (``mj_forward``:
        fresh kinematics; zero actuator and contact forces, as after ``mj_resetData``)."""
        data = self._data0.replace(qpos=jnp.asarray(qpos, jnp.float32), qvel=jnp.asarray(qvel, jnp.float32))
        if self.reset_kinematics:
            data = mjx_physics.fresh_kinematics(self._mjx, self.model, data)
        state = LocomotionState(
            qpos=data.qpos,
            qvel=data.qvel,
            qacc_warmstart=jnp.zeros((self.nv,), jnp.float32),
            position=self.body_position(data).astype(jnp.float32),
            time=jnp.zeros((), jnp.int32),
        )
        return state, self.observation(data).astype(jnp.float32)

    # ---------------------------------------------------------------- step

    def step(self, state: LocomotionState, action: jax.Array, params: LocomotionParams):
        data = self.simulate(state, self.ctrl_from_action(action), params)
        return self.outcome(state, data, self.controls_from_action(action), params)

    def host_physics(self, rk4_orientation: str = "uncorrected") -> HostPhysics:
        """The host-side stepper of :attr:`host_model` with that RK4 rule (built on first use)."""
        if rk4_orientation not in self._host_physics:
            self._host_physics[rk4_orientation] = HostPhysics(
                self._mujoco,
                self.host_model,
                fields=self.host_fields,
                contact_forces=self.needs_contact_forces,
                rk4_orientation=rk4_orientation,
            )
        return self._host_physics[rk4_orientation]

    def simulate(self, state: LocomotionState, ctrl: jax.Array, params: LocomotionParams):
        """The data after ``frame_skip`` physics steps from ``state`` with ``ctrl`` held: MuJoCo's on the host
        (:class:`mujoco_host.HostData`) or MJX's (``mjx.Data``), by ``params.physics``."""
        if params.physics == "mujoco":
            host = self.host_physics(params.rk4_orientation)
            return host(state.qpos, state.qvel, state.qacc_warmstart, ctrl, params.frame_skip)
        data = self._data0.replace(qpos=state.qpos, qvel=state.qvel, qacc_warmstart=state.qacc_warmstart, ctrl=ctrl)
        return mjx_physics.simulate(
            self._mjx,
            self.model,
            data,
            joints=self._joints,
            rk4=self.rk4,
            h=self.timestep,
            frame_skip=params.frame_skip,
            contact_forces=self.needs_contact_forces,
        )

    def outcome(self, state: LocomotionState, data, ctrl: jax.Array, params: LocomotionParams):
        """``(state, obs, reward, cost, terminated, truncated, info)`` of the step from ``state`` that
        ended in ``data`` (anything with the MJX data fields the task reads); ``ctrl`` is what the control cost
        squares, the unclipped controls (:meth:`controls_from_action`)."""
        qpos, qvel = data.qpos, data.qvel
        position = self.body_position(data)
        velocity = (position - state.position) / self.dt(params)
        finite = jnp.all(jnp.isfinite(qpos)) & jnp.all(jnp.isfinite(qvel)) & jnp.all(jnp.isfinite(position))
        speed = self.cost_velocity(velocity)
        reward = jnp.where(finite, self.reward(velocity, ctrl, qpos, qvel, params), 0.0)
        cost = (finite & (speed > params.velocity_threshold)).astype(jnp.float32)
        terminated = self.terminated(qpos, qvel, params) | ~finite
        obs = self.observation(data)
        time = state.time + 1
        new_state = LocomotionState(
            qpos=jnp.where(finite, qpos, state.qpos),
            qvel=jnp.where(finite, qvel, jnp.zeros_like(qvel)),
            qacc_warmstart=jnp.where(finite, data.qacc_warmstart, 0.0),
            position=jnp.where(finite, position, state.position).astype(jnp.float32),
            time=time,
        )
        info = {
            "x_velocity": jnp.where(finite, velocity[0], 0.0).astype(jnp.float32),
            "cost_velocity": jnp.where(finite, speed, 0.0).astype(jnp.float32),
        }
        return (
            new_state,
            jnp.where(finite, obs, 0.0).astype(jnp.float32),
            reward.astype(jnp.float32),
            cost,
            jnp.asarray(terminated),
            time >= params.max_steps,
            info,
        )

    # ---------------------------------------------------------------- RK4

    def integrate_pos(self, qpos: jax.Array, qvel: jax.Array, h) -> jax.Array:
        """MuJoCo's ``mj_integratePos`` of this robot's joints (:func:`mjx_physics.integrate_pos`)."""
        return mjx_physics.integrate_pos(self._joints, qpos, qvel, h)
