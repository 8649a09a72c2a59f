"""Supervised fitting shared by the critics: shuffled minibatch epochs of an optax optimiser."""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
import optax


def minibatch_epochs(
    loss: Callable,
    params,
    opt: optax.GradientTransformation,
    opt_state,
    data: tuple,
    key,
    epochs: int,
    minibatches: int,
):
    """``epochs`` passes of ``opt`` over ``minibatches`` shuffled minibatches of ``data`` (arrays
    with a common leading axis); ``loss(params, *minibatch)``.  Returns (params, opt_state, the
    mean loss of the last epoch)."""
    size = data[0].shape[0]
    n_mb = max(1, min(int(minibatches), size))
    mb_size = size // n_mb

    def step(carry, mb):
        p, s = carry
        value, grad = jax.value_and_grad(loss)(p, *mb)
        updates, s = opt.update(grad, s, p)
        return (optax.apply_updates(p, updates), s), value

    def epoch(carry, k):
        perm = jax.random.permutation(k, size)[: n_mb * mb_size].reshape(n_mb, mb_size)
        carry, values = jax.lax.scan(step, carry, tuple(x[perm] for x in data))
        return carry, jnp.mean(values)

    (params, opt_state), losses = jax.lax.scan(epoch, (params, opt_state), jax.random.split(key, int(epochs)))
    return params, opt_state, losses[-1]
