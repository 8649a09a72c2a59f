"""The algorithm interface and registry.

An algorithm is a small object built from its hyper-parameters.  It declares

* ``cost_channels(env_cost_channels)`` -- how many cost channels its critics see
  (Canary: the cost and the augmented cost; PPO: none; PPO-Lag: the env's);
* ``wrap_env(env, constraint)`` -- per-environment wrappers it needs (state
  augmentation, an indicator cost, ...);
* ``channel_gammas()`` -- the discount of each critic channel (reward first);
* ``init(key, constraint) -> AgentState`` and
  ``update(agent, batch, key) -> (agent, metrics)``, pure and jittable.

Hyper-parameters are static (they shape the compiled program); the numbers
users sweep -- cost limit, epsilon, beta -- live in ``AgentState.constraint`` and
``AgentState.extra`` as traced arrays.
"""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import optax

from saferl import struct
from saferl.core.constraints import Constraint


@struct.dataclass
class AgentState:
    actor_params: Any
    critic_params: Any
    actor_opt_state: Any
    critic_opt_state: Any
    constraint: Constraint
    extra: dict  # algorithm-specific state: multipliers, counters, ...


class Algorithm:
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    #: the hyper-parameters and their defaults; ``--set hparams.KEY=VALUE`` may change them
    defaults: ClassVar[dict] = {}
    #: constraint kinds the algorithm accepts ("none" means it ignores constraints)
    constraint_kinds: ClassVar[tuple[str, ...]] = ("expected",)
    #: config sections the algorithm changes by default (before the environment's and the user's),
    #: e.g. Canary's 3x256 networks
    config_defaults: ClassVar[dict] = {}
    #: VaR surrogates it accepts for a "var" constraint (the first is the default)
    risk_surrogates: ClassVar[tuple[str, ...]] = ("cantelli", "indicator", "cvar")

    def __init__(self, hparams: dict, actor, critics, constraint_kind: str, surrogate: str = ""):
        self.hp = dict(hparams)
        self.actor = actor
        self.critics = critics
        self.constraint_kind = constraint_kind
        self.surrogate = surrogate

    # ---- declarations -------------------------------------------------------------
    @classmethod
    def resolve_hparams(cls, overrides: dict | None) -> dict:
        hp = dict(cls.defaults)
        for key, value in (overrides or {}).items():
            if key not in hp:
                raise ValueError(
                    f"unknown hyper-parameter {key!r} for {cls.name}; allowed: {', '.join(sorted(hp))}"
                )
            default = hp[key]
            if isinstance(default, bool):
                if not isinstance(value, bool):
                    raise ValueError(f"hparams.{key} must be true or false, got {value!r}")
            elif isinstance(default, (int, float)) and not isinstance(default, bool):
                if not isinstance(value, (int, float)) or isinstance(value, bool):
                    raise ValueError(f"hparams.{key} must be a number, got {value!r}")
                value = type(default)(value) if isinstance(default, float) or float(value).is_integer() else value
            hp[key] = value
        return hp

    @classmethod
    def cost_channels(cls, env_cost_channels: int) -> int:
        return env_cost_channels

    def wrap_env(self, env, constraint_config: dict):
        return env

    def rollout_env_params(self, agent: "AgentState", params):
        """The environment parameters of the next rollout (risk wrappers read rho and eta here)."""
        return params

    def prepare_batch(self, agent: "AgentState", batch):
        """``(agent, batch, metrics)``: the batch the update optimises (risk surrogates rewrite
        the cost advantages and estimates here; see :mod:`saferl.algos.risk`)."""
        return agent, batch, {}

    def constraint_limit(self, agent: "AgentState", batch) -> jax.Array:
        """The limit the batch's cost estimate is compared with (a VaR surrogate's, or the config's)."""
        episodes = batch.episodes or {}
        if "constraint_limit" in episodes:
            return episodes["constraint_limit"]
        return jnp.asarray(agent.constraint.limit, jnp.float32)

    def risk_levels(self, agent: "AgentState"):
        """(rho, eta) of a VaR constraint -- the episode statistics count violations of rho and
        the CVaR excess over eta (:func:`saferl.core.rollout.episode_means`) -- or None."""
        if agent.constraint.kind != "var":
            return None
        return agent.constraint.limit, agent.extra.get("eta", jnp.zeros((), jnp.float32))

    def channel_gammas(self) -> tuple[float, ...]:
        n = self.critics.num_channels - 1
        return (self.hp["gamma"],) + (self.hp.get("cost_gamma", self.hp["gamma"]),) * n

    # ---- pure functions -----------------------------------------------------------
    def init(self, key: jax.Array, constraint: Constraint) -> AgentState:
        k_actor, k_critic = jax.random.split(key)
        actor_params = self.actor.init(k_actor)
        critic_params = self.critics.init(k_critic)
        return AgentState(
            actor_params=actor_params,
            critic_params=critic_params,
            actor_opt_state=self.actor_optimizer().init(actor_params),
            critic_opt_state=self.critic_optimizer().init(critic_params),
            constraint=constraint,
            extra=self.init_extra(constraint),
        )

    def init_extra(self, constraint: Constraint) -> dict:
        return {}

    def actor_optimizer(self) -> optax.GradientTransformation:
        return _adam(self.hp["actor_lr"], self.hp.get("max_grad_norm", 0.0), self.hp.get("lr_schedule", "constant"),
                     self.hp.get("lr_decay_steps", 0))

    def critic_optimizer(self) -> optax.GradientTransformation:
        return _adam(self.hp["critic_lr"], self.hp.get("max_grad_norm", 0.0), "constant", 0)

    def update(self, agent: AgentState, batch, key: jax.Array):
        raise NotImplementedError

    def metrics_names(self) -> tuple[str, ...]:
        """Names of the scalar metrics ``update`` returns (columns of progress.csv)."""
        return ()


