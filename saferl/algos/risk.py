"""VaR constraints for any constrained algorithm: the mixin that turns a surrogate into a
cost estimate, a limit and one cost advantage.

With a ``var`` constraint (``constraint.type: var``) the environment is wrapped in
:class:`saferl.envs.risk.RiskAugmentation` (state (s, y / rho, gamma_c^t), the surrogate's cost
channels), and before every update :meth:`RiskConstrained.prepare_batch` rewrites the batch
so that the algorithm sees one ordinary constraint "J <= limit" with a cost advantage whose
surrogate linearises J:

================  ==========================================  =======  ============================
surrogate         J (Monte-Carlo, the batch's episodes)        limit    cost advantage
================  ==========================================  =======  ============================
cantelli          1 + J_C / rho^2 (eq. 28, 36)                 1        (w_c A_c + w~ A_c~) / rho^2 (eq. 37)
cantelli, mu>=rho  mu / rho  (recovery, eq. 34)                1        A_c / rho
indicator         P(C >= rho) (eq. 14)                        epsilon  A_I
cvar              (eta + E[(C - eta)^+] / eps) / rho (eq. 15)  1        A_cvar / (eps rho)
================  ==========================================  =======  ============================

1 + J_C / rho^2 = (beta sigma^2 + rho^2 - (rho - mu)^2) / rho^2 >= 0 while mu < rho, so the
Cantelli form is an ordinary "cost <= positive limit" that CPO, PCPO, C-TRPO (whose barrier
needs a positive margin) and the Lagrangian methods all accept.  Dividing by rho^2 only
rescales the constraint (the CPO step is invariant to it) and keeps Lagrange multipliers O(1).

The expected cost surrogate of a VaR constraint is written per episode (Canary's and every
other VaR method's): J(pi) - J(pi_k) ~ E_tau[sum_t gamma_c^t ratio_t A_t], which equals the
occupancy form 1/(1 - gamma_c) E_{d^c}[ratio A] for gamma_c < 1 and stays finite for gamma_c = 1
(:func:`episode_cost_weights`; the critics of the risk channels discount by the constraint's
gamma_c, whatever ``hparams.cost_gamma`` says).

eta (CVaR) is traced state in ``agent.extra["eta"]``; by default it is set after each batch
to the empirical (1 - eps)-quantile of the episode costs (the minimiser of the empirical
Rockafellar-Uryasev objective); CPPO and CVaR-CPO replace :meth:`RiskConstrained.next_eta`.
"""

from __future__ import annotations

from typing import ClassVar

import jax.numpy as jnp

from saferl.algos.cantelli_theory import floor_metrics
from saferl.core import constraints, risk
from saferl.envs.risk import RiskAugmentation


def episode_cost_weights(timestep, gamma_c):
    """gamma_c^t per sample.  With the mean episode length L as scale, L * mean(gamma_c^t ratio A)
    estimates E_tau[sum_t gamma_c^t ratio_t A_t], the per-episode form of the cost surrogate,
    which equals the occupancy form 1/(1 - gamma_c) E_{d^c}[ratio A] (Canary eq. 9, 29) for
    gamma_c < 1 and stays finite at gamma_c = 1."""
    return jnp.asarray(gamma_c, jnp.float32) ** timestep.astype(jnp.float32)


def var_surrogate(surrogate: str):
    """Class decorator of an algorithm made for one VaR surrogate (Canary's baselines): it takes only a ``var``
    constraint, only ``surrogate``, and its runs default to that constraint (``config_defaults["constraint"]``,
    added to the class's own ``config_defaults``)."""

    def declare(cls):
        cls.constraint_kinds = ("var",)
        cls.risk_surrogates = (surrogate,)
        cls.config_defaults = {
            **cls.__dict__.get("config_defaults", {}),
            "constraint": {"type": "var", "surrogate": surrogate},
        }
        return cls

    return declare


