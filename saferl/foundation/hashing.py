"""Counter-based hashing for cheap pseudo-random numbers inside compiled code."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def fmix32(x: jax.Array) -> jax.Array:
    """MurmurHash3's 32-bit finaliser: an avalanche bijection on uint32 (uint32 -> uint32)."""
    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x85EBCA6B)
    x = x ^ (x >> 13)
    x = x * jnp.uint32(0xC2B2AE35)
    return x ^ (x >> 16)
