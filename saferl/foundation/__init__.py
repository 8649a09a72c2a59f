"""Foundations: immutable pytrees, spaces, errors, hashing, atomic files, JAX set-up, hyper-parameter declarations.
Imports nothing of saferl."""
