"""Temporary alias of :mod:`saferl.reproduce.ctrpo_fig2` for tests/tabular/test_cnpg.py, which imports
``saferl.reproduce.ctrpo``; remove once that test imports ``ctrpo_fig2``.  Declares no target."""

from saferl.reproduce.ctrpo_fig2 import CONFIGS, safe_initialisations  # noqa: F401
