"""IcyLake: FrozenLake where the holes are icy tiles that cost instead of ending the episode.

Canary paper, Sec. 6.1: "a reimplementation of the gymnasium FrozenLake environment
[...]. The agent must traverse a frozen lake grid to reach the goal state while avoiding
icy tiles (instead of holes) which accumulate cost."

Semantics follow Gymnasium's ``FrozenLake-v1`` (``gymnasium/envs/toy_text/frozen_lake.py``):

* tiles ``S`` start, ``F`` frozen (safe), ``H`` icy (FrozenLake's hole), ``G`` goal;
* actions ``0=left, 1=down, 2=right, 3=up``; a move into the edge of the grid leaves the
  agent where it is;
* slippery ice: the executed direction is the intended one with probability
  ``1 - slip_probability`` and each of the two perpendicular ones, ``(a - 1) % 4`` and
  ``(a + 1) % 4``, with probability ``slip_probability / 2``.  The default
  ``slip_probability = 2/3`` is FrozenLake's ``is_slippery=True`` (1/3 each way);
  ``slip_probability = 0`` is FrozenLake's ``is_slippery=False``.

Differences from FrozenLake, which make it a CMDP:

* An ``H`` tile does **not** end the episode.  **Cost convention**: a step costs
  ``ice_cost`` when it *ends* on an icy tile, i.e. ``cost_t = ice_cost * [s_{t+1} is H]``.
  Entering ice costs, staying on ice (bumping a wall, or slipping from one icy tile onto
  another) costs again, and stepping off ice onto a safe tile is free.  The cost return of
  an episode is therefore ``ice_cost`` times the number of steps spent on ice, which is
  the dense cost the Canary paper's VaR constraint ``P(C >= rho) <= eps`` is put on
  (Fig. 5 uses ``rho = 15``).
* Reaching ``G`` gives ``goal_reward`` and ``terminated = True``; every other step gives
  reward 0.  ``G`` is absorbing: stepping from it (without a reset) stays there with
  reward 0, cost 0 and ``terminated = True``, as in FrozenLake's transition table.
* ``truncated = time >= max_steps`` where ``time`` counts the steps taken since reset.  The default
  ``max_steps`` is Gymnasium's registration of the map: 100 for "4x4" (``FrozenLake-v1``) and 200 for
  "8x8" (``FrozenLake8x8-v1``); 100 for a map given as strings.  The Canary paper does not state its
  episode length; before 2026-12-01 saferl capped the 8x8 map at 100 steps as well
  (docs/decisions/045-icylake-time-limit.md).

The observation is the one-hot encoding of the agent's cell (``n_rows * n_cols`` float32)
so neural policies can consume it directly.  The map is a pytree leaf (an integer array,
see ``FROZEN, ICE, GOAL, START``), so ``reset``/``step`` vmap over params with different
maps of the same shape (the shape is static per compile).
"""

from __future__ import annotations

from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from saferl.envs.base import Box, Discrete, Environment, EnvParams, register
from saferl.foundation import struct

# tile codes of ``IcyLakeParams.tiles``
FROZEN, ICE, GOAL, START = 0, 1, 2, 3
_CHAR_TO_TILE = {"F": FROZEN, "H": ICE, "G": GOAL, "S": START}

LEFT, DOWN, RIGHT, UP = 0, 1, 2, 3
# (d_row, d_col) of each action, in Gymnasium's order
_MOVES = np.array([[0, -1], [1, 0], [0, 1], [-1, 0]], dtype=np.int32)

MAPS: dict[str, tuple[str, ...]] = {
    # Gymnasium's FrozenLake maps
    "4x4": ("SFFF", "FHFH", "FFFH", "HFFG"),
    "8x8": (
        "SFFFFFFF",
        "FFFFFFFF",
        "FFFHFFFF",
        "FFFFFHFF",
        "FFFHFFFF",
        "FHHFFFHF",
        "FHFFHFHF",
        "FFFHFFFG",
    ),
}

#: Gymnasium's ``max_episode_steps`` of each map's registration (``FrozenLake-v1``, ``FrozenLake8x8-v1``)
MAX_STEPS = {"4x4": 100, "8x8": 200}


@struct.dataclass
class IcyLakeParams(EnvParams):
    #: (n_rows, n_cols) int32 map of tile codes FROZEN/ICE/GOAL/START; exactly one START
    tiles: jax.Array
    #: probability mass moved to the two perpendicular directions (half each)
    slip_probability: jax.Array = 2.0 / 3.0
    #: cost of every step that ends on an icy tile
    ice_cost: jax.Array = 1.0
    #: reward for the step that reaches the goal
    goal_reward: jax.Array = 1.0
    #: episode length after which ``truncated`` is raised
    max_steps: jax.Array = struct.field(default=100, kw_only=True)


