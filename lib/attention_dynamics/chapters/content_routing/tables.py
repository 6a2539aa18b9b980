"""Chapter 5's tables as its pages show them, each from a table of results to a pandas
DataFrame (entropy MAEs in bits, accuracies as shares)."""

from __future__ import annotations

import pandas as pd

NO_BREAK = "\u00a0"
"""A space at which a line may not break."""

PAPER_PREFIX = "Paper I: "
"""How the score table's columns of Paper I's numbers begin (each after its own column)."""


def results_table(scores: pd.DataFrame) -> pd.DataFrame:
    """The score table (:class:`~attention_dynamics.chapters.content_routing.scores.Scores`'
    ``table``: a row per architecture, and per task a column of this build's number, ``mean
    [lowest, highest]`` over seeds, followed by one of Paper I's) turned for a narrow column:
    a row per (task and measure, architecture), the measure named as the score table's column
    names it, and two columns, this build's number (its range over seeds kept on one line) and
    Paper I's.

    Raises:
        ValueError: a column of this build's numbers that is not followed by one of Paper I's.
    """
    columns = list(scores.columns)
    ours, papers = columns[0::2], columns[1::2]
    if len(ours) != len(papers) or not all(paper.startswith(PAPER_PREFIX) for paper in papers):
        raise ValueError("scores must hold, per task, this build's column followed by Paper I's; "
                         f"got {columns}")
    # on a narrow screen a number may break before its seeds' range, never inside it
    rows = {(measure, model): {"this build": str(scores.loc[model, measure]).replace(
                                   ", ", f",{NO_BREAK}"),
                               "Paper I": scores.loc[model, paper]}
            for measure, paper in zip(ours, papers, strict=True) for model in scores.index}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index = pd.MultiIndex.from_tuples(table.index, names=["task and measure", "model"])
    return table


def manifold_table(table: pd.DataFrame) -> pd.DataFrame:
    """The final representations' geometry (a row per architecture and task, as
    :class:`~attention_dynamics.chapters.content_routing.manifolds.Manifolds`' ``table()``
    gives it) with its two index levels named."""
    return table.rename_axis(["model", "task"])
