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

``barrier_form: reversed_sign`` is the loss the C-TRPO paper's IPO runs minimised (milosen/ctrpo
``algorithms/baselines/ipo.py``, SafePO's).  Where J_c < b their loss is PPO's clipped reward loss plus
``mean(ratio * A_c) / (t (J_c - b))``: J_c - b is negative there, so the term rewards cost where
IPO's barrier (eq. 6-7, the default ``log_barrier``) penalises it, with a weight 1 / (t (b - J_c))
that is not capped, on the unclipped ratio, beside the reward advantage alone (not over 1 + kappa).
Where J_c >= b they minimise ``mean(max(ratio A_c, clip(ratio) A_c))``: the recovery branch above, on
the centred A_c (not standardised).  ``infeasible`` does not apply to it.  The logged ``penalty`` is then the
term's weight 1 / (t (J_c - b)), negative, and 0 while recovering.
docs/decisions/062-ctrpo-harness-methods-as-run.md.

Several constraints J_c,i <= b_i (the IPO paper's multi-constraint objective, one barrier per
constraint): L^CLIP + sum_i log(b_i - J_c,i) / t, whose gradient weighs grad J_c,i by
kappa_i = 1 / (t (b_i - J_c,i)), each capped at ``penalty_max``; the advantage is
(A_r - sum_i kappa_i A_c,i) / (1 + sum_i kappa_i).  ``infeasible`` acts per channel: with ``cap`` an
infeasible channel's kappa_i is ``penalty_max``; with ``recover`` any infeasible channel switches the
update to recovery, PPO steps on -(sum of the infeasible channels' A_c,i) (standardised), until every
J_c,i < b_i.  With ``reversed_sign`` the term is sum_i mean(ratio A_c,i) / (t (J_c,i - b_i)) while
every J_c,i < b_i, and recovery otherwise as with ``recover``.
"""

from __future__ import annotations

import jax.numpy as jnp

from saferl.algos.base import channel_metrics, register
from saferl.algos.lagrangian import penalised_advantage
from saferl.algos.ppo import PPO, PenalisedPPO, centred_cost_advantage, normalize
from saferl.foundation.hparams import choice, declare, real


def barrier_penalty(cost, limit, t, penalty_max):
    """kappa = 1 / (t (b - J_c)), the barrier's weight on grad J_c, capped at ``penalty_max`` (also where J_c >= b);
    elementwise (one kappa_i per constraint)."""
    slack = limit - cost
    kappa = 1.0 / (t * jnp.where(slack > 0, slack, 1.0))
    return jnp.where(slack > 0, jnp.minimum(kappa, penalty_max), penalty_max)


#: the choices of ``hparams.barrier_form`` (module docstring)
BARRIER_FORMS = ("log_barrier", "reversed_sign")


@register
class IPO(PenalisedPPO):
    """The barrier as a penalty kappa on PPO's advantage (:meth:`penalty`, :meth:`policy_advantage`), with recovery
    steps while a constraint is infeasible (:meth:`recovering`); with ``reversed_sign``, the C-TRPO paper's runs'
    term as a separate term of the loss (:meth:`loss_inputs`, :meth:`policy_loss`)."""

    name = "ipo"
    description = "IPO (Liu et al. 2020): PPO with a logarithmic barrier on the expected cost."
    defaults = declare(
        PPO.defaults,
        barrier_t=real(20.0, "(0, inf)", "t, the log barrier's sharpness"),
        penalty_max=real(1.0, "(0, inf)", "cap of the barrier weight 1 / (t (b - J_c))"),
        infeasible=choice("recover", ("recover", "cap"), "where the barrier is undefined"),
        barrier_form=choice(
            "log_barrier",
            BARRIER_FORMS,
            "IPO's barrier as a capped cost penalty (log_barrier) or the C-TRPO "
            "paper's runs' term mean(r A_c) / (t (J_c - b)), which rewards cost",
        ),
    )

    def penalty(self, agent, batch):
        """kappa_i of every constraint (:func:`barrier_penalty`)."""
        return barrier_penalty(*self.constraint_values(agent, batch), self.hp["barrier_t"], self.hp["penalty_max"])

    def recovering(self, agent, batch):
        """Per constraint: whether it is infeasible (J_c,i >= b_i) and ``infeasible`` is ``recover`` (always with
        ``barrier_form: reversed_sign``)."""
        cost, limit = self.constraint_values(agent, batch)
        recover = self.hp["infeasible"] == "recover" or self.hp["barrier_form"] == "reversed_sign"
        return jnp.asarray(recover) & (cost >= limit)

    @property
    def reversed_sign(self) -> bool:
        return self.hp["barrier_form"] == "reversed_sign"

    def reversed_weight(self, agent, batch):
        """With ``reversed_sign``: the weight 1 / (t (J_c,i - b_i)) of each constraint's term while every J_c,i < b_i
        (negative: it rewards cost), 0 while recovering."""
        cost, limit = self.constraint_values(agent, batch)
        gap = cost - limit
        feasible = ~jnp.any(self.recovering(agent, batch))
        return jnp.where(feasible, 1.0 / (self.hp["barrier_t"] * jnp.where(gap < 0, gap, -1.0)), 0.0)

    def before_update(self, agent, batch):
        """Logs ``penalty``: kappa_i (``log_barrier``), or the reversed term's weight (``reversed_sign``), which is the
        weight on A_c,i in the loss, so its sign shows the term rewards cost."""
        cost, _ = self.constraint_values(agent, batch)
        penalty = self.reversed_weight(agent, batch) if self.reversed_sign else self.penalty(agent, batch)
        return agent, {
            **channel_metrics("penalty", penalty),
            **channel_metrics("cost_estimate", cost),
            "recovering": jnp.any(self.recovering(agent, batch)).astype(jnp.float32),
        }

    def policy_advantage(self, agent, batch):
        cost_adv = centred_cost_advantage(batch)
        violated = self.recovering(agent, batch)
        # recovery: PPO's clipped surrogate on -A_c is the pessimistic clip of the cost surrogate
        recovery = -(cost_adv if cost_adv.ndim == 1 else jnp.sum(cost_adv * violated.astype(cost_adv.dtype), axis=-1))
        if (
            self.reversed_sign
        ):  # the barrier is a separate term of the loss (loss_inputs); A_c centred, not standardised
            return jnp.where(jnp.any(violated), recovery, normalize(batch.advantages[:, 0]))
        barrier = penalised_advantage(normalize(batch.advantages[:, 0]), cost_adv, self.penalty(agent, batch))
        return jnp.where(jnp.any(violated), normalize(recovery), barrier)

    def loss_inputs(self, agent, batch) -> dict:
        """With ``reversed_sign``: per sample, sum_i A_c,i / (t (J_c,i - b_i)) while every J_c,i < b_i, else 0."""
        if not self.reversed_sign:
            return {}
        cost_adv = centred_cost_advantage(batch)
        weight = self.reversed_weight(agent, batch)
        return {"barrier_term": cost_adv * weight if cost_adv.ndim == 1 else cost_adv @ weight}

    def policy_loss(self, agent, dist, log_prob, mb):
        loss, kl = super().policy_loss(agent, dist, log_prob, mb)
        if self.reversed_sign:
            loss = loss + jnp.mean(jnp.exp(log_prob - mb["log_prob"]) * mb["barrier_term"])
        return loss, kl
