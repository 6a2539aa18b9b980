"""The rule log: every change to a claim's rule after it was judged, with its reason and the
verdicts before and after.

A rule is fixed before the run that judges it. :data:`JUDGED` holds each claim's fingerprint
(:attr:`~attention_dynamics.book.verdicts.Claim.fingerprint`) as the registry first held it, at
commit 3e4bd2e (2026-12-05), where every one of these rules had been judged on the quick and the
decide results. A later change adds a :class:`RuleChange` to :data:`RULE_LOG` from the old
fingerprint to the new one, so that following a claim's entries from :data:`JUDGED` ends at the
registry's fingerprint (:func:`unlogged_changes`, which the tests call). A new claim enters
:data:`JUDGED` when it is registered, before any run judges it.

The first entries are the changes made before the registry existed (their fingerprints were not
kept): they carry ``None`` for both fingerprints and do not take part in the check.
"""

from __future__ import annotations

from dataclasses import dataclass

from attention_dynamics.book.verdicts import VERDICTS, Claim


def _mentions_a_verdict(text: str) -> bool:
    return text == "not recorded" or any(verdict in text for verdict in VERDICTS)


@dataclass(frozen=True)
class RuleChange:
    """One change of the rules of one or more claims.

    Attributes:
        date: ISO date of the change.
        commit: the commit that made it (its first 7 hex digits), or ``"this commit"``.
        claims: the keys of the claims it changed.
        old_rule: the rule before, in words.
        new_rule: the rule after, in words.
        reason: why the rule changed.
        verdict_before: the verdict under the old rule, on the results it was changed on, with
            its profile where it matters; ``"not recorded"`` where no build kept it.
        verdict_after: the verdict under the new rule on the same results.
        fingerprints: ``{key: (old, new)}``, each changed claim's fingerprint before and after;
            ``None`` for a change made before the registry kept fingerprints.
    """

    date: str
    commit: str
    claims: tuple[str, ...]
    old_rule: str
    new_rule: str
    reason: str
    verdict_before: str
    verdict_after: str
    fingerprints: dict[str, tuple[str, str]] | None = None

    def __post_init__(self):
        if not self.claims:
            raise ValueError("claims must name at least one claim key")
        for field in ("old_rule", "new_rule", "reason", "verdict_before", "verdict_after"):
            if not getattr(self, field).strip():
                raise ValueError(f"{field} must not be empty")
        for field in ("verdict_before", "verdict_after"):
            if not _mentions_a_verdict(getattr(self, field)):
                raise ValueError(f"{field} must name one of {VERDICTS} (with its profile), or be "
                                 f"'not recorded'; got {getattr(self, field)!r}")
        if self.fingerprints is not None and set(self.fingerprints) != set(self.claims):
            raise ValueError("fingerprints must give (old, new) for exactly the changed claims")


