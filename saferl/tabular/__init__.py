"""Tabular episodic CMDPs with step-wise constraints, SVAE and its baselines (issue 5).

Modules
-------
- :mod:`saferl.tabular.cmdp`: the model (``CMDP``), exact evaluation, the safe subgraph of eq. 1,
  the optimal safe policy, Var* (eq. 4), B(G_safe), S*, kappa and C(M) (eqs. 7-8).  float64 numpy.
- :mod:`saferl.tabular.envs`: the instances of App. H (navigation gridworld, two-step variance
  instance, safety-identification instance, recursive-elimination instance).
- :mod:`saferl.tabular.learners`: SVAE (Algorithm 1), SVAE (Hoeffding), SVAE (Hoeffding-P),
  SVAE w/o propagation, SUCBVI, MVP-V, MVP-V + filter; jit + scan over episodes + vmap over runs;
  metrics (regret, strong regret, violation, moving averages).
- :mod:`saferl.reproduce` (``svae_table1``, ``svae_table2``, ``svae_table3``, ``svae_fig6``): the
  ``saferl reproduce`` targets svae-table1/2/3, svae-fig6.

Status (issue 5 numbered points)
--------------------------------
1. done: model, exact evaluation, safe subgraph (eq. 1), pi*, Var* (exact by enumeration of safe
   deterministic policies; None above 200k policies), B(G_safe), S*, kappa, C(M).
2. done: R(K), R_+(K) from exact values; Viol(K) along sampled trajectories; exact per-episode
   expected violation; trailing moving averages (<= 500 episodes).
3. done: SVAE (Algorithm 1) with alpha (bonus) and beta (cost radius) multipliers.
4. done: SVAE (Hoeffding), SVAE (Hoeffding-P), SVAE w/o propagation.
5. implemented: SUCBVI (+ recursive filter; default UCBVI-CH bonus, option "SUCBVI (BF)"), MVP-V,
   MVP-V + filter.  Their bonus forms are written from the original papers' designs as far as we
   could reach them (baselines' docstring: what is still our reading).
6. done: jax jit + lax.scan over episodes + vmap over runs; all methods share one compile per shape.
7-10. done: svae-table1, svae-table2, svae-table3, svae-fig6 (saferl/reproduce/svae_*.py).  Each
   figure against the paper's, with the gap and what drives it: docs/results/svae-studies-full.md.
   Unvisited pairs follow App. B.1 (uniform P^ at zero count, ``zero_count="uniform"``; option
   ``"cap"``); H.5 pays each branch's return at its last step (option ``reward_layout="spread"``).
   The paper's MVP-V figures (34-47 x 10^3 regret) are not reproduced.
11. paper multipliers (App. H.6) are the defaults; ``saferl reproduce svae-table1 --tune`` runs the development/validation selection (saferl/reproduce/svae/tune.py).
Tests: tests/tabular (brute-force safe subgraph, MC evaluation, C(M), Var*, bonus, Lemma 1, H.4/H.5
behaviour, smoke runs of every target; test_planner: Q of the planner against eq. 10 by hand, Sigma_V
(eq. 5) by hand, MVP-V against a reference replay, fingerprints of the four studies).
"""

from saferl.tabular.cmdp import CMDP, evaluate, identification_complexity, safe_subgraph  # noqa: F401
