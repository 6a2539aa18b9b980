"""The reproduction report's ledger: every registered claim judged on this build's results and
on the committed decide results, the headline that takes each claim's most decisive current
evidence, and the report's texts, tables and figure.

The rules live in :mod:`~attention_dynamics.book.claims` and
:mod:`~attention_dynamics.book.verdicts`; this module only assembles and shows what they decide.
The report notebook calls :func:`build_ledger`, :func:`record_ledger` and the functions that
turn a :class:`Ledger` into the page's paragraphs, tables and figure.
"""

from __future__ import annotations

import html
import json
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.transforms import ScaledTranslation, blended_transform_factory

from attention_dynamics.book.catalogue import describe
from attention_dynamics.book.claims import (
    FAILED_SHARE,
    FALL,
    SEED_LEVEL,
    SOLVE_MULTIPLE,
    SOLVED_SHARE,
)
from attention_dynamics.book.formatting import capitalised, format_number, without_e_notation
from attention_dynamics.book.plotting import FIGURE_INCHES, MIN_POINTS
from attention_dynamics.book.results import Results
from attention_dynamics.book.rule_log import CLAIM_NAMES, RULE_LOG, RuleChange, moving_changes
from attention_dynamics.book.verdicts import (
    BASES,
    BY_DESIGN,
    CONTROL,
    EVIDENCE_AGAINST,
    EVIDENCE_FOR,
    FOR_BUDGET,
    RUN_PROFILES,
    VERDICTS,
    Claim,
    DecidingRun,
    ShortBudget,
    headline_row,
    registered_change,
    tally,
)

CHAPTER_NUMBERS = {
    "score_gradient": "1",
    "value_update": "2",
    "em_reading": "3",
    "manifold_formation": "4",
    "content_routing": "5",
}
"""The chapter number of each notebook that makes results."""


def chapter_words(notebook: str) -> str:
    """A notebook that makes results as a reader names it: ``"chapter 5"``."""
    return f"chapter {CHAPTER_NUMBERS[notebook]}"


VERDICT_COLOURS = {
    "reproduced": "#2a9d8f",
    "partly": "#e9c46a",
    "not reproduced": "#e76f51",
    "inconclusive": "#8d99ae",
}
"""One colour per verdict in the report's figure."""


@dataclass
class Ledger:
    """Every claim judged, row ``i`` of each table being claim ``i`` of ``claims``.

    Attributes:
        claims: the claims in the report's order (numbered from 1).
        found: this build's results, keyed by notebook.
        decided: the committed decide results, keyed by notebook (each with ``stale`` and
            ``stale_reasons``); empty when the build itself runs the decide profile.
        table: this build's row of every claim
            (:meth:`~attention_dynamics.book.verdicts.Claim.row`), indexed by number.
        decide_rows: each claim's row under the decide results, or None where they do not
            hold its notebook or its metrics.
        headline: each claim's most decisive current row
            (:func:`~attention_dynamics.book.verdicts.headline_row`).
    """

    claims: list[Claim]
    found: dict[str, dict]
    decided: dict[str, dict]
    table: pd.DataFrame
    decide_rows: list[dict | None]
    headline: pd.DataFrame

    @property
    def numbers(self) -> range:
        """The rows' numbers, the same in the table and the figure."""
        return range(1, len(self.claims) + 1)

    @property
    def claims_only(self) -> pd.DataFrame:
        """The headline rows of the claims, without the controls by construction."""
        return self.headline[self.headline["basis"] != CONTROL]

    @property
    def controls(self) -> pd.DataFrame:
        """The headline rows of the controls by construction."""
        return self.headline[self.headline["basis"] == CONTROL]

    @property
    def decide_table(self) -> pd.DataFrame:
        """The claims that the decide results judge, one row each."""
        return pd.DataFrame([row for row in self.decide_rows if row is not None])

    def decide_current(self, claim: Claim) -> bool:
        """Whether the decide results of ``claim``'s notebook exist and can judge it
        (:func:`decide_current`)."""
        return decide_current(claim, self.decided)


def decide_current(claim: Claim, decided: dict[str, dict]) -> bool:
    """Whether the decide results (``decided``, as
    :func:`~attention_dynamics.book.results.load_profile_results` gives them) of ``claim``'s
    notebook exist and can judge it: the file is current (its code, settings and CPU dispatch
    are today's) and ``claim``'s rule is the one it ran under. A rule changed after the run
    makes that claim's row stale alone; the file's other rows still rest on it, their rules
    registered before it ran."""
    content = decided.get(claim.notebook)
    return (content is not None and not content["stale"]
            and claim.key not in content.get("stale_claims", ()))


def _decide_row(claim: Claim, decided: dict[str, dict]) -> dict | None:
    """The claim's row under the decide results; None where they do not hold its notebook or
    its metrics (a notebook the decide profile does not run, or results older than the
    claim)."""
    if claim.notebook not in decided:
        return None
    try:
        return claim.row(decided)
    except KeyError:
        return None


def build_ledger(claims: list[Claim], found: dict[str, dict],
                 decided: dict[str, dict]) -> Ledger:
    """Judge every claim on this build's results (``found``) and on the decide results
    (``decided``, as :func:`~attention_dynamics.book.results.load_profile_results` gives
    them), and pick each claim's headline row."""
    numbers = range(1, len(claims) + 1)
    table = pd.DataFrame([claim.row(found) for claim in claims], index=numbers)
    decide_rows = [_decide_row(claim, decided) for claim in claims]
    headline = pd.DataFrame(
        [headline_row(quick, other, other is not None and decide_current(claim, decided))
         for claim, quick, other in zip(claims, table.to_dict("records"), decide_rows,
                                        strict=True)],
        index=numbers)
    return Ledger(list(claims), found, decided, table, decide_rows, headline)


def _metric_name(basis: str) -> str:
    return basis.replace(" ", "_")


def record_ledger(results: Results, ledger: Ledger) -> None:
    """Record the ledger's counts: per verdict of the claims (controls apart), per basis of
    every headline row, how many rows the decide results judge and on what basis, and how many
    headline rows come from them."""
    decide_table = ledger.decide_table
    if len(decide_table):
        results.record("decide_claims_judged", len(decide_table))
        for basis, count in tally(decide_table.to_dict("records")).items():
            results.record(f"decide_claims_basis_{_metric_name(basis)}", count)
    counts = ledger.claims_only["verdict"].value_counts()
    for verdict in VERDICTS:
        results.record(f"claims_{_metric_name(verdict)}", int(counts.get(verdict, 0)))
    results.record("claims_tested", len(ledger.claims_only))
    results.record("controls_tested", len(ledger.controls))
    results.record("controls_reproduced", int((ledger.controls["verdict"] == "reproduced").sum()))
    results.record("claims_from_decide", int((ledger.claims_only["profile"] == "decide").sum()))
    for basis, count in tally(ledger.headline.to_dict("records")).items():
        results.record(f"claims_basis_{_metric_name(basis)}", count)


