"""EcoAnt: the MuJoCo Ant in MJX, running forward on a limited battery with noisy actuators.

Canary paper, Sec. 6.1: "A reimplementation of the Ant environment in MJX.  In this
scenario, the agent must maximize forward velocity, while now managing a limited battery
budget and navigating additive action noise to simulate stochastic actuator dynamics."
The paper's experiment puts the VaR constraint ``P(C(tau) > 150) <= 0.05`` on the
undiscounted episode cost (``rho = 150``, ``epsilon = 0.05``, ``gamma_c = 1``).

The robot (``assets/eco_ant.xml``) is the standard Gymnasium/Brax quadruped: a 0.25 m
spherical torso on a free joint, four legs of a hip (about the torso's z axis, +-30 deg)
and an ankle hinge (30..70 deg), eight torque motors of gear 150 with controls in
``[-1, 1]`` (Gymnasium's actuator order), joint armature 1 and damping 1, density 5.
It is simulated with ``mujoco.mjx`` (``mjx.put_model`` once at construction, ``mjx.step``
``frame_skip = 5`` times per env step with timestep 0.01 s, so ``dt = 0.05`` s as
Gymnasium's Ant).

Step
----
* Action noise (stochastic actuators): the applied controls are
  ``u = clip(clip(a, -1, 1) + action_noise * N(0, I), -1, 1)``; the noise is drawn from
  the key carried in the state, so ``action_noise = 0`` makes the environment
  deterministic given the reset.
* Reward (Gymnasium Ant-v5's terms): ``forward_reward_weight * (x_after - x_before) / dt``
  (the torso's x-velocity) ``+ healthy_reward`` (1 while healthy)
  ``- ctrl_cost_weight * |a|^2``.  ``ctrl_cost_weight`` is 0 by default: the actuators'
  energy is the *cost* here, not part of the reward.  Ant-v5's contact cost is dropped.
* Termination (``terminate_when_unhealthy``, default True): the torso's height leaves
  ``[healthy_z_min, healthy_z_max] = [0.2, 1.0]`` or the state stops being finite.
  Truncation: ``time >= max_steps`` (1000 by default).
* Observation (27,) float32: ``qpos[2:]`` (torso height, orientation quaternion, 8 joint
  angles) then ``qvel`` (14), i.e. Ant-v5 with ``include_cfrc_ext_in_observation=False``
  (and its default ``exclude_current_positions_from_observation=True``).
* Reset (Ant-v5): ``qpos = qpos0 + U(-0.1, 0.1)`` (the quaternion renormalised),
  ``qvel = 0.1 * N(0, I)``, with ``reset_noise_scale = 0.1``; ``qpos0`` stands the torso at
  z = 0.75 with all joint angles 0, as Gymnasium does.

Energy model (the cost)
-----------------------
Each motor is a DC drive fed by the battery.  Over the ``frame_skip`` physics sub-steps
of one env step (length ``h = 0.01`` s each), with ``tau_i`` the actuator torque
(``150 * u_i``) and ``omega_i`` its joint velocity::

    E_mech = sum_substeps h * sum_i max(tau_i * omega_i, 0)   # positive mechanical work [J]
    E_heat = dt * heat_power * sum_i u_i^2                    # copper (I^2 R) losses [J]
    E_idle = dt * idle_power                                  # electronics, always on [J]
    cost   = energy_scale * (E_mech + E_heat + E_idle)        # battery units

* Only positive work is drawn from the battery: braking (negative work) is dissipated in
  the drive, there is no regeneration, so ``E_mech >= 0``.
* Motor current is proportional to torque, so resistive losses grow as ``u^2``;
  ``heat_power`` is the heat of one motor at full torque (stall).  This term makes
  holding full torque against a joint limit cost energy even though no work is done
  (MuJoCo's joint-limit constraint does the holding for free otherwise).
* ``idle_power`` is drawn whatever the agent does; it keeps the cost dense and strictly
  positive.
* ``energy_scale = 0.01``: one battery unit is 100 J, so ``rho = 150`` is a 15 kJ battery.

The cost is dense and ``>= 0`` on every step.  ``info`` reports the three terms in
battery units (``energy_mech``, ``energy_heat``, ``energy_idle``) and the torso's
``x_velocity``.

Calibration of the defaults
---------------------------
The Canary experiment's budget is ``rho = 150`` per 1000-step episode (undiscounted),
i.e. 0.15 battery units (15 J) per step on average.  ``python -m saferl.envs.eco_ant``
measures these episode costs with the default parameters (MJX, 16 episodes per policy,
``action_noise = 0.1``; "per 1000" is the cost per step times 1000, for policies whose
episodes end early):

=====================  ===========  ========  =========  =========  =========================
policy                 episode      length    per 1000   x-vel m/s  where the energy goes
=====================  ===========  ========  =========  =========  =========================
zero action            43 +- 1      1000      43         0.00       idle 10, heat 2, work of
                                                                    the 0.1 noise ~31
constant full (+1)     203 +- 1     1000      203        0.00       stall heat 185, idle 10
uniform random         133 +- 266   159       854        --         mostly work; jumps out of
                                                                    the height band early
trot, amplitude 0.1    94 +- 23     919       102        0.00       work
trot, amplitude 1      16 +- 1      15        1080       --         work; flips within 15 steps
slow walk (searched)   120 +- 2     1000      120        +0.14      work 95, heat 14, idle 10
=====================  ===========  ========  =========  =========  =========================

("trot": ``u = A sin(2 pi t + phase)`` at 1 Hz with the ankles a quarter period behind
the hips; "slow walk": the best of 300 random open-loop sinusoidal gaits of MuJoCo, see
``_WALK_*``.)  Reasoning behind the defaults:

* the unavoidable floor (idle power plus the work the action noise does, ~43) is well
  under ``rho``, so the constraint is feasible with room to move: a slow forward walk
  spends ~120 in 1000 steps;
* a vigorous policy spends several times the budget *rate*: random actions, the
  high-entropy Gaussian policies PPO starts from (the first PPO iterations on EcoAnt draw
  ~0.7 per step) and saturated bang-bang gaits all draw 0.7-1.1 per step, i.e. 700-1100
  per 1000-step episode once they stop falling, so an unconstrained policy that learns to
  stay up and run breaches ``rho = 150`` in most episodes (the paper's PPO: 70%);
* holding full torque costs (stall heat, 203 per episode), so "push against the joint
  limits" is not a free way to stand.

Differences from Gymnasium's Ant-v5
-----------------------------------
* The energy cost and the action noise (new); ``ctrl_cost_weight`` 0 (Ant-v5: 0.5) and no
  contact cost (Ant-v5: 5e-4 * clipped external forces) in the reward.
* Integrator: semi-implicit Euler (with MuJoCo's implicit joint damping) instead of RK4,
  timestep 0.01 s as in Ant-v5; MJX's Euler needs one forward pass per sub-step, RK4 four.
  Random actions make the Ant jump out of the height band within tens to hundreds of
  steps with either integrator (checked with MuJoCo), as in Gymnasium.
* Constraint solver capped at 4 Newton iterations with 8 line-search steps (MuJoCo's
  defaults: 100 and 50), for speed.
* Collisions: only the torso and the four lower legs (the "feet") collide, and only with
  the floor (Ant-v5 also lets the hip and thigh capsules touch the floor; in Ant-v5 body
  parts never collide with each other either): five contact pairs instead of thirteen for
  MJX to solve.  The hip and thigh capsules stay at torso height, so they could reach
  the floor only with the torso down or strongly tilted.
* The observation has no contact forces (Ant-v5 appends 78 clipped external contact forces
  by default, ``include_cfrc_ext_in_observation=True``), and the reset quaternion is
  normalised.
"""

