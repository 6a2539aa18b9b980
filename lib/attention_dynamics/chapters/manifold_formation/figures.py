"""Chapter 4's figures, each from results to a matplotlib figure (entropies in bits).

Legends stand outside the panels, below them, at the style's legend size (11 pt, as the tick
labels), so that none covers data.
"""

from __future__ import annotations

import matplotlib.figure
import matplotlib.pyplot as plt
import numpy as np
import torch

from attention_dynamics.book.plotting import FIGURE_INCHES, legend_outside, panel_grid
from attention_dynamics.chapters.manifold_formation.alignment import Alignment
from attention_dynamics.chapters.manifold_formation.beyond_position import BeyondPosition
from attention_dynamics.chapters.manifold_formation.calibration import BijectionRun, HmmRun
from attention_dynamics.chapters.manifold_formation.frame import SETTLING, Frame
from attention_dynamics.chapters.manifold_formation.keys import Keys
from attention_dynamics.chapters.manifold_formation.value_manifold import ProtocolInputs, ValueManifold
from attention_dynamics.measures.geometry import cosine_matrix, key_orthogonality, pca, standardize_features
from attention_dynamics.measures.metrics import entropy_bits
from attention_dynamics.measures.representations import final_streams


def calibration_figure(runs: dict[str, BijectionRun], hmm: HmmRun) -> matplotlib.figure.Figure:
    """The bijection models' entropy at each key index against Bayes (both layouts); the HMM
    model's entropy against the Bayes filter's on the first held-out batch, one point per scored
    position; and the HMM model's mean error per observation at each tested length, the training
    length marked."""
    fig, axes = panel_grid(3, panel_size=(FIGURE_INCHES, 1.8))
    for layout, run in runs.items():
        task, report = run.task, run.report
        keys = np.arange(1, task.n_pairs + 1)
        axes[0].plot(keys, report.model_entropy[: task.n_pairs], "o", ms=5, label=f"{layout} layout")
    axes[0].plot(keys, runs["separate"].task.bayes_entropy_curve(), "k--", lw=1.2,
                 label=r"Bayes $\log_2(V-k+1)$")
    axes[0].set_xlabel("key index $k$")
    axes[0].set_ylabel("predictive\nentropy (bits)")
    legend_outside(axes[0], ncol=2)
    task, batch = hmm.task, hmm.batches[hmm.train_length][0]
    with torch.no_grad():
        model_h = entropy_bits(hmm.model(batch.tokens), task.answer_tokens.to(batch.tokens.device))
    model_h = model_h[:, task.query_positions]
    bayes_h = batch.bayes_entropy_bits[:, task.query_positions]
    axes[1].scatter(bayes_h.cpu().flatten(), model_h.cpu().flatten(), s=3, alpha=0.3)
    span = np.array([bayes_h.min().item(), bayes_h.max().item()])
    axes[1].plot(span, span, "k--", lw=1)
    axes[1].set_xlabel("Bayes filter entropy (bits)")
    axes[1].set_ylabel("transformer\nentropy (bits)")
    for length, report in hmm.reports.items():
        axes[2].plot(np.arange(1, length + 1), report.abs_error, label=f"K = {length}")
    axes[2].axvline(hmm.train_length, color="0.4", lw=1, ls=":")
    axes[2].set_xlabel("observation $t$ (tested at length $K$)")
    axes[2].set_ylabel("mean $|H_{model} - H_{Bayes}|$\n(bits)")
    legend_outside(axes[2], ncol=len(hmm.reports))
    return fig


def key_cosines_figure(keys: Keys) -> matplotlib.figure.Figure:
    """The cosines between the hypothesis keys of each layer-0 head (columns), for each layout
    trained and at initialisation (rows), with each head's mean ``|cos|``."""
    n_heads = next(iter(keys.matrices.values())).shape[0]
    fig, axes = plt.subplots(len(keys.matrices), n_heads, squeeze=False,
                             figsize=(FIGURE_INCHES, 1.2 * len(keys.matrices) + 0.6))
    for row, ((layout, label), matrices) in enumerate(keys.matrices.items()):
        for head in range(matrices.shape[0]):
            ax = axes[row, head]
            image = ax.imshow(cosine_matrix(matrices[head]).cpu().numpy(), cmap="RdBu_r", vmin=-1, vmax=1)
            ax.set_title(f"head {head}\n{key_orthogonality(matrices[head]).item():.2f}")
            ax.set_xticks([])
            ax.set_yticks([])
            ax.grid(False)
            if head == 0:
                ax.set_ylabel(f"{layout},\n{label}")
    fig.colorbar(image, ax=axes, shrink=0.6, label="cosine between\nhypothesis keys")
    return fig


