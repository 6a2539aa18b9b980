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
# it must beat, ours, and a verdict decided by a stated rule (module
# {mod}`~attention_dynamics.book.verdicts`). The table is computed from the results files that
# this build's notebooks wrote; a claim whose notebook or metric is missing, or whose results
# file comes from another build, stops the build instead of leaving a row stale.

# %% tags=["parameters"]
profile = "quick"
device = "auto"
seed = 0

# %% tags=["remove-cell"]
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import HTML, Markdown, display

from attention_dynamics.book.claims import (
    FAILED_SHARE,
    FALL,
    REGISTRY,
    SEED_LEVEL,
    SOLVED_SHARE,
)
from attention_dynamics.book.formatting import format_number
from attention_dynamics.book.notebook import setup_notebook
from attention_dynamics.book.plotting import show_figure
from attention_dynamics.book.results import load_build_results, load_profile_results
from attention_dynamics.book.rule_log import RULE_LOG
from attention_dynamics.book.verdicts import (
    BASES,
    VERDICTS,
    Claim,
    OutsideNullRange,
    ShortBudget,
    headline_row,
    tally,
)

_, _, res = setup_notebook("reproduction_report", profile, device, seed)

CLAIMS = list(REGISTRY.values())
NUMBERS = range(1, len(CLAIMS) + 1)  # the rows' numbers, in the table and the figure
CHAPTERS = {
    "score_gradient": "1",
    "value_update": "2",
    "em_reading": "3",
    "manifold_formation": "4",
    "content_routing": "5",
}
needed = sorted({claim.notebook for claim in CLAIMS})
found = load_build_results(needed)
table = pd.DataFrame([claim.row(found) for claim in CLAIMS], index=NUMBERS)
# the decide profile's committed results (results/decide), judged by the same rules
decided_elsewhere = load_profile_results("decide") if profile != "decide" else {}


def decide_row(claim: Claim) -> dict | None:
    """The claim's row under the committed decide results; None where they do not hold
    its notebook or its metrics (a notebook the decide profile does not run, or results
    older than the claim)."""
    if claim.notebook not in decided_elsewhere:
        return None
    try:
        return claim.row(decided_elsewhere)
    except KeyError:
        return None


decide_rows = [decide_row(claim) for claim in CLAIMS]
decide_table = pd.DataFrame([row for row in decide_rows if row is not None])
if len(decide_table):
    res.record("decide_claims_judged", len(decide_table))
    for basis, count in tally(decide_table.to_dict("records")).items():
        res.record(f"decide_claims_basis_{basis.replace(' ', '_')}", count)
# the headline: each claim on its most decisive current evidence
headline = pd.DataFrame(
    [
        headline_row(
            quick,
            other,
            other is not None and not decided_elsewhere[claim.notebook]["stale"],
        )
        for claim, quick, other in zip(
            CLAIMS, table.to_dict("records"), decide_rows, strict=True
        )
    ],
    index=NUMBERS,
)
counts = headline["verdict"].value_counts()
for verdict in VERDICTS:
    res.record(f"claims_{verdict.replace(' ', '_')}", int(counts.get(verdict, 0)))
res.record("claims_tested", len(headline))
res.record("claims_from_decide", int((headline["profile"] == "decide").sum()))
bases = tally(headline.to_dict("records"))
for basis, count in bases.items():
    res.record(f"claims_basis_{basis.replace(' ', '_')}", count)
quick_counts = table["verdict"].value_counts()

