"""SafePO's logger statistic (the last epoch's 50-episode rolling mean) from a run's iteration means."""

from collections import deque

import numpy as np
import pytest

from saferl.analysis.logger_statistics import final_windowed, windowed_iteration_means


def safepo_epoch_values(episodes_per_epoch: list[list[float]], window: int) -> list[float]:
    """SafePO's logger, literally: a deque(maxlen=window), np.mean stored after each append, the epoch's mean."""
    buffer, out = deque(maxlen=window), []
    for episodes in episodes_per_epoch:
        stored = []
        for value in episodes:
            buffer.append(value)
            stored.append(np.mean(buffer))
        out.append(np.mean(stored) if stored else np.nan)
    return out


@pytest.mark.parametrize("window", [1, 3, 50])
def test_exact_where_an_iterations_episodes_are_equal(window):
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 7, size=30)
    means = rng.normal(size=30) * 10
    expected = safepo_epoch_values([[m] * c for m, c in zip(means, counts)], window)
    got = windowed_iteration_means(means, counts, window)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert np.isnan(got[counts == 0]).all()


def test_hand_computed_case():
    # window 2; iterations of 1, 2, 0 and 1 episodes with means 2, 4, -, 6:
    # episodes 2 | 4 4 | - | 6 -> rolling means 2 | 3 4 | - | 5
    got = windowed_iteration_means([2.0, 4.0, np.nan, 6.0], [1, 2, 0, 1], window=2)
    np.testing.assert_allclose(got, [2.0, 3.5, np.nan, 5.0])


def test_differs_from_the_logger_only_by_the_order_within_an_iteration():
    """With unequal episodes in an iteration the reconstruction is the logger's value for one order of them, here
    equal to the mean over orders: bounded by the extremes of the sorted orders."""
    epochs = [[1.0, 9.0], [3.0, 5.0]]
    got = windowed_iteration_means([np.mean(e) for e in epochs], [2, 2], window=3)
    low = safepo_epoch_values([sorted(e, reverse=True) for e in epochs], 3)[-1]
    high = safepo_epoch_values([sorted(e) for e in epochs], 3)[-1]
    assert min(low, high) <= got[-1] <= max(low, high)


def test_final_windowed_prefers_the_logged_column_and_says_which():
    means = np.array([[1.0, 2.0], [3.0, 4.0]])
    counts = np.full((2, 2), 10.0)
    logged = np.array([[np.nan, 7.5], [np.nan, np.nan]])  # seed 0 logged it; seed 1 did not (NaN)
    values, sources = final_windowed(logged, means, counts)
    assert sources == ["logged", "reconstructed"]
    assert values[0] == 7.5
    np.testing.assert_allclose(values[1], windowed_iteration_means(means[1], counts[1])[-1])
    values, sources = final_windowed(None, means, counts)
    assert sources == ["reconstructed", "reconstructed"]


def test_mismatched_lengths_are_named():
    with pytest.raises(ValueError, match="one length"):
        windowed_iteration_means([1.0, 2.0], [1])
