"""The basis of each verdict, what would change it, and the seed-share rule with its exact
Clopper–Pearson interval, on constructed cases."""

import dataclasses
import math

import pytest

from attention_dynamics.book.verdicts import (
    BASES,
    AtNull,
    BeatsNull,
    BeyondTheSetting,
    Bound,
    Claim,
    ClosesGap,
    Decision,
    LeadingComponent,
    Null,
    PaperSize,
    Quantity,
    SeedShare,
    ShortBudget,
    Solved,
    StillLearning,
    binomial_tail,
    clopper_pearson,
    decide,
    decision,
    headline_row,
    seed_values,
    seeds_needed,
    split_halves,
    tally,
)

NO_VALUE = Null("float64 round-off")
HALF = Null("no effect (half the seeds)", value=0.5)
BIJECTION = ("in bijections without replacement the Bayes entropy is a function of the position "
             "alone, so no protocol separates entropy order from position order")


def brute_tail(k: int, n: int, p: float, upper: bool) -> float:
    """P(X >= k) or P(X <= k) for X ~ Binomial(n, p), term by term with exact binomials."""
    js = range(k, n + 1) if upper else range(0, k + 1)
    return math.fsum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in js)


# --- the exact interval ----------------------------------------------------------------------

def test_clopper_pearson_matches_known_values():
    low, high = clopper_pearson(4, 8)
    assert low == pytest.approx(0.1570, abs=1e-3) and high == pytest.approx(0.8430, abs=1e-3)
    assert clopper_pearson(0, 5) == (0.0, pytest.approx(0.5218, abs=1e-3))
    assert clopper_pearson(8, 8) == (pytest.approx(0.6306, abs=1e-3), 1.0)
    # closed forms at the edges: 1 - (α/2)^(1/n) and (α/2)^(1/n)
    assert clopper_pearson(0, 5)[1] == pytest.approx(1 - 0.025 ** (1 / 5), abs=1e-12)
    assert clopper_pearson(8, 8)[0] == pytest.approx(0.025 ** (1 / 8), abs=1e-12)
    # a 99% interval is wider
    low99, high99 = clopper_pearson(4, 8, level=0.99)
    assert low99 < low and high99 > high


@pytest.mark.parametrize("k, n, level", [(1, 5, 0.95), (4, 8, 0.95), (6, 8, 0.95),
                                         (3, 20, 0.9), (17, 40, 0.99), (97, 120, 0.95)])
def test_the_interval_ends_solve_the_binomial_tail_equations(k, n, level):
    low, high = clopper_pearson(k, n, level)
    alpha = (1 - level) / 2
    assert brute_tail(k, n, low, upper=True) == pytest.approx(alpha, abs=1e-9)
    assert brute_tail(k, n, high, upper=False) == pytest.approx(alpha, abs=1e-9)


@pytest.mark.parametrize("n", [1, 7, 40, 200])
@pytest.mark.parametrize("p", [0.03, 0.5, 0.81])
def test_binomial_tails_match_a_term_by_term_sum(n, p):
    for k in range(-1, n + 2):
        assert binomial_tail(k, n, p, True) == pytest.approx(
            brute_tail(max(k, 0), n, p, True) if k <= n else 0.0, abs=1e-12)
        assert binomial_tail(k, n, p, False) == pytest.approx(
            brute_tail(k, n, p, False) if k >= 0 else 0.0, abs=1e-12)


def test_the_interval_refuses_impossible_counts():
    with pytest.raises(ValueError, match="k <= n"):
        clopper_pearson(9, 8)
    with pytest.raises(ValueError, match="level"):
        clopper_pearson(4, 8, level=1.0)


# --- the seed-share rule ---------------------------------------------------------------------

def test_seed_share_verdicts_from_where_the_interval_lies():
    rule = SeedShare("seeds")
    everything = decision(rule, 1.0, HALF, {"seeds": 8})
    assert (everything.verdict, everything.basis) == ("reproduced", "evidence for")
    assert everything.would_change == ("at most 7 of 8 seeds showing the effect "
                                       "(the interval reaching 0.5)")
    nothing = decision(rule, 0.0, HALF, {"seeds": 8})
    assert (nothing.verdict, nothing.basis) == ("not reproduced", "evidence against")
    assert nothing.would_change.startswith("at least 1 of 8 seeds")
    half = decision(rule, 0.5, HALF, {"seeds": 8})
    assert (half.verdict, half.basis) == ("inconclusive", "undecided for budget")
    assert half.reason == "the 95% interval 0.16–0.84 of the share contains 0.5 (4 of 8 seeds)"
    assert half.would_change == "no number of seeds at this share: the share is 0.5"
    assert rule.describe() == ("95% Clopper–Pearson interval of the share (one-sided 97.5% "
                               "bounds) above 0.5")


def test_an_undecided_share_says_how_many_seeds_would_decide_it():
    rule = SeedShare("seeds")
    made = decision(rule, 0.75, HALF, {"seeds": 8})
    assert (made.verdict, made.basis) == ("inconclusive", "undecided for budget")
    assert "6 of 8 seeds" in made.reason and "contains 0.5" in made.reason
    needed = int(made.would_change.removeprefix("about ").removesuffix(" seeds at this share"))
    assert needed > 8
    assert clopper_pearson(round(0.75 * needed), needed)[0] > 0.5  # N seeds decide
    assert clopper_pearson(round(0.75 * (needed - 1)), needed - 1)[0] <= 0.5  # N - 1 do not
    assert seeds_needed(0.75, start=8) == needed
    assert seeds_needed(0.75, start=needed) == needed  # the search starts at start
    assert seeds_needed(0.5001, limit=50) is None
    # at the N seeds it names, the rule reproduces the claim
    share = round(0.75 * needed) / needed
    assert decision(rule, share, HALF, {"seeds": needed}).verdict == "reproduced"
    # a share below p0 needs seeds too, and the interval is then below
    low_share = decision(rule, 0.25, HALF, {"seeds": 8})
    fewest = int(low_share.would_change.split()[1])
    assert clopper_pearson(round(0.25 * fewest), fewest)[1] < 0.5
    assert clopper_pearson(round(0.25 * (fewest - 1)), fewest - 1)[1] >= 0.5