def _adam(lr: float, max_grad_norm: float, schedule: str, decay_steps: int) -> optax.GradientTransformation:
    if schedule == "constant":
        rate = lr
    elif schedule == "linear":
        rate = optax.linear_schedule(lr, 0.0, max(int(decay_steps), 1))
    else:
        raise ValueError(f"lr_schedule must be 'constant' or 'linear', got {schedule!r}")
    parts = [optax.clip_by_global_norm(max_grad_norm)] if max_grad_norm and max_grad_norm > 0 else []
    return optax.chain(*parts, optax.adam(rate, eps=1e-5))


def masked_mean(x, mask):
    return jnp.sum(x * mask) / jnp.maximum(jnp.sum(mask), 1.0)


# --------------------------------------------------------------------------- registry

_ALGOS: dict[str, type[Algorithm]] = {}
_MODULES = ("ppo", "ppo_lag", "trpo", "trpo_lag", "cpo", "pcpo", "ctrpo", "cppo_pid", "canary", "cpo_var", "cppo",
            "cvar_cpo", "scpo", "focops", "cup", "ipo", "p3o", "pdo")


def register(cls: type[Algorithm]) -> type[Algorithm]:
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    _ALGOS[cls.name] = cls
    return cls


def _import_all() -> None:
    import importlib

    for module in _MODULES:
        try:
            importlib.import_module(f"saferl.algos.{module}")
        except ModuleNotFoundError as err:
            if err.name != f"saferl.algos.{module}":
                raise


def get(name: str) -> type[Algorithm]:
    _import_all()
    key = name.lower().replace("-", "_")
    if key not in _ALGOS:
        raise ValueError(f"unknown algorithm {name!r}; known algorithms: {', '.join(sorted(_ALGOS))}")
    return _ALGOS[key]


def registered() -> dict[str, str]:
    _import_all()
    return {name: cls.description for name, cls in sorted(_ALGOS.items())}
