# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Notebook: the score gradient, checked
#
# This notebook executes the claims of {doc}`/book/score_gradient`: the advantage law for
# $\partial L/\partial s_{ij}$ and its corollaries, checked against autograd; the matrices
# $B$, $A$ and $\partial L/\partial s$ of one head; the effect of one descent step on the
# attention mass; and the cost of the closed-form diagnostics.
#
# The parameters below are set by papermill when the book is built. `profile` is `quick`
# (a laptop CPU, seconds) or `paper` (more and larger random heads); `device` is `auto`,
# `cpu` or `cuda`.

# %% tags=["parameters"]
profile = "quick"
device = "auto"
seed = 0

# %% tags=["hide-input"]
import dataclasses

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from attention_dynamics.book.benchmarking import diagnostics_benchmark
from attention_dynamics.book.notebook import setup_notebook
from attention_dynamics.book.plotting import panel_grid, show_figure
from attention_dynamics.heads import gradient_errors, sample_head_problem
from attention_dynamics.parameter_step import (
    better_key_mass_change,
    first_order_score_change,
    weight_step_score_change,
)
from attention_dynamics.runtime import select
from attention_dynamics.sticky.analysis import head_problem
from attention_dynamics.sticky.model import init_params
from attention_dynamics.sticky.training import (
    sticky_chain_data,
    sticky_chain_heldout,
    train,
)
from attention_dynamics.tasks.sticky_chain import PAPER_SEEDS

dev, gen, res = setup_notebook("score_gradient", profile, device, seed)

settings = select(
    profile,
    quick=dict(
        n_problems=300,
        max_length=40,
        n_step_problems=200,
        n_kernel_heads=200,
        kernel_steps=(1e-3, 1e-1),
        sticky_T=500,
        sticky_steps=300,
        sticky_window=64,
        timing_length=64,
        repeats=5,
    ),
    paper=dict(
        n_problems=3000,
        max_length=128,
        n_step_problems=2000,
        n_kernel_heads=2000,
        kernel_steps=(1e-3, 1e-1),
        sticky_T=2000,
        sticky_steps=1000,
        sticky_window=64,
        timing_length=128,
        repeats=9,
    ),
)
settings

# %% [markdown]
# ## (a) The closed form against autograd
#
# Each problem draws a batch size, a number of heads, a length $T$ (including $T = 1$) and
# the three widths at random, a causal or a full mask, and a score scale; a fifth of the
# problems use a scale large enough to saturate the softmax. All arithmetic is in float64.
# For each problem we compare every closed-form gradient with autograd's and keep the
# largest absolute difference.


# %%
def random_shape(generator):
    """Batch, heads, length, d_x, d_k, d_v drawn uniformly from small ranges."""

    def draw(low, high):
        return int(torch.randint(low, high + 1, (1,), generator=generator, device=dev))

    return (
        draw(1, 4),
        draw(1, 4),
        draw(1, settings["max_length"]),
        draw(1, 16),
        draw(1, 16),
        draw(1, 16),
    )


rows = []
for index in range(settings["n_problems"]):
    shape = random_shape(gen)
    saturated = index % 5 == 0
    problem = sample_head_problem(
        gen,
        *shape,
        score_scale=30.0 if saturated else 1.0,
        mask="causal" if index % 4 else None,
        device=dev,
    )
    rows.append(
        dict(
            zip(("batch", "heads", "T", "d_x", "d_k", "d_v"), shape, strict=True),
            saturated=saturated,
            causal=bool(index % 4),
            **gradient_errors(problem),
        )
    )
errors = pd.DataFrame(rows)
quantities = ["compatibility", "scores", "q", "k", "v", "w_q", "w_k", "w_v", "row_sum"]
summary = errors[quantities].agg(["max", "median"]).T
summary.columns = ["max |closed form - autograd|", "median"]
summary

# %%
res.record("routing_law_max_abs_error", errors["scores"].max())
res.record("closed_form_max_abs_error", errors[quantities[:-1]].to_numpy().max())
res.record("row_sum_max_abs", errors["row_sum"].max())
res.record("n_random_problems", len(errors))
res.record("max_problem_length", errors["T"].max())

# %% [markdown]
# ## (b) Compatibility, advantage and score gradient of one head
#
# One sequence of length 12 through one causal head. The upper triangle is masked
# (grey): those pairs have no weight, so no advantage and no gradient.

