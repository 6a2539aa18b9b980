"""Tables as a notebook page shows them to a reader: labelled in words, no ``NaN``, and folded
when taller than a screen.

:func:`reader_table` takes a pandas table (or series) and returns what a notebook cell ends
with to show it: every row and column label and level name that is a code identifier
(``heldout_gap_to_bayes_bits``) written in words (``held-out gap to Bayes (bits)``, by
:func:`in_words`), every number written by
:func:`~attention_dynamics.book.formatting.format_number` and every missing value as a dash; a
table of more than :data:`FOLD_ROWS` rows is folded in a ``<details>`` block that opens on a
click (the book's PDF opens every fold), under a line that says what it holds (:func:`fold`,
which folds any HTML so); an index that only counts the rows (0, 1, 2, ... without a name) is
left out, since it tells the reader nothing.
"""

from __future__ import annotations

import html
import math
import numbers
import re

import pandas as pd

from attention_dynamics.book.formatting import format_number

FOLD_ROWS = 12
"""The most rows a table shows unfolded, about a phone screen's height (a row of a notebook
page's table is some 30-40 px high, more where a label wraps)."""

MISSING = "—"
"""What a missing value (``NaN``, ``None``) shows as."""

WORDS = {
    "bayes": "Bayes", "heldout": "held-out", "mae": "MAE", "kl": "KL", "sgd": "SGD",
    "em": "EM", "hmm": "HMM", "ce": "CE", "tv": "TV", "mlp": "MLP", "lstm": "LSTM",
    "pca": "PCA", "qk": "QK", "ssm": "SSM", "r2": "R²", "lr": "learning rate",
    "init": "initialisation", "abs": "absolute", "vs": "against", "pc1": "PC1", "pc2": "PC2",
    "mamba": "Mamba", "nll": "NLL", "std": "standard deviation", "w": "W", "frac": "fraction",
    "arch": "architecture",
}
"""How a word of an identifier is written in a label (the rest as they are)."""

UNITS = {"bits": "bits", "nats": "nats", "s": "s", "seconds": "s", "ms": "ms"}
"""An identifier's last word that is a unit, and how the label writes it (in brackets)."""

_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)+$")
_SEED = re.compile(r"^seed(\d+)$")


def in_words(label):
    """``label`` written for a reader: an identifier with underscores (``row_sum_max_abs``)
    as words (``row sum max absolute``), each word as :data:`WORDS` writes it, its last word
    in brackets where it is a unit (``entropy_mae_bits``: ``entropy MAE (bits)``), ``n_`` as
    *number of*; a word of :data:`WORDS` alone as it writes it (``hmm``: ``HMM``); anything
    else (a phrase, a number) as it is.

    >>> in_words("heldout_gap_to_bayes_nats")
    'held-out gap to Bayes (nats)'
    >>> in_words("n_seeds"), in_words("trained"), in_words(42)
    ('number of seeds', 'trained', 42)
    """
    if isinstance(label, str) and label in WORDS:  # one word: hmm, sgd, init...
        return WORDS[label]
    if not isinstance(label, str) or not _IDENTIFIER.match(label):
        return label
    words = label.split("_")
    unit = UNITS.get(words[-1]) if len(words) > 1 else None
    if unit:
        words = words[:-1]
    if words[0] == "n" and len(words) > 1:
        words = ["number", "of", *words[1:]]
    written = []
    for word in words:
        seed = _SEED.match(word)
        written.append(f"seed {seed[1]}" if seed else WORDS.get(word.lower(), word))
    text = " ".join(written)
    return f"{text} ({unit})" if unit else text


def _cell(value, digits: int):
    """One cell as shown: numbers by ``format_number``, missing values as :data:`MISSING`."""
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isnan(number):
            return MISSING
        return format_number(int(value) if isinstance(value, numbers.Integral) else number,
                             digits)
    if isinstance(value, str) and value.strip().lower() in ("nan", "none", "<na>"):
        return MISSING
    return value


