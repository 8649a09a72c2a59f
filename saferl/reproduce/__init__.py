"""``saferl reproduce TARGET --scale S``: the paper experiments, declared as data.

The framework (:mod:`saferl.reproduce.framework`): ``@target(name, description, scales=...,
checks=..., options=...)`` declares a target, its scales (:class:`Scale`: steps, seeds, expected
wall time, its own settings) and its acceptance checks (functions of its rows); :func:`run` runs
one and writes ``results.json`` (rows, checks, the provenance of every training run it used,
figures).  Shared pieces: :mod:`~saferl.reproduce.deep_rl` (the deep-RL scales, training or reusing
runs, tabulating them), :mod:`~saferl.reproduce.svae.common` (the tabular SVAE scales),
:mod:`saferl.analysis.plotting` (figure helpers).

Targets, one module each:

* deep RL: ``safety-demo`` (make demo), ``foundation-pointgoal``, ``ctrpo-pointgoal``, ``canary-table1``,
  ``canary-fig5``, ``scpo-fig5``, ``scpo-cartsafe``, ``scpo-fig15``;
* tabular / exact: ``ctrpo-fig2``, ``canary-fig2``, ``svae-table1`` (+ ``--tune``,
  :mod:`~saferl.reproduce.svae.tune`), ``svae-table2``, ``svae-table3``, ``svae-fig6``.
"""

from __future__ import annotations

# every target module, imported explicitly: a missing or misspelt one fails here
from saferl.reproduce import (
    foundation_pointgoal,  # noqa: E402,F401  (deep RL)
    safety_demo,  # noqa: E402,F401
)
from saferl.reproduce.canary import fig2 as canary_fig2  # noqa: E402,F401
from saferl.reproduce.canary import fig5 as canary_fig5  # noqa: E402,F401
from saferl.reproduce.canary import table1 as canary_table1  # noqa: E402,F401
from saferl.reproduce.canary import theory as canary_theory  # noqa: E402,F401
from saferl.reproduce.ctrpo import fig2 as ctrpo_fig2  # noqa: E402,F401  (tabular / exact)
from saferl.reproduce.ctrpo import fig3 as ctrpo_fig3  # noqa: E402,F401
from saferl.reproduce.ctrpo import pointgoal as ctrpo_pointgoal  # noqa: E402,F401
from saferl.reproduce.ctrpo import table1 as ctrpo_table1  # noqa: E402,F401
from saferl.reproduce.ctrpo.ablations import beta as ctrpo_beta  # noqa: E402,F401
from saferl.reproduce.ctrpo.ablations import cost_noise as ctrpo_cost_noise  # noqa: E402,F401
from saferl.reproduce.ctrpo.ablations import hysteresis as ctrpo_hysteresis  # noqa: E402,F401
from saferl.reproduce.ctrpo.ablations import phi as ctrpo_phi  # noqa: E402,F401
from saferl.reproduce.framework import SCALE_NAMES, Scale, Target, get, run, target, targets
from saferl.reproduce.scpo import cartsafe as scpo_cartsafe  # noqa: E402,F401
from saferl.reproduce.scpo import fig5 as scpo_fig5  # noqa: E402,F401
from saferl.reproduce.scpo import fig15 as scpo_fig15  # noqa: E402,F401
from saferl.reproduce.svae import fig6 as svae_fig6  # noqa: E402,F401
from saferl.reproduce.svae import table1 as svae_table1  # noqa: E402,F401
from saferl.reproduce.svae import table2 as svae_table2  # noqa: E402,F401
from saferl.reproduce.svae import table3 as svae_table3  # noqa: E402,F401
from saferl.training.reuse import record_run

__all__ = ["SCALE_NAMES", "Scale", "Target", "get", "record_run", "run", "target", "targets"]