def headline_phrases(ledger: Ledger) -> dict[str, str]:
    """Each claim's headline verdict in words, for the chapter pages to cite: ``{"verdict_<key
    with underscores>": "reproduced (decide profile, 22 of 24 seeds)"}``, the parenthesis
    naming the profile whose results decide it and, for a share of seeds, the count; and, as
    ``verdict_why_<key with underscores>``, the same followed by the reason where the verdict
    has one (an inconclusive or partly verdict)."""
    phrases = {}
    for claim, (_, row) in zip(ledger.claims, ledger.headline.iterrows(), strict=True):
        detail = f"{row['profile']} profile"
        if (counts := _seed_counts(ledger, claim, row)) is not None:
            detail += f", {counts[0]:,} of {counts[1]:,} seeds"
        name = claim.key.replace("-", "_")
        phrases[f"verdict_{name}"] = f"{row['verdict']} ({detail})"
        phrases[f"verdict_why_{name}"] = phrases[f"verdict_{name}"] + (
            f": {without_e_notation(row['reason'])}" if row["reason"] else "")
    return phrases


def _seed_counts(ledger: Ledger, claim: Claim, row: pd.Series) -> tuple[int, int] | None:
    """For a headline row judged by a share of seeds, how many seeds show the effect and how
    many were run, on the results of the row's profile; None for any other row."""
    if pd.isna(row["interval low"]):
        return None
    metrics = (ledger.decided if row["profile"] == "decide" else ledger.found)[
        claim.notebook]["metrics"]
    return claim.rule.counts(row["ours"], metrics)


FINDING_ORDER = {"not reproduced": "Not reproduced", "partly": "Partly reproduced",
                 "inconclusive": "Inconclusive"}
"""The verdicts the report's first lines name claim by claim (the others it counts), with
their headings."""


def rows_words(numbers: Sequence[int]) -> str:
    """Rows of the report's table in words: ``"row 4"``, ``"rows 4 and 7"``, ``"rows 4, 7 and
    9"``."""
    if not numbers:
        raise ValueError("numbers must name at least one row")
    words = [str(number) for number in numbers]
    if len(words) == 1:
        return f"row {words[0]}"
    return f"rows {', '.join(words[:-1])} and {words[-1]}"


def _finding_line(ledger: Ledger, number: int, row: pd.Series,
                  names: Mapping[str, str]) -> str:
    """One claim of the report's first lines (a Markdown bullet): its short name, row, chapter
    and the reason in words."""
    claim = ledger.claims[number - 1]
    null = row["null"] if pd.isna(row["null value"]) else (
        f"{row['null']} ({format_number(row['null value'])})")
    counts = _seed_counts(ledger, claim, row)
    if row["reason"]:
        reason = without_e_notation(row["reason"])
    elif counts is not None and claim.each_seed is not None:  # "ours" is a share, not a value
        reason = (f"{counts[0]:,} of {counts[1]:,} seeds show it (each seed's value "
                  f"{claim.each_seed.describe()}; the null is {null})")
    else:
        reason = f"ours {format_number(row['ours'])} against {null}"
    name = capitalised(names.get(claim.key, "")) or row["claim"]
    return (f"- *{name}* (row {number}, chapter {CHAPTER_NUMBERS[claim.notebook]}): "
            f"{reason}.")


def findings_text(ledger: Ledger, names: Mapping[str, str] = CLAIM_NAMES) -> str:
    """The report's first lines (markdown): every claim that is not reproduced, partly
    reproduced or inconclusive, by its short name (``names``, by claim key; the claim's full
    statement where it has none), with its row, chapter and the reason in words; then how many
    reproduced. The inconclusive claims come in groups by what would decide them
    (:func:`would_decide`), each group under that sentence, said once for all its rows (many
    rows wait on the same registered run)."""
    claims = ledger.claims_only
    tallied = claims["verdict"].value_counts()
    parts = [f"Of the {len(claims)} claims, " + ", ".join(
        f"{int(tallied.get(verdict, 0))} {verdict}"
        for verdict in ("reproduced", "partly", "not reproduced", "inconclusive")) + "."]
    for verdict, heading in FINDING_ORDER.items():
        rows = claims[claims["verdict"] == verdict]
        if rows.empty:
            continue
        if verdict != "inconclusive":
            lines = [_finding_line(ledger, number, row, names) for number, row in rows.iterrows()]
            parts.append(f"**{heading} ({len(rows)}).**\n\n" + "\n".join(lines))
            continue
        groups: dict[str, list[int]] = {}  # in the order of each group's first row
        for number in rows.index:
            groups.setdefault(would_decide(ledger, number), []).append(number)
        blocks = []
        for decides, numbers in groups.items():
            lines = "\n".join(_finding_line(ledger, number, rows.loc[number], names)
                              for number in numbers)
            each = "each of " if len(numbers) > 1 else ""
            blocks.append(f"*What would decide {each}{rows_words(numbers)}:* "
                          f"{without_e_notation(decides)}.\n\n{lines}" if decides else lines)
        parts.append(f"**{heading} ({len(rows)}),** grouped by what would decide them.\n\n"
                     + "\n\n".join(blocks))
    reproduced = int((claims["verdict"] == "reproduced").sum())
    parts.append(f"**Reproduced ({reproduced}).** The table below gives each with its number "
                 "and the null it beats.")
    return "\n\n".join(parts)


