"""The navigation tasks' pseudo-lidar: Safety-Gymnasium's ``BaseTask._obs_lidar_pseudo``.

Safety-Gymnasium 1.0.0 (``safety_gymnasium/bases/base_task.py``, ``LidarConf`` and ``_obs_lidar_pseudo``)
observes each group of objects (goal, hazards, vases, ...) through a pseudo-lidar of ``num_bins`` bins
around the robot: no rays are cast, each object lights the bin of its direction with a closeness that
falls with its distance.  :func:`pseudo_lidar` computes one group's reading; a task's observation is
its robot's sensors followed by one reading per group, in the task's order
(:meth:`saferl.envs.safety_nav.engine.NavTask.observe`).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

TWO_PI = 2.0 * math.pi


def pseudo_lidar(
    robot_pos: jax.Array,
    robot_heading: jax.Array,
    object_pos: jax.Array,
    *,
    num_bins: int = 16,
    max_dist: float | None = 3.0,
    exp_gain: float = 1.0,
    alias: bool = True,
) -> jax.Array:
    """Safety-Gymnasium's pseudo-lidar of ``object_pos`` (shape ``(n, 2)``) seen from the robot.

    Bin ``i`` covers robot-frame angles ``[i, i + 1) * 2 pi / num_bins``
    (counter-clockwise from the heading).  An object's reading is
    ``max(0, max_dist - d) / max_dist`` (or ``exp(-exp_gain * d)`` when ``max_dist``
    is None); with ``alias`` the next bin gets ``frac * reading`` and the previous
    bin ``(1 - frac) * reading``, ``frac`` being the object's fractional position in
    its bin.  Each bin keeps the maximum over objects.
    """
    object_pos = jnp.reshape(object_pos, (-1, 2))
    rel = object_pos - robot_pos
    c, s = jnp.cos(robot_heading), jnp.sin(robot_heading)
    ego_x = c * rel[:, 0] + s * rel[:, 1]
    ego_y = -s * rel[:, 0] + c * rel[:, 1]
    dist = jnp.sqrt(ego_x**2 + ego_y**2)
    angle = jnp.mod(jnp.arctan2(ego_y, ego_x), TWO_PI)
    position = angle / (TWO_PI / num_bins)
    lower = jnp.floor(position)
    frac = jnp.clip(position - lower, 0.0, 1.0)
    bin_idx = lower.astype(jnp.int32) % num_bins  # the modulo guards angle rounding up to 2 pi
    if max_dist is None:
        sensor = jnp.exp(-exp_gain * dist)
    else:
        sensor = jnp.maximum(0.0, max_dist - dist) / max_dist
    bins = jnp.arange(num_bins)
    hits = jnp.where(bins == bin_idx[:, None], sensor[:, None], 0.0)
    if alias:
        up = jnp.where(bins == ((bin_idx + 1) % num_bins)[:, None], (frac * sensor)[:, None], 0.0)
        down = jnp.where(bins == ((bin_idx - 1) % num_bins)[:, None], ((1.0 - frac) * sensor)[:, None], 0.0)
        hits = jnp.maximum(hits, jnp.maximum(up, down))
    return jnp.max(hits, axis=0, initial=0.0)
