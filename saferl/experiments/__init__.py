"""Experiments of many runs: grid files of training jobs, locally or on Ray."""
