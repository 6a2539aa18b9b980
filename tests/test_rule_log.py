"""The claims' registry and the rule log: a rule changed after it was judged must be logged."""

import dataclasses

import pytest

from attention_dynamics.book import rule_log
from attention_dynamics.book.claims import REGISTRY
from attention_dynamics.book.rule_log import JUDGED, RULE_LOG, RuleChange, unlogged_changes
from attention_dynamics.book.verdicts import Bound, Claim, Null, SeedShare, StillLearning

EXACT = Claim("an identity holds", "Paper II", "exact", "score_gradient", "error",
              Null("float64 round-off"), Bound(1e-10), key="an-identity")


def change(claims, fingerprints=None, **fields):
    base = dict(date="2026-12-05", commit="this commit", old_rule="old", new_rule="new",
                reason="a reason", verdict_before="not reproduced (quick)",
                verdict_after="reproduced (quick)")
    return RuleChange(claims=claims, fingerprints=fingerprints, **(base | fields))


def test_every_rule_of_the_registry_is_judged_or_logged():
    assert unlogged_changes(REGISTRY) == []


def test_the_registry_keys_are_the_claims_keys_and_unique():
    assert all(key == claim.key for key, claim in REGISTRY.items())
    with pytest.raises(ValueError, match="key must be lower-case"):
        dataclasses.replace(EXACT, key="Not a key")


def test_the_fingerprint_follows_what_decides_the_verdict_and_nothing_else():
    base = EXACT.fingerprint
    assert len(base) == 16 and int(base, 16) >= 0
    # the wording, the source and the paper's quoted text decide nothing
    for field, value in (("claim", "reworded"), ("source", "Paper I"), ("paper", "≈ 0")):
        assert dataclasses.replace(EXACT, **{field: value}).fingerprint == base
    # the threshold, the direction, the null, the metric and every guard do
    for field, value in (("rule", Bound(1e-9)), ("rule", Bound(1e-10, at_most=False)),
                         ("null", Null("random init", "error_init")), ("metric", "other"),
                         ("still_learning", StillLearning("fall", max_fall=0.01)),
                         ("undecidable", "the task cannot decide it")):
        assert dataclasses.replace(EXACT, **{field: value}).fingerprint != base, field


def test_a_changed_level_changes_the_fingerprint():
    share = dataclasses.replace(EXACT, rule=SeedShare("n_seeds", level=0.90))
    assert share.fingerprint != dataclasses.replace(
        share, rule=SeedShare("n_seeds", level=0.95)).fingerprint


def test_an_unlogged_change_is_found_and_a_logged_one_accepted(monkeypatch):
    key = "routing-law-exact"
    changed = dataclasses.replace(REGISTRY[key], rule=Bound(1e-8))
    registry = REGISTRY | {key: changed}
    (problem,) = unlogged_changes(registry)
    assert key in problem and "without an entry in RULE_LOG" in problem
    # logged from the judged fingerprint to the new one, the change is accounted for
    entry = change((key,), {key: (JUDGED[key], changed.fingerprint)})
    monkeypatch.setattr(rule_log, "RULE_LOG", (*RULE_LOG, entry))
    assert unlogged_changes(registry) == []
    # an entry that starts from a fingerprint the claim did not have is refused
    wrong = change((key,), {key: ("0" * 16, changed.fingerprint)})
    monkeypatch.setattr(rule_log, "RULE_LOG", (*RULE_LOG, wrong))
    assert any("starts from" in problem for problem in unlogged_changes(registry))


def test_a_new_claim_must_be_registered_before_it_is_judged():
    (problem,) = unlogged_changes(REGISTRY | {"an-identity": EXACT})
    assert "'an-identity' is not in JUDGED" in problem and EXACT.fingerprint in problem


def test_a_log_entry_says_what_changed_and_the_verdicts():
    with pytest.raises(ValueError, match="reason must not be empty"):
        change(("routing-law-exact",), reason=" ")
    with pytest.raises(ValueError, match="verdict_after must name one of"):
        change(("routing-law-exact",), verdict_after="fine")
    with pytest.raises(ValueError, match="exactly the changed claims"):
        change(("routing-law-exact",), {"value-update-exact": ("a", "b")})
    with pytest.raises(ValueError, match="at least one claim"):
        change(())
    # every logged entry names registered claims, or judged ones it retires
    assert all(key in REGISTRY or key in JUDGED for entry in RULE_LOG for key in entry.claims)


def test_a_judged_claim_leaves_the_registry_only_through_the_log(monkeypatch):
    key = "routing-law-exact"
    registry = {k: c for k, c in REGISTRY.items() if k != key}
    (problem,) = unlogged_changes(registry)
    assert "no longer registered" in problem
    retired = change((key,), {key: (JUDGED[key], None)}, new_rule="retired: merged")
    monkeypatch.setattr(rule_log, "RULE_LOG", (*RULE_LOG, retired))
    assert unlogged_changes(registry) == []