FINDINGS: dict[str, tuple[str, ...]] = {
    # all three: the law, the formulas it rests on, and the step it predicts
    "score_gradient": ("routing-law-exact", "closed-form-gradients-exact",
                       "descent-moves-attention-up"),
    # all four: the update, and the three tests of the feedback loop it closes
    "value_update": ("value-update-exact", "coupled-specializes-further", "loop-beyond-capacity",
                     "loop-leaves-symmetry"),
    # the paper's experiment (faster, and by how much), what it is taken to show of the values'
    # paths, and the order of the timescales at the authors' setting and where attention sharpens
    "em_reading": ("em-faster-share", "em-speedup", "em-longer-value-paths",
                   "em-coherent-value-paths", "attention-first-authors-setting",
                   "attention-first-fresh"),
    # the calibration the geometry presupposes, then the geometry Paper I reports: orthogonal
    # keys (ours and the authors' own model), the value manifold and its order by entropy, and
    # precision improving after the attention settles
    "manifold_formation": ("bijection-separate-matches-bayes", "key-orthogonality-separate",
                           "key-orthogonality-authors-checkpoint",
                           "value-manifold-pc1-share-separate",
                           "value-manifold-hmm-leading-component", "precision-after-settling"),
    # one claim per task of the three, for the architecture that routes by content without a
    # softmax (Mamba) against the one that does not (the LSTM), and the transformer's baseline
    "content_routing": ("transformer-bijection-matches-bayes", "mamba-bijection-matches-bayes",
                        "mamba-hmm-tracks-bayes", "lstm-hmm-fails", "mamba-recall-solves",
                        "lstm-recall-fails"),
}
"""The claims each chapter's findings box names, by chapter (the notebook that judges them):
three to six, the chapter's central ones, in the order the box lists them.

:meta hide-value:
"""

FINDING_STATEMENTS: dict[str, str] = {
    "routing-law-exact": "The routing law, by which a score's gradient is its key's attention "
    "weight times the key's advantage over the attention-weighted average, is exact",
    "closed-form-gradients-exact": "The closed-form gradients of the queries, keys, values and "
    "the three projection matrices match automatic differentiation",
    "descent-moves-attention-up": "A small descent step on the scores moves attention toward the "
    "keys that are better than average",
    "value-update-exact": "The closed-form value update, each value moved against the "
    "attention-weighted sum of its queries' error signals, is exact",
    "coupled-specializes-further": "Training routing and values together specializes a head "
    "further than training either half alone",
    "loop-beyond-capacity": "At equal updates from a random start, training routing and values "
    "together specializes further than training them one after the other",
    "loop-leaves-symmetry": "Near the symmetric state, only the loop between routing and values "
    "makes a head specialize",
    "em-faster-share": "The EM-like schedule, ten times the learning rate on the values, reaches "
    "plain gradient descent's final loss in fewer steps",
    "em-speedup": "The EM-like schedule's speed-up to that loss, within the uncertainty of our "
    "seeds, reaches the paper's 2.3",
    "em-longer-value-paths": "Under the EM-like schedule the values travel farther on the way to "
    "the same loss",
    "em-coherent-value-paths": "Under the EM-like schedule the values travel straighter on the "
    "way to the same loss",
    "attention-first-authors-setting": "At the authors' setting, the attention settles before "
    "the values",
    "attention-first-fresh": "Where the attention can sharpen, on fresh sequences every step, it "
    "settles before the values",
    "bijection-separate-matches-bayes": "A small transformer matches the Bayes-optimal entropy on "
    "bijection elimination, in the separate layout",
    "key-orthogonality-separate": "Training makes the keys of the hypotheses more orthogonal than "
    "at initialisation, in the separate layout",
    "key-orthogonality-authors-checkpoint": "Training made the keys of the hypotheses more "
    "orthogonal than at initialisation in the authors' own run",
    "value-manifold-pc1-share-separate": "The first principal component carries most of the "
    "variance of the final representations, in the separate layout",
    "value-manifold-hmm-leading-component": "On HMM filtering, a leading principal component "
    "orders the representations by posterior entropy beyond what the position explains",
    "precision-after-settling": "Precision keeps improving after the attention of the heads that "
    "matter has settled",
    "transformer-bijection-matches-bayes": "A transformer matches the Bayes-optimal entropy on "
    "bijection elimination",
    "mamba-bijection-matches-bayes": "Mamba matches the Bayes-optimal entropy on bijection "
    "elimination",
    "mamba-hmm-tracks-bayes": "Mamba tracks the Bayes posterior's entropy sequence by sequence on "
    "HMM filtering",
    "lstm-hmm-fails": "An LSTM fails HMM filtering, staying on the plateau of a uniform posterior",
    "mamba-recall-solves": "Mamba solves associative recall",
    "lstm-recall-fails": "An LSTM fails associative recall",
}
"""What each claim of :data:`FINDINGS` says, as a plain sentence without its final stop, the
claim as the paper makes it and never its outcome, so that it reads right before any verdict.

:meta hide-value:
"""

AUTHORS_MODEL_CLAIMS = frozenset({"key-orthogonality-authors-checkpoint"})
"""Claims measured on the authors' released model, whatever the profile of the run."""

FINDING_RUNS = {"quick": "this build's quick runs", "decide": "the deciding runs",
                "paper": "this build's paper-scale runs"}
"""The runs a headline row rests on, by its profile, as a findings box names them."""

FINDING_VERDICTS = {"partly": "partly reproduced"}
"""A verdict as a findings box words it, where that differs from the ledger's word."""

REASON_CHARACTERS = 100
"""A reason longer than this is cut to its first clause in a findings box."""

CLAUSE_ENDS = (" (", "; ", ": ", ", so that ", ", so ")
"""Where a reason's first clause ends."""

UNDECIDED_SHARE = re.compile(r"^the \d+% interval \S+ of the share contains \S+ "
                             r"\(\d+ of \d+ seeds\)")
"""The reason a share of seeds gives when its interval leaves the verdict open (the count of
seeds, which a findings box gives beside the verdict, ends it)."""

MEASURED = re.compile(r" \(measured [^()]*\)")
"""The numbers a guard's reason gives in brackets (``(measured 0.951, above 0.8)``), which a
findings box leaves to the report's table."""


def plain_reason(reason: str) -> str:
    """A headline row's reason as a findings box gives it: an undecided share of seeds in
    words (what follows it left to the report), any other reason without e-notation or a
    guard's measured numbers and, past :data:`REASON_CHARACTERS`, cut to its first clause;
    without a final stop."""
    if UNDECIDED_SHARE.match(reason.strip()):
        return "too few seeds to tell the share from one half"
    text = without_e_notation(MEASURED.sub("", reason.strip()))
    if len(text) > REASON_CHARACTERS:
        ends = [at for end in CLAUSE_ENDS if (at := text.find(end)) > 0]
        text = text[:min(ends)] if ends else text
    return text.rstrip(" .;:,")