def test_a_seed_share_below_p0_while_still_learning_needs_training_too():
    rule, check = SeedShare("seeds"), StillLearning("fall", max_fall=0.02)
    below = decision(rule, 0.25, HALF, {"seeds": 8, "fall": 0.3}, check)
    assert "still learning" in below.reason and below.would_change.endswith(
        "; training until the loss falls by at most 2% over the last tenth")
    above = decision(rule, 0.75, HALF, {"seeds": 8, "fall": 0.3}, check)
    # leaning towards the claim, more seeds alone would decide it; the reason still says
    # that the run was unfinished
    assert "unfinished (still learning" in above.reason and "training" not in above.would_change


def test_the_seed_share_rule_reads_its_seeds_and_checks_them():
    rule = SeedShare("seeds")
    with pytest.raises(KeyError, match="seeds"):
        decision(rule, 0.5, HALF, {})
    with pytest.raises(ValueError, match="whole number"):
        decision(rule, 0.5, HALF, {"seeds": 7.5})
    with pytest.raises(ValueError, match="share"):
        decision(rule, 1.5, HALF, {"seeds": 8})
    with pytest.raises(ValueError, match="metrics"):
        rule.judge(0.5)
    with pytest.raises(ValueError, match="p0"):
        SeedShare("seeds", p0=1.0)
    with pytest.raises(ValueError, match="level"):
        SeedShare("seeds", level=0)


# --- the basis of every path -----------------------------------------------------------------

def test_every_path_of_a_decision_has_its_basis():
    floor = Null("context-free floor", "floor")
    for rule, value, verdict in ((Bound(0.05), 0.01, "reproduced"),
                                 (Quantity(2.0, 0.25, 1.0), 1.2, "partly")):
        made = decision(rule, value, NO_VALUE, {})
        assert (made.verdict, made.basis, made.reason) == (verdict, "evidence for", "")
    made = decision(Bound(0.05), 0.3, floor, {"floor": 1.1})
    assert (made.verdict, made.basis) == ("not reproduced", "evidence against")
    # the null passes the same rule
    blind = Null("observation-blind", "blind")
    for rule, value, metrics in ((Bound(0.05), 0.01, {"blind": 0.0}),
                                 (Quantity(0.41, 0.25, 0.05), 0.40, {"blind": 0.418}),
                                 (Bound(0.8, at_most=False, margin=0.1), 0.99, {"blind": 1.0})):
        made = decision(rule, value, blind, metrics)
        assert (made.verdict, made.basis) == ("inconclusive", "undecidable by design")
        assert "passes" in made.reason
        assert made.would_change == "a task or protocol that separates the claim from its null"
    # a short budget
    budget = ShortBudget("sequences", authors=1_500_000, source="train.py", min_fraction=0.2)
    made = decision(Bound(0.05), 0.3, floor, {"floor": 1.1, "sequences": 12_800}, budget=budget)
    assert (made.verdict, made.basis) == ("inconclusive", "undecided for budget")
    assert made.would_change == ("training on at least 300,000 sequences (20% of the authors' "
                                 "1,500,000)")
    # still learning
    still = StillLearning("fall", max_fall=0.02)
    made = decision(AtNull(0.05), 1.1, floor, {"floor": 1.1, "fall": 0.2}, still)
    assert (made.verdict, made.basis) == ("inconclusive", "undecided for budget")
    assert made.would_change == "training until the loss falls by at most 2% over the last tenth"
    # both: joined with "; ", still learning first
    made = decision(Bound(0.05), 0.3, floor, {"floor": 1.1, "fall": 0.2, "sequences": 10},
                    still, budget=budget)
    assert made.basis == "undecided for budget"
    assert made.would_change == ("training until the loss falls by at most 2% over the last "
                                 "tenth; training on at least 300,000 sequences (20% of the "
                                 "authors' 1,500,000)")
    # unsolved, with the default and a stated unmet regime
    made = decision(BeatsNull(), 0.1, floor, {"floor": 0.2, "mae": 0.3}, solved=Solved("mae", 0.05))
    assert (made.verdict, made.basis) == ("inconclusive", "undecided for budget")
    assert made.would_change == ("training until the measure is at most 0.05 (the model did "
                                 "not solve the task in this run)")
    uniform = Solved("uniformity", 0.8, unmet="the attention stayed near uniform")
    made = decision(Bound(1.0, at_most=False), 1.0, HALF, {"uniformity": 0.96}, solved=uniform)
    assert made.would_change == ("training until the measure is at most 0.8 (the attention "
                                 "stayed near uniform in this run)")
    # the regime unmet at the claim's own full setting: undecidable by design, and what would
    # decide it is another setting, not more training
    at_setting = Solved("uniformity", 0.8, unmet="the attention stayed near uniform",
                        by_design="a setting in which the attention sharpens")
    made = decision(Bound(1.0, at_most=False), 1.0, HALF, {"uniformity": 0.96},
                    solved=at_setting)
    assert (made.verdict, made.basis) == ("inconclusive", "undecidable by design")
    assert made.would_change == "a setting in which the attention sharpens"
    assert "stayed near uniform" in made.reason
    made = decision(Bound(1.0, at_most=False), 1.0, HALF, {"uniformity": 0.5}, solved=at_setting)
    assert (made.verdict, made.basis) == ("reproduced", "evidence for")
    # the regime unmet, another setting named that could reach it: undecided for budget, and
    # that setting is what would decide
    elsewhere = Solved("uniformity", 0.8, unmet="the attention stayed near uniform",
                       other_setting="the deep variant on 6 seeds")
    made = decision(Bound(1.0, at_most=False), 1.0, HALF, {"uniformity": 0.96}, solved=elsewhere)
    assert (made.verdict, made.basis) == ("inconclusive", "undecided for budget")
    assert made.would_change == "the deep variant on 6 seeds"
    with pytest.raises(ValueError, match="by_design or other_setting"):
        Solved("uniformity", 0.8, by_design="x", other_setting="y")
    # undecidable by design, stated in words: whatever the value, the checks or the null
    for value in (0.0, 0.99):
        made = decision(Bound(0.8, at_most=False), value, floor, {"floor": 0.1, "mae": 0.3},
                        solved=Solved("mae", 0.05), undecidable=BIJECTION)
        assert made == Decision("inconclusive", BIJECTION, "undecidable by design",
                                "another task (the claim cannot be decided on this one)")


