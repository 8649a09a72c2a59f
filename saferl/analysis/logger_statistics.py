"""Episode statistics as the PyTorch loggers of the field compute them, from a run's progress columns.

SafePO's and OmniSafe's loggers (the C-TRPO authors' code, milosen/ctrpo ``algorithms/baselines/*.py``) append
every finished episode's return and cost to a 50-episode deque, store ``np.mean(deque)`` after each append, and log
an epoch's ``Metrics/EpRet`` / ``Metrics/EpCost`` as the mean of the values stored during it; a paper's "final"
value is the last epoch's.  saferl logs that statistic itself for windowed runs (``constraint.window``:
``episode_cost_window`` and ``episode_return_window``, :func:`saferl.core.rollout.cost_window_snapshot_mean`).

A run that logged only the per-iteration means (``episode_return``, ``episode_cost`` and the count ``episodes``)
gets it by :func:`windowed_iteration_means`: every episode stands in for its iteration's mean, so the result is
exact where an iteration's episodes are equal and otherwise differs only by the order of the episodes within the
iteration (under one policy they are identically distributed, so the expectation is the same).
:func:`final_windowed` picks, per seed, the logged column or this reconstruction, and says which.
"""

from __future__ import annotations

import numpy as np

#: SafePO's / OmniSafe's deque length (``deque(maxlen=50)``; OmniSafe's ``window_lens`` 50)
LOGGER_WINDOW = 50


def windowed_iteration_means(means, counts, window: int = LOGGER_WINDOW) -> np.ndarray:
    """Per iteration, the mean over its finished episodes of the ``window``-episode rolling mean right after each,
    every episode taking its iteration's mean (``means``, ``counts``: one per iteration, in order); NaN for an
    iteration in which no episode finished."""
    means, counts = np.asarray(means, float), np.asarray(counts, float)
    if means.shape != counts.shape or means.ndim != 1:
        raise ValueError(f"means and counts must be 1-d and of one length, got {means.shape} and {counts.shape}")
    counts = np.where(np.isfinite(counts) & np.isfinite(means), np.round(counts), 0).astype(int)
    episodes = np.repeat(np.where(counts > 0, means, 0.0), counts)
    prefix = np.concatenate([[0.0], np.cumsum(episodes)])
    ends = np.arange(1, len(episodes) + 1)
    starts = np.maximum(ends - window, 0)
    rolling = (prefix[ends] - prefix[starts]) / (ends - starts)  # the deque's mean after each episode
    out = np.full(len(means), np.nan)
    boundaries = np.concatenate([[0], np.cumsum(counts)])
    for i, (lo, hi) in enumerate(zip(boundaries[:-1], boundaries[1:])):
        if hi > lo:
            out[i] = rolling[lo:hi].mean()
    return out


def final_windowed(logged, means, counts, window: int = LOGGER_WINDOW) -> tuple[np.ndarray, list[str]]:
    """Per seed (rows of the ``(seeds, iterations)`` arrays), the last epoch's windowed mean: the ``logged``
    column's last value where the run logged it (``logged`` None or NaN there: not logged), else
    :func:`windowed_iteration_means` of ``means`` and ``counts``; and per seed its source, "logged" or
    "reconstructed"."""
    means = np.atleast_2d(np.asarray(means, float))
    counts = np.atleast_2d(np.asarray(counts, float))
    values, sources = [], []
    for seed in range(means.shape[0]):
        last = np.nan if logged is None else np.atleast_2d(np.asarray(logged, float))[seed, -1]
        if np.isfinite(last):
            values.append(float(last))
            sources.append("logged")
        else:
            values.append(float(windowed_iteration_means(means[seed], counts[seed], window)[-1]))
            sources.append("reconstructed")
    return np.array(values), sources