from __future__ import annotations

import math
from pathlib import Path

import jax
import jax.numpy as jnp

from saferl.envs.base import Box, Environment, register
from saferl.envs.velocity.locomotion import HealthParams
from saferl.envs.velocity.mjx_physics import import_mjx
from saferl.foundation import struct

ASSET = Path(__file__).parent / "assets" / "eco_ant.xml"


@struct.dataclass
class EcoAntParams(HealthParams):
    """Gymnasium Ant-v5's episode, reset and reward terms (1000 steps, frame skip 5, reset noise 0.1, forward
    weight 1, healthy reward 1 on the torso's height range ``[0.2, 1.0]``: those of
    :class:`~saferl.envs.velocity.locomotion.HealthParams`) but no control cost, the actuators' noise and the
    energy model."""

    ctrl_cost_weight: float = 0.0  # the actuators' energy is the cost, not part of the reward
    # stochastic actuators: std of the Gaussian noise added to the clipped control
    action_noise: float = 0.1
    # energy model (see the module docstring); powers in W, energies in J
    energy_scale: float = 0.01  # battery units per joule
    heat_power: float = 50.0  # resistive loss of one motor at full torque
    idle_power: float = 20.0  # drawn every step, whatever the action


@struct.dataclass
class EcoAntState:
    qpos: jax.Array  # (15,) torso position and quaternion, 8 joint angles
    qvel: jax.Array  # (14,)
    qacc_warmstart: jax.Array  # (14,) the constraint solver's warm start
    time: jax.Array  # () int32, steps taken in this episode
    key: jax.Array  # PRNG key for the action noise


