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
- :class:`ClosesGap` — the model must close a stated share of the gap from its null to the
  optimum ("matches the Bayes entropy": 95 % of the context-free floor's MAE closed):
  *reproduced* when it does.
- :class:`AtNull` — the claim is a failure ("the MLP cannot use its context", "the LSTM stays
  on the plateau"): *reproduced* when the value is within a tolerance of the null's (fixed, or
  a share of the null's distance to the optimum: it closed at most that much of the gap).

Two things make a run unable to decide, and then the verdict is **inconclusive**, with the
reason in the row:

- the null passes the same :class:`Bound` or :class:`Quantity` (a predictor that ignores what
  the claim is about would be judged reproduced too); for a bound with a ``margin``, when the
  null passes the bound and the value does not clear it by the margin;
- training stopped before the effect could show and the verdict rests on the model not having
  learned (a *not reproduced*, or a failure claim judged *reproduced*): the loss still fell by
  more than a stated fraction over the last tenth of training (:class:`StillLearning`), or the
  run trained on less than a stated fraction of the sequences the authors' own script trains
  on (:class:`ShortBudget`), which leaves room for a plateau that a longer run would leave, or,
  for a failure, fewer steps than several times those a reference architecture needed to solve
  the same task in the same run (:class:`Outlasted`).

A third makes a claim about a trained model (its keys, its manifold, its dynamics) undecidable
whatever its value: the model did not solve its task (:class:`Solved`).

So *not reproduced* is kept for a run that could have shown the claim and did not.

A fifth rule counts seeds: :class:`SeedShare` — the claim's number is the share of seeds that
show the effect; *reproduced* when the exact (Clopper–Pearson) interval of that share lies above
``p0``, *not reproduced* when it lies below, and inconclusive while too few seeds leave ``p0``
inside it.

A sixth takes a null that is a spread: :class:`OutsideNullRange` — the same statistic over many
draws of the null (independent initialisations, say) gives a range; a value beyond it on the
claimed side is *reproduced*, beyond it on the other side *not reproduced*, and inside it
inconclusive, since the statistic cannot tell the run from its null.

A seventh judges a value by its interval: :class:`IntervalBound` — a :class:`Bound` that holds
when the whole interval is on the stated side, fails when the whole interval is on the other,
and decides nothing while the interval holds the bound.

Every decision (:class:`Decision`, from :func:`decision`) also has a **basis**, one of
:data:`BASES`: *evidence for* (reproduced, partly), *evidence against* (not reproduced),
*undecidable by design* (the null passes the same rule, the value lies inside a null's range,
the claim says in words why its task cannot decide it — ``Claim.undecidable`` — or the claim's own
setting never reaches the regime it needs — ``Solved.by_design``), *undecided for budget* (the run
did not reach the regime: unsolved, still learning, a short budget, too few seeds, an interval
that a larger sample would narrow); a rule that can leave a value undecided names its basis
(``undecided_basis``); and a sentence saying **what
would change the verdict** (the value that would flip it, the training or the seeds that would
decide it, or another task). :func:`tally` counts rows per basis. A row whose outcome the
construction of its model fixes (an MLP that mixes no positions cannot use the context, whatever
its training) is a *control by construction* (``Claim.control``): it keeps its verdict, which
checks the set-up, but rests on that basis and is not counted among the claims.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import re
import statistics
from dataclasses import dataclass
from typing import ClassVar

from attention_dynamics.book.formatting import written
from attention_dynamics.book.statistics import binomial_tail, check_level, clopper_pearson

VERDICTS = ("reproduced", "partly", "not reproduced", "inconclusive")
"""The four verdicts, strongest first."""
REPRODUCED, PARTLY, NOT_REPRODUCED, INCONCLUSIVE = VERDICTS

BASES = ("evidence for", "evidence against", "undecidable by design", "undecided for budget",
         "control by construction")
"""The grounds a verdict rests on, in order — evidence for the claim (reproduced, partly), evidence
against it (not reproduced), a task or protocol that cannot decide it whatever the run (inconclusive: the null
passes the same rule, or the claim is undecidable on its task), a run that did not reach the regime
that decides it (inconclusive: unsolved, still learning, a short budget, too few seeds), and a
control whose outcome the construction of its model fixes (``Claim.control``): it checks the
set-up, not the papers' mechanism, and stays out of the tally of claims."""
EVIDENCE_FOR, EVIDENCE_AGAINST, BY_DESIGN, FOR_BUDGET, CONTROL = BASES

DIRECTIONAL_LEVEL = 0.90
"""The two-sided Clopper–Pearson level for a share of seeds showing a directional effect (its
ends are one-sided 95 % bounds, the seeds' sign test at the 5 % level)."""

NULL_PASSES_CHANGE = "a task or protocol that separates the claim from its null"
"""What would decide a claim whose null passes the same rule."""
UNDECIDABLE_CHANGE = "another task (the claim cannot be decided on this one)"
"""What would decide a claim that its task cannot decide by design."""


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

    def judge(self, value: float, null: float | None = None,
              metrics: dict[str, float] | None = None) -> str:
        """The verdict of ``value`` against the null's value ``null`` (``metrics`` unused)."""
        holds = value <= self.bound if self.at_most else value >= self.bound
        if self.margin is not None and null is not None:
            beats = value <= null - self.margin if self.at_most else value >= null + self.margin
            holds = holds and beats
        return REPRODUCED if holds else NOT_REPRODUCED

    def threshold(self, null: float | None = None) -> float:
        """The value where the verdict flips: the bound, or with a margin the stricter of the
        bound and the null's value moved past by the margin."""
        if self.margin is None or null is None:
            return self.bound
        if self.at_most:
            return min(self.bound, null - self.margin)
        return max(self.bound, null + self.margin)

    def would_change(self, verdict: str, value: float, null: float | None = None,
                     metrics: dict[str, float] | None = None) -> str:
        """What value would flip ``verdict`` (reproduced or not reproduced), in words."""
        limit = self.threshold(null)
        holds = verdict == REPRODUCED
        side = ("above" if holds else "at most") if self.at_most else (
            "below" if holds else "at least")
        text = f"a value {side} {limit:.3g}"
        if self.margin is not None and null is not None:
            away = "below" if self.at_most else "above"
            if holds:
                text += (f" ({side} {self.bound:.3g}, or less than {self.margin:.3g} {away} the "
                         f"null's {null:.3g})")
            else:
                text += (f" ({side} {self.bound:.3g} and {self.margin:.3g} {away} the null's "
                         f"{null:.3g})")
        return text

    judge_point = judge  # a point is what this rule judges anyway

    def lower_is_better(self, null: float | None = None) -> bool:
        """Whether the claim wants its number below the null (an error, a fall) rather than
        above it; ``null`` is the null's value, where the rule needs it."""
        return self.at_most

    def describe(self) -> str:
        """The rule in a few symbols, for the report's table."""
        text = f"{'≤' if self.at_most else '≥'} {self.bound:g}"
        if self.margin is not None:
            text += f" and {'below' if self.at_most else 'above'} the null by {self.margin:g}"
        return text


@dataclass(frozen=True)
class Quantity:
    """Reproduced within ``rel_tol`` of ``paper`` (the precision the paper states its number to);
    partly if on ``paper``'s side of ``direction``.

    With ``low_metric`` and ``high_metric`` (the notebook metrics holding the value's interval,
    e.g. a bootstrap over seeds) the interval is judged instead of the point: reproduced when
    it meets the paper's window, partly when it misses the window but lies wholly on the
    paper's side of ``direction``, not reproduced otherwise (it misses the paper's size and
    cannot even exclude no effect, or it lies on the other side).
    """

    paper: float
    rel_tol: float
    direction: float
    low_metric: str | None = None
    high_metric: str | None = None

    def __post_init__(self):
        if not self.rel_tol > 0:
            raise ValueError(f"rel_tol must be positive; got {self.rel_tol!r}")
        if self.paper == self.direction:
            raise ValueError("paper must differ from direction, which separates the effect "
                             "from its absence")
        if (self.low_metric is None) != (self.high_metric is None):
            raise ValueError("give both low_metric and high_metric, or neither")

    def interval(self, value: float, metrics: dict[str, float] | None) -> tuple[float, float]:
        """The value's interval read from the metrics; the point ``(value, value)`` for a rule
        without interval metrics, or without metrics (a null's value, judged as a point)."""
        if self.low_metric is None or metrics is None:
            return value, value
        return _range(metrics, self.low_metric, self.high_metric, "the value's interval")

    def judge(self, value: float, null: float | None = None,
              metrics: dict[str, float] | None = None) -> str:
        """The verdict of ``value`` or its interval (``null`` unused)."""
        low, high = self.interval(value, metrics)
        window_low, window_high = self.window()
        if low <= window_high and high >= window_low:
            return REPRODUCED
        if self.paper > self.direction:
            same_side = low > self.direction
        else:
            same_side = high < self.direction
        return PARTLY if same_side else NOT_REPRODUCED

    def window(self) -> tuple[float, float]:
        """The values that reproduce the paper's: ``paper`` ± ``rel_tol`` of it."""
        half = self.rel_tol * abs(self.paper)
        return self.paper - half, self.paper + half

    def would_change(self, verdict: str, value: float, null: float | None = None,
                     metrics: dict[str, float] | None = None) -> str:
        """What value would change ``verdict`` (reproduced, partly or not reproduced), in words."""
        low, high = self.window()
        point = self.low_metric is None
        what, wholly = ("a value", "") if point else ("an interval", "wholly ")
        if verdict == REPRODUCED:
            return f"{what} {wholly}outside [{low:.3g}, {high:.3g}]"
        if verdict == PARTLY:
            return f"{what} {'within' if point else 'meeting'} [{low:.3g}, {high:.3g}]"
        side = "above" if self.paper > self.direction else "below"
        return f"{what} {wholly}on the paper's side of {self.direction:.3g} ({side} it)"

    def judge_point(self, value: float, null: float | None = None,
                    metrics: dict[str, float] | None = None) -> str:
        """The verdict of ``value`` as a point (its interval metrics unused)."""
        return self.judge(value, null)

    def lower_is_better(self, null: float | None = None) -> bool:
        """Whether the claim wants its number below the null (an error, a fall) rather than
        above it; ``null`` is the null's value, where the rule needs it."""
        return self.paper < self.direction

    def describe(self) -> str:
        """The rule in words, for the report's table."""
        low, high = self.window()
        if self.low_metric is None:
            return (f"within [{low:.3g}, {high:.3g}] (the paper's {self.paper:g} ± "
                    f"{self.rel_tol:.0%}); partly if on its side of {self.direction:g}")
        return (f"interval meets [{low:.3g}, {high:.3g}] (the paper's {self.paper:g} ± "
                f"{self.rel_tol:.0%}); partly if wholly on its side of {self.direction:g}")


@dataclass(frozen=True)
class BeatsNull:
    """Reproduced when ``value < factor * null`` (``at_most``) or ``>`` (not ``at_most``):
    a value that only equals the null's does not beat it."""

    at_most: bool = True
    factor: float = 1.0

    def judge(self, value: float, null: float | None,
              metrics: dict[str, float] | None = None) -> str:
        """The verdict of ``value`` against the null's value ``null`` (``metrics`` unused)."""
        if null is None:
            raise ValueError("BeatsNull needs a null with a value")
        bound = self.factor * null
        holds = value < bound if self.at_most else value > bound
        return REPRODUCED if holds else NOT_REPRODUCED

    def would_change(self, verdict: str, value: float, null: float | None,
                     metrics: dict[str, float] | None = None) -> str:
        """What value would flip ``verdict`` (reproduced or not reproduced), in words."""
        if null is None:
            raise ValueError("BeatsNull needs a null with a value")
        holds = verdict == REPRODUCED
        side = ("at least" if holds else "below") if self.at_most else (
            "at most" if holds else "above")
        text = f"a value {side} {self.factor * null:.3g}"
        if self.factor != 1:
            text += f" ({self.factor:g} × the null's {null:.3g})"
        return text

    judge_point = judge  # a point is what this rule judges anyway

    def lower_is_better(self, null: float | None = None) -> bool:
        """Whether the claim wants its number below the null (an error, a fall) rather than
        above it; ``null`` is the null's value, where the rule needs it."""
        return self.at_most

    def describe(self) -> str:
        """The rule in a few symbols, for the report's table."""
        factor = "" if self.factor == 1 else f"{self.factor:g} × "
        return f"{'<' if self.at_most else '>'} {factor}the null"


@dataclass(frozen=True)
class ClosesGap:
    """A success claim stated as an effect size against the null: reproduced when the value
    closes at least ``share`` of the gap from the null's value to ``optimum`` (an entropy MAE
    from the context-free floor to 0, an accuracy from chance to 1), not reproduced otherwise."""

    share: float
    optimum: float

    def __post_init__(self):
        if not 0 < self.share <= 1:
            raise ValueError(f"share must be in (0, 1]; got {self.share!r}")

    def threshold(self, null: float | None) -> float:
        """The value that closes exactly ``share`` of the gap, for this null."""
        if null is None:
            raise ValueError("ClosesGap needs a null with a value")
        if null == self.optimum:
            raise ValueError(f"the null's value {null!r} is the optimum: there is no gap to close")
        return null + self.share * (self.optimum - null)

    def judge(self, value: float, null: float | None,
              metrics: dict[str, float] | None = None) -> str:
        """The verdict of ``value`` against the null's value ``null`` (``metrics`` unused)."""
        limit = self.threshold(null)
        holds = value <= limit if self.optimum < null else value >= limit
        return REPRODUCED if holds else NOT_REPRODUCED

    def would_change(self, verdict: str, value: float, null: float | None,
                     metrics: dict[str, float] | None = None) -> str:
        """What value would flip ``verdict`` (reproduced or not reproduced), in words."""
        limit = self.threshold(null)
        below = self.optimum < null  # success lies below the threshold
        if verdict == REPRODUCED:
            return f"a value {'above' if below else 'below'} {limit:.3g}"
        return f"a value {'at most' if below else 'at least'} {limit:.3g}"

    judge_point = judge  # a point is what this rule judges anyway

    def lower_is_better(self, null: float | None = None) -> bool:
        """Whether the claim wants its number below the null (an error, a fall) rather than
        above it; ``null`` is the null's value, where the rule needs it."""
        return self.optimum < self.threshold(null)

    def describe(self) -> str:
        """The rule in words, for the report's table."""
        return f"closes ≥ {self.share:.0%} of the null's gap to {self.optimum:g}"


@dataclass(frozen=True)
class AtNull:
    """A failure claim: reproduced when ``|value - null|`` is at most the tolerance (the model
    is the null), which is ``abs_tol``, or ``rel_tol`` times ``|null|`` — for an error whose
    optimum is 0 (an entropy MAE), the share of the null's distance to the optimum that the
    model may close and still count as failing. Give exactly one of the two."""

    abs_tol: float | None = None
    rel_tol: float | None = None

    def __post_init__(self):
        if (self.abs_tol is None) == (self.rel_tol is None):
            raise ValueError("give exactly one of abs_tol and rel_tol")
        tol = self.abs_tol if self.abs_tol is not None else self.rel_tol
        if not tol > 0:
            raise ValueError(f"the tolerance must be positive; got {tol!r}")

    def tolerance(self, null: float | None) -> float:
        """The largest ``|value - null|`` that still counts as the null, for this null."""
        if null is None:
            raise ValueError("AtNull needs a null with a value")
        return self.abs_tol if self.abs_tol is not None else self.rel_tol * abs(null)

    def judge(self, value: float, null: float | None,
              metrics: dict[str, float] | None = None) -> str:
        """The verdict of ``value`` against the null's value ``null`` (``metrics`` unused)."""
        tol = self.tolerance(null)
        return REPRODUCED if abs(value - null) <= tol else NOT_REPRODUCED

    def would_change(self, verdict: str, value: float, null: float | None,
                     metrics: dict[str, float] | None = None) -> str:
        """What value would flip ``verdict`` (reproduced or not reproduced), in words."""
        tol = self.tolerance(null)
        where = "outside" if verdict == REPRODUCED else "within"
        return f"a value {where} [{null - tol:.3g}, {null + tol:.3g}]"

    judge_point = judge  # a point is what this rule judges anyway

    def lower_is_better(self, null: float | None = None) -> bool:
        """Whether the claim wants its number below the null (an error, a fall) rather than
        above it; ``null`` is the null's value, where the rule needs it."""
        return True  # an error stays at its null; the side does not decide a failure

    def describe(self) -> str:
        """The rule in words, for the report's table."""
        if self.abs_tol is not None:
            return f"within {self.abs_tol:g} of the null"
        return f"within {self.rel_tol:.0%} of the null's value (closes at most that share of it)"


def _interval_excludes(k: int, n: int, p0: float, level: float) -> bool:
    """Whether the Clopper–Pearson interval of ``k`` of ``n`` excludes ``p0``, without computing
    it: its low end is above ``p0`` exactly when P(X >= k; p0) < (1 - level) / 2 (the tail grows
    with p), and its high end below exactly when P(X <= k; p0) < (1 - level) / 2."""
    alpha = (1 - level) / 2
    return (k > 0 and binomial_tail(k, n, p0, True) < alpha
            or k < n and binomial_tail(k, n, p0, False) < alpha)


def seeds_needed(share: float, p0: float = 0.5, level: float = 0.95, start: int = 1,
                 limit: int = 10_000) -> int | None:
    """The fewest seeds ``n >= start`` (up to ``limit``) at which ``round(share * n)`` of ``n``
    has a Clopper–Pearson interval at ``level`` that excludes ``p0``; ``None`` if none does."""
    for n in range(max(start, 1), limit + 1):
        if _interval_excludes(round(share * n), n, p0, level):
            return n
    return None


@dataclass(frozen=True)
class SeedShare:
    """The claim's value is the share k/n of seeds that show the effect, and ``trials_metric``
    names the notebook metric holding n: reproduced when the exact two-sided Clopper–Pearson
    interval at ``level`` of the share lies above ``p0``, not reproduced when it lies below, and
    inconclusive (too few seeds) while it holds ``p0``."""

    trials_metric: str
    p0: float = 0.5
    level: float = 0.95

    undecided_basis = FOR_BUDGET
    """The basis of an undecided share (too few seeds; more would decide)."""

    def __post_init__(self):
        if not 0 < self.p0 < 1:
            raise ValueError(f"p0 must be in (0, 1); got {self.p0!r}")
        check_level(self.level)

    def counts(self, value: float, metrics: dict[str, float] | None) -> tuple[int, int]:
        """``(k, n)``: the seeds that show the effect, ``round(value * n)``, and the seeds."""
        if metrics is None:
            raise ValueError("SeedShare needs the metrics, for the number of seeds")
        trials = _metric(metrics, self.trials_metric, "the seed-share rule")
        if not (trials >= 1 and float(trials).is_integer()):
            raise ValueError(f"{self.trials_metric!r} must be a whole number of seeds, at least 1; "
                             f"got {trials!r}")
        if not 0 <= value <= 1:
            raise ValueError(f"a share of seeds must be in [0, 1]; got {value!r}")
        n = int(trials)
        return round(value * n), n

    def interval(self, value: float, metrics: dict[str, float] | None) -> tuple[float, float]:
        """The Clopper–Pearson interval of the share ``value`` over the run's seeds."""
        return clopper_pearson(*self.counts(value, metrics), self.level)

    def judge(self, value: float, null: float | None = None,
              metrics: dict[str, float] | None = None) -> str:
        """Reproduced, not reproduced or inconclusive, from where the interval lies (``null``
        unused: the rule's null is ``p0``)."""
        low, high = self.interval(value, metrics)
        if low > self.p0:
            return REPRODUCED
        if high < self.p0:
            return NOT_REPRODUCED
        return INCONCLUSIVE

    def undecided(self, value: float, metrics: dict[str, float] | None) -> str | None:
        """Why the seeds cannot decide, or ``None`` if the interval excludes ``p0``."""
        (k, n), (low, high) = self.counts(value, metrics), self.interval(value, metrics)
        if low > self.p0 or high < self.p0:
            return None
        return (f"the {self.level:.0%} interval {low:.2f}–{high:.2f} of the share contains "
                f"{self.p0:g} ({k} of {n} seeds)")

    def would_change(self, verdict: str, value: float, null: float | None = None,
                     metrics: dict[str, float] | None = None) -> str:
        """What would change ``verdict``: for an undecided share, the seeds that would decide it
        at this share; for a decided one, the count of seeds that would put ``p0`` back inside
        the interval."""
        k, n = self.counts(value, metrics)
        if verdict == INCONCLUSIVE:
            if value == self.p0:
                return f"no number of seeds at this share: the share is {self.p0:g}"
            needed = seeds_needed(value, self.p0, self.level, start=n)
            if needed is None:
                return f"more than 10,000 seeds at this share ({value:.3g})"
            return f"about {needed:,} seeds at this share"
        if verdict == REPRODUCED:
            most = max(j for j in range(k + 1)
                       if not _interval_excludes(j, n, self.p0, self.level))
            return f"at most {most} of {n} seeds showing the effect (the interval reaching {self.p0:g})"
        least = min(j for j in range(k, n + 1) if not _interval_excludes(j, n, self.p0, self.level))
        return f"at least {least} of {n} seeds showing the effect (the interval reaching {self.p0:g})"

    def leans_against(self, value: float, metrics: dict[str, float] | None = None) -> bool:
        """Whether an undecided share sits on the failing side (at or below ``p0``)."""
        return value <= self.p0

    def judge_point(self, value: float, null: float | None = None,
                    metrics: dict[str, float] | None = None) -> str:
        """The side of ``p0`` that the share ``value`` lies on, without its interval:
        reproduced above, not reproduced below, inconclusive at ``p0``."""
        return REPRODUCED if value > self.p0 else NOT_REPRODUCED if value < self.p0 else INCONCLUSIVE

    def lower_is_better(self, null: float | None = None) -> bool:
        """Whether the claim wants its number below the null (an error, a fall) rather than
        above it; ``null`` is the null's value, where the rule needs it."""
        return False

    def describe(self) -> str:
        """The rule in words, for the report's table."""
        one_sided = 1 - (1 - self.level) / 2
        return (f"{self.level:.0%} Clopper–Pearson interval of the share (one-sided "
                f"{one_sided * 100:g}% bounds) above {self.p0:g}")


def _range(metrics: dict[str, float] | None, low_metric: str, high_metric: str,
           what: str) -> tuple[float, float]:
    """``(low, high)`` read from two metrics, checked to be in order; ``what`` names them."""
    if metrics is None:
        raise ValueError(f"{what} is read from the metrics, which were not given")
    low = _metric(metrics, low_metric, what)
    high = _metric(metrics, high_metric, what)
    if not low <= high:
        raise ValueError(f"{what} must have low <= high; got {low!r} > {high!r}")
    return low, high


@dataclass(frozen=True)
class OutsideNullRange:
    """The null is a spread, not a number: ``low_metric`` and ``high_metric`` name the notebook
    metrics holding the central range of the same statistic over many draws of the null (e.g.
    95 % of independent initialisations). Reproduced when the value lies beyond the range on the
    claimed side (below ``low`` when ``at_most``, above ``high`` otherwise), not reproduced when
    it lies beyond it on the other side, and inconclusive, undecidable by design, inside it: the
    statistic cannot tell the run from its null."""

    low_metric: str
    high_metric: str
    at_most: bool = True

    undecided_basis = BY_DESIGN
    """The basis of a value inside the null's range (the statistic cannot tell the run from
    its null)."""

    def leans_against(self, value: float, metrics: dict[str, float] | None = None) -> bool:
        """Never: a value inside the null's range leans neither way."""
        return False

    def bounds(self, metrics: dict[str, float] | None) -> tuple[float, float]:
        """``(low, high)``, the null's range in this run."""
        return _range(metrics, self.low_metric, self.high_metric, "the null's range")

    def judge(self, value: float, null: float | None = None,
              metrics: dict[str, float] | None = None) -> str:
        low, high = self.bounds(metrics)
        if low <= value <= high:
            return INCONCLUSIVE
        beyond_claimed_side = value < low if self.at_most else value > high
        return REPRODUCED if beyond_claimed_side else NOT_REPRODUCED

    def undecided(self, value: float, metrics: dict[str, float] | None) -> str | None:
        """Why the value decides nothing (inside the null's range), or ``None``."""
        low, high = self.bounds(metrics)
        if low <= value <= high:
            return f"the value {value:.3g} lies inside the null's range {low:.3g} to {high:.3g}"
        return None

    def would_change(self, verdict: str, value: float, null: float | None = None,
                     metrics: dict[str, float] | None = None) -> str:
        low, high = self.bounds(metrics)
        claimed, other = (f"below {low:.3g}", f"above {high:.3g}") if self.at_most else (
            f"above {high:.3g}", f"below {low:.3g}")
        if verdict == REPRODUCED:
            return (f"a value of {low:.3g} or more" if self.at_most
                    else f"a value of {high:.3g} or less")
        if verdict == NOT_REPRODUCED:
            return f"a value inside the null's range or {claimed}"
        return f"a value {claimed} (for), or {other} (against)"

    judge_point = judge  # a point is what this rule judges anyway

    def lower_is_better(self, null: float | None = None) -> bool:
        """Whether the claim wants its number below the null (an error, a fall) rather than
        above it; ``null`` is the null's value, where the rule needs it."""
        return self.at_most

    def describe(self) -> str:
        side = "below" if self.at_most else "above"
        return f"{side} the null's range; inside it decides nothing"


@dataclass(frozen=True)
class IntervalBound:
    """A :class:`Bound` judged on the value's interval: ``low_metric`` and ``high_metric`` name the
    notebook metrics holding it (e.g. a 95 % interval over disjoint probe batches). Reproduced
    when the whole interval is on the stated side of ``bound``, not reproduced when the whole
    interval is on the other side, and inconclusive while it holds the bound (a larger sample
    would narrow it)."""

    bound: float
    low_metric: str
    high_metric: str
    at_most: bool = True

    undecided_basis = FOR_BUDGET
    """The basis of an interval that holds the bound (a larger sample would narrow it)."""

    def leans_against(self, value: float, metrics: dict[str, float] | None = None) -> bool:
        """Whether the point value is on the failing side of the bound."""
        return value > self.bound if self.at_most else value < self.bound

    def interval(self, metrics: dict[str, float] | None) -> tuple[float, float]:
        """``(low, high)``, the value's interval in this run."""
        return _range(metrics, self.low_metric, self.high_metric, "the value's interval")

    def judge(self, value: float, null: float | None = None,
              metrics: dict[str, float] | None = None) -> str:
        low, high = self.interval(metrics)
        inside, outside = (high <= self.bound, low > self.bound) if self.at_most else (
            low >= self.bound, high < self.bound)
        return REPRODUCED if inside else NOT_REPRODUCED if outside else INCONCLUSIVE

    def undecided(self, value: float, metrics: dict[str, float] | None) -> str | None:
        """Why the interval decides nothing (it holds the bound), or ``None``."""
        if self.judge(value, None, metrics) != INCONCLUSIVE:
            return None
        low, high = self.interval(metrics)
        return f"the interval {low:.3g} to {high:.3g} holds the bound {self.bound:g}"

    def would_change(self, verdict: str, value: float, null: float | None = None,
                     metrics: dict[str, float] | None = None) -> str:
        side, other = ("above", "below") if self.at_most else ("below", "above")
        if verdict == INCONCLUSIVE:
            return "a narrower interval (a larger probe sample) on one side of the bound"
        if verdict == REPRODUCED:
            return f"an interval reaching {side} {self.bound:g}"
        return f"an interval reaching {other} {self.bound:g}"

    def judge_point(self, value: float, null: float | None = None,
                    metrics: dict[str, float] | None = None) -> str:
        """The verdict of ``value`` as a point, against the bound (its interval unused)."""
        return NOT_REPRODUCED if self.leans_against(value) else REPRODUCED

    def lower_is_better(self, null: float | None = None) -> bool:
        """Whether the claim wants its number below the null (an error, a fall) rather than
        above it; ``null`` is the null's value, where the rule needs it."""
        return self.at_most

    def describe(self) -> str:
        return (f"interval {'≤' if self.at_most else '≥'} {self.bound:g}; "
                "holding the bound decides nothing")


Rule = (Bound | Quantity | BeatsNull | ClosesGap | AtNull | SeedShare | OutsideNullRange
        | IntervalBound)


@dataclass(frozen=True)
class StillLearning:
    """Training counts as unfinished when ``metric`` (the relative fall of the training loss
    over the last tenth of training, recorded by the notebook) exceeds ``max_fall``.

    ``blind`` says, where it applies, why a flat loss at the end cannot show that the run
    finished (a rate that decays to zero flattens the loss whatever is left to learn): a
    verdict that rests on how far the run got (a size the paper states, missed) then stays
    undecided however flat the loss (:meth:`unseen_finish`)."""

    metric: str
    max_fall: float = 0.02
    blind: str | None = None

    def reason(self, metrics: dict[str, float]) -> str | None:
        """Why the run cannot decide, or ``None`` if training had flattened."""
        fall = _metric(metrics, self.metric, "the still-learning check")
        if fall > self.max_fall:
            return (f"still learning: the loss fell {fall:.1%} over the last tenth of training "
                    f"(more than {self.max_fall:.0%})")
        return None

    def unseen_finish(self, metrics: dict[str, float]) -> str | None:
        """Why the run cannot show that it had finished learning: the loss still falling, or,
        with ``blind`` (why a flat loss at the end says nothing here, e.g. a rate that decays
        to zero flattens it whatever is left to learn), that reason. ``None`` when a flat loss
        shows the run finished."""
        return self.reason(metrics) or (
            None if self.blind is None else f"a flat loss cannot show the run finished: {self.blind}")

    def would_decide(self, metrics: dict[str, float] | None = None) -> str:
        """The training that would decide a claim this check left undecided, in words."""
        if self.blind is not None and (metrics is None or not self.reason(metrics)):
            return ("a run whose end shows whether it finished learning (a constant rate, or a run "
                    "twice as long whose measure no longer falls)")
        return f"training until the loss falls by at most {self.max_fall:.0%} over the last tenth"


@dataclass(frozen=True)
class Solved:
    """A claim about a *trained* model (its geometry, its dynamics) needs a model that solved
    the task: the run counts as unsolved when ``metric`` (an error, e.g. the entropy MAE in
    bits) exceeds ``max_error``, and then no verdict on the claim is drawn.

    The same check guards any claim that needs the run to reach a regime first (attention that
    has left uniform, say): ``unmet`` then says, in words, what the run did not reach. Where
    the run already used the claim's own setting in full (the authors' rates, steps and data),
    so that training longer is not the answer, ``by_design`` says what would decide the claim
    instead, and an unmet regime is undecidable by design rather than undecided for budget.
    Where another setting the authors ran could reach the regime, ``other_setting`` names it
    instead: the claim is then undecided for budget, and that setting is what would decide it.

    With ``relative_to`` (a metric: a null's error, e.g. the observation-blind predictor's MAE)
    the bar is ``max_error`` times that metric's value, so that a run counts as solved only
    when it beats that null by the stated factor.
    """

    metric: str
    max_error: float
    unmet: str = "the model did not solve the task"
    by_design: str | None = None
    relative_to: str | None = None
    other_setting: str | None = None

    def __post_init__(self):
        if self.by_design is not None and self.other_setting is not None:
            raise ValueError("give by_design or other_setting, not both: a claim another "
                             "setting could decide is not undecidable by design")

    def bar(self, metrics: dict[str, float]) -> float:
        """The largest error that counts as solved in this run."""
        if self.relative_to is None:
            return self.max_error
        return self.max_error * _metric(metrics, self.relative_to, "the solved-task check")

    @property
    def basis(self) -> str:
        """Undecided for budget, or undecidable by design when ``by_design`` says why more
        training at this setting is not the answer (the basis of a verdict this check leaves
        undecided)."""
        return FOR_BUDGET if self.by_design is None else BY_DESIGN

    def reason(self, metrics: dict[str, float]) -> str | None:
        """Why the run cannot decide, or ``None`` if the model solved the task."""
        error = _metric(metrics, self.metric, "the solved-task check")
        bar = self.bar(metrics)
        if error > bar:
            against = "" if self.relative_to is None else (
                f", {self.max_error:g} × {written(metrics[self.relative_to])}")
            return f"{self.unmet} (measured {written(error)}, above {written(bar)}{against})"
        return None

    def would_decide(self, metrics: dict[str, float] | None = None) -> str:
        """The training (or, by design, the other setting) that would decide a claim this check
        left undecided, in words."""
        if self.by_design is not None:
            return self.by_design
        if self.other_setting is not None:
            return self.other_setting
        if self.relative_to is None:
            bar = f"{self.max_error:g}"
        elif metrics is not None and self.relative_to in metrics:
            bar = f"{self.max_error:g} × {written(metrics[self.relative_to])}"
        else:
            bar = f"{self.max_error:g} times its reference"
        return f"training until the measure is at most {bar} ({self.unmet} in this run)"


@dataclass(frozen=True)
class LeadingComponent:
    """A claim that "a leading component" carries an effect, measured on the best of several
    principal components: the notebook metric ``metric`` holds the rank of the component that
    carried it (1 for PC1), and ``share_metric``, where given, the share of the variance that
    component carries. A reproduced verdict on a component after the first is *partly*: the
    effect is there, on a direction that carries less of the representation than the claim
    says."""

    metric: str
    share_metric: str | None = None
    rests_on_learning: ClassVar[bool] = False

    def reason(self, metrics: dict[str, float]) -> str | None:
        """Why a reproduced verdict is only partly, or ``None`` when PC1 carries the effect."""
        rank = _metric(metrics, self.metric, "the leading-component check")
        if rank <= 1:
            return None
        share = ("" if self.share_metric is None or self.share_metric not in metrics
                 else f", which carries {metrics[self.share_metric]:.1%} of the variance")
        return f"the effect is carried by PC{rank:.0f}{share}, not by the leading component"

    def would_decide(self) -> str:
        """What would make the verdict reproduced."""
        return "the effect carried by PC1"


@dataclass(frozen=True)
class BeyondTheSetting:
    """A claim whose effect a setting of the run (not the mechanism the claim names) produces
    by itself: ``metric`` holds the effect over what that setting alone gives, on the seed
    where it is smallest (``none``, 1 for a ratio and 0 for a difference: exactly what the
    setting gives). ``setting`` says in words what the setting is and what it gives. A
    reproduced verdict is *partly* unless the effect exceeds the setting's on every seed
    (``metric`` above ``none``).

    With a ``level``, ``metric`` names a value per seed (``<metric>_seed<i>``) and the check is
    a share of seeds instead: partly unless the share of seeds whose value exceeds ``none``
    passes the share test at ``level`` (its Clopper–Pearson interval above one half), the rule
    of a claim that judges that same effect by its share of seeds."""

    metric: str
    setting: str
    none: float = 1.0
    level: float | None = None
    rests_on_learning: ClassVar[bool] = False

    def __post_init__(self):
        if self.level is not None:
            check_level(self.level)

    def reason(self, metrics: dict[str, float]) -> str | None:
        """Why a reproduced verdict is only partly, or ``None`` when every seed's effect (with
        a ``level``: enough seeds' effect) exceeds what the setting gives."""
        if self.level is not None:
            values = seed_values(metrics, self.metric)
            if values is None:
                raise KeyError(f"the check against the run's setting needs each seed's "
                               f"{self.metric!r}, which the notebook did not record")
            beyond = sum(value > self.none for value in values)
            share = SeedShare("seeds", level=self.level)
            if share.judge(beyond / len(values), metrics={"seeds": len(values)}) == REPRODUCED:
                return None
            return (f"{self.setting}; beyond it, the effect shows on {beyond} of {len(values)} "
                    "seeds, a share of seeds that does not pass")
        value = _metric(metrics, self.metric, "the check against the run's setting")
        if value > self.none:
            return None
        return (f"{self.setting}; over that, the effect is {value:.2f} on the lowest seed "
                f"({self.none:g} or below: no more than the setting gives by itself)")

    def would_decide(self) -> str:
        """What would make the verdict reproduced."""
        if self.level is not None:
            return "an effect beyond what the run's setting gives, on enough seeds"
        return "an effect beyond what the run's setting gives, on every seed"


@dataclass(frozen=True)
class PaperSize:
    """A claim whose rule is an effect size against its null ("closes 95 % of the floor's gap")
    while the paper states a size too ("an entropy MAE of 0.003 to 0.007 bits"): ``metric``
    holds the value judged, seed by seed where the notebook recorded each seed's
    (``<metric>_seed<i>``), and a seed reaches the paper's size when its value is at most
    ``bound``. A reproduced verdict is *partly* unless the share of seeds that reach that size
    passes the same test as a share of seeds (its Clopper–Pearson interval at ``level`` above
    one half; a single value: at most the bound). ``stated`` says in words what the paper and
    the authors state, and where. A miss rests on the model not having learned enough
    (``rests_on_learning``), so a run that its training checks call unfinished, or that cannot
    show it finished, leaves it undecided (:func:`decision`).

    Version 2 (``RULE_VERSION``): a seed counts at the bound itself (it counted strictly below),
    and a miss behind unfinished training is undecided (it was partly).
    """

    metric: str
    bound: float
    stated: str
    level: float = DIRECTIONAL_LEVEL
    rests_on_learning: ClassVar[bool] = True
    RULE_VERSION: ClassVar[int] = 2

    def __post_init__(self):
        if not self.bound > 0:
            raise ValueError(f"bound must be positive; got {self.bound!r}")
        if not self.stated.strip():
            raise ValueError("stated must say what size the paper states, and where")
        check_level(self.level)

    def reason(self, metrics: dict[str, float]) -> str | None:
        """Why a reproduced verdict is only partly, or ``None`` when enough seeds reach the
        paper's size."""
        values = seed_values(metrics, self.metric) or [
            _metric(metrics, self.metric, "the check of the paper's size")]
        reached = sum(value <= self.bound for value in values)
        n = len(values)
        if n == 1:
            if reached:
                return None
        elif SeedShare("seeds", level=self.level).judge(reached / n, metrics={"seeds": n}) \
                == REPRODUCED:
            return None
        spread = (f"{values[0]:.3g}" if n == 1
                  else f"{min(values):.3g} to {max(values):.3g}")
        return (f"the size the paper states is missed: {self.stated}; {reached} of {n} "
                f"seed{'s' if n > 1 else ''} at most {self.bound:g} (ours {spread})")

    def would_decide(self) -> str:
        """What would make the verdict reproduced."""
        return f"a value at most {self.bound:g} on enough seeds (the size the paper states)"


@dataclass(frozen=True)
class ShortBudget:
    """Training counts as too short when the run's training sequences (``metric``: steps times
    batch size, recorded by the notebook) are fewer than ``min_fraction`` of ``authors``, the
    sequences the authors' own training script goes through (with repeats) for the same claim.

    Attributes:
        metric: the notebook metric holding the run's number of training sequences.
        authors: the authors' number of training sequences.
        source: the authors' script or configuration that sets it (the claim's citation;
            the reason, in words for readers, names no file).
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
            return (f"the run is short: trained on {ours:,.0f} sequences, {share:.1%} of the "
                    f"authors' {self.authors:,.0f}, where a failure counts from "
                    f"{self.min_fraction:.0%} of theirs")
        return None

    def would_decide(self, metrics: dict[str, float] | None = None) -> str:
        """The training that would decide a claim this check left undecided, in words."""
        return (f"training on at least {self.min_fraction * self.authors:,.0f} sequences "
                f"({self.min_fraction:.0%} of the authors' {self.authors:,.0f})")


@dataclass(frozen=True)
class Outlasted:
    """A failure counts only once the run has trained ``factor`` times the steps that a reference
    needed to solve the same task in the same run: ``steps_metric`` holds the run's steps,
    ``reference_steps_metric`` the reference's (the first checkpoint from which it stays
    solved), ``reference_solved_metric`` 1 if the reference solved the task at all. A reference
    that never solved it gives no budget: then ``fallback``, a budget that does not depend on
    any model of the run (the authors' training sequences), decides whether a failure counts,
    and without one no failure counts either (so that a claim about the reference itself can
    still fail).

    The reference may be another architecture (chapter 5: the transformer on the same task) or
    the run itself (``reference="the run itself"``, without ``reference_solved_metric`` where a
    check that the run solved its task guards the claim anyway): then a verdict that rests on
    the model not having learned counts only after ``factor`` times the steps the run needed
    to solve its task, its late phase measured in multiples of its own solve step. A run that
    did not record the reference's solve step gives no budget either: the check says so (it
    does not raise), and the verdict it guards is inconclusive.

    Attributes:
        steps_metric, reference_steps_metric, reference_solved_metric: notebook metrics
            (``reference_solved_metric`` may be ``None``: no check that the reference solved).
        factor: how many times the reference's steps a failing run must have had.
        reference: the reference, in words.
        fallback: the budget where the reference did not solve the task, or ``None``.
    """

    steps_metric: str
    reference_steps_metric: str
    reference_solved_metric: str | None = None
    factor: float = 3.0
    reference: str = "the transformer"
    fallback: ShortBudget | None = None

    def __post_init__(self):
        if not self.factor >= 1:
            raise ValueError(f"factor must be at least 1; got {self.factor!r}")

    def _unrecorded(self, metrics: dict[str, float]) -> str | None:
        """The reference's solve step's metric where the run did not record it, else None."""
        return None if self.reference_steps_metric in metrics else self.reference_steps_metric

    def reason(self, metrics: dict[str, float]) -> str | None:
        """Why the run cannot decide a failure, or ``None`` if it outlasted the reference."""
        steps = _metric(metrics, self.steps_metric, "the outlasting check")
        missing = self._unrecorded(metrics)
        if missing:
            return (f"the step at which {self.reference} solved the task was not recorded, "
                    f"so no budget of {self.factor:g} times it is known")
        needed = _metric(metrics, self.reference_steps_metric, "the outlasting check")
        if not self._reference_solved(metrics):
            unsolved = (f"{self.reference}, whose solve step sets the budget for a failure, did "
                        f"not solve the task within its {needed:,.0f} steps")
            if self.fallback is None:
                return f"{unsolved}, so no budget for a failure is known"
            short = self.fallback.reason(metrics)
            return None if short is None else (
                f"{unsolved}, so the authors' budget for this model decides instead, and {short}")
        if steps < self.factor * needed:
            return (f"trained {steps:,.0f} steps, fewer than {self.factor:g} times the "
                    f"{needed:,.0f} that {self.reference} needed")
        return None

    def would_decide(self, metrics: dict[str, float] | None = None) -> str:
        """The training that would decide a failure this check left undecided, in words."""
        if metrics is not None and self._unrecorded(metrics):
            return (f"a run that records the step at which {self.reference} solved the task, "
                    f"trained for {self.factor:g} times it")
        if metrics is not None and self._reference_solved(metrics):
            needed = _metric(metrics, self.reference_steps_metric, "the outlasting check")
            return f"training for at least {self.factor * needed:,.0f} steps"
        if self.fallback is not None:
            return self.fallback.would_decide(metrics)
        return (f"a run in which {self.reference} solves the task, and training for "
                f"{self.factor:g} times its steps")

    def _reference_solved(self, metrics: dict[str, float]) -> bool:
        """Whether the reference solved the task (true where no metric records it)."""
        return self.reference_solved_metric is None or bool(
            _metric(metrics, self.reference_solved_metric, "the outlasting check"))


@dataclass(frozen=True)
class Decision:
    """How a claim is decided: its verdict, the reason (empty unless inconclusive), the basis it
    rests on, and what would change it.

    Attributes:
        verdict: one of :data:`VERDICTS`.
        reason: why the verdict is inconclusive, or only partly (a leading-component check),
            in words; empty otherwise.
        basis: one of :data:`BASES`.
        would_change: a short sentence, never empty: the value that would flip a decided
            verdict, the training or seeds that would decide one undecided for budget, or the
            task that could decide one undecidable by design.
        larger_run_decides: whether a larger run of the same setting (a claim's registered
            deciding run) is what would decide a verdict left undecided for budget; false where
            a check names another setting or measure instead.
    """

    verdict: str
    reason: str
    basis: str
    would_change: str
    larger_run_decides: bool = True

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}; got {self.verdict!r}")
        if self.basis not in BASES:
            raise ValueError(f"basis must be one of {BASES}; got {self.basis!r}")
        if not self.would_change:
            raise ValueError("would_change must say what would change the verdict")


def decision(rule: Rule, value: float, null: Null, metrics: dict[str, float],
             still_learning: StillLearning | None = None,
             solved: Solved | tuple[Solved, ...] | None = None,
             budget: ShortBudget | Outlasted | None = None,
             undecidable: str | None = None,
             halves: tuple[float, float] | None = None,
             carried_by: LeadingComponent | BeyondTheSetting | PaperSize | None = None,
             failure: bool = False) -> Decision:
    """The :class:`Decision` on ``value`` under ``rule`` against ``null``.

    Args:
        rule: how the value is judged.
        value: the measured number.
        null: the claim's null or reference.
        metrics: every number of the claim's notebook (for the null's, the checks' and the
            rule's values).
        still_learning: the check that training had flattened, where the claim needs it.
        solved: the check that the model solved its task, for claims about a trained model;
            an unsolved run is inconclusive whatever the value. Several checks (a tuple) are
            taken in order, the first unmet one deciding (a task solved, then a regime
            reached, say).
        budget: the check that the run trained long enough, against the authors' budget,
            where the claim is about what training reaches.
        undecidable: why the task cannot decide the claim by design, in words; the claim is
            then inconclusive whatever the value.
        halves: the value on the first and on the second half of the seeds, where the run has
            several; a decided verdict that the two halves, each judged as a point
            (``rule.judge_point``), decide in opposite ways is inconclusive: fragile.
        carried_by: for a claim about a leading component, the check that the component that
            carries the effect is PC1 (:class:`LeadingComponent`); for an effect that a setting
            of the run gives by itself, the check that it goes beyond it
            (:class:`BeyondTheSetting`); for a claim whose paper states a size beyond the
            rule's effect size, the check that enough seeds reach it (:class:`PaperSize`); a
            reproduced verdict that fails it is partly, or inconclusive where the size is
            missed by an unfinished run (the training checks fail).
        failure: the claim is that a model fails (as every :class:`AtNull` claim is), so that
            a reproduced verdict, like a not reproduced one of a success claim, rests on the
            model not having learned and needs the training checks.

    Returns:
        The verdict, its reason (empty unless inconclusive), its basis and what would change it.
    """
    null_value = null.resolve(metrics)
    if undecidable is not None:
        return Decision(INCONCLUSIVE, undecidable, BY_DESIGN, UNDECIDABLE_CHANGE)
    for check in (solved if isinstance(solved, tuple) else (solved,)):
        unsolved = check.reason(metrics) if check is not None else None
        if unsolved:
            return Decision(INCONCLUSIVE, unsolved, check.basis, check.would_decide(metrics),
                            larger_run_decides=check.other_setting is None)
    failing = [(reason, check.would_decide(metrics)) for check in (still_learning, budget)
               if check is not None for reason in [check.reason(metrics)] if reason]
    unfinished = " and ".join(reason for reason, _ in failing)
    training = "; ".join(needed for _, needed in failing)
    verdict = rule.judge(value, null_value, metrics)
    if verdict == INCONCLUSIVE:  # a rule that can leave a value undecided says on what basis
        reason = rule.undecided(value, metrics)
        change = rule.would_change(verdict, value, null_value, metrics)
        if rule.undecided_basis == FOR_BUDGET and unfinished:
            if rule.leans_against(value, metrics) != failure:
                # a larger sample alone would end at a failure of an unfinished run
                reason, change = f"{reason} and {unfinished}", f"{change}; {training}"
            elif still_learning is not None and still_learning.reason(metrics):
                # more seeds alone would decide it, but the reader should know
                reason = f"{reason}; the run was unfinished ({still_learning.reason(metrics)})"
        return Decision(INCONCLUSIVE, reason, rule.undecided_basis, change)
    null_passes = (isinstance(rule, Bound | Quantity) and null_value is not None
                   and rule.judge(null_value) in (REPRODUCED, PARTLY))
    # without a margin a pass that the null shares decides nothing; with one, a value that does
    # not clear a null already past the bound cannot be told from that null
    undecided = (verdict in (REPRODUCED, PARTLY) if getattr(rule, "margin", None) is None
                 else verdict == NOT_REPRODUCED)
    if null_passes and undecided:
        return Decision(INCONCLUSIVE,
                        f"the null ({null.label}, {null_value:.3g}) passes the same rule",
                        BY_DESIGN, NULL_PASSES_CHANGE)
    failure = failure or isinstance(rule, AtNull)
    rests_on_not_learning = verdict == NOT_REPRODUCED or (failure and verdict == REPRODUCED)
    if unfinished and rests_on_not_learning:
        return Decision(INCONCLUSIVE, unfinished, FOR_BUDGET, training)
    if halves is not None:
        first, second = (rule.judge_point(half, null_value, metrics) for half in halves)
        if {first, second} & {REPRODUCED, PARTLY} and NOT_REPRODUCED in {first, second}:
            return Decision(INCONCLUSIVE,
                            f"fragile: the first half of the seeds gives {first} "
                            f"({halves[0]:.3g}), the second {second} ({halves[1]:.3g})",
                            FOR_BUDGET, "more seeds, on which both halves agree")
    basis = EVIDENCE_AGAINST if verdict == NOT_REPRODUCED else EVIDENCE_FOR
    later = carried_by.reason(metrics) if carried_by is not None and verdict == REPRODUCED else None
    if later and carried_by.rests_on_learning:
        # a size missed by a run that had not finished training, or that cannot show it had,
        # rests on not having learned enough
        unseen = [(reason, check.would_decide(metrics)) for check, reason in (
            (still_learning, still_learning and still_learning.unseen_finish(metrics)),
            (budget, budget and budget.reason(metrics))) if reason]
        if unseen:
            return Decision(
                INCONCLUSIVE,
                f"the effect reproduced, but {later}, and {' and '.join(r for r, _ in unseen)}",
                FOR_BUDGET, "; ".join([carried_by.would_decide(), *(w for _, w in unseen)]))
    if later:
        return Decision(PARTLY, later, basis, carried_by.would_decide())
    return Decision(verdict, "", basis, rule.would_change(verdict, value, null_value, metrics))


def decide(rule: Rule, value: float, null: Null, metrics: dict[str, float],
           still_learning: StillLearning | None = None,
           solved: Solved | None = None,
           budget: ShortBudget | Outlasted | None = None) -> tuple[str, str]:
    """The verdict of ``value`` under ``rule`` against ``null``, and the reason for it: the
    first two fields of :func:`decision`, whose arguments these are.

    Returns:
        ``(verdict, reason)``, the verdict one of :data:`VERDICTS`; the reason is empty unless
        the verdict is inconclusive.
    """
    made = decision(rule, value, null, metrics, still_learning, solved, budget)
    return made.verdict, made.reason


def tally(rows) -> dict[str, int]:
    """How many rows rest on each basis: every one of :data:`BASES`, zeros included.

    ``rows`` is an iterable of mappings with a ``"basis"`` key (the dicts of :meth:`Claim.row`),
    or a table with a ``to_dict("records")`` method (a pandas DataFrame of them).
    """
    if hasattr(rows, "to_dict"):
        rows = rows.to_dict("records")
    counts = dict.fromkeys(BASES, 0)
    for row in rows:
        basis = row["basis"]
        if basis not in counts:
            raise ValueError(f"unknown basis {basis!r}; expected one of {BASES}")
        counts[basis] += 1
    return counts


def _canonical(value, skipped: frozenset[str] = frozenset()) -> str:
    """A text that names ``value`` exactly: a dataclass by its class, the class's
    ``RULE_VERSION`` where above 1 (``PaperSize@2``), and the fields that differ from their
    defaults (less ``skipped``); a tuple element by element; anything else by repr."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        parts = [f"{field.name}={_canonical(getattr(value, field.name))}"
                 for field in dataclasses.fields(value) if field.name not in skipped
                 and getattr(value, field.name) != field.default]
        version = getattr(type(value), "RULE_VERSION", 1)
        tag = "" if version == 1 else f"@{version}"
        return f"{type(value).__name__}{tag}({', '.join(parts)})"
    if isinstance(value, tuple):
        return f"({', '.join(_canonical(item) for item in value)})"
    return repr(value)


