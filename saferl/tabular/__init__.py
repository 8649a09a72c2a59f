"""Tabular episodic CMDPs with step-wise constraints, SVAE and its baselines.

Modules
-------
- :mod:`saferl.tabular.cmdp`: the model (``CMDP``), exact evaluation, the safe subgraph of eq. 1,
  the optimal safe policy pi*, Var* (eq. 4; exact by enumeration of the safe deterministic policies,
  None above 200k policies), B(G_safe), S*, kappa and C(M) (eqs. 7-8).  float64 numpy.
- :mod:`saferl.tabular.envs`: the instances of App. H (navigation gridworld, two-step variance
  instance, safety-identification instance, recursive-elimination instance).
- :mod:`saferl.tabular.learners`: SVAE (Algorithm 1, with alpha (bonus) and beta (cost radius)
  multipliers), SVAE (Hoeffding), SVAE (Hoeffding-P), SVAE w/o propagation, SUCBVI (+ recursive
  filter; default UCBVI-CH bonus, option "SUCBVI (BF)"), MVP-V, MVP-V + filter; jax jit + lax.scan
  over episodes + vmap over runs, all methods sharing one compile per shape.  Metrics: R(K) and
  R_+(K) from exact values, Viol(K) along sampled trajectories, the exact per-episode expected
  violation, trailing moving averages (<= 500 episodes).
- :mod:`saferl.tabular.baselines`: the exploration bonuses and value caps of SVAE, its ablations,
  SUCBVI and MVP-V.  The baselines' bonus forms are written from the original papers' designs as far
  as we could reach them (its docstring says what is still our reading).
- :mod:`saferl.tabular.cnpg`: C-NPG on tabular discounted CMDPs (the C-TRPO paper, Sec. 3-4 and
  App. A-C): exact occupancies, values, gradients, Gramians and the LP.
- :mod:`saferl.reproduce.svae` (``table1``, ``table2``, ``table3``, ``fig6``): the
  ``saferl reproduce`` targets svae-table1/2/3, svae-fig6.  Each figure against the paper's, with
  the gap and what drives it: docs/results/svae-studies-full.md.  The paper's MVP-V figures
  (34-47 x 10^3 regret) are not reproduced.

Choices where the paper leaves room: unvisited pairs follow App. B.1 (uniform P^ at zero count,
``zero_count="uniform"``; option ``"cap"``); H.5 pays each branch's return at its last step (option
``reward_layout="spread"``).  The paper's multipliers (App. H.6) are the defaults;
``saferl reproduce svae-table1 --tune`` runs the development/validation selection
(:mod:`saferl.reproduce.svae.tune`).

Tests: tests/tabular (brute-force safe subgraph, MC evaluation, C(M), Var*, bonus, Lemma 1, H.4/H.5
behaviour, smoke runs of every target; test_planner: Q of the planner against eq. 10 by hand, Sigma_V
(eq. 5) by hand, MVP-V against a reference replay, fingerprints of the four studies).
"""

from saferl.tabular.cmdp import CMDP, evaluate, identification_complexity, safe_subgraph  # noqa: F401
