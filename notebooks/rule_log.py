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
# # Rule log, for auditors
#
# Every claim of the {doc}`/notebooks/reproduction_report` is judged by a rule registered in
# the claims' registry. This page is for those who audit that ledger: it lists every change
# made after results had been seen (results that a later run may repeat to the bit), to a
# claim's rule or to the seeds of the run that decides it, with the rule before and after,
# the reason, and the verdict before and after on the results the change was made on. The
# book's tests fail when a claim's rule (not yet the seeds of its runs) differs from the one
# first registered and no entry here accounts for the difference. Claims are named by their
# row in the report's table and a short name.
#
# {glue:text}`rule_log_summary:s`

# %% tags=["parameters"]
profile = "quick"
device = "auto"
seed = 0

# %% tags=["remove-cell"]
from IPython.display import Markdown, display

from attention_dynamics.book import rule_log_page
from attention_dynamics.book.claims import REGISTRY
from attention_dynamics.book.notebook import glue_each, setup_notebook
from attention_dynamics.book.rule_log import RULE_LOG, moving_changes

_, _, res = setup_notebook("rule_log", profile, device, seed)
res.record("rule_changes", len(RULE_LOG))
res.record("rule_changes_moving_a_verdict", len(moving_changes(RULE_LOG)))
glue_each({"rule_log_summary": rule_log_page.summary_phrase(RULE_LOG)})

# %% [markdown]
# ## Changelog of verdicts
#
# What changed between versions of the book, and why: every rule change that moved a verdict,
# newest first, under the day the book changed. Each names the claims, the verdict before and
# after, and the profile whose results the verdicts are on; the full entry is below.

# %% tags=["remove-input"]
display(Markdown(rule_log_page.changelog_text(RULE_LOG, REGISTRY)))

# %% [markdown]
# ## Every rule change
#
# Newest first, under the day it was made: the claims it changed, the verdicts it moved if
# any, the rule before and after, why, the verdict before and after, and the commit that made
# it. A verdict is given with its numbers and the profile whose results it is on: quick (the
# book's build) or decide (the longer runs committed with the sources).

# %% tags=["remove-input"]
display(Markdown(rule_log_page.rule_log_text(RULE_LOG, REGISTRY)))

# %% tags=["remove-cell"]
_ = res.save()
