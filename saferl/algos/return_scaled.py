"""Reward advantages divided by a running standard deviation of discounted returns: RL-Safety-Algorithms' scaling.

Sven Gronauer's RL-Safety-Algorithms, whose TRPO-Lagrangian and PDO the SCPO paper (arXiv:2311.00880, App. F.2.1)
ran as baselines, divides rewards by a running standard deviation of discounted returns and leaves advantages
otherwise alone (``algs/iwpg/iwpg.py``: ``use_reward_scaling=True``, ``use_standardized_advantages=False``); the cost
GAE stays in the costs' units.  saferl's trust-region family standardises A_r and centres A_c instead
(:meth:`~saferl.algos.second_order.TrustRegionAlgorithm.advantages`).  For the plain trust-region steps the two hardly
differ (a positive factor on A_r changes neither the natural step nor the line search's decisions), but a Lagrangian
weighs lambda A_c against A_r, so the scale of A_r sets how strongly a multiplier of a given size acts.

A mixin for a trust-region algorithm with an ``advantage_scale`` hyper-parameter (:func:`advantage_scale_param`):

1. ``return_std``: A_r / (std + 1e-5), std from the discounted returns of the batches before this one (1 for the
   first), and A_c raw (:mod:`saferl.core.return_scaling`, which also states how this matches ``Buffer.finish_path``
   up to its +-10 clip);
2. after the policy step the batch's discounted returns-to-go are folded into the statistics
   (``update_running_statistics``), so the next batch is scaled by them;
3. ``standardised``: the family's advantages, and no statistics in the agent's state (checkpoints keep their layout).
"""

from __future__ import annotations

import jax.numpy as jnp

from saferl.core import return_scaling
from saferl.foundation.hparams import choice

ADVANTAGE_SCALES = ("return_std", "standardised")


def advantage_scale_param(default: str, source: str):
    """The ``advantage_scale`` declaration with ``default`` and the reference it follows."""
    return choice(
        default,
        ADVANTAGE_SCALES,
        "the advantages the step and the multiplier weigh: return_std (A_r over a running std of discounted returns, "
        "A_c raw; RL-Safety-Algorithms iwpg.py use_reward_scaling=True, use_standardized_advantages=False) or "
        f"standardised (A_r standardised, A_c centred: saferl's trust-region family); default: {source}",
    )


class ReturnScaledAdvantages:
    """Mixin: ``scaled_advantages`` and ``with_batch_returns`` as ``advantage_scale`` says (module docstring)."""

    def init_extra(self, constraint):
        extra = super().init_extra(constraint)
        if self.hp["advantage_scale"] == "return_std":  # only then: standardised runs keep their checkpoint layout
            extra = {**extra, "return_stats": return_scaling.init()}
        return extra

    def scaled_advantages(self, agent, batch):
        """(A_r, A_c): A_r / (std + 1e-5) by the statistics of earlier batches and A_c raw (step 1), or the family's
        standardised A_r and centred A_c (step 3)."""
        if "return_stats" not in agent.extra:
            return super().scaled_advantages(agent, batch)
        return batch.advantages[:, 0] * return_scaling.scale(agent.extra["return_stats"]), batch.advantages[:, 1:]

    def with_batch_returns(self, agent, batch):
        """The running statistics with this batch's discounted returns folded in, after the step (step 2)."""
        if "return_stats" not in agent.extra:
            return super().with_batch_returns(agent, batch)
        done = batch.terminated | batch.truncated
        returns = return_scaling.discounted_returns(batch.reward, done, self.hp["gamma"], batch.rollout_shape)
        stats = return_scaling.update(agent.extra["return_stats"], returns)
        return agent.replace(extra={**agent.extra, "return_stats": stats}), {"return_std": jnp.sqrt(stats["var"])}
