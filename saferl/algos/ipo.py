"""IPO (Liu, Ding, Liu 2020, "IPO: Interior-point Policy Optimization under Constraints"), a
C-TRPO baseline.

PPO on the clipped reward surrogate plus a logarithmic barrier on the constraint,

    max_theta  L^CLIP(theta) + phi(J_c(theta) - b),   phi(x) = log(-x) / t               (IPO eq. 6-7)

whose gradient is grad L^CLIP - kappa grad J_c with kappa = 1 / (t (b - J_c)): the barrier acts as a
cost penalty that grows without bound as J_c approaches b.  The advantage is (A_r - kappa A_c) /
(1 + kappa), as PPO-Lag's, with kappa capped at ``penalty_max``; t = 20 as in the C-TRPO authors'
baseline.

The barrier is undefined once J_c >= b, and the IPO paper starts from feasible policies.
``infeasible`` chooses what happens there: ``recover`` (default; the C-TRPO authors' IPO, whose
numbers the C-TRPO paper reports) takes PPO steps on -A_c alone -- the pessimistic clipped cost
surrogate -- until J_c < b; ``cap`` keeps the penalty at ``penalty_max`` (OmniSafe's IPO).
"""

from __future__ import annotations

import jax.numpy as jnp

from saferl.algos.base import register
from saferl.algos.ppo import PPO, centred_cost_advantage, cost_and_limit, normalize


def barrier_penalty(cost, limit, t, penalty_max):
    """kappa = 1 / (t (b - J_c)), the barrier's weight on grad J_c, capped at ``penalty_max`` (also where J_c >= b)."""
    slack = limit - cost
    kappa = 1.0 / (t * jnp.where(slack > 0, slack, 1.0))
    return jnp.where(slack > 0, jnp.minimum(kappa, penalty_max), penalty_max)


@register
class IPO(PPO):
    name = "ipo"
    description = "IPO (Liu et al. 2020): PPO with a logarithmic barrier on the expected cost."
    defaults = dict(PPO.defaults, barrier_t=20.0, penalty_max=1.0, infeasible="recover")
    INFEASIBLE = ("recover", "cap")

    def penalty(self, agent, batch):
        return barrier_penalty(*cost_and_limit(self, agent, batch), float(self.hp["barrier_t"]),
                               float(self.hp["penalty_max"]))

    def init_extra(self, constraint):
        if self.hp["infeasible"] not in self.INFEASIBLE:
            raise ValueError(f"hparams.infeasible must be one of {', '.join(self.INFEASIBLE)}, "
                             f"got {self.hp['infeasible']!r}")
        return super().init_extra(constraint)

    def recovering(self, agent, batch):
        cost, limit = cost_and_limit(self, agent, batch)
        return jnp.asarray(self.hp["infeasible"] == "recover") & (cost >= limit)

    def before_update(self, agent, batch):
        return agent, {"penalty": self.penalty(agent, batch), "cost_estimate": cost_and_limit(self, agent, batch)[0],
                       "recovering": self.recovering(agent, batch).astype(jnp.float32)}

    def policy_advantage(self, agent, batch):
        kappa = self.penalty(agent, batch)
        cost_adv = centred_cost_advantage(batch)
        barrier = (normalize(batch.advantages[:, 0]) - kappa * cost_adv) / (1.0 + kappa)
        # recovery: PPO's clipped surrogate on -A_c is the pessimistic clip of the cost surrogate
        return jnp.where(self.recovering(agent, batch), -normalize(cost_adv), barrier)

    def metrics_names(self):
        return ("penalty", "cost_estimate", "recovering") + super().metrics_names()
