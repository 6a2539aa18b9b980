"""The metric declarations: constructed cases with known answers, then every chapter's."""

import json
from pathlib import Path

import pytest

from attention_dynamics.book.catalogue import (
    Metric,
    _describe,
    chapter_metrics,
    declared_names,
    undeclared,
)
from attention_dynamics.book.claims import REGISTRY
from attention_dynamics.chapters import CHAPTERS

ROOT = Path(__file__).resolve().parents[1]


def test_a_family_stands_for_every_combination_of_its_values():
    family = Metric("{schedule}_loss_{part}", "nats", "final loss", "single",
                    {"schedule": ("sgd", "em"), "part": ("train", "heldout")})
    assert family.names() == ["sgd_loss_train", "sgd_loss_heldout", "em_loss_train",
                              "em_loss_heldout"]
    assert Metric("steps", "setting", "steps trained").names() == ["steps"]


def test_bad_declarations_are_refused_by_name():
    with pytest.raises(ValueError, match="unit"):
        Metric("loss", "furlongs", "final loss")
    with pytest.raises(ValueError, match="kind"):
        Metric("loss", "nats", "final loss", "many")
    with pytest.raises(ValueError, match="one non-empty line"):
        Metric("loss", "nats", "final\nloss")
    with pytest.raises(ValueError, match="exactly its placeholders"):
        Metric("{schedule}_loss", "nats", "final loss")
    with pytest.raises(ValueError, match="declared twice"):
        declared_names([Metric("loss", "nats", "a"), Metric("{x}", "nats", "b", values={"x": ("loss",)})])


def test_seed_derived_names_follow_how_the_metric_was_recorded():
    declared = declared_names([Metric("gap", "bits", "gap to Bayes", "spread"),
                               Metric("solved", "flag", "seed solves", "seeds"),
                               Metric("width", "setting", "model width")])
    assert _describe(declared, "gap") == "gap to Bayes (bits)"
    assert _describe(declared, "gap_max") == "the highest seed's value of: gap to Bayes (bits)"
    assert _describe(declared, "gap_seed0") == "gap to Bayes, seed 1 alone (bits)"
    assert _describe(declared, "gap_n_seeds") == "the number of seeds of: gap to Bayes"
    assert _describe(declared, "solved_seed3") == "seed solves, seed 4 alone (0 or 1)"
    assert _describe(declared, "solved_min") is None       # record_seeds keeps no extremes
    assert _describe(declared, "width_seed0") is None      # a single number has no seeds
    assert _describe(declared, "width_max") is None
    assert _describe(declared, "other") is None


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_declares_its_metrics_once(chapter):
    metrics = chapter_metrics(chapter)
    assert metrics and all(isinstance(metric, Metric) for metric in metrics)
    declared_names(metrics)  # raises on a name declared twice


@pytest.mark.parametrize("chapter", ["em_reading", "manifold_formation", "content_routing"])
def test_every_metric_of_a_committed_decide_file_is_declared(chapter):
    recorded = json.loads((ROOT / "results" / "decide" / f"{chapter}.json").read_text())
    assert undeclared(chapter, recorded["metrics"]) == []


def test_every_claims_metric_is_declared_by_its_chapter():
    missing = [(key, claim.metric) for key, claim in REGISTRY.items()
               if claim.notebook in CHAPTERS and undeclared(claim.notebook, [claim.metric])]
    assert missing == []