def alignment_figure(alignment: Alignment) -> matplotlib.figure.Figure:
    """The separate layout's trained query-key alignment maps, one panel per layer (rows) and
    per kind of key position (columns, a colour bar each under them), query at key ``k``
    against earlier position ``j``."""
    n_layers = next(iter(alignment.maps.values())).shape[0]
    fig, axes = plt.subplots(n_layers, 2, figsize=(FIGURE_INCHES, 2.2 * n_layers + 1.0),
                             squeeze=False)
    for column, (against, maps) in enumerate(alignment.maps.items()):
        limit = np.nanmax(np.abs(maps.numpy()))
        for layer in range(n_layers):
            ax = axes[layer, column]
            image = ax.imshow(maps[layer].numpy(), cmap="RdBu_r", vmin=-limit, vmax=limit)
            ax.set_facecolor("0.85")
            ax.grid(False)
            ax.set_xlabel(f"earlier {against} $j$")
            if column == 0:
                ax.set_ylabel("query at key $k$")
            for axis in (ax.xaxis, ax.yaxis):  # rows and columns count from 1, as in the text
                axis.set_major_formatter(plt.FuncFormatter(lambda value, _: f"{value + 1:.0f}"))
            ax.set_title(f"layer {layer}, keys at {against}\n"
                         f"positions: mean {np.nanmean(maps[layer].numpy()):.2f}")
        fig.colorbar(image, ax=axes[:, column], location="bottom", shrink=0.9,
                     label=rf"$\cos(q_k, k_j)$, {against} positions")
    return fig


def hmm_manifold_figure(inputs: ProtocolInputs, beyond: BeyondPosition) -> matplotlib.figure.Figure:
    """The trained HMM model's chosen component against the Bayes filter entropy, coloured by
    observation (top), and the same with each position's mean removed from both (bottom)."""
    probe = inputs.probe
    before, _ = final_streams(probe.at_step(probe.final_step), probe.batch.tokens)
    entropy = inputs.value_entropy(probe.batch)
    points = before[:, inputs.values].flatten(0, 1)
    component = beyond.component
    chosen = pca(points).scores[:, component - 1].reshape(entropy.shape).cpu()
    entropy_cpu = entropy.double().cpu()
    fig, (left, right) = panel_grid(2, panel_size=(FIGURE_INCHES, 2.7))
    image = left.scatter(entropy_cpu.flatten(), chosen.flatten(),
                         c=np.tile(np.arange(1, entropy.shape[1] + 1), entropy.shape[0]), cmap="viridis",
                         s=3, alpha=0.5)
    left.set_xlabel("Bayes filter entropy (bits)")
    left.set_ylabel(f"PC{component} score")
    left.set_title(f"HMM, trained: PC{component} against the entropy")
    fig.colorbar(image, ax=left, label="observation $t$")
    right.scatter((entropy_cpu - entropy_cpu.mean(0)).flatten(), (chosen - chosen.mean(0)).flatten(), s=3,
                  alpha=0.4)
    right.set_xlabel("entropy minus its position's mean (bits)")
    right.set_ylabel(f"PC{component} minus\nits position's mean")
    right.set_title(f"within positions: |r| = {beyond.observed:.2f}")
    fig.colorbar(image, ax=right).remove()  # the panels' widths stay equal
    return fig


VALUE_MANIFOLD_PANELS = (
    ("scored,\nafter final norm", "after"),
    ("value positions,\nbefore final norm", "raw"),
    ("value positions,\nstandardised", "standardised"),
)
"""The protocols drawn by :func:`value_manifold_figure` (a row each, named on the left) and how
their points are taken."""

VALUE_MANIFOLD_TASKS = {"separate": "bijection", "hmm": "HMM"}
"""The tasks :func:`value_manifold_figure` draws (a figure each), by the name of their inputs,
and how the colour bar names them."""


