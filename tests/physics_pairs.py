"""One navigation task on both physics from the same states: what the planar-against-MuJoCo tests share."""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax

from saferl.envs.base import make_env_params


class PhysicsPair(NamedTuple):
    """``states``: ``envs`` environments after a MuJoCo warm-up; ``run_planar`` and ``run_mujoco``: ``(states,
    actions (steps, envs, 2)) -> (final states, per-step records)``, one compiled program each."""

    states: object
    run_planar: Callable
    run_mujoco: Callable
    mujoco_params: object


def physics_pair(env, record: Callable, envs: int, warmup_steps: int, steps: int) -> PhysicsPair:
    """``env`` under ``physics: planar`` and ``physics: mujoco``; ``record(params, states, obs, rewards)`` is what a
    step keeps (batched over the environments).  The warm-up: ``warmup_steps`` MuJoCo steps under uniform random
    actions in [-2, 2]^2 (outside the box too, which the task clips), ``steps`` at a time, so it runs the program
    the comparison runs and compiles nothing more."""
    mujoco_params = make_env_params(env, {"physics": "mujoco"})
    planar_params = make_env_params(env, {"physics": "planar"})
    states, _ = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(jax.random.PRNGKey(0), envs), mujoco_params)

    def rollout(params, states, actions):
        def body(state, action):
            state, obs, reward, *_ = jax.vmap(env.step, in_axes=(0, 0, None))(state, action, params)
            return state, record(params, state, obs, reward)

        return jax.lax.scan(body, states, actions)

    run_mujoco = jax.jit(lambda s, a: rollout(mujoco_params, s, a))
    run_planar = jax.jit(lambda s, a: rollout(planar_params, s.replace(mujoco=None), a))
    warmup = jax.random.uniform(jax.random.PRNGKey(1), (warmup_steps // steps, steps, envs, 2), minval=-2.0, maxval=2.0)
    for actions in warmup:
        states, _ = run_mujoco(states, actions)
    return PhysicsPair(states, run_planar, run_mujoco, mujoco_params)
