"""PDO, primal-dual optimisation: a natural-gradient step on the Lagrangian, the multiplier by Adam dual ascent.

References: Chow, Ghavamzadeh, Janson, Pavone, "Risk-constrained reinforcement learning with percentile
risk criteria", JMLR 18 (2018) -- the primal-dual scheme: a policy step on the Lagrangian
J_r - lambda (J_c - b), then lambda <- [lambda + lr (J_c - b)]_+ ; and the implementation the SCPO paper
(Mhamed & Gu, arXiv:2311.00880, App. F.2.1: "PDO: uses a Lagrange multiplier that can be learned and
retains its state") ran as its baseline, Sven Gronauer's RL-Safety-Algorithms
(``rl_safety_algorithms/algs/pdo/pdo.py``, ``pdo/defaults.py``, on ``cpo/cpo.py``, ``trpo/trpo.py``,
``npg/npg.py``, ``iwpg/iwpg.py`` and ``core.py``).  What that code does each iteration, and so this
class:

1. the multiplier first (``PrimalDualOptimizationAlgorithm.update`` ->
   ``ConstrainedPolicyGradientAlgorithm.update_lagrange_multiplier``): one ``torch.optim.Adam`` step,
   rate 0.001, on the loss -lambda (J_c - b), then ``clamp_(0)``; lambda_0 = 0.001.  J_c is the mean
   cost of the episodes that finished in the batch (``EpCosts``).  Here: :mod:`saferl.algos.lagrangian`
   with ``lagrange_optimizer: adam`` (optax's Adam is torch's: b1 0.9, b2 0.999, eps 1e-8, eps outside
   the root), the step before the policy step as in TRPO-Lag; ``lagrange_optimizer: sgd`` is the plain
   projected ascent lambda <- max(0, lambda + lr (J_c - b));
2. the policy (``update_policy_net``): g = grad E[ratio A_r], b = grad E[ratio A_c] (per sample,
   ``compute_loss_cost_performance``), p = g - lambda b, x = H^-1 p by conjugate gradients (10
   iterations, damping 0.1, Fisher on every 4th sample) and the step sqrt(2 delta / p^T x) x, i.e. the
   natural gradient of E[ratio (A_r - lambda A_c)].  The advantage is A_r - lambda A_c, without the
   1 / (1 + lambda) of TRPO-Lag: a positive factor changes neither this step nor the line search's
   decisions, so the two give the same step;
3. the line search (``TRPOAlgorithm.adjust_step_direction``, as CPO's class hierarchy resolves it):
   15 candidates decay 0.8, the first accepted whose *reward* surrogate E[ratio A_r] does not decrease
   (``compute_loss_pi`` is IWPG's, without the penalty) and whose mean KL(old || new) <= 1.5 delta;
   none accepted: no step.  So where the multiplier is large enough that the Lagrangian step lowers
   the reward surrogate, PDO does not move (``line_search_surrogate: lagrangian`` tests the Lagrangian
   surrogate instead, as TRPO-Lag does);
4. the critics: Adam 1e-3, 5 passes of 16 minibatches (``train_v_iterations``, ``num_mini_batches``),
   no gradient clipping (``use_max_grad_norm=False``).

5. the advantages (``iwpg.py``: ``use_reward_scaling=True``, ``use_standardized_advantages=False``): GAE of
   the rewards divided by a running standard deviation of discounted returns, not standardised, and the
   cost GAE raw (:mod:`saferl.algos.return_scaled`, ``advantage_scale: return_std``).  lambda weighs A_c
   against these.  Adam at rate 1e-3 moves lambda by about 1e-3 an iteration whatever the constraint's
   violation, so lambda stays small for tens of iterations; against reward advantages divided by the
   spread of whole returns, which is far wider than the spread of advantages, a small lambda already
   weighs, and against standardised ones (``advantage_scale: standardised``: A_r standardised, A_c
   centred, :mod:`saferl.algos.second_order`) it does not: PDO then behaves like TRPO at the SCPO targets'
   budgets (docs/results/scpo-fig5-cpu/README.md).  Tables trained before this default have the
   standardised advantages.

Differences from that code, and why:

* The scaled advantage is A_r / (std + 1e-5), A_r the GAE of the raw rewards with a critic of the raw
  returns: the reference's critic fits the scaled returns and clips each scaled reward to +-10 before GAE.
  The two agree while std changes slowly and no single reward exceeds 10 std.  A path's discounted return
  is cut where the rollout ends without the reference's bootstrap ``last_val`` (``finish_path``).
* The exploration-noise annealing of ``pdo/defaults.py`` (``use_exploration_noise_anneal``) is a network
  setting, ``network.action_std_anneal`` (the SCPO targets set it); observation standardisation is saferl's
  ``normalize_observations``; the batch (``steps_per_epoch`` 64000 in ``pdo/defaults.py``, 32000 in
  its benchmark scripts and the SCPO paper's "B = 32000") is the run's ``num_envs * rollout_steps``.
* ``update_policy_net`` also computes c = (J_c - b) / EpLen and never uses it; nothing here either.
* Chow et al.'s algorithms constrain a percentile risk of the cost (CVaR, or a chance constraint) and
  project lambda onto [0, lambda_max], with step sizes on separate time scales; the reference (and this class)
  constrain the expected cost and project onto [0, inf) only.

The benchmark grid of RL-Safety-Algorithms (``experiments/safety_settings.py``) searched target_kl in
{1e-4, 1e-3, 1e-2} and lambda_lr in {0.001, 0.01, 0.1} for PDO; which values the SCPO paper's plots
used is not stated.  The defaults below are ``pdo/defaults.py``'s.
"""

