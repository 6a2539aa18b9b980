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
# # The sticky Markov chain: EM-like against SGD, reproduced and extended
#
# This notebook accompanies {doc}`/book/em_reading`. It reruns Paper II's one quantitative
# experiment at the authors' settings (8 symbols, self-transition 0.3 by the authors' script,
# $T = 2000$, 1000 full-batch steps, learning rate 0.01, value learning rate 0.1, seeds 42,
# 2024, 1337, 7777 and 9999), scores both schedules against the exact Bayes-optimal predictor
# of {prf:ref}`prop-sticky-filter` as well as the authors' bound, and then asks what the
# experiment does and does not show: on a fresh sequence, in the paths of the value vectors, in
# the order in which attention and values settle, over a sweep of the value multiplier, and
# with Adam.
#
# Every loss and entropy is in nats, as the paper reports them.

# %% tags=["parameters"]
profile = "quick"
device = "auto"
seed = 0
settings_file = None

# %% tags=["hide-input"]
from myst_nb import glue

from attention_dynamics.book.notebook import chapter_settings, glue_each, setup_notebook
from attention_dynamics.book.plotting import show_figure
from attention_dynamics.book.tables import reader_table
from attention_dynamics.chapters import em_reading as chapter
from attention_dynamics.chapters.em_reading import figures, tables, words

# On one thread (a step is a few hundred small matrix products: two threads took 73 ms
# per step of all ten runs on an idle two-core machine but 0.4 to 3.4 s on a shared one,
# one thread 110 to 160 ms in both).
dev, gen, res = setup_notebook("em_reading", profile, device, seed)
settings = chapter_settings(chapter, profile, res, settings_file)

# %% [markdown]
# The whole experiment runs here, once, and records every metric; the sections below
# show its parts.

# %%
experiment = chapter.run(res, settings, dev, seed)
glue_each(words.page_phrases(experiment, res, settings))

# %% [markdown]
# ## The chain and its exact predictor
#
# The authors' script builds each row from $w_{ii} = 0.3$ and $w_{ij} = 1/d_{ij}$, rescales it
# to $0.7$ and adds $0.3$ on the diagonal: the realised self-transition probability is higher
# than the 0.3 of the text. Both matrices, their bound $H(Y_t \mid Y_{t-1})$, and the exact
# Bayes predictor (the forward filter) on the five training sequences and on five fresh ones.

# %%
chain = experiment.chain
reader_table(tables.chain_table(chain))

# %%
show_figure("fig_em_chain", figures.chain_figure(chain))

# %% [markdown]
# ## The faithful reproduction
#
# The ten runs (five seeds, two schedules) train together in one batched program; seed $s$
# fixes both its sequence and its initial weights, exactly as the authors' script draws them on
# the CPU. The weights are kept every 10 steps for the analyses below.

# %%
rep = experiment.reproduction
reader_table(tables.per_seed_table(chain, rep))

# %% [markdown]
# ## On a fresh sequence
#
# The authors score the one-head runs on the sequence they were trained on (their evaluation
# function[^evaluate]); only their deep variant is scored on a fresh sequence. Here every
# weight snapshot is also scored on a held-out sequence of the same chain (seed $s + 10000$).
#
# [^evaluate]: `evaluate(model, inputs, targets)` in the authors' script.

# %%
held = experiment.heldout

# %%
show_figure("fig_em_loss_curves", figures.loss_curves_figure(chain, rep, held))

# %% [markdown]
# ## The value vectors' paths
#
# Each position's value is $v_t = x_t W_V$, and $W_V$ is linear, so the mean value of the
# positions whose hidden symbol is $s$ is $\bar x_s W_V$ with $\bar x_s$ the mean input of those
# positions: one prototype per symbol, eight paths per run. Lengths, displacements and
# straightness are measured in the full 15 dimensions; the picture is their projection on the
# two principal axes of all the prototype positions of both schedules (first seed).

# %%
paths = experiment.paths
show_figure("fig_em_value_paths", figures.value_paths_figure(paths))
reader_table(tables.path_table(paths, rep.runs))

# %% [markdown]
# ## Does attention settle before the values?
#
# At every snapshot: the mean total-variation distance of the attention rows of every 16th query
# from their final state, and the relative distance of all the value vectors from theirs, each
# divided by its value at the start; and the change of each per step. A run in which the frame
# settles first has its attention curve reach zero well before its value curve. How uniform the
# attention is at the end, how much of it goes to keys of the query's own hidden symbol
# (against the share of such keys, so that uniform attention scores 1),[^symbol-routing] and
# how well the first-order expansion of {prf:ref}`prop-linear-response` reproduces the logits
# tell what kind of routing the head does.
#
# [^symbol-routing]: `attention_dynamics.sticky.analysis.symbol_routing`.

# %%
settled = experiment.settling
reader_table(tables.settling_table(res))

# %% [markdown]
# ## Two timescales, tested where attention sharpens
#
# At the paper's settings the attention barely leaves uniform and long runs memorise their one
# sequence, so the order of settling cannot show. Here every step draws new sequences of the
# same chain:[^fresh] the loss descended is an unbiased estimate of the population loss and
# nothing can be memorised. Every rate is thirty times the paper's (base 0.3, EM-like values
# 3.0), at which the attention sharpens within the CPU budget (at ten times it is still at 0.92
# of uniform after 200 steps; at a hundred times the EM-like value rate of 10 trains
# erratically). An SGD and an EM-like run of one seed share their initial weights and their
# data, and differ only in the schedule. Everything is measured on a fixed probe of held-out
# sequences, on the CPU (the runs are small). Each seed draws its training sequences from its
# own generator, so a seed's data, and so its run, are the same whether 8 or 24 seeds train
# beside it. The decide profile[^decide] runs 24 seeds instead of 8, so that the share of seeds
# in which attention settles first is judged on a narrower interval.
#
# [^fresh]: `attention_dynamics.sticky.fresh.train_fresh`.
# [^decide]: `make decide` runs it.

