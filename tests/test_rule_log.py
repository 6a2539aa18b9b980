"""The claims' registry and the rule log: a rule changed after it was judged must be logged."""

import dataclasses

import pytest

from attention_dynamics.book import rule_log, rule_log_page
from attention_dynamics.book.claims import REGISTRY
from attention_dynamics.book.rule_log import (
    CLAIM_NAMES,
    JUDGED,
    RULE_LOG,
    TEXT_FIELDS,
    Move,
    RuleChange,
    identifiers_in,
    moving_changes,
    unlogged_changes,
)
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


LOGGED = set(REGISTRY) | set(JUDGED) | {key for entry in RULE_LOG for key in entry.claims}


def test_every_entry_is_written_in_words():
    # the page of the log shows these texts as they are: no class, metric, file, claim's key
    # or commit in them (the commit has its own field)
    found = {(entry.date, entry.claims[0], name): identifiers_in(getattr(entry, name), LOGGED)
             for entry in RULE_LOG for name in TEXT_FIELDS}
    assert {where: what for where, what in found.items() if what} == {}
    assert set(CLAIM_NAMES) == LOGGED
    assert not [name for name in CLAIM_NAMES.values() if identifiers_in(name, LOGGED)]


def test_the_identifier_check_finds_what_the_old_entries_held():
    for text in ("the accuracy closes 95 % of the gap (ClosesGap(0.95, 1))", "SeedShare at 0.90",
                 "the share on coupling_margin_n_seeds", "the bar TRACKS_SHARE",
                 "decide at 548db1c", "a fingerprint dcec604bf1d825a8", "sticky.deep",
                 "eval_length_gen.py", "the row (hmm-per-sample-tracks-bayes)"):
        assert identifiers_in(text, LOGGED), text
    for text in ("one-sided 95 % Clopper–Pearson bounds", "the authors' Mamba (4 layers, AdamW)",
                 "0.61 to 1.00 on 6 of 6 seeds", "EM-like's speed-up, 1.61-3.03",
                 "the fifth component, 4.3 % of the variance"):
        assert identifiers_in(text, LOGGED) == [], text


def test_a_change_that_moved_a_verdict_says_which_and_why_in_brief():
    key = "routing-law-exact"
    moves = {key: Move("reproduced", "inconclusive", "decide")}
    moved = change((key,), moved=moves, in_brief="a reason for readers",
                   verdict_before="reproduced (decide)", verdict_after="inconclusive (decide)")
    assert moving_changes([change((key,)), moved]) == [moved]
    with pytest.raises(ValueError, match="in_brief must say"):
        dataclasses.replace(moved, in_brief=" ")
    with pytest.raises(ValueError, match="in_brief must say"):
        change((key,), in_brief="a change that moved nothing")
    with pytest.raises(ValueError, match="must change the verdict"):
        dataclasses.replace(moved, moved={key: Move("reproduced", "reproduced", "decide")})
    with pytest.raises(ValueError, match="must go from one of"):
        dataclasses.replace(moved, moved={key: Move("fine", "inconclusive", "decide")})
    with pytest.raises(ValueError, match="must go from one of"):
        dataclasses.replace(moved, moved={key: Move("reproduced", "undecided", "decide")})
    with pytest.raises(ValueError, match="results of one of"):
        dataclasses.replace(moved, moved={key: Move("reproduced", "inconclusive", "paper")})
    with pytest.raises(ValueError, match="only claims that the change changed"):
        dataclasses.replace(moved, moved={"value-update-exact": moves[key]})
    # a move must be the one the verdict texts tell: "not reproduced" is not "reproduced"
    with pytest.raises(ValueError, match="which verdict_before and verdict_after must name"):
        dataclasses.replace(moved, verdict_before="not reproduced (decide)")
    with pytest.raises(ValueError, match="which verdict_before and verdict_after must name"):
        dataclasses.replace(moved, verdict_after="partly (decide)")
    dataclasses.replace(moved, verdict_before="not recorded (quick), reproduced (decide)")


