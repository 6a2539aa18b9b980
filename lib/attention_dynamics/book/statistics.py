"""The ledger's statistics, in one place, from ``scipy.stats``: binomial tails, the exact
Clopper–Pearson interval of a share, the sign test, Student's t interval of a mean and the
percentile bootstrap. The verdicts (:mod:`~attention_dynamics.book.verdicts`) and the notebooks
call these, so that every interval of the report is computed the same way."""

from __future__ import annotations

import numpy as np
from scipy import stats


def binomial_tail(k: int, n: int, p: float, upper: bool) -> float:
    """P(X >= k) (``upper``) or P(X <= k) (not ``upper``) for X ~ Binomial(n, p)."""
    if not 0 <= p <= 1:
        raise ValueError(f"p must be in [0, 1]; got {p!r}")
    return float(stats.binom.sf(k - 1, n, p) if upper else stats.binom.cdf(k, n, p))


def check_level(level: float) -> None:
    """Refuse a confidence level outside (0, 1), naming it."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1); got {level!r}")


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact two-sided Clopper–Pearson interval at ``level`` for a proportion with ``k``
    successes in ``n`` trials (``binomtest(k, n).proportion_ci(level, "exact")``): its low end
    solves P(X >= k; p) = (1 - level) / 2 (0 when k = 0), its high end P(X <= k; p) =
    (1 - level) / 2 (1 when k = n)."""
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1; got k={k!r}, n={n!r}")
    check_level(level)
    interval = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    return float(interval.low), float(interval.high)


def sign_test_p(k: int, n: int) -> float:
    """The one-sided p-value of ``k`` of ``n`` paired runs going the claimed way, against a
    coin flip: P(X >= k) for X ~ Binomial(n, 1/2)."""
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1; got k={k!r}, n={n!r}")
    return float(stats.binomtest(k, n, 0.5, alternative="greater").pvalue)


def t_interval(values, level: float = 0.95) -> tuple[float, float]:
    """Student's t interval ``(low, high)`` at ``level`` of the mean of ``values`` (1-D, at
    least 2 of them; e.g. one value per disjoint part of a probe). Values without spread give
    the point ``(mean, mean)``."""
    data = np.asarray(values, dtype=float)
    if data.ndim != 1 or data.size < 2:
        raise ValueError(f"values must be 1-D with at least 2 entries; got shape {data.shape}")
    check_level(level)
    if np.all(data == data[0]):  # scipy's interval is undefined at a zero scale
        return float(data[0]), float(data[0])
    low, high = stats.t.interval(level, data.size - 1, loc=data.mean(), scale=stats.sem(data))
    return float(low), float(high)


def bootstrap_interval(values, statistic, level: float = 0.95, n_resamples: int = 10_000,
                       seed: int = 0) -> tuple[float, float]:
    """The percentile bootstrap interval ``(low, high)`` at ``level`` of ``statistic`` (a
    function of a 1-D array, e.g. a mean over seeds) over resamples of ``values`` with
    replacement, drawn from ``seed``."""
    data = np.asarray(values, dtype=float)
    if data.ndim != 1 or data.size < 2:
        raise ValueError(f"values must be 1-D with at least 2 entries; got shape {data.shape}")
    check_level(level)
    result = stats.bootstrap((data,), statistic, n_resamples=n_resamples, confidence_level=level,
                             method="percentile", vectorized=False,
                             rng=np.random.default_rng(seed))
    return float(result.confidence_interval.low), float(result.confidence_interval.high)
