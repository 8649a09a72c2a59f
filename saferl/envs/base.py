"""The functional CMDP interface every saferl environment implements.

An environment is a stateless Python object; everything that changes lives in
an explicit ``state`` pytree and everything a user may vary (per seed, even)
lives in a ``params`` pytree, in the gymnax style::

    state, obs = env.reset(key, params)
    state, obs, reward, cost, terminated, truncated, info = env.step(state, action, params)

Reward and cost are separate signals.  ``cost`` has shape ``env.cost_shape``:
``()`` for a single constraint, ``(m,)`` for ``m`` cost channels.  Randomness
inside ``step`` (slippery tiles, actuator noise) comes from a key carried in
the state, so ``step`` needs no key argument and the whole API is
``jax.vmap``-able over states, actions and params.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

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


class Environment:
    """Base class of the functional CMDP API.  Subclasses implement the four methods below."""

    #: one-line description shown by ``saferl list``
    description: str = ""
    #: shape of the cost signal: ``()`` for one constraint, ``(m,)`` for ``m`` channels
    cost_shape: tuple[int, ...] = ()

    def default_params(self) -> Any:
        raise NotImplementedError

    def lift_params(self, base_params: Any) -> Any:
        return base_params

    def reset(self, key: jax.Array, params: Any) -> tuple[Any, jax.Array]:
        raise NotImplementedError

    def step(self, state: Any, action: jax.Array, params: Any):
        """Returns ``(state, obs, reward, cost, terminated, truncated, info)``."""
        raise NotImplementedError

    def observation_space(self, params: Any) -> Box:
        raise NotImplementedError

    def action_space(self, params: Any) -> Space:
        raise NotImplementedError

    @property
    def unwrapped(self) -> "Environment":
        return self

    @property
    def name(self) -> str:
        return type(self).__name__


class Wrapper(Environment):
    """Delegates everything to ``self.env``; subclasses override what they change."""

    def __init__(self, env: Environment):
        self.env = env

    @property
    def description(self) -> str:  # type: ignore[override]
        return self.env.description

    @property
    def cost_shape(self) -> tuple[int, ...]:  # type: ignore[override]
        return self.env.cost_shape

    def default_params(self):
        return self.env.default_params()

    def lift_params(self, base_params):
        """The parameters of this stack, given the innermost environment's (wrappers that
        carry their own parameters, like :class:`saferl.envs.risk.RiskAugmentation`, wrap them)."""
        return self.env.lift_params(base_params)

    def reset(self, key, params):
        return self.env.reset(key, params)

    def step(self, state, action, params):
        return self.env.step(state, action, params)

    def observation_space(self, params):
        return self.env.observation_space(params)

    def action_space(self, params):
        return self.env.action_space(params)

    @property
    def unwrapped(self) -> Environment:
        return self.env.unwrapped

    @property
    def name(self) -> str:
        return self.env.name


# --------------------------------------------------------------------------- registry

_REGISTRY: dict[str, tuple[Callable[..., Environment], str]] = {}


def register(name: str, description: str):
    """Class/function decorator adding an environment factory to the registry."""

    def deco(factory):
        if name in _REGISTRY:
            raise ValueError(f"environment {name!r} is registered twice")
        _REGISTRY[name] = (factory, description)
        return factory

    return deco


def make(name: str, **kwargs) -> Environment:
    """Build a registered environment by name, e.g. ``make('PointGoal1')``."""
    _import_builtin_envs()
    if name not in _REGISTRY:
        known = ", ".join(sorted(_REGISTRY))
        raise ValueError(f"unknown environment {name!r}; known environments: {known}")
    return _REGISTRY[name][0](**kwargs)


def registered() -> dict[str, str]:
    """``{name: one-line description}`` of every registered environment."""
    _import_builtin_envs()
    return {name: desc for name, (_, desc) in sorted(_REGISTRY.items())}


def _import_builtin_envs() -> None:
    # Importing the modules runs their ``@register`` decorators.
    import importlib

    for module in ("eco_ant", "icy_lake", "point_goal", "toy"):  # eco_ant imports mujoco only when made
        try:
            importlib.import_module(f"saferl.envs.{module}")
        except ModuleNotFoundError as err:  # a module still being written
            if err.name != f"saferl.envs.{module}":
                raise
