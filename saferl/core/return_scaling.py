"""Reward scaling by a running standard deviation of discounted returns, as RL-Safety-Algorithms does it.

Sven Gronauer's RL-Safety-Algorithms (``use_reward_scaling=True``, the default of every algorithm there:
``rl_safety_algorithms/algs/iwpg/iwpg.py``), which the SCPO paper (arXiv:2311.00880, App. F.2.1) ran its baselines
with:

1. ``Buffer.finish_path`` (``algs/core.py``) divides each path's rewards by the running standard deviation of
   discounted returns, the mean not subtracted, and clips them to +-10 (``OnlineMeanStd.forward(rews,
   subtract_mean=False, clip=True)``, ``common/online_mean_std.py``: ``x / (std + 1e-5)``, bound 10), before GAE;
   cost advantages stay in the costs' own units;
2. after the epoch's update, ``update_running_statistics`` folds the epoch's discounted returns-to-go into the
   statistics (``ret_oms.update(data['discounted_ret'])``: per path, ``discount_cumsum`` of its rewards, a path being
   cut where the epoch ends), by Chan et al.'s parallel update from mean 0, std 1, count 0 (``OnlineMeanStd.update``).

So the epoch's rewards are scaled by statistics of the epochs before it, the first epoch's by 1. GAE is linear in the
rewards and values, so with a critic of the raw returns, ``A / (std + 1e-5)`` is the advantage of the scaled
rewards up to the clip (:func:`scale`). ``OnlineMeanStd.update`` takes the batch's variance about the *new* running
mean, not about the batch's own mean (``diff = x - mean_new``); :func:`update` keeps that.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

#: OnlineMeanStd's epsilon: ``x / (std + eps)``
EPSILON = 1e-5


def init() -> dict:
    """The statistics before any return is seen: mean 0, variance 1, count 0 (``OnlineMeanStd.__init__``)."""
    return {"count": jnp.zeros((), jnp.float32), "mean": jnp.zeros((), jnp.float32), "var": jnp.ones((), jnp.float32)}


def discounted_returns(reward, done, gamma, rollout_shape):
    """Each sample's discounted return-to-go within its path: ``G_t = r_t + gamma (1 - done_t) G_{t+1}``, a path
    ending where its episode does (``done``) or where the rollout does (``G_T = 0``). ``reward`` and ``done`` are
    flattened time-major, ``rollout_shape`` is ``(T, N)``; returns ``(T * N,)``."""
    r = reward.reshape(rollout_shape)
    cont = 1.0 - done.reshape(rollout_shape).astype(jnp.float32)

    def backward(following, x):
        r_t, cont_t = x
        g = r_t + gamma * cont_t * following
        return g, g

    _, returns = jax.lax.scan(backward, jnp.zeros_like(r[0]), (r, cont), reverse=True)
    return returns.reshape(-1)


def update(stats: dict, x) -> dict:
    """``OnlineMeanStd.update`` with the values ``x`` (any shape; all count): Chan et al.'s parallel combination of
    the running (count, mean, var) with the batch's, the batch's variance taken about the new mean."""
    x = jnp.ravel(x).astype(jnp.float32)
    n_b = jnp.asarray(x.size, jnp.float32)
    n_a = stats["count"]
    n_ab = n_a + n_b
    delta = jnp.mean(x) - stats["mean"]
    mean = stats["mean"] + delta * n_b / n_ab
    batch_var = jnp.mean(jnp.square(x - mean))
    m2 = n_a * stats["var"] + n_b * batch_var + jnp.square(delta) * n_a * n_b / n_ab
    return {"count": n_ab, "mean": mean, "var": m2 / n_ab}


def scale(stats: dict):
    """The factor the rewards are divided by, as a multiplier: ``1 / (std + 1e-5)``."""
    return 1.0 / (jnp.sqrt(stats["var"]) + EPSILON)
