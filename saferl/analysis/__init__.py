"""Analysis of runs: metrics, verdicts, tables, plots, evaluation, rendering, benchmarks and diagnostics."""
