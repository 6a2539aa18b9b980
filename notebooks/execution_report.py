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
# # Execution report
#
# Every notebook of this book was executed by papermill during the build that produced these
# pages, and wrote a results file. This page reads those files: which profile, device and seed
# each notebook ran with, how long it took, and which versions of the library and of PyTorch
# produced it. The build executes this page last; a notebook of the table of contents without
# a results file from this build (or with one left over from an earlier build) stops it.

# %% tags=["parameters"]
profile = "quick"
device = "auto"
seed = 0

# %% tags=["hide-input"]
import pandas as pd

from attention_dynamics.book.notebook import glue_each, setup_notebook
from attention_dynamics.book.results import (
    load_build_results,
    notebooks_before,
)
from attention_dynamics.book.tables import reader_table

_, _, res = setup_notebook("execution_report", profile, device, seed)
expected = notebooks_before(res.notebook)
found = load_build_results(expected)

# %%
table = pd.DataFrame(
    [
        {
            "notebook": name,
            "profile": found[name]["profile"],
            "device": found[name]["device"],
            "seed": found[name]["seed"],
            "wall time (s)": found[name]["wall_time_s"],
            "CPU time (s)": found[name].get("cpu_time_s"),
            "metrics": len(found[name]["metrics"]),
            "attention_dynamics": found[name]["versions"]["attention_dynamics"],
            "torch": found[name]["versions"]["torch"],
            "python": found[name]["versions"]["python"],
        }
        for name in expected
    ]
).set_index("notebook")
reader_table(table)

# %% tags=["remove-cell"]
cpu = table["CPU time (s)"].dropna()
if len(cpu):
    total, most = f"{cpu.sum():,.0f}", f"{cpu.max():,.0f}"
    costliest = cpu.idxmax().replace("_", " ")
    phrase = (
        f"Together they used {total} CPU-seconds; "
        f"the costliest, {costliest}, used {most} of them."
    )
else:
    phrase = "No notebook recorded its CPU time."
glue_each({"cpu_cost_phrase": phrase})

# %% [markdown]
# What each notebook cost: the build runs the chapters side by side, one kernel per CPU share,
# so their wall times overlap while their CPU times add up.
# {glue:text}`cpu_cost_phrase:s`

# %% [markdown]
# The machine that ran them:

# %%
reader_table(pd.Series(found[expected[0]]["versions"], name="value").to_frame())

# %%
res.record("notebooks_reported", len(table))
res.record("notebooks_wall_time_s", table["wall time (s)"].sum(), timing=True)
res.record("notebooks_cpu_time_s", cpu.sum(), timing=True)
_ = res.save()