@register("EcoAnt")
class EcoAnt(Environment):
    """The Canary paper's EcoAnt (see the module docstring)."""

    description = "MJX Ant running forward on a battery: cost = actuator energy, noisy actuators"
    params_class = EcoAntParams
    config_defaults = {"num_envs": 16, "rollout_steps": 1000, "constraint": {"type": "expected", "limit": 150.0}}
    risk_defaults = {"rho": 150.0, "epsilon": 0.05, "gamma_c": 1.0}  # Canary Sec. 6: EcoAnt rho = 150

    def __init__(self, xml_path: str | Path | None = None):
        mujoco, mjx = import_mjx("EcoAnt (MuJoCo MJX)")
        self._mjx = mjx
        self.mj_model = mujoco.MjModel.from_xml_path(str(xml_path or ASSET))
        self.model = mjx.put_model(self.mj_model)
        self._data0 = mjx.make_data(self.model)
        self.nq, self.nv, self.nu = self.mj_model.nq, self.mj_model.nv, self.mj_model.nu
        self.timestep = float(self.mj_model.opt.timestep)
        self._qpos0 = jnp.asarray(self.mj_model.qpos0, jnp.float32)

    # ---------------------------------------------------------------- spaces

    def observation_space(self, params: EcoAntParams) -> Box:
        n = self.nq - 2 + self.nv
        return Box(low=-jnp.inf, high=jnp.inf, shape=(n,))

    def action_space(self, params: EcoAntParams) -> Box:
        return Box(low=-1.0, high=1.0, shape=(self.nu,))

    def dt(self, params: EcoAntParams) -> float:
        return self.timestep * params.frame_skip

    # ---------------------------------------------------------------- reset

    def reset(self, key: jax.Array, params: EcoAntParams):
        key, kq, kv = jax.random.split(key, 3)
        scale = params.reset_noise_scale
        qpos = self._qpos0 + jax.random.uniform(kq, (self.nq,), minval=-scale, maxval=scale)
        quat = qpos[3:7]
        qpos = qpos.at[3:7].set(quat / jnp.sqrt(jnp.sum(quat * quat)))
        qvel = scale * jax.random.normal(kv, (self.nv,))
        state = EcoAntState(
            qpos=qpos.astype(jnp.float32),
            qvel=qvel.astype(jnp.float32),
            qacc_warmstart=jnp.zeros((self.nv,), jnp.float32),
            time=jnp.zeros((), jnp.int32),
            key=key,
        )
        return state, self._obs(state.qpos, state.qvel)

    # ---------------------------------------------------------------- step

    def step(self, state: EcoAntState, action: jax.Array, params: EcoAntParams):
        mjx = self._mjx
        key, noise_key = jax.random.split(state.key)
        action = jnp.clip(jnp.asarray(action, jnp.float32), -1.0, 1.0)
        noise = jax.random.normal(noise_key, (self.nu,), jnp.float32)
        ctrl = jnp.clip(action + params.action_noise * noise, -1.0, 1.0)

        data = self._data0.replace(qpos=state.qpos, qvel=state.qvel, qacc_warmstart=state.qacc_warmstart, ctrl=ctrl)

        def substep(carry, _):
            data, work = carry
            qvel = data.qvel
            data = mjx.step(self.model, data)
            # qfrc_actuator comes from the forward pass at the start of this sub-step, so it
            # pairs with the velocities before the update: the power of each joint's motor
            # over the interval just integrated (one motor per hinge; free-joint entries are 0)
            power = data.qfrc_actuator * qvel
            return (data, work + self.timestep * jnp.sum(jnp.maximum(power, 0.0))), None

        (data, work), _ = jax.lax.scan(substep, (data, jnp.zeros((), jnp.float32)), None, length=params.frame_skip)

        dt = self.timestep * params.frame_skip
        qpos, qvel = data.qpos, data.qvel
        x_velocity = (qpos[0] - state.qpos[0]) / dt
        finite = jnp.all(jnp.isfinite(qpos)) & jnp.all(jnp.isfinite(qvel))
        healthy = finite & (qpos[2] >= params.healthy_z_min) & (qpos[2] <= params.healthy_z_max)

        reward = (
            params.forward_reward_weight * x_velocity
            + params.healthy_reward * healthy.astype(jnp.float32)
            - params.ctrl_cost_weight * jnp.sum(action * action)
        )
        e_mech = params.energy_scale * work
        e_heat = params.energy_scale * dt * params.heat_power * jnp.sum(ctrl * ctrl)
        e_idle = params.energy_scale * dt * params.idle_power * jnp.ones((), jnp.float32)
        cost = e_mech + e_heat + e_idle
        # a diverged simulation ends the episode (not healthy); keep its numbers finite
        reward = jnp.where(finite, reward, 0.0)
        cost = jnp.where(jnp.isfinite(cost), cost, 0.0)
        qpos = jnp.where(finite, qpos, state.qpos)
        qvel = jnp.where(finite, qvel, jnp.zeros_like(qvel))

        time = state.time + 1
        if params.terminate_when_unhealthy:
            terminated = ~healthy
        else:
            terminated = ~finite
        truncated = time >= params.max_steps
        new_state = EcoAntState(
            qpos=qpos,
            qvel=qvel,
            qacc_warmstart=jnp.where(finite, data.qacc_warmstart, 0.0),
            time=time,
            key=key,
        )
        info = {
            "x_velocity": jnp.where(finite, x_velocity, 0.0).astype(jnp.float32),
            "energy_mech": jnp.where(finite, e_mech, 0.0).astype(jnp.float32),
            "energy_heat": e_heat.astype(jnp.float32),
            "energy_idle": e_idle.astype(jnp.float32),
        }
        return (
            new_state,
            self._obs(qpos, qvel),
            reward.astype(jnp.float32),
            cost.astype(jnp.float32),
            terminated,
            truncated,
            info,
        )

    # ---------------------------------------------------------------- pieces

    def _obs(self, qpos, qvel):
        return jnp.concatenate([qpos[2:], qvel]).astype(jnp.float32)


