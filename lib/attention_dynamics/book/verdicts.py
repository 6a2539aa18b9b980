"""Verdicts of the reproduction report, decided by stated rules rather than by hand.

Each claim of the papers that the book tests is one :class:`Claim`: where it comes from, the
paper's number as the paper states it, the notebook metric that measures it, and a rule. The
rules:

- :class:`Bound` — an exact or qualitative claim ("the identity holds", "EM-like is faster on
  every seed"): *reproduced* when the measured value is on the stated side of the bound,
  *not reproduced* otherwise.
- :class:`Quantity` — a number the paper reports: *reproduced* when the measured value lies
  within ``rel_tol`` of the paper's (relative), *partly* when it is on the same side of
  ``direction`` as the paper's value (the effect exists, its size differs), *not reproduced*
  when it is not.
- :class:`Compared` — a claim that one measured number beats another of the same notebook
  ("EM-like ends with lower entropy than SGD", "keys are more orthogonal than at
  initialisation"): *reproduced* when the value is on the stated side of ``factor`` times the
  other metric, *not reproduced* otherwise.

Every rule judges through ``judge(value, metrics)``, ``metrics`` being all the numbers of the
claim's notebook; only :class:`Compared` reads them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

VERDICTS = ("reproduced", "partly", "not reproduced")


@dataclass(frozen=True)
class Bound:
    """Reproduced when ``value <= bound`` (``at_most``) or ``value >= bound`` (not ``at_most``)."""

    bound: float
    at_most: bool = True

    def judge(self, value: float, metrics: dict[str, float] | None = None) -> str:
        holds = value <= self.bound if self.at_most else value >= self.bound
        return VERDICTS[0] if holds else VERDICTS[2]

    def describe(self) -> str:
        return f"{'≤' if self.at_most else '≥'} {self.bound:g}"


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

    def judge(self, value: float, metrics: dict[str, float] | None = None) -> str:
        if abs(value - self.paper) <= self.rel_tol * abs(self.paper):
            return VERDICTS[0]
        same_side = (value - self.direction) * (self.paper - self.direction) > 0
        return VERDICTS[1] if same_side else VERDICTS[2]

    def describe(self) -> str:
        return (f"within {self.rel_tol:.0%} of {self.paper:g}; partly if on its side of "
                f"{self.direction:g}")


@dataclass(frozen=True)
class Compared:
    """Reproduced when ``value <= factor * metrics[against]`` (``at_most``) or ``>=`` (not)."""

    against: str
    at_most: bool = True
    factor: float = 1.0

    def judge(self, value: float, metrics: dict[str, float]) -> str:
        if self.against not in metrics:
            raise KeyError(f"the rule compares with metric {self.against!r}, which was not "
                           "recorded")
        bound = self.factor * metrics[self.against]
        holds = value <= bound if self.at_most else value >= bound
        return VERDICTS[0] if holds else VERDICTS[2]

    def describe(self) -> str:
        factor = "" if self.factor == 1 else f"{self.factor:g} × "
        return f"{'≤' if self.at_most else '≥'} {factor}{self.against}"


@dataclass(frozen=True)
class Claim:
    """One tested claim: its text, source, the paper's number, and how ours is judged."""

    claim: str
    source: str
    paper: str
    notebook: str
    metric: str
    rule: Bound | Quantity | Compared

    def row(self, results: dict[str, dict]) -> dict:
        """The report's row for this claim, from the results files (keyed by notebook).

        A missing notebook or metric is an error: every row must come from this build's run.
        """
        if self.notebook not in results:
            raise KeyError(f"claim {self.claim!r} needs notebook {self.notebook!r}, which wrote "
                           "no results file in this build")
        content = results[self.notebook]
        if self.metric not in content["metrics"]:
            raise KeyError(f"claim {self.claim!r} needs metric {self.metric!r} of "
                           f"{self.notebook!r}, which did not record it")
        value = content["metrics"][self.metric]
        if not math.isfinite(value):
            raise ValueError(f"metric {self.metric!r} of {self.notebook!r} is not finite")
        return {
            "claim": self.claim,
            "source": self.source,
            "paper": self.paper,
            "ours": value,
            "rule": self.rule.describe(),
            "verdict": self.rule.judge(value, content["metrics"]),
            "profile": content["profile"],
            "device": content["device"],
        }
