"""Verdicts of the reproduction report, decided by stated rules rather than by hand.

Each claim of the papers that the book tests is one :class:`Claim`: where it comes from, the
paper's number as the paper states it, the notebook metric that measures it, the **null or
reference** it is judged against (:class:`Null`: a context-free floor, a uniform-posterior
plateau, an observation-blind predictor, the model at random initialisation, chance, the
other schedule), and a rule. The rules:

- :class:`Bound` — an exact or qualitative claim ("the identity holds", "the MAE is below
  0.05 bits"): *reproduced* when the value is on the stated side of the bound, *not
  reproduced* otherwise.
- :class:`Quantity` — a number the paper reports: *reproduced* within ``rel_tol`` of the
  paper's (relative), *partly* on the paper's side of ``direction`` (the effect exists, its
  size differs), *not reproduced* otherwise.
- :class:`BeatsNull` — the model must do better than its null ("more orthogonal than at
  initialisation", "EM-like ends lower than SGD"): *reproduced* when the value is on the stated
  side of ``factor`` times the null's value.
- :class:`AtNull` — the claim is a failure ("the MLP cannot use its context", "the LSTM stays
  on the plateau"): *reproduced* when the value is within ``abs_tol`` of the null's.

Two things make a run unable to decide, and then the verdict is **inconclusive**, with the
reason in the row:

- the null passes the same :class:`Bound` or :class:`Quantity` (a predictor that ignores what
  the claim is about would be judged reproduced too); for a bound with a ``margin``, when the
  null passes the bound and the value does not clear it by the margin;
- training stopped before the effect could show and the verdict rests on the model not having
  learned (a *not reproduced*, or a failure claim judged *reproduced*): the loss still fell by
  more than a stated fraction over the last tenth of training (:class:`StillLearning`), or the
  run trained on less than a stated fraction of the sequences the authors' own script trains
  on (:class:`ShortBudget`), which leaves room for a plateau that a longer run would leave.

A third makes a claim about a trained model (its keys, its manifold, its dynamics) undecidable
whatever its value: the model did not solve its task (:class:`Solved`).

So *not reproduced* is kept for a run that could have shown the claim and did not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

VERDICTS = ("reproduced", "partly", "not reproduced", "inconclusive")
"""The four verdicts, strongest first."""
REPRODUCED, PARTLY, NOT_REPRODUCED, INCONCLUSIVE = VERDICTS


def _metric(metrics: dict[str, float], name: str, what: str) -> float:
    if name not in metrics:
        raise KeyError(f"{what} reads metric {name!r}, which was not recorded")
    return metrics[name]


@dataclass(frozen=True)
class Null:
    """The null or reference of a claim: a label, and its value where it has one.

    Attributes:
        label: what it is, in words ("context-free floor", "random init", "SGD", ...).
        metric: the metric of the claim's notebook that holds its value; or
        value: a fixed value (e.g. chance); neither for a reference without a number (an exact
            identity is judged against float64 round-off).
    """

    label: str
    metric: str | None = None
    value: float | None = None

    def __post_init__(self):
        if not self.label:
            raise ValueError("label must name the null or reference")
        if self.metric is not None and self.value is not None:
            raise ValueError("give the null's metric or its value, not both")

    def resolve(self, metrics: dict[str, float]) -> float | None:
        """The null's value in this run (``None`` if it has none)."""
        if self.metric is not None:
            return _metric(metrics, self.metric, f"the null {self.label!r}")
        return self.value


@dataclass(frozen=True)
class Bound:
    """Reproduced when ``value <= bound`` (``at_most``) or ``value >= bound`` (not ``at_most``),
    and, with a ``margin``, when it also beats the null by at least ``margin`` (a claim that every
    null must be beaten by a stated amount, not merely matched)."""

    bound: float
    at_most: bool = True
    margin: float | None = None

    def __post_init__(self):
        if self.margin is not None and not self.margin > 0:
            raise ValueError(f"margin must be positive or None; got {self.margin!r}")

    def judge(self, value: float, null: float | None = None) -> str:
        holds = value <= self.bound if self.at_most else value >= self.bound
        if self.margin is not None and null is not None:
            beats = value <= null - self.margin if self.at_most else value >= null + self.margin
            holds = holds and beats
        return REPRODUCED if holds else NOT_REPRODUCED

    def describe(self) -> str:
        text = f"{'≤' if self.at_most else '≥'} {self.bound:g}"
        if self.margin is not None:
            text += f" and {'below' if self.at_most else 'above'} the null by {self.margin:g}"
        return text


