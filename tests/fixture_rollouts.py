"""What the trajectory fixtures of the environment families share: a compiled rollout, digests, the comparison.

A family's test (``tests/envs/<family>/``) rolls a few vmapped environments through
:class:`~saferl.envs.wrappers.AutoReset` with fixed keys and actions (:func:`rollout`), digests every output and
every state leaf (:func:`outcome_digests`: sha256 of each array's dtype, shape and bytes) and compares them with
the digests its fixture recorded (:func:`assert_unchanged`).
"""

from __future__ import annotations

import hashlib

import jax
import jax.numpy as jnp
import numpy as np

from saferl.envs.wrappers import AutoReset

OUTPUTS = ("obs", "reward", "cost", "terminated", "truncated")
#: fingerprints of a float array agree when they differ by at most this times the sum of its magnitudes: float32
#: rounding moves them by about 1e-7 of it, a change of the mathematics (a coefficient, a step) by far more
FINGERPRINT_RTOL = 1e-6


def host_array(x) -> np.ndarray:
    """``x`` on the host, a PRNG key as its key data."""
    return np.asarray(jax.random.key_data(x) if jnp.issubdtype(jnp.asarray(x).dtype, jax.dtypes.prng_key) else x)


def digest(x) -> str:
    a = host_array(x)
    return hashlib.sha256(str(a.dtype).encode() + str(a.shape).encode() + a.tobytes()).hexdigest()


def fingerprint(x) -> list[float] | None:
    """A float array's sum of magnitudes and its sum weighted by fixed pseudo-random weights in [-1, 1] (float64);
    ``None`` for other arrays, which must match bit for bit."""
    a = host_array(x)
    if not np.issubdtype(a.dtype, np.floating):
        return None
    a = a.astype(np.float64).ravel()
    weights = np.random.default_rng(a.size).uniform(-1.0, 1.0, a.size)
    return [float(np.sum(np.abs(a))), float(a @ weights)]


def rollout(env, params, keys, actions, *, params_per_env=False, nudge=None, nudge_every=0):
    """One compiled ``lax.scan`` of ``AutoReset(env, pool_size=1)`` over ``actions`` (steps, envs, ...), reset from
    ``keys``: ``(reset state, reset obs, final state, (obs, reward, cost, terminated, truncated, info))``.
    ``params_per_env``: ``params`` carry a leading environment axis and are the program's input; otherwise they are
    its constants (which XLA folds: the digests depend on which).  ``nudge(inner_state)``, applied to every
    environment at the last step of each ``nudge_every``, moves a goal where the next step reaches it."""
    wrapped = AutoReset(env, pool_size=1)
    axis = 0 if params_per_env else None

    def run(keys, actions, params):
        state, obs = jax.vmap(wrapped.reset, in_axes=(0, axis))(keys, params)

        def body(state, inputs):
            t, action = inputs
            if nudge is not None:
                nudged = jax.vmap(nudge)(state.inner)
                now = (t % nudge_every) == nudge_every - 1
                state = state.replace(inner=jax.tree.map(lambda a, b: jnp.where(now, a, b), nudged, state.inner))
            state, *outs = jax.vmap(wrapped.step, in_axes=(0, 0, axis))(state, action, params)
            return state, tuple(outs)

        final, outs = jax.lax.scan(body, state, (jnp.arange(actions.shape[0]), actions))
        return state, obs, final, outs

    if params_per_env:
        return jax.jit(run)(keys, actions, params)
    return jax.jit(lambda keys, actions: run(keys, actions, params))(keys, actions)


def outcome_arrays(first, first_obs, final, outs, group: str = "") -> dict:
    """A rollout's arrays by name, prefixed with ``group``: the reset observation, each output, every info entry and
    every leaf of the reset and final states."""
    *arrays, info = outs
    named = {group + "reset_obs": first_obs, **{group + name: a for name, a in zip(OUTPUTS, arrays)}}
    for prefix, tree in (("info", info), ("reset_state", first), ("final_state", final)):
        flat, _ = jax.tree_util.tree_flatten_with_path(tree)
        named.update({group + prefix + jax.tree_util.keystr(path): leaf for path, leaf in flat})
    return named


def outcome_digests(first, first_obs, final, outs, group: str = "") -> dict[str, str]:
    """:func:`digest` of every array of :func:`outcome_arrays`."""
    return {key: digest(value) for key, value in outcome_arrays(first, first_obs, final, outs, group).items()}


def outcome_fingerprints(first, first_obs, final, outs, group: str = "") -> dict[str, list[float]]:
    """:func:`fingerprint` of every float array :func:`outcome_digests` digests, under the same keys."""
    prints = {key: fingerprint(value) for key, value in outcome_arrays(first, first_obs, final, outs, group).items()}
    return {key: value for key, value in prints.items() if value is not None}


def fingerprints_agree(got: list[float], expected: list[float]) -> bool:
    scale = max(abs(expected[0]), abs(got[0]), np.finfo(np.float32).tiny)
    return all(abs(g - e) <= FINGERPRINT_RTOL * scale for g, e in zip(got, expected))


def assert_unchanged(
    got: dict, expected: dict, label: str, made_with: str, got_prints: dict | None = None, prints: dict | None = None
) -> None:
    """Every digest as the fixture recorded it; ``made_with`` names the versions the fixture was made with.  With the
    fixture's fingerprints (``prints``) and these (``got_prints``), a float array whose digest differs passes where
    its fingerprints agree (module docstring)."""
    assert got.keys() == expected.keys(), sorted(got.keys() ^ expected.keys())
    changed = sorted(k for k in expected if got[k] != expected[k])
    if prints is not None and got_prints is not None:
        changed = [k for k in changed if k not in prints or not fingerprints_agree(got_prints[k], prints[k])]
        assert not changed, f"{label}: {changed} differ from the fixture beyond float rounding ({made_with})"
    assert not changed, f"{label}: {changed} differ from the fixture ({made_with})"