@dataclass(frozen=True)
class Finding:
    """One line of a chapter's findings box.

    Attributes:
        statement: the claim in plain words, as the paper makes it (never its outcome).
        verdict: its headline verdict, in words (:data:`FINDING_VERDICTS`).
        evidence: what the verdict rests on: the runs and, for a share of seeds, the count.
        reason: why it is not reproduced, partly or undecided, in plain words (empty
            otherwise).
    """

    statement: str
    verdict: str
    evidence: str
    reason: str

    @property
    def markdown(self) -> str:
        """The line as a Markdown bullet, the verdict in bold."""
        why = f" — {self.reason}" if self.reason else ""
        return f"- {self.statement}: **{self.verdict}** ({self.evidence}){why}."

    @property
    def html(self) -> str:
        """The line as an HTML list item, the verdict in bold."""
        why = f" — {_text(self.reason)}" if self.reason else ""
        return (f"<li>{_text(self.statement)}: <strong>{_text(self.verdict)}</strong> "
                f"({_text(self.evidence)}){why}.</li>")


@dataclass(frozen=True)
class FindingsBox:
    """A chapter's findings (:func:`chapter_findings`), glued for the chapter's page.

    It displays as Markdown in a notebook and as HTML on a page: myst-nb 1.4 pastes another
    notebook's glued value on a page (``{glue}`` with ``:doc:``) as HTML, plain text or an
    image, never as Markdown (its ``{glue:md}`` reads only the page's own notebook).
    """

    findings: tuple[Finding, ...]

    @property
    def markdown(self) -> str:
        """The findings as Markdown bullets, one line each."""
        return "\n".join(finding.markdown for finding in self.findings)

    def _repr_markdown_(self) -> str:
        return self.markdown

    def _repr_html_(self) -> str:
        items = "\n".join(finding.html for finding in self.findings)
        return f'<ul class="findings">\n{items}\n</ul>'

    def __repr__(self) -> str:
        return self.markdown


def _finding(ledger: Ledger, number: int, statements: Mapping[str, str]) -> Finding:
    claim, row = ledger.claims[number - 1], ledger.headline.loc[number]
    statement = statements.get(claim.key) or capitalised(CLAIM_NAMES.get(claim.key, claim.claim))
    runs = ("the authors' released checkpoint" if claim.key in AUTHORS_MODEL_CLAIMS
            else FINDING_RUNS.get(row["profile"], f"the {row['profile']} runs"))
    counts = _seed_counts(ledger, claim, row)
    evidence = f"on {runs}" + (f", {counts[0]:,} of {counts[1]:,} seeds showing it"
                               if counts is not None else "")
    reason = ""
    if row["verdict"] in FINDING_ORDER:
        if row["reason"]:
            reason = plain_reason(row["reason"])
        elif not pd.isna(row["null"]) and row["null"]:
            reason = f"judged against {plain_reason(str(row['null']).split(' (')[0])}"
    return Finding(statement.rstrip(" ."), FINDING_VERDICTS.get(row["verdict"], row["verdict"]),
                   evidence, reason)


def chapter_findings(ledger: Ledger, chapter: str, keys: Sequence[str] | None = None,
                     statements: Mapping[str, str] = FINDING_STATEMENTS) -> FindingsBox:
    """The findings box of ``chapter`` (a notebook that judges claims): one line per claim of
    ``keys`` (default: :data:`FINDINGS` of the chapter), in that order, each the claim in plain
    words (``statements``, by key; the claim's short name where it has none) followed by its
    headline verdict in bold, the runs it rests on and, for a claim not reproduced, partly
    reproduced or undecided, the reason in plain words.

    Raises:
        KeyError: a key the ledger does not judge.
        ValueError: a key whose claim another chapter judges.
    """
    numbers = {claim.key: number for number, claim in zip(ledger.numbers, ledger.claims,
                                                          strict=True)}
    chosen = FINDINGS[chapter] if keys is None else tuple(keys)
    for key in chosen:
        if key not in numbers:
            raise KeyError(f"the ledger judges no claim {key!r}")
        if (notebook := ledger.claims[numbers[key] - 1].notebook) != chapter:
            raise ValueError(f"claim {key!r} belongs to {notebook!r}, not to {chapter!r}")
    return FindingsBox(tuple(_finding(ledger, numbers[key], statements) for key in chosen))


def findings_boxes(ledger: Ledger) -> dict[str, FindingsBox]:
    """Every chapter's findings box (:func:`chapter_findings`), as the report glues them for
    the chapters' pages: ``{"findings_<chapter>": box}``."""
    return {f"findings_{chapter}": chapter_findings(ledger, chapter) for chapter in FINDINGS}


def summary_text(ledger: Ledger) -> str:
    """The paragraph above the figure: the profile and device of this build, the headline's
    verdicts and bases, and this build's verdicts alone (markdown)."""
    headline = ledger.claims_only
    counts = headline["verdict"].value_counts()
    quick_counts = ledger.table.loc[headline.index, "verdict"].value_counts()
    bases = tally(ledger.headline.to_dict("records"))
    from_decide = int((headline["profile"] == "decide").sum())
    controls = ledger.controls
    control_counts = controls["verdict"].value_counts()
    beside = (f" Beside them, {len(controls)} controls by construction (rows "
              f"{', '.join(str(number) for number in controls.index)}; a model that cannot use "
              "the context, whose failure checks the set-up): "
              + ", ".join(f"{int(control_counts.get(v, 0))} {v}" for v in VERDICTS
                          if control_counts.get(v, 0))
              + "." if len(controls) else "")
    profiles = sorted({content["profile"] for content in ledger.found.values()})
    devices = sorted({content["device"] for content in ledger.found.values()})
    caveat = ("The `quick` profile trains small models for minutes on two CPU cores; a verdict "
              "from it says what this scale shows, not what the papers' scale would."
              if "quick" in profiles else "")
    return (
        f"**This build ran the `{'`, `'.join(profiles)}` profile on {', '.join(devices)}.** "
        + caveat
        + f"\n\n**{len(headline)} claims, each on its most decisive current evidence** "
        f"({from_decide} from the `decide` profile, {len(headline) - from_decide} from this "
        "build): "
        + ", ".join(f"{int(counts.get(v, 0))} {v}" for v in VERDICTS)
        + "."
        + beside
        + " **What decides every row:** "
        + ", ".join(f"{bases[b]} {b}" for b in BASES)
        + ". This build alone: "
        + ", ".join(f"{int(quick_counts.get(v, 0))} {v}" for v in VERDICTS)
        + ".")


