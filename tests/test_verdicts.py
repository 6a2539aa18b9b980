"""The rules that decide the verdicts of the reproduction report."""

import pytest

from attention_dynamics.book.verdicts import Bound, Claim, Compared, Quantity


def test_bound_rule():
    assert Bound(1e-10).judge(3e-16) == "reproduced"
    assert Bound(1e-10).judge(1e-6) == "not reproduced"
    assert Bound(1.0, at_most=False).judge(1.0) == "reproduced"
    assert Bound(1.0, at_most=False).judge(0.99) == "not reproduced"


def test_quantity_rule():
    speedup = Quantity(paper=2.3, rel_tol=0.25, direction=1.0)
    assert speedup.judge(2.0) == "reproduced"  # within 25 %
    assert speedup.judge(1.2) == "partly"  # faster, but not 2.3 times
    assert speedup.judge(0.8) == "not reproduced"  # slower
    assert speedup.judge(5.0) == "partly"
    with pytest.raises(ValueError, match="rel_tol"):
        Quantity(paper=2.3, rel_tol=0, direction=1)


def test_a_claim_needs_its_result():
    claim = Claim("identity", "Paper II §3", "exact", "score_gradient", "error", Bound(1e-10))
    results = {"score_gradient": {"metrics": {"error": 1e-16}, "profile": "quick",
                                  "device": "cpu"}}
    assert claim.row(results)["verdict"] == "reproduced"
    with pytest.raises(KeyError, match="no results file"):
        claim.row({})
    with pytest.raises(KeyError, match="did not record"):
        claim.row({"score_gradient": {"metrics": {}, "profile": "quick", "device": "cpu"}})


def test_compared_rule_reads_the_other_metric_of_the_same_notebook():
    claim = Claim("EM-like ends lower", "Paper II", "lower", "em", "em_loss", Compared("sgd_loss"))
    results = {"em": {"metrics": {"em_loss": 1.9, "sgd_loss": 2.0}, "profile": "quick",
                      "device": "cpu"}}
    row = claim.row(results)
    assert row["verdict"] == "reproduced" and row["rule"] == "≤ sgd_loss"
    results["em"]["metrics"]["em_loss"] = 2.1
    assert claim.row(results)["verdict"] == "not reproduced"
    assert Compared("base", at_most=False, factor=2).judge(4.0, {"base": 2.0}) == "reproduced"
    assert Compared("base", at_most=False, factor=2).judge(3.9, {"base": 2.0}) == "not reproduced"
    with pytest.raises(KeyError, match="base"):
        Compared("base").judge(1.0, {})
