"""The rules that decide the verdicts of the reproduction report, on constructed cases."""

import pytest

from attention_dynamics.book.verdicts import (
    AtNull,
    BeatsNull,
    Bound,
    Claim,
    Null,
    Quantity,
    ShortBudget,
    Solved,
    StillLearning,
    decide,
)

NO_VALUE = Null("float64 round-off")


def test_bound_rule():
    assert decide(Bound(1e-10), 3e-16, NO_VALUE, {}) == ("reproduced", "")
    assert decide(Bound(1e-10), 1e-6, NO_VALUE, {})[0] == "not reproduced"
    assert decide(Bound(1.0, at_most=False), 1.0, NO_VALUE, {})[0] == "reproduced"
    assert decide(Bound(1.0, at_most=False), 0.99, NO_VALUE, {})[0] == "not reproduced"


def test_quantity_rule():
    speedup = Quantity(paper=2.3, rel_tol=0.25, direction=1.0)
    sgd = Null("SGD", value=1.0)
    assert decide(speedup, 2.0, sgd, {})[0] == "reproduced"  # within 25 %
    assert decide(speedup, 1.2, sgd, {})[0] == "partly"  # faster, but not 2.3 times
    assert decide(speedup, 0.8, sgd, {})[0] == "not reproduced"  # slower
    assert decide(speedup, 5.0, sgd, {})[0] == "partly"
    with pytest.raises(ValueError, match="rel_tol"):
        Quantity(paper=2.3, rel_tol=0, direction=1)


def test_a_run_that_its_null_also_passes_is_inconclusive():
    # the mean-curve MAE of an observation-blind predictor can be 0: a bound it passes decides nothing
    metrics = {"mae": 0.01, "blind_mae": 0.0}
    verdict, reason = decide(Bound(0.05), 0.01, Null("observation-blind", "blind_mae"), metrics)
    assert verdict == "inconclusive" and "observation-blind" in reason and "passes" in reason
    metrics["blind_mae"] = 0.19
    assert decide(Bound(0.05), 0.01, Null("observation-blind", "blind_mae"), metrics)[0] == \
        "reproduced"
    # the LSTM on HMM: 0.41 bits "reproduced" by coincidence with the uniform plateau
    plateau = Null("uniform-posterior plateau", value=0.418)
    assert decide(Quantity(0.41, 0.25, 0.05), 0.40, plateau, {})[0] == "inconclusive"


def test_beats_null_and_at_null():
    init = Null("random init", "init")
    assert decide(BeatsNull(), 0.2, init, {"init": 0.3})[0] == "reproduced"
    assert decide(BeatsNull(), 0.3, init, {"init": 0.2})[0] == "not reproduced"
    assert decide(BeatsNull(at_most=False, factor=2), 4.1, init, {"init": 2.0})[0] == "reproduced"
    # equal to the bar is not beating it
    assert decide(BeatsNull(at_most=False, factor=2), 4.0, init, {"init": 2.0})[0] == \
        "not reproduced"
    assert decide(BeatsNull(), 0.3, init, {"init": 0.3})[0] == "not reproduced"
    assert decide(BeatsNull(at_most=False, factor=2), 3.9, init, {"init": 2.0})[0] == \
        "not reproduced"
    floor = Null("context-free floor", "floor")
    assert decide(AtNull(0.05), 1.145, floor, {"floor": 1.143})[0] == "reproduced"  # on the floor
    assert decide(AtNull(0.05), 0.30, floor, {"floor": 1.143})[0] == "not reproduced"
    with pytest.raises(ValueError, match="null with a value"):
        decide(AtNull(0.05), 1.0, NO_VALUE, {})
    with pytest.raises(KeyError, match="floor"):
        decide(AtNull(0.05), 1.0, floor, {})


