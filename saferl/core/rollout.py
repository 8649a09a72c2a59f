"""Rollouts and advantages: the part every on-policy algorithm shares.

A rollout is a ``lax.scan`` over ``num_steps`` of the (vectorised, normalised)
environment; it runs only the actor.  Critics are evaluated afterwards on the
whole ``(T, N)`` block in one batched call, which is cheaper than calling them
inside the scan.  ``Batch`` is what an algorithm's ``update`` receives.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from saferl.foundation import struct


@struct.dataclass
class Trajectory:
    """Raw rollout, arrays shaped ``(T, N, ...)``."""

    obs: jax.Array
    action: jax.Array
    log_prob: jax.Array
    dist: dict
    reward: jax.Array  # (T, N)
    cost: jax.Array  # (T, N, C)  every cost channel the algorithm uses
    terminated: jax.Array
    truncated: jax.Array
    final_obs: jax.Array  # observation after the step, before any auto-reset
    episode_done: jax.Array
    episode_return: jax.Array
    episode_cost: jax.Array  # (T, N, C_env) undiscounted, environment's own cost channels
    episode_discounted_cost: jax.Array
    episode_length: jax.Array


@struct.dataclass
class Batch:
    """Flattened batch of ``B = T * N`` samples plus per-channel advantages.

    Channel 0 of ``advantages``/``returns``/``values`` is the reward; channels
    ``1..C`` are the cost channels in the order the algorithm declared them.
    """

    obs: jax.Array
    action: jax.Array
    log_prob: jax.Array
    dist: dict
    advantages: jax.Array  # (B, 1 + C)
    returns: jax.Array  # (B, 1 + C)
    values: jax.Array  # (B, 1 + C)
    episode_done: jax.Array  # (B,)
    episode_return: jax.Array
    episode_cost: jax.Array  # (B, C_env)
    episode_discounted_cost: jax.Array
    episode_length: jax.Array
    # (None in hand-built batches that do not need them)
    timestep: Any = None  # (B,) t, the index of the sample's step within its episode
    cost: Any = None  # (B, C) the per-step cost channels GAE saw (after any augmentation)
    reward: Any = None  # (B,) the per-step reward GAE saw
    terminated: Any = None  # (B,)
    truncated: Any = None  # (B,)  (the rollout's last step is not marked: see ``rollout_shape``)
    #: (T, N): samples are flattened time-major, sample i is step i // N of environment i % N
    rollout_shape: tuple = struct.field(static=True, default=())
    #: means over the episodes completed in this batch (see :func:`episode_means`); the
    #: trainer fills it, carrying the previous estimate over when no episode ended.
    episodes: Any = None


def collect(env, env_params, actor, actor_params, env_state, obs, key, num_steps: int):
    """Run ``num_steps`` vectorised steps; returns ``(env_state, last_obs, Trajectory)``."""

    def one_step(carry, step_key):
        env_state, obs = carry
        dist = actor.distribution(actor_params, obs)
        action = actor.sample(dist, step_key)
        log_prob = actor.log_prob(dist, action)
        env_state, next_obs, reward, cost, term, trunc, info = env.step(env_state, action, env_params)
        cost = cost.reshape(cost.shape[0], -1).astype(jnp.float32)
        episode_cost = info["episode_cost"].reshape(cost.shape[0], -1)
        traj = Trajectory(
            obs=obs,
            action=action,
            log_prob=log_prob,
            dist=dist,
            reward=reward.astype(jnp.float32),
            cost=cost,
            terminated=term,
            truncated=trunc,
            final_obs=info["final_obs"],
            episode_done=info["episode_done"],
            episode_return=info["episode_return"],
            episode_cost=episode_cost,
            episode_discounted_cost=info["episode_discounted_cost"].reshape(cost.shape[0], -1),
            episode_length=info["episode_length"],
        )
        return (env_state, next_obs), traj

    if hasattr(env, "refresh"):
        env_state = env.refresh(env_state, env_params)  # fresh pooled resets for this rollout
    (env_state, obs), traj = jax.lax.scan(one_step, (env_state, obs), jax.random.split(key, num_steps))
    return env_state, obs, traj


def gae(rewards, values, next_values, terminated, done, gammas, lam, end_at_truncation=None):
    """Generalised advantage estimation for several channels at once.

    rewards/values/next_values: ``(T, N, K)``; terminated/done: ``(T, N)``; gammas: ``(K,)``;
    lam: a number, or ``(K,)`` for one lambda per channel.
    ``next_values[t]`` is V(s_{t+1}) of the same episode (the final observation
    when the episode was truncated); it is ignored where the episode terminated.
      delta_t = r_t + gamma V(s_{t+1}) (1 - term_t) - V(s_t)
      A_t     = delta_t + gamma lam (1 - done_t) A_{t+1}
    ``end_at_truncation`` (``(K,)``, optional): channels whose return ends at the time limit
    (a finite-horizon cost return C(tau)): truncation counts as termination for them.
    Returns ``(advantages, returns)`` with returns = advantages + values.
    """
    not_term = (1.0 - terminated.astype(jnp.float32))[..., None]
    if end_at_truncation is not None:
        truncated = jnp.logical_and(done, jnp.logical_not(terminated)).astype(jnp.float32)[..., None]
        not_term = not_term * (1.0 - truncated * jnp.asarray(end_at_truncation, jnp.float32))
    not_done = (1.0 - done.astype(jnp.float32))[..., None]
    deltas = rewards + gammas * next_values * not_term - values

    def backward(next_adv, x):
        delta, cont = x
        adv = delta + gammas * lam * cont * next_adv
        return adv, adv

    _, advantages = jax.lax.scan(backward, jnp.zeros_like(deltas[0]), (deltas, not_done), reverse=True)
    return advantages, advantages + values


def make_batch(
    traj: Trajectory, critics, critic_params, gammas, lam, end_at_truncation=None, value_noise=None, noise_key=None
) -> Batch:
    """Evaluate the critics on the whole block and compute GAE for every channel
    (``end_at_truncation``: see :func:`gae`).  ``value_noise`` (a standard deviation per channel) adds white
    noise to the critics' values and bootstrap values before GAE (the C-TRPO paper's App. D.3 corruption of the
    cost value estimate), drawn from ``noise_key``."""
    values = critics.apply(critic_params, traj.obs)
    next_values = critics.apply(critic_params, traj.final_obs)
    if value_noise is not None:
        # one corruption per state, as the authors' NoisyBuffer stores it: a step's bootstrap value is the next
        # step's (noisy) value unless the episode ended there (then the final observation's own draw)
        k_values, k_next = jax.random.split(noise_key)
        scale = jnp.asarray(value_noise, values.dtype)
        noise = scale * jax.random.normal(k_values, values.shape, values.dtype)
        fresh = scale * jax.random.normal(k_next, next_values.shape, next_values.dtype)
        ended = jnp.logical_or(traj.terminated, traj.truncated)[..., None]
        following = jnp.concatenate([noise[1:], fresh[-1:]], axis=0)
        values = values + noise
        next_values = next_values + jnp.where(ended, fresh, following)
    signals = jnp.concatenate([traj.reward[..., None], traj.cost], axis=-1)
    done = jnp.logical_or(traj.terminated, traj.truncated)
    advantages, returns = gae(signals, values, next_values, traj.terminated, done, gammas, lam, end_at_truncation)

    def flat(x):
        return x.reshape((-1,) + x.shape[2:])

    return Batch(
        obs=flat(traj.obs),
        action=flat(traj.action),
        log_prob=flat(traj.log_prob),
        dist=jax.tree.map(flat, traj.dist),
        advantages=flat(advantages),
        returns=flat(returns),
        values=flat(values),
        episode_done=flat(traj.episode_done),
        episode_return=flat(traj.episode_return),
        episode_cost=flat(traj.episode_cost),
        episode_discounted_cost=flat(traj.episode_discounted_cost),
        episode_length=flat(traj.episode_length),
        timestep=flat(traj.episode_length) - 1,  # episode_length is the running count, this step included
        cost=flat(traj.cost),
        reward=flat(traj.reward),
        terminated=flat(traj.terminated),
        truncated=flat(traj.truncated),
        rollout_shape=tuple(traj.reward.shape[:2]),
    )


def initial_episodes(cost_channels: int, var: bool = False, window: int = 0) -> dict:
    """The episode estimate before any episode finished (NaN means, count 0: unknown, and carried as such until an
    episode finishes; :meth:`saferl.training.learner.Learner.learn` holds a constrained update meanwhile); with
    ``window`` > 0 also empty ring buffers of the last ``window`` episodes' discounted costs and returns
    (:func:`push_cost_window`) and the returns' statistic ``windowed_return``, for the logged
    ``episode_return_window`` only."""
    nan = jnp.asarray(jnp.nan, jnp.float32)
    channels = jnp.full((cost_channels,), jnp.nan, jnp.float32)
    episodes = {
        "return": nan,
        "cost": channels,
        "discounted_cost": channels,
        "discounted_cost_sq": channels,
        "length": nan,
        "count": jnp.zeros((), jnp.float32),
    }
    if var:
        episodes.update(violation=nan, excess=nan)
    if window > 0:
        episodes["cost_window"] = {
            "values": jnp.zeros((window, cost_channels), jnp.float32),
            "filled": jnp.zeros((), jnp.int32),
            "next": jnp.zeros((), jnp.int32),
        }
        episodes["return_window"] = {
            "values": jnp.zeros((window, 1), jnp.float32),
            "filled": jnp.zeros((), jnp.int32),
            "next": jnp.zeros((), jnp.int32),
        }
        episodes["windowed_return"] = nan
    return episodes


def push_cost_window(window: dict, done, costs) -> dict:
    """Append the costs ``(B, C)`` of the episodes that ended in a batch (``done`` (B,), samples in time
    order) to a ring buffer of the last W episodes: ``values`` (W, C), ``filled`` <= W, ``next`` (the slot
    of the oldest entry once full).  Of more than W new episodes only the last W are kept."""
    size = window["values"].shape[0]
    done = done.astype(jnp.int32)
    n = jnp.sum(done)
    rank = jnp.cumsum(done) - 1  # 0, 1, ... over the finished episodes, in time order
    keep = (done > 0) & (rank >= n - size)
    slot = jnp.where(keep, (window["next"] + rank) % size, size)  # size: out of bounds, dropped
    values = window["values"].at[slot].set(costs.astype(jnp.float32), mode="drop")
    return {"values": values, "filled": jnp.minimum(window["filled"] + n, size), "next": (window["next"] + n) % size}


def cost_window_mean(window: dict):
    """Mean over the filled entries of a cost window, (C,); NaN while it is empty."""
    size = window["values"].shape[0]
    mask = (jnp.arange(size) < window["filled"]).astype(jnp.float32)[:, None]  # filled in slot order until full
    mean = jnp.sum(window["values"] * mask, axis=0) / jnp.maximum(window["filled"], 1).astype(jnp.float32)
    return jnp.where(window["filled"] > 0, mean, jnp.nan)


def cost_window_snapshot_mean(window: dict, done, costs):
    """The mean, over the episodes that end in a batch (``done`` (B,), samples in time order), of the window's mean
    right after each one is appended (``constraint.window_statistic: snapshot_mean``), (C,); NaN if none ended.

    SafePO's loggers (the C-TRPO authors' code) append every finished episode's cost to a 50-episode deque, store
    ``np.mean(deque)`` after each append, and read J_c as the mean of the values stored during the epoch.  Here the
    window's entries (oldest first) and the batch's new episodes form one sequence S; after the k-th new one the
    window holds S[max(0, L_k - W) : L_k], L_k = filled + k + 1, and a prefix sum gives every such mean at once."""
    size = window["values"].shape[0]
    done = done.astype(jnp.int32)
    n = jnp.sum(done)
    rank = jnp.cumsum(done) - 1
    oldest = (window["next"] - window["filled"]) % size
    old = jnp.where(
        (jnp.arange(size) < window["filled"])[:, None], window["values"][(oldest + jnp.arange(size)) % size], 0.0
    )
    slot = jnp.where(done > 0, window["filled"] + rank, size + done.shape[0])  # past the end: dropped
    sequence = jnp.zeros((size + done.shape[0], costs.shape[1]), jnp.float32).at[:size].set(old)
    sequence = sequence.at[slot].set(costs.astype(jnp.float32), mode="drop")
    prefix = jnp.concatenate([jnp.zeros((1, costs.shape[1]), jnp.float32), jnp.cumsum(sequence, axis=0)])
    ends = window["filled"] + jnp.arange(done.shape[0]) + 1  # L_k for k = 0, 1, ...
    starts = jnp.maximum(ends - size, 0)
    snapshots = (prefix[ends] - prefix[starts]) / jnp.minimum(ends, size).astype(jnp.float32)[:, None]
    valid = (jnp.arange(done.shape[0]) < n).astype(jnp.float32)[:, None]
    mean = jnp.sum(snapshots * valid, axis=0) / jnp.maximum(n, 1).astype(jnp.float32)
    return jnp.where(n > 0, mean, jnp.nan)


def episode_estimates(batch: Batch, previous: dict, rho=None, eta=None, statistic: str = "window_mean") -> dict:
    """:func:`episode_means`, and where ``previous`` holds a cost window (``constraint.window``) the window
    updated with this batch's episodes; J_c (``discounted_cost``) becomes, once the window holds an episode, its mean
    after the batch (``statistic`` ``window_mean``) or :func:`cost_window_snapshot_mean` (``snapshot_mean``, where
    a batch in which no episode ends keeps the previous J_c)."""
    if "cost_window" not in previous:
        return episode_means(batch, previous, rho, eta)
    rest = {k: v for k, v in previous.items() if k not in ("cost_window", "return_window", "windowed_return")}
    estimate = episode_means(batch, rest, rho, eta)
    window = push_cost_window(previous["cost_window"], batch.episode_done, batch.episode_discounted_cost)
    returns = jnp.reshape(batch.episode_return, (-1, 1))
    return_window = push_cost_window(previous["return_window"], batch.episode_done, returns)
    if statistic == "snapshot_mean":
        snapshot = cost_window_snapshot_mean(previous["cost_window"], batch.episode_done, batch.episode_discounted_cost)
        j_c = jnp.where(jnp.sum(batch.episode_done) > 0, snapshot, previous["discounted_cost"])
        windowed_return = jnp.where(
            jnp.sum(batch.episode_done) > 0,
            cost_window_snapshot_mean(previous["return_window"], batch.episode_done, returns)[0],
            previous["windowed_return"],
        )
    elif statistic == "window_mean":
        j_c = jnp.where(window["filled"] > 0, cost_window_mean(window), estimate["discounted_cost"])
        windowed_return = jnp.where(return_window["filled"] > 0, cost_window_mean(return_window)[0], estimate["return"])
    else:
        raise ValueError(
            f"constraint.window_statistic must be one of {', '.join(WINDOW_STATISTICS)}, got {statistic!r}"
        )
    estimate["discounted_cost"] = j_c
    # the return window's statistic (``windowed_return``) is only logged (``episode_return_window``), never learned on
    return {**estimate, "cost_window": window, "return_window": return_window, "windowed_return": windowed_return}


#: ``constraint.window_statistic``: the window's mean after the batch, or the mean of its means at the batch's
#: episode ends (:func:`cost_window_snapshot_mean`)
WINDOW_STATISTICS = ("window_mean", "snapshot_mean")


def episode_means(batch: Batch, previous: Any, rho=None, eta=None):
    """Means over the episodes completed in ``batch``; ``previous`` where none completed.

    ``previous`` and the result are dicts with ``return``, ``cost`` (per env cost
    channel), ``discounted_cost``, ``discounted_cost_sq`` (its second moment, E[C^2]),
    ``length`` and ``count``; with a VaR level ``rho`` also ``violation``, the fraction
    of episodes whose (first channel's) discounted cost C reached ``rho``, and ``excess``,
    the mean of (C - eta)^+ (the Rockafellar-Uryasev term of CVaR, Canary eq. 15).
    """
    done = batch.episode_done.astype(jnp.float32)
    n = jnp.sum(done)
    safe_n = jnp.maximum(n, 1.0)

    def mean(x):
        w = done.reshape(done.shape + (1,) * (x.ndim - 1))
        return jnp.sum(x * w, axis=0) / safe_n

    current = {
        "return": mean(batch.episode_return),
        "cost": mean(batch.episode_cost),
        "discounted_cost": mean(batch.episode_discounted_cost),
        "discounted_cost_sq": mean(batch.episode_discounted_cost**2),
        "length": mean(batch.episode_length.astype(jnp.float32)),
        "count": n,
    }
    if rho is not None:
        cost = batch.episode_discounted_cost[:, 0]
        current["violation"] = mean((cost >= rho).astype(jnp.float32))
        current["excess"] = mean(jnp.maximum(cost - eta, 0.0))
    return jax.tree.map(lambda c, p: jnp.where(n > 0, c, p), current, previous)