@dataclass(frozen=True)
class Quantity:
    """Reproduced within ``rel_tol`` of ``paper``; partly if on ``paper``'s side of ``direction``."""

    paper: float
    rel_tol: float
    direction: float

    def __post_init__(self):
        if not self.rel_tol > 0:
            raise ValueError(f"rel_tol must be positive; got {self.rel_tol!r}")
        if self.paper == self.direction:
            raise ValueError("paper must differ from direction, which separates the effect "
                             "from its absence")

    def judge(self, value: float, null: float | None = None) -> str:
        if abs(value - self.paper) <= self.rel_tol * abs(self.paper):
            return REPRODUCED
        same_side = (value - self.direction) * (self.paper - self.direction) > 0
        return PARTLY if same_side else NOT_REPRODUCED

    def describe(self) -> str:
        return (f"within {self.rel_tol:.0%} of {self.paper:g}; partly if on its side of "
                f"{self.direction:g}")


@dataclass(frozen=True)
class BeatsNull:
    """Reproduced when ``value <= factor * null`` (``at_most``) or ``>=`` (not ``at_most``)."""

    at_most: bool = True
    factor: float = 1.0

    def judge(self, value: float, null: float | None) -> str:
        if null is None:
            raise ValueError("BeatsNull needs a null with a value")
        bound = self.factor * null
        holds = value <= bound if self.at_most else value >= bound
        return REPRODUCED if holds else NOT_REPRODUCED

    def describe(self) -> str:
        factor = "" if self.factor == 1 else f"{self.factor:g} × "
        return f"{'≤' if self.at_most else '≥'} {factor}the null"


@dataclass(frozen=True)
class AtNull:
    """A failure claim: reproduced when ``|value - null| <= abs_tol`` (the model is the null)."""

    abs_tol: float

    def __post_init__(self):
        if not self.abs_tol > 0:
            raise ValueError(f"abs_tol must be positive; got {self.abs_tol!r}")

    def judge(self, value: float, null: float | None) -> str:
        if null is None:
            raise ValueError("AtNull needs a null with a value")
        return REPRODUCED if abs(value - null) <= self.abs_tol else NOT_REPRODUCED

    def describe(self) -> str:
        return f"within {self.abs_tol:g} of the null"


Rule = Bound | Quantity | BeatsNull | AtNull


@dataclass(frozen=True)
class StillLearning:
    """Training counts as unfinished when ``metric`` (the relative fall of the training loss
    over the last tenth of training, recorded by the notebook) exceeds ``max_fall``."""

    metric: str
    max_fall: float = 0.02

    def reason(self, metrics: dict[str, float]) -> str | None:
        """Why the run cannot decide, or ``None`` if training had flattened."""
        fall = _metric(metrics, self.metric, "the still-learning check")
        if fall > self.max_fall:
            return (f"still learning: the loss fell {fall:.1%} over the last tenth of training "
                    f"(more than {self.max_fall:.0%})")
        return None


@dataclass(frozen=True)
class Solved:
    """A claim about a *trained* model (its geometry, its dynamics) needs a model that solved
    the task: the run counts as unsolved when ``metric`` (an error, e.g. the entropy MAE in
    bits) exceeds ``max_error``, and then no verdict on the claim is drawn.

    The same check guards any claim that needs the run to reach a regime first (attention that
    has left uniform, say): ``unmet`` then says, in words, what the run did not reach.
    """

    metric: str
    max_error: float
    unmet: str = "the model did not solve the task"

    def reason(self, metrics: dict[str, float]) -> str | None:
        """Why the run cannot decide, or ``None`` if the model solved the task."""
        error = _metric(metrics, self.metric, "the solved-task check")
        if error > self.max_error:
            return f"{self.unmet} ({self.metric} = {error:.3g}, above {self.max_error:g})"
        return None