# --------------------------------------------------------------------------- calibration

# the "slow walk" of the calibration report: u_i = A_i sin(2 pi f t + phase_i) + offset_i
_WALK_AMPLITUDE = (0.36, 0.29, 0.10, 0.26, 0.01, 0.12, 0.31, 0.03)
_WALK_OFFSET = (0.20, 0.22, -0.28, 0.05, -0.01, 0.24, 0.02, -0.26)
_WALK_PHASE = (0.21, 3.88, 3.98, 4.15, 1.72, 5.16, 1.73, 6.21)
_WALK_FREQUENCY = 2.31


def _calibration_report(episodes: int = 16, steps: int = 1000) -> None:  # pragma: no cover - a manual tool
    """Print per-episode energies of a few fixed policies (``python -m saferl.envs.eco_ant``).

    One compiled program runs every policy (selected by a traced index), ``episodes``
    episodes each, stopping the books at the first termination.
    """
    import time as _time

    import numpy as np

    env = EcoAnt()
    params = env.default_params()
    dt = env.dt(params)
    phases = jnp.array([0.0, 0.5, 1.0, 1.5, 0.0, 0.5, 1.0, 1.5]) * math.pi  # a trot: ankles lag hips

    def gait(amplitude):
        return lambda t, key: amplitude * jnp.sin(2.0 * math.pi * t * dt + phases)  # 1 Hz

    def walk(t, key):
        # an open-loop gait found by random search (MuJoCo, 300 candidates): a slow forward walk
        amplitude, phase, offset = (jnp.asarray(x, jnp.float32) for x in (_WALK_AMPLITUDE, _WALK_PHASE, _WALK_OFFSET))
        return amplitude * jnp.sin(2.0 * math.pi * _WALK_FREQUENCY * t * dt + phase) + offset

    names = ["zero", "full (+1)", "random", "trot A=0.1", "trot A=1", "slow walk"]
    policies = [
        lambda t, key: jnp.zeros((env.nu,)),
        lambda t, key: jnp.ones((env.nu,)),
        lambda t, key: jax.random.uniform(key, (env.nu,), minval=-1.0, maxval=1.0),
        gait(0.1),
        gait(1.0),
        walk,
    ]

    def rollout(index, key):
        state, _ = env.reset(key, params)

        def body(carry, t):
            state, alive, key = carry
            key, sub = jax.random.split(key)
            action = jax.lax.switch(index, policies, t, sub)
            state, _, reward, cost, term, _, info = env.step(state, action, params)
            out = (cost * alive, reward * alive, alive, info["x_velocity"] * alive)
            return (state, alive * (1.0 - term.astype(jnp.float32)), key), out

        _, (cost, reward, alive, vel) = jax.lax.scan(body, (state, jnp.float32(1.0), key), jnp.arange(steps))
        length = jnp.maximum(alive.sum(), 1.0)
        return cost.sum(), reward.sum(), alive.sum(), vel.sum() / length, cost.sum() / length

    index = jnp.repeat(jnp.arange(len(policies)), episodes)
    keys = jax.random.split(jax.random.PRNGKey(0), len(policies) * episodes)
    start = _time.time()
    out = jax.jit(jax.vmap(rollout))(index, keys)
    out = jax.block_until_ready(out)
    cost, reward, length, vel, rate = (np.asarray(x).reshape(len(policies), episodes) for x in out)
    print(f"{len(policies) * episodes} episodes of up to {steps} steps in {_time.time() - start:.0f} s (with compile)")
    for i, name in enumerate(names):
        print(
            f"{name:12s} episode cost {cost[i].mean():7.1f} +- {cost[i].std():5.1f}  length {length[i].mean():6.1f}  "
            f"cost per 1000 steps {1000 * rate[i].mean():7.1f}  x-vel {vel[i].mean():+.3f}  "
            f"return {reward[i].mean():7.1f}"
        )


if __name__ == "__main__":  # pragma: no cover
    _calibration_report()