_NOT_DECISIVE = frozenset({"claim", "source", "paper", "key", "shown_with"})
"""The fields of a :class:`Claim` that do not decide its verdict."""


def seed_values(metrics: dict[str, float], metric: str) -> list[float] | None:
    """Each seed's value of ``metric``, in seed order (the notebook's ``<metric>_seed<i>``, as
    ``Results.record_seeds`` writes them), or ``None`` where it recorded none."""
    count = metrics.get(f"{metric}_n_seeds")
    if count is None:
        return None
    return [_metric(metrics, f"{metric}_seed{index}", "the per-seed values")
            for index in range(int(count))]


def split_halves(values: list[float]) -> tuple[float, float] | None:
    """The mean of the first ``n // 2`` values and of the rest (``None`` for fewer than 2)."""
    if len(values) < 2:
        return None
    middle = len(values) // 2
    return statistics.fmean(values[:middle]), statistics.fmean(values[middle:])


def headline_row(quick: dict, decide: dict | None, decide_current: bool) -> dict:
    """The row that stands for a claim in the report's tally and figure: its most decisive
    current evidence. That is the decide profile's row (longer runs on more seeds) where one
    exists and its results were made by the current library (``decide_current``), and the
    quick build's row otherwise. Either is a :meth:`Claim.row`, whose ``profile`` says which."""
    return decide if decide is not None and decide_current else quick


