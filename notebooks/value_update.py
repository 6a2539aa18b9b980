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
# # Toy simulations: values become prototypes
#
# This notebook accompanies {doc}`/book/value_update`. It trains a single attention head on a
# toy routing problem and watches the two halves of the coupled dynamics: the
# responsibility-weighted value update ({prf:ref}`prop-value-update`) and the routing law of
# chapter 1. It checks the value-update identity on the toy to float64 precision, checks what a
# value step does under uniform attention ({prf:ref}`cor-group-blind`) and the first-order
# feedback formula ({prf:ref}`prop-advantage-change`), and then asks the chapter's question with
# an ablation: does the loop between routing and values specialize the head faster or further
# than either half alone? Two controls then ask whether the answer is the loop or only the
# number of parameters that learn.
#
# **The task.** Queries come from $G = 3$ latent groups (a Gaussian blob each); every query of
# group $g$ needs class $g$. One head routes each query over $M = 6$ memory slots, each with a
# trainable key $k_j$ and a trainable free value $v_j \in \mathbb R^3$; the readout is the identity,
# so a value *is* a vector of logits and the output $o_i = \sum_j \alpha_{ij} v_j$ is the
# prediction. Routing is $(W_Q, K)$; content is $V$.
#
# **The loss.** Mean cross-entropy in nats, as in the papers. The value-update identity holds for
# any loss of the outputs (only $u_i = \partial L/\partial o_i$ enters), so nothing in the derivation
# forces squared error; cross-entropy keeps the toy honest to the setting the chapter is about,
# and with an identity readout its error signal is explicit, $u_i = (p_i - e_{y_i})/N$.

# %% tags=["parameters"]
profile = "quick"
device = "auto"
seed = 0
settings_file = None

# %% tags=["hide-input"]

from attention_dynamics.book.notebook import (
    chapter_settings,
    glue_as_text,
    glue_each,
    setup_notebook,
)
from attention_dynamics.book.plotting import show_figure
from attention_dynamics.book.tables import reader_table
from attention_dynamics.chapters import value_update as chapter
from attention_dynamics.chapters.value_update import figures, words

dev, _, res = setup_notebook("value_update", profile, device, seed)
settings = chapter_settings(chapter, profile, res, settings_file)

# %% [markdown]
# The whole experiment runs here, once; the sections below show its parts.

# %%
experiment = chapter.run(res, settings, dev, seed)
glue_each(words.page_phrases(experiment))


# %% [markdown]
# ## The value-update identity on the toy
#
# One step of PyTorch's plain SGD (gradients by autograd) on the free values, from the initial
# head of every seed at once, against the closed form
# $\Delta v_j = -\eta\sum_i \alpha_{ij} u_i$ with $u_i$ computed by hand from the softmax (no
# autograd). Then the same for the $W_V$ form, where values are projections $v_j = z_j W_V$ of
# fixed slot embeddings $Z$ (here with fewer dimensions than slots, so that the Gram matrix
# $Z Z^\top$ is far from the identity and the filtering is visible).

# %%
print(experiment.identity.summary())

# %% [markdown]
# Both agree to float64 rounding (largest error
# {glue:text}`value_update_max_abs_error_text:s` for free values,
# {glue:text}`value_update_projected_max_abs_error_text:s` in the $W_V$ form). In the $W_V$ form the values
# do *not* move along their own pulls: the mean cosine between the actual step of the values and
# the free-value step $-\eta\,\alpha^\top U$ is {glue:text}`projected_step_cosine_to_free_step:.2f`,
# because $\Delta V = -\eta\, Z Z^\top \alpha^\top U$ lets each value be dragged by the pulls of
# the slots whose inputs resemble its own.
#
# ## Training the three conditions
#
# For each seed, the same data and the same initial head are trained by full-batch gradient
# descent in three ways: **coupled** (routing and values), **routing frozen** at its
# initial (random, mildly group-dependent) attention, and **values frozen** at their initial
# random logits; the same run holds the two sequential controls used further down.
# The headline measure is the *prototype specialization* of {prf:ref}`def-specialization`:
# 0 when routing ignores the group, 1 when each group draws only values that predict its class
# with certainty. *Routing specialization* (the normalised mutual information between a query's
# group and the value it attends to) is reported beside it.

# %%
# trained on the chosen device, analysed and drawn on the CPU
conditions = experiment.conditions
print(conditions.summary())

# %% [markdown]
# ## Uniform attention: what a value step changes, and what values alone do
#
# The same seeds again, with $W_Q = 0$ at the start, so that every query attends uniformly to
# the six values (keys, values and data are those of the runs above). First, one value step at
# that state: by {prf:ref}`cor-group-blind` the advantages change by exactly the curvature part
# $\Delta u_i\cdot(v_j - o_i)$, by the same amount for every query, and not by zero. Then two
# trainings from it: routing frozen at uniform attention (the values may only move together),
# and routing trained against values frozen at their distinct random logits (the values alone
# make the routing signal depend on the group).

