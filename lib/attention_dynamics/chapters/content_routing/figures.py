"""Chapter 5's figures, each drawn from the parts' results (a matplotlib figure out). Legends
stand above their panels, off the data, at the style's legend size."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from matplotlib.figure import Figure

from attention_dynamics.book.plotting import (
    FIGURE_INCHES,
    MIN_POINTS,
    figure_legend,
    legend_outside,
    panel_grid,
    short_log_labels,
)
from attention_dynamics.chapters.content_routing.hmm_reading import EntropyTracking
from attention_dynamics.chapters.content_routing.manifolds import Manifolds
from attention_dynamics.chapters.content_routing.probes import (
    PROBED,
    ReadingOffsets,
    RecallMaps,
    RecallProbe,
    RoutingOverTraining,
)
from attention_dynamics.chapters.content_routing.scores import Scores
from attention_dynamics.chapters.content_routing.settings import TASKS
from attention_dynamics.chapters.content_routing.training import Training
from attention_dynamics.models.registry import ARCHITECTURES
from attention_dynamics.tasks.base import Task
from attention_dynamics.tasks.bijection import mean_entropy_gap_of_marginal

PALETTE = dict(zip(ARCHITECTURES, sns.color_palette("colorblind", len(ARCHITECTURES)),
                   strict=True))
"""Each architecture's colour."""

def _run_score(run, task: str) -> float:
    """A run's score on ``task``: recall accuracy, the per-sample MAE on HMM filtering, the
    mean-curve MAE on bijections (bits)."""
    if task == "recall":
        return run.accuracy
    return run.report.mae_per_sample if task == "hmm" else run.report.mae_mean_curve


def scores_figure(training: Training, tasks: dict[str, Task], scores: Scores) -> Figure:
    """One panel per task: each architecture's mean score over seeds (bar) and each seed's
    (dots), with the floors of models that ignore what the task asks them to read."""
    fig, axes = panel_grid(3, panel_size=(FIGURE_INCHES, 1.8))
    x = np.arange(len(ARCHITECTURES))
    recall = tasks["recall"]
    for ax, name in zip(axes, TASKS, strict=True):
        for i, arch in enumerate(ARCHITECTURES):
            values = [_run_score(run, name) for run in training.seed_runs(arch, name)]
            ax.bar(i, np.mean(values), color=PALETTE[arch], alpha=0.8, width=0.65)
            ax.plot(np.full(len(values), i), values, "o", color="0.15", ms=4)
        ax.set_xticks(x, ARCHITECTURES)
        if name == "recall":
            ax.axhline(recall.unbound_accuracy, color="0.4", ls="--", lw=1,
                       label="values known, keys not (1/P)")
            ax.axhline(recall.chance_accuracy, color="0.4", ls=":", lw=1, label="context ignored")
            ax.set_ylabel("recall accuracy")
            ax.set_ylim(0, 1.05)
        else:
            ax.set_yscale("log")
            short_log_labels(ax)
            kind = "per sample" if name == "hmm" else "mean curve"
            ax.set_ylabel(f"{name} entropy MAE,\n{kind} (bits)")
            floor = (scores.uniform_mae if name == "hmm"
                     else mean_entropy_gap_of_marginal(tasks["bijection"].n_symbols))
            ax.axhline(floor, color="0.4", ls="--", lw=1,
                       label="uniform over states" if name == "hmm" else "context-free marginal")
        legend_outside(ax, "above")
    return fig


def hmm_entropy_figure(tracking: EntropyTracking) -> Figure:
    """Each architecture's entropy against the Bayes entropy per sequence and position (bits),
    with the diagonal and the uniform posterior's entropy."""
    fig, axes = panel_grid(4, columns=2, panel_size=(FIGURE_INCHES / 2, 2.6), sharex=True,
                           sharey=True)
    bayes = tracking.bayes.flatten()
    uniform = np.log2(tracking.n_states)
    for ax, arch in zip(axes, ARCHITECTURES, strict=True):
        ax.scatter(bayes, tracking.models[arch].flatten(), s=3, alpha=0.3, color=PALETTE[arch])
        span = [tracking.bayes.min().item(), uniform]
        ax.plot(span, span, "k--", lw=1)
        ax.axhline(uniform, color="0.5", ls=":", lw=1)
        ax.set_xlabel(f"Bayes entropy (bits)\n{arch}")
    for ax in axes[::2]:
        ax.set_ylabel("model entropy (bits)")
    return fig


def manifolds_figure(manifolds: Manifolds) -> Figure:
    """PC1 against PC2 of each architecture's representations (rows, named on the left) on
    each entropy task (columns, named over them), coloured by the Bayes entropy; each panel's
    two components' shares of the variance under it."""
    names = list(manifolds.entropy)
    fig, axes = plt.subplots(len(ARCHITECTURES), len(names), squeeze=False,
                             figsize=(FIGURE_INCHES, 1.15 * len(ARCHITECTURES) + 0.85))
    for col, name in enumerate(names):
        entropy = manifolds.entropy[name].cpu().numpy()
        axes[0, col].set_title(name)
        for row, arch in enumerate(ARCHITECTURES):
            summary = manifolds.summaries[arch, name]
            scores = summary.pca.scores.cpu().numpy()
            ax = axes[row, col]
            image = ax.scatter(scores[:, 0], scores[:, 1], c=entropy, cmap="viridis", s=3,
                               alpha=0.6)
            ax.set_xlabel(f"PC1 {100 * summary.pc1_share:.0f}%, "
                          f"PC2 {100 * summary.pc2_share:.0f}%")
            if col == 0:
                ax.set_ylabel(arch)
            ax.set_xticks([])
            ax.set_yticks([])
        fig.colorbar(image, ax=axes[:, col], location="bottom", shrink=0.9,
                     label=f"Bayes entropy, {name} (bits)")
    return fig


