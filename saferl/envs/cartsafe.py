"""CartSafe: the swing-up cart-pole with a cart-position constraint (jemaw/gym-safety ``CartSafe-v0``).

The SCPO paper's discrete task (Mhamed & Gu, "SCPO: Safe RL with Safety Critic Policy
Optimization", arXiv:2311.00880, App. F.1, F.2.2, G Table 1).  The pole starts hanging down; the
agent pushes the cart left or right to swing it up and balance it, and pays a cost for every step
the cart spends outside ``|x| <= 1``.  Pure ``jax.numpy``: ``reset`` and ``step`` jit and vmap.
The original is ``gym_safety/envs/cartsafe.py`` and ``gym_safety/__init__.py`` of jemaw/gym-safety
(commit 468831a), which the SCPO repository (SafeRL-Lab/SCPO) vendors unchanged;
docs: docs/environments.md.

What matches the original
-------------------------
* Constants: gravity 9.8, cart mass 1.0, pole mass 0.1, half pole length 0.5, force 10 N,
  tau = 0.02 s, ``x_threshold`` 2.4, ``x_constraint`` 1.0.
* Dynamics: the classic cart-pole equations (Barto, Sutton & Anderson; gym's CartPole) ::

      temp  = (F + m l thetadot^2 sin theta) / M
      thetaacc = (g sin theta - cos theta temp) / (l (4/3 - m cos^2 theta / M))
      xacc  = temp - m l thetaacc cos theta / M

  with M = 1.1, m l = 0.05, integrated by the original's ``'euler'`` integrator: explicit Euler,
  x and theta move with the *old* velocities (``x += tau x_dot`` before ``x_dot += tau xacc``),
  then ``theta <- theta mod 2 pi``.  theta = 0 is upright, pi hanging down.
* Actions: Discrete(2); 0 pushes with F = -10 N, 1 with F = +10 N.
* Observation: ``(x, x_dot, theta, theta_dot)``, theta in [0, 2 pi).
* Reset: the state is drawn from U(-0.05, 0.05)^4, then theta += pi (hanging down).
* Reward: ``1 + cos(theta)`` of the new state on every step, the terminal step included (at most 2
  a step).
* Cost: 1 when ``|x| > 1`` after the step (strict: ``|x| = 1`` is free), else 0.  The original
  returns it as ``info['constraint_costs'] = [cost]``; here it is the step's ``cost`` (shape ``()``).
  **The SCPO paper prints the indicator inverted**, ``c(s) = 1[-1 < x < 1]`` (App. F.1): read
  literally that charges the safe region.  The code, and the paper's own words ("staying within
  bounds"), charge the outside; this environment follows the code.
* Termination: ``x < -2.4`` or ``x > 2.4`` (strict).  Time limit 300 steps (``max_steps``; the gym
  registration's ``max_episode_steps``): ``truncated = time >= max_steps``.

Where it differs, and why
-------------------------
* float32 throughout (the original computes in float64 and returns float64 arrays behind a
  float32 Box): saferl's networks and rollouts are float32.  One step agrees with a float64 step
  of the same equations to float32 rounding (``tests/envs/test_cartsafe.py``).
* The velocity bounds of the observation Box are +-inf, not +-float32 max (a uniform sample over
  +-3.4e38 overflows; :class:`saferl.foundation.spaces.Box` samples infinite bounds from [-1, 1]).
* A ``step`` after termination continues the dynamics with the usual reward; the original returns
  reward -1 on such calls, which it calls undefined behaviour.  saferl's :class:`AutoReset`
  never makes them.
* The original's other integrator, ``'semi-implicit euler'``, is not offered: ``CartSafe-v0``
  never selects it.

Cost limit (``config_defaults``): 1, as the paper states (App. G, Table 1: "CartSafe-v0, cost limit
1, episode length [0, 300]").  The SCPO authors' code says 0.5 (``utils/env_info.py`` ``max_costs``).
The paper and its code disagree, and nothing shows which one ran: the repository has no training
script, and its CartSafe hyper-parameters (``utils/best_hyper_parameters.py``: learning rate 1e-4,
entropy coefficient 0.01) disagree with the paper's Table 2 (2e-4, 0.001) as well, so the code's
numbers cannot be taken for the run behind the paper's Fig. 13.  Without evidence of what ran, the
default is what the paper specifies; ``constraint.limit: 0.5`` gives the code's value.  (With 0/1
costs per step, an episode cost <= 0.5 means no violating step, <= 1 at most one.)  The batch,
16 environments x 2048 steps = 32768, is the paper's "Timesteps T 32768" (Table 2; the code's
4 environments x 8192 steps).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from saferl.envs.base import Box, Discrete, Environment, EnvParams, register
from saferl.foundation import struct

TWO_PI = 2.0 * math.pi


@struct.dataclass
class CartSafeParams(EnvParams):
    gravity: float = 9.8
    masscart: float = 1.0
    masspole: float = 0.1
    length: float = 0.5  # half the pole's length
    force_mag: float = 10.0
    tau: float = 0.02  # seconds per step
    x_threshold: float = 2.4  # |x| beyond it terminates
    x_constraint: float = 1.0  # |x| beyond it costs
    reset_noise: float = 0.05  # the reset draws U(-reset_noise, reset_noise)^4, then theta += pi
    max_steps: int = struct.field(default=300, kw_only=True)


@struct.dataclass
class CartSafeState:
    x: jax.Array
    x_dot: jax.Array
    theta: jax.Array  # in [0, 2 pi); 0 upright
    theta_dot: jax.Array
    time: jax.Array  # int32 steps taken since reset


def euler_step(state: CartSafeState, force: jax.Array, params: CartSafeParams):
    """One explicit-Euler step of the cart-pole: ``(x, x_dot, theta, theta_dot)`` after ``tau`` seconds,
    theta wrapped into [0, 2 pi)."""
    total_mass = params.masspole + params.masscart
    polemass_length = params.masspole * params.length
    cos, sin = jnp.cos(state.theta), jnp.sin(state.theta)
    temp = (force + polemass_length * state.theta_dot**2 * sin) / total_mass
    thetaacc = (params.gravity * sin - cos * temp) / (
        params.length * (4.0 / 3.0 - params.masspole * cos**2 / total_mass)
    )
    xacc = temp - polemass_length * thetaacc * cos / total_mass
    # explicit: positions move with the velocities of the start of the step
    x = state.x + params.tau * state.x_dot
    x_dot = state.x_dot + params.tau * xacc
    theta = state.theta + params.tau * state.theta_dot
    theta_dot = state.theta_dot + params.tau * thetaacc
    return x, x_dot, jnp.mod(theta, TWO_PI), theta_dot


@register("CartSafe")
class CartSafe(Environment):
    """jemaw/gym-safety ``CartSafe-v0`` (see the module docstring for what matches and what differs)."""

    description = "Swing-up cart-pole (gym-safety CartSafe-v0): reward 1 + cos(theta), cost 1 while |x| > 1; 300 steps"
    params_class = CartSafeParams
    # limit 1: the SCPO paper's Table 1 (its code's env_info.py says 0.5; module docstring); batch 32768
    config_defaults = {"num_envs": 16, "rollout_steps": 2048, "constraint": {"type": "expected", "limit": 1.0}}

    def observation_space(self, params: CartSafeParams) -> Box:
        high = jnp.array([2.0 * params.x_threshold, jnp.inf, TWO_PI, jnp.inf], jnp.float32)
        low = jnp.array([-2.0 * params.x_threshold, -jnp.inf, 0.0, -jnp.inf], jnp.float32)
        return Box(low=low, high=high, shape=(4,))

    def action_space(self, params: CartSafeParams) -> Discrete:
        return Discrete(2)

    def reset(self, key: jax.Array, params: CartSafeParams):
        u = jax.random.uniform(key, (4,), jnp.float32, -params.reset_noise, params.reset_noise)
        state = CartSafeState(
            x=u[0], x_dot=u[1], theta=u[2] + jnp.float32(math.pi), theta_dot=u[3], time=jnp.zeros((), jnp.int32)
        )
        return state, self._obs(state)

    def step(self, state: CartSafeState, action: jax.Array, params: CartSafeParams):
        action = jnp.asarray(action)
        if action.size != 1:  # a batch of actions needs a jax.vmap over the state too
            raise ValueError(f"CartSafe.step takes one action per state, got shape {action.shape}")
        action = jnp.reshape(action, ()).astype(jnp.int32)
        force = jnp.where(action == 1, params.force_mag, -params.force_mag)
        x, x_dot, theta, theta_dot = euler_step(state, force, params)
        time = state.time + 1
        new_state = CartSafeState(x=x, x_dot=x_dot, theta=theta, theta_dot=theta_dot, time=time)
        reward = (1.0 + jnp.cos(theta)).astype(jnp.float32)
        cost = (jnp.abs(x) > params.x_constraint).astype(jnp.float32)
        terminated = (x < -params.x_threshold) | (x > params.x_threshold)
        truncated = time >= params.max_steps
        return new_state, self._obs(new_state), reward, cost, terminated, truncated, {}

    @staticmethod
    def _obs(state: CartSafeState) -> jax.Array:
        return jnp.stack([state.x, state.x_dot, state.theta, state.theta_dot]).astype(jnp.float32)
