"""``ctrpo-beta``, ``ctrpo-hysteresis``, ``ctrpo-cost-noise``, ``ctrpo-phi``: the C-TRPO paper's ablations.

Milosevic, Mueller, Scherf, "Embedding Safety into RL: A New Take on Trust Region Methods" (arXiv:2411.02957):

* ``ctrpo-beta`` -- App. D.1, Fig. 8: C-TRPO on AntVelocity for several barrier weights beta (b_H = 0.8 b).
  Claims: the return does not degrade up to beta = 1 and does above it; beta "modulates the stringency with which
  C-TRPO satisfies the constraint" (cost and cost regret fall as beta grows).
* ``ctrpo-hysteresis`` -- App. D.1, Fig. 9: the hysteresis fraction b_H / b on AntVelocity (beta = 1; "0 < b_H < b
  seems beneficial"); and App. D.2, Fig. 10: C-TRPO and CPO, each with (b_H = 0.8 b) and without hysteresis, the IQM
  over seeds x tasks of the PPO-normalised return, the threshold-normalised cost V_c / b and the cost regret over
  CPO's (no hysteresis).  Claims: hysteresis improves safety for both, slightly reduces C-TRPO's return, and
  "even C-TRPO without hysteresis achieves lower cost regret compared to CPO with hysteresis".
* ``ctrpo-cost-noise`` -- App. D.3, Fig. 11: C-TRPO on AntVelocity with white noise of std sigma on the cost
  critic's values and bootstrap values before GAE (``hparams.cost_value_noise``, :mod:`saferl.algos.ctrpo`).
  Claims: the final return falls slightly at sigma = 0.5, the cost regret grows with sigma.
* ``ctrpo-phi`` -- Sec. 5 and App. B.2.1: phi(x) = x log x, "motivated by its superior performance in our
  experiments", against the log barrier phi(x) = -log x (the paper shows no figure of it).

beta, b_H and sigma are traced hyper-parameters: each sweep trains every value x every seed in one program
(:mod:`saferl.training.in_program_sweep`), one run directory ``out/runs/<kind>_sweep``; a point's runners are what a
separate run with that value trains.  phi and CPO's hysteresis are static (separate runs).  Fig. 10's and phi's runs use
ctrpo-table1's layout and budgets (``out/<task>/runs/<method>``, :func:`ctrpo_table1.task_base`), so their C-TRPO,
CPO and PPO runs are ctrpo-table1's: run both targets into one ``--out`` and they are trained once.

Where the values come from (the figures' values are not in the paper's text)
------------------------------------------------------------------------------
* sigma = 0.05, 0.1, 0.2, 0.5: the authors' runs (milosen/ctrpo ``data/runs/noise/noise_0_05`` ... ``noise_0_5``,
  ``noise_level`` in their config.json, drawn by ``plots/plots_noise.ipynb``), plus sigma = 0 as the reference
  (their notebook's noiseless entry finds no run); their noise runs have ``hyst_frac`` 1.0, so ours run without
  hysteresis too, beta = 1, 10M steps, 5 seeds.
* Fig. 10: ``data/runs/ablation/<task>/{c-trpo, c-trpo-hyst, cpo-hyst}`` (``hyst_frac`` 1.0 / 0.8 / 0.8, beta 1;
  CPO without hysteresis is the benchmark's CPO) and ``plots/helpers.py`` / ``plots_ablation.ipynb`` (return over
  PPO's mean final return, cost over 25, regret over the mean final regret of CPO without hysteresis; IQM over
  5 seeds x 8 tasks, rliable's stratified bootstrap, 50,000 resamples).
* beta and b_H: no run, script or notebook of the repository sweeps them, so the lists are ours: beta spans
  0.05 (the value in a comment of the authors' ``c-trpo-noise.py`` defaults) to 5 around the paper's 1, since the
  claim is about beta <= 1 against beta > 1; b_H / b from 0.6 to 1 (no hysteresis) around the paper's 0.8.
* phi: neither runs nor a figure exist; the target compares the two on the benchmark's tasks.

Where it differs, and why
-------------------------
* Our C-TRPO, CPO and environments are saferl's, in the authors' harness (ctrpo-table1's docstring; its batch of
  10 envs x 2,000 steps since commit d92f081), "final" = the mean over the last 10% of iterations.  Intervals of a
  sweep point are the 95% bootstrap interval of the mean over seeds (:func:`verdicts.bootstrap_mean`); Fig. 10's are
  IQMs over seeds x tasks as the authors'.
* Our C-TRPO starts outside recovery (:mod:`saferl.algos.ctrpo`); the authors' starts in recovery.
* The cost-value noise: see :mod:`saferl.algos.ctrpo` (each state's value corrupted once, as the authors'
  ``NoisyBuffer``; a terminal step's bootstrap differs).
* ``smoke`` (tests) runs on ToyReach; ``cpu`` runs the sweeps on AntVelocity far below 10M steps and Fig. 10 /
  phi on the navigation tasks only (:data:`CPU_TASKS`), so its numbers are not the paper's in magnitude.

Modules
-------
* :mod:`~saferl.reproduce.ctrpo.ablations.common`: what the four share (constants, scales, runs, rows, the curve
  figure); :mod:`~saferl.reproduce.ctrpo.ablations.sweeps`: what the three sweep targets share (check items, a
  sweep's result);
* one module per target: :mod:`~saferl.reproduce.ctrpo.ablations.beta`,
  :mod:`~saferl.reproduce.ctrpo.ablations.hysteresis` (with Fig. 10's IQM rows and figure),
  :mod:`~saferl.reproduce.ctrpo.ablations.cost_noise`, :mod:`~saferl.reproduce.ctrpo.ablations.phi`.

This package names their public functions and constants too (``ablations.fig10_rows``, ``ablations.CPU_TASKS``).
"""