def sharpening_figure(probe: RecallProbe, routing: RoutingOverTraining,
                      offsets: ReadingOffsets) -> Figure:
    """Recall accuracy, the pair share of the mixing weights and of the input attribution over
    training (one line per seed; the dashed line is reading uniformly, ``1/P``), and where the
    transformer and the Mamba put their mass at the end."""
    fig, axes = panel_grid(4, columns=2, panel_size=(FIGURE_INCHES / 2, 2.3))
    columns = ("accuracy", "pair share", "attribution")
    table = routing.table.sort_index()
    for arch in PROBED:
        for r, run_seed in enumerate(probe.seeds):
            data = table.loc[(arch, run_seed)]
            for ax, column in zip(axes[:3], columns, strict=True):
                if column in data and data[column].notna().all():
                    ax.plot(data.index, data[column], "o-", color=PALETTE[arch], ms=3, lw=1.2,
                            alpha=0.85, label=arch if r == 0 else None)
    labels = ("recall accuracy\n(probe)", "pair share of\nmixing weights",
              "pair share of\ninput attribution")
    for ax, label in zip(axes[:3], labels, strict=True):
        ax.set_xscale("symlog", linthresh=10)
        ax.set_xlim(0, probe.final_step * 1.1)
        ax.set_xlabel("training step")
        ax.set_ylabel(label)
        ax.axhline(1 / probe.task.n_pairs, color="0.4", ls="--", lw=1)
    figure_legend(fig, ncol=len(PROBED), where="upper")
    width = 0.38
    for k, (arch, mass) in enumerate(offsets.profiles.items()):
        axes[3].bar(np.array(offsets.offsets) + (k - 0.5) * width, mass.cpu().numpy(),
                    width=width, color=PALETTE[arch], label=arch)
    # a narrow panel: every offset ticked, the even ones (the queried key's 0 among them) named
    axes[3].set_xticks([offset for offset in offsets.offsets if offset % 2 == 0])
    axes[3].set_xticks(offsets.offsets, minor=True)
    axes[3].set_xlabel("position relative\nto the queried key")
    axes[3].set_ylabel("share of the query\nrow's mass (end)")
    return fig


def recall_maps_figure(maps: RecallMaps) -> Figure:
    """Each probed model's rows on one probe sequence at the start and the end (shown seed), a
    panel each, stacked, titled by the model and step, the positions named under the last
    (every panel has the same): the queried pair of each row outlined, and for the Mamba the
    two positions where it reads it (dashed)."""
    archs = list(dict.fromkeys(arch for arch, _ in maps.maps))
    panels = [(arch, step) for arch in archs for step in maps.steps]
    fig, axes = plt.subplots(len(panels), 1, squeeze=False,
                             figsize=(FIGURE_INCHES, 0.85 * len(panels) + 0.35))
    for ax, (arch, step) in zip(axes[:, 0], panels, strict=True):
        rows = maps.maps[arch, step]
        n_queries, seq_len = rows.shape
        ax.imshow(rows, cmap="mako_r", aspect="auto", vmin=0)
        ax.grid(False)
        for m, (key_position, _) in enumerate(maps.pair_positions.tolist()):
            ax.add_patch(plt.Rectangle((key_position - 0.5, m - 0.5), 2, 1, fill=False,
                                       ec="C3", lw=1.5))
            if maps.delay.get(arch):
                ax.add_patch(plt.Rectangle((key_position + maps.delay[arch] - 0.5, m - 0.42),
                                           2, 0.84, fill=False, ec="C1", lw=1.2, ls="--"))
        ax.set_yticks(range(n_queries), [f"q{m + 1}" for m in range(n_queries)])
        every = -(-seq_len * MIN_POINTS // 290)  # a label per position while 10 pt ones fit
        ax.set_xticks(range(0, seq_len, every), maps.labels[::every], fontsize=MIN_POINTS)
        ax.tick_params(axis="x", labelbottom=ax is axes[-1, 0])
        ax.set_title(f"{arch}, step {step}")
    return fig


FIGURES = {
    "fig_routing_scores": lambda run: scores_figure(run.training, run.tasks, run.scores),
    "fig_routing_hmm_entropy": lambda run: hmm_entropy_figure(run.tracking),
    "fig_routing_manifolds": lambda run: manifolds_figure(run.manifolds),
    "fig_routing_sharpening": lambda run: sharpening_figure(run.probe, run.routing, run.offsets),
    "fig_routing_recall_maps": lambda run: recall_maps_figure(run.maps),
}
"""Every figure the chapter's notebook shows, by its file name, as a function of the chapter's
run (what ``run`` returns) to the figure."""
