"""The ledger's statistics (book.statistics) against references computed another way."""

import math

import numpy as np
import pytest

from attention_dynamics.book.statistics import (
    bootstrap_interval,
    clopper_pearson,
    sign_test_p,
    t_interval,
)


@pytest.mark.parametrize("k, n", [(0, 1), (3, 5), (5, 5), (7, 8), (10, 24)])
def test_the_sign_test_is_a_sum_of_binomial_terms(k, n):
    assert sign_test_p(k, n) == pytest.approx(
        sum(math.comb(n, j) for j in range(k, n + 1)) / 2**n, abs=1e-15)


def test_the_t_interval_of_values_without_spread_is_their_value():
    assert t_interval([1.0, 1.0, 1.0]) == (1.0, 1.0)
    low, high = t_interval([1.0, 1.0, 1.0 + 1e-9])  # any spread gives a proper interval
    assert low < 1.0 < high


def test_the_t_interval_uses_the_printed_quantile():
    values = np.array([1.0, 2.0, 4.0, 3.0, 6.0, 5.0, 8.0, 7.0])
    half = 2.3646 * values.std(ddof=1) / math.sqrt(8)  # t(0.975, 7) from a printed table
    low, high = t_interval(values)
    assert (low, high) == pytest.approx((values.mean() - half, values.mean() + half), abs=2e-4)
    assert t_interval(values, level=0.99)[0] < low  # wider at a higher level
    with pytest.raises(ValueError, match="at least 2"):
        t_interval([1.0])
    with pytest.raises(ValueError, match="level"):
        t_interval(values, level=95)


def test_the_bootstrap_matches_resampling_by_hand():
    data = np.array([330.0, 410.0, 455.0, 520.0, 621.0])
    low, high = bootstrap_interval(data, np.mean, seed=3)
    # the same percentile bootstrap written out with numpy (another generator, many draws)
    draws = np.random.default_rng(11).integers(0, 5, (200_000, 5))
    by_hand = np.percentile(data[draws].mean(axis=1), [2.5, 97.5])
    assert (low, high) == pytest.approx(tuple(by_hand), rel=0.02)
    assert bootstrap_interval(data, np.mean, seed=3) == (low, high)  # seeded
    assert bootstrap_interval(np.full(4, 2.5), np.mean) == (2.5, 2.5)


def test_the_exact_interval_is_exact_at_the_edges():
    # every seed shows the effect: the low end solves p^n = (1 - level) / 2
    assert clopper_pearson(6, 6, 0.90)[0] == pytest.approx(0.05 ** (1 / 6), abs=1e-12)
    assert clopper_pearson(0, 6, 0.90)[1] == pytest.approx(1 - 0.05 ** (1 / 6), abs=1e-12)