RUN_PROFILES = ("quick", "decide", "paper")
"""Every chapter's profiles, smallest first, which is the order in which runs can decide a
claim."""


@dataclass(frozen=True)
class DecidingRun:
    """A run registered, before it runs, to decide a claim that a smaller run leaves open.

    Its seeds and steps are those of a chapter profile's settings (a test reads them there), so
    that neither can move after a result is seen without changing the claim's fingerprint.

    Attributes:
        profile: the chapter's profile that makes it, one of :data:`RUN_PROFILES` but the first.
        seeds: the seeds it trains.
        steps: the training steps of each seed.
        seeds_setting: where the profile's settings hold ``seeds``, a dotted path (a list there
            counts by its length).
        steps_setting: where they hold ``steps``, a dotted path.
        cost: its estimated cost in words, with what the estimate rests on.
    """

    profile: str
    seeds: int
    steps: int
    seeds_setting: str
    steps_setting: str
    cost: str

    def __post_init__(self):
        if self.profile not in RUN_PROFILES[1:]:
            raise ValueError(f"profile must be one of {RUN_PROFILES[1:]}; got {self.profile!r}")
        if self.seeds < 1 or self.steps < 1:
            raise ValueError(f"seeds and steps must be positive; got {self.seeds}, {self.steps}")
        if not self.cost.strip():
            raise ValueError("cost must estimate the run's cost in words")

    def describe(self) -> str:
        """The run in words."""
        return (f"the {self.profile} profile's run, {written(self.seeds)} seeds of "
                f"{written(self.steps)} steps ({self.cost})")