# %%
uniform = experiment.uniform
print(uniform.summary())

# %% [markdown]
# ## Values moving
#
# The 3-class logit space, seen in the plane of logit vectors whose entries sum to zero (softmax
# ignores the remaining direction). Each path is one value over training, for the first seed;
# its colour is the group that holds most of its responsibility at the end. Grey arrows point to
# the three classes: a value that travels along an arrow has become a prototype for that class.

# %%
show_figure("fig_value_trajectories", figures.value_paths_figure(conditions))

# %% [markdown]
# ## The responsibility matrix sharpening
#
# Column $j$ of the responsibility matrix $R$ is the share of value $j$'s pull that comes from
# each group ({prf:ref}`def-specialization`); the bar above each column is the value's share of
# all attention. Coupled run, first seed; values ordered by the group that ends up owning them.

# %%
show_figure("fig_value_responsibility", figures.responsibility_figure(conditions))

# %% [markdown]
# ## Specialization over training, all seeds
#
# Lines are means over seeds; bands span the lowest to the highest seed. The grey lines start
# from uniform attention ($W_Q = 0$): routing frozen there (dashed), or trained against frozen
# values (dotted).

# %%
fig = figures.specialization_figure(conditions, uniform)
show_figure("fig_value_specialization", fig)

# %% [markdown]
# ## Inside the loop: feedback and curvature
#
# {prf:ref}`prop-advantage-change` splits the change of the advantages after one value step into
# a *feedback* part (values move, error signals held fixed) and a *curvature* part (the error
# signals shrink as the outputs improve). First, a check that the split is the first-order change:
# after a real value step of size $\eta$ on the first seed's coupled head (at the start and at the
# end of training), the relative error of the prediction falls in proportion to $\eta$, while the
# feedback part alone leaves a residue that does not vanish.

# %%
first_order = experiment.first_order
print(first_order.summary())

# %% [markdown]
# Now the loop itself. The next routing step moves the scores along $-G$, with
# $G_{ij} = \partial L/\partial s_{ij} = \alpha_{ij}A_{ij}$ (the routing law). A value step *reinforces*
# the routing when it makes this push stronger in the direction it already has, that is when
# $\Delta G = \alpha\odot\Delta A$ is positively aligned with $G$ (the reinforcement index of
# {eq}`eq-reinforcement`). The cosine of each part of $\Delta G$ with $G$, along the coupled run of
# every seed:

# %%
alignment = experiment.alignment
print(alignment.summary())
fig = figures.feedback_figure(first_order, alignment, conditions)
show_figure("fig_value_feedback", fig)

# %% [markdown]
# ## Coupling or capacity?
#
# Each ablation trains one half of the head; the coupled run trains both. Its lead may come from
# the loop, or only from having every parameter learn. Two controls train every parameter of the
# coupled run without the loop, from the same head and data:
#
# - **recombined halves**: the routing of the values-frozen run with the values of the
#   routing-frozen run, at every step. Each half has had as many updates as in the coupled run,
#   but neither ever saw the other move.
# - **sequential**: one half trained for the first half of the steps with the other frozen, then
#   the other half with the first frozen (both orders). The second half fits the trained first
#   one; the first never answers. At the end each parameter has had half the coupled run's
#   updates, as many as the coupled run at the switch.
#
# The chapter's words for this comparison are computed here from the numbers: the better
# sequential order recovers "most" of the coupled run's lead over the better ablation when its
# share is above one half, and the coupled run is "ahead" on a seed when its margin over the
# better sequential order of that seed is positive.


# %%
capacity = experiment.capacity
print(capacity.summary(conditions))

# %% [markdown]
# The same comparison from the **symmetric state** of {prf:ref}`prop-symmetric-drive`:
# $W_Q = 0$ (uniform attention) and values drawn at a tiny scale $\varepsilon$, so that every half
# starts where the other gives it almost no drive. The proposition predicts what each condition
# does there: with routing frozen at uniform attention the values' spread stays put; with the
# values frozen, the attention departs from uniform at a constant rate; only the coupled run can
# grow geometrically.

# %%
symmetric = experiment.symmetric
print(symmetric.summary())

# %%
fig = figures.coupling_control_figure(conditions, capacity, symmetric)
show_figure("fig_value_coupling_control", fig)

# %% [markdown]
# ## Does the comparison depend on the initialisation?
#
# The ablations keep one half at its initial value, so how well they do depends on how much that
# half already carries: larger random logits give the values-frozen run better raw material,
# larger random scores give the routing-frozen run a more group-dependent attention to exploit.
# The same comparison over a grid of initial scales (seeds as above, fewer of them): each cell
# is the mean over seeds of the coupled run's final specialization minus the better of the two
# ablations', and, for the capacity control, minus the better of the two sequential orders.

