"""Each chapter's metrics, declared in one place: name, unit and a line of meaning.

A chapter's ``chapters/<chapter>/metrics.py`` holds ``METRICS``, a tuple of :class:`Metric`.
A declaration may stand for several recorded names: ``{placeholder}`` fields in its name take
every value listed for them (``"{schedule}_final_loss"`` with ``schedule=("sgd", "em")``), and
a metric recorded over seeds (``Results.record_spread`` or ``Results.record_seeds``) also
covers the names those methods derive (``_min``, ``_max``, ``_seed<i>``, ``_n_seeds``).

:func:`describe` says in words what a recorded name is; :func:`undeclared` lists the recorded
names that no declaration covers (a test requires none, for every chapter). No part of a run
imports a chapter's metrics module, so a reworded meaning never stales a number.
"""

from __future__ import annotations

import importlib
import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from attention_dynamics.chapters import CHAPTERS
from attention_dynamics.validation import check_choice

UNITS = ("bits", "nats", "steps", "sequences", "seconds", "count", "share", "ratio", "cosine",
         "correlation", "r2", "accuracy", "flag", "setting", "1")
"""The units a declaration may give, each with its meaning; information (``bits``, ``nats``), training time
(``steps``, ``sequences``, ``seconds``), ``count`` (of seeds, runs, positions...), ``share``
(a fraction from 0 to 1), ``ratio`` (of two like quantities), ``cosine``, ``correlation``
(Pearson or Spearman), ``r2`` (a coefficient of determination), ``accuracy`` (a share of
correct predictions), ``flag`` (0 or 1), ``setting`` (a value the run was given, in the unit
its meaning names) and ``1`` (another dimensionless number, the meaning says which)."""

KINDS = ("single", "spread", "seeds")
"""How a metric is recorded, one of ``single`` (one number), ``spread`` (``Results.record_spread``:
the mean over seeds with ``_min``, ``_max``, ``_seed<i>`` and ``_n_seeds``) or ``seeds``
(``Results.record_seeds``: ``_seed<i>`` and ``_n_seeds``, and the name itself where the run
records it too)."""

_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_SEED_SUFFIX = re.compile(r"^(?P<base>.+)_seed(?P<index>\d+)$")


@dataclass(frozen=True)
class Metric:
    """One declared metric, or a family of them.

    Attributes:
        name: the recorded name, with ``{placeholder}`` fields for a family.
        unit: one of :data:`UNITS`.
        meaning: one line saying what the number is, for a reader of the report.
        kind: one of :data:`KINDS`.
        values: every placeholder's values, by placeholder.
    """

    name: str
    unit: str
    meaning: str
    kind: str = "single"
    values: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_choice("unit", self.unit, UNITS)
        check_choice("kind", self.kind, KINDS)
        if not self.meaning.strip() or "\n" in self.meaning:
            raise ValueError(f"meaning of {self.name!r} must be one non-empty line")
        fields = set(_PLACEHOLDER.findall(self.name))
        if fields != set(self.values):
            raise ValueError(f"values of {self.name!r} must list exactly its placeholders "
                             f"{sorted(fields)}; got {sorted(self.values)}")

    def names(self) -> list[str]:
        """The recorded names this declaration stands for, without the seed-derived ones."""
        fields = list(self.values)
        return [self.name.format(**dict(zip(fields, chosen, strict=True)))
                for chosen in itertools.product(*(self.values[f] for f in fields))]


def chapter_metrics(chapter: str) -> tuple[Metric, ...]:
    """``METRICS`` of ``chapter``'s metrics module."""
    check_choice("chapter", chapter, CHAPTERS)
    return importlib.import_module(f"attention_dynamics.chapters.{chapter}.metrics").METRICS


def declared_names(metrics: Iterable[Metric]) -> dict[str, Metric]:
    """Every name the declarations stand for, mapped to its declaration; a name declared twice
    is an error."""
    found: dict[str, Metric] = {}
    for metric in metrics:
        for name in metric.names():
            if name in found:
                raise ValueError(f"metric {name!r} is declared twice ({found[name].name!r} and "
                                 f"{metric.name!r})")
            found[name] = metric
    return found


def describe(chapter: str, name: str) -> str | None:
    """What the recorded ``name`` of ``chapter`` is, in words with its unit (``None``: not
    declared).

    >>> describe("em_reading", "not_a_metric") is None
    True
    """
    declared = declared_names(chapter_metrics(chapter))
    return _describe(declared, name)


def _describe(declared: Mapping[str, Metric], name: str) -> str | None:
    """:func:`describe` against ``declared`` names."""
    if name in declared:
        metric = declared[name]
        return f"{metric.meaning} ({_unit_words(metric)})"
    seed = _SEED_SUFFIX.match(name)
    if seed and seed["base"] in declared and declared[seed["base"]].kind != "single":
        metric = declared[seed["base"]]
        return f"{metric.meaning}, seed {int(seed['index']) + 1} alone ({_unit_words(metric)})"
    for suffix, words in (("_n_seeds", "the number of seeds of: "),
                          ("_min", "the lowest seed's value of: "),
                          ("_max", "the highest seed's value of: ")):
        base = name.removesuffix(suffix)
        if base != name and base in declared:
            metric = declared[base]
            if suffix == "_n_seeds" and metric.kind != "single":
                return words + _in_a_sentence(metric.meaning)
            if metric.kind == "spread" and suffix != "_n_seeds":
                return f"{words}{_in_a_sentence(metric.meaning)} ({_unit_words(metric)})"
    return None


def find(name: str) -> dict[str, str]:
    """Every chapter that declares the recorded ``name``, with what it is there (by chapter,
    in the book's order; empty where none does)."""
    found = {chapter: describe(chapter, name) for chapter in CHAPTERS}
    return {chapter: words for chapter, words in found.items() if words is not None}


def undeclared(chapter: str, names: Iterable[str]) -> list[str]:
    """The recorded ``names`` of ``chapter`` that no declaration covers, sorted."""
    declared = declared_names(chapter_metrics(chapter))
    return sorted(name for name in names if _describe(declared, name) is None)


def _in_a_sentence(meaning: str) -> str:
    """``meaning`` with its first letter in lower case, unless its first word is an acronym.

    >>> _in_a_sentence("Entropy of the next symbol"), _in_a_sentence("MAE of the model")
    ('entropy of the next symbol', 'MAE of the model')
    """
    first = meaning.split(" ", 1)[0]
    return meaning if first[1:2].isupper() else meaning[:1].lower() + meaning[1:]


def _unit_words(metric: Metric) -> str:
    """A metric's unit as the report writes it."""
    return {"1": "dimensionless", "r2": "R²", "flag": "0 or 1"}.get(metric.unit, metric.unit)