def test_decide_still_gives_verdict_and_reason_and_a_decision_is_frozen():
    assert decide(Bound(1e-10), 3e-16, NO_VALUE, {}) == ("reproduced", "")
    verdict, reason = decide(Bound(0.05), 0.01, Null("blind", value=0.0), {})
    assert verdict == "inconclusive" and "passes" in reason
    made = decision(Bound(1e-10), 3e-16, NO_VALUE, {})
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.verdict = "partly"
    with pytest.raises(ValueError, match="basis"):
        Decision("reproduced", "", "hunch", "x")
    with pytest.raises(ValueError, match="verdict"):
        Decision("maybe", "", "evidence for", "x")
    with pytest.raises(ValueError, match="would_change"):
        Decision("reproduced", "", "evidence for", "")


# --- what would change a decided verdict -----------------------------------------------------

def change(rule, value, null_value=None):
    null = NO_VALUE if null_value is None else Null("null", value=null_value)
    made = decision(rule, value, null, {})
    assert made.basis in ("evidence for", "evidence against")
    return made.verdict, made.would_change


def test_what_would_flip_a_bound():
    assert change(Bound(0.05), 0.01) == ("reproduced", "a value above 0.05")
    assert change(Bound(0.05), 0.3) == ("not reproduced", "a value at most 0.05")
    assert change(Bound(0.99, at_most=False), 1.0) == ("reproduced", "a value below 0.99")
    assert change(Bound(0.99, at_most=False), 0.5) == ("not reproduced", "a value at least 0.99")
    # with a margin the threshold is the stricter of the bound and the null past the margin
    verdict, text = change(Bound(0.8, at_most=False, margin=0.1), 0.85, 0.79)
    assert verdict == "not reproduced"
    assert text == "a value at least 0.89 (at least 0.8 and 0.1 above the null's 0.79)"
    verdict, text = change(Bound(0.1, margin=0.05), 0.2, 0.12)
    assert verdict == "not reproduced"
    assert text == "a value at most 0.07 (at most 0.1 and 0.05 below the null's 0.12)"
    verdict, text = change(Bound(0.8, at_most=False, margin=0.1), 0.95, 0.3)
    assert verdict == "reproduced" and text.startswith("a value below 0.8 ")
    verdict, text = change(Bound(0.8, at_most=False, margin=0.1), 0.95, 0.75)
    assert verdict == "reproduced" and text.startswith("a value below 0.85 ")


def test_what_would_flip_a_comparison_with_the_null():
    assert change(BeatsNull(), 0.2, 0.3) == ("reproduced", "a value at least 0.3")
    assert change(BeatsNull(), 0.4, 0.3) == ("not reproduced", "a value below 0.3")
    assert change(BeatsNull(factor=0.5), 0.374, 0.374) == (
        "not reproduced", "a value below 0.187 (0.5 × the null's 0.374)")
    assert change(BeatsNull(at_most=False, factor=2), 4.1, 2.0) == (
        "reproduced", "a value at most 4 (2 × the null's 2)")
    assert change(BeatsNull(at_most=False), 1.0, 2.0) == ("not reproduced", "a value above 2")
    assert change(AtNull(0.05), 1.145, 1.143) == ("reproduced", "a value outside [1.09, 1.19]")
    assert change(AtNull(0.05), 0.3, 1.143) == ("not reproduced", "a value within [1.09, 1.19]")


def test_what_would_change_a_reported_number():
    speedup = Quantity(paper=2.0, rel_tol=0.25, direction=1.0)
    assert change(speedup, 2.1) == ("reproduced", "a value outside [1.5, 2.5]")
    assert change(speedup, 1.2) == ("partly", "a value within [1.5, 2.5]")
    assert change(speedup, 0.8) == ("not reproduced",
                                    "a value on the paper's side of 1 (above it)")
    falls = Quantity(paper=0.2, rel_tol=0.5, direction=1.0)
    assert change(falls, 1.5) == ("not reproduced", "a value on the paper's side of 1 (below it)")


# --- rows and the tally ----------------------------------------------------------------------

ROW_KEYS = ["key", "claim", "source", "paper", "null", "null value", "ours", "rule", "verdict",
            "reason", "basis", "would change", "shown with", "interval low", "interval high", "profile",
            "device"]


def test_a_row_has_its_basis_what_would_change_it_and_an_interval():
    claim = Claim("identity", "Paper II", "exact", "nb", "error", NO_VALUE, Bound(1e-10))
    results = {"nb": {"metrics": {"error": 1e-16, "share": 0.75, "seeds": 8, "corr": 0.99,
                                  "null": 0.98},
                      "profile": "quick", "device": "cpu"}}
    row = claim.row(results)
    assert list(row) == ROW_KEYS
    assert row["basis"] == "evidence for" and row["would change"] == "a value above 1e-10"
    assert math.isnan(row["interval low"]) and math.isnan(row["interval high"])
    seeds = Claim("settles first", "Paper I", "most seeds", "nb", "share",
                  Null("no order", value=0.5), SeedShare("seeds"))
    row = seeds.row(results)
    assert list(row) == ROW_KEYS and row["basis"] == "undecided for budget"
    assert (row["interval low"], row["interval high"]) == pytest.approx(clopper_pearson(6, 8))
    order = Claim("PC1 orders by entropy", "Paper I", "strong", "nb", "corr",
                  Null("position alone", "null"), Bound(0.8, at_most=False, margin=0.1),
                  undecidable=BIJECTION)
    row = order.row(results)
    assert (row["verdict"], row["basis"], row["reason"]) == ("inconclusive",
                                                             "undecidable by design", BIJECTION)
    assert row["ours"] == 0.99 and row["null value"] == 0.98  # still shown
    with pytest.raises(ValueError, match="undecidable"):
        Claim("x", "y", "z", "nb", "corr", NO_VALUE, Bound(1.0), undecidable=" ")


