"""The rule log: every change to a claim's rule after it was judged, with its reason and the
verdicts before and after, in words that the book's page of the log shows as they are.

A rule is fixed before the run that judges it. :data:`JUDGED` holds each claim's fingerprint
(:attr:`~attention_dynamics.book.verdicts.Claim.fingerprint`) as the registry first held it, at
commit 3e4bd2e (2026-12-05), where every one of these rules had been judged on the quick and the
decide results. A later change adds a :class:`RuleChange` to :data:`RULE_LOG` from the old
fingerprint to the new one, so that following a claim's entries from :data:`JUDGED` ends at the
registry's fingerprint (:func:`unlogged_changes`, which the tests call). A new claim enters
:data:`JUDGED` when it is registered, before any run judges it.

The first entries are the changes made before the registry existed (their fingerprints were not
kept): they carry ``None`` for both fingerprints and do not take part in the check. A change
of what judges a claim that its fingerprint does not hold (the seeds a profile trains) is
logged all the same, with the claim's fingerprint at that point as both old and new, so that
the check still follows it.

An entry's texts are read by people who audit the ledger, on the book's page of the log
(:mod:`~attention_dynamics.book.rule_log_page`): plain words, no names from the code (a rule's
class, a metric's name, a file or a claim's key) and no commit inside a sentence (the entry's
``commit`` says where it was made). :func:`identifiers_in` finds what a text must not hold; a
test runs it on every entry. A change that moved a verdict says which (``moved``) and, in one
sentence for the book's changelog of verdicts, what changed (``in_brief``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from attention_dynamics.book.verdicts import VERDICTS, Claim


def _mentions_a_verdict(text: str) -> bool:
    return text == "not recorded" or any(verdict in text for verdict in VERDICTS)


def _names(text: str, verdict: str) -> bool:
    """Whether ``text`` names ``verdict`` (``"reproduced"`` only where not part of ``"not
    reproduced"``)."""
    return re.search(rf"(?<!not )\b{verdict}\b", text) is not None


PROFILES = ("quick", "decide", "quick and decide")
"""Whose results a :class:`Move` is on, in words."""


@dataclass(frozen=True)
class Move:
    """A verdict that a rule change moved, on the results it was changed on.

    Attributes:
        before: the verdict under the old rule (one of
            :data:`~attention_dynamics.book.verdicts.VERDICTS`).
        after: the verdict under the new rule (another of them).
        profile: whose results, in words: ``"quick"``, ``"decide"`` or ``"quick and decide"``.
    """

    before: str
    after: str
    profile: str


TEXT_FIELDS = ("old_rule", "new_rule", "reason", "verdict_before", "verdict_after", "in_brief")
"""The fields of a :class:`RuleChange` that the book's page shows as words."""


@dataclass(frozen=True)
class RuleChange:
    """One change of the rules of one or more claims.

    Attributes:
        date: ISO date of the change.
        commit: the commit that made it (its first 7 hex digits), or, for a change logged in
            the commit that makes it, ``"after <its parent>"``.
        claims: the keys of the claims it changed.
        old_rule: the rule before, in words.
        new_rule: the rule after, in words.
        reason: why the rule changed.
        verdict_before: the verdict under the old rule, on the results it was changed on, with
            its profile where it matters; ``"not recorded"`` where no build kept it.
        verdict_after: the verdict under the new rule on the same results.
        fingerprints: ``{key: (old, new)}``, each changed claim's fingerprint before and after
            (``old`` is ``None`` for a claim the change registers, ``new`` for one it retires);
            ``None`` for a change made before the registry kept fingerprints; the same for
            old and new where the change is to what judges the claim outside its fingerprint.
        moved: ``{key: Move(before, after, profile)}`` for each claim whose verdict (one of the
            four) the change moved, as ``verdict_before`` and ``verdict_after`` name them; empty
            when every verdict stayed, whatever its reason or numbers did (a claim registered
            or retired moves none).
        in_brief: for a change that moved a verdict, one sentence for readers: what the rule now
            asks, and what that did; empty otherwise.
    """

    date: str
    commit: str
    claims: tuple[str, ...]
    old_rule: str
    new_rule: str
    reason: str
    verdict_before: str
    verdict_after: str
    fingerprints: dict[str, tuple[str, str | None]] | None = None
    moved: dict[str, Move] = field(default_factory=dict)
    in_brief: str = ""

    def __post_init__(self):
        if not self.claims:
            raise ValueError("claims must name at least one claim key")
        for name in ("old_rule", "new_rule", "reason", "verdict_before", "verdict_after"):
            if not getattr(self, name).strip():
                raise ValueError(f"{name} must not be empty")
        for name in ("verdict_before", "verdict_after"):
            if not _mentions_a_verdict(getattr(self, name)):
                raise ValueError(
                    f"{name} must name one of {VERDICTS} (with its profile), or be "
                    f"'not recorded'; got {getattr(self, name)!r}"
                )
        if self.fingerprints is not None and set(self.fingerprints) != set(self.claims):
            raise ValueError("fingerprints must give (old, new) for exactly the changed claims")
        if not set(self.moved) <= set(self.claims):
            raise ValueError("moved must name only claims that the change changed")
        for key, move in self.moved.items():
            if move.before not in VERDICTS or move.after not in VERDICTS:
                raise ValueError(f"moved[{key!r}] must go from one of {VERDICTS} to another; "
                                 f"got {move.before!r} -> {move.after!r}")
            if move.before == move.after:
                raise ValueError(f"moved[{key!r}] must change the verdict; both are "
                                 f"{move.before!r}")
            if move.profile not in PROFILES:
                raise ValueError(f"moved[{key!r}] must be on the results of one of "
                                 f"{PROFILES}; got {move.profile!r}")
            if not (_names(self.verdict_before, move.before)
                    and _names(self.verdict_after, move.after)):
                raise ValueError(f"moved[{key!r}] goes from {move.before!r} to {move.after!r}, "
                                 "which verdict_before and verdict_after must name")
        if bool(self.moved) != bool(self.in_brief.strip()):
            raise ValueError("in_brief must say, in one sentence, what a change that moved a "
                             "verdict did, and be empty for one that moved none")


JUDGED: dict[str, str] = {
    "routing-law-exact": "cfcf69b03a88fa89",
    "closed-form-gradients-exact": "97b1f7aadbf4c771",
    "descent-moves-attention-up": "8d4cc16155f229ad",
    "value-update-exact": "1e00719764db48e5",
    "coupled-specializes-further": "b546f8ed2158c9f4",
    "loop-beyond-capacity": "868096bda3c0b435",
    "loop-leaves-symmetry": "ab885af881a2079a",
    "em-faster-share": "3af185c5e1def311",
    "em-speedup": "1b35f33bff418956",
    "em-steps-to-sgd-final": "c3a7f85812fabd96",
    "em-lower-entropy": "1f46c5f41352c013",
    "em-higher-accuracy": "935f39638fd5f7a1",
    "em-closer-to-bayes": "4f8ef952584ab0c0",
    "em-longer-value-paths": "001861b775755f45",
    "em-coherent-value-paths": "79ae9a1ecc098764",
    "attention-first-authors-setting": "735adb81046a3d52",
    "attention-first-fresh": "b8316f897ae9908d",
    "bijection-separate-matches-bayes": "72a92ef206c0148e",
    "bijection-shared-matches-bayes": "319d663d37a52d97",
    "hmm-mean-curve-matches-bayes": "fc558448b50beeb5",
    "hmm-per-sample-tracks-bayes": "b5ee85db3d830071",
    "hmm-length-generalisation": "5b9c74fdaa0bba1c",
    "mlp-bijection-fails-ch4": "6e4d8c938ffe18fb",
    "key-orthogonality-separate": "31d5305a90a651c6",
    "key-orthogonality-shared": "d25416ca4d9156e3",
    "key-signed-cosine-shared": "5d603b66ded8c5e5",
    "value-manifold-pc1-share-separate": "b3c9bd6d54aa272f",
    "value-manifold-pc1-share-shared": "fcb09a000bbbfc4b",
    "value-manifold-entropy-order-separate": "01d1bc84f2d6ebf8",
    "value-manifold-entropy-order-shared": "dd5be3e609f6820f",
    "value-manifold-hmm-leading-component": "fb379644c76d55b9",
    "routing-gradients-fade": "4bd317b1872b1806",
    "precision-after-settling": "62e1f90e1a3b8362",
    "transformer-bijection-matches-bayes": "51a41c54446d3528",
    "mamba-bijection-matches-bayes": "9e29434ee3557947",
    "lstm-bijection-matches-bayes": "d257d1e1b4fae9fe",
    "transformer-hmm-tracks-bayes": "53e601dc4de5b2a2",
    "mamba-hmm-tracks-bayes": "f529d2d370efa50f",
    "mamba-standard-deep-hmm-tracks-bayes": "162ce9bc7b5906c7",
    "mamba-authors-deep-hmm-tracks-bayes": "2c7e92b88512d534",
    "lstm-hmm-fails": "8063828e50471a68",
    "mlp-bijection-fails-ch5": "f26f828e4a12de2e",
    "transformer-recall-solves": "a8b34d817131f5e8",
    "mamba-recall-solves": "7df79bd4619a235f",
    "lstm-recall-fails": "ff79d84f9029f082",
    # registered 2026-12-05 with the rule of attention-first-fresh, which it applies to SGD;
    # its share had been seen (8 of 24 decide seeds) when it was registered
    "attention-first-fresh-sgd": "c54a88630d398737",
}
"""Each claim's fingerprint when the registry first held it (3e4bd2e, judged on quick and decide).

:meta hide-value:
"""


CLAIM_NAMES: dict[str, str] = {
    "routing-law-exact": "the routing law is exact",
    "closed-form-gradients-exact": "the closed-form gradients are exact",
    "descent-moves-attention-up": "a descent step moves attention to better keys",
    "value-update-exact": "the value update is exact",
    "coupled-specializes-further": "the coupled run specializes further",
    "loop-beyond-capacity": "the loop adds beyond capacity",
    "loop-leaves-symmetry": "only the loop leaves the symmetric state",
    "em-faster-share": "EM-like is faster",
    "em-speedup": "EM-like's speed-up",
    "em-steps-to-sgd-final": "EM-like's steps to SGD's final loss",
    "em-lower-entropy": "EM-like ends with a lower entropy",
    "em-higher-accuracy": "EM-like ends more accurate",
    "em-closer-to-bayes": "EM-like ends closer to Bayes",
    "em-longer-value-paths": "longer value paths under EM-like",
    "em-coherent-value-paths": "more coherent value paths under EM-like",
    "attention-first-authors-setting": "attention settles first, the authors' setting",
    "attention-first-fresh": "attention settles first, fresh sequences, EM-like",
    "attention-first-fresh-sgd": "attention settles first, fresh sequences, SGD",
    "bijection-separate-matches-bayes": "matches Bayes on bijections, separate layout",
    "bijection-shared-matches-bayes": "matches Bayes on bijections, shared layout",
    "hmm-per-sample-tracks-bayes": "tracks Bayes on each HMM sequence",
    "hmm-length-generalisation": "HMM filtering past the training length",
    "mlp-bijection-fails-ch4": "the MLP fails bijections, chapter 4",
    "key-orthogonality-separate": "keys more orthogonal, separate layout",
    "key-orthogonality-shared": "keys more orthogonal, shared layout",
    "key-orthogonality-authors-checkpoint": "keys more orthogonal, the authors' checkpoint",
    "key-signed-cosine-shared": "keys orthogonal on average, shared layout",
    "value-manifold-pc1-share-separate": "the first component's share, separate layout",
    "value-manifold-pc1-share-shared": "the first component's share, shared layout",
    "value-manifold-entropy-order-bijection": "values ordered by entropy, bijections",
    "value-manifold-hmm-leading-component": "values ordered by entropy, HMM filtering",
    "routing-gradients-fade": "routing gradients fade",
    "precision-after-settling": "precision improves after settling",
    "transformer-bijection-matches-bayes": "the transformer matches Bayes on bijections",
    "mamba-bijection-matches-bayes": "Mamba matches Bayes on bijections",
    "lstm-bijection-matches-bayes": "the LSTM matches Bayes on bijections",
    "transformer-hmm-tracks-bayes": "the transformer tracks Bayes on HMM filtering",
    "mamba-hmm-tracks-bayes": "Mamba tracks Bayes on HMM filtering",
    "lstm-hmm-fails": "the LSTM fails HMM filtering",
    "mlp-bijection-fails-ch5": "the MLP fails bijections, chapter 5",
    "transformer-recall-solves": "the transformer solves recall",
    "mamba-recall-solves": "Mamba solves recall",
    "lstm-recall-fails": "the LSTM fails recall",
    # retired
    "value-manifold-entropy-order-separate": "values ordered by entropy, separate layout",
    "value-manifold-entropy-order-shared": "values ordered by entropy, shared layout",
    "mamba-standard-deep-hmm-tracks-bayes": "the standard Mamba at depth 2 tracks Bayes on HMM "
    "filtering",
    "mamba-authors-deep-hmm-tracks-bayes": "the authors' Mamba at depth 2 tracks Bayes on HMM "
    "filtering",
    "hmm-mean-curve-matches-bayes": "matches Bayes on the HMM mean curve",
}
"""A short name of every claim that the registry holds or held, for the page of the rule log
and the report (the registry's own wording is a sentence).

:meta hide-value:
"""

SEED_SHARE_LEVEL_REASON = (
    "the claim has a direction (the attention settles first, EM-like is faster), so its seeds "
    "are judged by a one-sided sign test at the 5 % level: the ends of the two-sided 90 % "
    "Clopper–Pearson interval are one-sided 95 % bounds. Set once for every share of seeds in "
    "the ledger"
)

REGISTERED_KEYS = (
    "em-coherent-value-paths", "attention-first-fresh", "attention-first-fresh-sgd",
    "bijection-separate-matches-bayes", "bijection-shared-matches-bayes",
    "hmm-per-sample-tracks-bayes", "hmm-length-generalisation", "key-orthogonality-separate",
    "key-orthogonality-shared", "key-signed-cosine-shared", "value-manifold-pc1-share-separate",
    "value-manifold-pc1-share-shared", "value-manifold-entropy-order-bijection",
    "value-manifold-hmm-leading-component", "routing-gradients-fade", "precision-after-settling",
    "transformer-bijection-matches-bayes", "mamba-bijection-matches-bayes",
    "lstm-bijection-matches-bayes", "transformer-hmm-tracks-bayes", "mamba-hmm-tracks-bayes",
    "lstm-hmm-fails", "transformer-recall-solves", "mamba-recall-solves", "lstm-recall-fails",
)
"""The claims whose deciding runs the entry of 2026-12-07 registers."""

RULE_LOG: tuple[RuleChange, ...] = (
    RuleChange(
        "2026-12-04",
        "0ebf0d9",
        ("key-orthogonality-separate", "key-orthogonality-shared"),
        "the keys' mean absolute off-diagonal cosine at most that of one random initialisation",
        "that cosine below the central 95 % of its values over 100 random initialisations",
        "one initialisation is one draw from a spread; the null is the spread",
        "not reproduced (quick)",
        "not reproduced (quick)",
    ),
    RuleChange(
        "2026-12-04",
        "0ebf0d9",
        ("key-signed-cosine-shared",),
        "the signed mean cosine at most 0.1 in absolute value",
        "the signed mean cosine below the central 95 % of its values over 100 random "
        "initialisations",
        "0.1 was a bare number that no null gave; the spread over initialisations is the null",
        "not reproduced (quick)",
        "not reproduced (quick)",
    ),
    RuleChange(
        "2026-12-04",
        "0ebf0d9",
        ("value-manifold-entropy-order-separate", "value-manifold-entropy-order-shared"),
        "the absolute Spearman correlation at least 0.8, and 0.1 above every null (the null "
        "that knows only the position passed it)",
        "the same bound, declared undecidable by design: on this task the Bayes entropy is a "
        "function of the position",
        "the verdict 'inconclusive, the null passes' gave no reason a reader could check; since "
        "the position fixes the task's entropy, no run on it can decide the claim",
        "inconclusive, the null passes (quick)",
        "inconclusive, undecidable by design (quick)",
    ),
    RuleChange(
        "2026-12-04",
        "0ebf0d9",
        ("value-manifold-hmm-leading-component",),
        "the absolute Spearman correlation of the first principal component, standardised, with "
        "the entropy at least 0.8, and 0.1 above every null",
        "the authors' own protocol: the best of the first five principal components by absolute "
        "Pearson correlation, within positions, above the stronger of two nulls (random "
        "initialisation, and the 99th percentile of 200 shuffles within positions)",
        "the authors' analysis of the HMM takes the best of the first five components, and the "
        "position explains part of the entropy: the claim is about what the position does not "
        "explain",
        "not reproduced (quick, 0.040)",
        "reproduced (quick, 0.486 against 0.036)",
        moved={"value-manifold-hmm-leading-component": Move(
            "not reproduced", "reproduced", "quick")},
        in_brief="judged by the authors' own protocol (the best of the first five components, "
        "beyond what the position explains) instead of the first component alone",
    ),
    RuleChange(
        "2026-12-04",
        "0ebf0d9",
        ("routing-gradients-fade",),
        "the ratio's fall at most 0.5, on one probe batch",
        "the 95 % interval of the fall over 8 disjoint probe batches at most 0.5",
        "one probe batch gives a point without its sampling spread",
        "not reproduced (quick)",
        "not reproduced (quick)",
    ),
    RuleChange(
        "2026-12-04",
        "0ebf0d9",
        (
            "mamba-bijection-matches-bayes",
            "lstm-bijection-matches-bayes",
            "mamba-hmm-tracks-bayes",
            "mamba-standard-deep-hmm-tracks-bayes",
            "mamba-authors-deep-hmm-tracks-bayes",
            "lstm-hmm-fails",
        ),
        "a failure counts once the run has trained on 20 % of the authors' training sequences",
        "a failure counts once the run has trained for three times the steps that the "
        "transformer needed to solve the same task in the same run",
        "on two CPU cores the authors' training budgets are out of reach for every "
        "architecture; the transformer's own solving time in the same run is the budget the "
        "claim takes for granted",
        "inconclusive, short budget (quick)",
        "inconclusive, the transformer did not solve the task in its steps (quick)",
    ),
    RuleChange(
        "2026-12-04",
        "9394cdd",
        (
            "bijection-separate-matches-bayes",
            "bijection-shared-matches-bayes",
            "transformer-bijection-matches-bayes",
            "mamba-bijection-matches-bayes",
            "lstm-bijection-matches-bayes",
        ),
        "mean absolute error at most 0.05 bits",
        "the error closes at least 95 % of the gap from the context-free floor's error to 0",
        "0.05 bits was a bare number; an effect size against the row's own null is not",
        "reproduced (quick)",
        "reproduced (quick)",
    ),
    RuleChange(
        "2026-12-04",
        "9394cdd",
        ("mlp-bijection-fails-ch4", "mlp-bijection-fails-ch5", "lstm-hmm-fails"),
        "within 0.05 bits of the null",
        "closing at most 5 % of the null's gap to the optimum",
        "the mirror of the rule for success, as an effect size against the null",
        "reproduced (quick)",
        "reproduced (quick)",
    ),
    RuleChange(
        "2026-12-04",
        "9394cdd",
        ("transformer-recall-solves",),
        "accuracy at least 0.99",
        "the accuracy closes at least 95 % of chance's gap to 1",
        "one rule for every claim that a model solves a task, as an effect size against chance",
        "reproduced (quick)",
        "reproduced (quick)",
    ),
    RuleChange(
        "2026-12-04",
        "9394cdd",
        ("mamba-recall-solves",),
        "accuracy within 5 % of the paper's 0.978",
        "the accuracy closes at least 95 % of chance's gap to 1",
        "one rule for every claim that a model solves a task, as an effect size against chance",
        "reproduced (quick, 0.940; decide, 0.960)",
        "inconclusive, still learning (quick, 0.940, below the bar of 0.956); reproduced "
        "(decide, 0.960)",
        moved={"mamba-recall-solves": Move("reproduced", "inconclusive", "quick")},
        in_brief="the bar of every claim that a model solves a task (95 % of chance's gap to 1) "
        "replaced 5 % around the paper's number; the quick run, still learning, falls short of "
        "it, and the decide run clears it",
    ),
    RuleChange(
        "2026-12-04",
        "9394cdd",
        ("em-faster-share",),
        "faster on 5 of 5 seeds",
        "the share of faster seeds judged by its one-sided 95 % Clopper–Pearson bounds against "
        "one half",
        "a count of seeds is judged by its interval, which is the seeds' sign test (5 of 5 "
        "happens by chance once in 32)",
        "reproduced (quick)",
        "reproduced (quick, lower bound 0.549)",
    ),
    RuleChange(
        "2026-12-04",
        "9394cdd",
        ("attention-first-authors-setting",),
        "attention first on 5 of 5 seeds; a run that did not solve the task undecided for "
        "budget",
        "the share of seeds by its one-sided 95 % bounds against one half; an attention that "
        "never leaves uniform at the authors' own full setting makes the claim undecidable by "
        "design",
        "the authors' runs (one sequence of 2,000 symbols, their rates, 1,000 full-batch steps) "
        "are this run: more training at that setting memorises the sequence rather than "
        "deciding the claim",
        "inconclusive, undecided for budget (quick)",
        "inconclusive, undecidable by design (quick)",
    ),
    RuleChange(
        "2026-12-04",
        "9394cdd",
        ("attention-first-fresh",),
        "the share's two-sided 95 % Clopper–Pearson interval above one half",
        "its one-sided 95 % bounds above one half (the ends of the two-sided 90 % interval)",
        SEED_SHARE_LEVEL_REASON,
        "inconclusive (quick, 7 of 8 seeds: the interval 0.473 to 0.997 holds one half)",
        "reproduced (quick, 7 of 8 seeds: bounds 0.529 to 0.994)",
        moved={"attention-first-fresh": Move("inconclusive", "reproduced", "quick")},
        in_brief="a share of seeds is judged by a one-sided test, since the claim has a "
        "direction; 7 of 8 seeds then clear one half",
    ),
    RuleChange(
        "2026-12-04",
        "9394cdd",
        ("precision-after-settling",),
        "the error falls by a factor of at least 2 after the attention settles",
        "the 95 % interval of that factor over 8 disjoint parts of the evaluation sequences "
        "above 1 (the null: no gain)",
        "2 was a bare number; the null is no gain after settling, judged on the value's "
        "interval",
        "not reproduced (quick, 1.06)",
        "reproduced (quick, 1.053 to 1.070)",
        moved={"precision-after-settling": Move("not reproduced", "reproduced", "quick")},
        in_brief="a twofold gain, a bar that no paper or null gave, became any gain beyond the "
        "measurement's spread",
    ),
    RuleChange(
        "2026-12-04",
        "a45d6eb",
        ("em-speedup", "em-steps-to-sgd-final"),
        "the value pooled over the seeds within 25 % of the paper's number",
        "the 95 % bootstrap interval over the seeds meets that window",
        "one value over five seeds hides their spread",
        "reproduced (quick)",
        "reproduced (quick: intervals 1.61 to 3.03 and 330 to 621)",
    ),
    RuleChange(
        "2026-12-04",
        "a45d6eb",
        ("value-manifold-pc1-share-separate", "value-manifold-pc1-share-shared"),
        "the value within 10 % of the paper's 0.87",
        "the 95 % t-interval over 8 probe parts meets that window",
        "one probe gives a value without its sampling spread",
        "not reproduced (quick)",
        "not reproduced (quick: 0.326 to 0.340 and 0.206 to 0.217)",
    ),
    RuleChange(
        "2026-12-05",
        "after 3e9f893",
        ("em-coherent-value-paths",),
        "EM-like's straightness at the end of training above SGD's at its end",
        "EM-like's straightness up to the step at which it reaches SGD's final loss, above "
        "SGD's (at equal loss)",
        "at their ends the two schedules sit at different losses, so the comparison mixed the "
        "shape of the paths with how far each had gone; the paper compares them as training "
        "goes",
        "not reproduced (quick and decide: 0.881 against SGD's 0.955)",
        "reproduced (quick and decide: 0.961 against 0.955)",
        {"em-coherent-value-paths": ("79ae9a1ecc098764", "b8d1ef404d3f89c3")},
        moved={"em-coherent-value-paths": Move(
            "not reproduced", "reproduced", "quick and decide")},
        in_brief="the two schedules' value paths are compared at equal loss, as the paper "
        "compares them, not at the ends of runs that reach different losses",
    ),
    RuleChange(
        "2026-12-05",
        "after 3e9f893",
        ("hmm-length-generalisation",),
        "the per-sample error at 50 observations at most half that of the predictor that "
        "ignores the observations",
        "the step in the error at the training length at most the largest such step inside "
        "the second half of the training length",
        "the paper's words are 'without discontinuity': a step at the training length, judged "
        "against the steps where nothing changes; the old bar judged the error's size instead",
        "inconclusive, short budget (quick, 0.126); not reproduced (decide, 0.106)",
        "inconclusive, short budget (quick: a step of 0.056 bits against 0.0018 inside); not "
        "reproduced (decide: 0.045 against 0.0015)",
        {"hmm-length-generalisation": ("5b9c74fdaa0bba1c", "739361f2b3cc5076")},
    ),
    RuleChange(
        "2026-12-05",
        "after 3e9f893",
        (
            "key-orthogonality-separate",
            "key-orthogonality-shared",
            "key-signed-cosine-shared",
            "value-manifold-pc1-share-separate",
            "value-manifold-pc1-share-shared",
        ),
        "no budget check: a run on 192,000 bijection sequences could refute the claim",
        "a verdict against needs 20 % of the authors' 12,800,000 bijection training sequences, "
        "as the failure claims do",
        "a geometry that has not formed in a run on 1.5 % of the authors' training does not "
        "refute a claim about what training forms",
        "not reproduced (quick and decide, all five)",
        "inconclusive, undecided for budget (quick and decide, all five)",
        {
            "key-orthogonality-separate": ("31d5305a90a651c6", "17e48bc010a51133"),
            "key-orthogonality-shared": ("d25416ca4d9156e3", "983406bbce95615a"),
            "key-signed-cosine-shared": ("5d603b66ded8c5e5", "06039dfd04395f5d"),
            "value-manifold-pc1-share-separate": ("b3c9bd6d54aa272f", "81d3385b446766dd"),
            "value-manifold-pc1-share-shared": ("fcb09a000bbbfc4b", "fd25cb6312310ccd"),
        },
        moved={
            key: Move("not reproduced", "inconclusive", "quick and decide")
            for key in (
                "key-orthogonality-separate",
                "key-orthogonality-shared",
                "key-signed-cosine-shared",
                "value-manifold-pc1-share-separate",
                "value-manifold-pc1-share-shared",
            )
        },
        in_brief="a verdict against a geometry that training forms needs a fifth of the "
        "authors' training; these runs had 1.5 % of it",
    ),
    RuleChange(
        "2026-12-05",
        "after 3e9f893",
        ("value-manifold-hmm-leading-component",),
        "the best of the first five components, beyond position, above its nulls; the task "
        "solved when the error of the mean curve is at most 0.05 bits",
        "the same, but partly when the component is not the first; the task solved when the "
        "per-sample error is at most half that of the predictor that ignores the observations",
        "the chosen component is the fifth, which carries a few per cent of the variance, so "
        "it carries the claim partly at best; and the predictor that ignores the observations "
        "passes the check on the mean curve by construction, so that check could not fail",
        "reproduced (quick, 0.486; decide, 0.576)",
        "partly (quick: the fifth component, 9.0 % of the variance; decide: the fifth, 4.3 %)",
        {"value-manifold-hmm-leading-component": ("fb379644c76d55b9", "535944ed174dfa11")},
        moved={"value-manifold-hmm-leading-component": Move(
            "reproduced", "partly", "quick and decide")},
        in_brief="the component that orders the values by entropy is the fifth, which carries "
        "a few per cent of the variance, so the claim holds in part",
    ),
    RuleChange(
        "2026-12-05",
        "after 3e9f893",
        (
            "transformer-bijection-matches-bayes",
            "mamba-bijection-matches-bayes",
            "lstm-bijection-matches-bayes",
            "transformer-hmm-tracks-bayes",
            "transformer-recall-solves",
            "mamba-recall-solves",
        ),
        "the mean over the seeds, judged by the claim's rule",
        "each seed judged by that rule, and the share of seeds that pass by its one-sided 95 % "
        "bounds against one half; 3 seeds in the quick profile, 6 in the decide profile",
        "a mean over two or three seeds is dragged by one of them (Mamba's recall, 0.940, had a "
        "seed at 0.88) and hides a seed that fails; the claim is about what a run does",
        "reproduced for all six (decide); reproduced for the transformer and Mamba on "
        "bijections and the transformer on recall, inconclusive for the other three (quick)",
        "decide, 6 seeds: reproduced, 6 of 6 seeds (bounds 0.61 to 1.00), for the transformer, "
        "Mamba and the LSTM on bijections and the transformer on HMM filtering and on recall; "
        "inconclusive for Mamba on recall, 5 of 6 seeds (bounds 0.42 to 0.99), its loss still "
        "falling; quick not recorded",
        {
            "transformer-bijection-matches-bayes": ("51a41c54446d3528", "8e201ff3ff1a4f7b"),
            "mamba-bijection-matches-bayes": ("9e29434ee3557947", "1a5fa4d54e8d3262"),
            "lstm-bijection-matches-bayes": ("d257d1e1b4fae9fe", "0228f36f46e1f09e"),
            "transformer-hmm-tracks-bayes": ("53e601dc4de5b2a2", "7385dcad48ebf309"),
            "transformer-recall-solves": ("a8b34d817131f5e8", "fdf538c4beb30ad8"),
            "mamba-recall-solves": ("7df79bd4619a235f", "c9aa118bd79a7174"),
        },
        moved={"mamba-recall-solves": Move("reproduced", "inconclusive", "decide")},
        in_brief="each seed is judged, then the share of seeds that pass; Mamba passes recall "
        "on 5 of 6 seeds, too few to decide",
    ),
    RuleChange(
        "2026-12-05",
        "after 3e9f893",
        (
            "mamba-hmm-tracks-bayes",
            "mamba-standard-deep-hmm-tracks-bayes",
            "mamba-authors-deep-hmm-tracks-bayes",
        ),
        "three claims, each judged on its mean over the seeds: the standard Mamba at depth 1 "
        "and at depth 2, and the authors' Mamba at depth 2",
        "one claim: the authors' Mamba at depth 2 (the HMM model of the third version of "
        "Paper I), judged seed by seed, with the standard Mamba at depths 1 and 2 shown beside "
        "it; the other two rows retired",
        "three rows for one claim of the paper gave three verdicts (decide: against, against, "
        "and for on a mean of two seeds, one of which, at 0.140, fails)",
        "inconclusive for all three (quick); not reproduced, not reproduced, reproduced "
        "(decide: 0.375, 0.374, 0.0926)",
        "inconclusive (decide, 6 seeds: the authors' Mamba at depth 2 passes on 4 of 6, bounds "
        "0.27 to 0.94); quick not recorded",
        {
            "mamba-hmm-tracks-bayes": ("f529d2d370efa50f", "3755661bc423d390"),
            "mamba-standard-deep-hmm-tracks-bayes": ("162ce9bc7b5906c7", None),
            "mamba-authors-deep-hmm-tracks-bayes": ("2c7e92b88512d534", None),
        },
        moved={"mamba-hmm-tracks-bayes": Move("not reproduced", "inconclusive", "decide")},
        in_brief="three rows for one claim became one, the authors' Mamba judged seed by "
        "seed; it passes on 4 of 6 seeds, too few to decide",
    ),
    RuleChange(
        "2026-12-05",
        "after 3e9f893",
        ("lstm-hmm-fails", "mlp-bijection-fails-ch5"),
        "the mean over the seeds at the null; the MLP without a budget check",
        "each seed at the null, and the share of such seeds by its one-sided 95 % bounds; the "
        "MLP's failure counted only after three times the transformer's steps",
        "a failure claim, like a success claim, is about every run; and a failure needs a run "
        "that had the time to succeed",
        "inconclusive (quick), reproduced (decide) for the LSTM; reproduced (quick and decide, "
        "1.09) for the MLP",
        "reproduced for both (decide, 6 of 6 seeds, bounds 0.61 to 1.00); quick not recorded",
        {
            "lstm-hmm-fails": ("8063828e50471a68", "b290dd5cfb83c849"),
            "mlp-bijection-fails-ch5": ("f26f828e4a12de2e", "73bb4d630112a77a"),
        },
    ),
    RuleChange(
        "2026-12-05",
        "after 3e9f893",
        ("lstm-recall-fails",),
        "the mean accuracy over the seeds at most that of guessing among the stored values; no "
        "budget check",
        "each seed's accuracy at most that, and the share of such seeds by its one-sided 95 % "
        "bounds; counted only after three times the steps the transformer needed to solve "
        "recall",
        "without a budget check, a run too short to learn could reproduce the failure",
        "reproduced (quick and decide, 0.122)",
        "reproduced (decide, 6 of 6 seeds, bounds 0.61 to 1.00); quick not recorded",
        {"lstm-recall-fails": ("ff79d84f9029f082", "8985ba66ca1c6233")},
    ),
    RuleChange(
        "2026-12-05",
        "after 8444875",
        (
            "value-manifold-entropy-order-separate",
            "value-manifold-entropy-order-shared",
            "value-manifold-entropy-order-bijection",
        ),
        "two claims, one per layout of bijections without replacement, undecidable by design "
        "(there the entropy is a function of the position)",
        "one claim on bijections whose keys are drawn with replacement (the default of the "
        "authors' generator), judged as the HMM's: the best of the first five components beyond "
        "position, against shuffles within positions and random initialisation, partly when "
        "not the first",
        "'undecidable by design' was not true: the authors' own option, keys drawn with "
        "replacement, makes the entropy vary at a fixed position, so a protocol exists that "
        "separates the claim from its null; the new claim was registered before any run of "
        "that task",
        "inconclusive, undecidable by design (quick and decide, both rows)",
        "inconclusive, undecided for budget (decide: the model did not learn the task, a "
        "per-sample error of 1.10 bits against 0.95 for the predictor that ignores the "
        "observations; its correlation beyond position 0.244 against 0.061, on the second "
        "component)",
        {
            "value-manifold-entropy-order-separate": ("01d1bc84f2d6ebf8", None),
            "value-manifold-entropy-order-shared": ("dd5be3e609f6820f", None),
            "value-manifold-entropy-order-bijection": (None, "1368da862b73c45c"),
        },
    ),
    # chapters 2 and 3, session of 2026-12-05 afternoon
    RuleChange(
        "2026-12-05",
        "after 43999ad",
        ("loop-beyond-capacity",),
        "the mean over the seeds of the coupled run's margin over the better sequential order "
        "at least 0",
        "seed by seed: each seed's margin at least 0, and the share of such seeds by its "
        "one-sided 95 % Clopper–Pearson bounds against one half",
        "a mean over seeds let one seed's negative margin pass unseen; the claim is about what "
        "the loop does in a run, so each seed is judged and the ledger judges their share. The "
        "notebook already recorded each seed's margin; the rule was changed with those values "
        "in the quick build's results",
        "reproduced (quick: mean margin 0.085)",
        "reproduced (quick: 7 of 8 seeds, bounds 0.53 to 0.99; seed 0 at -0.014)",
        {"loop-beyond-capacity": ("868096bda3c0b435", "8dac5ddf946f1595")},
    ),
    RuleChange(
        "2026-12-05",
        "after 43999ad",
        ("em-lower-entropy", "em-higher-accuracy", "em-closer-to-bayes"),
        "EM-like's mean over the five seeds (of its final entropy, accuracy, or gap to the "
        "exact predictor) beyond SGD's mean",
        "seed by seed, paired (a seed fixes both runs' sequence and initial weights): each "
        "seed's difference, EM-like minus SGD, on the claimed side of 0, and the share of such "
        "seeds by its one-sided 95 % bounds against one half",
        "means over five seeds, with no value per seed, let one seed decide; the runs are "
        "paired by seed, so the paired differences are what the claims compare",
        "reproduced (quick and decide, the same runs: entropy 1.952 against 2.061, accuracy "
        "0.264 against 0.202, gap 0.102 against 0.201)",
        "reproduced, all three (quick, 5 of 5 seeds each, bounds 0.55 to 1.00: entropy "
        "differences -0.149 to -0.059, accuracy +0.032 to +0.082, gap -0.110 to -0.085; the "
        "decide profile runs the same five seeds and gave the same numbers)",
        {
            "em-lower-entropy": ("1f46c5f41352c013", "24e271686512d2ec"),
            "em-higher-accuracy": ("935f39638fd5f7a1", "5cfca325f6ff9e21"),
            "em-closer-to-bayes": ("4f8ef952584ab0c0", "04a9e4eb2b03a8c1"),
        },
    ),
    RuleChange(
        "2026-12-05",
        "after 43999ad",
        ("em-longer-value-paths",),
        "the EM-like prototypes' path length over the whole run, over SGD's, at least 1 (the "
        "mean over the seeds)",
        "seed by seed, at equal loss: each seed's EM-like path length up to the step at which "
        "it reaches its seed's SGD final loss, over SGD's whole path length, at least 1, and "
        "the share of such seeds by its one-sided 95 % bounds against one half; the ratio over "
        "the whole run shown beside, not judged",
        "Paper II (its figure of the value trajectories in principal components) says EM-like "
        "paths are longer and more coherent, SGD's more diffuse. Over a whole run of 1,000 "
        "steps a ten times larger value rate makes the value paths longer by itself, so that "
        "ratio (6.8) could not fail. At equal loss it can: a rate raised on every group alike "
        "traces the same path, only faster (in the limit of small steps), so a longer path at "
        "equal loss says that the values, not the routing, did the work, which is the EM "
        "reading's claim",
        "reproduced (quick and decide, the same runs: ratio over the whole run 6.76)",
        "reproduced (quick: 5 of 5 seeds, bounds 0.55 to 1.00; ratios at equal loss 2.77 to "
        "3.39; decide, the same runs, the same)",
        {"em-longer-value-paths": ("001861b775755f45", "81e68514234bf30f")},
    ),
    RuleChange(
        "2026-12-05",
        "after 43999ad",
        ("em-coherent-value-paths",),
        "EM-like's mean straightness at equal loss at least SGD's mean",
        "seed by seed, paired: each seed's EM-like straightness at equal loss minus its SGD "
        "run's at least 0, and the share of such seeds by its one-sided 95 % bounds against "
        "one half",
        "a mean difference of 0.006 over five seeds, with no spread, cannot tell a consistent "
        "effect from one seed's",
        "reproduced (quick and decide, the same runs: 0.961 against 0.955)",
        "inconclusive, undecided for budget (quick: 4 of 5 seeds, bounds 0.34 to 0.99; "
        "differences -0.019 to +0.033, mean +0.006; decide, the same runs, the same)",
        {"em-coherent-value-paths": ("b8d1ef404d3f89c3", "7fedb4784a14f982")},
        moved={"em-coherent-value-paths": Move(
            "reproduced", "inconclusive", "quick and decide")},
        in_brief="judged seed by seed: 4 of 5 seeds have the straighter path under EM-like, "
        "too few to decide, and the mean lead was 0.006",
    ),
    RuleChange(
        "2026-12-05",
        "after 43999ad",
        ("attention-first-fresh", "attention-first-fresh-sgd"),
        "the share of seeds whose attention is half-way to its final state before the values, "
        "on the raw records (one-sided 95 % bounds against one half)",
        "the same share on trajectories averaged over the last tenth of the run's records (a "
        "trailing mean over 8 records, 200 steps, in quick and decide; the final state the mean "
        "of the last 8), for both schedules; the raw share shown beside",
        "at a value rate of 3.0 the EM-like values jitter from record to record (their "
        "distance between the last two records is a quarter of their distance at the start), "
        "which alone keeps them far from the last record and delays their raw half-way point; "
        "a time average takes the jitter out. The window is the tenth of the run that the "
        "check of a flattened loss averages over, fixed before this run",
        "reproduced (EM-like: quick 7 of 8 seeds, decide 22 of 24); inconclusive (SGD: quick "
        "3 of 8, decide 8 of 24)",
        "inconclusive, undecided for budget (quick: EM-like 3 of 8 seeds, SGD 3 of 8, bounds "
        "0.11 to 0.71; unaveraged still 7 and 3 of 8); not reproduced, evidence against (the "
        "decide profile rerun with this change, 24 seeds: EM-like 7 of 24, bounds 0.15 to "
        "0.48; SGD 6 of 24, bounds 0.11 to 0.43; the values half-way first on 17 and 15)",
        {
            "attention-first-fresh": ("b8316f897ae9908d", "34c47c8480229689"),
            "attention-first-fresh-sgd": ("c54a88630d398737", "0b81c417d9c42450"),
        },
        moved={
            "attention-first-fresh": Move("reproduced", "not reproduced", "decide"),
            "attention-first-fresh-sgd": Move("inconclusive", "not reproduced", "decide"),
        },
        in_brief="the trajectories were averaged over the last tenth of the run to take out "
        "the values' jitter; the values were then half-way first on most seeds",
    ),
    # chapters 4 and 5, session of 2026-12-05 afternoon
    RuleChange(
        "2026-12-05",
        "after 43999ad",
        ("bijection-separate-matches-bayes", "bijection-shared-matches-bayes"),
        "seed 0's error at the key positions closing 95 % of the context-free floor's",
        "seed by seed (3 seeds in quick, 6 in decide, each with its own initialisation and "
        "data): each seed's error closing 95 % of the floor's, and the share of such seeds by "
        "its one-sided 95 % bounds against one half; the training check on the seed whose "
        "loss fell most over its last tenth. The separate layout's seeds are the constant-rate "
        "runs of part (g) (800 steps in quick, 1,500 in decide), which the chapter trains on "
        "every seed anyway; the shared layout's repeat the training of part (a)",
        "a verdict on a trained model rested on one seed; the separate layout is judged on the "
        "runs that part (g) needs on every seed, so that the quick book stays within its time",
        "reproduced (decide: 0.018 and 0.022 bits against floors of 1.5 bits)",
        "reproduced for both (decide: 6 of 6 seeds each; errors at the key positions 0.012 to "
        "0.018 and 0.022 to 0.023 bits against floors of 1.14 and 1.34 bits)",
        {
            "bijection-separate-matches-bayes": ("72a92ef206c0148e", "09d47b47c83acc76"),
            "bijection-shared-matches-bayes": ("319d663d37a52d97", "751fb74b91409088"),
        },
    ),
    RuleChange(
        "2026-12-05",
        "after 43999ad",
        ("hmm-per-sample-tracks-bayes",),
        "seed 0's per-sample error at most half that of the predictor that ignores the "
        "observations",
        "the same bar seed by seed, and the share of seeds by its one-sided 95 % bounds "
        "against one half; the bar named, and its meaning stated in the claim: closing at "
        "least half of that predictor's per-sample error, weaker than matching, since no paper "
        "states a per-sample size",
        "one seed, and a bar that read as a bare number",
        "reproduced (decide: 0.083 bits against 0.190 for the predictor that ignores the "
        "observations)",
        "reproduced (decide: 6 of 6 seeds, per-sample errors 0.083 to 0.085 bits against "
        "0.190)",
        {"hmm-per-sample-tracks-bayes": ("b5ee85db3d830071", "7d19da62b4b782a9")},
    ),
    RuleChange(
        "2026-12-05",
        "after 43999ad",
        ("hmm-length-generalisation",),
        "seed 0's step in the error at the training length (the mean absolute error of the "
        "entropy over the 5 observations after it, minus the 5 before) at most the largest "
        "such step inside the second half of the training length",
        "the authors' own test of length generalisation: the mean KL divergence to the Bayes "
        "posterior at the longer test lengths below twice that at the training length, seed "
        "by seed, and the share of seeds by its one-sided 95 % bounds; the step in the error, "
        "over its null, shown beside",
        "positions past the training length have untrained rows in the learned table of "
        "positions, so some step at the boundary is forced by construction, in the authors' "
        "model as in this one: no model of this kind can pass the step's null (the steps "
        "inside the training length). The authors test length generalisation by the ratio of "
        "the errors, with their bar of 2; and the old rule used one seed",
        "not reproduced (decide: a step of 0.045 bits against 0.0015 inside)",
        "reproduced (decide: KL ratios of 1.06 to 1.47 against the authors' bar of 2, on 6 of "
        "6 seeds; the step at the training length, shown beside, remains)",
        {"hmm-length-generalisation": ("739361f2b3cc5076", "7d8c8b97bb5669d1")},
        moved={"hmm-length-generalisation": Move("not reproduced", "reproduced", "decide")},
        in_brief="judged by the authors' own test (the error past the training length within "
        "twice the error at it) instead of a step at the boundary that a learned table of "
        "positions forces on any model",
    ),
    RuleChange(
        "2026-12-05",
        "after 43999ad",
        ("value-manifold-hmm-leading-component",),
        "seed 0's best of the first five components, its correlation within positions above "
        "the stronger of its nulls; partly when that component is not the first",
        "seed by seed: each seed's correlation within positions minus the stronger of its own "
        "nulls above 0, and the share of seeds by its one-sided 95 % bounds; the task solved "
        "on every seed; partly when any seed's component is not the first (the reason names "
        "the worst seed's component and its share of the variance)",
        "one seed",
        "partly (decide: 0.635 against 0.036, on the fifth component, 4.3 % of the variance)",
        "partly (decide: 6 of 6 seeds above their nulls; the worst seed's component is the "
        "fifth, 3.1 % of the variance)",
        {"value-manifold-hmm-leading-component": ("535944ed174dfa11", "05927d6e12040232")},
    ),
    RuleChange(
        "2026-12-05",
        "after 43999ad",
        ("routing-gradients-fade",),
        "on seed 0's run, whose rate decays to 0, the gradient ratio at the end over its peak "
        "(both on the same probe batch), its 95 % interval over 8 parts at most 0.5; checks: "
        "loss flattened, task solved",
        "on runs at a constant rate (3 seeds of 800 steps in quick, 6 of 1,500 in decide; "
        "checkpoints spaced geometrically early and 11 in quick or 21 in decide spread evenly "
        "over the second half), the peak chosen on one probe batch and the fall measured on a "
        "second; each seed passes when its fall's 95 % interval over 8 parts lies below 1, the "
        "null of a constant ratio; the share of seeds by its one-sided 95 % bounds; checks: "
        "loss flattened and task solved on every seed, and a budget check",
        "a fall measured under a rate decaying to zero shows the schedule, not the dynamics; "
        "picking the peak among noisy checkpoints makes a fall by itself; 0.5 was no paper's "
        "number and no null's (the null is a constant ratio, 1); one seed; and a verdict "
        "against at 1.5 % of the authors' budget had no budget check",
        "not reproduced (decide: 0.61, interval 0.59 to 0.63)",
        "reproduced (decide: 6 of 6 seeds with the fall's interval below 1; falls 0.84 to "
        "0.99, mean 0.902)",
        {"routing-gradients-fade": ("4bd317b1872b1806", "5245b74780e4acbd")},
        moved={"routing-gradients-fade": Move("not reproduced", "reproduced", "decide")},
        in_brief="measured on runs at a constant rate, on every seed, against the null of no "
        "fall instead of a bare factor of 0.5",
    ),
    RuleChange(
        "2026-12-05",
        "after 43999ad",
        ("precision-after-settling",),
        "on seed 0's run, whose rate decays to 0, the error at the attention's settling step "
        "over the final error, its 95 % interval over 8 parts above 1",
        "the same gain on runs at a constant rate with dense late checkpoints, seed by seed "
        "(each seed's interval above 1), and the share of seeds by its one-sided 95 % bounds; "
        "checks: loss flattened and task solved on every seed, and a budget check; the share "
        "of seeds whose attention settles before the precision shown beside",
        "the gain was the tail between the last two checkpoints of a rate decaying to zero, on "
        "one seed, with no budget check",
        "not reproduced (decide: 0.96, interval 0.96 to 0.97)",
        "inconclusive (decide: 1 of 6 seeds, the share's interval 0.01 to 0.58 holding one "
        "half, and a short budget)",
        {"precision-after-settling": ("62e1f90e1a3b8362", "6692f1ac72138997")},
        moved={"precision-after-settling": Move("not reproduced", "inconclusive", "decide")},
        in_brief="measured on runs at a constant rate instead of the tail of a rate decaying "
        "to zero; 1 of 6 seeds gains, on a short budget",
    ),
    RuleChange(
        "2026-12-05",
        "after 43999ad",
        ("key-orthogonality-authors-checkpoint",),
        "not a claim of the ledger: the authors' checkpoint was quoted beside the rows on key "
        "orthogonality",
        "a claim of its own: the mean absolute off-diagonal cosine of the authors' released, "
        "fully trained checkpoint below that of the same architecture at random initialisation",
        "the rows on this book's runs are undecided for budget (1.5 % of the authors' "
        "sequences), while the authors' own fully trained checkpoint decides the question; its "
        "numbers, from the authors' published protocols and results, were known when it was "
        "registered",
        "not recorded",
        "not reproduced (the authors' checkpoint: 0.465 against 0.147 at random "
        "initialisation)",
        {"key-orthogonality-authors-checkpoint": (None, "65d6f3f75108f840")},
    ),
    # the referee's reading of 2026-12-05 (helper-5, build d4ae431)
    RuleChange(
        "2026-12-05",
        "after cbf304e",
        ("hmm-mean-curve-matches-bayes",),
        "a row of its own: the error of the mean curve at most 0.05 bits (the quick profile's "
        "target), against the predictor that ignores the observations, whose error of the mean "
        "curve is 0 by construction",
        "retired: the error of the mean curve is shown beside the per-sample row, which "
        "separates the claim from that null",
        "the null passes the rule by construction, so the row could never decide anything, "
        "and its 0.05 was a bare target that no paper or null gave",
        "inconclusive (decide: 0.027 bits; the null passes the same rule)",
        "no row; the per-sample row stays reproduced (decide: 6 of 6 seeds)",
        {"hmm-mean-curve-matches-bayes": ("fc558448b50beeb5", None)},
    ),
    RuleChange(
        "2026-12-05",
        "after cbf304e",
        ("attention-first-authors-setting",),
        "an attention that never leaves uniform at the authors' own setting makes the claim "
        "undecidable by design",
        "undecided for budget, naming the setting that would decide: the authors' deep variant "
        "(4 layers, AdamW) on 6 seeds, which the paper profile runs",
        "'undecidable by design' holds only when no protocol, the authors' own options "
        "included, could separate the claim from its null; the authors' deep variant is such "
        "an option",
        "inconclusive, undecidable by design (decide: attention near uniform, 0.951)",
        "inconclusive, undecided for budget (decide: attention near uniform, 0.951)",
        {"attention-first-authors-setting": ("735adb81046a3d52", "083ee155f02b6061")},
    ),
    RuleChange(
        "2026-12-05",
        "after 346a788",
        ("loop-beyond-capacity",),
        "each seed's margin of the coupled run over the better sequential order, both at the "
        "end of the run (equal steps)",
        "each seed's margin of the coupled run at the switch (equal updates: each parameter "
        "updated as often as in a whole sequential run) over the better sequential order at "
        "its end; the margin at equal steps shown beside",
        "at equal steps the coupled run updates every parameter twice as often as a "
        "sequential run, so its lead could be the extra updates rather than the loop",
        "reproduced (quick: 7 of 8 seeds, bounds 0.53 to 0.99)",
        "inconclusive (quick: 6 of 8 seeds at equal updates, mean margin 0.061)",
        {"loop-beyond-capacity": ("8dac5ddf946f1595", "9010b07c07d57896")},
        moved={"loop-beyond-capacity": Move("reproduced", "inconclusive", "quick")},
        in_brief="the coupled run is compared at equal updates, since at equal steps it "
        "updates each parameter twice as often; 6 of 8 seeds then lead, too few to decide",
    ),
    RuleChange(
        "2026-12-05",
        "after e286c17",
        ("mlp-bijection-fails-ch4", "mlp-bijection-fails-ch5"),
        "the MLP's failure judged as a claim, and counted among the claims",
        "the same rule and verdict, on the basis 'control by construction', counted apart "
        "from the claims",
        "the MLP mixes no positions, so it cannot use the context whatever its training: its "
        "failure checks the task and the training, not a property of attention, and counting "
        "it as a reproduced claim inflated the tally",
        "reproduced (decide: chapter 4 error 1.14 bits against the floor's 1.14, chapter 5 "
        "every seed), evidence for",
        "reproduced (decide, the same numbers), control by construction",
        {
            "mlp-bijection-fails-ch4": ("6e4d8c938ffe18fb", "c670dcaca939c7df"),
            "mlp-bijection-fails-ch5": ("73bb4d630112a77a", "e9b5a518ef6ff539"),
        },
    ),
    RuleChange(
        "2026-12-05",
        "after e286c17",
        ("em-speedup", "em-steps-to-sgd-final"),
        "the 95 % bootstrap interval over the seeds meets the paper's number ± 25 %",
        "the interval meets the paper's number as stated: 2.3 ± 0.05 (its last digit) and "
        "430 ± 5 (about 430: the nearest ten), the precision kept with the number",
        "the 25 % had no stated basis; the interval over the seeds already carries their "
        "spread, so the window need only admit the values that the paper's text admits",
        "reproduced (decide: speed-up interval 1.61 to 3.03, steps 330 to 621)",
        "reproduced (decide: the same intervals meet 2.25 to 2.35 and 425 to 435)",
        {
            "em-speedup": ("1b35f33bff418956", "dedaa2450ca5be95"),
            "em-steps-to-sgd-final": ("c3a7f85812fabd96", "6ae1a5a755f28f8f"),
        },
    ),
    RuleChange(
        "2026-12-05",
        "after e286c17",
        ("value-manifold-pc1-share-separate", "value-manifold-pc1-share-shared"),
        "the interval over 8 probe parts meets 0.87 ± 10 %",
        "the interval meets the paper's stated range, 84 to 90 % (0.87 ± 0.03)",
        "the 10 % had no stated basis and admitted shares (0.78 to 0.84, 0.90 to 0.96) "
        "outside the range the paper states",
        "inconclusive (decide: separate 0.34, shared 0.16, short budget)",
        "inconclusive (decide: the same, short budget)",
        {
            "value-manifold-pc1-share-separate": ("81d3385b446766dd", "95bb574b0795f6b8"),
            "value-manifold-pc1-share-shared": ("fd25cb6312310ccd", "f11d6d252bd19520"),
        },
    ),
    RuleChange(
        "2026-12-05",
        "6122bbd",
        ("em-faster-share", "em-speedup", "em-steps-to-sgd-final", "em-lower-entropy",
         "em-higher-accuracy", "em-closer-to-bayes", "em-longer-value-paths",
         "em-coherent-value-paths", "attention-first-authors-setting"),
        "the decide profile trains chapter 3's reproduction on the authors' five seeds, as the "
        "quick profile does; these rows' shares of seeds and intervals over the seeds are "
        "taken over those five",
        "the decide profile trains twelve, the authors' five and seven more; the rules, "
        "their levels and the seeds on fresh sequences stay as they were",
        "as the change gives it: so that every share of seeds in the decide profile rests on "
        "at least six seeds. It was made after the five-seed decide results had been seen "
        "(the coherence row undecided on 4 of 5 seeds) and logged only later: the number of "
        "seeds is not part of a claim's registered rule, so the check of the rules did not "
        "ask for this entry",
        "decide, five seeds: reproduced for the share of faster runs, the lower entropy, the "
        "higher accuracy, the smaller gap to Bayes and the longer paths (5 of 5 seeds each), "
        "the speed-up (interval 1.61 to 3.03) and the steps (330 to 621); inconclusive for "
        "the coherent paths (4 of 5 seeds, interval 0.34 to 0.99) and the authors' setting "
        "(0 of 5; the attention stayed near uniform)",
        "decide, twelve seeds: every verdict as before; the five shares 12 of 12, the "
        "speed-up's interval 1.84 to 2.59 and the steps' 386 to 543; the coherent paths 9 of "
        "12 (interval 0.47 to 0.93) and the authors' setting 0 of 12, both still inconclusive",
        {
            "em-faster-share": ("3af185c5e1def311", "3af185c5e1def311"),
            "em-speedup": ("dedaa2450ca5be95", "dedaa2450ca5be95"),
            "em-steps-to-sgd-final": ("6ae1a5a755f28f8f", "6ae1a5a755f28f8f"),
            "em-lower-entropy": ("24e271686512d2ec", "24e271686512d2ec"),
            "em-higher-accuracy": ("5cfca325f6ff9e21", "5cfca325f6ff9e21"),
            "em-closer-to-bayes": ("04a9e4eb2b03a8c1", "04a9e4eb2b03a8c1"),
            "em-longer-value-paths": ("81e68514234bf30f", "81e68514234bf30f"),
            "em-coherent-value-paths": ("7fedb4784a14f982", "7fedb4784a14f982"),
            "attention-first-authors-setting": ("083ee155f02b6061", "083ee155f02b6061"),
        },
    ),
    RuleChange(
        "2026-12-06",
        "after 5bd32cd",
        ("precision-after-settling",),
        "guarded only by a solved task (the error at the key positions of the constant-rate "
        "runs)",
        "also by a regime: every seed's attention settled before the last fifth of the run "
        "(its settling step at most 0.8 of the steps), so that a tenth of training lies "
        "between the settling step and the end window the gain is measured against",
        "the attention settled inside the end window on every seed (at 1,312 to 1,500 of "
        "1,500 steps in decide), where the gain compares the end with itself; the row said "
        "more seeds would decide it, which would have ended at 'not reproduced' on runs that "
        "could not show the claim",
        "inconclusive (decide: 1 of 6 seeds, interval 0.01 to 0.58, short budget)",
        "inconclusive (decide: the attention settled only in the last fifth, at 1,500 of "
        "1,500 steps on its latest seed; a longer run, not more seeds, would decide)",
        {"precision-after-settling": ("6692f1ac72138997", "92437a888a640ecd")},
    ),
    RuleChange(
        "2026-12-06",
        "after 5bd32cd",
        ("lstm-hmm-fails",),
        "a failure counted after three times the transformer's steps with a flat loss",
        "also only where a recurrent model that routes by content (the authors' Mamba, which "
        "the paper finds calibrated on this task) left the plateau on every seed in the same "
        "budget: its per-sample error below 95 % of the plateau's, the bar at which the "
        "LSTM's failure ends",
        "both standard Mambas sit on the same plateau on every seed although the paper finds "
        "Mamba calibrated, so for recurrent models the transformer's budget did not tell "
        "'cannot' from 'has not yet'",
        "reproduced (decide: 6 of 6 seeds on the plateau)",
        "reproduced (decide: the authors' Mamba left the plateau on all 6 seeds, at most 0.140 "
        "bits against the plateau's 0.375); quick: inconclusive, as before, now because the "
        "authors' Mamba stays on the plateau there",
        {"lstm-hmm-fails": ("b290dd5cfb83c849", "697e0f78bdd070e4")},
    ),
    RuleChange(
        "2026-12-06",
        "after 5c72020",
        ("em-longer-value-paths",),
        "EM-like's prototype paths, up to the step at which it reaches its seed's SGD final "
        "loss, longer than SGD's whole paths, seed by seed (the null: a ratio of 1)",
        "the same, and partly unless every seed's ratio also exceeds what the schedule gives "
        "by itself: the ratio of the value rates (10) times EM-like's steps to the match over "
        "SGD's steps, the ratio at equal gradients, since each gradient step moves the values "
        "by the rate times the gradient",
        "the schedule alone beats the null of a ratio of 1 (a ten times larger value rate over "
        "about 430 of 1,000 steps gives about 4.3 at equal gradients), so a longer path by "
        "itself says nothing about the dynamics",
        "reproduced (decide: 12 of 12 seeds longer, EM-like over SGD 2.77 to 4.14)",
        "partly (decide: still 12 of 12 seeds longer, but 0.64 to 0.92 of what the rate and "
        "steps give by themselves, below 1 on every seed)",
        {"em-longer-value-paths": ("81e68514234bf30f", "3478251aaa0342e7")},
        moved={"em-longer-value-paths": Move("reproduced", "partly", "decide")},
        in_brief="a ten times larger value rate makes EM-like's paths longer by itself; they "
        "are longer, but less so than the rate alone would make them",
    ),
    RuleChange(
        "2026-12-06",
        "after 5c72020",
        ("attention-first-fresh", "attention-first-fresh-sgd"),
        "the share of seeds in which the attention is half-way to its final state first, on "
        "trajectories averaged over the last tenth of the records",
        "the share of seeds in which the attention settles first, settling timed as in "
        "chapter 4 (each record against the end window's mean state; settled from the first "
        "record after which the distance stays within the larger of a tenth of the start's and "
        "the end window's own jitter), with the half-way shares shown beside; guarded, as "
        "chapter 4's claim on precision, by every seed's attention having settled before the "
        "last fifth of the run (within the end window everything counts as settled)",
        "'half-way first' is not 'settles first', and the averaging, added after the results "
        "had been seen, moved the verdict under EM-like (unaveraged 22 of 24 seeds for, "
        "averaged 7 of 24); the rule now times settling as the ledger does elsewhere. The "
        "guard was added after a first decide run under the new measure (the attention first "
        "on 21 of 24 seeds under both schedules) showed both parts settling only at the edge "
        "of the end window (the attention at step 1,734 on average, the values at 1,810, of "
        "2,000), where the order is the window's",
        "not reproduced (decide: the attention half-way first on 7 of 24 seeds under EM-like, "
        "6 of 24 under SGD)",
        "inconclusive (decide: the attention settles first on 21 of 24 seeds under both "
        "schedules, but on its latest seed only at step 1,800 of 2,000, inside the last fifth; "
        "a longer run would decide)",
        {"attention-first-fresh": ("34c47c8480229689", "b28b287c0f034c10"),
         "attention-first-fresh-sgd": ("0b81c417d9c42450", "c0b88194570d1486")},
        moved={
            "attention-first-fresh": Move("not reproduced", "inconclusive", "decide"),
            "attention-first-fresh-sgd": Move("not reproduced", "inconclusive", "decide"),
        },
        in_brief="the order is timed by when each part settles, as in chapter 4, not by when "
        "it is half-way; the attention settles first on 21 of 24 seeds, but so late in the run "
        "that a longer run must decide",
    ),
    RuleChange(
        "2026-12-06",
        "after 5c72020",
        ("routing-gradients-fade",),
        "the share of seeds whose gradient ratio (the mean over the layers) at the end window "
        "over its peak (chosen on one probe batch among all checkpoints) has its 95 % interval "
        "over 8 parts of a second batch below 1",
        "the share of seeds on which, in every layer, the ratio's peak before the last tenth "
        "(chosen on the probe batch) stands above the largest ratio of the last tenth: the "
        "95 % interval of the end window's largest over the peak, over 8 parts of the second "
        "batch, below 1 in the worst layer",
        "at a constant rate the ratio jitters, and the peak was the largest of several late "
        "checkpoints, so an end below the peak (0.82 to 0.99 of it) came from the jitter; and "
        "the first layer's ratio rose",
        "reproduced (decide: 6 of 6 seeds, the end 0.82 to 0.99 of the peak)",
        "inconclusive (decide: on no seed does the worst layer fall beyond the end's jitter, "
        "the end window's largest over the earlier peak 1.07 to 1.29 at the upper bound; "
        "trained on 1.5 % of the authors' sequences, short of the 20 % from which a failure "
        "counts)",
        {"routing-gradients-fade": ("5245b74780e4acbd", "5f1fc2b526296397")},
        moved={"routing-gradients-fade": Move("reproduced", "inconclusive", "decide")},
        in_brief="the fall must exceed the jitter at the end of the run, in every layer; it "
        "does on no seed, after a training too short to count against the claim",
    ),
    RuleChange(
        "2026-12-07",
        "after 14a21e5",
        ("attention-first-authors-setting",),
        "what would decide it: the authors' deep variant, if its attention sharpens, on 6 "
        "seeds (the paper profile runs it)",
        "the same guard and rule; what would decide it: the authors' deep variant, if its "
        "attention sharpens, on 6 seeds, with its attention and values recorded over training, "
        "which no profile of this book runs (the paper profile records only its final losses, "
        "entropies and accuracies, on 5 seeds)",
        "the row's 'what would change it' named a run that the book does not make (the paper "
        "profile trains the deep variant but measures no order of settling)",
        "inconclusive (decide: 0 of 12 seeds; the attention stayed near uniform)",
        "inconclusive (decide: the same numbers and reason)",
        {"attention-first-authors-setting": ("083ee155f02b6061", "3e4f52af9d047b1c")},
    ),
    RuleChange(
        "2026-12-07",
        "after 7b7e95a",
        ("attention-first-authors-setting",),
        "what would decide it: the deep variant's run, judged by this row's half-way measure",
        "the same guard and rule; what would decide it: the deep variant's run with the order "
        "timed as the rows on fresh sequences time it (settling against the end window's "
        "jitter); the half-way measure stands only while the guard withholds the verdict",
        "the half-way measure is the one the ledger dropped for the rows on fresh sequences "
        "('half-way first' is not 'settles first'), so a deciding run must not be judged by "
        "it; the guard fires before the measure, so no verdict depends on it",
        "inconclusive (decide: 0 of 12 seeds; the attention stayed near uniform)",
        "inconclusive (decide: the same numbers and reason)",
        {"attention-first-authors-setting": ("3e4f52af9d047b1c", "af44c0b661ce2875")},
    ),
    # the referee's reading of 2026-12-07 (eight rows refused)
    RuleChange(
        "2026-12-07",
        "after 0c7270e",
        ("attention-first-fresh", "attention-first-fresh-sgd", "precision-after-settling"),
        "settling timed from the first record after which a part's distance to the end state "
        "stays within the larger of a tenth of its distance at the start and the end window's "
        "own jitter, wherever that record lies; guarded by every seed's attention settling "
        "before the last fifth of the run",
        "the same band, but a part has settled only where it stays in it from at least the end "
        "window's length before the window begins; a part that has not settled so counts as "
        "not settled: its step reads as the run's last, an attention not settled is never "
        "first (values not settled settle after a settled attention) and gains nothing after "
        "settling; the same guard, whose reason now says that the attention had not settled",
        "the band is as wide as the end window's largest distance, so every record of the "
        "window lies inside it and a part still drifting when the window begins settled there, "
        "whatever the length of the run: the settling steps followed the window (the attention "
        "at 1,500 to 1,800 of 2,000 steps, where the window begins at 1,825, and at 1,275 to "
        "1,350 of 1,500 in chapter 4, where it begins at 1,350), so a longer run could not "
        "decide these rows. A part seen at rest over a stretch as long as the window before it "
        "is settled at any run length; one that drifts into the window is not. A band fixed in "
        "advance, without the jitter, was not taken: it would count a part that jitters around "
        "where it has come to rest, as the values do at the larger value rate, as never "
        "settling, which would make the order a matter of noise",
        "inconclusive, all three (decide: the attention first on 21 of 24 seeds under EM-like "
        "and under SGD, its latest seed settled at 1,800 of 2,000 steps; chapter 4 its latest "
        "at 1,350 of 1,500, the gain on 2 of 6 seeds)",
        "inconclusive, all three, for the guard (decide, recomputed from its settling steps: "
        "the attention settled on 2 of 24 seeds under EM-like and 3 of 24 under SGD, the values "
        "on none, so the attention first on 2 and 3 of 24; in chapter 4 the attention settled "
        "on none of 6 seeds and the precision on 5, so the precision first on 5 of 6; a "
        "longer run would decide). The gain of each of chapter 4's seeds, whose attention no "
        "longer settles, is measured anew at the run's last step when the chapter is rerun",
        {
            "attention-first-fresh": ("b28b287c0f034c10", "d0f2a037d3521fdb"),
            "attention-first-fresh-sgd": ("c0b88194570d1486", "8c997adeabf1a8c7"),
            "precision-after-settling": ("92437a888a640ecd", "68de18d025cf1be6"),
        },
    ),
    RuleChange(
        "2026-12-07",
        "after 0c7270e",
        (
            "bijection-separate-matches-bayes",
            "bijection-shared-matches-bayes",
            "transformer-bijection-matches-bayes",
            "mamba-bijection-matches-bayes",
            "lstm-bijection-matches-bayes",
        ),
        "each seed's entropy error closing 95 % of the context-free floor's gap to 0, and the "
        "share of such seeds by its one-sided 95 % bounds against one half",
        "the same, and partly unless the share of seeds whose error is below 0.01 bits passes "
        "the same test: the size that the papers state and the authors' own pass bar",
        "closing 95 % of a floor of 1.1 to 1.3 bits admits an error of about 0.06 bits, while "
        "Paper I states 0.003 to 0.007 bits for the transformer, 0.010 for Mamba and 0.009 for "
        "the LSTM, the authors' released checkpoints hold 0.0067, 0.0133 and 0.0092, and "
        "their evaluation script of the bijection calls a model Bayesian only below 0.01 bits "
        "(partial below 0.1): a match at several times the stated size reproduces the effect, "
        "not its size",
        "reproduced, all five (decide: 6 of 6 seeds each closing the floor's gap)",
        "partly, all five (decide: seeds below 0.01 bits, separate layout 0 of 6, errors 0.012 "
        "to 0.018; shared layout 0 of 6, 0.022 to 0.023; chapter 5's transformer 0 of 6, "
        "0.013 to 0.015; Mamba 1 of 6, 0.0099 to 0.012; the LSTM 0 of 6, 0.012 to 0.017)",
        {
            "bijection-separate-matches-bayes": ("09d47b47c83acc76", "805d57930abd7b3a"),
            "bijection-shared-matches-bayes": ("751fb74b91409088", "f92c1a3352aadf99"),
            "transformer-bijection-matches-bayes": ("8e201ff3ff1a4f7b", "191562c6c53eeac2"),
            "mamba-bijection-matches-bayes": ("1a5fa4d54e8d3262", "3afd2c6dbedcf1c4"),
            "lstm-bijection-matches-bayes": ("0228f36f46e1f09e", "d0426d56462ba63d"),
        },
        moved={key: Move("reproduced", "partly", "decide") for key in (
            "bijection-separate-matches-bayes",
            "bijection-shared-matches-bayes",
            "transformer-bijection-matches-bayes",
            "mamba-bijection-matches-bayes",
            "lstm-bijection-matches-bayes",
        )},
        in_brief="a match with the Bayes entropy on bijections must also reach the size the "
        "papers state, an error below 0.01 bits, the authors' own pass bar; the runs close the "
        "floor's gap but stay at 0.01 to 0.02 bits",
    ),
    RuleChange(
        "2026-12-07",
        "after 0c7270e",
        ("coupled-specializes-further",),
        "the coupled run's final specialization above the better of the two ablations (one half "
        "frozen) on every seed",
        "the same, and partly unless the coupled run also leads the better sequential order "
        "(both halves trained, one after the other, so with no loop) on every seed at equal "
        "updates: the coupled run half-way, each parameter updated as often as in a whole "
        "sequential run, against that order's end",
        "the claim is Paper II's positive feedback, a loop between routing and values, but two "
        "trained halves against one frozen half measures capacity as much as the loop: the "
        "better sequential order, which has no loop, recovers 80 % of the coupled run's lead "
        "over the ablations. Restating the row as 'both halves trained beat one frozen' would "
        "make it true of any model with more trained parameters and no claim of the paper's; "
        "kept as the paper's claim, it holds only in part until the loop's own margin, which "
        "the row on the loop beyond capacity judges, is there on every seed",
        "reproduced (quick: the lowest seed's lead over the better ablation 0.398)",
        "partly (quick, rerun on this change's sources, the same numbers: at equal updates the "
        "coupled run leads the better sequential order on 6 of 8 seeds, the lowest seed 0.023 "
        "behind it)",
        {"coupled-specializes-further": ("b546f8ed2158c9f4", "f66bc88be73c9385")},
        moved={"coupled-specializes-further": Move("reproduced", "partly", "quick")},
        in_brief="the coupled run's lead over a frozen half is mostly capacity, which "
        "sequential training without a loop recovers in large part; beyond it, at equal "
        "updates, the loop leads on 6 of 8 seeds, not on every one",
    ),
    RuleChange(
        "2026-12-07",
        "after 0c7270e",
        (
            "key-orthogonality-separate",
            "key-orthogonality-shared",
            "key-signed-cosine-shared",
            "value-manifold-pc1-share-separate",
            "value-manifold-pc1-share-shared",
            "routing-gradients-fade",
        ),
        "a verdict against counts once the run has trained on 20 % of the authors' 12,800,000 "
        "bijection training sequences",
        "a verdict against counts once the run has trained three times the steps it needed to "
        "solve its task (its first checkpoint from which the error at the key positions stays "
        "within the solved bar of 0.05 bits; for the constant-rate runs, the latest seed's), "
        "so that at least two thirds of the run lie after solving; a run that did not record "
        "that step leaves such a verdict inconclusive and says so. Three is the multiple that "
        "chapter 5 already takes, three times the transformer's solve steps, now one multiple "
        "for the ledger",
        "20 % was a bare number that no paper, null or run gave; the claims are about what "
        "training forms once a model has solved its task, so the budget is measured in the "
        "run's own time to solve it, as chapter 5 measures a failure in the transformer's",
        "inconclusive, all six (decide: short budget, 192,000 sequences, 1.5 % of the authors')",
        "inconclusive, all six (decide: the runs did not record the step at which they solved "
        "the task, so no budget from the run itself is known; a rerun that records it decides "
        "whether they trained long enough)",
        {
            "key-orthogonality-separate": ("17e48bc010a51133", "efbc80b251045015"),
            "key-orthogonality-shared": ("983406bbce95615a", "d4b347ea0ee97d77"),
            "key-signed-cosine-shared": ("06039dfd04395f5d", "1501dd7f197b0870"),
            "value-manifold-pc1-share-separate": ("95bb574b0795f6b8", "b6b513fca9adc48a"),
            "value-manifold-pc1-share-shared": ("f11d6d252bd19520", "0d32988c964bf107"),
            "routing-gradients-fade": ("5f1fc2b526296397", "e75a2a75edb13b34"),
        },
    ),
    RuleChange(
        "2026-12-07",
        "after 0c7270e",
        (
            "attention-first-authors-setting",
            "hmm-length-generalisation",
            "key-orthogonality-authors-checkpoint",
        ),
        "the same rules, with the authors' length test, their random-init results and this "
        "book's deep sticky-chain model named by file or module in the null's and the other "
        "setting's words",
        "the same rules, named in words: the authors' test, the authors' results file, this "
        "book's deep sticky-chain model",
        "a reader's text names no file or module; the rules, nulls and values are unchanged",
        "the order of settling at the authors' setting inconclusive, length generalisation "
        "reproduced, the authors' checkpoint's key orthogonality not reproduced (decide)",
        "the same: inconclusive, reproduced, not reproduced (decide)",
        {
            "attention-first-authors-setting": ("af44c0b661ce2875", "627d66cf9bcff800"),
            "hmm-length-generalisation": ("7d8c8b97bb5669d1", "8d0100e027b525ea"),
            "key-orthogonality-authors-checkpoint": ("65d6f3f75108f840", "a9fc7737795754af"),
        },
    ),
    RuleChange(
        "2026-12-07",
        "after 0c7270e",
        ("lstm-recall-fails",),
        "in this log's words of 2026-12-05: each seed's accuracy at most that of guessing among "
        "the stored values",
        "each seed's accuracy strictly below that of guessing among the stored values, as the "
        "rule has judged since 2026-12-05",
        "the entry of 2026-12-05 said 'at most' where its rule compared strictly; the words are "
        "corrected here and the entry is left as it was written, so that the log only grows",
        "reproduced (decide)",
        "reproduced (decide)",
    ),
    RuleChange(
        "2026-12-07",
        "after 717e5c9",
        (
            "bijection-separate-matches-bayes",
            "bijection-shared-matches-bayes",
            "transformer-bijection-matches-bayes",
            "mamba-bijection-matches-bayes",
            "lstm-bijection-matches-bayes",
        ),
        "partly unless the share of seeds whose error is below 0.01 bits, the authors' pass bar, "
        "passes the share test",
        "partly unless the share of seeds within the size the paper states for the "
        "architecture, read at its stated precision, passes the share test: at most 0.0075 bits "
        "for the transformer (stated 0.003 to 0.007), 0.0105 for Mamba (0.010) and 0.0095 for "
        "the LSTM (0.009)",
        "a referee found one bar for three architectures stricter than the paper for Mamba, "
        "whose stated error is 0.010 bits and whose released checkpoint holds 0.0133, and looser "
        "than it for the transformer; each architecture is now held to its own stated size",
        "partly, all five (decide, before its rerun: seeds below 0.01 bits, 0, 0, 0, 1 and 0 of 6)",
        "partly, all five (the same decide results: seeds within the stated size, 0, 0, 0, 3 "
        "and 0 of 6; Mamba's errors run from 0.0099 to 0.012 bits)",
        {
            "bijection-separate-matches-bayes": ("805d57930abd7b3a", "7ca89c66ae3c4f52"),
            "bijection-shared-matches-bayes": ("f92c1a3352aadf99", "64e82696fac6680a"),
            "transformer-bijection-matches-bayes": ("191562c6c53eeac2", "02dccbac5b3cf904"),
            "mamba-bijection-matches-bayes": ("3afd2c6dbedcf1c4", "a2eb789d8edc8c18"),
            "lstm-bijection-matches-bayes": ("d0426d56462ba63d", "3d92889c0252efc3"),
        },
    ),
    RuleChange(
        "2026-12-07",
        "after 717e5c9",
        REGISTERED_KEYS,
        "a row left undecided for budget named, as what would change it, the training or the "
        "seeds its checks asked for, some read off the current share of seeds",
        "each of these rows registers the runs that decide it, smallest first: the chapter "
        "profile, its seeds and its steps, and the estimated cost; a row left undecided for "
        "budget names the next registered run, and where every registered run is made, says "
        "that a larger run must be registered before it runs. The seeds and steps are read from "
        "the profiles' settings by a test, and are part of each rule",
        "a referee found that 'about N seeds at this share' invites adding seeds until a share "
        "is significant; a run named before it runs cannot be chosen by its result. The decide "
        "runs were registered after a first decide run of each of these chapters; their reruns "
        "at this change are the registered runs, and the paper runs are registered before any ran",
        "the verdicts as the last builds judged them, inconclusive for every row left undecided "
        "for budget",
        "the same verdicts on the same results, inconclusive rows still inconclusive: "
        "registering a run changes what a row says would decide it, not its verdict",
        {
            "em-coherent-value-paths": ("7fedb4784a14f982", "8cedfc343c0eb499"),
            "attention-first-fresh": ("d0f2a037d3521fdb", "4771a1798f7c9224"),
            "attention-first-fresh-sgd": ("8c997adeabf1a8c7", "79926dffd261631a"),
            "bijection-separate-matches-bayes": ("7ca89c66ae3c4f52", "ed648fbc039e029e"),
            "bijection-shared-matches-bayes": ("64e82696fac6680a", "866d3b08ac23feb2"),
            "hmm-per-sample-tracks-bayes": ("7d19da62b4b782a9", "529ad2981f84641e"),
            "hmm-length-generalisation": ("8d0100e027b525ea", "f616ee95d9c4efed"),
            "key-orthogonality-separate": ("efbc80b251045015", "3d14ea8a89bbb07a"),
            "key-orthogonality-shared": ("d4b347ea0ee97d77", "e9186595c496afb8"),
            "key-signed-cosine-shared": ("1501dd7f197b0870", "ebdf24cfd99b537b"),
            "value-manifold-pc1-share-separate": ("b6b513fca9adc48a", "22105c8051a71e5d"),
            "value-manifold-pc1-share-shared": ("0d32988c964bf107", "416ed9e783da8585"),
            "value-manifold-entropy-order-bijection": ("1368da862b73c45c", "bad7183ebbc0c46a"),
            "value-manifold-hmm-leading-component": ("05927d6e12040232", "f8e97ea880184b28"),
            "routing-gradients-fade": ("e75a2a75edb13b34", "4e7bedff8e9cec01"),
            "precision-after-settling": ("68de18d025cf1be6", "552807064e753158"),
            "transformer-bijection-matches-bayes": ("02dccbac5b3cf904", "a1b576bb86e53e1f"),
            "mamba-bijection-matches-bayes": ("a2eb789d8edc8c18", "8e514afbc405d6bf"),
            "lstm-bijection-matches-bayes": ("3d92889c0252efc3", "9261cbc197ea510f"),
            "transformer-hmm-tracks-bayes": ("7385dcad48ebf309", "7a52c0f08cd0243f"),
            "mamba-hmm-tracks-bayes": ("3755661bc423d390", "63afbc8bcbe4c7e6"),
            "lstm-hmm-fails": ("697e0f78bdd070e4", "63112de3a0074d87"),
            "transformer-recall-solves": ("fdf538c4beb30ad8", "374b38b48a44a2c7"),
            "mamba-recall-solves": ("c9aa118bd79a7174", "fc0af0b1fac98557"),
            "lstm-recall-fails": ("8985ba66ca1c6233", "3c96af20806a049b"),
        },
    ),
    RuleChange(
        "2026-12-07",
        "after 7aaf1c0",
        (
            "key-orthogonality-separate",
            "key-orthogonality-shared",
            "key-signed-cosine-shared",
            "value-manifold-pc1-share-separate",
            "value-manifold-pc1-share-shared",
        ),
        "one trained model per layout (seed 0): its key statistic against the central 95 % of "
        "100 initialisations, beyond it on the claimed side for, on the other against, inside it "
        "undecidable; its PC1 share's interval over the probe parts meeting the paper's range",
        "every seed's trained model, the share of seeds judged by its one-sided 95 % bounds "
        "against one half: a seed counts when its key statistic lies below the initialisations' "
        "central 95 %, and when its PC1 share's interval reaches the low end of the paper's "
        "range, 84 %, and clears the larger of random init and the MLP by a point; the model of "
        "every seed must have solved the task, and the budget is three times the latest seed's "
        "own solve step",
        "a referee refused two verdicts against that rested on one model each; a geometry that "
        "training forms is a claim about every run, judged like the other claims on trained "
        "models by the share of seeds, and a seed inside the initialisations' range does not "
        "show the claimed geometry",
        "not reproduced (quick: the separate layout's key orthogonality and PC1 share), "
        "inconclusive (quick: the other three, short of three times the run's solve step)",
        "not recorded",
        {
            "key-orthogonality-separate": ("3d14ea8a89bbb07a", "f5eb53c577761f73"),
            "key-orthogonality-shared": ("e9186595c496afb8", "9142a6075a38d3f9"),
            "key-signed-cosine-shared": ("ebdf24cfd99b537b", "1903ef05c2854e41"),
            "value-manifold-pc1-share-separate": ("22105c8051a71e5d", "a403793ed2983d2f"),
            "value-manifold-pc1-share-shared": ("416ed9e783da8585", "1c5d4ae06a70f4e9"),
        },
    ),
    RuleChange(
        "2026-12-07",
        "after 7aaf1c0",
        ("precision-after-settling",),
        "each seed's error at the attention's settling step over the mean error of the end "
        "window, its interval over 8 parts of the evaluation sequences above 1",
        "the same over the end window's largest error, part by part: a gain beyond the end's "
        "own jitter; an attention that never settled has its settling step in the end window "
        "and so gains nothing by construction",
        "a referee found that a seed whose attention never settled could still count a gain, "
        "the jitter of the end window against its mean; the rule's words and fingerprint are "
        "unchanged, the measure it reads changed",
        "inconclusive (quick: a short budget)",
        "not recorded",
        {"precision-after-settling": ("552807064e753158", "552807064e753158")},
    ),
    RuleChange(
        "2026-12-07",
        "after 4d8870f",
        ("coupled-specializes-further",),
        "partly unless the coupled run leads the better sequential order at equal updates on "
        "every seed (its lowest seed's margin above 0)",
        "partly unless the share of seeds on which it leads that order passes the share test "
        "(one-sided 95 % bounds against one half), the rule by which the loop's own row judges "
        "the same margin",
        "a referee found two rules for one margin: this row asked for every seed, the loop's row "
        "for a share of seeds; the loop's margin now has one rule, and this row is reproduced in "
        "full only where the loop's row is",
        "partly (quick: 6 of 8 seeds lead, the lowest 0.023 behind)",
        "partly (quick, the same results: 6 of 8 seeds lead, too few for the share to pass)",
        {"coupled-specializes-further": ("f66bc88be73c9385", "3363196e3a59f564")},
    ),
    RuleChange(
        "2026-12-07",
        "after 4d8870f",
        ("coupled-specializes-further", "loop-beyond-capacity"),
        "no run registered to decide them; the loop's row named about 13 seeds at its share, "
        "read off the quick run's 6 of 8",
        "each registers the decide profile's run, the quick run on 32 seeds, the count the "
        "paper profile trains and fixed before it ran; the chapter's decide results are judged "
        "beside the quick ones",
        "a seed count read off the current share invites adding seeds until the share passes; "
        "the referee asked for a profile that runs the seeds the rows name, fixed in advance",
        "partly and inconclusive (quick)",
        "partly and inconclusive (quick, the same results; the registered run decides them)",
        {
            "coupled-specializes-further": ("3363196e3a59f564", "727bcc9b0f7acc5d"),
            "loop-beyond-capacity": ("9010b07c07d57896", "644d84e57a4ba835"),
        },
    ),
    RuleChange(
        "2026-12-07",
        "after 06b8b20",
        ("bijection-separate-matches-bayes", "bijection-shared-matches-bayes",
         "precision-after-settling"),
        "a verdict against counts once the run has trained on 20 % of the authors' 12,800,000 "
        "bijection training sequences",
        "a verdict against counts once the run has trained three times the steps it needed to "
        "solve its task, the latest seed's, as the other rows on chapter 4's trained bijection "
        "models already ask",
        "a referee found the bare 20 % still guarding these rows after the others had moved to "
        "the run's own solve step; one budget for the chapter's bijection rows",
        "partly, partly and inconclusive (the matches on the decide runs before their rerun, "
        "the budget guarding only a verdict against; the order of settling on the quick runs)",
        "partly and partly on the same decide results; the third not recorded on the quick "
        "runs, which did not record the latest seed's solve step",
        {
            "bijection-separate-matches-bayes": ("ed648fbc039e029e", "fb6dcb189c67af9f"),
            "bijection-shared-matches-bayes": ("866d3b08ac23feb2", "2df6eac42805cb83"),
            "precision-after-settling": ("552807064e753158", "3a61e0c6b4f39f81"),
        },
    ),
    RuleChange(
        "2026-12-07",
        "after 921d387",
        ("key-orthogonality-separate", "key-orthogonality-shared", "key-signed-cosine-shared",
         "value-manifold-pc1-share-separate", "value-manifold-pc1-share-shared",
         "precision-after-settling"),
        "this date's entries for the per-seed geometry and for the gain over the end window's "
        "worst checkpoint, each with its verdict after as 'not recorded'",
        "the same rules, with their verdicts after on the quick build made at them",
        "a referee found that a quick build at the new rules existed and should give the "
        "verdicts after; they are recorded here, and the entries above are left as they were "
        "written, so that the log only grows",
        "not reproduced (quick: the separate layout's key orthogonality and PC1 share, one "
        "model each), inconclusive (quick: the other four)",
        "inconclusive, all six (quick, two seeds each: the keys below the initialisations' "
        "range on 0 of 2 seeds in either layout, the PC1 share's interval reaching 84 % on 0 of "
        "2, too few seeds to tell the share from one half; the shared layout's rows also short "
        "of three times the run's solve step, 1,500 against 3 x 603; the attention of the "
        "constant-rate runs not at rest before their end window)",
        moved={key: Move("not reproduced", "inconclusive", "quick")
               for key in ("key-orthogonality-separate", "value-manifold-pc1-share-separate")},
        in_brief="the keys' orthogonality and the value manifold's first component are judged "
        "on every seed's model, not on one, and two seeds cannot tell their share from one "
        "half: the two verdicts against became inconclusive until the registered run decides",
    ),
    RuleChange(
        "2026-12-07",
        "after a92f664",
        (
            "bijection-separate-matches-bayes",
            "bijection-shared-matches-bayes",
            "hmm-per-sample-tracks-bayes",
            "hmm-length-generalisation",
            "key-orthogonality-separate",
            "key-orthogonality-shared",
            "key-signed-cosine-shared",
            "value-manifold-pc1-share-separate",
            "value-manifold-pc1-share-shared",
            "value-manifold-entropy-order-bijection",
            "value-manifold-hmm-leading-component",
            "routing-gradients-fade",
            "precision-after-settling",
            "transformer-bijection-matches-bayes",
            "mamba-bijection-matches-bayes",
            "lstm-bijection-matches-bayes",
            "transformer-hmm-tracks-bayes",
            "mamba-hmm-tracks-bayes",
            "lstm-hmm-fails",
            "mlp-bijection-fails-ch5",
            "transformer-recall-solves",
            "mamba-recall-solves",
            "lstm-recall-fails",
        ),
        "the registered decide runs of chapters 4 and 5: 6 seeds of bijections trained 1,500 "
        "steps (chapter 4) and of recall trained 1,000 steps (chapter 5), their chapters costed "
        "at about 42 and 85 CPU-minutes; the capacity-matched MLP of chapter 5 registered no "
        "run, so its row named a seed count read off its share",
        "chapter 4's decide profile trains its bijections 3,000 steps and chapter 5's trains "
        "recall 3,000 steps, on the same 6 seeds; the MLP's row registers chapter 5's decide "
        "and paper runs, as the other bijection rows of that chapter do; the chapters are "
        "costed at about 75 and 100 CPU-minutes, estimated before they ran",
        "a referee found that the registered 1,500-step run could never meet the late-phase "
        "budget of the shared layout's rows (three times its solve step, 3 x 603 on the quick "
        "run), that Mamba was still learning at the end of 1,000 recall steps, and that the "
        "MLP's row still read a seed count off its share; the runs are registered again before "
        "either chapter's decide reruns, and every row of both chapters changes because each "
        "names its chapter's cost",
        "inconclusive on every row of both chapters (quick; the decide results stale)",
        "inconclusive on every row of both chapters, the same results judged the same: the "
        "change registers longer runs, it judges nothing anew",
        {
            "bijection-separate-matches-bayes": ("fb6dcb189c67af9f", "f31beb8ae5c491c6"),
            "bijection-shared-matches-bayes": ("2df6eac42805cb83", "8816302520964959"),
            "hmm-per-sample-tracks-bayes": ("529ad2981f84641e", "61364293ddad6114"),
            "hmm-length-generalisation": ("f616ee95d9c4efed", "06078e2f055d261c"),
            "key-orthogonality-separate": ("f5eb53c577761f73", "6ebae171b87937ff"),
            "key-orthogonality-shared": ("9142a6075a38d3f9", "89fe40ab1f3a92ac"),
            "key-signed-cosine-shared": ("1903ef05c2854e41", "d7956f1d7cebf893"),
            "value-manifold-pc1-share-separate": ("a403793ed2983d2f", "8fda5e0f25ff13b4"),
            "value-manifold-pc1-share-shared": ("1c5d4ae06a70f4e9", "a29020ac4a13e0e4"),
            "value-manifold-entropy-order-bijection": ("bad7183ebbc0c46a", "e1e96efdcd442c4c"),
            "value-manifold-hmm-leading-component": ("f8e97ea880184b28", "f3eababb794eff1a"),
            "routing-gradients-fade": ("4e7bedff8e9cec01", "584d1346ea2d7b1d"),
            "precision-after-settling": ("3a61e0c6b4f39f81", "8dcfe8dc3e523aaf"),
            "transformer-bijection-matches-bayes": ("a1b576bb86e53e1f", "980d86b384bda154"),
            "mamba-bijection-matches-bayes": ("8e514afbc405d6bf", "3fbc9b332e61fc98"),
            "lstm-bijection-matches-bayes": ("9261cbc197ea510f", "3f7a581c3189b3b1"),
            "transformer-hmm-tracks-bayes": ("7a52c0f08cd0243f", "b7aac09378604e69"),
            "mamba-hmm-tracks-bayes": ("63afbc8bcbe4c7e6", "878b2d1eb02a594d"),
            "lstm-hmm-fails": ("63112de3a0074d87", "c90442e72f2972f4"),
            "mlp-bijection-fails-ch5": ("e9b5a518ef6ff539", "bbeda5eccfb74b8f"),
            "transformer-recall-solves": ("374b38b48a44a2c7", "97aa0d772c1510a0"),
            "mamba-recall-solves": ("fc0af0b1fac98557", "3289169e28d0de25"),
            "lstm-recall-fails": ("3c96af20806a049b", "1bca37be3125b603"),
        },
    ),
    RuleChange(
        "2026-12-07",
        "after eea211d",
        ("em-longer-value-paths",),
        "partly unless the effect beyond what the ten times larger value rate gives by itself "
        "exceeds it on every seed (its lowest seed above 1)",
        "partly unless the share of seeds whose effect exceeds what the rate gives passes the "
        "share test of the claim's own rule (its interval above one half), the form the "
        "coupled run's row takes against its sequential order",
        "a referee found the two rows that check an effect against what the run's setting "
        "gives by itself judged it in two forms, one on every seed and one by share, while "
        "both claims are judged by share; the check now takes the form of the rule it qualifies",
        "partly (decide: the effect beyond the rate 0.64 on the lowest seed)",
        "partly (decide: beyond the rate on 0 of 12 seeds)",
        {"em-longer-value-paths": ("3478251aaa0342e7", "bb24e1df4318e8c6")},
    ),
    RuleChange(
        "2026-12-07",
        "after eea211d",
        ("em-coherent-value-paths", "attention-first-fresh", "attention-first-fresh-sgd"),
        "the coherence of the value paths registered chapter 3's decide run of 12 seeds, which "
        "was made and left it open; the order of settling on fresh sequences registered the "
        "decide run of 24 seeds of 2,000 steps, made, and the paper profile's 8 seeds of "
        "6,000 steps, costed at Paper I's GPU rate",
        "chapter 3's decide profile trains the reproduction on 48 seeds (the authors' five and "
        "43 more) and the fresh sequences 6,000 steps on its 24 seeds; these rows register that "
        "run alone, costed at about 40 CPU-minutes for the chapter, estimated before it ran",
        "a referee found the paper run of the fresh sequences no larger a test than the decide "
        "run (8 seeds against 24, at about the same cost on the toy's own rate), and the "
        "coherence row without a larger run registered after its decide run left it open; the "
        "48 seeds are the count an earlier referee's reading named for this row",
        "inconclusive (decide, all three: 9 of 12 seeds; the attention of a seed not settled "
        "before the last fifth of 2,000 steps)",
        "inconclusive (decide, all three, the same results judged the same until the "
        "registered run is made)",
        {
            "em-coherent-value-paths": ("8cedfc343c0eb499", "0f2d90c4499e84cd"),
            "attention-first-fresh": ("4771a1798f7c9224", "1f5fba284a8065ff"),
            "attention-first-fresh-sgd": ("79926dffd261631a", "ff26d6cfb56b2021"),
        },
    ),
    RuleChange(
        "2026-12-07",
        "after 48696c0",
        ("transformer-bijection-matches-bayes", "transformer-hmm-tracks-bayes"),
        "a failure of the transformer itself counted once the run had trained on a fifth of the "
        "sequences the authors' script goes through, a bare number set by their larger model "
        "and budget",
        "a failure of the transformer counts, as the other architectures' do, once the run has "
        "trained three times the steps from which the transformer's first seed meets the "
        "chapter's bar on the same task (its own checkpoints); a run in which it never meets "
        "the bar gives no budget, and the failure does not count",
        "a referee found the bare fifth of the authors' budget unrelated to the run: a budget "
        "the run derives from itself is what chapter 5 already asks of the other architectures "
        "and chapter 4 of its own runs",
        "inconclusive (quick: 2 of 2 and 0 of 2 seeds, too few to tell from one half; the HMM "
        "row also short of a fifth of the authors' sequences)",
        "inconclusive (quick: the same shares; the HMM row also without a budget, the "
        "transformer not meeting the bar within its 400 steps)",
        {
            "transformer-bijection-matches-bayes": ("980d86b384bda154", "61933cf2904bd6ca"),
            "transformer-hmm-tracks-bayes": ("b7aac09378604e69", "5f5173a49bdb4a69"),
        },
    ),
    RuleChange(
        "2026-12-07",
        "after 48696c0",
        ("bijection-separate-matches-bayes", "bijection-shared-matches-bayes",
         "transformer-bijection-matches-bayes", "mamba-bijection-matches-bayes",
         "lstm-bijection-matches-bayes"),
        "a reproduced match was partly unless enough seeds ended strictly below the size the "
        "paper states (read at its stated precision), however short or unfinished the run",
        "a seed reaches the paper's size when its error is at most that size, as the claim "
        "states it; and a size missed while the run's training checks call it unfinished (its "
        "loss still falling, or shorter than three times the solve step) leaves the row "
        "inconclusive for budget, since the miss rests on the model not having learned enough",
        "a referee found that 'partly' asserted a miss that a longer run could undo, the one "
        "verdict against a claim that no training check guarded, and that the test used 'below' "
        "where the claim says 'at most'",
        "inconclusive (quick, all five: too few seeds; the decide results stale)",
        "inconclusive (quick, all five, the same results judged the same)",
        {
            "bijection-separate-matches-bayes": ("f31beb8ae5c491c6", "f31beb8ae5c491c6"),
            "bijection-shared-matches-bayes": ("8816302520964959", "8816302520964959"),
            "transformer-bijection-matches-bayes": ("61933cf2904bd6ca", "61933cf2904bd6ca"),
            "mamba-bijection-matches-bayes": ("3fbc9b332e61fc98", "3fbc9b332e61fc98"),
            "lstm-bijection-matches-bayes": ("3f7a581c3189b3b1", "3f7a581c3189b3b1"),
        },
    ),
    RuleChange(
        "2026-12-08",
        "after 9d78a69",
        (
            "transformer-bijection-matches-bayes",
            "mamba-bijection-matches-bayes",
            "lstm-bijection-matches-bayes",
            "transformer-hmm-tracks-bayes",
            "mamba-hmm-tracks-bayes",
            "lstm-hmm-fails",
            "mlp-bijection-fails-ch5",
            "transformer-recall-solves",
            "mamba-recall-solves",
            "lstm-recall-fails",
        ),
        "chapter 5's registered decide run costed at about 100 CPU-minutes, estimated before "
        "any of it ran",
        "the same run costed at about 140 CPU-minutes: six parts of about 24, as its first two "
        "parts measured (1,423 and 1,378 CPU-seconds)",
        "the cost a row names for the run that would decide it should be the one a reader would "
        "pay; the run's seeds and steps are unchanged, and the change is made before the run's "
        "remaining parts and its merge",
        "inconclusive on these rows as before (quick; the decide results stale)",
        "inconclusive on these rows as before (quick, the same results judged the same)",
        {
            "transformer-bijection-matches-bayes": ("61933cf2904bd6ca", "f6a39245344bdc46"),
            "mamba-bijection-matches-bayes": ("3fbc9b332e61fc98", "abb4085537850eec"),
            "lstm-bijection-matches-bayes": ("3f7a581c3189b3b1", "79b28e2767506777"),
            "transformer-hmm-tracks-bayes": ("5f5173a49bdb4a69", "7726e1b93cd44ca2"),
            "mamba-hmm-tracks-bayes": ("878b2d1eb02a594d", "596d118653ad6606"),
            "lstm-hmm-fails": ("c90442e72f2972f4", "bbd747106a5f8c61"),
            "mlp-bijection-fails-ch5": ("bbeda5eccfb74b8f", "26447c9532bd5a85"),
            "transformer-recall-solves": ("97aa0d772c1510a0", "28a5fba5c9841d04"),
            "mamba-recall-solves": ("3289169e28d0de25", "ec1b5603781be495"),
            "lstm-recall-fails": ("1bca37be3125b603", "4db03c893fc1a553"),
        },
    ),
    RuleChange(
        "2026-12-08",
        "after 2957c9f",
        ("attention-first-fresh", "attention-first-fresh-sgd"),
        "a run whose attention had not settled before its last fifth was undecided for budget, "
        "and a longer run was named as what would decide the order of settling",
        "the same check no longer names a longer run: what would decide the order is a "
        "settling measure that a state jittering about its end can meet (the runs cooled down "
        "to a small rate at their end, or timed on averaged weights), registered before its run",
        "a referee found 'a longer run would decide' contradicted by the decide run: tripling "
        "the fresh runs to 6,000 steps left the distances to the end state at the same "
        "fractions of their start, and no seed's attention or values settled on either "
        "schedule",
        "inconclusive (quick and decide, undecided for budget)",
        "inconclusive (quick and decide, undecided for budget, waiting on that measure)",
        {
            "attention-first-fresh": ("1f5fba284a8065ff", "84e941656d45cde5"),
            "attention-first-fresh-sgd": ("ff26d6cfb56b2021", "741aa8002679fd5c"),
        },
    ),
    RuleChange(
        "2026-12-08",
        "after 2957c9f",
        ("bijection-shared-matches-bayes",),
        "a size the paper states, missed while the loss had flattened over the last tenth, made "
        "a reproduced match partly",
        "on the shared layout's runs, whose rate decays to zero, a flat loss cannot show that "
        "training finished, so a missed size leaves the row inconclusive for budget; the "
        "constant-rate runs of the separate layout keep the loss check",
        "a referee found that the loss check cannot fail where the rate decays to zero, and "
        "that doubling the steps from the quick to the decide profile cut the error at the key "
        "positions from 0.022 to 0.0133 bits, more than the 0.0058 bits left to the paper's "
        "size: the miss may be a matter of budget",
        "partly (decide: 6 of 6 seeds close the floor's gap, 0 of 6 within 0.0075 bits)",
        "inconclusive (decide, undecided for budget; the same numbers)",
        {"bijection-shared-matches-bayes": ("8816302520964959", "31e8b2b10511a2cf")},
        moved={"bijection-shared-matches-bayes": Move("partly", "inconclusive", "decide")},
        in_brief="a size missed by a run whose decaying rate hides whether it finished now "
        "leaves the shared layout's match undecided, since doubling the steps still cut the "
        "error by more than the gap left",
    ),
    RuleChange(
        "2026-12-08",
        "after 2957c9f",
        ("precision-after-settling",),
        "a run in which a seed's attention had not settled before the last fifth left the row "
        "undecided, whatever the precision did",
        "the claim's own rule decides: a seed whose attention has not settled gains nothing "
        "after settling and counts against the claim; a verdict against still waits for three "
        "times the run's solve step",
        "a referee found that the guard assumed the claim's premise, the attention settling "
        "first: in the decide run the precision settled on 5 of 6 seeds (steps 382 to 1,200) "
        "while no seed's attention did, evidence of the reverse order that the guard hid",
        "inconclusive (decide: the attention did not settle before the last fifth)",
        "inconclusive (decide: 0 of 6 seeds gain after settling, but the 1,500-step runs are "
        "shorter than three times the 603 steps that solving took)",
        {"precision-after-settling": ("8dcfe8dc3e523aaf", "df6f1a4cf38b5e02")},
    ),
    RuleChange(
        "2026-12-08",
        "after 2957c9f",
        ("transformer-bijection-matches-bayes", "mamba-bijection-matches-bayes",
         "lstm-bijection-matches-bayes", "transformer-hmm-tracks-bayes",
         "mamba-hmm-tracks-bayes", "lstm-hmm-fails"),
        "where the transformer never met the chapter's bar on a task, no budget for a failure "
        "was known, and no failure counted",
        "where the transformer never met the bar, a failure counts once the run has trained on "
        "a fifth of the sequences the authors' script gives that architecture on that task; "
        "where the transformer met it, three times its solve step, as before",
        "a referee found that a transformer that never solves the task could never be counted "
        "as failing it, so the transformer's own rows could not go against the claim; the "
        "authors' budget does not depend on any model of the run. Made before this decide run "
        "was merged, but its bijection and HMM numbers were already known: the stale decide "
        "file of 2026-12-07 holds the same bits, and entries above quote them",
        "inconclusive (quick, all six; the decide run not yet merged: not recorded there)",
        "inconclusive (quick, all six, the same results; the HMM rows now short of a fifth of "
        "the authors' sequences rather than without a budget)",
        {
            "transformer-bijection-matches-bayes": ("f6a39245344bdc46", "132c695b35c290f9"),
            "mamba-bijection-matches-bayes": ("abb4085537850eec", "baa59375f07c7d52"),
            "lstm-bijection-matches-bayes": ("79b28e2767506777", "38cdc2d4313eefe2"),
            "transformer-hmm-tracks-bayes": ("7726e1b93cd44ca2", "aae3b35b67cf4ab4"),
            "mamba-hmm-tracks-bayes": ("596d118653ad6606", "1161011da80878ec"),
            "lstm-hmm-fails": ("bbd747106a5f8c61", "cf058febdccd1c30"),
        },
    ),
    RuleChange(
        "2026-12-08",
        "after d6a9983",
        ("bijection-separate-matches-bayes", "bijection-shared-matches-bayes",
         "transformer-bijection-matches-bayes", "mamba-bijection-matches-bayes",
         "lstm-bijection-matches-bayes"),
        "the check of the paper's size changed what it does (a seed counting at the size itself; "
        "a miss behind unfinished training undecided) on 2026-12-07 with the rows' "
        "fingerprints unchanged, so results made before that change still read as judged by "
        "the rule in force",
        "each rule and check class carries a version that enters the fingerprint of every claim "
        "using it; the size check is at version 2, so the change now shows in these rows' "
        "fingerprints, and decide results made before it read as stale for these rows",
        "a referee found that the fingerprint records a rule's fields but not what its class "
        "does with them: a change of meaning could pass unseen by the staleness check",
        "inconclusive (separate, shared: decide; the three architectures: quick, chapter 5's "
        "decide not yet merged)",
        "inconclusive (the same rows now rest on the quick build until their decide runs are "
        "made again; the verdicts themselves unchanged)",
        {
            "bijection-separate-matches-bayes": ("f31beb8ae5c491c6", "7251d93b5d14c145"),
            "bijection-shared-matches-bayes": ("31e8b2b10511a2cf", "04b6ee9f087a1df7"),
            "transformer-bijection-matches-bayes": ("132c695b35c290f9", "37347d31236ab741"),
            "mamba-bijection-matches-bayes": ("baa59375f07c7d52", "134da7732dcc7962"),
            "lstm-bijection-matches-bayes": ("38cdc2d4313eefe2", "7c12656f895ccfee"),
        },
    ),
    RuleChange(
        "2026-12-08",
        "after 0ce292e",
        ("transformer-bijection-matches-bayes", "mamba-bijection-matches-bayes",
         "lstm-bijection-matches-bayes"),
        "a size the paper states, missed while the loss had flattened over the last tenth, made "
        "a reproduced match partly",
        "on chapter 5's bijection runs, whose rate decays to a tenth of its peak, a flat loss "
        "cannot show that training finished, so a missed size leaves the row inconclusive for "
        "budget, as on chapter 4's shared layout",
        "a referee (reading today's merged decide results) found the shared layout's reasoning "
        "applies here too: quadrupling the steps from the quick to the decide profile cut the "
        "errors from 0.041, 0.028 and 0.323 bits to 0.0139, 0.0107 and 0.0143, more than the "
        "0.0064, 0.0002 and 0.0048 left to the paper's sizes, and the paper states its sizes "
        "for 20 symbols where these runs have 8. Made after these numbers were seen",
        "partly (decide: 6 of 6 seeds close the floor's gap each; 0, 3 and 0 of 6 within the "
        "paper's size)",
        "inconclusive (decide, undecided for budget; the same numbers)",
        {
            "transformer-bijection-matches-bayes": ("37347d31236ab741", "efc0a1df174793e0"),
            "mamba-bijection-matches-bayes": ("134da7732dcc7962", "4d987f7e4ccbd949"),
            "lstm-bijection-matches-bayes": ("7c12656f895ccfee", "05f4ded99c1f6c52"),
        },
        moved={key: Move("partly", "inconclusive", "decide") for key in (
            "transformer-bijection-matches-bayes", "mamba-bijection-matches-bayes",
            "lstm-bijection-matches-bayes")},
        in_brief="a size missed by chapter 5's bijection runs, whose decaying rate hides whether "
        "they finished and whose task is smaller than the paper's, now leaves the three "
        "architectures' matches undecided rather than partly",
    ),
)
"""Every logged change of a rule, oldest first (the book's page of the rule log shows them).

:meta hide-value:
"""


def moving_changes(rule_log: tuple[RuleChange, ...] | list[RuleChange]) -> list[RuleChange]:
    """The changes of ``rule_log`` that moved a verdict, in its order."""
    return [change for change in rule_log if change.moved]


IDENTIFIER_PATTERNS = {
    "a class or a call": re.compile(r"\b[A-Z][A-Za-z0-9]*\(|\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b"),
    "a name with an underscore": re.compile(r"\b\w*[A-Za-z0-9]_\w+\b"),
    "a commit or a digest": re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b"),
    "a file or a module path": re.compile(r"\b[\w/]+\.(?:py|md|json|yml|yaml|txt)\b"
                                          r"|\b[a-z]+\.[a-z]+\b|::"),
}
"""What the texts of a page for readers must not hold, each with a pattern that finds it."""


def identifiers_in(text: str, keys: object = ()) -> list[str]:
    """Every name from the code in ``text`` (empty when there is none), as ``"what: found"``:
    a class or a call (``ClosesGap(0.95, 1)``, ``SeedShare``), a name with an underscore (a
    metric's, a constant's), a commit or a digest, a file or a module path, and any of ``keys``
    (claims' keys) by itself."""
    found = [f"{what}: {match.group(0)}" for what, pattern in IDENTIFIER_PATTERNS.items()
             for match in pattern.finditer(text)]
    found += [f"a claim's key: {key}" for key in keys
              if re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", text)]
    return found


def unlogged_changes(registry: dict[str, Claim]) -> list[str]:
    """What the log does not account for, one sentence each (empty when it accounts for all):
    a registered claim missing from :data:`JUDGED`, a logged change whose old fingerprint is not
    the claim's fingerprint at that point, a claim whose fingerprint, followed through its
    logged changes from :data:`JUDGED`, is not the registry's, and a judged claim that left the
    registry without an entry retiring it."""
    problems = []
    current = dict(JUDGED)
    for change in RULE_LOG:
        for key in change.claims:
            if key not in registry and key not in JUDGED:
                problems.append(f"the log names {key!r}, which is not a registered claim")
        if change.fingerprints is None:
            continue
        for key, (old, new) in change.fingerprints.items():
            if current.get(key) != old:
                problems.append(
                    f"{key!r}: the change of {change.date} starts from {old}, but the "
                    f"claim's rule was then {current.get(key)}"
                )
            current[key] = new
    for key in JUDGED.keys() - registry.keys():
        if current[key] is not None:
            problems.append(
                f"{key!r} was judged and is no longer registered: retire it with an "
                "entry in RULE_LOG (new fingerprint None)"
            )
    for key, claim in registry.items():
        if key not in current:
            problems.append(
                f"{key!r} is not in JUDGED: register its fingerprint "
                f"{claim.fingerprint} before any run judges it"
            )
        elif current[key] != claim.fingerprint:
            problems.append(
                f"{key!r}: its rule changed ({current[key]} -> {claim.fingerprint}) "
                "without an entry in RULE_LOG"
            )
    return problems
