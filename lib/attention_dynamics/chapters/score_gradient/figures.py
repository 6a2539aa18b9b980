"""Chapter 1's figures: results in, a matplotlib figure out."""

from __future__ import annotations

import matplotlib.figure
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from attention_dynamics.book.plotting import FIGURE_INCHES, legend_outside, panel_grid
from attention_dynamics.chapters.score_gradient.checks import HeadMatrices, ScoreStep, WeightStep


def score_heatmaps(matrices: HeadMatrices) -> matplotlib.figure.Figure:
    """Three heatmaps, query position by key position, two to a row: ``B`` (top left), ``A``
    (top right) and ``dL/ds`` (bottom), each on a symmetric colour scale, masked pairs grey."""
    panels = {
        r"compatibility $B$": matrices.compatibility,
        r"advantage $A$": matrices.advantage,
        r"$\partial L / \partial s = \alpha \odot A$": matrices.scores,
    }
    fig, axes = panel_grid(3, columns=2, panel_size=(FIGURE_INCHES / 2, 2.3))
    for ax, (label, shown) in zip(axes, panels.items(), strict=True):
        limit = np.nanmax(np.abs(shown))
        image = ax.imshow(shown, cmap="RdBu_r", vmin=-limit, vmax=limit)
        ax.set_facecolor("0.85")
        ax.grid(False)
        for axis in (ax.xaxis, ax.yaxis):  # positions are whole
            axis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("key position $j$")
        ax.set_ylabel("query position $i$")
        ax.set_title(label)
        fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)  # as tall as the map
    return fig


def mass_shift_figure(step: ScoreStep) -> matplotlib.figure.Figure:
    """The example problem's measured change of the mass on ``N_i`` against its first-order
    prediction, one point per row, with the identity line."""
    example = step.example
    fig, ax = plt.subplots(figsize=(FIGURE_INCHES, 3.8))
    ax.scatter(example.predicted.cpu(), example.shift.cpu(), s=10, alpha=0.7)
    line = np.array([0, example.predicted.max().item()])
    ax.plot(line, line, color="0.3", lw=1, label="first-order prediction")
    ax.set_xlabel(r"predicted change of mass on $N_i$")
    ax.set_ylabel(r"measured change of mass on $N_i$")
    ax.legend()
    return fig


def weight_step_figure(kernel: WeightStep) -> matplotlib.figure.Figure:
    """Histograms over heads of the fraction of rows gaining mass on ``N_i`` at the smallest
    step, weight step with the heads' inputs and with orthonormal inputs; the score step,
    which gains in every row of every head, as a line at 1."""
    small = kernel.at_smallest_step
    fig, ax = plt.subplots(figsize=(FIGURE_INCHES, 3.8))
    bins = np.linspace(0, 1, 21)
    for condition, color in zip(("weight step", "weight step, orthonormal inputs"),
                                ("tab:orange", "tab:green"), strict=True):
        ax.hist(small[small.condition == condition].fraction, bins=bins, alpha=0.6,
                color=color, label=condition)
    ax.axvline(1.0, color="tab:blue", lw=2, label="score step (every head)")
    ax.set_xlabel("fraction of a head's rows whose mass on $N_i$ rises")
    ax.set_ylabel("heads")
    legend_outside(ax)
    return fig


FIGURES = {
    "fig_score_heatmaps": lambda run: score_heatmaps(run.matrices),
    "fig_mass_shift": lambda run: mass_shift_figure(run.score_step),
    "fig_weight_step_rows": lambda run: weight_step_figure(run.weight_step),
}
"""Every figure the chapter's notebook shows, by its file name, as a function of the chapter's
run (what ``run`` returns) to the figure."""