# %%
example = sample_head_problem(gen, 1, 1, 12, 8, 4, 6, device=dev)
record, _ = example.forward_backward()
grads = example.closed_form(record)
panels = {
    r"compatibility $B = u v^\top$": grads.compatibility,
    r"advantage $A$": grads.advantage,
    r"score gradient $\partial L / \partial s = \alpha \odot A$": grads.scores,
}
fig, axes = panel_grid(3)
for ax, (label, matrix) in zip(axes, panels.items(), strict=True):
    shown = matrix[0, 0].cpu().numpy().copy()
    shown[~record.mask.cpu().numpy()] = np.nan
    limit = np.nanmax(np.abs(shown))
    image = ax.imshow(shown, cmap="RdBu_r", vmin=-limit, vmax=limit)
    ax.set_facecolor("0.85")
    ax.grid(False)
    ax.set_xlabel("key position $j$")
    ax.set_ylabel("query position $i$")
    ax.set_title(label, fontsize=10)
    fig.colorbar(image, ax=ax, shrink=0.8)
show_figure("fig_score_heatmaps", fig)

# %% [markdown]
# ## (c) One descent step on the scores moves attention mass to the negative-advantage keys
#
# Take the scores $s$ of a problem, step them to $s' = s - \eta\,\partial L/\partial s$ with
# everything else fixed, and recompute the weights exactly. For each query row $i$ with at
# least two keys, let $N_i = \{j : A_{ij} < 0\}$ be the keys that are better than the
# attention-weighted baseline (their value lowers the loss). The proposition of the chapter says
# that the mass $\sum_{j \in N_i} \alpha_{ij}$ rises, to first order in $\eta$, in every row with
# a non-zero advantage, and that the loss falls. We measure both at three step sizes, with
# $\eta$ chosen per problem so that the largest score moves by `step` (in score units).
# Rows whose predicted change is below $10^{-12}$ (a single key, or an advantage so small that
# the change is lost in float64 rounding) are left out, and so are problems with no such row.


# %%
def mass_shift(problem, step):
    """Per-row change of the mass on negative-advantage keys after one exact descent
    step.
    """
    record, loss = problem.forward_backward()
    grads = problem.closed_form(record)
    scores, values = record.scores.detach(), record.v.detach()
    eta = step / grads.scores.abs().max().clamp_min(1e-300)
    with torch.no_grad():
        new_scores = scores - eta * grads.scores
        new_weights = torch.softmax(new_scores, dim=-1)
        new_loss = problem.loss_from_scores(new_scores, values)
    alpha = record.weights.detach()
    better = grads.advantage < 0
    before = (alpha * better).sum(-1)
    after = (new_weights * better).sum(-1)
    # first-order prediction: d alpha = alpha (ds - <alpha, ds>) with ds = -eta alpha A
    ds = -eta * grads.scores
    predicted = (alpha * (ds - (alpha * ds).sum(-1, keepdim=True)) * better).sum(-1)
    # rows whose predicted change is resolvable in float64 (a row with one key, or
    # a tiny
    # advantage, changes its mass by less than the rounding error of the weights)
    resolvable = predicted.abs() > 1e-12
    return dict(
        shift=(after - before)[resolvable],
        predicted=predicted[resolvable],
        loss_drop=(loss - new_loss).item() if resolvable.any() else None,
    )


step_rows = []
for step in (1e-3, 1e-2, 1e-1):
    step_gen = torch.Generator(device=dev).manual_seed(
        seed + 1
    )  # same problems at every step
    shifts, predicted, drops = [], [], []
    for _ in range(settings["n_step_problems"]):
        out = mass_shift(
            sample_head_problem(step_gen, *random_shape(step_gen), device=dev), step
        )
        shifts.append(out["shift"])
        predicted.append(out["predicted"])
        if out["loss_drop"] is not None:
            drops.append(out["loss_drop"])
    shift, pred = torch.cat(shifts), torch.cat(predicted)
    step_rows.append(
        dict(
            step=step,
            rows=len(shift),
            fraction_rows_mass_up=(shift > 0).float().mean().item(),
            median_shift_over_prediction=(shift / pred).median().item(),
            fraction_loss_down=float(np.mean(np.array(drops) > 0)),
        )
    )
steps = pd.DataFrame(step_rows).set_index("step")
steps

# %%
smallest = steps.iloc[0]
res.record("mass_shift_rows", smallest["rows"])
res.record("mass_shift_fraction_up", smallest["fraction_rows_mass_up"])
res.record("mass_shift_ratio_to_first_order", smallest["median_shift_over_prediction"])
res.record("loss_decrease_fraction", smallest["fraction_loss_down"])
res.record("mass_shift_fraction_up_large_step", steps.iloc[-1]["fraction_rows_mass_up"])

