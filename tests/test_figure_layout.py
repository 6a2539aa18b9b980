"""Every chapter figure reads at the widths it is shown at: a 390 px phone (the figure shrunk to
its column) and a 1,400 px desktop screen (at its natural size).

:func:`~attention_dynamics.book.plotting.layout_problems` draws a figure as its PNG file is
drawn and lists what keeps it from reading: a text (tick label, axis label, title, legend entry,
colour-bar label, annotation) reaching outside the canvas, two texts overlapping, or a text
shown under 9 px. The constructed figures below show that the check finds each of these; then
every figure a chapter notebook shows is drawn from the chapter run at its tiny settings
(``tests/tiny_settings``, seconds each) and must have no problem, nor be taller than
:data:`~attention_dynamics.book.plotting.MAX_HEIGHT_RATIO` times its width; the report's claim
figure and the benchmarks page's ratios, drawn from constructed inputs, must have no problem.
"""

import ast
import importlib
import json
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import pandas as pd
import pytest
import torch

from attention_dynamics.book import report
from attention_dynamics.book.benchmark_summary import REGENERATION, goal_summary, ratios_figure
from attention_dynamics.book.claims import REGISTRY
from attention_dynamics.book.formatting import capitalised
from attention_dynamics.book.plotting import (
    FIGURE_INCHES,
    MAX_HEIGHT_RATIO,
    MIN_POINTS,
    PHONE_COLUMN_PX,
    drawn_texts,
    layout_problems,
    thin_log_tick_labels,
    use_book_style,
)
from attention_dynamics.book.results import Results
from attention_dynamics.book.rule_log import CLAIM_NAMES
from attention_dynamics.book.verdicts import (
    BY_DESIGN,
    CONTROL,
    EVIDENCE_AGAINST,
    EVIDENCE_FOR,
    FOR_BUDGET,
)
from attention_dynamics.chapters import CHAPTERS

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "tiny_settings"


@pytest.fixture(autouse=True)
def _book_style():
    use_book_style()
    yield
    plt.close("all")


def _small_figure():
    fig, ax = plt.subplots(figsize=(FIGURE_INCHES, 3))
    ax.plot([0, 1], [0, 1])
    ax.set_xlabel("step")
    ax.set_ylabel("loss (nats)")
    return fig, ax


def test_a_figure_drawn_for_the_column_has_no_problem():
    fig, _ = _small_figure()
    assert layout_problems(fig) == []


def test_the_check_finds_a_label_cut_at_the_edge():
    fig, ax = _small_figure()
    fig.set_layout_engine(None)
    ax.set_position([0.0, 0.2, 0.95, 0.7])  # the tick labels and the y label fall off the left
    problems = layout_problems(fig)
    assert any("'loss (nats)' is cut" in problem for problem in problems)


def test_the_check_finds_two_overlapping_labels():
    fig, ax = _small_figure()
    ax.text(0.5, 0.5, "a note on the data", transform=ax.transAxes)
    ax.text(0.52, 0.5, "another note", transform=ax.transAxes)
    problems = layout_problems(fig)
    assert any("'a note on the data' and 'another note' overlap" in p for p in problems)


def test_the_check_finds_tick_labels_that_overlap():
    fig, ax = _small_figure()
    ax.set_xticks([0, 0.01], ["first", "second"])  # two long labels almost on one spot
    assert any("'first' and 'second' overlap" in p for p in layout_problems(fig))


@pytest.mark.parametrize(("low", "high", "size"), [
    (0.2, 0.9, (2.2, 2.0)),  # within a decade: every minor tick labelled
    (0.3, 3.0, (2.4, 1.5)),  # one major tick among crowded minor ones
    (0.3, 3.0, (1.2, 0.9)),  # too small for any minor label
])
def test_crowded_log_tick_labels_are_thinned_until_none_overlap(low, high, size):
    fig, ax = plt.subplots(figsize=size)
    ax.plot([low, high], [low, high])
    ax.set_xscale("log")
    ax.set_yscale("log")
    fig.tight_layout()
    assert any("overlap" in p for p in layout_problems(fig))  # matplotlib's own labels crowd
    thin_log_tick_labels(fig)
    assert not any("overlap" in p for p in layout_problems(fig))
    labelled = [t for t in ax.get_xticklabels() + ax.get_xticklabels(minor=True)
                if t.get_text() and low <= t.get_position()[0] <= high]
    assert labelled or size[0] < 2  # a panel that fits labels keeps some
    plt.close(fig)


def test_thinning_leaves_linear_axes_and_uncrowded_log_axes_alone():
    fig, (linear, roomy) = plt.subplots(2, 1, figsize=(FIGURE_INCHES, 5))
    linear.set_xticks([0, 0.01], ["first", "second"])  # overlapping, but not on a log axis
    roomy.plot([1, 3000], [1, 3000])
    roomy.set_xscale("log")
    fig.tight_layout()
    before = [t.get_text() for t in roomy.get_xticklabels()]
    thin_log_tick_labels(fig)
    assert any("'first' and 'second' overlap" in p for p in layout_problems(fig))
    assert [t.get_text() for t in roomy.get_xticklabels()] == before
    plt.close(fig)


def test_the_check_finds_text_too_small_on_a_phone_and_too_wide_a_figure():
    fig, ax = _small_figure()
    ax.text(0.1, 0.9, "small print", fontsize=7, transform=ax.transAxes)
    problems = layout_problems(fig)
    assert any("'small print' shows at" in p and f"{PHONE_COLUMN_PX} px column" in p
               for p in problems)
    assert not any("'step' shows at" in p for p in problems)
    wide, ax = plt.subplots(figsize=(11, 3))  # the old width: 10 pt text shrinks under 9 px
    ax.set_xlabel("step", fontsize=MIN_POINTS)
    assert any("'step' shows at" in p for p in layout_problems(wide))


