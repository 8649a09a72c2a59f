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

import copy
from typing import Any, Callable, ClassVar, NamedTuple

import jax
import jax.numpy as jnp

from saferl.foundation import struct

# re-exported: environments import them from here
from saferl.foundation.spaces import Box, Discrete, Space  # noqa: F401


@struct.dataclass
class EnvParams:
    """The base of every environment's parameters: what they all carry.

    ``max_steps`` is the time limit (``truncated = time >= max_steps``).  It is keyword-only,
    so subclasses keep their own positional fields and defaults, and a pytree leaf, so
    parameters may differ per environment under ``vmap``; an environment whose compiled
    code depends on it declares it again with ``static=True`` (``ToyReachParams``).  Each
    environment redeclares it with its own default.
    """

    max_steps: int = struct.field(default=1000, kw_only=True)


class Environment:
    """Base class of the functional CMDP API.  Subclasses implement the four methods below."""

    #: one-line description shown by ``saferl list``
    description: str = ""
    #: shape of the cost signal: ``()`` for one constraint, ``(m,)`` for ``m`` channels
    cost_shape: tuple[int, ...] = ()
    #: training defaults of a run on this environment, applied over the global ones before the
    #: user's config; keys among :data:`CONFIG_DEFAULT_KEYS` (read by :func:`config_defaults`)
    config_defaults: ClassVar[dict] = {}
    #: the numbers of a VaR constraint on this environment; keys among :data:`RISK_DEFAULT_KEYS`
    #: (read by :func:`risk_defaults`)
    risk_defaults: ClassVar[dict] = {}
    #: whether the trainer clips a continuous action to the action box before this environment
    #: (:class:`saferl.envs.wrappers.ClipAction`, as Gymnasium's ``ClipAction`` and most harnesses do).  False for a
    #: port whose paper's harness passed the policy's sample unclipped and whose reward reads it (the velocity
    #: tasks' control cost, :mod:`saferl.envs.velocity.locomotion`): such an environment takes any real action and
    #: clamps it for its physics itself, as the original does.
    clip_actions: ClassVar[bool] = True
    #: the dataclass of the environment's parameters, whose defaults :meth:`default_params` returns (None: the
    #: environment implements :meth:`default_params` itself)
    params_class: ClassVar[type | None] = None

    def default_params(self) -> Any:
        if self.params_class is None:
            raise NotImplementedError
        return self.params_class()

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

    @property
    def clip_actions(self) -> bool:  # type: ignore[override]
        return self.env.clip_actions

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
#
# An environment module registers its factories with ``@register``; saferl/envs/__init__.py
# imports every environment module by name, so adding an environment is one module plus one
# import line there.

#: keys an environment's ``config_defaults`` may set
CONFIG_DEFAULT_KEYS = ("num_envs", "rollout_steps", "reset_pool", "total_steps", "constraint")
#: keys an environment's ``risk_defaults`` may set
RISK_DEFAULT_KEYS = ("rho", "epsilon", "gamma_c")


class _Entry(NamedTuple):
    factory: Callable[..., Environment]
    description: str
    config_defaults: dict
    risk_defaults: dict


_REGISTRY: dict[str, _Entry] = {}


def _checked(name: str, what: str, defaults: Any, allowed: tuple[str, ...]) -> dict:
    if not isinstance(defaults, dict):
        raise TypeError(f"environment {name!r}: {what} must be a dict, got {type(defaults).__name__}")
    unknown = sorted(set(defaults) - set(allowed))
    if unknown:
        raise ValueError(f"environment {name!r}: unknown {what} key {unknown[0]!r}; allowed: {', '.join(allowed)}")
    return copy.deepcopy(defaults)


def register(name: str, description: str | None = None):
    """Class/function decorator adding an environment factory to the registry.

    ``description`` defaults to the factory's ``description``.  The factory's
    ``config_defaults`` and ``risk_defaults`` (class attributes of an :class:`Environment`;
    none for a plain function) are stored here, so :func:`config_defaults` and
    :func:`risk_defaults` answer without building the environment.
    """

    def deco(factory):
        if name in _REGISTRY:
            raise ValueError(f"environment {name!r} is registered twice")
        desc = description if description is not None else getattr(factory, "description", "")
        _REGISTRY[name] = _Entry(
            factory,
            desc,
            _checked(name, "config_defaults", getattr(factory, "config_defaults", {}), CONFIG_DEFAULT_KEYS),
            _checked(name, "risk_defaults", getattr(factory, "risk_defaults", {}), RISK_DEFAULT_KEYS),
        )
        return factory

    return deco


def _entry(name: str) -> _Entry:
    if name not in _REGISTRY:
        known = ", ".join(sorted(_REGISTRY))
        raise ValueError(f"unknown environment {name!r}; known environments: {known}")
    return _REGISTRY[name]


def make(name: str, **kwargs) -> Environment:
    """Build a registered environment by name, e.g. ``make('PointGoal1')``."""
    return _entry(name).factory(**kwargs)


def registered() -> dict[str, str]:
    """``{name: one-line description}`` of every registered environment."""
    return {name: entry.description for name, entry in sorted(_REGISTRY.items())}


def config_defaults(name: str) -> dict:
    """A copy of the registered environment's training defaults (``Environment.config_defaults``),
    e.g. ``{"num_envs": 16, "rollout_steps": 128, ...}``; the environment is not built."""
    return copy.deepcopy(_entry(name).config_defaults)


def risk_defaults(name: str) -> dict:
    """A copy of the registered environment's VaR-constraint numbers (``Environment.risk_defaults``:
    rho, epsilon, gamma_c); the environment is not built."""
    return copy.deepcopy(_entry(name).risk_defaults)


def make_env_params(env, overrides: dict):
    """``env``'s default parameters with ``overrides`` (the config's ``env_params``), each checked against the
    field it replaces: a one-line ValueError names an unknown field or a value of the wrong type or shape."""
    params = env.default_params()
    if not overrides:
        return params
    names = {f for f in getattr(params, "__dataclass_fields__", {})}
    changes = {}
    for key, value in overrides.items():
        if key not in names:
            raise ValueError(f"unknown env_params.{key} for {env.name}; allowed: {', '.join(sorted(names))}")
        old = getattr(params, key)
        if isinstance(old, (int, float, bool, str, tuple)):
            try:
                changes[key] = type(old)(value) if not isinstance(old, tuple) else tuple(value)
            except (TypeError, ValueError):
                raise ValueError(f"env_params.{key} must be a {type(old).__name__}, got {value!r}") from None
        else:
            try:
                new = jnp.asarray(value, dtype=jnp.asarray(old).dtype)
            except (TypeError, ValueError):
                raise ValueError(f"env_params.{key} must be a number or array, got {value!r}") from None
            if new.shape != jnp.shape(old):
                raise ValueError(f"env_params.{key} must have shape {jnp.shape(old)}, got {new.shape}")
            changes[key] = new
    return params.replace(**changes)