# %%
fig, ax = plt.subplots(figsize=(5.5, 4))
out = mass_shift(
    sample_head_problem(
        torch.Generator(device=dev).manual_seed(seed + 2), 4, 2, 32, 8, 4, 6, device=dev
    ),
    1e-2,
)
ax.scatter(out["predicted"].cpu(), out["shift"].cpu(), s=10, alpha=0.7)
line = np.array([0, out["predicted"].max().item()])
ax.plot(line, line, color="0.3", lw=1, label="first-order prediction")
ax.set_xlabel(r"predicted change of mass on $N_i$")
ax.set_ylabel(r"measured change of mass on $N_i$")
ax.legend()
show_figure("fig_mass_shift", fig)

# %% [markdown]
# ## (d) A step on the weights: the routing law in parameter space
#
# Training steps $W_Q$ and $W_K$, not the scores, and the scores follow through the Gram
# kernel of the chapter: to first order,
# $\Delta s = -(\eta/d_k)\,[X X^\top G K K^\top + Q Q^\top G X X^\top]$ for one sequence.
# The same measure as in (c), on single heads of one sequence of length 16 ($d_x = 32$,
# $d_k = 8$): per head, the fraction of query rows whose mass on $N_i$ rises after one exact
# step, (i) on the scores, (ii) on the weights (the exact new scores, second order included),
# (iii) on the weights of the same head fed orthonormal inputs ($X X^\top = I$: the input Gram
# matrix drops out, $Q Q^\top$ and $K K^\top$ remain). Each step is scaled so that the largest
# score moves by `step`.


# %%
def orthonormal_inputs(problem):
    """The same head, its inputs replaced by orthonormal rows (same span)."""
    rows = torch.linalg.qr(problem.x[0, 0].T)[0].T  # (T, d_x), T <= d_x
    return dataclasses.replace(problem, x=rows[None, None].contiguous())


def rows_gaining(problem, step, on):
    """Fraction of the head's resolvable rows whose mass on N_i rises after one step."""
    record, _ = problem.forward_backward()
    grads = problem.closed_form(record)
    if on == "scores":
        change = -grads.scores * (step / grads.scores.abs().max())
    else:
        direction = first_order_score_change(record, grads.w_q, grads.w_k, 1.0)
        eta = step / direction.abs().max()
        change = weight_step_score_change(record, grads.w_q, grads.w_k, eta)
    exact, predicted = better_key_mass_change(
        record.weights.detach(), grads.advantage, change
    )
    resolvable = predicted.abs() > 1e-12
    return (exact[resolvable] > 0).double().mean().item()


kernel_rows = []
for step in settings["kernel_steps"]:
    kernel_gen = torch.Generator(device=dev).manual_seed(
        seed + 3
    )  # same heads at every step
    for index in range(settings["n_kernel_heads"]):
        head = sample_head_problem(kernel_gen, 1, 1, 16, 32, 8, 8, device=dev)
        kernel_rows += [
            dict(
                step=step,
                head=index,
                condition=condition,
                fraction=rows_gaining(problem, step, on),
            )
            for condition, problem, on in (
                ("score step", head, "scores"),
                ("weight step", head, "weights"),
                (
                    "weight step, orthonormal inputs",
                    orthonormal_inputs(head),
                    "weights",
                ),
            )
        ]
kernel = pd.DataFrame(kernel_rows)
kernel_summary = (
    kernel.groupby(["step", "condition"])["fraction"]
    .agg(mean="mean", worst="min", all_rows=lambda f: (f == 1).mean())
    .unstack("step")
)
kernel_summary.round(3)

# %%
small = kernel[kernel.step == min(settings["kernel_steps"])]
for condition, key in (
    ("score step", "score"),
    ("weight step", "weight"),
    ("weight step, orthonormal inputs", "orthonormal"),
):
    fractions = small[small.condition == condition].fraction
    res.record(f"kernel_fraction_up_{key}_mean", fractions.mean())
    res.record(f"kernel_fraction_up_{key}_worst", fractions.min())
    res.record(f"kernel_heads_all_rows_up_{key}", (fractions == 1).mean())
res.record("kernel_heads", settings["n_kernel_heads"])
res.record("kernel_step", min(settings["kernel_steps"]))
res.record(
    "kernel_fraction_up_weight_mean_large_step",
    kernel[
        (kernel.step == max(settings["kernel_steps"]))
        & (kernel.condition == "weight step")
    ].fraction.mean(),
)

