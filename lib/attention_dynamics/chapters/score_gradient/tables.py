"""Chapter 1's tables: results in, a pandas table out."""

from __future__ import annotations

import pandas as pd

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.score_gradient.checks import (
    QUANTITIES,
    DiagnosticsCost,
    GradientCheck,
    TrainedHeads,
    WeightStep,
)


def gradient_error_table(check: GradientCheck) -> pd.DataFrame:
    """Per quantity of :data:`~attention_dynamics.chapters.score_gradient.checks.QUANTITIES`,
    the largest and the median absolute difference between the closed form and autograd over
    the problems."""
    summary = check.errors[list(QUANTITIES)].agg(["max", "median"]).T
    summary.columns = ["max |closed form - autograd|", "median"]
    return summary


def weight_step_table(kernel: WeightStep) -> pd.DataFrame:
    """Per condition (rows) and step (columns): the mean and the worst head's fraction of rows
    gaining mass on ``N_i``, and the share of heads gaining in every row (3 decimals)."""
    summary = (kernel.fractions.groupby(["step", "condition"])["fraction"]
               .agg(mean="mean", worst="min", all_rows=lambda f: (f == 1).mean())
               .unstack("step"))
    return summary.round(3)


def trained_heads_table(heads: TrainedHeads) -> pd.DataFrame:
    """Per condition (rows): the mean and the lowest fraction of rows gaining mass on ``N_i``
    over the sticky-chain heads, at initialisation and trained (3 decimals)."""
    return heads.fractions.pivot_table(index="condition", columns="when", values="fraction",
                                       aggfunc=["mean", "min"]).round(3)


def diagnostics_table(cost: DiagnosticsCost) -> pd.DataFrame:
    """The timings (seconds), the number of allowed pairs and the two ratios, one row each."""
    return pd.Series(cost.timings).to_frame("value")


def results_table(results: Results) -> pd.DataFrame:
    """Every metric recorded so far, one row each, in the order recorded."""
    return pd.Series(results.metrics).to_frame("value")