def test_tally_counts_rows_per_basis_with_zeros():
    rows = [{"basis": "evidence for"}, {"basis": "evidence for"},
            {"basis": "undecided for budget"}]
    counts = tally(rows)
    assert list(counts) == list(BASES)
    assert counts == {"evidence for": 2, "evidence against": 0, "undecidable by design": 0,
                      "undecided for budget": 1, "control by construction": 0}
    assert tally([]) == dict.fromkeys(BASES, 0)
    assert tally(iter(rows))["evidence for"] == 2  # any iterable

    class Table:  # a table that gives its records, as a DataFrame does
        def to_dict(self, orient):
            assert orient == "records"
            return rows

    assert tally(Table()) == counts
    with pytest.raises(ValueError, match="basis"):
        tally([{"basis": "a hunch"}])


def test_outside_null_range_decides_on_either_side_and_not_inside():
    from attention_dynamics.book.verdicts import OutsideNullRange, decision

    rule = OutsideNullRange("init_low", "init_high")
    metrics = {"init_low": 0.18, "init_high": 0.23}
    below = decision(rule, 0.10, Null("random init"), metrics)
    above = decision(rule, 0.365, Null("random init"), metrics)
    inside = decision(rule, 0.20, Null("random init"), metrics)
    assert (below.verdict, below.basis) == ("reproduced", "evidence for")
    assert "0.18 or more" in below.would_change
    assert (above.verdict, above.basis) == ("not reproduced", "evidence against")
    assert (inside.verdict, inside.basis) == ("inconclusive", "undecidable by design")
    assert "0.2 lies inside the null's range 0.18 to 0.23" in inside.reason
    flipped = decision(OutsideNullRange("init_low", "init_high", at_most=False), 0.365,
                       Null("random init"), metrics)
    assert flipped.verdict == "reproduced"
    with pytest.raises(ValueError, match="low <= high"):
        decision(rule, 0.1, Null("random init"), {"init_low": 0.3, "init_high": 0.2})


def test_interval_bound_needs_the_whole_interval_on_one_side():
    from attention_dynamics.book.verdicts import IntervalBound, decision

    rule = IntervalBound(0.5, "low", "high")
    for (low, high), verdict, basis in (((0.3, 0.45), "reproduced", "evidence for"),
                                        ((0.52, 0.7), "not reproduced", "evidence against"),
                                        ((0.45, 0.7), "inconclusive", "undecided for budget")):
        made = decision(rule, (low + high) / 2, Null("a constant ratio", value=1.0),
                        {"low": low, "high": high})
        assert (made.verdict, made.basis) == (verdict, basis)
    assert "holds the bound 0.5" in decision(rule, 0.6, Null("x", value=1.0),
                                             {"low": 0.45, "high": 0.7}).reason
    above = IntervalBound(2.0, "low", "high", at_most=False)
    assert above.judge(3.0, None, {"low": 2.1, "high": 4.0}) == "reproduced"
    assert above.judge(1.0, None, {"low": 0.5, "high": 1.9}) == "not reproduced"
    with pytest.raises(ValueError, match="low <= high"):
        rule.judge(0.5, None, {"low": 0.6, "high": 0.4})


def test_outlasted_counts_a_failure_only_after_several_times_the_reference_steps():
    from attention_dynamics.book.verdicts import BeatsNull, Outlasted, decision

    check = Outlasted("steps", "reference_steps", "reference_solved", factor=3)
    failing = dict(mae=0.37, blind=0.3)
    rule, null = BeatsNull(factor=0.5), Null("blind", "blind")
    short = decision(rule, 0.37, null, failing | dict(steps=400, reference_steps=200,
                                                    reference_solved=1), budget=check)
    assert (short.verdict, short.basis) == ("inconclusive", "undecided for budget")
    assert "fewer than 3 times the 200" in short.reason
    assert short.would_change == "training for at least 600 steps"
    long = decision(rule, 0.37, null, failing | dict(steps=600, reference_steps=200,
                                                   reference_solved=1), budget=check)
    assert (long.verdict, long.basis) == ("not reproduced", "evidence against")
    unsolved = decision(rule, 0.37, null, failing | dict(steps=5000, reference_steps=400,
                                                       reference_solved=0), budget=check)
    assert unsolved.verdict == "inconclusive" and "did not solve" in unsolved.reason
    # with a fallback, an unsolved reference hands the budget to the authors' sequences
    fallback = Outlasted("steps", "reference_steps", "reference_solved", factor=3,
                         fallback=ShortBudget("sequences", 1000.0, "their script"))
    unsolved = failing | dict(steps=5000, reference_steps=400, reference_solved=0)
    short = decision(rule, 0.37, null, unsolved | dict(sequences=100), budget=fallback)
    assert (short.verdict, short.basis) == ("inconclusive", "undecided for budget")
    assert "did not solve" in short.reason and "10.0% of the authors' 1,000" in short.reason
    assert short.would_change == "training on at least 200 sequences (20% of the authors' 1,000)"
    enough = decision(rule, 0.37, null, unsolved | dict(sequences=200), budget=fallback)
    assert (enough.verdict, enough.basis) == ("not reproduced", "evidence against")
    passing = decision(rule, 0.1, null, failing | dict(steps=10, reference_steps=200,
                                                     reference_solved=1), budget=check)
    assert passing.verdict == "reproduced"       # a success needs no budget
    with pytest.raises(ValueError, match="factor"):
        Outlasted("s", "r", "ok", factor=0.5)