from __future__ import annotations

from saferl.reproduce.ctrpo.ablations.beta import beta_checks, run_beta
from saferl.reproduce.ctrpo.ablations.common import (
    ABLATION_TASK,
    ANT_SWEEP_COMPILE_SECONDS,
    ANT_SWEEP_STEPS_PER_SECOND,
    BOOTSTRAP_REPS,
    CPU_SWEEP_SEEDS,
    CPU_SWEEP_STEPS,
    CPU_TASKS,
    FIG10_METHODS,
    FIG10_NAMES,
    HYST,
    LIMIT,
    PHI_METHODS,
    QUANTITIES,
    SWEEPS,
    interval_row,
    plan_sweep,
    plan_tasks,
    plot_curves,
    point_entries,
    scales,
    seed_values,
    sweep_config,
    task_rows,
    train_sweep,
    train_tasks,
)
from saferl.reproduce.ctrpo.ablations.cost_noise import cost_noise_checks, run_cost_noise
from saferl.reproduce.ctrpo.ablations.hysteresis import (
    FIG10_SCORES,
    fig10_rows,
    hysteresis_checks,
    plan_hysteresis,
    plot_fig10,
    run_hysteresis,
)
from saferl.reproduce.ctrpo.ablations.phi import phi_checks, run_phi
from saferl.reproduce.ctrpo.ablations.sweeps import BOUND, rank_correlation, sweep_result

__all__ = [
    "ABLATION_TASK",
    "ANT_SWEEP_COMPILE_SECONDS",
    "ANT_SWEEP_STEPS_PER_SECOND",
    "BOOTSTRAP_REPS",
    "BOUND",
    "CPU_SWEEP_SEEDS",
    "CPU_SWEEP_STEPS",
    "CPU_TASKS",
    "FIG10_METHODS",
    "FIG10_NAMES",
    "FIG10_SCORES",
    "HYST",
    "LIMIT",
    "PHI_METHODS",
    "QUANTITIES",
    "SWEEPS",
    "beta_checks",
    "cost_noise_checks",
    "fig10_rows",
    "hysteresis_checks",
    "interval_row",
    "phi_checks",
    "plan_hysteresis",
    "plan_sweep",
    "plan_tasks",
    "plot_curves",
    "plot_fig10",
    "point_entries",
    "rank_correlation",
    "run_beta",
    "run_cost_noise",
    "run_hysteresis",
    "run_phi",
    "scales",
    "seed_values",
    "sweep_config",
    "sweep_result",
    "task_rows",
    "train_sweep",
    "train_tasks",
]
