"""SCPO's experiments: Figs. 5 and 15, CartSafe."""
