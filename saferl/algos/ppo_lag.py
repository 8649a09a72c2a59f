"""PPO-Lagrangian (Ray et al. 2019): PPO on the Lagrangian with a learned multiplier.

Before each policy update the multiplier ascends the dual on the batch's mean
episode cost J_c: lambda <- [lambda + lr (J_c - b)]_+ (Adam by default, as in
OmniSafe); the policy then maximises the surrogate of (A_r - lambda A_c) / (1 + lambda).
"""

from __future__ import annotations

import jax.numpy as jnp

from saferl.algos.base import register
from saferl.algos.ppo import PPO, normalize
from saferl.core import lagrange


@register
class PPOLag(PPO):
    name = "ppo_lag"
    description = "PPO-Lagrangian (Ray et al. 2019): PPO with a learned Lagrange multiplier on the expected cost."
    constraint_kinds = ("expected",)
    defaults = dict(PPO.defaults, lagrange_init=0.0, lagrange_lr=0.035, lagrange_optimizer="adam")

    def init_extra(self, constraint):
        return {"lagrange": lagrange.init(self.hp["lagrange_init"], self.hp["lagrange_optimizer"], self.hp["lagrange_lr"])}

    def cost_estimate(self, agent, batch):
        """J_c: mean cost of the episodes completed in the batch (discounted by gamma_c)."""
        return batch.episodes["discounted_cost"][0]

    def before_update(self, agent, batch):
        cost = self.cost_estimate(agent, batch)
        state = lagrange.update(agent.extra["lagrange"], cost, agent.constraint.limit,
                                self.hp["lagrange_optimizer"], self.hp["lagrange_lr"])
        agent = agent.replace(extra={**agent.extra, "lagrange": state})
        return agent, {"lagrange_multiplier": state.multiplier, "cost_estimate": cost}

    def policy_advantage(self, agent, batch):
        lam = agent.extra["lagrange"].multiplier
        reward_adv = normalize(batch.advantages[:, 0])
        cost_adv = batch.advantages[:, 1] - jnp.mean(batch.advantages[:, 1])
        return (reward_adv - lam * cost_adv) / (1.0 + lam)

    def metrics_names(self):
        return ("lagrange_multiplier", "cost_estimate") + super().metrics_names()