# %%
fresh = experiment.fresh
reader_table(tables.fresh_table(res), "every metric on fresh sequences")

# %%
show_figure("fig_em_fresh_two_timescales", figures.fresh_figure(fresh))

# %% [markdown]
# ## EM, made precise, on the trained heads
#
# Chapter 3 shows that a row of attention is the exact maximiser of its score mixture's free
# energy, so EM on that mixture would never lower the mixture's evidence, and that the value
# step descends the head's loss $L$, not the M-step objective $Q$. Both are put to the trained
# heads (and to the same heads at initialisation), on the first 512 positions
# of each run's sequence (a causal head's prefix is a problem of its own), in float64: the
# share of query rows whose log-evidence a small descent step on the scores lowers; whether a
# small descent step on the values, which lowers $L$, raises $Q$; and whether the head's loss
# lies below the smallest value $Q$ can take over free values (the M-step's closed form).

# %%
em = experiment.em
reader_table(tables.em_checks_table(em))

# %% [markdown]
# ## A block-coordinate baseline: the values solved exactly
#
# The EM-like schedule is a larger learning rate on $W_V$. The strongest value step there is
# solves for $W_V$: with the attention and the readout held fixed the loss is a convex softmax
# regression of the attended inputs $\alpha X$ (part (b) of {prf:ref}`prop-m-step-closed` is
# the M-step's version of the same regression). This baseline alternates the SGD schedule's
# step on $W_Q$, $W_K$ and $W_O$ with that solve (L-BFGS in float64),[^exact-values] from the
# same initial weights and sequences. Its cost per step, timed here beside plain steps of the
# same five runs, turns steps into seconds.
#
# [^exact-values]: `attention_dynamics.sticky.training.train(..., optimizer="exact-values")`.

# %%
exact = experiment.exact
reader_table(
    tables.schedule_table(res, settings["steps"], settings["exact_steps"]).round(3)
)

# %% [markdown]
# ## The value multiplier, the other parameter groups, and the stability edge
#
# A sweep of the value learning rate $0.01\,m$ with everything else at 0.01, and three
# controls at $\times 10$: routing only ($W_Q$, $W_K$), readout only ($W_O$), and every group
# (plain SGD at 0.1). Two further runs per seed use ten times the base rate on every group,
# SGD and EM-like, which by the time rescaling of gradient flow stand for ten times as many
# steps of the paper's schedules: the "long horizon" of the settling analysis below. Each run
# is scored on its training sequence and a held-out one. Before training, the largest
# eigenvalue of the Hessian of the loss in $W_V$ gives the value learning rate $2/\lambda_{\max}$
# above which plain gradient descent on the values is unstable at first order
# ({prf:ref}`prop-value-stability`).

# %%
sweep = experiment.sweep
reader_table(sweep.table.round(4))

# %%
show_figure("fig_em_multiplier_sweep", figures.sweep_figure(sweep))

# %% [markdown]
# The long horizon: the settling analysis again, on the two runs per seed that train every
# group ten times faster.

# %%
long = experiment.long
show_figure(
    "fig_em_frame_precision", figures.frame_precision_figure(rep, settled, long, sweep)
)

# %% [markdown]
# ## The same comparison with Adam
#
# Adam (PyTorch's update rule, no weight decay) at learning rate
# {glue:text}`adam_lr:g` on every group, against the same with ten times that rate on
# $W_V$; scored on the training and a held-out sequence.

# %%
adam = experiment.adam
show_figure("fig_em_adam", figures.adam_figure(adam))

# %% [markdown]
# ## The deep variant
#
# The authors' deep model (4 layers, 4 heads, $d_{\text{model}} = 64$, AdamW $3\cdot10^{-4}$,
# cosine decay, dropout 0.1) on the same sequences, scored on the held-out ones, with and
# without a ten times larger learning rate on every value projection. It runs in the paper
# profile only (a GPU makes it a matter of minutes); the quick profile records that it was
# not run.

# %%
deep_table = experiment.deep
glue("deep_variant_table", deep_table, display=False)
reader_table(deep_table)

# %% [markdown]
# ## What the reproduction shows
#
# - The EM-like schedule reaches its own seed's SGD final loss in
#   {glue:text}`em_steps_to_sgd_final:.0f` steps on average (from
#   {glue:text}`em_steps_min:.0f` to {glue:text}`em_steps_max:.0f`), a speed-up of
#   {glue:text}`em_speedup:.2f`; with the authors' pooled threshold,
#   {glue:text}`em_steps_to_sgd_final_pooled:.0f` steps and {glue:text}`em_speedup_pooled:.2f`.
# - Both schedules end far from the exact Bayes predictor
#   ({glue:text}`sgd_gap_to_bayes:.3f` and {glue:text}`em_gap_to_bayes:.3f` nats above it):
#   EM-like is closer only relative to SGD.
# - The attention stays close to uniform at the end (normalised entropy
#   {glue:text}`em_attention_uniformity:.3f` for EM-like), and the first-order expansion
#   reproduces the input-dependent part of the logits within
#   {glue:text}`em_linear_response_error:.2f` (relative error).

# %%
_ = res.save()
