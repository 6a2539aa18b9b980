"""Chapter 2's figures and its table, each drawn from the parts' results (a matplotlib figure,
or a DataFrame)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from attention_dynamics.book.formatting import format_number
from attention_dynamics.book.plotting import (
    FIGURE_INCHES,
    LEGEND_POINTS,
    MIN_POINTS,
    figure_legend,
    legend_outside,
    panel_grid,
    plot_seed_band,
)
from attention_dynamics.chapters.value_update.conditions import (
    LABELS,
    Conditions,
    FeedbackAlignment,
    FirstOrderCheck,
    UniformStart,
)
from attention_dynamics.chapters.value_update.controls import (
    EM_MEASURES,
    CapacityControls,
    EmComparison,
    InitSweep,
    SymmetricStart,
)
from attention_dynamics.chapters.value_update.settings import RESPONSIBILITY_STEPS
from attention_dynamics.measures import specialization as spec
from attention_dynamics.toy_routing import CONDITIONS

COLOURS = {"coupled": "C0", "frozen_routing": "C1", "frozen_values": "C2"}
"""The three conditions' colours."""


def _draw_value_paths(ax, values, weights, groups, n_groups: int, reach: float,
                      label: str) -> None:
    """Paths of the values ``(S, M, G)`` in the sum-zero plane, coloured by the group that holds
    most of their final attention ``weights`` ``(S, N, M)``; end dots sized by attention mass;
    grey arrows to the classes, ``reach`` logits long."""
    basis = spec.sum_zero_basis(n_groups)
    palette = sns.color_palette("colorblind", n_groups)
    coords = (values @ basis).numpy()  # (S, M, 2)
    owner = spec.dominant_group(weights[-1], groups, n_groups).numpy()
    mass = weights[-1].mean(dim=0).numpy()  # share of all attention, (M,)
    for g in range(n_groups):
        tip = basis[g].numpy() / np.linalg.norm(basis[g].numpy()) * reach
        ax.annotate("", xy=tip, xytext=(0, 0), arrowprops=dict(arrowstyle="->", color="0.6",
                                                               lw=1.2))
        ax.text(*(tip * 1.12), f"class {g}", color="0.35", ha="center", va="center",
                fontsize=MIN_POINTS)
    for j in range(coords.shape[1]):
        colour = palette[owner[j]]
        ax.plot(coords[:, j, 0], coords[:, j, 1], color=colour, lw=1.6, alpha=0.9)
        ax.plot(*coords[0, j], "o", color=colour, mfc="white", ms=5)
        ax.plot(*coords[-1, j], "o", color=colour, ms=4 + 16 * mass[j])
    ax.set_xlim(-reach * 1.4, reach * 1.4)
    ax.set_ylim(-reach * 1.3, reach * 1.3)
    ax.set_aspect("equal")
    ax.set_xlabel(label)
    ax.set_xticks([])
    ax.set_yticks([])


def value_paths_figure(conditions: Conditions) -> Figure:
    """The values of the first seed moving through the sum-zero plane of logit space, one panel
    per condition (coupled, routing frozen, values frozen)."""
    run, idx = conditions.run, conditions.index
    groups, n_groups = run.queries.groups, run.config.n_groups
    basis = spec.sum_zero_basis(n_groups)
    palette = sns.color_palette("colorblind", n_groups)
    shown = {name: (run.values[:, 0, idx[name]], run.weights[:, 0, idx[name]])
             for name in CONDITIONS}
    reach = 1.05 * max(float((v @ basis).abs().max()) for v, _ in shown.values())
    fig, axes = plt.subplots(2, 2, figsize=(FIGURE_INCHES, 5.4))
    axes = axes.ravel()
    for ax, (name, (values, weights)) in zip(axes[:3], shown.items(), strict=True):
        _draw_value_paths(ax, values, weights, groups, n_groups, reach, LABELS[name])
    handles = [plt.Line2D([], [], color=palette[g], lw=2, label=f"mostly group {g}")
               for g in range(n_groups)]
    handles += [plt.Line2D([], [], marker="o", color="0.3", mfc="white", ls="", label="start"),
                plt.Line2D([], [], marker="o", color="0.3", ls="",
                           label="end (size:\nattention mass)")]
    axes[3].axis("off")  # the fourth cell holds the legend
    axes[3].legend(handles=handles, loc="center", frameon=False, fontsize=LEGEND_POINTS)
    return fig