def verdict_counts(ledger: Ledger) -> pd.DataFrame:
    """The claims' headline verdicts counted chapter by chapter, the controls by construction
    left out: a row per verdict (:data:`~attention_dynamics.book.verdicts.VERDICTS`, in
    order), a column per chapter, headed by its number, and one for all of them (``"all"``);
    the axes are named ``"verdict"`` and ``"chapter"``."""
    claims = ledger.claims_only
    chapters = list(dict.fromkeys(claim.notebook for claim in ledger.claims))
    notebooks = pd.Series([ledger.claims[number - 1].notebook for number in claims.index],
                          index=claims.index)
    counts = pd.DataFrame({
        CHAPTER_NUMBERS.get(notebook, notebook): claims.loc[notebooks == notebook, "verdict"]
        .value_counts().reindex(VERDICTS, fill_value=0)
        for notebook in chapters})
    counts["all"] = claims["verdict"].value_counts().reindex(VERDICTS, fill_value=0)
    return counts.astype(int).rename_axis(index="verdict", columns="chapter")


@dataclass(frozen=True)
class CountsTable:
    """A small table of counts (:func:`verdict_counts`) as a page pastes it: HTML of class
    ``counts-table``, whose columns the book's style sheet keeps as narrow as a number, so that
    it fits a phone."""

    frame: pd.DataFrame

    def _repr_html_(self) -> str:
        # one header row: the columns' name heads the index column (an index name would add
        # a second, empty row)
        return self.frame.rename_axis(index=None).to_html(classes="counts-table", border=0)

    def __repr__(self) -> str:
        return self.frame.to_string()


def provenance_table(ledger: Ledger) -> pd.DataFrame:
    """One row per decide results file (HTML cells): profile, date, commit (as code: an
    audit's reference, not words), CPU and the kernels torch ran on it, how it was made (one
    run, or parts merged, and the CPUs of the parts), and whether it is
    current (or why it is stale, in words, with the number of files or claims a reason
    lists)."""
    def plain(reason: str) -> str:  # the reason's words, its list of files or claims counted
        words, _, listed = reason.partition(": ")
        count = len(listed.split(", ")) if listed else 0
        return f"{words} ({count})" if count else words

    def library(content: dict) -> str:
        if not content["stale"] and content.get("stale_claims"):
            count = len(content["stale_claims"])
            return (f"current, but for {count} row{'s' if count > 1 else ''} whose rule "
                    "changed since it ran")
        if not content["stale"]:
            return "current"
        return "stale: " + "; ".join(plain(reason) for reason in content["stale_reasons"])

    def commit(content: dict) -> str:
        return (f"<code>{_text(content['commit'][:12])}</code>" if content.get("commit")
                else "not recorded")

    def made(content: dict) -> str:  # one run, or parts merged (a job array's, say)
        parts = content.get("parts")
        if not parts:
            return "one run"
        cpus = sorted({f"{part.get('cpu_model')} ({part.get('cpu_features')})"
                       for part in parts})
        return f"{len(parts)} parts, merged; the parts on {', '.join(cpus)}"

    return pd.DataFrame({
        notebook: {
            "profile": _text(content["profile"]),
            "date": _text(content.get("date", "not recorded")),
            "commit": commit(content),
            "CPU": _text(content["versions"].get("cpu_model", "not recorded")),
            "CPU kernels": _text(content["versions"].get("cpu_capability", "not recorded")),
            "made as": _text(made(content)),
            "library": _text(library(content)),
        }
        for notebook, content in ledger.decided.items()
    }).T.rename(index=lambda notebook: capitalised(chapter_words(notebook)))


def provenance_text(ledger: Ledger) -> str:
    """The paragraph above the provenance table: what the decide profile is, its tally, what
    "current" means and which files are stale (markdown)."""
    if not ledger.decided:
        return ("No results of the decide profile are kept with these sources (the README says "
                "how to make them).")
    decide_table = ledger.decide_table
    bases = tally(decide_table.to_dict("records"))
    controls = bases[CONTROL]
    stale = [name for name, content in ledger.decided.items() if content["stale"]]
    return (
        "**The decide profile** ran the experiments that the quick profile leaves undecided "
        "for budget, longer and on more seeds, once, on two CPU cores (the runs each claim "
        "registered before they ran); its "
        "results files are kept with the sources and judged here by the same rules, in the "
        f"table's column of the other profile. Of its {len(decide_table)} rows "
        f"({len(decide_table) - controls} claims and {controls} controls), what decides each: "
        + ", ".join(f"{count} {basis}" for basis, count in bases.items())
        + "."
        + " A results file is *current* while it was made with the CPU's kernels pinned to "
        "AVX2 and the library code that ran to make it (the "
        "modules it had imported, compared by their code, so that comments and docstrings do "
        "not count) and its chapter's settings for its profile are what they were when it ran; "
        "a claim whose rule changed after the run cannot rest on it, while the file's other "
        "claims, their rules registered before it ran, still do; a current decide row is the claim's "
        "headline evidence, and a rerun that gives the same numbers to the bit certifies a "
        "file (the README's certify command). "
        + (f" **Stale:** what made {', '.join(map(chapter_words, stale))} has changed since it "
           "ran (the table below says what), so their rows are shown but the headline uses "
           "this build's; rerun or certify them." if stale else ""))


SENSITIVITY_FILE = "mamba_recall_seed0.json"
"""The results file (in ``results/``) of one chaotic run trained under two CPU dispatches."""