from __future__ import annotations

from dataclasses import replace

from saferl.algos.base import register
from saferl.algos.lagrangian import weighted_cost_advantage
from saferl.algos.return_scaled import advantage_scale_param
from saferl.algos.second_order import natural_step
from saferl.algos.trpo_lag import TRPOLag
from saferl.foundation.hparams import choice, declare, real

_REF = "RL-Safety-Algorithms "


def _cited(name, value, source):
    """TRPO-Lag's declaration of ``name`` with PDO's default ``value`` and the reference it comes from."""
    param = TRPOLag.defaults[name]
    return replace(param, default=param.check(name, value), doc=f"{param.doc}; PDO: {source}")


@register
class PDO(TRPOLag):
    name = "pdo"
    description = (
        "PDO (Chow et al. 2018, as Gronauer's RL-Safety-Algorithms): natural-gradient step on the "
        "Lagrangian, Adam dual ascent on the multiplier."
    )
    defaults = declare(
        TRPOLag.defaults,
        target_kl=_cited("target_kl", 0.001, _REF + "pdo/defaults.py target_kl=0.001"),
        cg_iters=_cited("cg_iters", 10, _REF + "npg/npg.py cg_iters=10"),
        cg_damping=_cited("cg_damping", 0.1, _REF + "npg/npg.py cg_damping=0.1"),
        backtracks=_cited("backtracks", 15, _REF + "trpo/trpo.py adjust_step_direction total_steps=15"),
        decay=_cited("decay", 0.8, _REF + "trpo/trpo.py adjust_step_direction decay=0.8"),
        critic_epochs=_cited("critic_epochs", 5, _REF + "iwpg/iwpg.py train_v_iterations=5"),
        critic_minibatches=_cited("critic_minibatches", 16, _REF + "iwpg/iwpg.py num_mini_batches=16"),
        critic_lr=_cited("critic_lr", 1e-3, _REF + "iwpg/iwpg.py vf_lr=1e-3"),
        max_grad_norm=_cited("max_grad_norm", 0.0, _REF + "iwpg/iwpg.py use_max_grad_norm=False"),
        lagrange_init=_cited("lagrange_init", 0.001, _REF + "pdo/pdo.py lagrangian_multiplier_init=0.001"),
        lagrange_lr=_cited("lagrange_lr", 0.001, _REF + "pdo/defaults.py lambda_lr=0.001"),
        lagrange_optimizer=_cited("lagrange_optimizer", "adam", _REF + "pdo/defaults.py lambda_optimizer='Adam'"),
        line_search_kl=real(
            1.5, "(0, inf)", "accept a step whose mean KL <= this * target_kl; " + _REF + "trpo/trpo.py: 1.5"
        ),
        advantage_scale=advantage_scale_param("return_std", _REF + "iwpg.py"),
        line_search_surrogate=choice(
            "reward",
            ("reward", "lagrangian"),
            "the surrogate a step must not decrease: reward (E[ratio A_r], "
            + _REF
            + "trpo/trpo.py on iwpg.py's loss) or lagrangian "
            "(E[ratio (A_r - lambda A_c)], as TRPO-Lag)",
        ),
    )

    def reward_advantage(self, agent, batch, adv_r, adv_c):
        """A_r - sum_i lambda_i A_c,i: the advantage whose gradient is pdo.py's p = g - lambda b."""
        adv_c = adv_c[:, 0] if adv_c.shape[1] == 1 else adv_c
        return adv_r - weighted_cost_advantage(agent.extra["lagrange"].multiplier, adv_c)

    def policy_step(self, agent, batch):
        delta = self.hp["target_kl"]
        adv_r, adv_c = self.scaled_advantages(agent, batch)
        adv = self.reward_advantage(agent, batch, adv_r, adv_c)
        grads = self.gradients(agent, batch, adv, adv_c[:, :0])  # p = g - lambda b (no cost rows needed)
        hinv_p = self.solve(self.fisher_matvec(agent, batch), grads.g[None])[0]
        step = natural_step(grads.g, hinv_p, delta)
        checked = adv_r if self.hp["line_search_surrogate"] == "reward" else adv  # the "reward" metric's advantage
        params, metrics = self.line_search(agent, batch, checked, adv_c[:, :0], grads.scale, step, self.acceptable)
        agent, stats_metrics = self.with_batch_returns(agent.replace(actor_params=params), batch)
        return agent, {**metrics, **stats_metrics}

    def acceptable(self, candidate, base):
        """trpo.py's test of a candidate (``candidate``, ``base``: the line search's metrics of the step and of
        theta_k): mean KL <= line_search_kl * delta and the checked surrogate not decreased."""
        kl_bound = float(self.hp["line_search_kl"]) * self.hp["target_kl"]
        return (candidate["kl"] <= kl_bound) & (candidate["reward"] >= base["reward"])