def test_a_change_outside_the_fingerprint_keeps_it_and_is_still_followed(monkeypatch):
    key = "routing-law-exact"
    now = REGISTRY[key].fingerprint
    kept = change((key,), {key: (now, now)}, old_rule="five seeds", new_rule="twelve seeds")
    monkeypatch.setattr(rule_log, "RULE_LOG", (*RULE_LOG, kept))
    assert unlogged_changes(REGISTRY) == []
    stale = change((key,), {key: ("0" * 16, "0" * 16)})
    monkeypatch.setattr(rule_log, "RULE_LOG", (*RULE_LOG, stale))
    assert [problem for problem in unlogged_changes(REGISTRY) if "starts from" in problem]


def test_every_claim_has_one_short_name_of_its_own():
    assert set(REGISTRY) <= set(CLAIM_NAMES)
    assert {key for entry in RULE_LOG for key in entry.claims} <= set(CLAIM_NAMES)
    assert len(set(CLAIM_NAMES.values())) == len(CLAIM_NAMES)


def test_the_identifier_check_names_what_it_found():
    assert identifiers_in("on em_faster_share") == ["a name with an underscore: em_faster_share"]
    assert identifiers_in("judged by SeedShare") == ["a class or a call: SeedShare"]
    assert identifiers_in("Bound(0.1)") == ["a class or a call: Bound("]
    assert identifiers_in("at 6122bbd, two seeds") == ["a commit or a digest: 6122bbd"]
    assert identifiers_in("see settings.py") == ["a file or a module path: settings.py"]
    keys = ["em-speedup"]
    assert identifiers_in("the row em-speedup moved", keys) == ["a claim's key: em-speedup"]
    assert identifiers_in("the row em-speedup moved") == []  # a key only among the keys given
    for text in ("EM-like's speed-up on twelve seeds, the authors' five and seven more",
                 "2.18 (interval 1.61 to 3.03), decided on 2026-12-05", "a faded bed, 1,500 of "
                 "1,500 steps", "em-speedups"):
        assert identifiers_in(text, keys) == [], text


REGISTRY_3 = {key: REGISTRY[key] for key in
              ("routing-law-exact", "value-update-exact", "em-speedup")}
"""Three registered claims, rows 1 to 3; any other key of :data:`CLAIM_NAMES` is retired."""


def _log():
    """A constructed log, oldest first: one change on 1 December, three on 3 December."""
    first = change(("routing-law-exact",), date="2026-12-01", commit="abc1234",
                   verdict_before="reproduced (quick)", verdict_after="partly (quick)",
                   moved={"routing-law-exact": Move("reproduced", "partly", "quick")},
                   in_brief="the first, in brief")
    both = change(("hmm-mean-curve-matches-bayes", "value-update-exact"), date="2026-12-03",
                  commit="bcd2345", verdict_before="inconclusive (decide)",
                  verdict_after="reproduced (decide)",
                  moved={"hmm-mean-curve-matches-bayes": Move("inconclusive", "reproduced",
                                                              "decide"),
                         "value-update-exact": Move("inconclusive", "reproduced", "decide")},
                  in_brief="two moved alike")
    quiet = change(("em-speedup",), date="2026-12-03", commit="after cde3456",
                   reason="nothing moved", verdict_before="reproduced (decide)",
                   verdict_after="reproduced (decide)")
    mixed = change(("value-update-exact", "routing-law-exact"), date="2026-12-03",
                   commit="def4567", verdict_before="partly (quick), reproduced (decide)",
                   verdict_after="reproduced (quick), partly (decide)",
                   moved={"routing-law-exact": Move("partly", "reproduced", "quick"),
                          "value-update-exact": Move("reproduced", "partly", "quick and decide")},
                   in_brief="each its own way")
    return [first, both, quiet, mixed]


