"""The notebook pages' tables (:mod:`attention_dynamics.book.tables`): labels in words, no
``NaN``, tall tables folded; and every chapter notebook shows its tables through it."""

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attention_dynamics.book.tables import (
    FOLD_ROWS,
    MISSING,
    WRAP_CLASS,
    counts_rows,
    fold,
    in_words,
    reader_frame,
    reader_table,
)
from attention_dynamics.chapters.content_routing.tables import results_table

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("label", "words"), [
    ("heldout_gap_to_bayes_nats", "held-out gap to Bayes (nats)"),
    ("bijection_entropy_mae_keys_bits", "bijection entropy MAE keys (bits)"),
    ("n_seeds", "number of seeds"),
    ("plain_step_s", "plain step (s)"),
    ("value_seed3", "value seed 3"),
    ("hmm", "HMM"),
    ("arch", "architecture"),
    ("trained", "trained"),
    ("entropy MAE, mean curve (bits)", "entropy MAE, mean curve (bits)"),
    (2024, 2024),
])
def test_labels_in_words(label, words):
    assert in_words(label) == words


def _table():
    index = pd.MultiIndex.from_tuples([("sgd", "seed_0"), ("em", "seed_0")],
                                      names=["schedule_name", "run"])
    return pd.DataFrame({"final_loss_nats": [0.5, np.nan], "steps_to_half": [12, 7],
                         "note": ["ok", None]}, index=index)


def test_a_table_shows_words_no_nan_and_reader_numbers():
    shown = reader_frame(_table())
    labels = [*shown.columns, *shown.index.names, *(v for level in shown.index.levels
                                                    for v in level)]
    assert not any("_" in str(label) for label in labels)
    assert list(shown.columns) == ["final loss (nats)", "steps to half", "note"]
    assert shown.index.names == ["schedule name", "run"]
    assert shown.loc[("EM", "seed 0"), "final loss (nats)"] == MISSING
    assert shown.loc[("EM", "seed 0"), "note"] == MISSING
    assert shown.loc[("SGD", "seed 0"), "steps to half"] == "12"
    html = reader_table(_table())._repr_html_()
    assert "NaN" not in html and "None" not in html and "<details" not in html
    assert "NaN" not in repr(reader_table(_table()))


def test_a_series_becomes_a_one_column_table():
    shown = reader_frame(pd.Series({"row_sum_max_abs": 1.2e-16, "pairs": 36.0}))
    assert list(shown.columns) == ["value"]
    assert list(shown.index) == ["row sum max absolute", "pairs"]
    assert list(shown["value"]) == ["1.20 × 10⁻¹⁶", "36"]


def test_a_table_taller_than_a_screen_is_folded():
    short = reader_table(pd.DataFrame({"a": range(FOLD_ROWS)}))
    assert not short.folded and "<details" not in short._repr_html_()
    tall = reader_table(pd.DataFrame({"a": range(FOLD_ROWS + 1)}), "every metric")
    assert tall.folded
    html = tall._repr_html_()
    assert html.startswith('<details class="table-fold"><summary>Show every metric (13 rows)')
    assert html.rstrip().endswith("</details>")
    with pytest.raises(ValueError, match="table must be"):
        reader_table([1, 2])


def test_an_index_that_only_counts_the_rows_is_left_out():
    numbered = reader_table(pd.DataFrame({"claim": ["a", "b"], "seeds": [6, 8]}))
    html = numbered._repr_html_()
    assert "<th>0</th>" not in html and "<th>claim</th>" in html
    assert not numbered.__repr__().lstrip().startswith("0")
    # an index that says something stays: labels, seeds counted from 1, a named count
    for index in (pd.Index(["sgd", "em"]), pd.Index([1, 2]), pd.RangeIndex(2, name="seed")):
        shown = reader_table(pd.DataFrame({"loss": [1.0, 2.0]}, index=index))._repr_html_()
        assert "<tbody>\n    <tr>\n      <th>" in shown, index
    assert counts_rows(pd.RangeIndex(3)) and counts_rows(pd.Index([0, 1, 2]))
    assert not counts_rows(pd.Index([2, 0, 1])) and not counts_rows(pd.Index(["0", "1"]))
    assert not counts_rows(pd.MultiIndex.from_tuples([(0, 0), (1, 1)]))


def test_a_fold_says_what_it_holds_and_a_table_may_let_its_cells_wrap():
    folded = fold("<table></table>", "Show a <b> table")
    assert folded.startswith('<details class="table-fold"><summary>Show a &lt;b&gt; table')
    assert folded.endswith("</details>")
    with pytest.raises(ValueError, match="summary"):
        fold("<table></table>", " ")
    table = pd.DataFrame({"a": ["1 2"]})
    assert f'class="dataframe reader-table {WRAP_CLASS}"' in reader_table(
        table, wrap=True)._repr_html_()
    assert WRAP_CLASS not in reader_table(table)._repr_html_()


def test_the_scores_table_turns_to_a_row_per_task_and_model():
    scores = pd.DataFrame({"bijection MAE (bits)": ["0.1 [0.1, 0.2]", "0.3 [0.2, 0.4]"],
                           "Paper I: bijection": ["0.01", "not reported"],
                           "recall accuracy": ["0.9 [0.8, 1.0]", "0.2 [0.1, 0.3]"],
                           "Paper I: recall": ["100%", "0.5%"]}, index=["transformer", "LSTM"])
    turned = results_table(scores)
    assert list(turned.columns) == ["this build", "Paper I"]
    assert turned.index.names == ["task and measure", "model"]
    assert list(turned.index) == [("bijection MAE (bits)", "transformer"),
                                  ("bijection MAE (bits)", "LSTM"),
                                  ("recall accuracy", "transformer"), ("recall accuracy", "LSTM")]
    # a line may break before the seeds' range, not inside it
    assert turned.loc[("recall accuracy", "LSTM")].tolist() == ["0.2 [0.1,\u00a00.3]", "0.5%"]
    with pytest.raises(ValueError, match="Paper I's"):
        results_table(scores[["bijection MAE (bits)", "recall accuracy"]])


NOTEBOOKS = ("score_gradient", "value_update", "em_reading", "manifold_formation",
             "content_routing", "benchmarks", "execution_report")


def _shown_expressions(path: Path):
    """The expression that ends each code cell of a jupytext notebook (what the cell shows)."""
    for cell in path.read_text().split("\n# %%"):
        if cell.lstrip().startswith("[markdown]") or cell.startswith(" [markdown]"):
            continue
        code = cell.split("\n", 1)[1] if "\n" in cell else ""
        try:
            body = ast.parse(code).body
        except SyntaxError:
            continue
        if body and isinstance(body[-1], ast.Expr):
            yield ast.unparse(body[-1].value)


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_every_table_a_notebook_shows_goes_through_reader_table(notebook):
    """A cell that ends with an expression shows it: in these notebooks that is a table, which
    must come as ``reader_table(...)``, or a call that shows a figure, text or nothing."""
    allowed = ("reader_table(", "show_figure(", "print(", "glue", "display(")
    for shown in _shown_expressions(ROOT / "notebooks" / f"{notebook}.py"):
        assert shown.startswith(allowed), shown
