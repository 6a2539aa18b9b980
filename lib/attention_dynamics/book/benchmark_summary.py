"""The benchmarks page's summary: each measured ratio beside the goal set for it, as a table
and as a figure.

The measurements themselves are in :mod:`~attention_dynamics.book.benchmarking`; the goals
are the project's (a ratio without a goal is there to be read, not judged).
"""

from __future__ import annotations

import textwrap

import matplotlib.figure
import matplotlib.pyplot as plt
import pandas as pd

from attention_dynamics.book.plotting import FIGURE_INCHES, MIN_POINTS, legend_outside
from attention_dynamics.book.verdicts import REPRODUCED, Bound

REGENERATION = "book regeneration until this notebook (s)"
"""The summary's row of the book's regeneration time (seconds, not a ratio)."""

GOALS = {
    "diagnostics overhead (diagnosed / plain step)": Bound(1.3),
    "diagnostics vs per-score autograd": Bound(50.0, at_most=False),
    "sampler + exact predictive vs per-sequence loop": Bound(20.0, at_most=False),
    "transformer step, torch encoder / ours": Bound(1.0, at_most=False),
    REGENERATION: Bound(900.0),
}
"""The goal of each measured quantity, by its row name in the summary."""

MEETS = {"yes": "meets its goal", "no": "misses it", "": "no goal"}
"""The summary's answers on meeting the goal, and the figure's legend entry for each."""

COLOURS = {"yes": "C2", "no": "C3", "": "0.6"}
"""The bar colour of each answer."""

FIGURE_CAPTION = (
    "**The measured ratios against their goals.** Each bar is a ratio of median wall times "
    "measured side by side in this run (log scale), coloured by whether it meets the goal "
    "set for it; the black tick marks the goal, the grey line a ratio of one.")
"""The caption the benchmarks page gives :func:`ratios_figure`."""


def goal_summary(measured: dict[str, float]) -> pd.DataFrame:
    """One row per measured quantity (``measured``: value by row name): the value, its goal
    (:data:`GOALS`, empty where none) and whether this run meets it (``yes``, ``no`` or
    empty)."""
    def meets(name: str, value: float) -> str:
        if name not in GOALS:
            return ""
        return "yes" if GOALS[name].judge(value) == REPRODUCED else "no"

    return pd.DataFrame({
        "measured": measured,
        "goal": {name: GOALS[name].describe() if name in GOALS else "" for name in measured},
        "meets the goal": {name: meets(name, value) for name, value in measured.items()},
    })


LABEL_CHARACTERS = 24
"""The longest line of a bar's label in :func:`ratios_figure`; a longer name wraps, so that
the bars keep half of the narrow figure."""

ROW_INCHES = 0.48
"""The height of one bar's row in :func:`ratios_figure` (a label on two lines)."""


def bar_label(name: str) -> str:
    """A row's name as its bar's label in :func:`ratios_figure`: wrapped at
    :data:`LABEL_CHARACTERS`."""
    return textwrap.fill(name, LABEL_CHARACTERS, break_on_hyphens=False)


def ratios_figure(summary: pd.DataFrame) -> matplotlib.figure.Figure:
    """The ratios of ``summary`` (:func:`goal_summary`; the regeneration time left out) as
    horizontal bars on a log axis, the first row on top, each coloured by whether it meets its
    goal, with the goal as a tick.

    Drawn for the narrow column (:data:`~attention_dynamics.book.plotting.FIGURE_INCHES`
    wide, no text under :data:`~attention_dynamics.book.plotting.MIN_POINTS` points), each
    label wrapped (:func:`bar_label`), so that it reads on a phone as on a desktop."""
    ratios = summary.drop(index=[REGENERATION], errors="ignore")
    if ratios.empty:
        raise ValueError("summary holds no ratio to draw")
    names = list(ratios.index)[::-1]  # the first row on top
    lines = sum(bar_label(name).count("\n") + 1 for name in names)
    fig, ax = plt.subplots(figsize=(FIGURE_INCHES, ROW_INCHES / 2 * max(lines, len(names))
                                    + 1.8), layout="constrained")
    positions = range(len(names))
    ax.barh(positions, ratios.loc[names, "measured"].astype(float),
            color=[COLOURS[ratios.loc[name, "meets the goal"]] for name in names])
    ax.set_yticks(positions, [bar_label(name) for name in names], fontsize=MIN_POINTS)
    ax.set_ylim(-0.6, len(names) - 0.4)
    for k, name in enumerate(names):
        if name in GOALS:
            ax.plot(GOALS[name].bound, k, "k|", ms=16, mew=2)
    ax.axvline(1.0, color="0.3", lw=0.8)
    ax.set_xscale("log")
    ax.tick_params(axis="x", labelsize=MIN_POINTS)
    ax.set_xlabel("ratio (log scale)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLOURS[key], label=label)
               for key, label in MEETS.items()]
    handles.append(plt.Line2D([], [], color="k", marker="|", ls="", ms=12, mew=2, label="goal"))
    legend_outside(ax, ncol=2, handles=handles)
    return fig