# %% tags=["remove-input"]
from_decide = int((headline["profile"] == "decide").sum())
profiles = sorted({content["profile"] for content in found.values()})
devices = sorted({content["device"] for content in found.values()})
display(
    Markdown(
        f"**This build ran the `{'`, `'.join(profiles)}` profile on "
        f"{', '.join(devices)}.** "
        + (
            "The `quick` profile trains small models for minutes on two CPU cores; a "
            "verdict from it says what this scale shows, not what the papers' scale "
            "would."
            if "quick" in profiles
            else ""
        )
        + f"\n\n**{len(headline)} claims, each on its most decisive current "
        f"evidence** ({from_decide} from the `decide` profile, "
        f"{len(headline) - from_decide} from this build): "
        + ", ".join(f"{int(counts.get(v, 0))} {v}" for v in VERDICTS)
        + ". **What decides them:** "
        + ", ".join(f"{bases[b]} {b}" for b in BASES)
        + ". This build alone: "
        + ", ".join(f"{int(quick_counts.get(v, 0))} {v}" for v in VERDICTS)
        + "."
    )
)

# %% tags=["remove-input"]
if decided_elsewhere:
    provenance = pd.DataFrame(
        {
            notebook: {
                "profile": content["profile"],
                "date": content.get("date", "not recorded"),
                "commit": content.get("commit", "not recorded")[:12],
                "CPU": content["versions"].get("cpu_model", "not recorded"),
                "library": (
                    "stale: changed since: " + ", ".join(content["changed_modules"])
                    if content["changed_modules"]
                    else "stale: the library changed since"
                )
                if content["stale"]
                else "current",
            }
            for notebook, content in decided_elsewhere.items()
        }
    ).T
    stale = [name for name, content in decided_elsewhere.items() if content["stale"]]
    display(
        Markdown(
            "**The `decide` profile** ran the experiments that the quick profile "
            "leaves undecided for budget, longer and on more seeds, once, on two CPU "
            "cores (`make decide`); its results files are kept with the sources and "
            "judged here by the same rules, in the table's *decide* column. Of its "
            f"{len(decide_table)} claims: "
            + ", ".join(
                f"{count} {basis}"
                for basis, count in tally(decide_table.to_dict("records")).items()
            )
            + "."
            + " A results file is *current* when every library file that its notebook "
            "imported to make results (the modules of `attention_dynamics` outside "
            "`attention_dynamics.book`, which only judges and shows them) is the same "
            "now as when the file was written; a current decide row is the claim's "
            "headline evidence. "
            + (
                f" **Stale:** library code that made results has changed since "
                f"{', '.join(stale)} ran, so their rows are shown but the headline "
                "uses this build's; rerun `make decide`."
                if stale
                else ""
            )
        )
    )
    display(HTML(provenance.to_html(classes="provenance-table")))
else:
    display(
        Markdown(
            "No `decide` results are kept with these sources "
            "(`make decide` writes them)."
        )
    )

# %% tags=["remove-input"]
COLOURS = {
    "reproduced": "#2a9d8f",
    "partly": "#e9c46a",
    "not reproduced": "#e76f51",
    "inconclusive": "#8d99ae",
}


LIMITS = (1e-3, 1e3)  # ratios beyond are drawn at the edge, as open triangles


def yardstick(claim: Claim, row: pd.Series) -> float:
    """What our number is divided by in the figure: for a null drawn many times, the
    edge of its range that the value lies beyond (the middle when inside); else the
    null, else the bound or the paper's.
    """
    if isinstance(claim.rule, OutsideNullRange):
        source = decided_elsewhere if row["profile"] == "decide" else found
        low, high = claim.rule.bounds(source[claim.notebook]["metrics"])
        value = row["ours"]
        return high if value > high else low if value < low else (low + high) / 2
    if not pd.isna(row["null value"]) and row["null value"] != 0:
        return row["null value"]
    return getattr(claim.rule, "bound", None) or getattr(claim.rule, "paper", 1.0)


def placed(claim: Claim, row: pd.Series) -> float:
    """Where the claim sits on the figure's axis: ours against the yardstick, by size
    (a signed statistic too), turned over where the claim wants a low number, so that
    right of 1 is better. A null at 0 gives no ratio: the point goes beyond the edge on
    the side of our number's sign."""
    lower = claim.rule.lower_is_better(row["null value"])
    if row["null value"] == 0 and not isinstance(claim.rule, OutsideNullRange):
        better = row["ours"] < 0 if lower else row["ours"] > 0
        return LIMITS[1] * 10 if better else LIMITS[0] / 10
    return abs(row["ours"] / yardstick(claim, row)) ** (-1.0 if lower else 1.0)


