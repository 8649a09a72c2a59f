"""CVaR-CPO (Zhang et al. 2025, CVaR-constrained policy optimisation): the Canary paper's "CVaR-CPO"
baseline (Canary Sec. 6.1), "a trust-region method that enforces the same CVaR surrogate as CPPO,
but estimates it distributionally with a quantile cost critic".

The constraint is CVaR_eps(C) <= rho on the cost return C(tau) = sum_t gamma_c^t c_t, in the
Rockafellar-Uryasev form (Canary eq. 15), CVaR_eps = min_eta eta + E[(C - eta)^+] / eps, on the
augmented state x_t = (s_t, y_t / rho, gamma_c^t) (:class:`saferl.envs.risk.RiskAugmentation`,
surrogate "cvar"), so that (C - eta)^+ is a Markov return.  One update:

1. the quantile cost critic theta_k(x), k = 0..K-1 (:mod:`saferl.core.quantile`, QR-DQN) is fitted
   on the batch to the distribution of the remaining cost Z(x_t) = sum_{k>=t} gamma_c^{k-t} c_k:
   Monte-Carlo targets within the batch's episodes, bootstrapped from its own quantiles at
   x_{T-1} where the rollout cuts an episode (:func:`remaining_cost_targets`);
2. at the episode starts of the batch (y = 0, so Z(x_0) = C(tau)) the pooled quantiles give
   VaR_{1-eps}(C) and CVaR_eps(C) (:func:`saferl.core.quantile.mixture_var_cvar`);
3. the CPO step (Achiam et al. 2017, eq. 10-11, through :class:`saferl.algos.cpo.CPO`) on one
   constraint  CVaR_q / rho <= 1: its value is the critic's CVaR, its gradient (envelope theorem:
   grad CVaR = grad E[(C - eta*)^+] / eps at eta* = VaR) the surrogate of the GAE advantage of the
   excess channel ((y_{t+1} - eta)^+ - (y_t - eta)^+) / gamma_c^t, divided by eps rho
   (:mod:`saferl.algos.risk`);
4. eta for the next rollout (the excess channel's threshold) is the critic's VaR.

Deviations, and what could not be checked: the CVaR-CPO paper's text was not available to us, so
its bounds and any CVaR-specific trust-region terms are not reproduced; this is the Canary
paper's one-line description implemented on the shared CPO solver (line search, recovery step
and critics as :class:`saferl.algos.cpo.CPO`).  The quantile critic's outputs are scaled by rho
(kappa = 1 stays in cost units, :mod:`saferl.core.quantile`) and it takes the raw per-step
cost from the running episode cost of the batch, so the first sample of each environment in a
batch whose episode began in an earlier batch has no target and is left out of the fit, as is
the last sample of an episode the rollout cuts (it would need x_T).  The value critic of the
excess channel sees y / rho but not eta, which jumps to the new VaR estimate every iteration, so
its advantages lag (a state carrying (y - eta) / rho, as in CVaR state augmentations, would fix it).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from saferl.algos.base import register
from saferl.algos.cpo import CPO
from saferl.algos.risk import var_surrogate
from saferl.core import quantile
from saferl.foundation.hparams import declare, integer, real


def remaining_cost_targets(batch, bootstrap, gamma_c):
    """Targets for Z(x_t): ``(atoms (B, K), mask (B,))``.

    Per environment (the batch is time-major, ``rollout_shape = (T, N)``), the raw cost is
    c_t = (y_{t+1} - y_t) / gamma_c^t from the running discounted episode cost y, and
    G_t = c_t + gamma_c (1 - done_t) G_{t+1}; where the episode runs past the rollout, G_{T-1}
    is the bootstrap distribution ``bootstrap`` (N, K), the critic's quantiles at x_{T-1}.  The
    mask drops samples whose c_t is unknown (the batch's first step of an episode that began
    earlier) and the bootstrapped x_{T-1} itself."""
    T, N = batch.rollout_shape
    y_next = batch.episode_discounted_cost[:, 0].reshape(T, N)
    t_ep = batch.timestep.reshape(T, N)
    done = batch.episode_done.reshape(T, N)
    first = t_ep == 0
    y = jnp.where(first, 0.0, jnp.concatenate([jnp.zeros((1, N), y_next.dtype), y_next[:-1]]))
    cost = (y_next - y) / jnp.asarray(gamma_c, jnp.float32) ** t_ep.astype(jnp.float32)
    last = jnp.where(done[-1][:, None], cost[-1][:, None], bootstrap)

    def backward(g_next, x):
        c, d = x
        g = c[:, None] + gamma_c * (1.0 - d.astype(jnp.float32))[:, None] * g_next
        return g, g

    _, head = jax.lax.scan(backward, last, (cost[:-1], done[:-1]), reverse=True)
    atoms = jnp.concatenate([head, last[None]])  # (T, N, K)
    row = jnp.arange(T)[:, None]
    known = first | (row > 0)
    mask = known & ~((row == T - 1) & ~done[-1][None, :])
    return atoms.reshape(T * N, -1), mask.reshape(-1)


@register
@var_surrogate("cvar")
class CVaRCPO(CPO):
    name = "cvar_cpo"
    description = (
        "CVaR-CPO (Zhang et al. 2025): CPO on the CVaR surrogate of a VaR constraint, VaR and CVaR from a "
        "quantile cost critic (Canary Sec. 6.1 baseline)."
    )
    # K quantiles at the midpoints (2k+1)/(2K), fitted for critic_epochs x critic_minibatches Adam steps;
    # kappa of the quantile-Huber loss in cost units
    # (cost_scale: CPO's per_sample, which is also Canary's)
    defaults = declare(
        CPO.defaults,
        quantiles=integer(64, "[1, inf)", "quantiles of the cost-return critic"),
        quantile_lr=real(1e-3, "(0, inf)", "Adam rate of the quantile critic"),
        quantile_kappa=real(1.0, "(0, inf)", "kappa of the quantile Huber loss"),
    )

    @property
    def quantile_critic(self) -> quantile.QuantileCritic:
        c = self.critics
        return quantile.QuantileCritic(c.obs_dim, int(self.hp["quantiles"]), tuple(c.hidden), c.activation)

    def quantile_optimizer(self):
        return quantile.optimizer(self.hp["quantile_lr"], self.hp["max_grad_norm"])

    def init(self, key, constraint):
        agent = super().init(key, constraint)
        params = self.quantile_critic.init(jax.random.fold_in(key, 0x9C))
        rho = jnp.asarray(constraint.limit, jnp.float32)
        extra = {
            **agent.extra,
            "quantile": (params, self.quantile_optimizer().init(params)),
            "var_q": rho,
            "cvar_q": rho,
        }
        return agent.replace(extra=extra)

    # ---- the quantile critic ------------------------------------------------------------------
    def fit_quantiles(self, agent, batch, key):
        """Step 1-2 of the module docstring; VaR / CVaR are kept when the batch has no episode start."""
        critic, (params, opt_state) = self.quantile_critic, agent.extra["quantile"]
        rho = jnp.asarray(agent.constraint.limit, jnp.float32)
        T, N = batch.rollout_shape
        bootstrap = critic.apply(params, batch.obs.reshape(T, N, -1)[-1]) * rho
        atoms, mask = remaining_cost_targets(batch, bootstrap, agent.constraint.gamma_c)
        params, opt_state, loss = quantile.fit(
            critic,
            params,
            opt_state,
            self.quantile_optimizer(),
            batch.obs,
            atoms,
            mask,
            key,
            int(self.hp["critic_epochs"]),
            int(self.hp["critic_minibatches"]),
            float(self.hp["quantile_kappa"]),
            rho,
        )
        starts = batch.timestep == 0
        var, cvar = quantile.mixture_var_cvar(critic.apply(params, batch.obs) * rho, starts, agent.constraint.epsilon)
        found = jnp.any(starts)
        extra = {
            **agent.extra,
            "quantile": (params, opt_state),
            "var_q": jnp.where(found, var, agent.extra["var_q"]),
            "cvar_q": jnp.where(found, cvar, agent.extra["cvar_q"]),
        }
        return agent.replace(extra=extra), {"quantile_loss": loss}

    # ---- the risk hooks (saferl.algos.risk) ----------------------------------------------------
    def risk_terms(self, agent, batch):
        _, limit, advantage, metrics = super().risk_terms(agent, batch)
        cvar = agent.extra["cvar_q"]
        value = cvar / jnp.asarray(agent.constraint.limit, jnp.float32)
        return value, limit, advantage, {**metrics, "cvar": cvar, "cvar_mc": metrics["cvar"]}

    def next_eta(self, agent, batch):
        return agent.extra["var_q"]

    def update(self, agent, batch, key):
        k_quantile, k_rest = jax.random.split(key)
        agent, metrics = self.fit_quantiles(agent, batch, k_quantile)
        agent, rest = super().update(agent, batch, k_rest)
        return agent, {**rest, **metrics}
