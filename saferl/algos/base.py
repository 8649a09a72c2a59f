"""The algorithm interface and registry.

An algorithm is a small object built from its hyper-parameters.  It declares

* ``cost_channels(env_cost_channels)`` -- how many cost channels its critics see
  (Canary: the cost and the augmented cost; PPO: none; PPO-Lag: the env's);
* ``wrap_env(env, hparams, constraint)`` -- per-environment wrappers it needs (state
  augmentation, an indicator cost, ...);
* ``channel_gammas()`` -- the discount of each critic channel (reward first);
  ``channel_lambdas()`` and ``channel_ends_at_truncation()`` -- per-channel GAE lambda and
  whether a channel's return ends at the time limit (None: ``gae_lambda`` everywhere, bootstrap);
* ``critic_options(channels)`` -- per-channel critic heads and gains (SCPO's bounded safety critic);
* ``prepare_trajectory(agent, traj)`` -- the reward and cost signals GAE sees (identity by
  default; SCPO reshapes the reward with its safety critic and adds the safety signal);
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

from saferl.core.constraints import Constraint
from saferl.foundation import hparams, struct


@struct.dataclass
class AgentState:
    actor_params: Any
    critic_params: Any
    actor_opt_state: Any
    critic_opt_state: Any
    constraint: Constraint
    extra: dict  # algorithm-specific state: multipliers, counters, ...


def check_at_most_batch(hp: dict, key: str, batch_size: int) -> None:
    """``hparams.KEY`` (a number of minibatches) at most the batch's ``batch_size`` samples, else a one-line error."""
    if hp[key] > batch_size:
        raise ValueError(f"hparams.{key} must be between 1 and num_envs * rollout_steps = {batch_size}, got {hp[key]}")


#: what every on-policy algorithm here declares: the discounts, GAE and the critics' optimiser
COMMON_HPARAMS = hparams.declare(
    gamma=hparams.real(0.99, "(0, 1]", "reward discount"),
    cost_gamma=hparams.real(0.99, "(0, 1]", "discount of the cost critics"),
    gae_lambda=hparams.real(0.95, "[0, 1]", "GAE lambda (every channel)"),
    critic_lr=hparams.real(3e-4, "(0, inf)", "Adam rate of the critics"),
    max_grad_norm=hparams.real(40.0, "[0, inf)", "gradient-norm clip of the Adam steps; 0 = none"),
    critic_l2=hparams.real(
        0.0,
        "[0, inf)",
        "weight of sum(theta^2) over the critics' parameters in their loss "
        "(SafePO's and the C-TRPO authors' 1e-3); 0 = none",
    ),
)


