"""CPO (Achiam et al. 2017): the TRPO step restricted to the linearised constraints.

    max_x g^T x   s.t.   b_i^T x + c_i <= 0 (i = 1..m),   x^T H x / 2 <= delta        (CPO eq. 10-11)

with c = J_c - b and b_i the gradients of the cost surrogates in units of J_c
(:mod:`saferl.algos.second_order`).  One constraint: closed-form dual
(:func:`saferl.core.cpo_dual.cpo_dual`, App. 10.2, cases 0-4); several: active-set
enumeration (:func:`saferl.core.cpo_dual.cpo_dual_multi`).  When no x meets the
linearised constraints in the trust region (case 0) the recovery step
``-sqrt(2 delta / s) H^-1 b`` minimises the cost.

Line search (Achiam's reference code, as OmniSafe): accept ``decay**j x`` when the
mean KL <= delta, every cost surrogate change stays within ``max(0, -c_i)`` (so
``J_c + change <= b`` where the origin is feasible, and the cost does not grow
where it is not) and -- when the current policy is feasible (cases 2-4) -- the
reward surrogate does not decrease.

Hysteresis (``hparams.hysteresis`` h < 1; default 1 = off): "CPO hyst." of the C-TRPO paper's ablation
(App. D.2, Fig. 10), C-TRPO's recovery rule given to CPO: once CPO has taken a recovery step it keeps
taking them, ``-sqrt(2 delta / s_V) H^-1 B 1_V`` on the constraints V with J_c,i > h b_i, until every
J_c,i <= h b_i.  The flag lives in ``agent.extra["recovering"]`` only when h < 1.
"""

from __future__ import annotations

import jax.numpy as jnp

from saferl.algos.base import register
from saferl.algos.second_order import TrustRegionAlgorithm
from saferl.core import cpo_dual as cd
from saferl.foundation.hparams import declare, real


@register
class CPO(TrustRegionAlgorithm):
    name = "cpo"
    step_uses_cost_scale = True
    description = "CPO (Achiam et al. 2017): trust-region step within the linearised cost constraints (one or several)."
    # b per sample against c per episode (s = 1): OmniSafe's CPO convention (the measurements:
    # docs/decisions/025-cost-surrogate-scale.md)
    max_constraints = cd.MAX_MULTI_CONSTRAINTS  # the dual enumerates 2^m active sets
    defaults = declare(
        TrustRegionAlgorithm.defaults,
        cost_scale="per_sample",
        hysteresis=real(1.0, "(0, 1]", "after a recovery step, recover until J_c <= h b; 1 = off"),
    )

    def init_extra(self, constraint):
        extra = super().init_extra(constraint)
        h = float(self.hp["hysteresis"])
        if h < 1.0:  # only then, so that runs without it keep their checkpoint layout
            extra = {**extra, "recovering": jnp.asarray(False)}
        return extra

    def hold_recovery(self, agent, grads, hinv_B, step, case, reward_check):
        """With hysteresis: stay in recovery while some J_c,i > h b_i after a recovery step (module docstring)."""
        if "recovering" not in agent.extra:
            return step, case, reward_check, {}
        over = grads.cost > float(self.hp["hysteresis"]) * grads.limit
        hold = agent.extra["recovering"] & jnp.any(over)
        weights = over.astype(hinv_B.dtype)
        direction = weights @ hinv_B  # H^-1 B 1_V
        s_v = jnp.maximum(jnp.vdot(weights @ grads.B, direction), jnp.finfo(direction.dtype).tiny)
        recovery = -jnp.sqrt(2.0 * self.hp["target_kl"] / s_v) * direction
        recovery_case = -1.0 if self.num_constraints > 1 else float(cd.CASE_INFEASIBLE)
        step = jnp.where(hold, recovery, step)
        case = jnp.where(hold, recovery_case, case)
        recovering = case == recovery_case
        return step, case, reward_check & ~hold, {"recovering": recovering}

    def direction(self, grads, hinv_g, hinv_B):
        """(step x, case, reward_must_improve) for the CPO subproblem."""
        delta = self.hp["target_kl"]
        if self.num_constraints == 1:
            q, r, s = cd.cpo_scalars(grads.g, grads.B[0], hinv_g, hinv_B[0])
            dual = cd.cpo_dual(q, r, s, grads.c[0], delta)
            step = cd.cpo_step(dual, hinv_g, hinv_B[0])
            return step, dual.case.astype(jnp.float32), dual.case >= cd.CASE_PARTIAL_FEASIBLE_ORIGIN
        q, r, S = cd.cpo_multi_scalars(grads.g, grads.B, hinv_g, hinv_B)
        dual = cd.cpo_dual_multi(q, r, S, grads.c, delta)
        step = cd.cpo_multi_step(dual, hinv_g, hinv_B)
        # -1 = recovery; otherwise the number of active constraints
        case = jnp.where(dual.feasible, jnp.sum(dual.active.astype(jnp.float32)), -1.0)
        return step, case, dual.feasible & jnp.all(grads.c <= 0)

    def policy_step(self, agent, batch):
        delta = self.hp["target_kl"]
        adv_r, adv_c = self.advantages(batch)
        grads = self.gradients(agent, batch, adv_r, adv_c)
        hinv = self.solve(self.fisher_matvec(agent, batch), jnp.concatenate([grads.g[None], grads.B]))
        step, case, reward_check = self.direction(grads, hinv[0], hinv[1:])
        step, case, reward_check, extra = self.hold_recovery(agent, grads, hinv[1:], step, case, reward_check)
        tolerance = jnp.maximum(-grads.c, 0.0)

        def accept(m, m0):
            cost_ok = jnp.all(m["cost"] - m0["cost"] <= tolerance)
            reward_ok = (~reward_check) | (m["reward"] >= m0["reward"])
            return (m["kl"] <= delta) & cost_ok & reward_ok

        params, metrics = self.line_search(agent, batch, adv_r, adv_c, grads.scale, step, accept)
        metrics.update(case=case, cost_estimate=grads.cost[0])
        return agent.replace(actor_params=params, extra={**agent.extra, **extra}), metrics
