"""The chapter's counts of seeds in words, as the ledger reads them (glued into the page)."""

from __future__ import annotations

from attention_dynamics.book.statistics import clopper_pearson
from attention_dynamics.book.verdicts import DIRECTIONAL_LEVEL

SHORT = {"sgd": "SGD", "em": "EM-like"}
"""The schedules' short names, by key."""


def on_seeds(k: int, n: int) -> str:
    """``k`` of ``n`` seeds in a claim's direction, in words, with the one-sided 95 % bounds
    of the share (the two-sided 90 % Clopper-Pearson interval): decided when they exclude one
    half.

    >>> on_seeds(5, 5)
    'on every seed (one-sided 95 % bounds 0.55-1.00)'
    """
    low, high = clopper_pearson(k, n, DIRECTIONAL_LEVEL)
    count = "every seed" if k == n else "no seed" if k == 0 else f"{k} of {n} seeds"
    undecided = "" if low > 0.5 or high < 0.5 else ", too few to decide"
    bounds = f"one-sided 95 % bounds {low:.2f}-{high:.2f}{undecided}"
    return f"on {count} ({bounds})"