def responsibility_figure(conditions: Conditions) -> Figure:
    """The responsibility matrix ``(G, M)`` of the first seed's coupled run at four snapshots,
    each value's attention mass above its column; values ordered by their final group."""
    run, c, step_axis = conditions.run, conditions.index["coupled"], conditions.step_axis
    groups, n_groups = run.queries.groups, run.config.n_groups
    snapshots = [0, *(int(np.searchsorted(step_axis, step)) for step in RESPONSIBILITY_STEPS),
                 len(step_axis) - 1]
    weights_0 = run.weights[:, 0, c]
    resp = spec.responsibility_matrix(weights_0, groups, n_groups)  # (S, G, M)
    mass = weights_0.mean(dim=-2)  # (S, M)
    order = np.lexsort((-mass[-1].numpy(), resp[-1].argmax(dim=0).numpy()))
    # two snapshots to a row, each a bar row (mass) over its heat map (responsibility)
    rows = -(-len(snapshots) // 2)
    fig, grid = plt.subplots(2 * rows, 2, figsize=(FIGURE_INCHES, 2.7 * rows),
                             height_ratios=[1, 3] * rows, sharex="col")
    for k, s in enumerate(snapshots):
        top, bottom = grid[2 * (k // 2), k % 2], grid[2 * (k // 2) + 1, k % 2]
        top.bar(np.arange(run.config.n_values) + 0.5, mass[s, order].numpy(), color="0.55",
                width=0.7)
        top.set_ylim(0, 1)
        top.set_yticks([0, 1] if k % 2 == 0 else [])
        sns.heatmap(resp[s][:, order].numpy(), ax=bottom, vmin=0, vmax=1, cmap="mako_r",
                    annot=True, fmt=".1f", annot_kws={"fontsize": MIN_POINTS}, cbar=False,
                    xticklabels=[str(j) for j in order], yticklabels=k % 2 == 0)
        bottom.set_xlabel(f"value (step {int(step_axis[s])})")
        if k % 2 == 0:
            bottom.set_ylabel("group")
            top.set_ylabel("mass")
    for unused in grid[:, 1] if len(snapshots) % 2 else []:
        unused.remove()
    return fig


def specialization_figure(conditions: Conditions, uniform: UniformStart) -> Figure:
    """Prototype specialization, routing specialization and loss (nats) over training, seed
    means with the range of the seeds: the three conditions and the two runs from uniform
    attention."""
    u_fr, u_fv = uniform.run.condition("frozen_routing"), uniform.run.condition("frozen_values")
    ours = (conditions.proto, conditions.routing, conditions.run.loss)
    from_uniform = (uniform.proto, uniform.routing, uniform.run.loss)
    lines = [  # (label, colour, style, run's series, index of the condition)
        *((LABELS[name], COLOURS[name], "-", ours, conditions.index[name]) for name in CONDITIONS),
        ("routing frozen uniform", "0.5", "--", from_uniform, u_fr),
        ("routing from uniform, values frozen", "0.3", ":", from_uniform, u_fv),
    ]
    fig, axes = panel_grid(3, panel_size=(FIGURE_INCHES, 1.5), sharex=True)
    ylabels = ["prototype\nspecialization", "routing\nspecialization", "loss (nats)"]
    for k, (ax, ylabel) in enumerate(zip(axes, ylabels, strict=True)):
        for label, colour, ls, series, c_line in lines:
            plot_seed_band(ax, conditions.step_axis, series[k][:, :, c_line], colour, label=label,
                           ls=ls, lw=1.8)
        ax.set_ylabel(ylabel)
    axes[-1].set_xlabel("step")  # the panels share it
    figure_legend(fig, ncol=2)
    return fig


def feedback_figure(first_order: FirstOrderCheck, alignment: FeedbackAlignment,
                    conditions: Conditions) -> Figure:
    """The relative error of the predicted advantage change against the value step size
    (top), and the reinforcement index of each part of a value step along the coupled runs
    (bottom)."""
    step_axis = conditions.step_axis
    fig, axes = panel_grid(2, panel_size=(FIGURE_INCHES, 2.7))
    for (label, (tot, fb)), marker in zip(first_order.errors.items(), ["o", "s"], strict=True):
        axes[0].loglog(first_order.etas, tot, marker=marker, color="C0",
                       label=f"feedback + curvature, {label}")
        axes[0].loglog(first_order.etas, fb, marker=marker, color="C3", ls="--",
                       label=f"feedback only, {label}")
    axes[0].set_xlabel(r"value step size $\eta$")
    axes[0].set_ylabel("relative error\n" r"of predicted $\Delta A$")
    legend_outside(axes[0], ncol=2)
    for (name, series), colour in zip(alignment.alignment.items(), ["C0", "C1", "0.2"],
                                      strict=True):
        plot_seed_band(axes[1], step_axis, series, colour, label=name, lw=1.8)
    axes[1].axhline(0, color="0.5", lw=0.8)
    axes[1].set_xscale("symlog", linthresh=10)
    axes[1].set_xlim(0, step_axis[-1])
    axes[1].set_xlabel("step (coupled runs)")
    axes[1].set_ylabel(r"cosine of $\alpha\odot\Delta A$" "\npart with $G$")
    legend_outside(axes[1], ncol=3)
    return fig


def coupling_control_figure(conditions: Conditions, capacity: CapacityControls,
                            symmetric: SymmetricStart) -> Figure:
    """Prototype specialization of the coupled run and the capacity controls from the random
    start and from the symmetric state, and the departure from the symmetric state (the
    values' spread, the attention's tilt) of the coupled run and the ablations."""
    idx, step_axis = conditions.index, conditions.step_axis
    switch = conditions.run.config.steps // 2
    fig, axes = panel_grid(3, panel_size=(FIGURE_INCHES, 1.8))
    control_lines = [  # (label, colour, style, condition; None: the recombined halves)
        ("coupled", "C0", "-", "coupled"),
        ("routing then values", "C4", "-", "routing_then_values"),
        ("values then routing", "C5", "-", "values_then_routing"),
        ("recombined halves", "0.25", "--", None),
    ]
    epsilon = format_number(symmetric.run.config.value_scale, 1)
    for ax, series, halves, title in [
            (axes[0], conditions.proto, capacity.recombined, "random start"),
            (axes[1], symmetric.proto, symmetric.recombined, f"symmetric start, ε = {epsilon}")]:
        for label, colour, ls, name in control_lines:
            data = halves if name is None else series[:, :, idx[name]]
            plot_seed_band(ax, step_axis, data, colour, label=label, ls=ls, lw=1.8, alpha=0.12)
        for name in ("frozen_routing", "frozen_values"):  # the ablations, seed means only
            ax.plot(step_axis, series[:, :, idx[name]].mean(dim=1), color=COLOURS[name], ls=":",
                    lw=1.5, label=LABELS[name])
        ax.axvline(switch, color="0.6", lw=0.8)
        ax.set_ylabel("prototype\nspecialization")
        ax.set_title(title)
    axes[1].set_xlabel(f"step (sequential runs switch at {switch})")  # the same above
    legend_outside(axes[1], ncol=2)
    # routing frozen drawn wide, under the values-frozen spread that it equals
    for name, width in (("frozen_routing", 4), ("frozen_values", 1.8), ("coupled", 1.8)):
        for series, ls in ((symmetric.spread, "-"), (symmetric.tilt, "--")):
            axes[2].semilogy(step_axis, series[:, :, idx[name]].mean(dim=1), color=COLOURS[name],
                             ls=ls, lw=width if ls == "-" else 1.8)
    legend_outside(
        axes[2],
        handles=[plt.Line2D([], [], color=COLOURS[name], lw=2, label=LABELS[name])
                 for name in ("coupled", "frozen_routing", "frozen_values")]
        + [plt.Line2D([], [], color="0.3", label="value spread"),
           plt.Line2D([], [], color="0.3", ls="--", label="attention tilt")], ncol=2)
    axes[2].set_xlabel("step")
    axes[2].set_ylabel("departure from\nthe symmetric state")
    axes[2].set_title(f"symmetric start, ε = {epsilon}")
    return fig


def init_sweep_figure(sweep: InitSweep) -> Figure:
    """Heat maps of the coupled run's margins over the grid of initial routing (rows) and
    value (columns) scales: prototype and routing specialization over the better ablation,
    prototype specialization over the better sequential order."""
    fig, axes = panel_grid(3, columns=2, panel_size=(FIGURE_INCHES / 2, 2.5))
    for ax, grid, label in [(axes[0], sweep.proto, "prototype margin"),
                            (axes[1], sweep.routing, "routing margin"),
                            (axes[2], sweep.coupling, "prototype margin\nover sequential")]:
        bound = np.abs(grid).max()
        sns.heatmap(grid, ax=ax, annot=True, fmt=".2f", cmap="vlag", vmin=-bound, vmax=bound,
                    xticklabels=list(sweep.scales), yticklabels=list(sweep.scales), cbar=False,
                    annot_kws={"fontsize": MIN_POINTS})
        ax.set_title(label)
        ax.set_xlabel("value init scale")
        ax.set_ylabel("routing init scale")
    return fig


def em_figure(em: EmComparison, conditions: Conditions) -> Figure:
    """Loss (nats, log scale) and prototype specialization over training, seed means with the
    range of the seeds: the coupled run trained by gradient, and EM with the values solved."""
    c, steps = conditions.index["coupled"], conditions.step_axis
    fig, (left, right) = panel_grid(2, panel_size=(FIGURE_INCHES, 2.5))
    for series, colour, label in [(conditions.run.loss[:, :, c], "C0", "coupled (gradient)"),
                                  (em.loss, "C3", "EM (values solved)")]:
        plot_seed_band(left, steps, series.numpy(), color=colour, label=label)
    for series, colour in [(conditions.proto[:, :, c], "C0"), (em.proto, "C3")]:
        plot_seed_band(right, steps, series.numpy(), color=colour)
    left.set_yscale("log")
    left.set_xlabel("step")
    left.set_ylabel("cross-entropy (nats)")
    figure_legend(fig, ncol=2)
    right.set_xlabel("step")
    right.set_ylabel("prototype specialization")
    return fig


FIGURES = {
    "fig_value_trajectories": lambda run: value_paths_figure(run.conditions),
    "fig_value_responsibility": lambda run: responsibility_figure(run.conditions),
    "fig_value_specialization": lambda run: specialization_figure(run.conditions, run.uniform),
    "fig_value_feedback": lambda run: feedback_figure(run.first_order, run.alignment,
                                                      run.conditions),
    "fig_value_coupling_control": lambda run: coupling_control_figure(
        run.conditions, run.capacity, run.symmetric),
    "fig_value_init_sweep": lambda run: init_sweep_figure(run.sweep),
    "fig_value_toy_em": lambda run: em_figure(run.em, run.conditions),
}
"""Every figure the chapter's notebook shows, by its file name, as a function of the chapter's
run (what ``run`` returns) to the figure."""


def em_table(em: EmComparison) -> pd.DataFrame:
    """EM against the coupled run, one row per run and one column per measure (seed means;
    losses and the bound in nats)."""
    names = {"coupled": "coupled (gradient)", "em": "EM (values solved)"}
    return pd.DataFrame([[em.measures[run][measure] for measure in EM_MEASURES] for run in names],
                        index=list(names.values()), columns=list(EM_MEASURES.values()))
