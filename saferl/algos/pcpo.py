"""PCPO (Yang et al. 2020, "Projection-Based Constrained Policy Optimization", arXiv:2010.03152): a TRPO
reward step, then a projection onto the linearised constraint.

    x_r = sqrt(2 delta / g^T H^-1 g) H^-1 g                                (PCPO eq. 3, reward step)
    x   = x_r - max(0, (b^T x_r + c) / (b^T H^-1 b)) H^-1 b                 (PCPO eq. 4-5, KL projection)

(:func:`saferl.core.cpo_dual.pcpo_projection`).  Where the projection leaves the trust region
(a violation c the trust region cannot absorb) x is scaled back onto its boundary,
x^T H x = 2 delta, keeping its direction: the step a long enough backtracking search would
reach (SafePO's PCPO, which the C-TRPO paper's baselines use, backtracks up to 200 times).
The line search then accepts ``decay**j x`` with mean KL <= delta and a cost surrogate
change within ``max(0, -c)``.

Several constraints (one per cost channel): the projection is onto the intersection of the
linearised constraints in the same KL metric,

    x = argmin_x (x - x_r)^T H (x - x_r)   s.t.   b_i^T x + c_i <= 0  (i = 1..m),

solved in its m-dimensional dual (:func:`saferl.core.cpo_dual.pcpo_projection_multi`; for m = 1 the
closed form above), then scaled back onto the trust region as before; the line search asks every
cost surrogate change to stay within ``max(0, -c_i)``.

``reward_direction: fisher_product`` is the step the C-TRPO paper's PCPO runs took (milosen/ctrpo
``algorithms/baselines/pcpo.py``, SafePO's): there the reward part of the step is
``alpha * fvp(x)`` with x = H^-1 g from conjugate gradients, i.e. ``alpha * H H^-1 g ~ alpha g``,
the Euclidean gradient at the natural step's length coefficient, while the projection coefficient
is eq. 4-5's,

    x = alpha g - max(0, (alpha g^T H^-1 b + c) / (b^T H^-1 b)) H^-1 b,   alpha = sqrt(2 delta / g^T H^-1 g),

(their ``trpo.py`` and ``cpo.py`` step along ``x`` itself).  Here ``H g`` is taken as the damped
Fisher product of H^-1 g, as theirs; the default ``natural`` is eq. 3-5.
docs/decisions/062-ctrpo-harness-methods-as-run.md has what this changes in the benchmark.
"""

from __future__ import annotations

import jax.numpy as jnp

from saferl.algos.base import channel_metrics, register
from saferl.algos.second_order import TrustRegionAlgorithm, natural_step, onto_trust_region
from saferl.core import cpo_dual as cd
from saferl.foundation.hparams import choice, declare

#: the choices of ``hparams.reward_direction`` (module docstring)
REWARD_DIRECTIONS = ("natural", "fisher_product")


def projected_step(reward_step, cost_grads, c, hinv_cost_grads, matvec, reward_direction="natural"):
    """The PCPO step before the trust-region scaling: the reward step ``reward_step`` = alpha H^-1 g projected onto
    the linearised constraints ``cost_grads`` (rows b_i), ``c`` (J_c,i - b_i) in the KL metric (eq. 4-5; several
    constraints: :func:`~saferl.core.cpo_dual.pcpo_projection_multi`).  With ``reward_direction`` ``fisher_product``
    the reward part alpha H^-1 g is replaced by ``matvec(reward_step)`` = alpha H H^-1 g, the projection's
    coefficient unchanged (module docstring).  ``reward_direction`` is static."""
    if reward_direction not in REWARD_DIRECTIONS:
        raise ValueError(f"reward_direction must be one of {', '.join(REWARD_DIRECTIONS)}, got {reward_direction!r}")
    if cost_grads.shape[0] == 1:
        step = cd.pcpo_projection(reward_step, cost_grads[0], c[0], hinv_cost_grad=hinv_cost_grads[0], norm="kl")
    else:
        step = cd.pcpo_projection_multi(reward_step, cost_grads, c, hinv_cost_grads)
    if reward_direction == "fisher_product":
        step = step + (matvec(reward_step) - reward_step)
    return step


@register
class PCPO(TrustRegionAlgorithm):
    name = "pcpo"
    step_uses_cost_scale = True
    description = "PCPO (Yang et al. 2020): TRPO reward step projected (KL norm) onto the linearised constraint."
    # b per sample against c per episode (s = 1), as OmniSafe's and SafePO's PCPO (the C-TRPO paper's baseline):
    # a violation then projects far outside the trust region and the step, scaled back onto it, descends the
    # cost.  On PointGoal1 (limit 25, 5 seeds x 2M) the occupancy scale 1 / (1 - gamma_c) settled at cost 39.8 /
    # return 21.3, this at 29.5 / 10.9 (docs/decisions/027-pcpo-projection-onto-trust-region.md); "episode" keeps
    # the former.
    defaults = declare(
        TrustRegionAlgorithm.defaults,
        cost_scale="per_sample",
        reward_direction=choice(
            "natural",
            REWARD_DIRECTIONS,
            "the reward step along H^-1 g (PCPO eq. 3) or along the Fisher product "
            "H H^-1 g ~ g at the same coefficient (the C-TRPO paper's runs)",
        ),
    )
    max_constraints = cd.MAX_MULTI_CONSTRAINTS  # the projection enumerates 2^m active sets

    @staticmethod
    def acceptable(candidate, base, delta, tolerance):
        """The line search's test: mean KL <= delta and every cost surrogate change within its tolerance
        ``max(0, -c_i)`` (``candidate`` and ``base``: the line search's metrics of the step and of theta_k)."""
        return (candidate["kl"] <= delta) & jnp.all(candidate["cost"] - base["cost"] <= tolerance)

    def policy_step(self, agent, batch):
        delta = self.hp["target_kl"]
        adv_r, adv_c = self.advantages(batch)
        grads = self.gradients(agent, batch, adv_r, adv_c)
        matvec = self.fisher_matvec(agent, batch)
        hinv = self.solve(matvec, jnp.concatenate([grads.g[None], grads.B]))
        reward_step = natural_step(grads.g, hinv[0], delta)
        step = projected_step(reward_step, grads.B, grads.c, hinv[1:], matvec, self.hp["reward_direction"])
        step = onto_trust_region(step, matvec, delta)
        tolerance = jnp.maximum(-grads.c, 0.0)

        def accept(m, m0):
            return self.acceptable(m, m0, delta, tolerance)

        params, metrics = self.line_search(agent, batch, adv_r, adv_c, grads.scale, step, accept)
        metrics.update(channel_metrics("cost_estimate", grads.cost))
        return agent.replace(actor_params=params), metrics
