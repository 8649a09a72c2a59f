"""Shared machinery: networks, rollouts, GAE, trust-region solvers, Lagrange multipliers."""