@struct.dataclass
class IcyLakeState:
    position: jax.Array  # int32 flat index row * n_cols + col
    time: jax.Array  # int32 steps taken since reset
    key: jax.Array  # PRNG key for the slips


def tiles_from_strings(rows: Sequence[str]) -> np.ndarray:
    """``["SFFF", "FHFH", ...]`` -> (n_rows, n_cols) int32 array of tile codes."""
    rows = list(rows)
    if not rows or not all(isinstance(r, str) for r in rows):
        raise ValueError("the map must be a non-empty list of strings such as ['SFFF', 'FHFH', ...]")
    if len({len(r) for r in rows}) != 1 or len(rows[0]) == 0:
        raise ValueError(f"all map rows must have the same, non-zero length; got lengths {[len(r) for r in rows]}")
    bad = sorted({c for r in rows for c in r} - set(_CHAR_TO_TILE))
    if bad:
        raise ValueError(f"unknown map characters {bad}; use S (start), F (frozen), H (icy), G (goal)")
    tiles = np.array([[_CHAR_TO_TILE[c] for c in r] for r in rows], dtype=np.int32)
    if (tiles == START).sum() != 1:
        raise ValueError(f"the map needs exactly one start tile 'S', found {(tiles == START).sum()}")
    if (tiles == GOAL).sum() < 1:
        raise ValueError("the map needs at least one goal tile 'G'")
    return tiles


def make_params(
    desc: str | Sequence[str] = "8x8",
    *,
    slip_probability: float = 2.0 / 3.0,
    ice_cost: float = 1.0,
    goal_reward: float = 1.0,
    max_steps: int | None = None,
) -> IcyLakeParams:
    """Build ``IcyLakeParams`` from a map name in ``MAPS`` ("4x4", "8x8") or a list of strings;
    ``max_steps`` None is the map's Gymnasium time limit (:data:`MAX_STEPS`, 100 for other maps)."""
    rows = MAPS[desc] if isinstance(desc, str) and desc in MAPS else desc
    if max_steps is None:
        max_steps = MAX_STEPS.get(desc, 100) if isinstance(desc, str) else 100
    if isinstance(rows, str):
        raise ValueError(f"unknown map name {desc!r}; known: {sorted(MAPS)}, or pass a list of row strings")
    if not 0.0 <= slip_probability <= 1.0:
        raise ValueError(f"slip_probability must lie in [0, 1], got {slip_probability}")
    if max_steps < 1:
        raise ValueError(f"max_steps must be >= 1, got {max_steps}")
    return IcyLakeParams(
        tiles=jnp.asarray(tiles_from_strings(rows)),
        slip_probability=jnp.float32(slip_probability),
        ice_cost=jnp.float32(ice_cost),
        goal_reward=jnp.float32(goal_reward),
        max_steps=jnp.int32(max_steps),
    )