# %% [markdown]
# The same measure on heads that have been trained: the one-head model of
# {doc}`/book/em_reading` on the sticky chain, one head per seed, at initialisation and
# after `sticky_steps` full-batch steps of the EM-like schedule on a sequence of `sticky_T`
# symbols, each measured on the first `sticky_window` positions of a fresh sequence of its
# chain, with the small step.

# %%
sticky_seeds = list(PAPER_SEEDS)
sticky_train = sticky_chain_data(sticky_seeds, settings["sticky_T"])
sticky_fresh = sticky_chain_heldout(sticky_seeds, settings["sticky_window"])
sticky_init = init_params(sticky_seeds)
sticky_trained = train(
    sticky_init,
    sticky_train.inputs,
    sticky_train.targets,
    "em",
    settings["sticky_steps"],
).final_params
sticky_rows = [
    dict(
        when=when,
        seed=sticky_seed,
        condition=condition,
        fraction=rows_gaining(
            head_problem(params, sticky_fresh.inputs, sticky_fresh.targets, run),
            min(settings["kernel_steps"]),
            on,
        ),
    )
    for when, params in (("init", sticky_init), ("trained", sticky_trained))
    for run, sticky_seed in enumerate(sticky_seeds)
    for condition, on in (("score step", "scores"), ("weight step", "weights"))
]
sticky_kernel = pd.DataFrame(sticky_rows)
for (when, condition), fractions in sticky_kernel.groupby(["when", "condition"])[
    "fraction"
]:
    key = condition.split()[0]
    res.record(f"sticky_fraction_up_{key}_{when}_mean", fractions.mean())
    res.record(f"sticky_fraction_up_{key}_{when}_worst", fractions.min())
res.record("sticky_heads", len(sticky_seeds))
res.record_all(
    {
        "steps": settings["sticky_steps"],
        "sequence_length": settings["sticky_T"],
        "window": settings["sticky_window"],
    },
    prefix="sticky_",
)
sticky_kernel.pivot_table(
    index="condition", columns="when", values="fraction", aggfunc=["mean", "min"]
).round(3)

# %%
fig, ax = plt.subplots(figsize=(6, 3.6))
bins = np.linspace(0, 1, 21)
for condition, color in zip(
    ("weight step", "weight step, orthonormal inputs"),
    ("tab:orange", "tab:green"),
    strict=True,
):
    ax.hist(
        small[small.condition == condition].fraction,
        bins=bins,
        alpha=0.6,
        color=color,
        label=condition,
    )
ax.axvline(1.0, color="tab:blue", lw=2, label="score step (every head)")
ax.set_xlabel("fraction of a head's rows whose mass on $N_i$ rises")
ax.set_ylabel("heads")
ax.legend(frameon=False, loc="upper left")
show_figure("fig_weight_step_rows", fig)

# %% [markdown]
# ## (e) The cost of the diagnostics
#
# After the backward pass of a training step, the upstream gradient $u$ is at hand, and
# $B$, $A$, $\partial L/\partial s$ and every value update follow by a few matrix products
# (`attention_dynamics.book.benchmarking.routing_diagnostics`). We time three things on one problem
# (batch 8, 4 heads, widths 32): a plain forward and backward pass; the same pass followed by
# the diagnostics; and the route that does
# not use the routing law, one autograd call per allowed score pair
# $\partial L / \partial s_{ij}$, each call reading one entry. The per-pair route is what
# differentiating each score separately costs; autograd can also return the whole matrix
# $\partial L/\partial s$ in one pass if asked to retain it, which the overhead ratio below
# (closed form against a plain step) bounds from above.

# %%
bench = diagnostics_benchmark(
    length=settings["timing_length"],
    repeats=settings["repeats"],
    seed=seed + 3,
    device=dev,
)
pd.Series(bench)

# %%
res.record("diagnostics_overhead_ratio", bench["overhead_ratio"], timing=True)
res.record("diagnostics_speedup_vs_autograd", bench["speedup_vs_per_pair"], timing=True)
res.record("timing_length", settings["timing_length"])
res.record("timing_pairs", bench["pairs"])

# %% [markdown]
# ## Results
#
# The numbers above are written to this notebook's results file and glued into the chapter.

# %%
pd.Series(res.metrics)

# %%
_ = res.save()  # the results file (its path is not for the page)