# ---- every chapter figure, from a tiny run ----

@pytest.fixture(scope="module")
def tiny_runs(tmp_path_factory):
    """Each chapter's run at its tiny settings, by chapter (run once, on demand)."""
    runs = {}

    def run_of(chapter):
        if chapter not in runs:
            module = importlib.import_module(f"attention_dynamics.chapters.{chapter}")
            settings = json.loads((TINY / f"{chapter}.json").read_text())
            results = Results(chapter, "quick", "cpu", 0,
                              directory=tmp_path_factory.mktemp(chapter))
            torch.manual_seed(0)
            runs[chapter] = module.run(results, settings, torch.device("cpu"), 0)
        return runs[chapter]

    return run_of


def shown_figures(chapter: str) -> list[str]:
    """The names of the figures the chapter's notebook shows (``show_figure``'s first argument)."""
    tree = ast.parse((ROOT / "notebooks" / f"{chapter}.py").read_text())
    return sorted(node.args[0].value for node in ast.walk(tree)
                  if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "show_figure"
                  and isinstance(node.args[0], ast.Constant))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_figure_a_notebook_shows_is_listed_for_the_check(chapter):
    figures = importlib.import_module(f"attention_dynamics.chapters.{chapter}.figures")
    assert sorted(figures.FIGURES) == shown_figures(chapter)


@pytest.mark.parametrize(("chapter", "name"), [
    (chapter, name) for chapter in CHAPTERS
    for name in importlib.import_module(f"attention_dynamics.chapters.{chapter}.figures").FIGURES
])
def test_every_chapter_figure_reads_on_a_phone_and_a_desktop(tiny_runs, chapter, name):
    figures = importlib.import_module(f"attention_dynamics.chapters.{chapter}.figures")
    fig = figures.FIGURES[name](tiny_runs(chapter))
    assert fig.get_figwidth() <= FIGURE_INCHES + 1e-9
    # no taller than a laptop's screen where the desktop column shows it at full width
    assert fig.get_figheight() <= MAX_HEIGHT_RATIO * fig.get_figwidth() + 1e-9
    thin_log_tick_labels(fig)  # as the page's copy is saved
    assert layout_problems(fig) == []


# ---- the report's claim figure and the benchmarks page's ratios, from constructed inputs ----

def every_claim_ledger():
    """Every registered claim (its real key, chapter and so its real short name), the headline
    rows going through every verdict with each basis that can give it, a control by
    construction as one."""
    claims = list(REGISTRY.values())
    outcomes = [("reproduced", EVIDENCE_FOR), ("partly", EVIDENCE_FOR),
                ("not reproduced", EVIDENCE_AGAINST), ("inconclusive", FOR_BUDGET),
                ("inconclusive", BY_DESIGN)]
    rows = []
    for k, claim in enumerate(claims):
        verdict, basis = outcomes[k % len(outcomes)]
        rows.append({"claim": claim.claim, "verdict": verdict,
                     "basis": CONTROL if claim.control else basis})
    headline = pd.DataFrame(rows, index=range(1, len(claims) + 1))
    return report.Ledger(claims, {}, {}, headline, [None] * len(claims), headline)


def test_the_report_claim_figure_reads_on_a_phone_and_a_desktop():
    ledger = every_claim_ledger()
    fig = report.claims_figure(ledger)
    assert fig.get_figwidth() <= FIGURE_INCHES + 1e-9
    assert layout_problems(fig) == []
    # one panel per chapter, each row labelled by its claim's short name, in the ledger's order
    labels = [tick.get_text() for ax in fig.axes for tick in ax.get_yticklabels()]
    assert labels == [capitalised(CLAIM_NAMES[claim.key]) for claim in ledger.claims]
    assert len(fig.axes) == len({claim.notebook for claim in ledger.claims})
    # every text a reader sees is words: no metric or key with an underscore
    assert not [text.get_text() for text in drawn_texts(fig) if "_" in text.get_text()]


def notebook_ratio_names() -> list[str]:
    """The rows the benchmarks notebook puts in its summary (``rows[...] = ...``), an f-string's
    fields filled with the longest value they take ("transformer", a length of 128)."""
    tree = ast.parse((ROOT / "notebooks" / "benchmarks.py").read_text())
    names = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                and node.value.id == "rows" and isinstance(node.ctx, ast.Store)):
            key = node.slice
            if isinstance(key, ast.Constant):
                names.append(key.value)
            elif isinstance(key, ast.JoinedStr):
                names.append("".join(part.value if isinstance(part, ast.Constant)
                                     else {"arch": "transformer"}.get(part.value.id, "128")
                                     for part in key.values))
    return names


def test_the_benchmark_ratio_figure_reads_on_a_phone_and_a_desktop():
    names = notebook_ratio_names()
    assert len(names) >= 8 and any("transformer step, pinned" in name for name in names)
    measured = {name: 10.0 ** ((k % 7) - 3) for k, name in enumerate(names)}
    summary = goal_summary(measured | {REGENERATION: 800.0})
    fig = ratios_figure(summary)
    assert fig.get_figwidth() <= FIGURE_INCHES + 1e-9
    assert layout_problems(fig) == []
    labels = [tick.get_text().replace("\n", " ") for tick in fig.axes[0].get_yticklabels()]
    assert labels == [name for name in names if name != REGENERATION][::-1]
