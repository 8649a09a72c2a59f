"""IPO (Liu, Ding, Liu 2020, "IPO: Interior-point Policy Optimization under Constraints"), a
C-TRPO baseline.

PPO on the clipped reward surrogate plus a logarithmic barrier on the constraint,

    max_theta  L^CLIP(theta) + phi(J_c(theta) - b),   phi(x) = log(-x) / t               (IPO eq. 6-7)

whose gradient is grad L^CLIP - kappa grad J_c with kappa = 1 / (t (b - J_c)): the barrier acts as a
cost penalty that grows without bound as J_c approaches b.  The penalty is capped at
``penalty_max`` and takes that value once J_c >= b, where the barrier is undefined (OmniSafe's cap
of 1); the advantage is then (A_r - kappa A_c) / (1 + kappa), as PPO-Lag's.  t = 20 as in the
C-TRPO authors' baseline.
"""

from __future__ import annotations

import jax.numpy as jnp

from saferl.algos.base import register
from saferl.algos.lagrangian import first
from saferl.algos.ppo import PPO, normalize


def barrier_penalty(cost, limit, t, penalty_max):
    """kappa = 1 / (t (b - J_c)), the barrier's weight on grad J_c, capped at ``penalty_max`` (also where J_c >= b)."""
    slack = limit - cost
    kappa = 1.0 / (t * jnp.where(slack > 0, slack, 1.0))
    return jnp.where(slack > 0, jnp.minimum(kappa, penalty_max), penalty_max)


@register
class IPO(PPO):
    name = "ipo"
    description = "IPO (Liu et al. 2020): PPO with a logarithmic barrier on the expected cost."
    defaults = dict(PPO.defaults, barrier_t=20.0, penalty_max=1.0)

    def penalty(self, agent, batch):
        cost = batch.episodes["discounted_cost"][0]
        return barrier_penalty(cost, first(self.constraint_limit(agent, batch)), float(self.hp["barrier_t"]),
                               float(self.hp["penalty_max"]))

    def before_update(self, agent, batch):
        return agent, {"penalty": self.penalty(agent, batch), "cost_estimate": batch.episodes["discounted_cost"][0]}

    def policy_advantage(self, agent, batch):
        kappa = self.penalty(agent, batch)
        cost_adv = batch.advantages[:, 1] - jnp.mean(batch.advantages[:, 1])
        return (normalize(batch.advantages[:, 0]) - kappa * cost_adv) / (1.0 + kappa)

    def metrics_names(self):
        return ("penalty", "cost_estimate") + super().metrics_names()