def registered_change(runs: tuple[DecidingRun, ...], profile: str) -> str:
    """What would decide a claim left open on ``profile``'s results: the first of its registered
    ``runs`` made by a larger profile, or, where every registered run has been made, that a
    larger one must be registered before it runs."""
    later = [run for run in runs if RUN_PROFILES.index(run.profile) > RUN_PROFILES.index(profile)]
    if later:
        return f"the run registered to decide it: {later[0].describe()}"
    return (f"the registered runs left it open ({'; '.join(run.describe() for run in runs)}); "
            "a larger run, registered before it runs, would decide it")


@dataclass(frozen=True)
class Claim:
    """One tested claim: its text, source, the paper's number, its null, and how ours is judged.

    ``each_seed``, when given, judges a claim about every run ("the Mamba solves recall") seed by
    seed: it judges each seed's value of ``metric`` against the null, the claim's value is the
    share of seeds it reproduces, and ``rule`` (a :class:`SeedShare` on ``<metric>_n_seeds``)
    judges that share. Wherever the notebook recorded each seed's value, the verdict is also
    checked on each half of the seeds (:func:`decision`'s ``halves``).

    ``failure`` marks a claim that a model fails (implied by an :class:`AtNull` rule or
    ``each_seed``), whose reproduced verdict needs the training checks. ``carried_by`` marks a
    claim about a leading component (:class:`LeadingComponent`), an effect that a setting of
    the run gives by itself (:class:`BeyondTheSetting`) or a size the paper states beyond the
    rule's effect size (:class:`PaperSize`), and
    ``shown_with`` names other metrics, ``(label, metric)``, that the report shows beside the
    value without judging them (another variant of the same model, say).

    ``control``, when given, says in words why the row's outcome is fixed by the construction
    of its model (a negative control, such as an MLP that mixes no positions): the row keeps
    its verdict, which checks the set-up, but its basis is *control by construction*, its
    reason starts with that sentence, and the report counts it apart from the claims.

    ``key`` names the claim in the registry (:mod:`~attention_dynamics.book.claims`) and the
    rule log. ``undecidable``, when given, says in words why the claim's task cannot decide it whatever the
    run (e.g. a Bayes entropy that is a function of the position alone cannot separate entropy
    order from position order); the claim is then always inconclusive, undecidable by design,
    with that reason, and its value and null are still shown.

    ``decided_by`` registers, before they run, the runs that decide the claim where a smaller
    run leaves it undecided for budget (:class:`DecidingRun`, smallest profile first); such a
    row's "would change" names the next of them, never a seed count read off the current
    share. They are part of the fingerprint.
    """

    claim: str
    source: str
    paper: str
    notebook: str
    metric: str
    null: Null
    rule: Rule
    still_learning: StillLearning | None = None
    solved: Solved | tuple[Solved, ...] | None = None
    budget: ShortBudget | Outlasted | None = None
    undecidable: str | None = None
    key: str | None = None
    each_seed: Bound | BeatsNull | ClosesGap | AtNull | None = None
    carried_by: LeadingComponent | BeyondTheSetting | PaperSize | None = None
    failure: bool = False
    shown_with: tuple[tuple[str, str], ...] = ()
    control: str | None = None
    decided_by: tuple[DecidingRun, ...] = ()

    def __post_init__(self):
        if self.undecidable is not None and not self.undecidable.strip():
            raise ValueError("undecidable must say why the task cannot decide the claim, or be None")
        if self.control is not None and not self.control.strip():
            raise ValueError("control must say why the construction fixes the outcome, or be None")
        if self.key is not None and not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", self.key):
            raise ValueError(f"key must be lower-case words joined by hyphens; got {self.key!r}")

    @property
    def fingerprint(self) -> str:
        """The SHA-256 digest (hex, first 16 digits) of everything that decides the verdict.

        That is the notebook and metric, the null, the rule (its threshold and level), the
        checks of training, task and budget, the undecidable reason, the per-seed rule and the
        control reason; not
        the claim's wording, source, the paper's quoted text, its key or what is shown beside
        it. Fields at their defaults are left out, so a new option added to a rule or a claim
        leaves the fingerprints of the claims that do not use it as they were. A change to what
        a rule or check class does with the same fields raises the class's ``RULE_VERSION``
        (a class attribute, 1 where absent), which enters the fingerprint of every claim that
        uses the class, so that the change must be logged and stales the rows it judged. Two claims with
        the same fingerprint are judged alike on any results."""
        return hashlib.sha256(_canonical(self, _NOT_DECISIVE).encode()).hexdigest()[:16]

    def row(self, results: dict[str, dict]) -> dict:
        """The report's row for this claim, from the results files (keyed by notebook).

        The keys: ``key``, ``claim``, ``source``, ``paper``, ``null``, ``null value``, ``ours``, ``rule``,
        ``verdict``, ``reason``, ``basis``, ``would change``, ``shown with``, ``interval low`` and ``interval
        high`` (the Clopper–Pearson interval of a :class:`SeedShare`; NaN for other rules),
        ``profile``, ``device``.

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
        null_value = self.null.resolve(metrics)
        values = seed_values(metrics, self.metric)
        if self.each_seed is not None:  # the value is the share of seeds that pass
            if values is None:
                raise KeyError(f"claim {self.claim!r} is judged seed by seed, and "
                               f"{self.notebook!r} recorded no per-seed values of {self.metric!r}")
            values = [float(self.each_seed.judge(one, null_value) == REPRODUCED)
                      for one in values]
            value = statistics.fmean(values)
        made = decision(self.rule, value, self.null, metrics, self.still_learning, self.solved,
                        self.budget, self.undecidable,
                        split_halves(values) if values is not None else None, self.carried_by,
                        self.failure or isinstance(self.each_seed, AtNull))
        low, high = (self.rule.interval(value, metrics) if isinstance(self.rule, SeedShare)
                     else (math.nan, math.nan))
        return {
            "key": self.key,
            "claim": self.claim,
            "source": self.source,
            "paper": self.paper,
            "null": self.null.label,
            "null value": null_value,
            "ours": value,
            "rule": self.rule.describe() if self.each_seed is None else (
                f"each seed {self.each_seed.describe()}; the share of such seeds: "
                f"{self.rule.describe()}"),
            "verdict": made.verdict,
            "reason": made.reason if self.control is None
            else "; ".join(part for part in (self.control, made.reason) if part),
            "basis": made.basis if self.control is None else CONTROL,
            "would change": registered_change(self.decided_by, content["profile"])
            if self.decided_by and made.verdict == INCONCLUSIVE and made.basis == FOR_BUDGET
            and made.larger_run_decides else made.would_change,
            "shown with": "; ".join(
                f"{label}: {written(_metric(metrics, metric, f'claim {self.claim!r}'))}"
                for label, metric in self.shown_with),
            "interval low": low,
            "interval high": high,
            "profile": content["profile"],
            "device": content["device"],
        }