def _move(position: jax.Array, direction: jax.Array, shape: tuple[int, int]) -> jax.Array:
    """Flat index after moving one cell in ``direction``; the grid's edge stops the move."""
    n_rows, n_cols = shape
    delta = jnp.asarray(_MOVES)[direction]
    row = jnp.clip(position // n_cols + delta[..., 0], 0, n_rows - 1)
    col = jnp.clip(position % n_cols + delta[..., 1], 0, n_cols - 1)
    return (row * n_cols + col).astype(jnp.int32)


_DESCRIPTION = "FrozenLake grid (slippery) where icy tiles cost instead of ending the episode; reach the goal"


@register("IcyLake", _DESCRIPTION)
class IcyLake(Environment):
    """Functional IcyLake; see the module docstring for the exact semantics.

    ``IcyLake(desc="4x4", ice_cost=2.0)`` sets the defaults ``default_params`` returns; any
    params pytree with the same map shape can be passed to ``reset``/``step`` instead.
    """

    description = _DESCRIPTION
    cost_shape = ()
    config_defaults = {
        "num_envs": 16,
        "rollout_steps": 128,
        "total_steps": 300_000,
        "constraint": {"type": "expected", "limit": 3.0},
    }
    risk_defaults = {"rho": 15.0, "epsilon": 0.05, "gamma_c": 1.0}

    def __init__(self, desc: str | Sequence[str] = "8x8", **param_defaults):
        self._params = make_params(desc, **param_defaults)

    def default_params(self) -> IcyLakeParams:
        return self._params

    def reset(self, key: jax.Array, params: IcyLakeParams) -> tuple[IcyLakeState, jax.Array]:
        flat = params.tiles.reshape(-1)
        start = jnp.argmax(flat == START).astype(jnp.int32)
        state = IcyLakeState(position=start, time=jnp.int32(0), key=key)
        return state, self._obs(start, flat.shape[0])

    def step(self, state: IcyLakeState, action: jax.Array, params: IcyLakeParams):
        flat = params.tiles.reshape(-1)
        key, slip_key = jax.random.split(state.key)
        action = jnp.asarray(action, jnp.int32)
        if action.ndim != 0:  # a batch of actions needs a jax.vmap over the state too
            raise ValueError(f"IcyLake.step takes one scalar action per state, got shape {action.shape}")
        p = jnp.asarray(params.slip_probability, jnp.float32)
        u = jax.random.uniform(slip_key, ())
        # intended with prob 1 - p, (a - 1) % 4 with p / 2, (a + 1) % 4 with p / 2
        direction = jnp.where(u < 1.0 - p, action, jnp.where(u < 1.0 - p / 2.0, (action - 1) % 4, (action + 1) % 4))

        at_goal = flat[state.position] == GOAL  # absorbing
        moved = _move(state.position, direction, params.tiles.shape)
        position = jnp.where(at_goal, state.position, moved)
        tile = flat[position]
        on_ice = tile == ICE
        reached_goal = (tile == GOAL) & ~at_goal

        reward = jnp.where(reached_goal, params.goal_reward, 0.0).astype(jnp.float32)
        cost = jnp.where(on_ice, params.ice_cost, 0.0).astype(jnp.float32)
        time = state.time + 1
        terminated = tile == GOAL
        truncated = time >= params.max_steps
        info = {
            "position": position,
            "on_ice": on_ice,
            "reached_goal": reached_goal,
            "slipped": (direction != action) & ~at_goal,
        }
        new_state = IcyLakeState(position=position, time=time, key=key)
        return new_state, self._obs(position, flat.shape[0]), reward, cost, terminated, truncated, info

    def observation_space(self, params: IcyLakeParams) -> Box:
        n = int(np.prod(params.tiles.shape))
        return Box(low=0.0, high=1.0, shape=(n,))

    def action_space(self, params: IcyLakeParams) -> Discrete:
        return Discrete(4)

    @staticmethod
    def _obs(position: jax.Array, n_cells: int) -> jax.Array:
        return jax.nn.one_hot(position, n_cells, dtype=jnp.float32)


@jax.jit
def dynamics(params: IcyLakeParams) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Exact tabular model ``(P, R, C)`` of ``IcyLake.step`` for exact policy evaluation.

    ``P[s, a, s']`` is the transition probability, ``R[s, a, s']`` and ``C[s, a, s']`` the
    reward and cost of that transition (the step function's conventions: ``G`` absorbing
    with zero reward, cost when ``s'`` is icy).  Jittable; vmaps over params.
    """
    flat = params.tiles.reshape(-1)
    n = flat.shape[0]
    s = jnp.arange(n, dtype=jnp.int32)[:, None]  # (S, 1)
    a = jnp.arange(4, dtype=jnp.int32)[None, :]  # (1, 4)
    p = jnp.asarray(params.slip_probability, jnp.float32)
    at_goal = (flat == GOAL)[:, None, None]
    P = jnp.zeros((n, 4, n), jnp.float32)
    for offset, prob in ((0, 1.0 - p), (-1, p / 2.0), (1, p / 2.0)):
        nxt = _move(s, (a + offset) % 4, params.tiles.shape)  # (S, 4)
        P = P + prob * jax.nn.one_hot(nxt, n, dtype=jnp.float32)
    P = jnp.where(at_goal, jnp.broadcast_to(jnp.eye(n, dtype=jnp.float32)[:, None, :], (n, 4, n)), P)
    next_goal = (flat == GOAL)[None, None, :]
    R = jnp.where(next_goal & ~at_goal, params.goal_reward, 0.0) * jnp.ones((n, 4, n))
    C = jnp.where((flat == ICE)[None, None, :], params.ice_cost, 0.0) * jnp.ones((n, 4, n))
    return P, R.astype(jnp.float32), C.astype(jnp.float32)
