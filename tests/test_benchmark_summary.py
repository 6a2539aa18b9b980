"""The benchmarks page's summary: goals met or missed as the bounds say, drawn as they are."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.colors as mcolors  # noqa: E402
import pytest  # noqa: E402

from attention_dynamics.book.benchmark_summary import (  # noqa: E402
    COLOURS,
    GOALS,
    REGENERATION,
    goal_summary,
    ratios_figure,
)
from attention_dynamics.book.plotting import FIGURE_INCHES  # noqa: E402

OVERHEAD = "diagnostics overhead (diagnosed / plain step)"
SPEEDUP = "diagnostics vs per-score autograd"


def test_each_row_meets_or_misses_its_goal_by_its_bound():
    measured = {OVERHEAD: 1.2, SPEEDUP: 40.0, "a ratio without a goal": 3.0, REGENERATION: 901.0}
    summary = goal_summary(measured)
    assert list(summary.index) == list(measured)
    assert summary["meets the goal"].to_dict() == {
        OVERHEAD: "yes",                 # at most 1.3
        SPEEDUP: "no",                   # at least 50
        "a ratio without a goal": "",
        REGENERATION: "no",              # at most 900 s
    }
    assert summary.loc[OVERHEAD, "goal"] == GOALS[OVERHEAD].describe()
    assert summary.loc["a ratio without a goal", "goal"] == ""
    assert goal_summary({OVERHEAD: 1.31}).loc[OVERHEAD, "meets the goal"] == "no"


def test_the_figure_draws_each_ratio_once_coloured_by_its_answer_and_leaves_out_the_time():
    summary = goal_summary({OVERHEAD: 1.2, SPEEDUP: 40.0, "no goal": 3.0, REGENERATION: 800.0})
    fig = ratios_figure(summary)
    ax = fig.axes[0]
    bars = ax.patches
    assert len(bars) == 3  # the regeneration time is seconds, not a ratio
    labels = [label.get_text() for label in ax.get_yticklabels()]
    # the first row on top, each name wrapped for the narrow column
    assert labels == ["no goal", "diagnostics vs per-score\nautograd",
                      "diagnostics overhead\n(diagnosed / plain step)"]
    labels = [label.replace("\n", " ") for label in labels]
    widths = {label: bar.get_width() for label, bar in zip(labels, bars, strict=True)}
    assert widths == {"no goal": 3.0, SPEEDUP: 40.0, OVERHEAD: 1.2}
    colours = [mcolors.to_hex(bar.get_facecolor()) for bar in bars]
    assert colours == [mcolors.to_hex(COLOURS[key]) for key in ("", "no", "yes")]
    assert ax.get_xscale() == "log"
    assert fig.get_figwidth() <= FIGURE_INCHES  # drawn for the narrow column


def test_a_summary_without_ratios_is_refused():
    with pytest.raises(ValueError, match="no ratio"):
        ratios_figure(goal_summary({REGENERATION: 800.0}))
