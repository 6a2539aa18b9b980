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
# # Reproduction report
#
# Every claim of the papers that this book tests: the paper's number, the **null or reference**
# it must beat, ours, and a verdict decided by a stated rule (the library's
# {doc}`rules of judgement </book/api>`). The table is computed from the results files that
# this build's notebooks wrote; a claim whose notebook or metric is missing, or whose results
# file comes from another build, stops the build instead of leaving a row stale.

# %% tags=["parameters"]
profile = "quick"
device = "auto"
seed = 0

# %% tags=["remove-cell"]
from IPython.display import HTML, Markdown, display

from attention_dynamics.book import report, rule_log_page
from attention_dynamics.book.claims import REGISTRY
from attention_dynamics.book.notebook import glue_each, setup_notebook
from attention_dynamics.book.plotting import show_figure
from attention_dynamics.book.results import (
    book_root,
    load_build_results,
    load_profile_results,
)
from attention_dynamics.book.rule_log import RULE_LOG, moving_changes
from attention_dynamics.book.tables import fold, reader_table

_, _, res = setup_notebook("reproduction_report", profile, device, seed)
claims = list(REGISTRY.values())
found = load_build_results(sorted({claim.notebook for claim in claims}))
# the decide profile's committed results (results/decide), judged by the same rules
decided = load_profile_results("decide") if profile != "decide" else {}
ledger = report.build_ledger(claims, found, decided)
report.record_ledger(res, ledger)
glue_each(report.headline_phrases(ledger))  # the chapter pages cite these verdicts
# each chapter page opens with its findings box: its central claims with their verdicts
glue_each(report.findings_boxes(ledger))
# the introduction's summary: the verdicts counted chapter by chapter
glue_each({"verdict_counts": report.CountsTable(report.verdict_counts(ledger))})

# %% [markdown]
# ## What holds, and what does not
#
# Every claim that does not reproduce, reproduces only in part or stays undecided, with the
# reason; the counts, the evidence behind them and the full table follow.

# %% tags=["remove-input"]
display(Markdown(report.findings_text(ledger)))

# %% [markdown]
# ## The evidence

# %% tags=["remove-input"]
display(Markdown(report.summary_text(ledger)))

# %% tags=["remove-input"]
display(Markdown(report.provenance_text(ledger)))
if decided:
    provenance = report.provenance_table(ledger)
    display(HTML(provenance.to_html(escape=False, classes="provenance-table")))
display(Markdown(report.sensitivity_text(book_root())))

# %% tags=["remove-input"]
show_figure("report_claims", report.claims_figure(ledger))
display(Markdown(report.FIGURE_CAPTION))

# %% tags=["remove-input"]
display(Markdown(report.verdicts_text()))

# %% tags=["remove-input"]
table = report.ledger_table(ledger)
display(
    HTML(
        fold(
            table.to_html(escape=False, classes="report-table"),
            f"Show every claim's row ({len(table)} rows)",
        )
    )
)

# %% [markdown]
# ## Registered deciding runs
#
# Each claim that a smaller run can leave undecided registers, before they run, the runs that
# decide it: a chapter profile with its seeds and steps. Claims that share their runs share a
# row; a cell gives the estimated cost of the chapter's whole run and whether it was made. A row
# left undecided for budget names the next of them as what would change it.

# %% tags=["remove-input"]
registering = sum(1 for claim in ledger.claims if claim.decided_by)
reader_table(
    report.deciding_runs_table(ledger),
    f"the runs registered to decide {registering} claims",
    fold_rows=0,
    wrap=True,
)

# %% [markdown]
# ## Rule changes
#
# Every rule above is registered in the claims' registry. A change made after any results
# of its claim had been seen, to a rule or to the seeds of a deciding run, is logged with its
# reason, even where the run that now judges the claim came later: a rerun can repeat, to the
# bit, results that were already seen. {glue:text}`rule_changes_phrase:s` Each change, with the rule before
# and after, its reason and the verdicts before and after, and a changelog of the verdicts
# that moved, newest first, are on the page {doc}`/notebooks/rule_log`.

# %% tags=["remove-cell"]
res.record("rule_changes", len(RULE_LOG))
res.record("rule_changes_moving_a_verdict", len(moving_changes(RULE_LOG)))
glue_each({"rule_changes_phrase": rule_log_page.report_phrase(RULE_LOG, REGISTRY)})

# %% tags=["remove-cell"]
_ = res.save()