def _relabel(index: pd.Index) -> pd.Index:
    """``index`` with its labels and level names in words."""
    if isinstance(index, pd.MultiIndex):
        return index.set_levels([level.map(in_words) for level in index.levels]).set_names(
            [in_words(name) for name in index.names])
    return index.map(in_words).rename(in_words(index.name))


def reader_frame(table: pd.DataFrame | pd.Series, digits: int = 3) -> pd.DataFrame:
    """``table`` as a reader sees it: labels and level names in words (:func:`in_words`),
    numbers to ``digits`` significant figures (integers whole), missing values as a dash;
    a series becomes a one-column table (its name, or ``value``, heading the column)."""
    if isinstance(table, pd.Series):
        table = table.to_frame(table.name if table.name is not None else "value")
    if not isinstance(table, pd.DataFrame):
        raise ValueError(f"table must be a pandas DataFrame or Series; got {type(table).__name__}")
    if not isinstance(digits, int) or isinstance(digits, bool) or digits < 1:
        raise ValueError(f"digits must be a positive int; got {digits!r}")
    shown = table.astype(object).map(lambda value: _cell(value, digits))
    shown.index = _relabel(table.index)
    shown.columns = _relabel(table.columns)
    return shown


def fold(content: str, summary: str) -> str:
    """``content`` (HTML) folded in a ``<details>`` block that opens on a click, under the line
    ``summary`` (plain words, escaped here)."""
    if not summary.strip():
        raise ValueError("summary must say what the fold holds")
    return (f'<details class="table-fold"><summary>{html.escape(summary)}</summary>'
            f"\n{content}\n</details>")


def counts_rows(index: pd.Index) -> bool:
    """Whether ``index`` only counts the rows: one unnamed level holding 0, 1, 2, ... in order
    (pandas' default), which a reader's table leaves out."""
    return (not isinstance(index, pd.MultiIndex) and index.name is None
            and pd.api.types.is_integer_dtype(index.dtype)
            and list(index) == list(range(len(index))))


WRAP_CLASS = "wrap-cells"
"""The class of a table whose cells may wrap at their spaces on a narrow screen (the book's
other tables keep each cell on one line and scroll); a cell that must stay whole holds
non-breaking spaces."""


class ReaderTable:
    """A table ready to show in a notebook (:func:`reader_table`): ``frame`` is the table as
    shown, ``summary`` the line over a folded table (``None``: not folded), ``index`` whether
    its row labels show, ``wrap`` whether its cells may wrap (:data:`WRAP_CLASS`)."""

    def __init__(self, frame: pd.DataFrame, summary: str | None, index: bool = True,
                 wrap: bool = False):
        self.frame = frame
        self.summary = summary
        self.index = index
        self.wrap = wrap

    @property
    def folded(self) -> bool:
        """Whether the table shows folded."""
        return self.summary is not None

    def _repr_html_(self) -> str:
        classes = "reader-table" + (f" {WRAP_CLASS}" if self.wrap else "")
        table = self.frame.to_html(classes=classes, na_rep=MISSING, border=0, index=self.index)
        return fold(table, self.summary) if self.folded else table

    def __repr__(self) -> str:
        text = self.frame.to_string(na_rep=MISSING, index=self.index)
        return f"{self.summary}\n{text}" if self.folded else text


def reader_table(table: pd.DataFrame | pd.Series, what: str | None = None, digits: int = 3,
                 fold_rows: int = FOLD_ROWS, wrap: bool = False) -> ReaderTable:
    """``table`` for a notebook page: :func:`reader_frame` of it, folded under a line that
    opens it when it has more than ``fold_rows`` rows (the line says ``what`` it holds, and
    how many rows: "Show the table (40 rows)" without ``what``), without its index where that
    only counts the rows (:func:`counts_rows`); ``wrap`` lets its cells wrap on a narrow
    screen (:data:`WRAP_CLASS`)."""
    frame = reader_frame(table, digits)
    index = not (isinstance(table, pd.DataFrame) and counts_rows(table.index))
    if len(frame) <= fold_rows:
        return ReaderTable(frame, None, index, wrap)
    holds = what or "the table"
    return ReaderTable(frame, f"Show {holds} ({len(frame)} rows)", index, wrap)