def value_manifold_figure(manifold: ValueManifold,
                          task_name: str = "separate") -> matplotlib.figure.Figure:
    """The probe's points of one task (``task_name``, a key of :data:`VALUE_MANIFOLD_TASKS`:
    the separate-layout bijection or HMM) on their first two principal axes (each axis's share
    of the variance under the panel), coloured by the Bayes entropy: a row per protocol of
    :data:`VALUE_MANIFOLD_PANELS`, the trained model (left) beside its initialisation
    (right)."""
    if task_name not in VALUE_MANIFOLD_TASKS:
        raise ValueError(f"task_name must be one of {list(VALUE_MANIFOLD_TASKS)}; got {task_name!r}")
    panels = VALUE_MANIFOLD_PANELS
    fig, axes = plt.subplots(len(panels), 2, squeeze=False,
                             figsize=(FIGURE_INCHES, 1.5 * len(panels) + 0.95))
    inputs = manifold.inputs[task_name]
    probe = inputs.probe.batch
    for column, label in enumerate(("trained", "random init")):
        model = inputs.probe.at_step(inputs.probe.final_step if label == "trained" else 0)
        before, after = final_streams(model, probe.tokens)
        axes[0, column].set_title(label)
        for row, (protocol, kind) in enumerate(panels):
            if kind == "after":
                points, colour = after[:, inputs.scored], probe.bayes_entropy_bits[:, inputs.scored]
            else:
                points, colour = before[:, inputs.values], inputs.value_entropy(probe)
            points = points.flatten(0, 1).double()
            if kind == "standardised":
                points = standardize_features(points)
            axes_of = pca(points)
            scores = axes_of.scores[:, :2].cpu().numpy()
            ax = axes[row, column]
            image = ax.scatter(scores[:, 0], scores[:, 1], c=colour.flatten().cpu().numpy(),
                               cmap="viridis", s=3, alpha=0.6)
            shares = axes_of.explained_variance_ratio[:2].tolist()
            ax.set_xlabel(f"PC1 {100 * shares[0]:.0f}%, PC2 {100 * shares[1]:.0f}%")
            if column == 0:
                ax.set_ylabel(protocol)
            ax.set_xticks([])  # the components' scales are arbitrary
            ax.set_yticks([])
    fig.colorbar(image, ax=axes.ravel().tolist(), location="bottom", shrink=0.8,
                 label=f"Bayes entropy, {VALUE_MANIFOLD_TASKS[task_name]} (bits)")
    return fig


def frame_figure(frame: Frame) -> matplotlib.figure.Figure:
    """Seed 0's constant-rate run, with the routing over the value gradient norm per layer (top)
    and each measure's and the precision's distance to the end state over its settling threshold
    (bottom; 0.1 at the threshold), against the training step."""
    shown, settle, relative = frame.seeds[0].table, frame.seeds[0].settle, frame.seeds[0].relative
    steps = frame.checkpoints[-1]
    fig, (left, right) = panel_grid(2, panel_size=(FIGURE_INCHES, 2.7))
    for column in shown.columns:
        if column.startswith("routing / value gradient, layer "):
            left.plot(shown.index, shown[column], "o-", ms=3,
                      label=column.removeprefix("routing / value gradient, "))
    left.set_xscale("symlog", linthresh=10)
    left.set_xlim(0, steps * 1.1)
    left.set_yscale("log")
    left.set_xlabel("training step")
    left.set_ylabel(r"$\Vert\partial L/\partial s\Vert \,/\, \Vert\partial L/\partial v\Vert$")
    left.set_title("routing against value gradients")
    legend_outside(left, ncol=2)
    for index, (name, marker) in enumerate(zip((*SETTLING, "precision"), "osD^", strict=True)):
        right.plot(shown.index, relative[:, index], f"{marker}{'--' if name == 'precision' else '-'}", ms=3,
                   label=f"{name} (settles at step {settle[name]})")
    right.axhline(0.1, color="0.5", lw=1, ls=":")
    right.set_xscale("symlog", linthresh=10)
    right.set_xlim(0, steps * 1.1)
    right.set_xlabel("training step")
    right.set_ylabel("distance to the end state\n(0.1: settled)")
    right.set_title("what settles when (seed 0)")
    legend_outside(right)
    return fig


FIGURES = {
    "fig_entropy_calibration": lambda run: calibration_figure(run.bijections, run.hmm),
    "fig_key_cosines": lambda run: key_cosines_figure(run.keys),
    "fig_qk_alignment": lambda run: alignment_figure(run.alignment),
    "fig_hmm_manifold": lambda run: hmm_manifold_figure(run.manifold.inputs["hmm"], run.hmm_beyond),
    "fig_value_manifold": lambda run: value_manifold_figure(run.manifold, "separate"),
    "fig_value_manifold_hmm": lambda run: value_manifold_figure(run.manifold, "hmm"),
    "fig_frame_precision": lambda run: frame_figure(run.frame),
}
"""Every figure the chapter's notebook shows, by its file name, as a function of the chapter's
run (what ``run`` returns) to the figure."""