def test_a_run_stopped_while_still_learning_cannot_say_not_reproduced():
    check = StillLearning("loss_fall_last_tenth", max_fall=0.02)
    floor = Null("context-free floor", "floor")
    learning = {"floor": 1.14, "loss_fall_last_tenth": 0.15}
    flat = {"floor": 1.14, "loss_fall_last_tenth": 0.001}
    # a positive claim that failed while the loss still fell: inconclusive, with the reason
    verdict, reason = decide(Bound(0.05), 0.3, floor, learning, check)
    assert verdict == "inconclusive" and "still learning" in reason and "15.0%" in reason
    assert decide(Bound(0.05), 0.3, floor, flat, check)[0] == "not reproduced"
    # a failure claim (the model sits on its null) is not decided while the loss still falls
    assert decide(AtNull(0.05), 1.15, floor, learning, check)[0] == "inconclusive"
    assert decide(AtNull(0.05), 1.15, floor, flat, check)[0] == "reproduced"
    # a success is a success, however much the loss still falls
    assert decide(Bound(0.05), 0.01, floor, learning, check)[0] == "reproduced"
    # but the check's metric must have been recorded, whatever the verdict
    with pytest.raises(KeyError, match="loss_fall_last_tenth"):
        decide(Bound(0.05), 0.01, floor, {"floor": 1.14}, check)


def test_a_run_far_shorter_than_the_authors_cannot_say_not_reproduced():
    budget = ShortBudget("training_sequences", authors=1_500_000, source="train.py")
    plateau = Null("uniform-posterior plateau", "plateau")
    short = {"plateau": 0.374, "training_sequences": 12_800}
    long = {"plateau": 0.374, "training_sequences": 1_280_000}
    # a failure to leave the plateau after 0.9% of the authors' sequences decides nothing
    verdict, reason = decide(BeatsNull(factor=0.5), 0.374, plateau, short, budget=budget)
    assert verdict == "inconclusive" and "the run is short" in reason and "0.9%" in reason
    assert "12,800" in reason and "1,500,000" in reason and "train.py" not in reason
    # with 85% of them it does
    assert decide(BeatsNull(factor=0.5), 0.374, plateau, long, budget=budget)[0] == (
        "not reproduced")
    # a failure claim judged reproduced rests on not having learned too
    assert decide(AtNull(0.05), 0.37, plateau, short, budget=budget)[0] == "inconclusive"
    assert decide(AtNull(0.05), 0.37, plateau, long, budget=budget)[0] == "reproduced"
    # a success after a short run is a success
    assert decide(BeatsNull(factor=0.5), 0.05, plateau, short, budget=budget)[0] == (
        "reproduced")
    # both reasons are given when both hold
    still = StillLearning("fall", max_fall=0.01)
    _, reason = decide(Bound(0.05), 0.3, plateau, short | {"fall": 0.2}, still, budget=budget)
    assert "still learning" in reason and "the run is short" in reason


def test_a_budget_check_needs_a_positive_budget_and_a_fraction():
    with pytest.raises(ValueError, match="authors"):
        ShortBudget("n", authors=0, source="x")
    with pytest.raises(ValueError, match="min_fraction"):
        ShortBudget("n", authors=10, source="x", min_fraction=1.5)
    with pytest.raises(KeyError, match="training_sequences"):
        decide(Bound(0.05), 0.3, NO_VALUE, {}, budget=ShortBudget("training_sequences", 10, "x"))


def test_null_needs_a_label_and_at_most_one_value():
    with pytest.raises(ValueError, match="label"):
        Null("")
    with pytest.raises(ValueError, match="not both"):
        Null("chance", metric="chance", value=0.1)


def test_a_claim_needs_its_result_and_reports_its_null():
    claim = Claim("identity", "Paper II §3", "exact", "score_gradient", "error", NO_VALUE,
                  Bound(1e-10))
    results = {"score_gradient": {"metrics": {"error": 1e-16}, "profile": "quick",
                                  "device": "cpu"}}
    row = claim.row(results)
    assert row["verdict"] == "reproduced" and row["null"] == "float64 round-off"
    assert row["null value"] is None and row["reason"] == ""
    with pytest.raises(KeyError, match="no results file"):
        claim.row({})
    with pytest.raises(KeyError, match="error"):
        claim.row({"score_gradient": {"metrics": {}, "profile": "quick", "device": "cpu"}})
    compared = Claim("EM-like ends lower", "Paper II", "lower", "em", "em_loss",
                     Null("SGD", "sgd_loss"), BeatsNull())
    results = {"em": {"metrics": {"em_loss": 1.9, "sgd_loss": 2.0}, "profile": "quick",
                      "device": "cpu"}}
    row = compared.row(results)
    assert row["verdict"] == "reproduced" and row["null value"] == 2.0
    assert row["rule"] == "< the null"


