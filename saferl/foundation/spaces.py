"""Observation and action spaces: :class:`Box` and :class:`Discrete`.

They live here, apart from the environments, so that ``saferl.core`` (networks pick an
actor head by the action space) needs nothing from ``saferl.envs``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp


@dataclass(frozen=True)
class Box:
    """A box in R^shape; ``low``/``high`` are scalars or arrays broadcastable to ``shape``."""

    low: Any
    high: Any
    shape: tuple[int, ...]
    dtype: Any = jnp.float32

    def sample(self, key: jax.Array) -> jax.Array:
        low = jnp.broadcast_to(jnp.asarray(self.low, jnp.float32), self.shape)
        high = jnp.broadcast_to(jnp.asarray(self.high, jnp.float32), self.shape)
        low = jnp.where(jnp.isfinite(low), low, -1.0)
        high = jnp.where(jnp.isfinite(high), high, 1.0)
        return jax.random.uniform(key, self.shape, minval=low, maxval=high).astype(self.dtype)

    def contains(self, x: jax.Array) -> jax.Array:
        x = jnp.asarray(x)
        return jnp.all((x >= self.low) & (x <= self.high)) & (x.shape == self.shape)


@dataclass(frozen=True)
class Discrete:
    """Integers ``0 .. n - 1``."""

    n: int
    shape: tuple[int, ...] = ()
    dtype: Any = jnp.int32

    def sample(self, key: jax.Array) -> jax.Array:
        return jax.random.randint(key, (), 0, self.n).astype(self.dtype)

    def contains(self, x: jax.Array) -> jax.Array:
        x = jnp.asarray(x)
        return (x >= 0) & (x < self.n)


Space = Box | Discrete
