"""The chapter's figures, each from results to a matplotlib figure (losses in nats)."""

from __future__ import annotations

import matplotlib.figure
import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from matplotlib.ticker import NullFormatter

from attention_dynamics.book.plotting import (
    FIGURE_INCHES,
    LEGEND_POINTS,
    MIN_POINTS,
    figure_legend,
    legend_outside,
    panel_grid,
    plot_seed_band,
    short_log_labels,
)
from attention_dynamics.chapters.em_reading.extensions import Adam, Fresh, LongHorizon, Sweep
from attention_dynamics.chapters.em_reading.reproduction import (
    Chain,
    Heldout,
    Reproduction,
    Settling,
    ValuePaths,
)
from attention_dynamics.chapters.em_reading.words import SHORT
from attention_dynamics.tasks.sticky_chain import N_SYMBOLS

COLOURS = {"sgd": "C3", "em": "C0"}
"""Each schedule's colour."""

LABELS = {"sgd": "SGD (lr 0.01)", "em": "EM-like (value lr 0.1)"}
"""Each schedule's legend label."""


def chain_figure(chain: Chain) -> matplotlib.figure.Figure:
    """The authors' transition matrix as a heat map, and the first row of both constructions
    against the jump ``y_t - y_{t-1}`` (mod 8)."""
    offsets = np.arange(-(N_SYMBOLS // 2) + 1, N_SYMBOLS // 2 + 1)
    fig, axes = plt.subplots(2, 1, figsize=(FIGURE_INCHES, 5.5), height_ratios=[1.6, 1])
    sns.heatmap(chain.transition_script.numpy(), ax=axes[0], annot=True, fmt=".2f",
                annot_kws={"fontsize": MIN_POINTS}, cmap="mako_r", cbar=False, square=True)
    axes[0].set_xlabel("next symbol $y_t$")
    axes[0].set_ylabel("current symbol $y_{t-1}$")
    for matrix, label, marker in [(chain.transition_script, "authors' script", "o"),
                                  (chain.transition_text, "paper's text", "s")]:
        row = matrix[0].numpy()
        axes[1].plot(offsets, row[offsets % N_SYMBOLS], marker=marker, label=label)
    axes[1].set_xlabel("jump $y_t - y_{t-1}$ (mod 8)")
    axes[1].set_ylabel("transition probability")
    axes[1].legend(frameon=False)
    return fig


def loss_curves_figure(chain: Chain, rep: Reproduction, held: Heldout) -> matplotlib.figure.Figure:
    """Both schedules' losses (mean and band over seeds) on the training and the held-out
    sequences, against the exact predictor and the bound, with the step at which each EM-like
    run reaches its seed's SGD final loss."""
    fig, axes = panel_grid(2, panel_size=(FIGURE_INCHES, 2.7), sharey=True)
    for ax, series, xs, title, reference in [
        (axes[0], rep.loss, rep.history.steps.numpy(), "training sequence", chain.bayes),
        (axes[1], held.loss, held.steps.numpy(), "held-out sequence", chain.bayes_heldout),
    ]:
        for name, runs in rep.runs.items():
            plot_seed_band(ax, xs, series[:, runs], COLOURS[name], label=LABELS[name],
                           alpha=0.2, lw=1.8)
        ax.axhline(float(reference.cross_entropy.mean()), color="0.2", ls="--", lw=1,
                   label="exact Bayes (mean over seeds)")
        ax.axhline(chain.bayes.lower_bound, color="C2", ls=":", lw=1.5,
                   label=r"bound $H(Y_t|Y_{t-1})$")
        ax.set_xlabel(f"step ({title})")
        ax.set_ylabel("cross-entropy (nats)")
    axes[0].plot(rep.em_steps, rep.loss[-1, rep.runs["sgd"]].numpy(), "v", color="C0", ms=6,
                 label="EM-like reaches its seed's SGD final loss")
    figure_legend(fig)  # the bands' colours and the references, under both panels
    return fig


def value_paths_figure(paths: ValuePaths) -> matplotlib.figure.Figure:
    """The first seed's eight value prototypes, SGD and EM-like, on their two principal axes
    (open circle: start, filled: end)."""
    coords = paths.coords
    palette = sns.color_palette("husl", N_SYMBOLS)
    fig, axes = plt.subplots(1, 2, figsize=(FIGURE_INCHES, 3.6), sharex=True, sharey=True)
    for ax, k, name in [(axes[0], 0, "sgd"), (axes[1], 1, "em")]:
        for s in range(N_SYMBOLS):
            ax.plot(coords[:, k, s, 0], coords[:, k, s, 1], color=palette[s], lw=1.6)
            ax.plot(*coords[0, k, s], "o", color=palette[s], mfc="white", ms=5)
            ax.plot(*coords[-1, k, s], "o", color=palette[s], ms=6)
        ax.set_xlabel(f"PC1\n{LABELS[name]}")
        ax.set_aspect("equal")
    axes[0].set_ylabel("PC2")
    handles = [plt.Line2D([], [], color=palette[s], lw=2, label=f"symbol {s}")
               for s in range(N_SYMBOLS)]
    fig.legend(handles=handles, loc="outside lower center", ncol=4, frameon=False,
               fontsize=LEGEND_POINTS)
    return fig


def fresh_figure(fresh: Fresh) -> matplotlib.figure.Figure:
    """The attention's entropy and same-symbol mass on fresh sequences (top), and the
    attention's and values' distances to their final state, averaged over a window (bold, with
    the band over seeds) and raw (thin) (bottom)."""
    history = fresh.history
    fig, (left, right) = panel_grid(2, panel_size=(FIGURE_INCHES, 2.7))
    mass = left.twinx()
    mass.grid(False)
    steps = history.steps.numpy()
    for name, r in fresh.runs.items():
        colour = COLOURS[name]
        left.plot(steps, history.attention_uniformity[:, r].mean(1), color=colour)
        mass.plot(steps, history.symbol_routing[:, r].mean(1), color=colour, ls=":")
        for series, raw, ls in [
            (fresh.smoothed.attention_remaining, fresh.settling.attention_remaining, "-"),
            (fresh.smoothed.value_remaining, fresh.settling.value_remaining, "--"),
        ]:
            right.plot(steps, series[:, r].mean(1), color=colour, ls=ls)
            right.plot(steps, raw[:, r].mean(1), color=colour, ls=ls, lw=0.6, alpha=0.5)
            right.fill_between(steps, series[:, r].min(1).values, series[:, r].max(1).values,
                               color=colour, alpha=0.1, lw=0)
    left.set_xlabel("step (fresh sequences)")
    left.set_ylabel("attention entropy\n/ uniform's")
    mass.set_ylabel("same-symbol mass\n/ share (dotted)")
    right.axhline(0.5, color="grey", lw=0.6)
    right.set_xlabel("step (fresh sequences)")
    right.set_ylabel("distance left")
    legend_outside(right, ncol=2,
                   handles=[plt.Line2D([], [], color=COLOURS[n], label=SHORT[n])
                            for n in fresh.runs]
                   + [plt.Line2D([], [], color="0.3", ls=ls, label=what)
                      for ls, what in [("-", "attention"), ("--", "values")]])
    return fig


def sweep_figure(sweep: Sweep) -> matplotlib.figure.Figure:
    """The speed-up to SGD's final training loss against the value multiplier, with the
    controls at x10 (top), and the final training and held-out losses (bottom), the stability
    edge of W_V shaded."""
    table, value_rows, edge = sweep.table, sweep.value_rows, sweep.edge
    fig, axes = panel_grid(2, panel_size=(FIGURE_INCHES, 2.7))
    ms = np.array(sweep.multipliers, dtype=float)
    axes[0].loglog(ms, value_rows["speed-up"], "o-", color="C0", label="value lr x m")
    axes[0].loglog(ms, ms, ":", color="0.5", label="every group x m")
    for n, marker, colour in [("routing x10", "s", "C1"), ("readout x10", "^", "C4"),
                              ("all x10", "D", "0.3")]:
        axes[0].loglog([10], [table.loc[n, "speed-up"]], marker, color=colour, ms=8, ls="",
                       label=n)
    axes[0].axvspan(float(edge.min()), float(edge.max()), color="C3", alpha=0.15,
                    label="stability edge of $W_V$")
    axes[0].set_xlabel("multiplier $m$")
    axes[0].set_ylabel("speed-up to\nSGD's final loss")
    legend_outside(axes[0], ncol=2)
    axes[1].semilogx(ms, value_rows["final training loss"], "o-", color="C0", label="training")
    axes[1].semilogx(ms, value_rows["final held-out loss"], "s--", color="C3", label="held-out")
    axes[1].axhline(sweep.bayes_heldout_loss, color="0.2", ls="--", lw=1,
                    label="exact Bayes (held-out)")
    axes[1].axvspan(float(edge.min()), float(edge.max()), color="C3", alpha=0.15)
    axes[1].set_xlabel("value multiplier $m$")
    axes[1].set_ylabel("final loss (nats)")
    legend_outside(axes[1], ncol=3)
    return fig


def frame_precision_figure(rep: Reproduction, settled: Settling, long: LongHorizon,
                           sweep: Sweep) -> matplotlib.figure.Figure:
    """The attention's and the values' distances to their final state at the paper's settings
    (band over seeds), their change per step, and the same distances over the long horizon."""
    frames, long_frames = settled.frames, long.frames
    fig, axes = panel_grid(3, panel_size=(FIGURE_INCHES, 1.8))
    for name, runs in rep.runs.items():
        for series, ls, what in [(frames.attention_remaining, "-", "attention"),
                                 (frames.value_remaining, "--", "values")]:
            plot_seed_band(axes[0], frames.steps, series[:, runs].cpu(), COLOURS[name],
                           label=f"{what}, {SHORT[name]}", alpha=0.12, ls=ls)
        mid = frames.steps[1:].numpy()
        axes[1].semilogy(mid, frames.attention_change[:, runs].cpu().mean(1), color=COLOURS[name],
                         label=f"attention (TV per step), {SHORT[name]}")
        axes[1].semilogy(mid, frames.value_change[:, runs].cpu().mean(1), color=COLOURS[name],
                         ls="--", label=f"values (relative, per step), {SHORT[name]}")
    for name, runs in long.runs.items():
        for series, ls, what in [(long_frames.attention_remaining, "-", "attention"),
                                 (long_frames.value_remaining, "--", "values")]:
            axes[2].plot(long_frames.steps * 10, series[:, runs].cpu().mean(1),
                         color=COLOURS[name], ls=ls, label=f"{what}, {SHORT[name]}")
    axes[0].set_xlabel("step (paper settings)")
    axes[1].set_xlabel("step (paper settings)")
    axes[1].set_ylabel("change per step")
    axes[1].yaxis.set_minor_formatter(NullFormatter())  # the decades only
    axes[2].set_xlabel(f"equivalent step at lr 0.01\n(long horizon, T = {sweep.sequence_length})")
    axes[2].set_ylabel("distance left")
    axes[0].set_ylabel("distance left")
    # one legend for the three panels: the schedules' colours, the attention's and values' lines
    figure_legend(fig, ncol=4, handles=[plt.Line2D([], [], color=COLOURS[n], label=SHORT[n])
                                        for n in rep.runs]
                  + [plt.Line2D([], [], color="0.3", ls=ls, label=what)
                     for ls, what in [("-", "attention"), ("--", "values")]])
    return fig


def adam_figure(adam: Adam) -> matplotlib.figure.Figure:
    """Adam's training (solid) and held-out (dashed) losses, with and without the value rate
    x10, against the exact predictor on the held-out sequences."""
    fig, ax = plt.subplots(figsize=(FIGURE_INCHES, 3.6))
    for runs, colour, label in [(adam.runs["adam"], "C3", "Adam"),
                                (adam.runs["adam_em"], "C0", "Adam, value lr x10")]:
        ax.plot(adam.history.steps, adam.loss[:, runs].mean(1), color=colour,
                label=f"{label}, training")
        ax.plot(adam.history.snapshot_steps, adam.heldout_loss[:, runs].mean(1), color=colour,
                ls="--", label=f"{label}, held-out")
    ax.axhline(adam.bayes_heldout_loss, color="0.2", ls=":", lw=1.2, label="exact Bayes (held-out)")
    ax.set_yscale("log")
    short_log_labels(ax)
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats)")
    legend_outside(ax)
    return fig


FIGURES = {
    "fig_em_chain": lambda run: chain_figure(run.chain),
    "fig_em_loss_curves": lambda run: loss_curves_figure(run.chain, run.reproduction, run.heldout),
    "fig_em_value_paths": lambda run: value_paths_figure(run.paths),
    "fig_em_fresh_two_timescales": lambda run: fresh_figure(run.fresh),
    "fig_em_multiplier_sweep": lambda run: sweep_figure(run.sweep),
    "fig_em_frame_precision": lambda run: frame_precision_figure(run.reproduction, run.settling,
                                                                 run.long, run.sweep),
    "fig_em_adam": lambda run: adam_figure(run.adam),
}
"""Every figure the chapter's notebook shows, by its file name, as a function of the chapter's
run (what ``run`` returns) to the figure."""