ratios = np.array(
    [
        placed(claim, row)
        for claim, (_, row) in zip(CLAIMS, headline.iterrows(), strict=True)
    ]
)
shown_ratios = np.clip(ratios, *LIMITS)
markers = np.where(ratios > LIMITS[1], ">", np.where(ratios < LIMITS[0], "<", "o"))
fig, ax = plt.subplots(figsize=(6.5, 0.2 * len(headline) + 1.2))
positions = np.arange(len(headline))[::-1]
ax.axvline(1.0, color="0.5", lw=0.8)
for verdict in VERDICTS:
    chosen = (headline["verdict"] == verdict).to_numpy()
    for marker in ("o", "<", ">"):
        picked = chosen & (markers == marker)
        ax.scatter(
            shown_ratios[picked],
            positions[picked],
            color=COLOURS[verdict],
            s=30,
            marker=marker,
            label=verdict if marker == "o" else None,
            zorder=3,
        )
ax.set_xscale("log")
ax.set_xlim(LIMITS[0] / 2, LIMITS[1] * 2)
ax.set_yticks(
    positions,
    [
        f"{number} (ch. {CHAPTERS[claim.notebook]}, {row['profile']})"
        for number, claim, (_, row) in zip(
            NUMBERS, CLAIMS, headline.iterrows(), strict=True
        )
    ],
    fontsize=8,
)
ax.set_xlabel("ours against the null (right of 1: better than it in the claim's sense)")
ax.legend(
    loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4, frameon=False, fontsize=9
)
show_figure("report_claims", fig)
display(
    Markdown(
        "**Every claim on its most decisive current evidence, against its null.** One "
        "row per claim, numbered as in the table below and labelled with its chapter "
        "and the profile whose results decide it. A point is our number divided by its "
        "null's (for a null drawn many times, by the edge of its range; for a null "
        "without a number, by the bound or the paper's number), turned over where the "
        "claim wants a low number: **right of 1 is better than the null**, left of it "
        "worse, and a failure claim (the model stays at its null) belongs at 1. "
        "Triangles sit beyond the axis, as does a claim whose null is 0 (it has no "
        "ratio), on the side of its sign. The colour is the verdict."
    )
)

# %% tags=["remove-input"]
display(
    Markdown(
        f"""The four verdicts:

- **reproduced**: our number satisfies the claim's rule, and its null does not;
- **partly**: the effect exists, on the paper's side of "no effect", but its size
  differs beyond the stated tolerance;
- **not reproduced**: a run that could have shown the claim did not;
- **inconclusive**: this run cannot decide, for one of two kinds of reason.
  *Undecidable by design*: the null passes the same rule (a predictor that ignores
  what the claim is about would be "reproduced" too), the value lies inside the
  spread of its null, the task cannot separate the claim from its null whatever
  the run, or the claim's own setting, run in full, never reaches the regime the
  claim is about. *Undecided for budget*: the verdict rests on the model not having
  learned while training stopped before the effect could show (the loss still fell by
  more than {FALL:.0%} over its last tenth, or the run trained on fewer than
  {ShortBudget.min_fraction:.0%} of the sequences that the authors' own training
  script goes through), the model has not reached the regime the claim is about, or
  too few seeds (or too small a probe) leave an interval on both sides of its bound.
  The reason is in the row.

Every row also says what would change its verdict: the value that would flip a
decided row, the training or the seeds that would decide an undecided one.

The thresholds are effect sizes against each row's null. A model *matches* the Bayes
entropy, or *solves* recall, when it closes {SOLVED_SHARE:.0%} of the gap from its null
to the optimum (the context-free floor's MAE to 0, chance's accuracy to 1), and *fails*
when it closes at most {FAILED_SHARE:.0%} of it. A share of seeds is judged by its
one-sided {1 - (1 - SEED_LEVEL) / 2:.0%} Clopper–Pearson bounds against one half (the
seeds' sign test at the {(1 - SEED_LEVEL) / 2:.0%} level), and a ratio measured on a
probe by its 95 % interval over disjoint parts of it. A claim about every run (a model
matches, solves or fails) is judged seed by seed: each seed by that rule, then the share
of seeds that pass by the same one-sided bounds, so that one seed cannot carry a mean.
Wherever a notebook recorded each seed's value, the verdict is also taken on each half
of the seeds; halves that fall on opposite sides make it *inconclusive: fragile*. The
papers' own numbers come from larger models trained far longer."""
    )
)


