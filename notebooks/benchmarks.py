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
# warm-up, the contestants timed in turns within each repeat; the slow baselines are timed
# once), so the machine's speed cancels and the ratio is what to read. Everything runs on one
# thread. The machine and versions are in the {doc}`/notebooks/execution_report`.

# %% tags=["parameters"]
profile = "quick"
device = "auto"
seed = 0

# %% tags=["hide-input"]
import os
import time

import pandas as pd
import torch

from attention_dynamics.book.benchmark_summary import (
    FIGURE_CAPTION,
    REGENERATION,
    goal_summary,
    ratios_figure,
)
from attention_dynamics.book.benchmarking import (
    diagnostics_benchmark,
    mamba_scan_benchmark,
    pin_cost_benchmark,
    sampler_benchmark,
    sticky_step_benchmark,
    transformer_step_benchmark,
)
from attention_dynamics.book.notebook import glue_each, setup_notebook
from attention_dynamics.book.plotting import show_figure
from attention_dynamics.book.results import (
    BUILD_START_VARIABLE,
    load_build_results,
    notebooks_before,
)
from attention_dynamics.book.tables import reader_table
from attention_dynamics.models import TransformerConfig
from attention_dynamics.runtime import select

torch.set_num_threads(
    1
)  # library and baseline alike, on any device: small ops, no contention
dev, _, res = setup_notebook("benchmarks", profile, device, seed)
settings = select(
    profile,
    quick=dict(
        repeats=5,
        diag_length=64,
        step_runs=10,
        transformer=dict(n_layers=2, n_heads=4, d_model=64),
        transformer_batch=32,
        scan_lengths=(16, 64, 128),
        scan_batch=32,
        pin_repeats=3,
        pin_steps=40,
    ),
    paper=dict(
        repeats=15,
        diag_length=256,
        step_runs=10,
        transformer=dict(n_layers=6, n_heads=6, d_model=192, d_ff=768),
        transformer_batch=256,
        scan_lengths=(40, 128, 512),
        scan_batch=128,
        pin_repeats=5,
        pin_steps=100,
    ),
)
rows = {}

# %% [markdown]
# ## Closed-form diagnostics
#
# $B$, $A$, $\partial L/\partial s$ and the value gradients of a causal head (batch 8, four
# heads, widths 32) from the upstream gradient of one backward pass, against the plain
# training step (the overhead of turning the diagnostics on; goal at most 1.3) and against
# differentiating each of the $T(T+1)/2$ scores with its own autograd call (goal at least 50).

# %%
diag = diagnostics_benchmark(
    length=settings["diag_length"], repeats=settings["repeats"], seed=seed, device=dev
)
res.record("diagnostics_overhead_ratio", diag["overhead_ratio"], timing=True)
res.record(
    "diagnostics_speedup_vs_per_score_autograd",
    diag["speedup_vs_per_pair"],
    timing=True,
)
res.record("diagnostics_length", settings["diag_length"])
res.record("diagnostics_pairs", diag["pairs"])
glue_each(
    {
        f"bench_{name}": res.metrics[name]
        for name in (
            "diagnostics_overhead_ratio",
            "diagnostics_speedup_vs_per_score_autograd",
            "diagnostics_length",
            "diagnostics_pairs",
        )
    }
)
rows["diagnostics overhead (diagnosed / plain step)"] = diag["overhead_ratio"]
rows["diagnostics vs per-score autograd"] = diag["speedup_vs_per_pair"]
reader_table(pd.Series(diag).to_frame("value"))

# %% [markdown]
# ## Sticky-chain sampler and exact predictive
#
# Sampling 256 sequences of 100 symbols with their inputs and running the exact forward filter,
# vectorised over sequences, against one sequence at a time with Python loops over time, as
# a straightforward script would (goal at least 20).

# %%
sampler = sampler_benchmark(
    length=100, n_sequences=256, repeats=settings["repeats"], seed=seed
)
res.record("sampler_speedup_vs_loop", sampler["speedup"], timing=True)
rows["sampler + exact predictive vs per-sequence loop"] = sampler["speedup"]
reader_table(pd.Series(sampler).to_frame("value"))

# %% [markdown]
# ## The sticky-chain training step
#
# One full-batch step (loss and all gradients) of ten batched runs of Paper II's one-head
# model at $T = 2000$: the fused step, which walks over blocks of queries and applies the
# routing law, against autograd through the full attention matrix.

# %%
step = sticky_step_benchmark(
    runs=settings["step_runs"], repeats=settings["repeats"], seed=seed
)
res.record("sticky_step_speedup_vs_autograd", step["speedup"], timing=True)
rows["sticky-chain step, fused vs autograd"] = step["speedup"]
reader_table(pd.Series(step).to_frame("value"))