class RiskConstrained:
    constraint_kinds = ("expected", "var")
    #: True for an algorithm that takes a VaR constraint but optimises without it (TRPO): no rewrite then
    ignores_constraint: ClassVar[bool] = False

    @property
    def is_risk(self) -> bool:
        return self.constraint_kind == "var" and not self.ignores_constraint

    # ---- declarations ----------------------------------------------------------------------
    @classmethod
    def wrap_env(cls, env, hparams, constraint_config):
        env = super().wrap_env(env, hparams, constraint_config)
        constraint = constraints.from_config(constraint_config)
        if constraint.kind != "var" or cls.ignores_constraint:
            return env
        return RiskAugmentation(
            env,
            constraint.surrogate,
            float(constraint_config.get("gamma_c", 1.0)),
            finite_horizon=bool(constraint_config.get("finite_horizon", False)),
        )

    def init_extra(self, constraint):
        extra = super().init_extra(constraint)
        if constraint.kind == "var":
            extra = {**extra, "eta": jnp.asarray(constraint.limit, jnp.float32)}
        return extra

    def rollout_env_params(self, agent, params):
        params = super().rollout_env_params(agent, params)
        if not self.is_risk:
            return params
        return params.replace(rho=jnp.asarray(agent.constraint.limit, jnp.float32), eta=agent.extra["eta"])

    # ---- the batch rewrite -------------------------------------------------------------------
    def risk_terms(self, agent, batch):
        """(J, limit, cost advantage (B,), metrics) of the surrogate; see the module table."""
        episodes = batch.episodes
        rho = jnp.asarray(agent.constraint.limit, jnp.float32)
        eps = agent.constraint.epsilon
        mu = episodes["discounted_cost"][0]
        if self.surrogate == "cantelli":
            mu2 = episodes["discounted_cost_sq"][0]
            adv_c, adv_tilde = batch.advantages[:, 1], batch.advantages[:, 2]
            recovery = mu >= rho  # Sec. 4.5
            w_c, w_tilde = risk.cantelli_gradient_weights(mu, rho, eps)
            j_c = risk.cantelli_value(mu, mu2, rho, eps)
            value = jnp.where(recovery, mu / rho, 1.0 + j_c / rho**2)
            advantage = jnp.where(recovery, adv_c / rho, (w_c * adv_c + w_tilde * adv_tilde) / rho**2)
            variance = jnp.maximum(mu2 - mu**2, 0.0)
            metrics = {
                "cantelli_value": j_c,
                "cantelli_bound": risk.cantelli_bound(mu, variance, rho),
                "recovery": recovery.astype(jnp.float32),
            }
            # Prop. 4.1's variance floor at the measured moments (saferl.algos.cantelli_theory)
            metrics.update(floor_metrics(mu, mu2, rho, eps))
            return value, jnp.ones(()), advantage, metrics
        if self.surrogate == "indicator":
            return episodes["violation"], eps, batch.advantages[:, 1], {}
        eta = agent.extra["eta"]
        cvar = eta + episodes["excess"] / eps
        return cvar / rho, jnp.ones(()), batch.advantages[:, 1] / (eps * rho), {"cvar": cvar, "eta": eta}

    def next_eta(self, agent, batch):
        """eta for the next rollout: the batch's empirical (1 - eps)-quantile of C (kept when no
        episode finished)."""
        costs = batch.episode_discounted_cost[:, 0]
        q = risk.masked_quantile(costs, batch.episode_done, 1.0 - agent.constraint.epsilon)
        return jnp.where(jnp.isfinite(q), q, agent.extra["eta"])

    def prepare_batch(self, agent, batch):
        agent, batch, metrics = super().prepare_batch(agent, batch)
        if not self.is_risk:
            return agent, batch, metrics
        value, limit, advantage, info = self.risk_terms(agent, batch)
        advantage = advantage * episode_cost_weights(batch.timestep, agent.constraint.gamma_c)
        advantages = jnp.concatenate([batch.advantages[:, :1], advantage[:, None]], axis=1)
        episodes = {**batch.episodes, "discounted_cost": value[None], "constraint_limit": jnp.reshape(limit, (1,))}
        if self.surrogate == "cvar":
            agent = agent.replace(extra={**agent.extra, "eta": self.next_eta(agent, batch)})
        return agent, batch.replace(advantages=advantages, episodes=episodes), {**metrics, **info}