# %%
sweep = experiment.sweep
show_figure("fig_value_init_sweep", figures.init_sweep_figure(sweep))

# %% [markdown]
# ## EM proper: the values solved in closed form
#
# With free values read out by the identity, chapter 3's M-step has a closed form: each value
# becomes the log of its responsibility-weighted class histogram, $v_j = \log h_j$ with
# $h_j[c] \propto \sum_i \alpha_{ij}[y_i = c]$. Alternating a gradient step on the routing with
# that solve (the toy's training loop with its closed-form value update[^closed-form]) is EM on
# the score mixture with a gradient step for the frame. It starts from the same heads and data
# as the coupled run. The solve minimises the mixture's bound
# $Q = \frac1N\sum_{ij}\alpha_{ij}\,\mathrm{CE}(y_i, \mathrm{softmax}(v_j))$, which lies above
# the head's cross-entropy $L$ (Jensen), not $L$ itself; both are recorded at the end.
#
# [^closed-form]: `train_toy_routing(..., value_update="closed-form")`.

# %%
em = experiment.em
reader_table(figures.em_table(em))

# %%
show_figure("fig_value_toy_em", figures.em_figure(em, conditions))

# %% [markdown]
# ## What the toy shows
#
# - The identity: a plain SGD step on the values is $-\eta\sum_i\alpha_{ij}u_i$ to within
#   {glue:text}`value_update_max_abs_error_text:s`.
# - With the loop intact the head ends at prototype specialization
#   {glue:text}`specialization_coupled:.3f` (± {glue:text}`specialization_coupled_std:.3f` across
#   seeds), against {glue:text}`specialization_frozen_routing:.3f` with routing frozen and
#   {glue:text}`specialization_frozen_values:.3f` with values frozen.
# - Uniform attention does not stop a value step from changing the advantages: it changes them
#   by the curvature part alone (to within {glue:text}`uniform_step_non_curvature_max_abs_text:s`),
#   the same for every query. With routing frozen there the values move together (their
#   differences drift by {glue:text}`uniform_routing_value_difference_drift_text:s`); with routing
#   trained from there against frozen random values, routing specialization reaches
#   {glue:text}`routing_specialization_from_uniform_frozen_values:.3f`.
# - Against the capacity controls: halves trained apart and recombined reach
#   {glue:text}`specialization_recombined:.3f`; trained one after the other they reach
#   {glue:text}`specialization_routing_then_values:.3f` (routing first) and
#   {glue:text}`specialization_values_then_routing:.3f` (values first), and the better order
#   recovers {glue:text}`sequential_share_of_coupled_lead:.0%` of the coupled run's lead over
#   the better ablation. From the symmetric state the coupled run reaches
#   {glue:text}`specialization_symmetric_coupled:.3f` and every control stays below
#   {glue:text}`symmetric_controls_max_abs_text:s` in magnitude.
# - On routing alone the picture is closer: freezing the values still lets the routing sort the
#   groups onto different values (routing specialization
#   {glue:text}`routing_specialization_frozen_values:.3f` against
#   {glue:text}`routing_specialization_coupled:.3f` coupled), because random values already
#   differ enough for the routing law to exploit; what the values-frozen head cannot do is make
#   those values serve their groups, and its loss stays high.
# - The loop is not on at the start: with random values and random routing a value step at first
#   *weakens* the routing push (reinforcement index {glue:text}`feedback_alignment_start:.2f`).
#   It switches on within a few steps (positive from step
#   {glue:text}`feedback_alignment_first_positive_step`), once attention and value content have
#   become correlated, and the feedback part then reaches
#   {glue:text}`feedback_alignment_max:.2f`. The curvature part is a brake throughout (its
#   alignment never rises above {glue:text}`curvature_alignment_max:.2f`): as the outputs
#   improve the error signals shrink, and the net reinforcement falls from its peak of
#   {glue:text}`total_alignment_max:.2f` to {glue:text}`total_alignment_end:.2f` at the end.

# %%
glue_as_text(
    res,
    [
        "routing_specialization_uniform_start_max_abs",
        "symmetric_controls_max_abs",
        "symmetric_frozen_routing_spread_drift_rel",
        "symmetric_value_scale",
        "uniform_routing_value_difference_drift",
        "uniform_step_non_curvature_max_abs",
        "uniform_step_query_spread_max_abs",
    ],
    digits=1,
)
glue_as_text(
    res,
    [
        "advantage_first_order_rel_error",
        "value_update_max_abs_error",
        "value_update_projected_max_abs_error",
    ],
)
_ = res.save()