def test_the_changelog_tells_the_moves_newest_first_by_row_and_short_name():
    assert rule_log_page.changelog_text(_log(), REGISTRY_3) == (
        "**3 December 2026**\n\n"
        "- Row 1 (the routing law is exact), **partly → reproduced**; row 2 (the value update "
        "is exact), **reproduced → partly** (quick and decide profiles). Each its own way.\n"
        "- Row 2 (the value update is exact) and a retired row (matches Bayes on the HMM mean "
        "curve), **inconclusive → reproduced** (decide profile). Two moved alike.\n\n"
        "**1 December 2026**\n\n"
        "- Row 1 (the routing law is exact), **reproduced → partly** (quick profile). The "
        "first, in brief.")
    assert rule_log_page.changelog_text(_log()[2:3], REGISTRY_3) == ""


def test_the_page_tells_every_change_newest_first_with_its_commit():
    log = _log()
    every = rule_log_page.rule_log_text(log, REGISTRY_3)
    days = every.split("\n\n**")
    assert [day.strip("*").split("*")[0] for day in days] == ["3 December 2026",
                                                              "1 December 2026"]
    assert every.count("*Rule before:*") == every.count("*Commit:*") == len(log)
    assert every.count("*Moved a verdict:*") == 3
    # within a day, the later entry first; the commit last, as code
    assert (every.index("*Commit:* `def4567`") < every.index("*Commit:* the commit after "
                                                            "`cde3456`")
            < every.index("*Commit:* `bcd2345`"))
    # every claim moved alike: only the move; else each claim's
    assert ("Row 2 (the value update is exact) and a retired row (matches Bayes on the HMM mean "
            "curve). *Moved a verdict:* **inconclusive → reproduced** (decide profile).") in every
    assert ("Row 1 (the routing law is exact) and row 2 (the value update is exact). *Moved a "
            "verdict:* row 1 (the routing law is exact), **partly → reproduced**; row 2") in every
    assert "Row 3 (EM-like's speed-up).\n\n- *Rule before:* old.\n" in every
    assert "- *Why:* nothing moved.\n- *Verdict before:* reproduced (decide).\n" in every


def test_the_reports_sentence_counts_changes_moves_and_claims():
    log = _log()
    assert rule_log_page.summary_phrase(log) == (
        "The rule log holds 4 changes, each made after results under the old rule had been "
        "seen; 3 of them moved the verdict of 3 claims.")
    assert rule_log_page.report_phrase(log, REGISTRY_3) == (
        rule_log_page.summary_phrase(log)[:-1] + ": row 1 (the routing law is exact), twice; "
        "row 2 (the value update is exact), twice; and a retired row (matches Bayes on the HMM "
        "mean curve).")
    assert rule_log_page.report_phrase([log[0], log[3]], REGISTRY_3).endswith(
        ": row 1 (the routing law is exact), twice; and row 2 (the value update is exact).")
    assert rule_log_page.report_phrase(log[1:2], REGISTRY_3).endswith(
        ": row 2 (the value update is exact) and a retired row (matches Bayes on the HMM mean "
        "curve).")
    assert rule_log_page.report_phrase(log[:1], REGISTRY_3) == (
        "The rule log holds 1 change, each made after results under the old rule had been "
        "seen; 1 of them moved the verdict of 1 claim: row 1 (the routing law is exact).")
    assert rule_log_page.report_phrase(log[2:3], REGISTRY_3).endswith(
        "; none of them moved a verdict.")
    # the book's own sentence names every claim whose verdict a change moved
    phrase = rule_log_page.report_phrase(RULE_LOG, REGISTRY)
    assert all(rule_log_page.claim_label(key, REGISTRY) in phrase
               for entry in moving_changes(RULE_LOG) for key in entry.moved)


def test_dates_read_in_words_and_claims_go_in_row_order():
    assert rule_log_page.long_date("2026-12-06") == "6 December 2026"
    assert rule_log_page.claims_phrase(
        ["lstm-recall-fails", "em-speedup", "routing-law-exact"], REGISTRY_3) == (
        "row 1 (the routing law is exact), row 3 (EM-like's speed-up) and a retired row (the "
        "LSTM fails recall)")
