"""Actor and critic networks as plain pytrees of arrays (no framework).

* :class:`MLP` -- ``init(key) -> params``, ``apply(params, x)``; orthogonal init, or PyTorch's ``nn.Linear``
  default (:data:`INIT_SCHEMES`).
* :class:`GaussianActor` -- mean from an MLP, state-independent log-std parameter.
* :class:`CategoricalActor` -- logits from an MLP.
* :class:`Critics` -- one value MLP per channel (reward and each cost channel),
  parameters stacked on a leading axis and evaluated with ``jax.vmap``, so
  Canary's three critics cost one fused evaluation.  A channel may have a bounded
  output head and its own last-layer gain (SCPO's safety critic: clamp(tanh(x), 0, 1),
  gain 0.1, a pessimistic V^c ~ 0 at initialisation).

Distributions are represented by their parameters (a dict), with pure
functions for log-probabilities, entropy, sampling and KL, so trust-region code
can differentiate through them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from saferl.foundation.spaces import Discrete

ACTIVATIONS = {"tanh": jnp.tanh, "relu": jax.nn.relu, "elu": jax.nn.elu, "gelu": jax.nn.gelu, "silu": jax.nn.silu}


#: weight initialisations of every layer (``network.init``): ``"orthogonal"`` (saferl's default, CleanRL's and
#: SB3's: orthogonal with gain sqrt(2) on hidden layers and ``out_scale`` on the last, zero biases) and
#: ``"torch_linear"`` (PyTorch's ``nn.Linear`` default, ``kaiming_uniform_(a=sqrt(5))``: weights and biases
#: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) on every layer, ``out_scale`` ignored -- the networks of SafePO and of the
#: C-TRPO authors' code, milosen/ctrpo ``algorithms/baselines/common/model.py``)
INIT_SCHEMES = ("orthogonal", "torch_linear")


def _check_activation(name: str) -> None:
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; allowed: {', '.join(ACTIVATIONS)}")


@dataclass(frozen=True)
class MLP:
    in_dim: int
    hidden: tuple[int, ...]
    out_dim: int
    activation: str = "tanh"
    out_scale: float = 1.0
    init_scheme: str = "orthogonal"  # one of INIT_SCHEMES

    def init(self, key):
        _check_activation(self.activation)
        if self.init_scheme not in INIT_SCHEMES:
            raise ValueError(f"unknown init scheme {self.init_scheme!r}; allowed: {', '.join(INIT_SCHEMES)}")
        sizes = (self.in_dim, *self.hidden, self.out_dim)
        keys = jax.random.split(key, len(sizes) - 1)
        layers = []
        for i, (k, n_in, n_out) in enumerate(zip(keys, sizes[:-1], sizes[1:])):
            if self.init_scheme == "torch_linear":
                bound = 1.0 / np.sqrt(n_in)
                kw, kb = jax.random.split(k)
                layers.append(
                    {
                        "w": jax.random.uniform(kw, (n_in, n_out), jnp.float32, -bound, bound),
                        "b": jax.random.uniform(kb, (n_out,), jnp.float32, -bound, bound),
                    }
                )
                continue
            gain = self.out_scale if i == len(sizes) - 2 else np.sqrt(2.0)
            w = jax.nn.initializers.orthogonal(gain)(k, (n_in, n_out), jnp.float32)
            layers.append({"w": w, "b": jnp.zeros((n_out,), jnp.float32)})
        return layers

    def apply(self, params, x):
        act = ACTIVATIONS[self.activation]
        for layer in params[:-1]:
            x = act(x @ layer["w"] + layer["b"])
        return x @ params[-1]["w"] + params[-1]["b"]


# --------------------------------------------------------------------------- actors

_LOG_2PI = float(np.log(2.0 * np.pi))


class OneMLP:
    """A network that is one :class:`MLP` of the observation, for a dataclass with the fields ``obs_dim``,
    ``hidden``, ``activation`` and ``init_scheme``: the subclass names the MLP's output size (:attr:`outputs`)
    and the orthogonal-init gain of its last layer (:attr:`out_scale`)."""

    #: the orthogonal-init gain of the last layer (:class:`MLP` ``out_scale``)
    out_scale: ClassVar[float] = 1.0

    @property
    def outputs(self) -> int:
        raise NotImplementedError

    @property
    def mlp(self) -> MLP:
        return MLP(
            self.obs_dim,
            tuple(self.hidden),
            self.outputs,
            self.activation,
            out_scale=self.out_scale,
            init_scheme=self.init_scheme,
        )


class _Policy(OneMLP):
    """An actor: a :class:`OneMLP` whose last layer has the orthogonal-init gain 0.01 (small initial means or
    logits), with continuous actions unless :attr:`discrete`."""

    #: whether the actions are indices of a ``Discrete`` space (:class:`CategoricalActor`)
    discrete: ClassVar[bool] = False
    out_scale: ClassVar[float] = 0.01


@dataclass(frozen=True)
class GaussianActor(_Policy):
    """A diagonal Gaussian policy: the mean from an MLP (last-layer gain 0.01), a state-independent log-std
    (parameters ``{"mean": MLP layers, "log_std": (action_dim,)}``, the log-std starting at ``init_log_std``).
    With ``fixed_std`` the log-std is not learned (no gradient flows into it; the trainer sets it each iteration:
    ``network.action_std_anneal``, :meth:`saferl.training.learner.Learner.scheduled_actor`)."""

    obs_dim: int
    action_dim: int
    hidden: tuple[int, ...] = (64, 64)
    activation: str = "tanh"
    init_log_std: float = -0.5
    init_scheme: str = "orthogonal"
    fixed_std: bool = False

    @property
    def outputs(self) -> int:
        return self.action_dim

    def init(self, key):
        return {"mean": self.mlp.init(key), "log_std": jnp.full((self.action_dim,), self.init_log_std, jnp.float32)}

    def distribution(self, params, obs):
        mean = self.mlp.apply(params["mean"], obs)
        log_std = jax.lax.stop_gradient(params["log_std"]) if self.fixed_std else params["log_std"]
        return {"mean": mean, "log_std": jnp.broadcast_to(log_std, mean.shape)}

    @staticmethod
    def sample(dist, key):
        return dist["mean"] + jnp.exp(dist["log_std"]) * jax.random.normal(key, dist["mean"].shape)

    @staticmethod
    def mode(dist):
        return dist["mean"]

    @staticmethod
    def log_prob(dist, action):
        z = (action - dist["mean"]) * jnp.exp(-dist["log_std"])
        return jnp.sum(-0.5 * z**2 - dist["log_std"] - 0.5 * _LOG_2PI, axis=-1)

    @staticmethod
    def entropy(dist):
        return jnp.sum(dist["log_std"] + 0.5 * (1.0 + _LOG_2PI), axis=-1)

    @staticmethod
    def kl(p, q):
        """KL(p || q) for diagonal Gaussians, summed over action dimensions."""
        var_p, var_q = jnp.exp(2 * p["log_std"]), jnp.exp(2 * q["log_std"])
        log_ratio = q["log_std"] - p["log_std"]
        return jnp.sum(log_ratio + (var_p + (p["mean"] - q["mean"]) ** 2) / (2 * var_q) - 0.5, axis=-1)


@dataclass(frozen=True)
class CategoricalActor(_Policy):
    """A categorical policy over ``num_actions`` actions: the logits from an MLP (last-layer gain 0.01)."""

    obs_dim: int
    num_actions: int
    hidden: tuple[int, ...] = (64, 64)
    activation: str = "tanh"
    init_scheme: str = "orthogonal"
    discrete: ClassVar[bool] = True

    @property
    def outputs(self) -> int:
        return self.num_actions

    def init(self, key):
        return {"logits": self.mlp.init(key)}

    def distribution(self, params, obs):
        return {"logits": jax.nn.log_softmax(self.mlp.apply(params["logits"], obs))}

    @staticmethod
    def sample(dist, key):
        return jax.random.categorical(key, dist["logits"])

    @staticmethod
    def mode(dist):
        return jnp.argmax(dist["logits"], axis=-1)

    @staticmethod
    def log_prob(dist, action):
        return jnp.take_along_axis(dist["logits"], action[..., None].astype(jnp.int32), axis=-1)[..., 0]

    @staticmethod
    def entropy(dist):
        return -jnp.sum(jnp.exp(dist["logits"]) * dist["logits"], axis=-1)

    @staticmethod
    def kl(p, q):
        return jnp.sum(jnp.exp(p["logits"]) * (p["logits"] - q["logits"]), axis=-1)


# --------------------------------------------------------------------------- critics

#: output heads a critic channel may have (:attr:`Critics.heads`)
HEADS = ("linear", "unit")


@dataclass(frozen=True)
class Critics(OneMLP):
    """``num_channels`` independent value networks; ``apply`` returns ``(..., num_channels)``.

    With ``normalize=True`` each channel's output is PopArt-normalised (van Hasselt et al.
    2016): the network predicts (V - m_k) / s_k with running mean m_k and scale s_k of the
    channel's return targets (:meth:`update_normalizer`, called once per batch), the last
    layer is rescaled whenever (m, s) move so that V is unchanged, and :meth:`loss` is the
    squared error in normalised units.  Channels of very different scales (a reward of ~1, a
    squared cost return of ~10^4 -- Canary's c~) then train equally well with one Adam.
    """

    obs_dim: int
    num_channels: int
    hidden: tuple[int, ...] = (64, 64)
    activation: str = "tanh"
    normalize: bool = False
    normalizer_rate: float = 0.1  # weight of each new batch in the running moments
    #: per channel, ``"linear"`` (the value as the MLP gives it) or ``"unit"`` (clamp(tanh(v), 0, 1), applied to
    #: the value after any PopArt de-normalisation: a probability); empty = every channel linear
    heads: tuple[str, ...] = ()
    #: per channel, the orthogonal-init gain of the last layer (1.0 when empty; with ``"torch_linear"`` a factor
    #: on the last layer's uniform weights)
    out_gains: tuple[float, ...] = ()
    init_scheme: str = "orthogonal"

    def __post_init__(self):
        for name, given in (("heads", self.heads), ("out_gains", self.out_gains)):
            if given and len(given) != self.num_channels:
                raise ValueError(f"Critics.{name} has {len(given)} entries for {self.num_channels} channels")
        unknown = sorted(set(self.heads) - set(HEADS))
        if unknown:
            raise ValueError(f"unknown critic head {unknown[0]!r}; allowed: {', '.join(HEADS)}")

    @property
    def outputs(self) -> int:
        return 1  # per channel: the channels are separate MLPs, vmapped

    def init(self, key):
        net = jax.vmap(self.mlp.init)(jax.random.split(key, self.num_channels))
        if self.out_gains:  # orthogonal(g) = g * orthogonal(1): rescale each channel's last layer
            gains = jnp.asarray(self.out_gains, jnp.float32)[:, None, None]
            net = [*net[:-1], {**net[-1], "w": net[-1]["w"] * gains}]
        if not self.normalize:
            return net
        k = self.num_channels
        return {
            "net": net,
            "mean": jnp.zeros((k,), jnp.float32),
            "second": jnp.ones((k,), jnp.float32),
            "count": jnp.zeros((), jnp.float32),
        }

    def _raw(self, net, obs):
        values = jax.vmap(lambda p: self.mlp.apply(p, obs)[..., 0])(net)  # (channels, ...)
        return jnp.moveaxis(values, 0, -1)

    @staticmethod
    def _scale(params):
        return jnp.sqrt(jnp.maximum(params["second"] - params["mean"] ** 2, 1e-6))

    def apply(self, params, obs):
        if not self.normalize:
            return self._heads(self._raw(params, obs))
        mean, scale = jax.lax.stop_gradient(params["mean"]), jax.lax.stop_gradient(self._scale(params))
        return self._heads(self._raw(params["net"], obs) * scale + mean)

    def _heads(self, values):
        """The channels' output heads on values ``(..., channels)`` (identity unless a channel is ``"unit"``)."""
        if "unit" not in self.heads:
            return values
        unit = jnp.asarray([head == "unit" for head in self.heads])
        return jnp.where(unit, jnp.clip(jnp.tanh(values), 0.0, 1.0), values)

    def loss(self, params, obs, returns):
        """Mean over samples of the per-channel squared errors, summed over channels."""
        error = self.apply(params, obs) - returns
        if self.normalize:
            error = error / jax.lax.stop_gradient(self._scale(params))
        return jnp.mean(jnp.sum(error**2, axis=-1))

    def weight_penalty(self, params) -> jax.Array:
        """sum(theta^2) over every network's weights and biases (not PopArt's running moments)."""
        net = params["net"] if self.normalize else params
        return sum(jnp.sum(leaf**2) for leaf in jax.tree.leaves(net))

    def update_normalizer(self, params, returns):
        """Move (m, s) towards the moments of ``returns`` (B, channels), preserving V (PopArt)."""
        if not self.normalize:
            return params
        flat = returns.reshape(-1, self.num_channels)
        rate = jnp.where(params["count"] > 0, self.normalizer_rate, 1.0)
        mean = (1 - rate) * params["mean"] + rate * jnp.mean(flat, axis=0)
        second = (1 - rate) * params["second"] + rate * jnp.mean(flat**2, axis=0)
        new = {**params, "mean": mean, "second": second, "count": params["count"] + 1}
        old_scale, new_scale = self._scale(params), self._scale(new)
        last = params["net"][-1]  # w (channels, hidden, 1), b (channels, 1)
        ratio = (old_scale / new_scale)[:, None]
        last = {
            "w": last["w"] * ratio[:, :, None],
            "b": (last["b"] * old_scale[:, None] + params["mean"][:, None] - mean[:, None]) / new_scale[:, None],
        }
        return {**new, "net": [*params["net"][:-1], last]}


def make_actor(
    obs_dim: int,
    action_space,
    hidden,
    activation: str,
    init_log_std: float = -0.5,
    init_scheme: str = "orthogonal",
    fixed_std: bool = False,
):
    _check_activation(activation)
    if isinstance(action_space, Discrete):
        if fixed_std:
            raise ValueError("a fixed action std (network.action_std_anneal) needs a continuous action space")
        return CategoricalActor(obs_dim, action_space.n, tuple(hidden), activation, init_scheme=init_scheme)
    return GaussianActor(
        obs_dim,
        action_space.shape[0],
        tuple(hidden),
        activation,
        init_log_std,
        init_scheme=init_scheme,
        fixed_std=fixed_std,
    )
