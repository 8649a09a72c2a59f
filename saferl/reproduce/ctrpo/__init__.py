"""C-TRPO's experiments: Table 1, Figs. 2 and 3, the ablations."""
