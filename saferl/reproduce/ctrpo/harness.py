"""The C-TRPO authors' harness: what their code (milosen/ctrpo, the runs of arXiv:2411.02957) runs where saferl's
defaults differ, applied to every config of the C-TRPO targets (``ctrpo-table1``, ``ctrpo-fig3`` and the ablations).

The paper lists no hyper-parameters, so what it ran is its authors' code: ``algorithms/c-trpo.py`` and
``algorithms/baselines/*.py`` (SafePO's implementations), with the command-line defaults of
``baselines/common/utils/config.py`` that every stored run's ``config.json`` shows.  The decision records
docs/decisions/059-ctrpo-harness-networks-and-trust-region.md, docs/decisions/060-ctrpo-harness-authors-code.md and
docs/decisions/062-ctrpo-harness-methods-as-run.md have the survey behind each constant, what was measured, and
what is left different on purpose.  saferl's own defaults stay as they are: only these targets'
configs change.
"""

from __future__ import annotations

from pathlib import Path

import saferl.algos  # noqa: F401  (registers every algorithm)
from saferl.algos import base as algos
from saferl.algos.ppo import PPO
from saferl.algos.second_order import TrustRegionAlgorithm
from saferl.reproduce import deep_rl
from saferl.reproduce.framework import PaperBudget
from saferl.training import config as configlib

PAPER_STEPS = 10_000_000  # the paper's runs (Sec. 5)
PAPER_SEEDS = 5  # the paper's runs (Sec. 5)
#: the budget of every C-TRPO claim: Table 1, Fig. 3 and the ablations
PAPER_BUDGET = PaperBudget(PAPER_STEPS, PAPER_SEEDS, "C-TRPO paper (arXiv:2411.02957) Sec. 5: 10M steps, 5 seeds")

#: The authors' batch: ``num_envs`` 10 and ``steps_per_epoch`` 20,000 (every stored run's config.json), so 10 envs x
#: 2,000 steps an update and 500 updates in a 10M-step run; the tasks' ``config_defaults`` are 16 x 1,000.  A
#: trust-region method's progress is per update (each step is bounded by delta), so at equal env steps a 16,000-step
#: batch is 25% more updates ahead, and Reg+ sums 625 iterations instead of 500 at 10M
#: (docs/decisions/061-ctrpo-harness-batch.md).
AUTHORS_BATCH = {"num_envs": 10, "rollout_steps": 2_000}
#: The authors' networks where saferl's defaults differ (milosen/ctrpo ``algorithms/baselines/common/model.py``,
#: shared by all their methods): every actor starts at std 1 (``log_std = zeros``; saferl's default is exp(-0.5))
#: and every layer has PyTorch's ``nn.Linear`` initialisation (saferl's default is orthogonal).  The rest of
#: ``network`` is saferl's default, the paper's 64x64 tanh networks.
HARNESS_NETWORK = {"init_log_std": 0.0, "init": "torch_linear"}
#: Samples per critic minibatch of the authors' trust-region methods (``batch_size`` 128 in c-trpo.py, cpo.py,
#: pcpo.py, trpo_lag.py; 10 passes, saferl's default too); saferl's default is 16 minibatches per batch.
AUTHORS_CRITIC_MINIBATCH = 128
#: The weight of sum(theta^2) in every critic's loss of the authors' code (``use_critic_norm``, default on off
#: Isaac Gym: ``loss_r += param.pow(2).sum() * 0.001`` in c-trpo.py and every baseline); saferl's default is 0.
AUTHORS_CRITIC_L2 = 1e-3
#: The loop every first-order method of the authors' code shares (SafePO's: ``default_cfg`` of ppo.py, ppo_lag.py,
#: cppo_pid.py, focops.py, cup.py, p3o.py, ipo.py): ``learning_iters`` 40 passes, each followed by the full-batch
#: ``kl_divergence(old_distribution, new_distribution)`` against ``target_kl`` 0.02 (``if kl > target_kl: break``),
#: and ``LinearLR(actor_optimizer, start_factor=1.0, end_factor=0.0, total_iters=epochs)`` stepped once per
#: update; one backward of loss_pi + loss_r + loss_c and ``clip_grad_norm_(policy.parameters(), 40)`` over the actor
#: and both critics together.  saferl's defaults: 10 epochs, PPO's rule (the minibatch mean against 1.5 target_kl),
#: a constant rate, separate clips.
AUTHORS_FIRST_ORDER = {
    "epochs": 40,
    "target_kl": 0.02,
    "kl_stop_estimate": "full_batch",
    "kl_stop_factor": 1.0,
    "lr_schedule": "linear",
    "grad_clip_scope": "joint",
}
#: Samples per minibatch of the authors' first-order methods (``batch_size`` 64 in their default_cfg)
AUTHORS_FIRST_ORDER_MINIBATCH = 64
#: J_c as every method of the authors' code reads it (``logger.get_stats("Metrics/EpCost")``): the epoch's mean of
#: the 50-episode deque's means stored at each episode end (c-trpo.py, baselines/*.py; SafePO's logger), so it lags
#: the current policy by about a 50-episode window; saferl's default is the batch's own episodes.
AUTHORS_COST_ESTIMATE = {"window": 50, "window_statistic": "snapshot_mean"}
#: The trust-region family's KL as the authors compute it: ``kl_divergence(old, new).mean()`` on a per-dimension
#: ``Normal`` averages over the action dimensions too (c-trpo.py, baselines/cpo.py, pcpo.py, trpo_lag.py, trpo.py), so
#: their delta 0.01 is d x 0.01 of saferl's summed KL (:mod:`saferl.algos.second_order`, step 3).
AUTHORS_TRUST_REGION = {"kl_reduction": "mean_over_action_dims"}
#: Per method, the authors' values where saferl's defaults differ (milosen/ctrpo algorithms/baselines/*.py and
#: common/utils/config.py, whose command-line defaults every stored run's config.json shows): every multiplier starts
#: at ``lagrangian_multiplier_init`` 0.001; FOCOPS's is SafePO's Adam multiplier (rate 0.035) and its advantage is
#: divided by 1 + nu (focops.py); CUP caps nu at ``CUP_NU`` 0.2, compares both stages with target_kl 0.02 and runs up
#: to 40 projection passes (cup.py); P3O's kappa is 10 (p3o.py ``default_cfg``, the runs of Table 1) on the
#: centred A_c of SafePO's buffer.  Where their code departs from the method's own paper, the paper's runs are what it
#: computed (docs/decisions/062-ctrpo-harness-methods-as-run.md): PCPO's reward step along ``fvp(x)`` = H H^-1 g
#: (pcpo.py), FOCOPS's surrogate scaled by the in-bound fraction (the (B, 1) - (B,) broadcast of focops.py), IPO's
#: feasible-side term mean(r A_c) / (t (J_c - b)) of the opposite sign (ipo.py); ctrpo_table1.AS_RUN labels those rows.
AUTHORS_METHOD_HPARAMS = {
    "ppo_lag": {"lagrange_init": 0.001},
    "trpo_lag": {"lagrange_init": 0.001},
    "cppo_pid": {"lagrange_init": 0.001},
    "pcpo": {"reward_direction": "fisher_product"},
    "ipo": {"barrier_form": "reversed_sign"},
    "focops": {
        "lagrange_init": 0.001,
        "lagrange_optimizer": "adam",
        "lagrange_lr": 0.035,
        "advantage_scaling": "one_plus_nu",
        "indicator_scope": "in_bound_fraction",
    },
    "cup": {"lagrange_init": 0.001, "multiplier_max": 0.2, "projection_epochs": 40},
    "p3o": {"kappa": 10.0, "cost_advantage": "centred"},
}