def test_at_null_with_a_tolerance_relative_to_the_null():
    """rel_tol: the model may close that share of the null's distance to 0 and still fail."""
    plateau = Null("plateau", "plateau")
    rule = AtNull(rel_tol=0.05)
    assert rule.tolerance(0.4) == pytest.approx(0.02)
    assert decide(rule, 0.381, plateau, {"plateau": 0.4})[0] == "reproduced"   # closed 4.75 %
    assert decide(rule, 0.379, plateau, {"plateau": 0.4})[0] == "not reproduced"  # 5.25 %
    assert decide(rule, 0.419, plateau, {"plateau": 0.4})[0] == "reproduced"  # worse, as near
    assert rule.would_change("reproduced", 0.381, 0.4) == "a value outside [0.38, 0.42]"
    assert "5%" in rule.describe()
    for bad in (dict(), dict(abs_tol=0.1, rel_tol=0.1), dict(rel_tol=0.0), dict(abs_tol=-1.0)):
        with pytest.raises(ValueError, match="tol"):
            AtNull(**bad)


def test_each_undecided_rule_names_its_basis():
    """An interval that holds its bound waits for a larger sample (budget), a value inside a
    null's range cannot be told from the null (design); a share of seeds waits for seeds."""
    from attention_dynamics.book.verdicts import IntervalBound, OutsideNullRange

    metrics = {"low": 0.4, "high": 0.7, "seeds": 8, "fall": 0.2}
    made = decision(IntervalBound(0.5, "low", "high"), 0.55, HALF, metrics)
    assert (made.verdict, made.basis) == ("inconclusive", "undecided for budget")
    made = decision(OutsideNullRange("low", "high"), 0.55, HALF, metrics)
    assert (made.verdict, made.basis) == ("inconclusive", "undecidable by design")
    # unfinished training is needed only by a budget-undecided value that leans against;
    # one that leans for the claim names it in its reason, and needs only a larger sample
    still = StillLearning("fall", max_fall=0.02)
    leaning = decision(IntervalBound(0.5, "low", "high"), 0.6, HALF, metrics, still)
    assert "still learning" in leaning.reason and "training until" in leaning.would_change
    hopeful = decision(IntervalBound(0.5, "low", "high"), 0.45, HALF, metrics, still)
    assert "unfinished (still learning" in hopeful.reason
    assert "training until" not in hopeful.would_change
    inside = decision(OutsideNullRange("low", "high"), 0.55, HALF, metrics, still)
    assert "still learning" not in inside.reason
    share = decision(SeedShare("seeds"), 0.5, HALF, metrics, still)
    assert share.basis == "undecided for budget" and "still learning" in share.reason


def test_one_sided_bounds_of_a_directional_share():
    """level 0.90 gives one-sided 95 % bounds: 5 of 5 seeds exclude a coin flip (the sign test's
    p = 1/32 < 0.05), 4 of 5 do not."""
    rule = SeedShare("seeds", level=0.90)
    low, _ = rule.interval(1.0, {"seeds": 5})
    assert low == pytest.approx(0.05 ** (1 / 5), rel=1e-9)
    assert decide(rule, 1.0, HALF, {"seeds": 5})[0] == "reproduced"
    assert decide(rule, 0.8, HALF, {"seeds": 5})[0] == "inconclusive"
    assert "(one-sided 95% bounds)" in rule.describe()


def test_closes_gap_from_the_null_to_the_optimum():
    """An MAE must close 95 % of the floor's gap to 0; an accuracy 95 % of chance's gap to 1."""
    from attention_dynamics.book.verdicts import ClosesGap

    floor, chance = Null("floor", "floor"), Null("chance", "chance")
    mae = ClosesGap(0.95, optimum=0.0)
    assert mae.threshold(1.2) == pytest.approx(0.06)
    assert decide(mae, 0.059, floor, {"floor": 1.2})[0] == "reproduced"
    assert decide(mae, 0.061, floor, {"floor": 1.2})[0] == "not reproduced"
    assert mae.would_change("reproduced", 0.059, 1.2) == "a value above 0.06"
    accuracy = ClosesGap(0.95, optimum=1.0)
    assert accuracy.threshold(0.125) == pytest.approx(0.95625)
    assert decide(accuracy, 0.96, chance, {"chance": 0.125})[0] == "reproduced"
    assert decide(accuracy, 0.94, chance, {"chance": 0.125})[0] == "not reproduced"
    assert accuracy.would_change("not reproduced", 0.94, 0.125) == "a value at least 0.956"
    assert accuracy.describe() == "closes ≥ 95% of the null's gap to 1"
    with pytest.raises(ValueError, match="no gap"):
        decide(mae, 0.1, Null("zero", value=0.0), {})
    with pytest.raises(ValueError, match="share"):
        ClosesGap(0.0, optimum=0.0)


def test_a_quantity_judged_on_its_interval():
    """The paper's 2.3 (±25 %: 1.725-2.875) against intervals: meeting the window reproduces,
    missing it on the paper's side of 1 is partly, holding 1 or below it is not reproduced."""
    rule = Quantity(paper=2.3, rel_tol=0.25, direction=1.0, low_metric="lo", high_metric="hi")
    none = Null("SGD", value=1.0)

    def verdict(lo, hi, point=1.5):
        return decide(rule, point, none, {"lo": lo, "hi": hi})[0]

    assert verdict(1.2, 1.8) == "reproduced"      # the point misses, the interval meets
    assert verdict(2.8, 3.5, 3.1) == "reproduced"
    assert verdict(1.1, 1.6) == "partly"
    assert verdict(3.0, 4.0, 3.4) == "partly"
    assert verdict(0.8, 1.6) == "not reproduced"  # cannot even exclude no effect
    assert verdict(0.5, 0.9, 0.7) == "not reproduced"
    assert rule.would_change("partly", 1.5, None, {"lo": 1.1, "hi": 1.6}) == (
        "an interval meeting [1.72, 2.88]")
    assert rule.describe() == ("interval meets [1.72, 2.88] (the paper's 2.3 ± 25%); partly if "
                               "wholly on its side of 1")
    with pytest.raises(ValueError, match="low_metric"):
        Quantity(paper=2.3, rel_tol=0.25, direction=1.0, low_metric="lo")
    with pytest.raises(ValueError, match="low <= high"):
        decide(rule, 1.5, none, {"lo": 2.0, "hi": 1.0})


# --- the headline and the figure's orientation ------------------------------------------------

