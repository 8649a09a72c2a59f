"""A quantile (distributional) critic: QR-DQN's quantile regression (Dabney et al. 2018, "Distributional
Reinforcement Learning with Quantile Regression", AAAI) for the distribution of a return.

* :class:`QuantileCritic` -- an MLP with K outputs theta_0..theta_{K-1}(x), the quantiles of the
  return at the midpoints tau_k = (2k + 1) / (2K) (QR-DQN Lemma 2: the W1-optimal K-atom
  approximation puts atom k at the tau_k-quantile);
* :func:`quantile_huber_loss` -- QR-DQN eq. 9-10 with kappa = 1:
      L_kappa(u)        = u^2 / 2 if |u| <= kappa, else kappa (|u| - kappa / 2)
      rho^kappa_tau(u)  = |tau - 1{u < 0}| L_kappa(u) / kappa,      u = target - prediction
      loss(x)           = sum_k mean_j rho^kappa_{tau_k}(z_j - theta_k(x))
  for target atoms z_1..z_J (a Monte-Carlo return repeated, or a bootstrapped distribution);
* :func:`fit` -- Adam epochs over shuffled minibatches of (obs, target atoms, mask);
* :func:`mixture_var_cvar` -- VaR and CVaR of the mixture of several states' K-atom
  distributions (all atoms pooled, each of mass 1 / (K n)), e.g. of C(tau) over the start states.

The network's outputs are multiplied by a ``scale`` the caller chooses (the cost limit rho for a VaR
constraint), so that its initial outputs, O(1), meet returns of any magnitude; the loss, and kappa,
stay in the units of the return.  (Where kappa is not small against the spread of the return the
minimiser of the quantile-Huber loss moves from the quantiles towards the expectiles, which are
less spread out: kappa = 1 in units of rho would understate the tail.)
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import optax

from saferl.core import risk
from saferl.core.fitting import minibatch_epochs
from saferl.core.networks import OneMLP


def midpoints(num_quantiles: int) -> jax.Array:
    """tau_k = (2k + 1) / (2K), k = 0..K-1 (QR-DQN Lemma 2)."""
    return (2.0 * jnp.arange(num_quantiles, dtype=jnp.float32) + 1.0) / (2.0 * num_quantiles)


@dataclass(frozen=True)
class QuantileCritic(OneMLP):
    """An MLP of the observation with ``num_quantiles`` outputs, the quantiles of a return at :func:`midpoints`."""

    obs_dim: int
    num_quantiles: int  # K
    hidden: tuple[int, ...] = (64, 64)
    activation: str = "tanh"
    init_scheme: str = "orthogonal"

    @property
    def outputs(self) -> int:
        return self.num_quantiles

    def init(self, key):
        return self.mlp.init(key)

    def apply(self, params, obs):
        """(..., K) quantiles at :func:`midpoints`, in the units of the targets it was fitted on."""
        return self.mlp.apply(params, obs)


def huber(u, kappa: float = 1.0):
    """L_kappa(u) (QR-DQN eq. 9)."""
    a = jnp.abs(u)
    return jnp.where(a <= kappa, 0.5 * u**2, kappa * (a - 0.5 * kappa))


def quantile_huber_loss(pred, targets, mask=None, kappa: float = 1.0):
    """QR-DQN eq. 10 averaged over samples: pred (B, K) quantiles at the midpoints, targets (B, J)
    atoms (each of mass 1/J), mask (B,) the samples that count."""
    taus = midpoints(pred.shape[-1])
    u = targets[:, None, :] - pred[:, :, None]  # (B, K, J): target atom j minus quantile k
    weight = jnp.abs(taus[None, :, None] - (u < 0).astype(pred.dtype))
    per_sample = jnp.sum(jnp.mean(weight * huber(u, kappa) / kappa, axis=-1), axis=-1)
    if mask is None:
        return jnp.mean(per_sample)
    return risk.masked_mean(per_sample, mask)


def optimizer(lr: float, max_grad_norm: float = 0.0) -> optax.GradientTransformation:
    parts = [optax.clip_by_global_norm(max_grad_norm)] if max_grad_norm and max_grad_norm > 0 else []
    return optax.chain(*parts, optax.adam(lr, eps=1e-5))


def fit(
    critic: QuantileCritic,
    params,
    opt_state,
    opt,
    obs,
    targets,
    mask,
    key,
    epochs: int,
    minibatches: int,
    kappa: float = 1.0,
    scale=1.0,
):
    """``epochs`` passes of Adam over ``minibatches`` shuffled minibatches of the quantile-Huber
    loss of ``scale * critic.apply`` against ``targets``; returns (params, opt_state, loss of the
    last epoch)."""
    mask = jnp.ones((obs.shape[0],), jnp.float32) if mask is None else mask.astype(jnp.float32)

    def loss_fn(p, o, z, m):
        return quantile_huber_loss(scale * critic.apply(p, o), z, m, kappa)

    return minibatch_epochs(loss_fn, params, opt, opt_state, (obs, targets, mask), key, epochs, minibatches)


def mixture_var_cvar(atoms, mask, epsilon):
    """(VaR_{1-eps}, CVaR_eps) of the equal-weight mixture of the rows of ``atoms`` (n, K) where
    ``mask`` (n,) holds: the lower (1 - eps)-quantile of the pooled atoms, and the mean of the
    eps upper tail through Rockafellar-Uryasev, VaR + E[(Z - VaR)^+] / eps (Canary eq. 15).
    NaN where no row is selected."""
    flat = atoms.reshape(-1)
    flat_mask = jnp.repeat(mask.astype(bool), atoms.shape[-1])
    var = risk.masked_quantile(flat, flat_mask, 1.0 - epsilon)
    return var, risk.cvar_estimate(flat, flat_mask, epsilon, var)
