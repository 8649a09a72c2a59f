"""What the second-order (trust-region) family shares: TRPO, TRPO-Lag, CPO, PCPO, C-TRPO.

One update of every member is

    1. advantages: the reward advantage is standardised; each cost channel is only
       centred (mean zero, scale kept), so that its surrogate is zero at the current
       policy and keeps the units of the cost it predicts;
    2. gradients at theta_k of the surrogates (C-TRPO eq. 6 and 15)
           g   = grad_theta  E[pi / pi_k  A_r]                      (reward, ascent direction)
           b_i = grad_theta  s * E[pi / pi_k  A_c,i]                (cost channel i)
       where ``s`` turns the per-sample cost surrogate into a change of J_c, chosen by
       ``hparams.cost_scale``:
         * ``per_sample``: s = 1, b per sample against c per episode -- the units of OmniSafe's and SafePO's
           CPO and PCPO (what the C-TRPO paper benchmarked) and of the public JAX VaR-CPO code;
         * ``length``: the units of J_c -- s = L, the mean episode length, when the constraint is
           undiscounted (its own ``gamma_c = 1``: E_tau[sum_t ratio_t A_t] = L * mean(ratio A)), and
           s = 1 / (1 - gamma_c) for a discounted expected-cost constraint (the occupancy form of CPO eq. 10
           and C-TRPO eq. 15/59); for VaR constraints always L, the advantages then carrying gamma_c^t
           (:mod:`saferl.algos.risk`);
         * ``effective_horizon``: s = 1 / (1 - cost_gamma) with the *cost critic's* discount, whatever the
           constraint's -- the C-TRPO authors' heuristic (milosen/ctrpo writes its barrier with
           1/(1 - gamma) mean((ratio - 1) A_c) against b - J_c); L for VaR constraints and cost_gamma = 1.
       docs/decisions/025-cost-surrogate-scale.md has the measurements behind each default;
    3. H^-1 g and H^-1 b_i by conjugate gradients with Fisher-vector products of the
       mean KL between the batch's (old) distributions and the new ones
       (:mod:`saferl.core.trust_region`), on every ``fvp_subsample``-th sample.  ``hparams.kl_reduction``
       says what "mean KL" is: ``sum`` (default) the batch mean of the KL of the whole action distribution,
       summed over a Gaussian's action dimensions; ``mean_over_action_dims`` that divided by the action
       dimension d, as the C-TRPO authors' code computes it (``kl_divergence(Normal, Normal).mean()`` on an
       independent-per-dimension ``Normal``, milosen/ctrpo c-trpo.py, baselines/cpo.py, pcpo.py, trpo_lag.py).
       The same KL enters the Fisher, the line search's test and C-TRPO's divergence, so there the radius
       delta, the damping and C-TRPO's beta all act as d delta, d damping and d beta would on the summed KL;
    4. the algorithm's own step (``policy_step``) and a backtracking line search;
    5. the critics: Adam, minibatch epochs, MSE against the GAE returns of every channel.

The cost estimate is ``J_c = batch.episodes["discounted_cost"]``: the mean over the
episodes that finished in the batch, discounted by the constraint's ``gamma_c``
(1 = undiscounted); ``c = J_c - limit``, one entry per constraint.

Each algorithm file keeps only what makes it different: its step and its acceptance test.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import optax
from jax.flatten_util import ravel_pytree

from saferl.algos.base import COMMON_HPARAMS, AgentState, Algorithm, channel_metrics, check_at_most_batch, normalize
from saferl.algos.risk import RiskConstrained
from saferl.core import trust_region as tr
from saferl.core.fitting import minibatch_epochs
from saferl.foundation.hparams import choice, declare, integer, real

#: the cost surrogate's scales (``hparams.cost_scale``) and the label a results table gives each
COST_SCALES = ("per_sample", "length", "effective_horizon")
#: ``hparams.kl_reduction`` (module docstring, step 3)
KL_REDUCTIONS = ("sum", "mean_over_action_dims")
COST_SCALE_LABELS = {"per_sample": "OmniSafe units", "length": "J_c units", "effective_horizon": "1/(1-gamma) units"}


def mean_episode_length(batch):
    """L: the mean length of the episodes the batch's estimate holds, the rollout length while none finished."""
    length = jnp.asarray(batch.episodes["length"], jnp.float32)
    steps = batch.rollout_shape[0] if batch.rollout_shape else batch.obs.shape[0]
    length = jnp.where(jnp.isfinite(length), length, float(steps))
    return jnp.maximum(length, 1.0)


