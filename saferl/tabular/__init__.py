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
- :mod:`saferl.reproduce.svae`: ``saferl reproduce`` targets svae-table1/2/3, svae-fig6.

Status (issue 5 numbered points)
--------------------------------
1. done: model, exact evaluation, safe subgraph (eq. 1), pi*, Var* (exact by enumeration of safe
   deterministic policies; None above 200k policies), B(G_safe), S*, kappa, C(M).
2. done: R(K), R_+(K) from exact values; Viol(K) along sampled trajectories; exact per-episode
   expected violation; trailing moving averages (<= 500 episodes).
3. done: SVAE (Algorithm 1) with alpha (bonus) and beta (cost radius) multipliers.
4. done: SVAE (Hoeffding), SVAE (Hoeffding-P), SVAE w/o propagation.
5. implemented: SUCBVI (+ recursive filter), MVP-V, MVP-V + filter.  Their bonus forms are written
   from the original papers' designs as we read them (constants in learners' docstring); not
   cross-checked against reference code.
6. done: jax jit + lax.scan over episodes + vmap over runs; all methods share one compile per shape.
   Full-scale H.3-H.5 (K = 10,000, 20 seeds) together: ~70 s on 2 shared cores.
7-10. done: svae-table1, svae-table2, svae-table3, svae-fig6 (saferl/reproduce/svae.py).
   Full-scale svae-table1 (8 envs x 5 seeds x 4 methods, K = 10,000): ~12.5 min on 2 shared cores.
   SVAE matches Table 1 (R_+ 1.42e3, Viol 1.29e3); MVP-V (+ filter) now trail SVAE (R_+ ~5.1e3, the
   paper's ~35-47e3 not reproduced); SUCBVI still beats SVAE on R_+ (1.06e3): its clip needs checking
   against Xiong et al. (saferl/tabular/baselines.py).
11. paper multipliers (App. H.6) are the defaults; ``saferl reproduce svae-table1 --tune`` runs the development/validation selection (saferl/reproduce/svae_tune.py).
Tests: tests/tabular (brute-force safe subgraph, MC evaluation, C(M), Var*, bonus, Lemma 1, H.4/H.5
behaviour, smoke runs of every target).
"""

from saferl.tabular.cmdp import CMDP, evaluate, identification_complexity, safe_subgraph  # noqa: F401