def test_the_headline_takes_decide_only_where_its_results_are_current():
    quick, decide = {"profile": "quick", "verdict": "inconclusive"}, {"profile": "decide"}
    assert headline_row(quick, decide, decide_current=True) is decide
    assert headline_row(quick, decide, decide_current=False) is quick
    assert headline_row(quick, None, decide_current=True) is quick


@pytest.mark.parametrize("rule, null, lower", [
    (Bound(0.05), None, True), (Bound(1.0, at_most=False), None, False),
    (BeatsNull(), 0.3, True), (BeatsNull(at_most=False), 0.3, False),
    (ClosesGap(0.95, optimum=0.0), 1.1, True), (ClosesGap(0.95, optimum=1.0), 0.1, False),
    (Quantity(paper=2.3, rel_tol=0.25, direction=1.0), None, False),
    (Quantity(paper=430, rel_tol=0.25, direction=1000), None, True),
    (SeedShare("seeds"), 0.5, False), (AtNull(rel_tol=0.05), 1.1, True),
])
def test_lower_is_better_follows_the_side_the_rule_rewards(rule, null, lower):
    assert rule.lower_is_better(null) is lower
    # and agrees with the verdicts: a value far on the rewarded side of the null passes a
    # rule that compares with the null
    if isinstance(rule, BeatsNull | ClosesGap):
        far = null * 0.01 if lower else null * 100
        far = min(far, 1.0) if isinstance(rule, ClosesGap) and not lower else far
        assert rule.judge(far, null) == "reproduced"


# --- seeds: judged one by one, and on each half ------------------------------------------------

def per_seed(metric: str, values: list[float]) -> dict[str, float]:
    return {f"{metric}_seed{i}": v for i, v in enumerate(values)} | {f"{metric}_n_seeds": len(values)}


def test_seed_values_and_halves_read_what_record_seeds_writes():
    metrics = per_seed("mae", [0.1, 0.2, 0.3, 0.6, 0.9])
    assert seed_values(metrics, "mae") == [0.1, 0.2, 0.3, 0.6, 0.9]
    assert seed_values(metrics, "other") is None
    assert split_halves([0.1, 0.2, 0.3, 0.6, 0.9]) == pytest.approx((0.15, 0.6))
    assert split_halves([0.4]) is None


def test_a_verdict_that_the_halves_of_the_seeds_decide_oppositely_is_fragile():
    rule = BeatsNull(factor=0.5)
    null = Null("blind", "blind")
    metrics = {"blind": 1.0}
    # the mean (0.45) passes; the first half (0.1) passes, the second (0.8) does not
    made = decision(rule, 0.45, null, metrics, halves=(0.1, 0.8))
    assert (made.verdict, made.basis) == ("inconclusive", "undecided for budget")
    assert made.reason.startswith("fragile: the first half of the seeds gives reproduced (0.1)")
    assert made.would_change == "more seeds, on which both halves agree"
    # halves that agree leave the verdict as it was
    assert decision(rule, 0.45, null, metrics, halves=(0.4, 0.49)).verdict == "reproduced"
    assert decision(rule, 0.7, null, metrics, halves=(0.6, 0.8)).verdict == "not reproduced"


def test_a_share_of_seeds_is_fragile_when_its_halves_fall_on_both_sides_of_p0():
    rule = SeedShare("seeds", level=0.90)
    metrics = {"seeds": 12}
    # 9 of 12 is not decided at one-sided 95 %; 10 of 12 is, and then its halves matter
    assert decision(rule, 10 / 12, HALF, metrics, halves=(1.0, 4 / 6)).verdict == "reproduced"
    assert rule.judge_point(0.5) == "inconclusive" and rule.judge_point(0.4) == "not reproduced"
    split = decision(rule, 10 / 12, HALF, metrics, halves=(1.0, 2 / 6))
    assert split.verdict == "inconclusive" and split.reason.startswith("fragile")


def test_a_claim_judged_seed_by_seed_counts_the_seeds_that_pass():
    chance = Null("chance", value=0.1)
    claim = Claim("solves recall", "Paper I", "0.978", "nb", "accuracy", chance,
                  SeedShare("accuracy_n_seeds", level=0.90),
                  each_seed=ClosesGap(0.95, optimum=1.0), key="solves-recall")
    accuracies = [1.0, 0.99, 0.97, 0.88, 1.0, 0.999]  # the bar is 0.955: 5 of 6 pass
    content = {"metrics": {"accuracy": sum(accuracies) / 6} | per_seed("accuracy", accuracies),
               "profile": "quick", "device": "cpu"}
    row = claim.row({"nb": content})
    assert row["ours"] == pytest.approx(5 / 6)
    assert row["verdict"] == "inconclusive" and "5 of 6 seeds" in row["reason"]
    assert row["rule"].startswith("each seed closes ≥ 95% of the null's gap to 1")
    all_pass = [1.0] * 6
    content["metrics"] |= per_seed("accuracy", all_pass)
    assert claim.row({"nb": content})["verdict"] == "reproduced"
    # without per-seed values the claim cannot be judged seed by seed
    content["metrics"] = {"accuracy": 1.0}
    with pytest.raises(KeyError, match="per-seed values"):
        claim.row({"nb": content})
    # the per-seed rule is part of the fingerprint
    assert claim.fingerprint != dataclasses.replace(
        claim, each_seed=ClosesGap(0.9, optimum=1.0)).fingerprint


# --- guards: a bar relative to a null, a leading component, numbers shown beside ----------------

