"""Constraints as data.

Two kinds, chosen by ``type`` in the config's ``constraint`` section:

* ``expected`` -- the CMDP constraint E[sum_t gamma_c^t c_t] <= ``limit`` (b).  With
  ``gamma_c = 1`` (default) the limit applies to the undiscounted episode cost, as in
  Safety-Gymnasium's cost limit 25.  With ``m`` cost channels ``limit`` may be a list
  ``[b_1, ..., b_m]`` (one threshold per channel, an array of shape ``(m,)``); a single
  number is a scalar limit, as before.
* ``var`` -- the Value-at-Risk constraint P(C(tau) >= ``rho``) <= ``epsilon`` on the cost
  return C(tau) = sum_t gamma_c^t c_t (Canary eq. 12), enforced through a ``surrogate``:
  ``cantelli`` (Canary eq. 20/28), ``indicator`` (eq. 13-14) or ``cvar`` (eq. 15); see
  :mod:`saferl.core.risk`.  The default surrogate is the algorithm's first accepted one.

An ``expected`` constraint also takes ``window``: with ``window`` > 0, J_c, the cost estimate
every expected-cost method reads, is the mean discounted cost of the last ``window`` finished
episodes, carried across iterations (OmniSafe's and SafePO's ``Metrics/EpCost`` is a 50-episode
window, as is the C-TRPO authors' code).  The default 0 takes the episodes that finished in the
current batch only: J_c of the current policy, as CPO's and C-TRPO's updates are written.
``window_statistic`` says which mean of the window: ``window_mean`` (default; after the batch's episodes are
added) or ``snapshot_mean`` (the mean, over the batch's finished episodes, of the window's mean right after each
was added: SafePO's logger, which the C-TRPO authors' methods read;
:func:`saferl.core.rollout.cost_window_snapshot_mean`).

The numbers are traced values (a pytree of arrays), so a compiled training
program can be reused, or vmapped, across cost limits and violation thresholds.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from saferl.core.rollout import WINDOW_STATISTICS
from saferl.foundation import struct

KINDS = ("expected", "var")
SURROGATES = ("cantelli", "indicator", "cvar")


@struct.dataclass
class Constraint:
    limit: jax.Array  # b for "expected"; rho for "var" (the episode-cost level that counts)
    epsilon: jax.Array  # allowed violation probability ("var"); unused for "expected"
    gamma_c: jax.Array  # cost discount of the cost return
    kind: str = struct.field(static=True, default="expected")
    surrogate: str = struct.field(static=True, default="")  # "var" only: cantelli | indicator | cvar

    @property
    def rho(self) -> jax.Array:
        return self.limit


def _number(section: dict, key: str, default: Any) -> float:
    value = section.get(key, default)
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"constraint.{key} must be a number, got {value!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"constraint.{key} must be finite, got {value!r}")
    return value


def from_config(section: dict) -> Constraint:
    """Validate a ``constraint`` config section; raises ``ValueError`` naming the bad value."""
    section = dict(section or {})
    kind = section.pop("type", "expected")
    if kind not in KINDS:
        raise ValueError(f"constraint.type must be one of {', '.join(KINDS)}; got {kind!r}")
    allowed = {
        "expected": {"limit", "gamma_c", "window", "window_statistic"},
        "var": {"rho", "epsilon", "gamma_c", "surrogate", "finite_horizon"},
    }[kind]
    unknown = set(section) - allowed
    if unknown:
        raise ValueError(
            f"unknown constraint.{sorted(unknown)[0]} for a {kind!r} constraint; allowed: {', '.join(sorted(allowed))}"
        )
    gamma_c = _number(section, "gamma_c", 1.0)
    if not 0.0 < gamma_c <= 1.0:
        raise ValueError(f"constraint.gamma_c must be in (0, 1], got {gamma_c}")
    if kind == "expected":
        raw = section.get("limit", 25.0)
        if isinstance(raw, (list, tuple)):
            if not raw:
                raise ValueError("constraint.limit must be a number or a non-empty list of numbers, got []")
            limit = [_number({"limit": v}, "limit", None) for v in raw]
            for i, value in enumerate(limit):
                if value < 0:
                    raise ValueError(f"constraint.limit[{i}] must be >= 0, got {value}")
        else:
            limit = _number(section, "limit", 25.0)
            if limit < 0:
                raise ValueError(f"constraint.limit must be >= 0, got {limit}")
        epsilon = 1.0
        surrogate = ""
    else:
        surrogate = section.get("surrogate", "cantelli")
        if surrogate not in SURROGATES:
            raise ValueError(f"constraint.surrogate must be one of {', '.join(SURROGATES)}; got {surrogate!r}")
        limit = _number(section, "rho", 100.0)
        if limit <= 0:
            raise ValueError(f"constraint.rho must be > 0, got {limit}")
        epsilon = _number(section, "epsilon", 0.05)
        if not 0.0 < epsilon < 1.0:
            raise ValueError(f"constraint.epsilon must be in (0, 1), got {epsilon}")
    f32 = lambda x: jnp.asarray(x, jnp.float32)  # noqa: E731
    return Constraint(limit=f32(limit), epsilon=f32(epsilon), gamma_c=f32(gamma_c), kind=kind, surrogate=surrogate)


def finite_horizon(section: dict) -> bool:
    """``constraint.finite_horizon`` of a VaR constraint: the cost return C(tau) ends at the
    environment's time limit, so the risk channels' critics observe t / max_steps and their GAE
    does not bootstrap at truncation (:class:`saferl.envs.risk.RiskAugmentation`).  Default false."""
    value = (section or {}).get("finite_horizon", False)
    if not isinstance(value, bool):
        raise ValueError(f"constraint.finite_horizon must be true or false, got {value!r}")
    return value


DEFAULT_WINDOW = 0  # this batch's episodes; 50 is OmniSafe's / SafePO's Metrics/EpCost window


def window(section: dict) -> int:
    """``constraint.window`` of an expected-cost constraint (see the module docstring); 0 for ``var``."""
    section = section or {}
    if section.get("type", "expected") != "expected":
        return 0
    value = section.get("window", DEFAULT_WINDOW)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"constraint.window must be an integer >= 0 (episodes; 0 = this batch's only), got {value!r}")
    return value


def window_statistic(section: dict) -> str:
    """``constraint.window_statistic`` of an expected-cost constraint (module docstring); ``window_mean`` for
    ``var``."""
    section = section or {}
    value = (
        section.get("window_statistic", WINDOW_STATISTICS[0])
        if section.get("type", "expected") == "expected"
        else WINDOW_STATISTICS[0]
    )
    if value not in WINDOW_STATISTICS:
        raise ValueError(f"constraint.window_statistic must be one of {', '.join(WINDOW_STATISTICS)}, got {value!r}")
    return value


def _plain(x) -> float:
    """A float32 value as the short decimal it was written as (0.05, not 0.05000000074505806)."""
    return float(str(np.float32(x)))


def to_config(constraint: Constraint) -> dict:
    out = {"type": constraint.kind, "gamma_c": _plain(constraint.gamma_c)}
    if constraint.kind == "expected":
        limit = jnp.asarray(constraint.limit)
        out["limit"] = _plain(limit) if limit.ndim == 0 else [_plain(v) for v in limit]
    else:
        out["rho"] = _plain(constraint.limit)
        out["epsilon"] = _plain(constraint.epsilon)
        out["surrogate"] = constraint.surrogate
    return out