def sensitivity_text(root: Path) -> str:
    """A paragraph on how far one seed's outcome moves with the CPU's kernels, from
    ``<root>/results/`` :data:`SENSITIVITY_FILE` (markdown; empty where the file is missing)."""
    path = root / "results" / SENSITIVITY_FILE
    if not path.is_file():
        return ""
    found = json.loads(path.read_text())
    by_capability = {run["cpu_capability"]: run["recall_accuracy"]
                     for run in found["runs"] if run["code"] == "HEAD"}
    same_code = all(run["recall_accuracy"] == by_capability[run["cpu_capability"]]
                    for run in found["runs"])
    step = found["first_step_whose_loss_differs_between_unpinned_and_pinned"]
    losses = {run["cpu_capability"]: run["loss_at_steps"][max(run["loss_at_steps"], key=int)]
              for run in found["runs"] if run["code"] == "HEAD"}
    losses_differ = abs(losses["AVX512"] - losses["AVX2"]) > 0.5
    bar = found["solve_bar"]["bar"]
    sides = {accuracy >= bar for accuracy in by_capability.values()}
    verdict = ("below the solve bar under both, so whether it solves the task is the same"
               if sides == {False} else
               "above the solve bar under both, so whether it solves the task is the same"
               if sides == {True} else
               "on opposite sides of the solve bar, so even whether it solves the task moves")
    names = {"AVX512": "AVX-512", "AVX2": "AVX2"}
    low, high = sorted(losses, key=losses.get)
    ends = (f" At the last step the {names[high]} run's loss is {format_number(losses[high], 2)} "
            f"and the {names[low]} run's {format_number(losses[low], 2)}: one has left the "
            "plateau, the other has not." if losses_differ else "")
    return (
        "**One seed, two kinds of kernels.** One Mamba run on associative recall is chaotic at "
        "this budget: the chapter's first seed, the same code and settings, ends at recall "
        f"accuracy {format_number(by_capability['AVX512'], 3)} with torch's AVX-512 kernels and "
        f"{format_number(by_capability['AVX2'], 3)} with its AVX2 kernels, {verdict} (the bar "
        f"is {format_number(bar, 3)}). The two runs' losses first differ at step {step}, by one "
        "float32 rounding, and part for good later." + ends + " "
        + ("The code that made the committed file and today's give the same numbers under "
           "the same kernels, so the kernels alone moved it. " if same_code else "")
        + "Pinning the CPU's kernels to AVX2 makes such a number reproducible (with the same "
        "torch and thread count, on any x86-64 CPU with AVX2), not robust: a per-seed outcome "
        "of a run like this is compared only with pinned runs, and a committed file made "
        "without the pin is stale until it is rerun under it.")


VERDICT_COLUMNS = {"reproduced": 0.0, "partly": 1.0, "not reproduced": 2.0, "inconclusive": 3.5}
"""The claim figure puts each verdict's column here, the three verdicts that decide a claim in
order from the paper's side and "inconclusive" apart from them."""

BASIS_MARKERS = {
    EVIDENCE_FOR: ("o", True),
    EVIDENCE_AGAINST: ("o", True),
    FOR_BUDGET: ("o", False),
    BY_DESIGN: ("X", True),
    CONTROL: ("s", True),
}
"""The claim figure marks each basis so, filled or not, with a filled circle for a row that
the evidence decides, an open one for a row undecided for budget, a cross for one
undecidable by design, a square for a control by construction."""

BASIS_LEGEND = {
    EVIDENCE_FOR: "decided by the evidence",
    FOR_BUDGET: "undecided for budget",
    BY_DESIGN: "undecidable by design",
    CONTROL: "control by construction",
}
"""The claim figure's legend entries, by the basis whose marker each shows (evidence for and
against share one)."""

NAME_CHARACTERS = 52
"""The longest line of a claim's name in the claim figure; a longer name (a claim without a
short name, labelled by its statement) wraps."""

ROW_INCHES = 0.25
"""The height of one claim's row in the claim figure."""


def figure_name(claim: Claim, row: pd.Series, names: Mapping[str, str] = CLAIM_NAMES) -> str:
    """A claim's label in the claim figure: its short name (``names``, by claim key; its full
    statement where it has none), capitalised, wrapped at :data:`NAME_CHARACTERS`."""
    name = capitalised(names.get(claim.key) or row["claim"])
    return textwrap.fill(name, NAME_CHARACTERS, break_on_hyphens=False)


def claims_figure(ledger: Ledger, names: Mapping[str, str] = CLAIM_NAMES) -> plt.Figure:
    """Every headline row (claims and controls) as one row of the figure, in the report's
    order, one panel per chapter, stacked: the row's verdict as its column and its colour,
    what decides it (its basis) as the marker; each row labelled by its claim's short name
    (``names``) on the left and its number in the report's table on the right.

    Only the verdict and its basis are drawn, because they are the only quantities that mean
    the same on every row. The claims' own numbers do not: one is a share of seeds, the next
    an error in bits, an accuracy or a ratio of times, each judged by its own rule against its
    own null, so no one axis can place them all (the figure once divided each by its null on
    one log axis, where a share of seeds that reproduced sat left of 1, "worse than the
    null", beside a ratio far to the right only because its null was small). The numbers,
    nulls and reasons are in the report's table, under the same row numbers.

    Drawn for the narrow column: :data:`~attention_dynamics.book.plotting.FIGURE_INCHES` wide,
    each name on one line, no text under :data:`~attention_dynamics.book.plotting.MIN_POINTS`
    points, the verdicts' names over the columns at the top and again at the bottom (the
    figure is taller than a phone's screen)."""
    chapters = list(dict.fromkeys(claim.notebook for claim in ledger.claims))
    rows = {notebook: [(number, claim, row) for number, claim, (_, row)
                       in zip(ledger.numbers, ledger.claims, ledger.headline.iterrows(),
                              strict=True)
                       if claim.notebook == notebook] for notebook in chapters}
    lines = {notebook: [figure_name(claim, row, names).count("\n") + 1
                        for _, claim, row in rows[notebook]] for notebook in chapters}
    heights = [ROW_INCHES * sum(lines[notebook]) + 0.3 for notebook in chapters]
    fig, axes = plt.subplots(
        len(chapters), 1, squeeze=False, sharex=True, layout="constrained",
        figsize=(FIGURE_INCHES, sum(heights) + 2.4), height_ratios=heights)
    axes = axes[:, 0]
    columns = list(VERDICT_COLUMNS.values())
    for ax, notebook in zip(axes, chapters, strict=True):
        chosen = rows[notebook]
        # each row as high as its name's lines, the first row on top
        tops = np.cumsum([0, *lines[notebook]])
        positions = -(tops[:-1] + tops[1:]) / 2
        for (_, _, row), y in zip(chosen, positions, strict=True):
            marker, filled = BASIS_MARKERS[row["basis"]]
            colour = VERDICT_COLOURS[row["verdict"]]
            ax.scatter(VERDICT_COLUMNS[row["verdict"]], y, marker=marker, s=55, zorder=3,
                       color=colour if filled else "white", edgecolors=colour,
                       linewidths=1.6)
        ax.set_ylim(-tops[-1], 0)
        ax.set_yticks(positions, [figure_name(claim, row, names) for _, claim, row in chosen],
                      fontsize=MIN_POINTS)
        numbers = ax.secondary_yaxis("right")
        numbers.set_yticks(positions, [str(number) for number, _, _ in chosen],
                           fontsize=MIN_POINTS)
        numbers.tick_params(length=0)
        ax.tick_params(length=0)
        ax.grid(True, color="0.88", lw=0.8)
        ax.set_axisbelow(True)
        title = (capitalised(chapter_words(notebook)) if notebook in CHAPTER_NUMBERS
                 else notebook)
        # over the names, from the figure's left edge
        ax.text(0.0, 1.0, title, ha="left", va="bottom", fontsize=MIN_POINTS + 0.5,
                fontweight="bold", transform=blended_transform_factory(
                    fig.transFigure, ax.transAxes) + ScaledTranslation(
                        0.04, 0.04, fig.dpi_scale_trans))
    axes[0].set_xlim(columns[0] - 0.6, columns[-1] + 0.6)
    axes[-1].set_xticks(columns, list(VERDICT_COLUMNS), fontsize=MIN_POINTS)
    axes[0].tick_params(axis="x", labeltop=True, labelrotation=90)
    axes[-1].tick_params(axis="x", labelrotation=90)
    axes[-1].tick_params(axis="x", labelbottom=True)
    for ax in axes[1:]:
        ax.tick_params(axis="x", labeltop=False)
    for ax in axes[:-1]:
        ax.tick_params(axis="x", labelbottom=False)
    handles = [plt.Line2D([], [], ls="", marker=BASIS_MARKERS[basis][0], ms=7.5, mew=1.6,
                          color="0.35", markerfacecolor="0.35" if BASIS_MARKERS[basis][1]
                          else "white", label=label)
               for basis, label in BASIS_LEGEND.items()]
    fig.legend(handles=handles, loc="outside lower center", ncol=2, frameon=False,
               fontsize=MIN_POINTS, handletextpad=0.3, columnspacing=1.0)
    return fig


