"""Layouts of the navigation tasks: objects placed at random with keep-outs, and the goal placed again.

Safety-Gymnasium 1.0.0 (``safety_gymnasium/utils/random_generator.py``, ``RandomGenerator``) places the
objects of a task one after the other, each uniformly in the task's placement square shrunk by the
object's keep-out radius and at least the sum of the two keep-outs from every object placed before it:
100 tries per object, and a layout in which some object found no place is drawn again
(``build_layout``, up to 10000 times).  After a success ``BaseTask.build_goal_position``
(``safety_gymnasium/bases/base_task.py``) places the goal again, away from every other object as they
are then.  Here every draw has a fixed shape, so that ``reset`` and ``step`` jit and vmap:

* :func:`place_objects`: one attempt, a fixed number of candidates per object, each object at the first
  candidate that keeps out of those placed before it, or at the one violating the keep-outs least
  (:func:`pick_placement`).  PointGoal1 and PointPush1 keep that attempt.
* :func:`sample_layout`: attempts drawn again until one is valid, up to a number of restarts, as
  ``build_layout`` rejects a layout; then the least-violating attempt.  CarButton1, whose layouts are
  crowded, uses it.
* :func:`place_goal`: candidates for the goal against the layout as it is now.

Each task module states its numbers (candidates, restarts) and what they cost against the original.
The candidates come from :func:`hash_uniform`, a counter hash seeded by a JAX key, for speed.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from saferl.foundation.hashing import fmix32


def hash_uniform(key, shape):
    """Uniform [0, 1) floats of ``shape``: a counter hash seeded by 64 bits drawn from ``key``.

    One threefry call for the seed, then two MurmurHash3 finaliser rounds per number:
    placement candidates need many numbers every step (both branches of an
    auto-reset run every step under ``vmap``), and threefry for each of them
    dominated the step time.  The quality is ample for choosing positions.
    """
    seed = jax.random.bits(key, (2,), jnp.uint32)
    count = math.prod(shape)
    x = jnp.arange(count, dtype=jnp.uint32) * jnp.uint32(0x9E3779B9) + seed[0]
    x = fmix32(fmix32(x) ^ seed[1])
    return jnp.reshape((x >> 8).astype(jnp.float32) * (1.0 / (1 << 24)), shape)


def keepouts(*groups) -> jax.Array:
    """The keep-out radii ``(n,)`` of groups of objects in placement order, each group ``(count, radius)``."""
    return jnp.concatenate([jnp.full((count,), radius) for count, radius in groups]).astype(jnp.float32)


def pick_placement(candidates, others, min_dist):
    """First candidate at least ``min_dist`` (per other object) from all ``others``;
    if none is, the one violating the keep-outs least.  ``candidates``: (k, 2).

    Written without argmax or gathers, which are slow on CPU under vmap: valid
    candidates score ``1e6 - index`` so the first wins; the rest score their
    (negative) slack.  Exact ties can only happen between invalid candidates and
    are averaged.
    """
    dx = candidates[:, 0, None] - others[None, :, 0]  # coordinates split before broadcasting
    dy = candidates[:, 1, None] - others[None, :, 1]
    dist = jnp.sqrt(dx * dx + dy * dy)
    slack = jnp.min(dist - min_dist[None, :], axis=1)
    index = jnp.arange(candidates.shape[0], dtype=jnp.float32)
    score = jnp.where(slack >= 0.0, 1e6 - index, slack)
    chosen = score == jnp.max(score)
    count = jnp.sum(chosen.astype(candidates.dtype))
    return jnp.sum(jnp.where(chosen[:, None], candidates, 0.0), axis=0) / count


def place_objects(key, keepout, half, tries):
    """One layout attempt: ``(n, 2)`` positions of objects with keep-outs ``keepout`` (n,), object ``i``
    uniform in ``[-half_i, half_i]^2`` (the placement square shrunk by its keep-out), ``tries``
    candidates each, each object kept out of those placed before it (:func:`pick_placement`)."""
    n = keepout.shape[0]
    candidates = (2.0 * hash_uniform(key, (n, tries, 2)) - 1.0) * half[:, None, None]

    # a scan with a fixed-shape layout and a mask: one small loop body to compile for all objects
    def place(layout, inputs):
        i, cands = inputs
        min_dist = jnp.where(jnp.arange(n) < i, keepout + keepout[i], -jnp.inf)
        return layout.at[i].set(pick_placement(cands, layout, min_dist)), None

    layout, _ = jax.lax.scan(place, jnp.zeros((n, 2), jnp.float32), (jnp.arange(n), candidates))
    return layout


def sample_layout(key, keepout, half, tries, restarts):
    """Safety-Gymnasium's rejection sampler (``RandomGenerator.build_layout``) in fixed shapes.

    An attempt is :func:`place_objects` with ``tries`` candidates per object; an attempt in which
    some object found no candidate clear of those placed before it is rejected and a new one drawn,
    as Safety-Gymnasium rejects a layout (it allows 100 tries per object and 10000 layouts).  After
    ``restarts`` attempts the least-violating one is kept.  Returns the (n, 2) layout.  A vmapped
    batch of resets runs as many attempts as its unluckiest member."""
    n = keepout.shape[0]
    need = keepout[:, None] + keepout[None, :]
    upper = jnp.arange(n)[:, None] < jnp.arange(n)[None, :]

    def attempt(i):
        layout = place_objects(jax.random.fold_in(key, i), keepout, half, tries)
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


def place_goal(u, objects, extent, goal_keepout, fallback=None):
    """``BaseTask.build_goal_position``: a goal position clear of ``objects``.

    ``u`` (k, 2) uniform numbers give the candidates in ``[-extent + goal_keepout, extent -
    goal_keepout]^2``; ``fallback`` (a position), if given, is tried after them.  ``objects`` are
    ``(positions (m, 2), keep-out radius)`` pairs; the goal keeps the sum of the keep-outs from each."""
    candidates = (2.0 * u - 1.0) * (extent - goal_keepout)
    if fallback is not None:
        candidates = jnp.concatenate([candidates, fallback[None]])
    others = jnp.concatenate([positions for positions, _ in objects])
    keepout = keepouts(*((positions.shape[0], radius) for positions, radius in objects))
    return pick_placement(candidates, others, keepout + goal_keepout)
