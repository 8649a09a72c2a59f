"""Canary's experiments (VaR constraints via Cantelli)."""