FIGURE_CAPTION = (
    "**Every claim's verdict, chapter by chapter.** One row per claim, and per control by "
    "construction, on its most decisive current evidence: on the left the claim's short "
    "name, on the right its row in the table below. The column and the colour are the "
    "verdict; the marker is what decides it: a filled circle, the evidence for or against "
    "the claim; an open circle, runs too short or too few to decide it (undecided for "
    "budget); a cross, a set-up that cannot decide it whatever the run (undecidable by "
    "design); a square, a control by construction, which checks the set-up rather than a "
    "claim. The claims' own numbers are not drawn: they are shares of seeds, errors, "
    "accuracies and ratios, each against its own null, which no one axis can hold; the "
    "table gives each with its null and its reason.")
"""The caption under :func:`claims_figure` (markdown)."""


def verdicts_text() -> str:
    """The four verdicts, the two kinds of inconclusive, and the thresholds in words
    (markdown)."""
    return f"""The four verdicts:

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
  more than {FALL:.0%} over its last tenth; the run trained fewer than {SOLVE_MULTIPLE}
  times the steps that solving its task took, its own or, for another architecture, the
  transformer's; or, where no such step is measured, it trained on fewer than
  {ShortBudget.min_fraction:.0%} of the sequences that the authors' own training
  script goes through), the model has not reached the regime the claim is about, or
  too few seeds (or too small a probe) leave an interval on both sides of its bound.
  The reason is in the row.

Every row also says what would change its verdict: the value that would flip a
decided row, the training or the seeds that would decide an undecided one.

A row is a *control by construction* when its model cannot show the effect whatever
its training (an MLP that mixes no positions cannot use the context): its verdict
checks the task and the training, so it is shown with the claims but counted apart
from them.

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


def _chapter_link(notebook: str) -> str:
    return f'<a href="../book/{notebook}.html">ch. {CHAPTER_NUMBERS[notebook]}</a>'


def _brief(row: dict | None, stale: bool = False) -> str:
    """A row of the other profile in one cell: its verdict, number and basis."""
    if row is None:
        return "–"
    return (f"<b>{row['verdict']}</b> ({row['profile']})<br>{format_number(row['ours'])}"
            f"<br><small>basis: {row['basis']}{' (stale)' if stale else ''}</small>")


def _measured(claim: Claim) -> str:
    """What a claim's number is, in the words its chapter declares for the metric (empty for a
    claim outside the chapters), ending in a line break."""
    if claim.notebook not in CHAPTER_NUMBERS:
        return ""
    meaning = describe(claim.notebook, claim.metric)
    if not meaning:
        return ""
    if claim.each_seed is not None:  # the number is a share of seeds, each judged on this
        return f"<i>share of seeds; each seed measured:</i> {_text(meaning)}<br>"
    return f"<i>measured:</i> {_text(meaning)}<br>"


def _text(words: object) -> str:
    """Plain words for an HTML cell: ``<``, ``>`` and ``&`` escaped (a rule's "< 0.5" would
    otherwise read as a tag)."""
    return html.escape(str(words), quote=False)


RULE_LOG_PAGE = "rule_log.html"
"""The book's page of the rule log, relative to the report's page (both notebooks)."""


def rule_log_mark(key: str | None, rule_log: Sequence[RuleChange] = RULE_LOG) -> str:
    """A short mark for a row whose verdict the rule log moved (HTML, linking to the log's
    page, with how many changes moved it), or an empty string for a row it never moved."""
    moved = sum(key in change.moved for change in moving_changes(rule_log))
    if not moved:
        return ""
    times = "" if moved == 1 else f" {moved}×"
    return (f'<br><small><a href="{RULE_LOG_PAGE}" title="the rule log moved this '
            f'row\'s verdict">verdict moved by the rule log{times}</a></small>')


def deciding_run_state(run: DecidingRun, claim: Claim, ledger: Ledger) -> str:
    """Where a registered ``run`` of ``claim``'s chapter stands in this build, in words: its
    results judged here and current, made but stale for this claim, or not yet made here."""
    if run.profile == "decide" and claim.notebook in ledger.decided:
        return ("made, and its results judge the row" if ledger.decide_current(claim)
                else "made, but its results are stale for this row until it is rerun")
    if run.profile == "paper":
        return "not yet made (a GPU run)"
    return "not yet made"


def would_decide(ledger: Ledger, number: int) -> str:
    """What would change the verdict of the headline row ``number`` (from 1), in words: the
    row's own (:meth:`~attention_dynamics.book.verdicts.Claim.row`'s "would change"), except
    for a row left undecided for budget that names its next registered deciding run, which
    also says where that run stands (:func:`deciding_run_state`): a run that was made but whose
    results are stale reads as made, to be rerun, not as one never made."""
    claim, row = ledger.claims[number - 1], ledger.headline.loc[number]
    text = row["would change"]
    if not claim.decided_by or text != registered_change(claim.decided_by, row["profile"]):
        return text
    later = [run for run in claim.decided_by
             if RUN_PROFILES.index(run.profile) > RUN_PROFILES.index(row["profile"])]
    if not later:  # every registered run made: the row says a larger one must be registered
        return text
    if (left_open := _left_open_by_its_run(later[0], claim, ledger)) is not None:
        # a rerun of a run made before the rule changed repeats its numbers to the bit, and
        # today's rule leaves the row open on them: the next registered run is what decides
        following = (f"{later[1].describe()}, registered to decide it and "
                     f"{deciding_run_state(later[1], claim, ledger)}" if len(later) > 1
                     else "a larger run, registered before it runs")
        return (f"{following}; the {later[0].profile} profile's run, made before this row's "
                f"rule changed, leaves it open under today's rule too ({left_open})")
    return (f"{later[0].describe()}, registered to decide it and "
            f"{deciding_run_state(later[0], claim, ledger)}")


def _left_open_by_its_run(run: DecidingRun, claim: Claim, ledger: Ledger) -> str | None:
    """Why today's rule leaves ``claim`` undecided on the results of its registered ``run``,
    where that run was made and its file is current but for this claim's rule, which changed
    after it ran (a rerun would give the same numbers); ``None`` otherwise (not made, stale for
    another reason, or decided by today's rule on those results)."""
    content = ledger.decided.get(claim.notebook) if run.profile == "decide" else None
    if (content is None or content.get("stale")
            or claim.key not in content.get("stale_claims", ())):
        return None
    rejudged = claim.row({claim.notebook: content})
    return without_e_notation(rejudged["reason"]) if rejudged["verdict"] == "inconclusive" \
        else None


RUN_ESTIMATE = re.compile(r"about [\d,.]+ [\w-]+")
"""The estimate in a deciding run's cost (``about 75 CPU-minutes`` of "the chapter's decide
profile, about 75 CPU-minutes"), without what it rests on."""
NO_BREAK = "\u00a0"
"""A space at which a line may not break (after a number)."""


def _run_cell(run: DecidingRun, claim: Claim, ledger: Ledger) -> str:
    """A registered ``run`` of ``claim`` in two short sentences: its seeds and steps with the
    estimate of its cost (that of the chapter's whole run, which makes the runs of the chapter's
    other claims too), then where it stands (:func:`deciding_run_state`, in fewer words: made
    and current, made and stale, or not yet made). A number stays on the line of its unit
    where the cell wraps."""
    estimate = RUN_ESTIMATE.search(run.cost)
    cost = re.sub(r"(\d) ", rf"\1{NO_BREAK}", estimate[0] if estimate else run.cost)
    if run.profile == "decide" and claim.notebook in ledger.decided:
        state = "Made, current." if ledger.decide_current(claim) else "Made, stale until rerun."
    else:
        state = "Not yet made."
    return (f"{run.seeds}{NO_BREAK}seeds × {run.steps:,}{NO_BREAK}steps, in the chapter's run "
            f"of {cost}. {state}")


def deciding_runs_table(ledger: Ledger) -> pd.DataFrame:
    """The registered deciding runs (each claim's ``decided_by``, of
    :class:`~attention_dynamics.book.verdicts.DecidingRun`) for a narrow column: a column per
    profile, smallest first, whose cells give that profile's run (its seeds,
    steps, the chapter run's estimated cost, where it stands; nothing where a claim registers
    none), and a row per such pair of cells, after the claims that register it (each its table
    number and short name), in the order of their first claim. Show it with
    ``reader_table(..., wrap=True)``: its cells wrap."""
    profiles = [profile for profile in RUN_PROFILES
                if any(run.profile == profile for claim in ledger.claims
                       for run in claim.decided_by)]
    columns = [f"{profile} profile" for profile in profiles]
    claims: dict[tuple, list[str]] = {}
    for number, claim in zip(ledger.numbers, ledger.claims, strict=True):
        if claim.decided_by:
            runs = {run.profile: _run_cell(run, claim, ledger) for run in claim.decided_by}
            name = capitalised(CLAIM_NAMES.get(claim.key, claim.claim))
            claims.setdefault(tuple(runs.get(profile) for profile in profiles), []).append(
                f"{number}.{NO_BREAK}{name}")
    return pd.DataFrame([["; ".join(names), *cells] for cells, names in claims.items()],
                        columns=["claims", *columns])


def ledger_table(ledger: Ledger, rule_log: Sequence[RuleChange] = RULE_LOG) -> pd.DataFrame:
    """The report's table (HTML cells): each claim with its source, paper's number and rule;
    ours with the null; the headline verdict with its basis, reason and what would change it,
    and a mark where the rule log (``rule_log``) moved it; the other profile's verdict."""
    headline = ledger.headline
    rows = list(zip(ledger.claims, (row for _, row in headline.iterrows()),
                    ledger.table.to_dict("records"), ledger.decide_rows, strict=True))

    def null_cell(claim: Claim, row: pd.Series) -> str:
        null = (_text(row["null"]) if pd.isna(row["null value"])
                else f"{_text(row['null'])}: {format_number(row['null value'])}")
        shown_with = f"<br>{_text(row['shown with'])}" if row["shown with"] else ""
        return (f"<b>{format_number(row['ours'])}</b><br><small>{_measured(claim)}{null}"
                f"{shown_with}</small>")

    def other_profile(claim: Claim, row: pd.Series, quick: dict, other: dict | None) -> str:
        if row["profile"] == "decide":
            return _brief(quick)
        return _brief(other, other is not None and not ledger.decide_current(claim))

    return pd.DataFrame({
        "claim": [f"{_text(row['claim'])}<br><small>{_text(row['source'])}; paper: "
                  f"{_text(row['paper'])}; {_chapter_link(claim.notebook)}; rule: "
                  f"{_text(row['rule'])}</small>"
                  for claim, row, _, _ in rows],
        "ours, and the null or reference": [null_cell(claim, row) for claim, row, _, _ in rows],
        "verdict, on the most decisive evidence": [
            f"<b>{row['verdict']}</b> ({row['profile']})<br><small>basis: {row['basis']}"
            + (f": {_text(row['reason'])}" if row["reason"] else "")
            + f"<br><i>would change it:</i> {_text(would_decide(ledger, number))}</small>"
            + rule_log_mark(claim.key, rule_log)
            for number, (claim, row, _, _) in zip(ledger.numbers, rows, strict=True)],
        "the other profile": [other_profile(*parts) for parts in rows],
    }, index=ledger.numbers).map(without_e_notation)