# %% [markdown]
# ## The wind-tunnel transformer's training step
#
# One AdamW step (forward, cross-entropy, backward, update) of chapter 4's transformer against
# the same sizes built from PyTorch's own encoder layers[^encoder] (pre-norm, GELU, causal
# mask, tied head; torch's layer brings LayerNorm and attention biases, so the parameter counts
# differ slightly). The ratio is torch's time over ours (goal at least 1). With diagnostics
# off, our heads run through torch's fused attention kernel; turning them on keeps every
# layer's record (scores, weights) and computes $B$, $A$, $\partial L/\partial s$ and the value
# gradients of every head from the same backward pass: that cost is the second ratio.
#
# [^encoder]: `torch.nn.TransformerEncoder`.

# %%
config = TransformerConfig(vocab_size=32, max_len=64, **settings["transformer"])
block = transformer_step_benchmark(
    config,
    batch=settings["transformer_batch"],
    repeats=settings["repeats"],
    seed=seed,
    device=dev,
)
res.record(
    "transformer_step_ratio_vs_torch_encoder",
    block["ratio_vs_torch_encoder"],
    timing=True,
)
res.record("transformer_diagnostics_cost", block["diagnostics_cost"], timing=True)
rows["transformer step, torch encoder / ours"] = block["ratio_vs_torch_encoder"]
rows["transformer step, diagnostics on / off"] = block["diagnostics_cost"]
reader_table(pd.Series(block).to_frame("value"))

# %% [markdown]
# ## Mamba's chunked scan against its sequential scan
#
# Forward and backward through the selective scan at lengths around those the book trains
# on. The chunked scan takes about $2\sqrt{T}$ sequential steps instead of $T$ but does more
# arithmetic and memory traffic per step; which one wins depends on the device. The models'
# own choice[^scan] is the sequential scan on a CPU and the chunked one elsewhere.
#
# [^scan]: The models' default, `scan="auto"`.

# %%
scan_rows = {}
for length in settings["scan_lengths"]:
    scan = mamba_scan_benchmark(
        length,
        batch=settings["scan_batch"],
        repeats=settings["repeats"],
        seed=seed,
        device=dev,
    )
    res.record(f"mamba_chunked_speedup_T{length}", scan["chunked_speedup"], timing=True)
    rows[f"Mamba scan at T = {length}, sequential / chunked"] = scan["chunked_speedup"]
    scan_rows[length] = scan
reader_table(pd.DataFrame(scan_rows).T.rename(index=lambda length: f"T = {length}"))

# %% [markdown]
# ## The cost of the same bits everywhere
#
# The book pins the CPU's kernels to the AVX2 instruction set, so that a seed gives the same
# bits on every x86-64 machine, Intel or AMD, with or without AVX-512. Each ratio is the time
# of a training step with the pin over the time without it, for the three small models of the
# bit-for-bit check, each measured in fresh processes taken in turns. Above one the pin costs
# time; on a machine whose fastest kernels are AVX2 it changes nothing.

# %%
pin = pin_cost_benchmark(repeats=settings["pin_repeats"], steps=settings["pin_steps"])
for arch in ("transformer", "mamba", "lstm"):
    res.record(f"{arch}_pin_cost_ratio", pin[f"{arch}_pin_cost"], timing=True)
    rows[f"{arch} step, pinned / unpinned"] = pin[f"{arch}_pin_cost"]
glue_each({"bench_unpinned_capability": pin["unpinned_capability"]})
reader_table(
    pd.Series(
        {"kernels without the pin": pin["unpinned_capability"]}
        | {
            f"{arch} step, pinned / unpinned": pin[f"{arch}_pin_cost"]
            for arch in ("transformer", "mamba", "lstm")
        }
    ).to_frame("value")
)

# %% [markdown]
# ## Regenerating the book
#
# The wall time of every notebook executed before this one in this build, and the time since
# the build started (the HTML build that follows the notebooks is not included; the build
# script prints the total). The chapters' notebooks run side by side, one per CPU, so their
# times add up to more than the time that passed; this notebook runs after them, alone, so
# that its own timings above are not shared with another notebook.

# %%
earlier = notebooks_before(res.notebook)
started = os.environ.get(BUILD_START_VARIABLE)
try:
    times = {name: c["wall_time_s"] for name, c in load_build_results(earlier).items()}
except RuntimeError:  # executed alone (scripts/build_book.py --only benchmarks)
    times, started = {}, None
    print("not part of a full build: the book's regeneration time is not measured")
if started:
    res.record("notebooks_wall_time_s", sum(times.values()), timing=True)
    res.record("quick_book_wall_time_s", time.time() - float(started), timing=True)
reader_table(pd.Series(times, name="wall time (s)", dtype=float).to_frame())

# %% [markdown]
# ## Summary against the goals
#
# Each ratio beside the goal the project set for it, and whether this run meets it; a ratio
# without a goal is there to be read, not judged. The book's regeneration time is in seconds,
# against a goal of 15 minutes on two CPU cores. The figure draws the ratios on one log axis,
# each goal as a bar's tick.

# %%
if "quick_book_wall_time_s" in res.metrics:
    rows[REGENERATION] = res.metrics["quick_book_wall_time_s"]
summary = goal_summary(rows)
reader_table(summary)

# %%
show_figure("fig_benchmark_ratios", ratios_figure(summary), caption=FIGURE_CAPTION)

# %%
_ = res.save()