@dataclass(frozen=True)
class ShortBudget:
    """Training counts as too short when the run's training sequences (``metric``: steps times
    batch size, recorded by the notebook) are fewer than ``min_fraction`` of ``authors``, the
    sequences the authors' own training script goes through (with repeats) for the same claim.

    Attributes:
        metric: the notebook metric holding the run's number of training sequences.
        authors: the authors' number of training sequences.
        source: the authors' script or configuration that sets it (quoted in the reason).
        min_fraction: the smallest share of the authors' budget that can decide a failure.
    """

    metric: str
    authors: float
    source: str
    min_fraction: float = 0.2

    def __post_init__(self):
        if not self.authors > 0:
            raise ValueError(f"authors must be a positive number of sequences; got "
                             f"{self.authors!r}")
        if not 0 < self.min_fraction <= 1:
            raise ValueError(f"min_fraction must be in (0, 1]; got {self.min_fraction!r}")

    def reason(self, metrics: dict[str, float]) -> str | None:
        """Why the run cannot decide, or ``None`` if its budget is large enough."""
        ours = _metric(metrics, self.metric, "the budget check")
        share = ours / self.authors
        if share < self.min_fraction:
            return (f"short budget: trained on {ours:,.0f} sequences, {share:.1%} of the "
                    f"{self.authors:,.0f} of {self.source}; a failure counts from "
                    f"{self.min_fraction:.0%}")
        return None


def decide(rule: Rule, value: float, null: Null, metrics: dict[str, float],
           still_learning: StillLearning | None = None,
           solved: Solved | None = None,
           budget: ShortBudget | None = None) -> tuple[str, str]:
    """The verdict of ``value`` under ``rule`` against ``null``, and the reason for it.

    Args:
        rule: how the value is judged.
        value: the measured number.
        null: the claim's null or reference.
        metrics: every number of the claim's notebook (for the null's and the check's values).
        still_learning: the check that training had flattened, where the claim needs it.
        solved: the check that the model solved its task, for claims about a trained model;
            an unsolved run is inconclusive whatever the value.
        budget: the check that the run trained long enough, against the authors' budget,
            where the claim is about what training reaches.

    Returns:
        ``(verdict, reason)``, the verdict one of :data:`VERDICTS`; the reason is empty unless
        the verdict is inconclusive.
    """
    null_value = null.resolve(metrics)
    unsolved = solved.reason(metrics) if solved is not None else None
    if unsolved:
        return INCONCLUSIVE, unsolved
    unfinished = " and ".join(
        reason for check in (still_learning, budget) if check is not None
        for reason in [check.reason(metrics)] if reason)
    verdict = rule.judge(value, null_value)
    null_passes = (isinstance(rule, Bound | Quantity) and null_value is not None
                   and rule.judge(null_value) in (REPRODUCED, PARTLY))
    # without a margin a pass that the null shares decides nothing; with one, a value that does
    # not clear a null already past the bound cannot be told from that null
    undecided = (verdict in (REPRODUCED, PARTLY) if getattr(rule, "margin", None) is None
                 else verdict == NOT_REPRODUCED)
    if null_passes and undecided:
        return INCONCLUSIVE, f"the null ({null.label}, {null_value:.3g}) passes the same rule"
    rests_on_not_learning = verdict == NOT_REPRODUCED or (isinstance(rule, AtNull)
                                                         and verdict == REPRODUCED)
    if unfinished and rests_on_not_learning:
        return INCONCLUSIVE, unfinished
    return verdict, ""


@dataclass(frozen=True)
class Claim:
    """One tested claim: its text, source, the paper's number, its null, and how ours is judged."""

    claim: str
    source: str
    paper: str
    notebook: str
    metric: str
    null: Null
    rule: Rule
    still_learning: StillLearning | None = None
    solved: Solved | None = None
    budget: ShortBudget | None = None

    def row(self, results: dict[str, dict]) -> dict:
        """The report's row for this claim, from the results files (keyed by notebook).

        A missing notebook or metric is an error: every row must come from this build's run.
        """
        if self.notebook not in results:
            raise KeyError(f"claim {self.claim!r} needs notebook {self.notebook!r}, which wrote "
                           "no results file in this build")
        content = results[self.notebook]
        metrics = content["metrics"]
        value = _metric(metrics, self.metric, f"claim {self.claim!r} of {self.notebook!r}")
        if not math.isfinite(value):
            raise ValueError(f"metric {self.metric!r} of {self.notebook!r} is not finite")
        verdict, reason = decide(self.rule, value, self.null, metrics, self.still_learning,
                                 self.solved, self.budget)
        null_value = self.null.resolve(metrics)
        return {
            "claim": self.claim,
            "source": self.source,
            "paper": self.paper,
            "null": self.null.label,
            "null value": null_value,
            "ours": value,
            "rule": self.rule.describe(),
            "verdict": verdict,
            "reason": reason,
            "profile": content["profile"],
            "device": content["device"],
        }