def test_a_solved_bar_can_be_a_share_of_a_nulls_error():
    check = Solved("mae", 0.5, relative_to="blind")
    assert check.reason({"mae": 0.04, "blind": 0.1}) is None
    reason = check.reason({"mae": 0.06, "blind": 0.1})
    assert reason == "the model did not solve the task (measured 0.06, above 0.05, 0.5 × 0.1)"
    assert check.would_decide({"blind": 0.1}) == (
        "training until the measure is at most 0.5 × 0.1 (the model did not solve the task in "
        "this run)")
    assert check.would_decide() == ("training until the measure is at most 0.5 times its "
                                     "reference (the model did not solve the task in this run)")
    # a count reads whole, never as a power of ten, and no metric's name is in the words
    steps = Solved("settle_step_max", 0.8, unmet="not settled", relative_to="steps")
    assert steps.reason({"settle_step_max": 1800.0, "steps": 2000.0}) == (
        "not settled (measured 1,800, above 1,600, 0.8 × 2,000)")
    # a mean-curve error of 0, which an observation-blind predictor reaches, is solved under a
    # fixed bar and not solved under a bar of half the blind predictor's per-sample error when
    # the run's per-sample error is that predictor's
    assert Solved("mae", 0.05).reason({"mae": 0.0}) is None
    assert check.reason({"mae": 0.1, "blind": 0.1}) is not None


def test_an_effect_carried_by_a_later_component_is_partly():
    carried = LeadingComponent("component", "component_share")
    metrics = {"component": 5, "component_share": 0.068, "null": 0.04}
    made = decision(BeatsNull(at_most=False), 0.49, Null("shuffles", "null"), metrics,
                    carried_by=carried)
    assert (made.verdict, made.basis) == ("partly", "evidence for")
    assert made.reason == ("the effect is carried by PC5, which carries 6.8% of the variance, "
                           "not by the leading component")
    metrics["component"] = 1
    assert decision(BeatsNull(at_most=False), 0.49, Null("shuffles", "null"), metrics,
                    carried_by=carried).verdict == "reproduced"
    # a verdict against the claim stays as it is
    metrics["component"] = 3
    assert decision(BeatsNull(at_most=False), 0.01, Null("shuffles", "null"), metrics,
                    carried_by=carried).verdict == "not reproduced"


def test_an_effect_that_the_runs_setting_gives_by_itself_is_partly():
    beyond = BeyondTheSetting("over_setting_min", "a tenfold rate lengthens paths by itself")
    metrics = {"over_setting_min": 0.4}
    made = decision(BeatsNull(at_most=False), 3.2, Null("ratio 1", value=1.0), metrics,
                    carried_by=beyond)
    assert (made.verdict, made.basis) == ("partly", "evidence for")
    assert made.reason == ("a tenfold rate lengthens paths by itself; over that, the effect is "
                           "0.40 on the lowest seed (1 or below: no more than the setting "
                           "gives by itself)")
    assert "every seed" in made.would_change
    metrics["over_setting_min"] = 1.2   # beyond the setting on every seed
    assert decision(BeatsNull(at_most=False), 3.2, Null("ratio 1", value=1.0), metrics,
                    carried_by=beyond).verdict == "reproduced"
    metrics["over_setting_min"] = 0.4   # a verdict against the claim stays as it is
    assert decision(BeatsNull(at_most=False), 0.8, Null("ratio 1", value=1.0), metrics,
                    carried_by=beyond).verdict == "not reproduced"
    with pytest.raises(KeyError, match="over_setting_min"):
        beyond.reason({})


def test_a_match_that_misses_the_size_the_paper_states_is_partly():
    """Six seeds, each closing 95 % of a floor of 1.2 bits (errors up to 0.06 pass): the share
    passes, and the paper's size (below 0.01) decides between reproduced and partly."""
    size = PaperSize("mae", 0.01, "the paper states 0.003 to 0.007 bits", level=0.90)
    claim = Claim("matches Bayes", "Paper I", "0.005", "nb", "mae", Null("floor", "floor"),
                  SeedShare("mae_n_seeds", level=0.90), each_seed=ClosesGap(0.95, optimum=0.0),
                  carried_by=size, key="matches")

    def row(errors):
        metrics = {"floor": 1.2, "mae": sum(errors) / len(errors), "mae_n_seeds": len(errors)}
        metrics |= {f"mae_seed{i}": error for i, error in enumerate(errors)}
        return claim.row({"nb": {"metrics": metrics, "profile": "decide", "device": "cpu"}})

    assert row([0.005] * 6)["verdict"] == "reproduced"         # 6 of 6 at the paper's size
    missed = row([0.005] * 5 + [0.02])                          # 5 of 6: bounds 0.42 to 0.99
    assert missed["verdict"] == "partly" and missed["basis"] == "evidence for"
    assert missed["reason"] == ("the size the paper states is missed: the paper states 0.003 to "
                                "0.007 bits; 5 of 6 seeds at most 0.01 (ours 0.005 to 0.02)")
    assert "at most 0.01" in missed["would change"]
    assert row([0.01] * 6)["verdict"] == "reproduced"          # at the bound: at most it
    assert row([0.02] * 6)["verdict"] == "partly"               # the effect, not its size
    assert row([0.5] * 6)["verdict"] == "not reproduced"        # a verdict against stays
    # without per-seed values the value itself is judged
    assert size.reason({"mae": 0.009}) is None
    assert "0 of 1 seed at most 0.01 (ours 0.011)" in size.reason({"mae": 0.011})
    with pytest.raises(ValueError, match="bound"):
        PaperSize("mae", 0.0, "stated")


def test_a_verdict_against_counts_after_a_late_phase_of_the_runs_own_solve_steps():
    """Chapter 4's budget: a verdict that rests on the model not having learned counts once the
    run trained the ledger's multiple of its own solve step; a run that did not record its
    solve step says so and stays inconclusive."""
    from attention_dynamics.book.claims import SOLVE_MULTIPLE, late_phase

    check = late_phase("steps", "solve_step")
    keys = Null("random init", "init")
    against = {"steps": 1_000, "init": 0.2}   # ours 0.3 above the init's 0.2: a verdict against
    missing = decision(BeatsNull(), 0.3, keys, against, budget=check)
    assert (missing.verdict, missing.basis) == ("inconclusive", "undecided for budget")
    assert missing.reason == ("the step at which the run solved the task was not recorded, "
                              f"so no budget of {SOLVE_MULTIPLE} times it is known")
    assert "records the step at which the run solved the task" in missing.would_change
    short = decision(BeatsNull(), 0.3, keys, against | {"solve_step": 400}, budget=check)
    assert short.verdict == "inconclusive"
    assert short.reason == "trained 1,000 steps, fewer than 3 times the 400 that the run needed"
    assert short.would_change == "training for at least 1,200 steps"
    late = decision(BeatsNull(), 0.3, keys, against | {"solve_step": 300}, budget=check)
    assert (late.verdict, late.basis) == ("not reproduced", "evidence against")
    # a verdict for the claim does not rest on the budget, recorded or not
    assert decision(BeatsNull(), 0.1, keys, against, budget=check).verdict == "reproduced"