JUDGED: dict[str, str] = {
    "routing-law-exact": "7109c8438c276f79",
    "closed-form-gradients-exact": "05e0eb3043c3aaf7",
    "descent-moves-attention-up": "3932fd372134bb8e",
    "value-update-exact": "f87876d77d4f930b",
    "coupled-specializes-further": "5bde5855226f1f5c",
    "loop-beyond-capacity": "ad80754483e56c98",
    "loop-leaves-symmetry": "714a97d57bd914c0",
    "em-faster-share": "9c0d1b89f325b236",
    "em-speedup": "b76610fc62a238b6",
    "em-steps-to-sgd-final": "9801eb0f4ad05121",
    "em-lower-entropy": "5d686bb6d08dbc4d",
    "em-higher-accuracy": "1bb98ee754996c28",
    "em-closer-to-bayes": "a0d70c65df95fbf9",
    "em-longer-value-paths": "7a1e439ccef5bf73",
    "em-coherent-value-paths": "53ffe385bc643ed0",
    "attention-first-authors-setting": "d48e11871e4e72e5",
    "attention-first-fresh": "a48682dfc68c77ba",
    "bijection-separate-matches-bayes": "e035fdd8f9621429",
    "bijection-shared-matches-bayes": "863927ce1f666b3a",
    "hmm-mean-curve-matches-bayes": "a92edfc701a529b2",
    "hmm-per-sample-tracks-bayes": "d317d084e2f4b309",
    "hmm-length-generalisation": "adf4989d05cde067",
    "mlp-bijection-fails-ch4": "359026bc8f2292f6",
    "key-orthogonality-separate": "e8cc8a80e85ddf45",
    "key-orthogonality-shared": "c80f5d0254dd767a",
    "key-signed-cosine-shared": "2abf0562cccb5bcb",
    "value-manifold-pc1-share-separate": "6b90ffbc04447072",
    "value-manifold-pc1-share-shared": "626460abb56c79a3",
    "value-manifold-entropy-order-separate": "ceaea3fb2376990f",
    "value-manifold-entropy-order-shared": "4c2f89e2fc6274ee",
    "value-manifold-hmm-leading-component": "3ff8be56a06c1ed8",
    "routing-gradients-fade": "2484f53bd2416bfc",
    "precision-after-settling": "c511aae8f9ac04f2",
    "transformer-bijection-matches-bayes": "b5292b91023a0fbe",
    "mamba-bijection-matches-bayes": "37892b1e8a3a6ddb",
    "lstm-bijection-matches-bayes": "61872e0da13b07cd",
    "transformer-hmm-tracks-bayes": "0bb19ed05989e45b",
    "mamba-hmm-tracks-bayes": "5adf42fa6efb3810",
    "mamba-standard-deep-hmm-tracks-bayes": "21cf6c960724e1bf",
    "mamba-authors-deep-hmm-tracks-bayes": "bc9fe0346e116c0d",
    "lstm-hmm-fails": "745cb1db57b0cd5a",
    "mlp-bijection-fails-ch5": "1d402e1d3991d334",
    "transformer-recall-solves": "a6d259b022877551",
    "mamba-recall-solves": "1459ef2877c6c24d",
    "lstm-recall-fails": "03fef841dc38e5bf",
}
"""Each claim's fingerprint when the registry first held it (3e4bd2e, judged on quick and decide)."""

SEED_SHARE_LEVEL_REASON = (
    "the claim is directional (the attention settles first, EM-like is faster), so its seeds are "
    "judged by a one-sided sign test at the 5 % level: the 90 % two-sided Clopper–Pearson "
    "interval, whose ends are one-sided 95 % bounds; set once for every seed share of the ledger"
)