# %% tags=["remove-input"]
def chapter_link(notebook: str) -> str:
    return f'<a href="../book/{notebook}.html">ch. {CHAPTERS[notebook]}</a>'


def brief(row: dict | None, stale: bool = False) -> str:
    """A row of the other profile in one cell: its verdict, number and basis."""
    if row is None:
        return "–"
    return (
        f"<b>{row['verdict']}</b> ({row['profile']})<br>{format_number(row['ours'])}"
        f"<br><small>{row['basis']}{' (stale)' if stale else ''}</small>"
    )


shown = pd.DataFrame(
    {
        "claim": [
            f"{row['claim']}<br><small>{row['source']}; paper: {row['paper']}; "
            f"{chapter_link(claim.notebook)}; rule: {row['rule']}</small>"
            for claim, (_, row) in zip(CLAIMS, headline.iterrows(), strict=True)
        ],
        "ours, and the null or reference": [
            f"<b>{format_number(row['ours'])}</b><br><small>"
            + (
                row["null"]
                if pd.isna(row["null value"])
                else f"{row['null']}: {format_number(row['null value'])}"
            )
            + (f"<br>{row['shown with']}" if row["shown with"] else "")
            + "</small>"
            for _, row in headline.iterrows()
        ],
        "verdict, on the most decisive evidence": [
            f"<b>{row['verdict']}</b> ({row['profile']})<br><small>{row['basis']}"
            + (f": {row['reason']}" if row["reason"] else "")
            + f"<br><i>would change it:</i> {row['would change']}</small>"
            for _, row in headline.iterrows()
        ],
        "the other profile": [
            brief(quick)
            if row["profile"] == "decide"
            else brief(
                other, other is not None and decided_elsewhere[claim.notebook]["stale"]
            )
            for claim, (_, row), quick, other in zip(
                CLAIMS,
                headline.iterrows(),
                table.to_dict("records"),
                decide_rows,
                strict=True,
            )
        ],
    },
    index=NUMBERS,
)
display(HTML(shown.to_html(escape=False, classes="report-table")))

# %% [markdown]
# ## Rule changes
#
# Every rule above was fixed before the run that judges it. A rule changed after it had been
# judged is listed here, with its reason and the verdict before and after on the results it
# was changed on (module {mod}`~attention_dynamics.book.rule_log`; the tests fail when a
# claim's rule differs from the one registered without an entry here).

# %% tags=["remove-input"]
row_number = {key: number for number, key in zip(NUMBERS, REGISTRY, strict=True)}
changes = pd.DataFrame(
    [
        {
            "when": f"{change.date}<br><small>{change.commit}</small>",
            "claims": ", ".join(
                str(row_number[key]) if key in row_number else f"{key} (retired)"
                for key in change.claims
            ),
            "before → after": f"{change.old_rule}<br>→ {change.new_rule}",
            "why": change.reason,
            "verdict before → after": f"{change.verdict_before}<br>→ "
            f"{change.verdict_after}",
        }
        for change in reversed(RULE_LOG)
    ]
)
res.record("rule_changes", len(changes))
display(HTML(changes.to_html(escape=False, index=False, classes="rule-log-table")))

# %% tags=["remove-cell"]
_ = res.save()  # the results file (its path is not for the page)
