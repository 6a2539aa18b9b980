"""The runs registered to decide the claims: what their rows say, and that each is its profile's."""

import dataclasses
import importlib

import pandas as pd
import pytest

from attention_dynamics.book import report
from attention_dynamics.book.claims import DECIDING_RUNS, REGISTRY
from attention_dynamics.book.rule_log import identifiers_in
from attention_dynamics.book.verdicts import (
    BeatsNull,
    Claim,
    DecidingRun,
    Null,
    ShortBudget,
    Solved,
    registered_change,
)

DECIDE = DecidingRun("decide", 6, 1500, "n_seeds", "steps", "ten minutes")
PAPER = DecidingRun("paper", 5, 20_000, "n_seeds", "steps", "eight GPU-hours")


def setting(settings: dict, path: str) -> int:
    """The value at dotted ``path`` of ``settings`` (a list by its length)."""
    for part in path.split("."):
        settings = settings[part]
    return len(settings) if isinstance(settings, list) else settings


@pytest.mark.parametrize("key", sorted(DECIDING_RUNS))
def test_each_registered_run_is_its_profiles_run(key):
    claim = REGISTRY[key]
    chapter = importlib.import_module(f"attention_dynamics.chapters.{claim.notebook}")
    assert claim.decided_by == DECIDING_RUNS[key]
    for run in claim.decided_by:
        chosen = chapter.settings(run.profile)
        assert setting(chosen, run.seeds_setting) == run.seeds, (key, run.profile)
        assert setting(chosen, run.steps_setting) == run.steps, (key, run.profile)


def test_the_reports_table_of_the_registered_runs_reads_in_a_narrow_column():
    """The report's table of the registry's runs: three columns, each registered run once per
    claim that registers it, its cell a few short sentences (a cost is its estimate alone)
    and no name from the code in any cell."""
    claims = list(REGISTRY.values())
    headline = pd.DataFrame({"claim": [claim.claim for claim in claims]},
                            index=range(1, len(claims) + 1))
    ledger = report.Ledger(claims, {}, {}, headline, [None] * len(claims), headline)
    table = report.deciding_runs_table(ledger)
    assert list(table.columns) == ["claims", "decide profile", "paper profile"]
    listed = [int(name.split(".")[0]) for cell in table["claims"] for name in cell.split("; ")]
    assert sorted(listed) == [number for number, claim in zip(ledger.numbers, claims, strict=True)
                              if claim.decided_by]
    assert len(table) < len(listed)  # claims decided by the same runs share a row
    for profile in ("decide", "paper"):
        cells = table[f"{profile} profile"].dropna()
        runs = [run for claim in claims for run in claim.decided_by if run.profile == profile]
        assert sum(len(cell.split("; ")) for cell in table.loc[cells.index, "claims"]) == len(runs)
        assert all(len(cell) <= 100 for cell in cells), profile
    assert all(report.RUN_ESTIMATE.search(run.cost) for claim in claims
               for run in claim.decided_by)
    assert [cell for cell in table.fillna("").to_numpy().ravel()
            if identifiers_in(cell, REGISTRY)] == []


def test_registered_runs_come_smallest_profile_first():
    order = ("decide", "paper")
    for key, runs in DECIDING_RUNS.items():
        profiles = [run.profile for run in runs]
        assert profiles == sorted(profiles, key=order.index), key


def test_the_next_registered_run_is_named_and_a_made_one_never():
    assert "decide profile's run, 6 seeds of 1,500 steps (ten minutes)" in registered_change(
        (DECIDE, PAPER), "quick")
    after_decide = registered_change((DECIDE, PAPER), "decide")
    assert "paper profile's run, 5 seeds of 20,000 steps" in after_decide
    assert "decide profile" not in after_decide
    done = registered_change((DECIDE,), "decide")
    assert "left it open" in done and "registered before it runs" in done


def test_a_row_left_open_for_budget_names_the_registered_run_and_a_decided_row_does_not():
    claim = Claim("the model leaves the plateau", "Paper I", "leaves it", "ch", "error",
                  Null("plateau", "plateau"), BeatsNull(factor=0.5),
                  budget=ShortBudget("sequences", authors=1_000_000, source="train.py"),
                  decided_by=(DECIDE, PAPER))
    short = {"ch": {"metrics": {"error": 0.4, "plateau": 0.4, "sequences": 1000},
                    "profile": "quick", "device": "cpu"}}
    row = claim.row(short)
    assert row["verdict"] == "inconclusive"
    assert row["would change"].startswith("the run registered to decide it: the decide profile")
    solved = {"ch": short["ch"] | {"metrics": {"error": 0.01, "plateau": 0.4, "sequences": 1000}}}
    assert "registered" not in claim.row(solved)["would change"]


def test_a_row_waiting_on_another_measure_names_it_not_a_larger_run():
    """A check that names another setting or measure (a larger run of this one would not
    decide) keeps its own words, though the claim registers larger runs."""
    measure = "a settling measure a jittering state can meet"
    claim = Claim("attention settles first", "Paper II", "first", "ch", "share",
                  Null("no order", value=0.5), BeatsNull(at_most=False),
                  solved=Solved("settle", 0.8, relative_to="steps", other_setting=measure),
                  decided_by=(DECIDE, PAPER))
    row = claim.row({"ch": {"metrics": {"share": 1.0, "settle": 100, "steps": 100},
                            "profile": "quick", "device": "cpu"}})
    assert (row["verdict"], row["basis"]) == ("inconclusive", "undecided for budget")
    assert row["would change"] == measure


def test_a_registered_run_is_part_of_the_fingerprint_and_checks_its_input():
    claim = REGISTRY["key-orthogonality-shared"]
    fewer = dataclasses.replace(claim.decided_by[0], seeds=4)
    assert dataclasses.replace(claim, decided_by=(fewer, claim.decided_by[1])).fingerprint != (
        claim.fingerprint)
    with pytest.raises(ValueError, match="profile must be one of"):
        DecidingRun("quick", 2, 10, "n_seeds", "steps", "a minute")
    with pytest.raises(ValueError, match="seeds and steps must be positive"):
        DecidingRun("decide", 0, 10, "n_seeds", "steps", "a minute")
    with pytest.raises(ValueError, match="cost"):
        DecidingRun("decide", 2, 10, "n_seeds", "steps", " ")