class Gradients(NamedTuple):
    """Flat gradients at theta_k and the constraint data of one batch (m constraints)."""

    g: jax.Array  # (n,) reward-surrogate gradient
    B: jax.Array  # (m, n) cost-surrogate gradients, in units of J_c
    cost: jax.Array  # (m,) J_c(pi_k)
    limit: jax.Array  # (m,) b
    c: jax.Array  # (m,) J_c - b
    scale: jax.Array  # s: cost surrogate = s * mean(ratio * A_c)


class TrustRegionAlgorithm(RiskConstrained, Algorithm):
    """Base class: subclasses implement ``policy_step(agent, batch) -> (agent, metrics)``."""

    constraint_kinds = ("expected", "var")
    #: whether the step reads b against c = J_c - b, so that ``cost_scale`` changes it (results tables then name it)
    step_uses_cost_scale = False
    defaults = declare(
        COMMON_HPARAMS,
        critic_lr=1e-3,
        target_kl=real(0.01, "(0, inf)", "delta, the trust-region radius (mean KL)"),
        cg_iters=integer(15, "[1, inf)", "conjugate-gradient iterations"),
        cg_damping=real(0.1, "[0, inf)", "damping added to the Fisher-vector product"),
        backtracks=integer(15, "[1, inf)", "line-search candidates decay**j * full_step, j < backtracks"),
        decay=real(0.8, "(0, 1)", "line-search step ratio"),
        line_search=choice(
            "auto",
            ("auto", "batched", "sequential"),
            "batched: all candidates in one vmapped call; sequential: stop at the first accepted; "
            "auto: sequential on a CPU, batched on an accelerator (the same candidate either way)",
        ),
        # rllab's TRPO ``subsample_factor``, OmniSafe's ``fvp_sample_freq``
        fvp_subsample=integer(4, "[1, inf)", "Fisher-vector products on every k-th sample"),
        # C-TRPO's default: the authors' heuristic (module docstring); CPO, PCPO and the Canary family re-default it
        cost_scale=choice(
            "effective_horizon",
            COST_SCALES,
            "the cost surrogate's scale s (module docstring): per_sample (s = 1, OmniSafe/SafePO units), "
            "length (units of J_c) or effective_horizon (1/(1 - cost_gamma), the C-TRPO authors')",
        ),
        # the ``learn_margin`` option of OpenAI's safety-starter-agents CPO (Ray et al. 2019): an integral term
        cost_margin_lr=real(0.0, "[0, inf)", "learned safety margin's rate; 0 = off (as published)"),
        critic_epochs=integer(10, "[1, inf)", "critic passes over the batch"),
        critic_minibatches=integer(16, "[1, inf)", "critic minibatches per pass"),
        kl_reduction=choice(
            "sum",
            KL_REDUCTIONS,
            "the trust region's KL per state: of the whole action distribution (sum over a Gaussian's "
            "dimensions) or its mean over the action dimensions (the C-TRPO authors' code)",
        ),
    )

    # ---- declarations -----------------------------------------------------------------
    @classmethod
    def check_hparams(cls, hp: dict, batch_size: int) -> None:
        super().check_hparams(hp, batch_size)
        check_at_most_batch(hp, "critic_minibatches", batch_size)

    def actor_optimizer(self):
        # The actor moves by trust-region steps, not by an optimiser; its state is empty.
        return optax.identity()

    # ---- batch closures -----------------------------------------------------------------
    def advantages(self, batch):
        """(A_r standardised (B,), A_c centred (B, m))."""
        adv_c = batch.advantages[:, 1:]
        adv_c = adv_c - jnp.mean(adv_c, axis=0)
        return normalize(batch.advantages[:, 0]), adv_c

    def scaled_advantages(self, agent, batch):
        """(A_r, A_c) the step weighs: :meth:`advantages` here; :mod:`saferl.algos.return_scaled` may scale A_r by a
        running return SD instead."""
        return self.advantages(batch)

    def with_batch_returns(self, agent, batch):
        """The agent after the step's bookkeeping of the batch's returns (nothing here) and its metrics."""
        return agent, {}

    def surrogate_scale(self, batch, gamma_c=1.0):
        """s: the cost surrogate is ``s * mean(ratio * A_c)`` (module docstring); ``gamma_c`` is the constraint's
        own discount (``agent.constraint.gamma_c``), read by ``cost_scale: length`` only."""
        mode = self.hp["cost_scale"]
        if mode == "per_sample":
            return jnp.ones((), jnp.float32)
        if mode == "length":
            if self.is_risk:  # the risk channels' advantages carry gamma_c^t (saferl.algos.risk): per episode
                return mean_episode_length(batch)
            gamma_c = jnp.asarray(gamma_c, jnp.float32)
            horizon = 1.0 / jnp.maximum(1.0 - gamma_c, jnp.finfo(jnp.float32).eps)
            return jnp.where(gamma_c < 1.0, horizon, mean_episode_length(batch))
        gamma = float(self.hp["cost_gamma"])
        if gamma < 1.0 and not self.is_risk:
            return jnp.asarray(1.0 / (1.0 - gamma), jnp.float32)
        return mean_episode_length(batch)

    def mean_kl(self, params, batch):
        """bar D_KL (eq. 16/58): mean over the batch of KL(pi_k(.|s) || pi_theta(.|s)), divided by the action
        dimension under ``kl_reduction: mean_over_action_dims`` (a Gaussian actor's; 1 for a categorical one)."""
        old = jax.lax.stop_gradient(batch.dist)
        kl = jnp.mean(self.actor.kl(old, self.actor.distribution(params, batch.obs)))
        if self.hp["kl_reduction"] == "mean_over_action_dims":
            kl = kl / getattr(self.actor, "action_dim", 1)
        return kl

    def surrogates(self, params, batch, adv_r, adv_c, scale):
        """(E[ratio A_r], s * E[ratio A_c] per channel (m,)) -- eq. 6 and eq. 15/59."""
        dist = self.actor.distribution(params, batch.obs)
        ratio = jnp.exp(self.actor.log_prob(dist, batch.action) - batch.log_prob)
        return jnp.mean(ratio * adv_r), scale * jnp.mean(ratio[:, None] * adv_c, axis=0)

    def init_extra(self, constraint):
        extra = super().init_extra(constraint)
        lr = float(self.hp["cost_margin_lr"])
        if lr > 0.0:  # only then, so that runs without a margin keep their checkpoint layout
            extra = {**extra, "cost_margin": jnp.zeros((self.num_constraints,), jnp.float32)}
        return extra

    def constraint_data(self, agent, batch):
        """(J_c, b) per constraint (:meth:`~saferl.algos.base.Algorithm.cost_and_limit`); b is lowered by the
        learned margin when there is one."""
        cost, limit = self.cost_and_limit(agent, batch)
        if "cost_margin" in agent.extra:
            limit = limit - agent.extra["cost_margin"]
        return cost, limit

    def update_margin(self, agent, batch):
        """margin <- max(0, margin + cost_margin_lr (J_c - b)) against the unshifted b (no-op without one)."""
        if "cost_margin" not in agent.extra:
            return agent, {}
        cost, limit = self.cost_and_limit(agent, batch)
        margin = next_margin(agent.extra["cost_margin"], cost, limit, float(self.hp["cost_margin_lr"]))
        return agent.replace(extra={**agent.extra, "cost_margin": margin}), channel_metrics("cost_margin", margin)

    # ---- gradients, H^-1 v, line search --------------------------------------------------
    def gradients(self, agent, batch, adv_r, adv_c) -> Gradients:
        flat, unravel = ravel_pytree(agent.actor_params)
        scale = self.surrogate_scale(batch, agent.constraint.gamma_c)

        def stacked(p):
            reward, cost = self.surrogates(unravel(p), batch, adv_r, adv_c, scale)
            return jnp.concatenate([reward[None], cost])

        jac = jax.jacrev(stacked)(flat)
        cost, limit = self.constraint_data(agent, batch)
        return Gradients(jac[0], jac[1:], cost, limit, cost - limit, scale)

    def fisher_matvec(self, agent, batch):
        """v -> (F + damping I) v on flat vectors, F the Hessian of the mean KL at theta_k."""
        k = int(self.hp["fvp_subsample"])
        sub = batch if k == 1 else jax.tree.map(lambda x: x[::k], batch.replace(episodes=None))
        matvec, _, _ = tr.make_fisher_matvec(lambda p: self.mean_kl(p, sub), agent.actor_params, self.hp["cg_damping"])
        return matvec

    def solve(self, matvec: Callable, rows):
        """H^-1 v for each row of ``rows`` (k, n) by conjugate gradients."""
        return jax.vmap(lambda v: tr.conjugate_gradient(matvec, v, int(self.hp["cg_iters"])))(rows)

    def line_search(self, agent, batch, adv_r, adv_c, scale, full_step, accept):
        """Backtrack ``decay**j * full_step`` (all candidates at once); ``accept(m, m0)`` sees the
        candidate's and theta_k's metrics: ``kl``, ``reward`` and ``cost`` (m,) surrogates.
        Returns (new actor params, metrics of the chosen step)."""
        flat, unravel = ravel_pytree(agent.actor_params)

        def evaluate(step):
            params = unravel(flat + step)
            reward, cost = self.surrogates(params, batch, adv_r, adv_c, scale)
            return {"kl": self.mean_kl(params, batch), "reward": reward, "cost": cost}

        base = evaluate(jnp.zeros_like(flat))
        result, chosen = self._line_search_fn()(
            evaluate,
            full_step,
            accept=lambda m: accept(m, base) & jnp.isfinite(m["reward"]),
            decay=float(self.hp["decay"]),
            max_backtracks=int(self.hp["backtracks"]),
            return_metrics=True,
        )
        metrics = {
            "kl": jnp.where(result.accepted, chosen["kl"], 0.0),
            "surrogate_improvement": jnp.where(result.accepted, chosen["reward"] - base["reward"], 0.0),
            # the linearised change of the (first) constraint's J_c that the accepted step predicts; compare
            # with the next iteration's measured change to see how far the cost model can be trusted
            "cost_surrogate_change": jnp.where(
                result.accepted & (base["cost"].shape[0] > 0), jnp.sum(chosen["cost"][:1] - base["cost"][:1]), 0.0
            ),
            "accepted": result.accepted.astype(jnp.float32),
            "backtracks": result.index.astype(jnp.float32),
        }
        return unravel(flat + result.step), metrics

    def _line_search_fn(self):
        """Both searches return the same candidate (tested); they differ only in cost: on a CPU the sequential
        one, which usually stops after one or two evaluations, trained CPO on the Hopper ~11% faster than all
        fifteen at once (docs/decisions/034-line-search-auto.md); on an accelerator one batched call is cheaper."""
        mode = self.hp["line_search"]
        if mode == "auto":
            mode = "sequential" if jax.default_backend() == "cpu" else "batched"
        return tr.backtracking_line_search if mode == "batched" else tr.backtracking_line_search_sequential

    # ---- critics ---------------------------------------------------------------------------
    def fit_critics(self, agent: AgentState, batch, key):
        """Adam on sum_channels (V(s) - R)^2 (+ the ``critic_l2`` term), ``critic_epochs`` passes of
        ``critic_minibatches``."""
        params, opt_state, loss = minibatch_epochs(
            self.critic_objective,
            agent.critic_params,
            self.critic_optimizer(),
            agent.critic_opt_state,
            (batch.obs, batch.returns),
            key,
            self.hp["critic_epochs"],
            self.hp["critic_minibatches"],
        )
        return agent.replace(critic_params=params, critic_opt_state=opt_state), loss

    # ---- the update ------------------------------------------------------------------------
    def before_update(self, agent, batch):
        return agent, {}

    def policy_step(self, agent, batch):
        raise NotImplementedError

    def update(self, agent, batch, key):
        agent, batch, risk_metrics = self.prepare_batch(agent, batch)
        agent, margin_metrics = self.update_margin(agent, batch)
        agent, metrics = self.before_update(agent, batch)
        metrics = {**risk_metrics, **margin_metrics, **metrics}
        agent, step_metrics = self.policy_step(agent, batch)
        agent, critic_loss = self.fit_critics(agent, batch, key)
        return agent, {**metrics, **step_metrics, "critic_loss": critic_loss}


def next_margin(margin, cost, limit, lr):
    """The learned margin's step: max(0, margin + lr (J_c - b)); J_c NaN (no finished episode) keeps it."""
    new = jnp.maximum(margin + lr * (cost - limit), 0.0)
    return jnp.where(jnp.isfinite(cost), new, margin)


def onto_trust_region(step, matvec, delta):
    """``step`` scaled back onto the boundary x^T H x = 2 delta when it lies outside it (unchanged inside):
    what a backtracking line search long enough to reach the trust region would find, in one step."""
    quad = jnp.maximum(jnp.vdot(step, matvec(step)), jnp.finfo(step.dtype).tiny)
    return step * jnp.minimum(1.0, jnp.sqrt(2.0 * delta / quad))


def natural_step(g, hinv_g, delta):
    """sqrt(2 delta / g^T H^-1 g) H^-1 g: the step to the trust-region boundary (C-TRPO eq. 19)."""
    q = jnp.maximum(jnp.vdot(g, hinv_g), jnp.finfo(hinv_g.dtype).tiny)
    return jnp.sqrt(2.0 * delta / q) * hinv_g