def test_a_bound_with_a_margin_must_also_beat_its_null():
    rule = Bound(0.8, at_most=False, margin=0.1)
    strongest = Null("the strongest null", "null")
    assert decide(rule, 0.95, strongest, {"null": 0.3})[0] == "reproduced"
    assert decide(rule, 0.85, strongest, {"null": 0.79})[0] == "not reproduced"  # too close
    # position alone orders a bijection's entropies perfectly: nothing can be decided
    verdict, reason = decide(rule, 0.99, strongest, {"null": 1.0})
    assert verdict == "inconclusive" and "passes" in reason
    assert decide(Bound(0.1, margin=0.05), 0.02, strongest, {"null": 0.2})[0] == "reproduced"
    with pytest.raises(ValueError, match="margin"):
        Bound(0.8, margin=0)


def test_a_claim_about_an_unsolved_model_is_inconclusive_whatever_its_value():
    solved = Solved("mae", max_error=0.05)
    rule, init = BeatsNull(), Null("random init", "init")
    metrics = {"mae": 0.32, "init": 0.21}
    verdict, reason = decide(rule, 0.29, init, metrics, solved=solved)
    assert verdict == "inconclusive" and "did not solve" in reason and "0.32" in reason
    assert decide(rule, 0.10, init, metrics, solved=solved)[0] == "inconclusive"
    metrics["mae"] = 0.02
    assert decide(rule, 0.29, init, metrics, solved=solved)[0] == "not reproduced"
    assert decide(rule, 0.10, init, metrics, solved=solved)[0] == "reproduced"


def test_a_claim_whose_regime_the_run_never_reached_is_inconclusive_with_what_it_missed():
    # "attention settles first" needs attention that left uniform (entropy / uniform <= 0.8)
    sharpened = Solved("uniformity", 0.8, unmet="the attention stayed near uniform")
    rule, no_order = Bound(1.0, at_most=False), Null("no order (half the seeds)", value=0.5)
    verdict, reason = decide(rule, 1.0, no_order, {"uniformity": 0.96}, solved=sharpened)
    assert verdict == "inconclusive" and reason.startswith("the attention stayed near uniform")
    assert "0.96" in reason and "did not solve" not in reason
    assert decide(rule, 1.0, no_order, {"uniformity": 0.45}, solved=sharpened)[0] == "reproduced"
    assert decide(rule, 0.5, no_order, {"uniformity": 0.45},
                  solved=sharpened)[0] == "not reproduced"


def test_beyond_the_setting_by_share_of_seeds_needs_enough_seeds_past_it():
    from attention_dynamics.book.verdicts import BeyondTheSetting

    check = BeyondTheSetting("margin", "training both halves gives much of it", none=0.0,
                             level=0.90)

    def seeds(values):
        return {f"margin_seed{i}": v for i, v in enumerate(values)} | {"margin_n_seeds": len(values)}

    # 6 of 8 past the setting: the one-sided 95 % bound reaches below one half
    reason = check.reason(seeds([0.1] * 6 + [-0.1] * 2))
    assert reason is not None and "6 of 8 seeds" in reason
    assert check.reason(seeds([0.1] * 8)) is None  # 8 of 8: the lower bound is above one half
    assert check.reason(seeds([0.0] * 8)) is not None  # at the setting is not past it
    with pytest.raises(KeyError, match="each seed"):
        check.reason({"margin": 0.1})
    with pytest.raises(ValueError):
        BeyondTheSetting("margin", "x", level=1.5)