def test_numbers_shown_beside_a_claim_do_not_decide_it():
    claim = Claim("tracks", "Paper I", "0.02", "nb", "mae", Null("blind", "blind"),
                  BeatsNull(factor=0.5), key="tracks")
    shown = dataclasses.replace(claim, shown_with=(("standard variant", "mae_standard"),))
    content = {"metrics": {"mae": 0.1, "blind": 0.3, "mae_standard": 0.25},
               "profile": "quick", "device": "cpu"}
    assert shown.row({"nb": content})["shown with"] == "standard variant: 0.25"
    assert claim.row({"nb": content})["shown with"] == ""
    assert shown.fingerprint == claim.fingerprint
    assert shown.row({"nb": content})["verdict"] == claim.row({"nb": content})["verdict"]


def test_several_regime_checks_are_taken_in_order_the_first_unmet_deciding():
    solved_task = Solved("mae", max_error=0.05, unmet="the task was not solved")
    settled_early = Solved("settle_step", max_error=0.8, relative_to="steps",
                           unmet="the attention settled too late")
    rule, null = BeatsNull(at_most=False), Null("no gain", value=1.0)
    metrics = {"mae": 0.01, "settle_step": 700.0, "steps": 800.0}
    made = decision(rule, 1.2, null, metrics, solved=(solved_task, settled_early))
    assert made.verdict == "inconclusive" and made.reason.startswith("the attention settled")
    assert made.basis == "undecided for budget"
    metrics["mae"] = 0.2  # the first check fails first
    made = decision(rule, 1.2, null, metrics, solved=(solved_task, settled_early))
    assert made.reason.startswith("the task was not solved")
    metrics.update(mae=0.01, settle_step=400.0)  # both met: the rule decides
    assert decision(rule, 1.2, null, metrics, solved=(solved_task, settled_early)).verdict == (
        "reproduced")


def test_a_size_missed_by_an_unfinished_run_is_undecided():
    """The paper's size missed while the training checks say the run is unfinished: the miss
    rests on not having learned, so the row is inconclusive for budget; a finished run's miss
    is partly; a run that reaches the size is reproduced however long it trained."""
    size = PaperSize("mae", 0.01, "the paper states 0.007 bits")
    learning = StillLearning("fall", max_fall=0.01)

    def judged(mae, fall):
        metrics = {"floor": 1.2, "fall": fall, "mae": mae}
        return decision(ClosesGap(0.95, optimum=0.0), mae, Null("floor", "floor"), metrics,
                        still_learning=learning, carried_by=size)

    unfinished = judged(0.02, fall=0.05)
    assert unfinished.verdict == "inconclusive" and unfinished.basis == "undecided for budget"
    assert unfinished.reason.startswith("the effect reproduced, but the size the paper states "
                                         "is missed")
    assert "at most 0.01" in unfinished.would_change
    assert judged(0.02, fall=0.001).verdict == "partly"
    assert judged(0.005, fall=0.05).verdict == "reproduced"


def test_a_size_missed_where_a_flat_loss_cannot_show_the_finish_is_undecided():
    """A still-learning check that is blind (a rate decaying to zero flattens the loss anyway)
    cannot show that a run finished: a size missed there is inconclusive for budget however
    flat the loss, while a failure of the rule itself still rests on the loss check alone."""
    size = PaperSize("mae", 0.01, "the paper states 0.007 bits")
    blind = StillLearning("fall", max_fall=0.01, blind="the rate decays to zero")
    metrics = {"floor": 1.2, "fall": 0.001, "mae": 0.02}
    missed = decision(ClosesGap(0.95, optimum=0.0), 0.02, Null("floor", "floor"), metrics,
                      still_learning=blind, carried_by=size)
    assert (missed.verdict, missed.basis) == ("inconclusive", "undecided for budget")
    assert missed.reason.endswith("a flat loss cannot show the run finished: the rate decays "
                                  "to zero")
    assert "constant rate" in missed.would_change and "at most 0.01" in missed.would_change
    reached = decision(ClosesGap(0.95, optimum=0.0), 0.005, Null("floor", "floor"),
                       metrics | {"mae": 0.005}, still_learning=blind, carried_by=size)
    assert reached.verdict == "reproduced"
    failed = decision(ClosesGap(0.95, optimum=0.0), 0.9, Null("floor", "floor"),
                      metrics | {"mae": 0.9}, still_learning=blind, carried_by=size)
    assert failed.verdict == "not reproduced"  # blindness guards a missed size only
    assert blind.unseen_finish({"fall": 0.05}).startswith("still learning")
    assert StillLearning("fall", max_fall=0.01).unseen_finish({"fall": 0.001}) is None


def test_a_rule_class_version_enters_the_fingerprint_only_above_one():
    """Raising a check class's RULE_VERSION changes the fingerprint of a claim that uses it, and
    a class at version 1 leaves the canonical text as it was (no tag)."""
    from attention_dynamics.book.verdicts import _canonical

    size = PaperSize("mae", 0.01, "the paper states 0.007 bits")
    learning = StillLearning("fall", max_fall=0.01)
    assert _canonical(learning) == "StillLearning(metric='fall', max_fall=0.01)"
    assert _canonical(size).startswith(f"PaperSize@{PaperSize.RULE_VERSION}(metric='mae'")

    @dataclasses.dataclass(frozen=True)
    class Later(PaperSize):
        RULE_VERSION = PaperSize.RULE_VERSION + 1

    later = Later("mae", 0.01, "the paper states 0.007 bits")
    assert _canonical(later).split("(")[0] == f"Later@{PaperSize.RULE_VERSION + 1}"