class Algorithm:
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    #: the declared hyper-parameters (:mod:`saferl.foundation.hparams`); ``--set hparams.KEY=VALUE`` changes them
    defaults: ClassVar[dict[str, hparams.Param]] = {}
    #: constraint kinds the algorithm accepts ("none" means it ignores constraints)
    constraint_kinds: ClassVar[tuple[str, ...]] = ("expected",)
    #: config sections the algorithm changes by default (before the environment's and the user's),
    #: e.g. Canary's 3x256 networks
    config_defaults: ClassVar[dict] = {}
    #: per-environment config defaults, ``{env name: {section: value}}`` with sections among
    #: :data:`ENV_DEFAULT_KEYS`: applied over the environment's own ``config_defaults`` and under the
    #: user's config (SCPO's per-task hyper-parameters, its App. G Table 2)
    env_defaults: ClassVar[dict] = {}
    #: how many expected-cost constraints (cost channels with a limit each) it enforces at once
    max_constraints: ClassVar[float] = float("inf")
    #: VaR surrogates it accepts for a "var" constraint (the first is the default)
    risk_surrogates: ClassVar[tuple[str, ...]] = ("cantelli", "indicator", "cvar")
    #: whether the update reads the batch's episode cost estimates (J_c, violation fraction, ...); while
    #: they are unknown (no episode finished yet) the learner holds the step
    #: (:meth:`saferl.training.learner.Learner.learn`). Inherited like any class attribute: the unconstrained PPO and
    #: TRPO set it False, and their constrained subclasses set it True again.
    needs_cost_estimate: ClassVar[bool] = True

    def __init__(self, hparams: dict, actor, critics, constraint_kind: str, surrogate: str = ""):
        self.hp = dict(hparams)
        self.actor = actor
        self.critics = critics
        self.constraint_kind = constraint_kind
        self.surrogate = surrogate

    # ---- declarations -------------------------------------------------------------
    @classmethod
    def resolve_hparams(cls, overrides: dict | None) -> dict:
        """The declared defaults with ``overrides`` checked and applied (:func:`saferl.foundation.hparams.resolve`)."""
        return hparams.resolve(cls.defaults, overrides, cls.name)

    @classmethod
    def check_hparams(cls, hp: dict, batch_size: int) -> None:
        """Checks across hyper-parameters, or against the batch of ``batch_size`` samples (num_envs *
        rollout_steps), that one declaration cannot make: a one-line ``ValueError`` naming the key.  A class that
        adds some calls ``super().check_hparams``, so a family's checks hold in every member."""

    @classmethod
    def cost_channels(cls, env_cost_channels: int) -> int:
        return env_cost_channels

    @classmethod
    def critic_options(cls, num_channels: int) -> dict:
        """Keyword arguments of the critics beyond their sizes (:class:`saferl.core.networks.Critics` ``heads``,
        ``out_gains``) for ``num_channels`` channels, reward first; none by default."""
        return {}

    @classmethod
    def wrap_env(cls, env, hparams: dict, constraint_config: dict):
        """``env`` with the wrappers the algorithm needs for ``hparams`` (resolved) and the resolved constraint
        section (state augmentations, an indicator cost, ...); read before the networks are sized, since a
        wrapper may change the observation and add cost channels.  ``env`` itself by default."""
        return env

    def rollout_env_params(self, agent: "AgentState", params):
        """The environment parameters of the next rollout (risk wrappers read rho and eta here)."""
        return params

    def prepare_trajectory(self, agent: "AgentState", traj):
        """The trajectory whose reward and cost channels the critics and GAE see (called by
        :meth:`saferl.training.learner.Learner.make_batch` before GAE); unchanged by default."""
        return traj

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

    @property
    def num_constraints(self) -> int:
        """m, the constraints the update enforces: one per cost channel of the critics, or the one
        surrogate constraint a VaR constraint becomes (:class:`saferl.algos.risk.RiskConstrained`)."""
        return 1 if getattr(self, "is_risk", False) else self.critics.num_channels - 1

    def cost_and_limit(self, agent: "AgentState", batch) -> tuple[jax.Array, jax.Array]:
        """(J_c, b), each of shape ``(m,)`` (:attr:`num_constraints`): the batch's episode-cost estimate of
        every constraint and the limit it is held to (a scalar limit holds every channel).  The one
        accessor of both families: the first-order methods and :mod:`saferl.algos.second_order`."""
        m = self.num_constraints
        cost = jnp.asarray(batch.episodes["discounted_cost"], jnp.float32).reshape(-1)[:m]
        return cost, jnp.broadcast_to(self.constraint_limit(agent, batch), (m,))

    def risk_levels(self, agent: "AgentState"):
        """(rho, eta) of a VaR constraint -- the episode statistics count violations of rho and
        the CVaR excess over eta (:func:`saferl.core.rollout.episode_means`) -- or None."""
        if agent.constraint.kind != "var":
            return None
        return agent.constraint.limit, agent.extra.get("eta", jnp.zeros((), jnp.float32))

    def channel_gammas(self) -> tuple[float, ...]:
        n = self.critics.num_channels - 1
        return (self.hp["gamma"],) + (self.hp["cost_gamma"],) * n

    def channel_lambdas(self) -> tuple[float, ...] | None:
        """GAE lambda of each critic channel (reward first), or None: ``hparams.gae_lambda`` for every channel."""
        return None

    def channel_value_noise(self):
        """A standard deviation per critic channel (reward first) of white noise added to the critics' values before
        GAE (:meth:`saferl.training.learner.Learner.make_batch`; C-TRPO's cost-noise ablation), or None: no noise."""
        return None

    def channel_ends_at_truncation(self) -> tuple[float, ...] | None:
        """Per critic channel (reward first), 1 where the channel's return ends at the time limit (truncation counts
        as termination, :func:`saferl.core.rollout.gae`), 0 where it bootstraps; None: every channel bootstraps."""
        return None

    # ---- pure functions -----------------------------------------------------------
    def init(self, key: jax.Array, constraint: Constraint) -> AgentState:
        limit = jnp.asarray(constraint.limit)
        if limit.ndim > 0 and limit.shape != (self.num_constraints,):
            raise ValueError(
                f"{self.name}: constraint.limit has {limit.shape[0]} entries but the environment has "
                f"{self.num_constraints} cost channel(s)"
            )
        if self.num_constraints > self.max_constraints:
            raise ValueError(
                f"{self.name} enforces at most {self.max_constraints} constraints; the environment has "
                f"{self.num_constraints} cost channels"
            )
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
        return _adam(self.hp["actor_lr"], self.hp["max_grad_norm"])

    def critic_objective(self, params, obs, returns) -> jax.Array:
        """What the critics' Adam steps minimise: the squared error (:meth:`Critics.loss`) plus ``critic_l2``
        times the squared norm of the networks' parameters (SafePO's ``use_critic_norm``)."""
        return self.critics.loss(params, obs, returns) + self.hp["critic_l2"] * self.critics.weight_penalty(params)

    def critic_optimizer(self) -> optax.GradientTransformation:
        return _adam(self.hp["critic_lr"], self.hp["max_grad_norm"])

    def update(self, agent: AgentState, batch, key: jax.Array):
        raise NotImplementedError