RULE_LOG: tuple[RuleChange, ...] = (
    RuleChange(
        "2026-12-04", "0ebf0d9",
        ("key-orthogonality-separate", "key-orthogonality-shared"),
        "mean |off-diagonal cosine| at most that of one random initialisation (BeatsNull)",
        "below the central 95 % of the same statistic over 100 initialisations (OutsideNullRange)",
        "one initialisation is one draw of a spread; the null is its range",
        "not reproduced (quick)", "not reproduced (quick)",
    ),
    RuleChange(
        "2026-12-04", "0ebf0d9", ("key-signed-cosine-shared",),
        "|signed mean cosine| at most 0.1 (Bound(0.1))",
        "signed mean cosine below the central 95 % of 100 initialisations (OutsideNullRange)",
        "0.1 was a bare number, not derived from a null; the signed statistic against its spread "
        "over initialisations is",
        "not reproduced (quick)", "not reproduced (quick)",
    ),
    RuleChange(
        "2026-12-04", "0ebf0d9",
        ("value-manifold-entropy-order-separate", "value-manifold-entropy-order-shared"),
        "|Spearman| at least 0.8 and 0.1 above every null (the position-alone null passed it)",
        "the same bound, undecidable by design: the Bayes entropy is a function of the position",
        "the inconclusive verdict (the null passes) named no reason a reader could check; the "
        "task's entropy is fixed by the position, so no run on it can decide the claim",
        "inconclusive, the null passes (quick)", "inconclusive, undecidable by design (quick)",
    ),
    RuleChange(
        "2026-12-04", "0ebf0d9", ("value-manifold-hmm-leading-component",),
        "|Spearman| of the standardised PC1 with the entropy at least 0.8 and 0.1 above every null",
        "the authors' best of PC1-5 by |Pearson| (hmm_geometric_analysis.py::analyze_layer), "
        "within positions, above the stronger of random init and the 99th percentile of 200 "
        "within-position shuffles",
        "the authors' own HMM protocol is the best of PC1-5, and the position explains part of "
        "the entropy: the claim is about what it does not explain",
        "not reproduced (quick, 0.040)", "reproduced (quick, 0.486 against 0.036)",
    ),
    RuleChange(
        "2026-12-04", "0ebf0d9", ("routing-gradients-fade",),
        "the ratio's fall at most 0.5 on one probe batch (Bound(0.5))",
        "the 95 % interval over 8 disjoint probe batches at most 0.5 (IntervalBound)",
        "one probe batch gives a point without its sampling spread",
        "not reproduced (quick)", "not reproduced (quick)",
    ),
    RuleChange(
        "2026-12-04", "0ebf0d9",
        ("mamba-bijection-matches-bayes", "lstm-bijection-matches-bayes", "mamba-hmm-tracks-bayes",
         "mamba-standard-deep-hmm-tracks-bayes", "mamba-authors-deep-hmm-tracks-bayes",
         "lstm-hmm-fails"),
        "a failure counts from 20 % of the authors' training sequences (ShortBudget)",
        "a failure counts after three times the steps the transformer needed to solve the same "
        "task in the same run (Outlasted)",
        "the authors' budgets (their training scripts) are out of reach on two CPU cores for every "
        "architecture; the reference architecture's own solve time in the same run is the budget "
        "the claim presumes",
        "inconclusive, short budget (quick)",
        "inconclusive, the transformer did not solve the task in its steps (quick)",
    ),
    RuleChange(
        "2026-12-04", "9394cdd",
        ("bijection-separate-matches-bayes", "bijection-shared-matches-bayes",
         "transformer-bijection-matches-bayes", "mamba-bijection-matches-bayes",
         "lstm-bijection-matches-bayes"),
        "MAE at most 0.05 bits (Bound(0.05))",
        "the MAE closes at least 95 % of the context-free floor's gap to 0 (ClosesGap(0.95, 0))",
        "0.05 bits was a bare number; an effect size against the row's own null is not",
        "reproduced (quick)", "reproduced (quick)",
    ),
    RuleChange(
        "2026-12-04", "9394cdd",
        ("mlp-bijection-fails-ch4", "mlp-bijection-fails-ch5", "lstm-hmm-fails"),
        "within 0.05 bits of the null (AtNull(abs_tol=0.05))",
        "closes at most 5 % of the null's gap to the optimum (AtNull(rel_tol=0.05))",
        "the mirror of the success rule, as an effect size against the null",
        "reproduced (quick)", "reproduced (quick)",
    ),
    RuleChange(
        "2026-12-04", "9394cdd", ("transformer-recall-solves",),
        "accuracy at least 0.99 (Bound(0.99))",
        "the accuracy closes at least 95 % of chance's gap to 1 (ClosesGap(0.95, 1))",
        "one rule for every 'solves' claim, as an effect size against chance",
        "reproduced (quick)", "reproduced (quick)",
    ),
    RuleChange(
        "2026-12-04", "9394cdd", ("mamba-recall-solves",),
        "within 5 % of the paper's 0.978 (Quantity)",
        "the accuracy closes at least 95 % of chance's gap to 1 (ClosesGap(0.95, 1))",
        "one rule for every 'solves' claim, as an effect size against chance",
        "reproduced (quick, 0.940; decide, 0.960)",
        "inconclusive, still learning (quick, 0.940 < 0.956); reproduced (decide, 0.960)",
    ),
    RuleChange(
        "2026-12-04", "9394cdd", ("em-faster-share",),
        "faster on 5 of 5 seeds (Bound(5) on the count)",
        "one-sided 95 % Clopper–Pearson bounds of the share above 0.5 (SeedShare, level 0.90)",
        "a count of seeds is judged by its interval, the seeds' sign test (5 of 5: p = 1/32)",
        "reproduced (quick)", "reproduced (quick, lower bound 0.549)",
    ),
    RuleChange(
        "2026-12-04", "9394cdd", ("attention-first-authors-setting",),
        "attention first on 5 of 5 seeds (Bound(5)), unsolved runs undecided for budget",
        "one-sided 95 % bounds of the share above 0.5 (SeedShare, level 0.90); an attention that "
        "never leaves uniform at the authors' own full setting is undecidable by design",
        "the authors' runs (one sequence of 2,000 symbols, their rates, 1,000 full-batch steps) "
        "are this run: more training at that setting memorises the sequence rather than decides",
        "inconclusive, undecided for budget (quick)", "inconclusive, undecidable by design (quick)",
    ),
    RuleChange(
        "2026-12-04", "9394cdd", ("attention-first-fresh",),
        "95 % two-sided Clopper–Pearson interval of the share above 0.5 (SeedShare, level 0.95)",
        "one-sided 95 % bounds (SeedShare, level 0.90)",
        SEED_SHARE_LEVEL_REASON,
        "inconclusive (quick, 7 of 8: 0.473-0.997 holds 0.5)",
        "reproduced (quick, 7 of 8: 0.529-0.994)",
    ),
    RuleChange(
        "2026-12-04", "9394cdd", ("precision-after-settling",),
        "the MAE falls by a factor of at least 2 after the attention settles (Bound(2.0))",
        "the 95 % interval over 8 disjoint parts of the evaluation sequences above 1 "
        "(IntervalBound(1.0); null: no gain)",
        "2 was a bare number; the null is no gain after settling, judged on the value's interval",
        "not reproduced (quick, 1.06)", "reproduced (quick, 1.053-1.070)",
    ),
    RuleChange(
        "2026-12-04", "a45d6eb", ("em-speedup", "em-steps-to-sgd-final"),
        "the pooled point within 25 % of the paper's number (Quantity)",
        "the 95 % bootstrap interval over the seeds meets the paper's window (Quantity on an "
        "interval)",
        "a point over five seeds hides their spread",
        "reproduced (quick)", "reproduced (quick: 1.61-3.03 and 330-621)",
    ),
    RuleChange(
        "2026-12-04", "a45d6eb",
        ("value-manifold-pc1-share-separate", "value-manifold-pc1-share-shared"),
        "the point within 10 % of the paper's 0.87 (Quantity)",
        "the 95 % t-interval over 8 probe parts meets the paper's window (Quantity on an interval)",
        "one probe gives a point without its sampling spread",
        "not reproduced (quick)", "not reproduced (quick: 0.326-0.340 and 0.206-0.217)",
    ),
)
"""Every logged change of a rule, oldest first."""


def unlogged_changes(registry: dict[str, Claim]) -> list[str]:
    """What the log does not account for, one sentence each (empty when it accounts for all):
    a registered claim missing from :data:`JUDGED`, a logged change whose old fingerprint is not
    the claim's fingerprint at that point, and a claim whose fingerprint, followed through its
    logged changes from :data:`JUDGED`, is not the registry's."""
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
                problems.append(f"{key!r}: the change of {change.date} starts from {old}, but the "
                                f"claim's rule was then {current.get(key)}")
            current[key] = new
    for key, claim in registry.items():
        if key not in current:
            problems.append(f"{key!r} is not in JUDGED: register its fingerprint "
                            f"{claim.fingerprint} before any run judges it")
        elif current[key] != claim.fingerprint:
            problems.append(f"{key!r}: its rule changed ({current[key]} -> {claim.fingerprint}) "
                            "without an entry in RULE_LOG")
    return problems
