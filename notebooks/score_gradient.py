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
# Papermill sets the parameters of the next cell when the book is built:[^parameters] the
# profile, quick (a laptop CPU, seconds) or paper (more and larger random heads); the device,
# picked automatically or named; and, if given, a JSON file of settings that replaces the
# profile's. The experiment is a module of the library;[^module] this notebook runs it once,
# as the command line does,[^command] and shows its parts.
#
# [^parameters]: `profile` (`quick` or `paper`), `device` (`auto`, `cpu` or `cuda`) and
#     `settings_file`.
# [^module]: `attention_dynamics.chapters.score_gradient`, its function `run`.
# [^command]: `python -m attention_dynamics run score_gradient`.

# %% tags=["parameters"]
profile = "quick"
device = "auto"
seed = 0
settings_file = None

# %% tags=["hide-input"]
from attention_dynamics.book.notebook import (
    chapter_settings,
    glue_as_text,
    setup_notebook,
)
from attention_dynamics.book.plotting import show_figure
from attention_dynamics.book.tables import reader_table
from attention_dynamics.chapters import score_gradient as chapter
from attention_dynamics.chapters.score_gradient import figures, tables

dev, _, res = setup_notebook("score_gradient", profile, device, seed)
settings = chapter_settings(chapter, profile, res, settings_file)

# %% [markdown]
# The whole experiment runs here, every part recording its numbers; the sections below show
# its parts.

# %%
experiment = chapter.run(res, settings, dev, seed)

# %% [markdown]
# ## (a) The closed form against autograd
#
# Each problem draws a batch size, a number of heads, a length $T$ (including $T = 1$) and
# the three widths at random, a causal or a full mask, and a score scale; a fifth of the
# problems use a scale large enough to saturate the softmax. All arithmetic is in float64.
# For each problem we compare every closed-form gradient with autograd's and keep the
# largest absolute difference.

# %%
reader_table(tables.gradient_error_table(experiment.closed_form))

# %% [markdown]
# ## (b) Compatibility, advantage and score gradient of one head
#
# One sequence of length 12 through one causal head. The upper triangle is masked
# (grey): those pairs have no weight, so no advantage and no gradient.

# %%
show_figure("fig_score_heatmaps", figures.score_heatmaps(experiment.matrices))

# %% [markdown]
# ## (c) One descent step on the scores moves attention mass to the negative-advantage keys
#
# Take the scores $s$ of a problem, step them to $s' = s - \eta\,\partial L/\partial s$ with
# everything else fixed, and recompute the weights exactly. For each query row $i$ with at
# least two keys, let $N_i = \{j : A_{ij} < 0\}$ be the keys that are better than the
# attention-weighted baseline (their value lowers the loss). The proposition of the chapter says
# that the mass $\sum_{j \in N_i} \alpha_{ij}$ rises, to first order in $\eta$, in every row with
# a non-zero advantage, and that the loss falls. We measure both at three step sizes, with
# $\eta$ chosen per problem so that the largest score moves by the step size that labels each
# row of the table (in score units).
# Rows whose predicted change is below $10^{-12}$ (a single key, or an advantage so small that
# the change is lost in float64 rounding) are left out, and so are problems with no such row.

# %%
reader_table(experiment.score_step.table)

# %%
show_figure("fig_mass_shift", figures.mass_shift_figure(experiment.score_step))

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
# score moves by the table's step size.

# %%
reader_table(tables.weight_step_table(experiment.weight_step))

# %% [markdown]
# The same measure on heads that have been trained: the one-head model of
# {doc}`/book/em_reading` on the sticky chain, one head per seed, at initialisation and
# after {glue:text}`sticky_steps:,.0f` full-batch steps of the EM-like schedule on a sequence
# of {glue:text}`sticky_sequence_length:,.0f` symbols, each measured on the first
# {glue:text}`sticky_window:,.0f` positions of a fresh sequence of its chain, with the small
# step.

# %%
reader_table(tables.trained_heads_table(experiment.trained))

# %%
show_figure("fig_weight_step_rows", figures.weight_step_figure(experiment.weight_step))

# %% [markdown]
# ## (e) The cost of the diagnostics
#
# The backward pass of a training step already forms $B$, as the gradient of the weights
# ($\partial L/\partial \alpha_{ij} = u_i \cdot v_j$), and every value update; kept, they leave
# the baseline $u_i \cdot o_i$, $A$ and $\partial L/\partial s$ to a few elementwise products
# (one function of the library does it[^diagnostics]). We time three things on one problem
# (batch 8, 4 heads, widths 32): a plain forward and backward pass; the same pass keeping those
# gradients, followed by the diagnostics; and the route that does not use the routing law, one
# autograd call per allowed score pair $\partial L / \partial s_{ij}$, each call reading one
# entry. The per-pair route is what differentiating each score separately costs; autograd can
# also return the whole matrix $\partial L/\partial s$ in one pass if asked to retain it, which
# the overhead ratio below (diagnosed against a plain step) bounds from above.
#
# [^diagnostics]: `attention_dynamics.book.benchmarking.routing_diagnostics`.

# %%
reader_table(tables.diagnostics_table(experiment.cost))

# %% [markdown]
# ## Results
#
# Every number above is written to this notebook's results file; the chapter quotes them.

# %%
tables.results_table(res)
glue_as_text(
    res, ["routing_law_max_abs_error", "closed_form_max_abs_error", "row_sum_max_abs"]
)

# %%
_ = res.save()
