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
# # Benchmarks
#
# How fast the library is, measured against a baseline in the same run on the machine that
# built this book. Each comparison is a ratio of median wall times (several repeats after a
# warm-up; the slow baselines are timed once), so the machine's speed cancels and the ratio is
# what to read. The machine and versions are in the {doc}`/notebooks/execution_report`.

# %% tags=["parameters"]
profile = "quick"
device = "auto"
seed = 0

# %%
import os
import time

import pandas as pd

from attention_dynamics.benchmarking import (
    diagnostics_benchmark,
    sampler_benchmark,
    sticky_step_benchmark,
)
from attention_dynamics.results import (
    BUILD_START_VARIABLE,
    Results,
    book_notebooks,
    book_root,
    load_build_results,
)
from attention_dynamics.runtime import resolve_device, select

dev = resolve_device(device)
res = Results("benchmarks", profile, dev, seed)
settings = select(profile, quick=dict(repeats=5, diag_length=128, step_runs=10),
                  paper=dict(repeats=9, diag_length=256, step_runs=10))
rows = {}

# %% [markdown]
# ## Closed-form diagnostics
#
# $B$, $A$, $\partial L/\partial s$ and the value gradients of a causal head (batch 8, four
# heads, widths 32) from the upstream gradient of one backward pass, against the plain
# training step (the overhead of turning the diagnostics on; goal at most 1.3) and against
# differentiating each of the $T(T+1)/2$ scores with its own autograd call (goal at least 50).

# %%
diag = diagnostics_benchmark(length=settings["diag_length"], repeats=settings["repeats"],
                             seed=seed, device=dev)
res.record("diagnostics_overhead_ratio", diag["overhead_ratio"], timing=True)
res.record("diagnostics_speedup_vs_per_score_autograd", diag["speedup_vs_per_pair"], timing=True)
res.record("diagnostics_length", settings["diag_length"])
rows["diagnostics overhead (diagnosed / plain step)"] = diag["overhead_ratio"]
rows["diagnostics vs per-score autograd"] = diag["speedup_vs_per_pair"]
pd.Series(diag)

# %% [markdown]
# ## Sticky-chain sampler and exact predictive
#
# Sampling 256 sequences of 100 symbols with their inputs and running the exact forward filter,
# vectorised over sequences, against one sequence at a time with Python loops over time, as
# a straightforward script would (goal at least 20).

# %%
sampler = sampler_benchmark(length=100, n_sequences=256, repeats=settings["repeats"], seed=seed)
res.record("sampler_speedup_vs_loop", sampler["speedup"], timing=True)
rows["sampler + exact predictive vs per-sequence loop"] = sampler["speedup"]
pd.Series(sampler)

# %% [markdown]
# ## The sticky-chain training step
#
# One full-batch step (loss and all gradients) of ten batched runs of Paper II's one-head
# model at $T = 2000$: the fused step, which walks over blocks of queries and applies the
# routing law, against autograd through the full attention matrix.

# %%
step = sticky_step_benchmark(runs=settings["step_runs"], repeats=settings["repeats"], seed=seed)
res.record("sticky_step_speedup_vs_autograd", step["speedup"], timing=True)
rows["sticky-chain step, fused vs autograd"] = step["speedup"]
pd.Series(step)

# %% [markdown]
# ## Regenerating the book
#
# The wall time of every notebook executed before this one in this build, and the time since
# the build started (the HTML build that follows the notebooks is not included; the build
# script prints the total).

# %%
earlier = book_notebooks(book_root() / "_toc.yml")
earlier = earlier[: earlier.index(res.notebook)]
started = os.environ.get(BUILD_START_VARIABLE)
try:
    times = {name: c["wall_time_s"] for name, c in load_build_results(earlier).items()}
except RuntimeError:  # executed alone (scripts/build_book.py --only benchmarks)
    times, started = {}, None
    print("not part of a full build: the book's regeneration time is not measured")
if started:
    res.record("notebooks_wall_time_s", sum(times.values()), timing=True)
    res.record("quick_book_wall_time_s", time.time() - float(started), timing=True)
pd.Series(times, name="wall time (s)", dtype=float).to_frame()

# %%
summary = pd.Series(rows, name="ratio").to_frame()
summary

# %%
res.save()
