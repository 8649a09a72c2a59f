"""IPO (Liu, Ding, Liu 2020, "IPO: Interior-point Policy Optimization under Constraints",
arXiv:1910.09615), a C-TRPO baseline.

PPO on the clipped reward surrogate plus a logarithmic barrier on the constraint,

    max_theta  L^CLIP(theta) + phi(J_c(theta) - b),   phi(x) = log(-x) / t               (IPO eq. 6-7)

whose gradient is grad L^CLIP - kappa grad J_c with kappa = 1 / (t (b - J_c)): the barrier acts as a
cost penalty that grows without bound as J_c approaches b.  The advantage is (A_r - kappa A_c) /
(1 + kappa), as PPO-Lag's, with kappa capped at ``penalty_max``; t = 20 as in the C-TRPO authors'
baseline.

The barrier is undefined once J_c >= b, and the IPO paper starts from feasible policies.
``infeasible`` chooses what happens there: ``recover`` (default; the recovery branch of the C-TRPO
authors' IPO) takes PPO steps on -A_c alone -- the pessimistic clipped cost surrogate -- until
J_c < b; ``cap`` keeps the penalty at ``penalty_max`` (OmniSafe's IPO).

Not the C-TRPO authors' IPO.  Their feasible branch (milosen/ctrpo, ``algorithms/baselines/ipo.py``)
adds ``mean(ratio * A_c) / (t (J_c - b))`` to the loss; with J_c < b that divides by a negative
number, so their barrier term rewards cost where IPO's eq. 6-7 (and this module) penalise it.  Only
the recovery branch matches, so our IPO rows are not comparable with the C-TRPO paper's IPO numbers,
and every results table labels them as this module's IPO.

Several constraints J_c,i <= b_i (the IPO paper's multi-constraint objective, one barrier per
constraint): L^CLIP + sum_i log(b_i - J_c,i) / t, whose gradient weighs grad J_c,i by
kappa_i = 1 / (t (b_i - J_c,i)), each capped at ``penalty_max``; the advantage is
(A_r - sum_i kappa_i A_c,i) / (1 + sum_i kappa_i).  ``infeasible`` acts per channel: with ``cap`` an
infeasible channel's kappa_i is ``penalty_max``; with ``recover`` any infeasible channel switches the
update to recovery, PPO steps on -(sum of the infeasible channels' A_c,i) (standardised), until every
J_c,i < b_i.
"""

from __future__ import annotations

import jax.numpy as jnp

from saferl.algos.base import channel_metrics, register
from saferl.algos.lagrangian import penalised_advantage
from saferl.algos.ppo import PPO, centred_cost_advantage, normalize
from saferl.hparams import choice, declare, real


def barrier_penalty(cost, limit, t, penalty_max):
    """kappa = 1 / (t (b - J_c)), the barrier's weight on grad J_c, capped at ``penalty_max`` (also where J_c >= b);
    elementwise (one kappa_i per constraint)."""
    slack = limit - cost
    kappa = 1.0 / (t * jnp.where(slack > 0, slack, 1.0))
    return jnp.where(slack > 0, jnp.minimum(kappa, penalty_max), penalty_max)


@register
class IPO(PPO):
    name = "ipo"
    description = "IPO (Liu et al. 2020): PPO with a logarithmic barrier on the expected cost."
    constraint_kinds = ("expected",)  # PPO also takes "var"; no VaR rewrite here (saferl.algos.risk)
    defaults = declare(PPO.defaults,
                       barrier_t=real(20.0, "(0, inf)", "t, the log barrier's sharpness"),
                       penalty_max=real(1.0, "(0, inf)", "cap of the barrier weight 1 / (t (b - J_c))"),
                       infeasible=choice("recover", ("recover", "cap"), "where the barrier is undefined"))

    def penalty(self, agent, batch):
        """kappa_i of every constraint (:func:`barrier_penalty`)."""
        return barrier_penalty(*self.constraint_values(agent, batch), self.hp["barrier_t"],
                               self.hp["penalty_max"])

    def recovering(self, agent, batch):
        """Per constraint: whether it is infeasible (J_c,i >= b_i) and ``infeasible`` is ``recover``."""
        cost, limit = self.constraint_values(agent, batch)
        return jnp.asarray(self.hp["infeasible"] == "recover") & (cost >= limit)

    def before_update(self, agent, batch):
        cost, _ = self.constraint_values(agent, batch)
        return agent, {**channel_metrics("penalty", self.penalty(agent, batch)),
                       **channel_metrics("cost_estimate", cost),
                       "recovering": jnp.any(self.recovering(agent, batch)).astype(jnp.float32)}

    def policy_advantage(self, agent, batch):
        kappa = self.penalty(agent, batch)
        cost_adv = centred_cost_advantage(batch)
        barrier = penalised_advantage(normalize(batch.advantages[:, 0]), cost_adv, kappa)
        # recovery: PPO's clipped surrogate on -A_c is the pessimistic clip of the cost surrogate
        violated = self.recovering(agent, batch)
        if cost_adv.ndim == 1:  # one constraint
            recovery = -normalize(cost_adv)
        else:  # the infeasible channels' cost, summed
            recovery = -normalize(jnp.sum(cost_adv * violated.astype(cost_adv.dtype), axis=-1))
        return jnp.where(jnp.any(violated), recovery, barrier)