def authors_harness(cfg: dict) -> dict:
    """``cfg`` (resolved) with the authors' harness where saferl's defaults differ (no method of these targets
    overrides these keys):

    * every method: their networks (:data:`HARNESS_NETWORK`), the critics' L2 term (:data:`AUTHORS_CRITIC_L2`), their
      cost estimate J_c (:data:`AUTHORS_COST_ESTIMATE`), and its own values of :data:`AUTHORS_METHOD_HPARAMS`;
    * the trust-region family: Fisher-vector products on every sample (``fvp_obs = data["obs"][::1]`` in all their
      trust-region files; saferl's default every 4th), critic minibatches of :data:`AUTHORS_CRITIC_MINIBATCH`
      samples and their KL (:data:`AUTHORS_TRUST_REGION`);
    * the first-order family (PPO's subclasses): SafePO's loop (:data:`AUTHORS_FIRST_ORDER`), up to 40 epochs of
      minibatches of :data:`AUTHORS_FIRST_ORDER_MINIBATCH` samples, the full-batch KL(pi_k || pi) after each epoch
      against target_kl 0.02 itself, one gradient clip over actor and critics, and the policy's rate decayed
      linearly to 0 over the iterations of the paper's 10M-step runs (at ``cpu`` a run is those runs' first
      iterations, not a shorter run decayed faster)."""
    hparams = {**cfg["hparams"], "critic_l2": AUTHORS_CRITIC_L2}
    algo = algos.get(cfg["algo"])
    batch = int(cfg["num_envs"]) * int(cfg["rollout_steps"])
    if issubclass(algo, TrustRegionAlgorithm):
        hparams.update(
            AUTHORS_TRUST_REGION, fvp_subsample=1, critic_minibatches=max(1, batch // AUTHORS_CRITIC_MINIBATCH)
        )
    elif issubclass(algo, PPO):
        # the rate decays over the paper's 10M-step runs at every scale: a shorter run is their first iterations
        iterations = -(-PAPER_STEPS // batch)
        hparams.update(
            AUTHORS_FIRST_ORDER, minibatches=max(1, batch // AUTHORS_FIRST_ORDER_MINIBATCH), lr_decay_steps=iterations
        )
    hparams.update(AUTHORS_METHOD_HPARAMS.get(cfg["algo"], {}))
    return configlib.resolve(
        {
            **cfg,
            "network": {**cfg["network"], **HARNESS_NETWORK},
            "hparams": hparams,
            "constraint": {**cfg["constraint"], **AUTHORS_COST_ESTIMATE},
        }
    )


def harness_settings(scale) -> dict:
    """:func:`deep_rl.train_settings` of ``scale`` with the authors' batch (:data:`AUTHORS_BATCH`) where the scale
    leaves the batch to the task (``cpu``, ``full``); ``smoke`` keeps its own small one."""
    settings = deep_rl.train_settings(scale)
    if scale.get("num_envs") is None:
        settings = {**AUTHORS_BATCH, **settings}
    return settings


def plan_with_harness(methods: list, task: str, out: Path, base: dict) -> list[tuple[Path, dict]]:
    """:func:`deep_rl.plan_runs` with :func:`authors_harness` applied to every config."""
    return [(run_dir, authors_harness(cfg)) for run_dir, cfg in deep_rl.plan_runs(methods, task, out, base)]