#: the config sections an algorithm's ``env_defaults`` may set
ENV_DEFAULT_KEYS = ("num_envs", "rollout_steps", "reset_pool", "total_steps", "network", "hparams")


def channel_metrics(name: str, values) -> dict:
    """One scalar metric per constraint, named as the ``episode_cost_i`` columns: ``name`` for the first
    (a scalar ``values`` is the one), ``name_i`` for constraint i >= 1."""
    values = jnp.asarray(values)
    if values.ndim == 0:
        return {name: values}
    return {(f"{name}_{i}" if i else name): values[i] for i in range(values.shape[0])}


def _adam(lr: float, max_grad_norm: float) -> optax.GradientTransformation:
    """Adam at a constant rate (a schedule scales its steps: :meth:`saferl.algos.ppo.PPO.lr_factor`) after the
    gradient-norm clip."""
    parts = [optax.clip_by_global_norm(max_grad_norm)] if max_grad_norm and max_grad_norm > 0 else []
    return optax.chain(*parts, optax.adam(lr, eps=1e-5))


def normalize(x):
    """Advantages standardised to mean 0 and standard deviation 1 (the reward advantage of every method)."""
    return (x - jnp.mean(x)) / (jnp.std(x) + 1e-8)


# --------------------------------------------------------------------------- registry

_ALGOS: dict[str, type[Algorithm]] = {}


def register(cls: type[Algorithm]) -> type[Algorithm]:
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    _ALGOS[cls.name] = cls
    return cls


def get(name: str) -> type[Algorithm]:
    key = name.lower().replace("-", "_")
    if key not in _ALGOS:
        raise ValueError(f"unknown algorithm {name!r}; known algorithms: {', '.join(sorted(_ALGOS))}")
    return _ALGOS[key]


def registered() -> dict[str, str]:
    return {name: cls.description for name, cls in sorted(_ALGOS.items())}
