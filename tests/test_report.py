"""The reproduction report's ledger (attention_dynamics.book.report) on constructed claims whose
verdicts are known: which profile heads each row, what is counted, how rows are numbered."""

import dataclasses
import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.colors as mcolors  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from IPython.core.formatters import format_display_data  # noqa: E402
from matplotlib.markers import MarkerStyle  # noqa: E402

from attention_dynamics.book import report  # noqa: E402
from attention_dynamics.book.claims import REGISTRY  # noqa: E402
from attention_dynamics.book.results import Results  # noqa: E402
from attention_dynamics.book.rule_log import identifiers_in  # noqa: E402
from attention_dynamics.book.tables import reader_table  # noqa: E402
from attention_dynamics.book.verdicts import BeatsNull, Bound, Claim, Null, SeedShare  # noqa: E402

EXACT = Claim("identity", "Paper II", "exact", "score_gradient", "error",
              Null("float64 round-off"), Bound(1e-10), key="identity-exact")
LOWER = Claim("EM-like ends lower", "Paper II", "lower", "em_reading", "em_loss",
              Null("SGD", "sgd_loss"), BeatsNull(), key="em-lower")


CONTROL = Claim("An MLP cannot use the context", "Paper I", "fails", "em_reading", "mlp_loss",
                Null("floor", "floor"), Bound(0.1, at_most=False), key="mlp-fails",
                control="it mixes no positions")

CHANGED = "code changed since: tasks/sticky_chain.py"


def results_file(profile: str, metrics: dict, stale: bool = False) -> dict:
    return {"metrics": metrics, "profile": profile, "device": "cpu", "stale": stale,
            "stale_reasons": [CHANGED] if stale else [], "date": "2026-12-05",
            "commit": "0123456789abcdef", "versions": {"cpu_model": "test CPU"}}


def quick_results() -> dict:
    return {"score_gradient": results_file("quick", {"error": 1e-16}),
            "em_reading": results_file("quick", {"em_loss": 2.1, "sgd_loss": 2.0})}


def control_results() -> dict:
    """The quick results with the control's metric at its floor."""
    results = quick_results()
    results["em_reading"]["metrics"] |= {"mlp_loss": 1.0, "floor": 1.0}
    return results


def test_a_current_decide_row_heads_its_claim_and_a_stale_one_does_not():
    decided = {"em_reading": results_file("decide", {"em_loss": 1.9, "sgd_loss": 2.0})}
    ledger = report.build_ledger([EXACT, LOWER], quick_results(), decided)
    assert list(ledger.headline["profile"]) == ["quick", "decide"]
    assert list(ledger.headline["verdict"]) == ["reproduced", "reproduced"]
    assert list(ledger.table["verdict"]) == ["reproduced", "not reproduced"]
    assert ledger.decide_rows[0] is None and ledger.decide_rows[1]["verdict"] == "reproduced"
    decided["em_reading"].update(stale=True, stale_reasons=[CHANGED])
    stale = report.build_ledger([EXACT, LOWER], quick_results(), decided)
    assert list(stale.headline["profile"]) == ["quick", "quick"]
    assert stale.headline.loc[2, "verdict"] == "not reproduced"
    library = report.provenance_table(stale).loc["Chapter 3", "library"]
    assert library == "stale: code changed since (1)"
    assert report.provenance_table(stale).loc["Chapter 3", "made as"] == "one run"
    decided["em_reading"]["parts"] = [{"cpu_model": "AMD EPYC", "cpu_features": "avx2 fma"},
                                      {"cpu_model": "Intel Xeon", "cpu_features": "avx2"}]
    assert report.provenance_table(report.build_ledger([EXACT, LOWER], quick_results(), decided)
                                   ).loc["Chapter 3", "made as"] == (
        "2 parts, merged; the parts on AMD EPYC (avx2 fma), Intel Xeon (avx2)")
    assert "**Stale:**" in report.provenance_text(stale)


def test_a_rule_changed_after_the_decide_run_makes_only_its_own_row_stale():
    """Two claims fed by one decide file: the one whose rule changed since the run is judged
    on the quick build, the other still on the decide file, which the provenance table calls
    current but for that row."""
    higher = Claim("EM-like ends higher", "Paper II", "higher", "em_reading", "em_loss",
                   Null("SGD", "sgd_loss"), BeatsNull(at_most=False), key="em-higher")
    decided = {"em_reading": results_file("decide", {"em_loss": 1.9, "sgd_loss": 2.0})
               | {"stale_claims": ["em-lower"],
                  "stale_reasons": ["rule changed or added since: em-lower"]}}
    ledger = report.build_ledger([LOWER, higher], quick_results(), decided)
    assert list(ledger.headline["profile"]) == ["quick", "decide"]
    assert ledger.decide_current(higher) and not ledger.decide_current(LOWER)
    assert report.provenance_table(ledger).loc["Chapter 3", "library"] == (
        "current, but for 1 row whose rule changed since it ran")


def test_decide_results_without_a_claims_metric_leave_that_row_to_the_quick_build():
    decided = {"em_reading": results_file("decide", {"other": 1.0})}
    ledger = report.build_ledger([EXACT, LOWER], quick_results(), decided)
    assert ledger.decide_rows == [None, None]
    assert len(ledger.decide_table) == 0
    assert list(ledger.headline["profile"]) == ["quick", "quick"]


def test_the_recorded_counts_add_up_to_the_claims():
    decided = {"em_reading": results_file("decide", {"em_loss": 1.9, "sgd_loss": 2.0})}
    ledger = report.build_ledger([EXACT, LOWER], quick_results(), decided)
    results = Results("reproduction_report", "quick", "cpu", 0)
    report.record_ledger(results, ledger)
    metrics = results.metrics
    assert metrics["claims_tested"] == 2 and metrics["claims_from_decide"] == 1
    assert metrics["claims_reproduced"] == 2 and metrics["claims_not_reproduced"] == 0
    assert metrics["decide_claims_judged"] == 1
    assert metrics["claims_basis_evidence_for"] == 2
    verdicts = sum(metrics[f"claims_{v.replace(' ', '_')}"] for v in report.VERDICTS)
    assert verdicts == metrics["claims_tested"]
    text = report.summary_text(ledger)
    assert "2 claims" in text and "1 from the `decide` profile" in text
    assert "This build alone: 1 reproduced, 0 partly, 1 not reproduced" in text


def test_without_decide_results_the_report_says_so():
    ledger = report.build_ledger([EXACT, LOWER], quick_results(), {})
    assert "No results of the decide profile" in report.provenance_text(ledger)
    assert list(ledger.headline["profile"]) == ["quick", "quick"]


def figure_rows(fig) -> list[tuple[str, str, float, str, str]]:
    """Each row the claim figure draws, top to bottom and panel by panel: (its panel's title,
    its label, its column, its marker's face and edge colours as hex)."""
    drawn = []
    for ax in fig.axes:
        labels = {tick.get_position()[1]: tick.get_text() for tick in ax.get_yticklabels()}
        points = sorted(ax.collections, key=lambda points: -points.get_offsets()[0][1])
        for collection in points:
            x, y = collection.get_offsets()[0]
            drawn.append((ax.texts[0].get_text(), labels[y], x,
                          mcolors.to_hex(collection.get_facecolor()[0]),
                          mcolors.to_hex(collection.get_edgecolor()[0])))
    return drawn


def marker_of(collection) -> str:
    """Which of the figure's markers a scatter of one point draws."""
    for marker in ("o", "s", "X"):
        style = MarkerStyle(marker)
        drawn = collection.get_paths()[0].vertices
        expected = style.get_path().transformed(style.get_transform()).vertices
        if drawn.shape == expected.shape and np.allclose(drawn, expected):
            return marker
    raise AssertionError("not one of the figure's markers")


def test_the_figure_puts_each_claim_in_its_verdicts_column_labelled_by_its_short_name():
    ledger = report.build_ledger([EXACT, LOWER], quick_results(), {})
    figure = report.claims_figure(ledger, names={"em-lower": "EM-like ends lower"})
    green, red = (mcolors.to_hex(report.VERDICT_COLOURS[verdict])
                  for verdict in ("reproduced", "not reproduced"))
    # one panel per chapter; a claim without a short name is labelled by its statement;
    # the column and the colour are the verdict, a filled marker the evidence that decides it
    assert figure_rows(figure) == [
        ("Chapter 1", "Identity", report.VERDICT_COLUMNS["reproduced"], green, green),
        ("Chapter 3", "EM-like ends lower", report.VERDICT_COLUMNS["not reproduced"], red, red),
    ]
    assert [marker_of(ax.collections[0]) for ax in figure.axes] == ["o", "o"]
    # the row's number in the table on the right
    numbers = [[tick.get_text() for tick in ax.child_axes[0].get_yticklabels()]
               for ax in figure.axes]
    assert numbers == [["1"], ["2"]]
    # the verdicts over the columns, and nothing on an axis that means something else
    assert [tick.get_text() for tick in figure.axes[0].get_xticklabels()] == list(report.VERDICTS)
    assert all(ax.get_xscale() == "linear" and not ax.get_xlabel() for ax in figure.axes)


def test_the_figure_marks_a_claim_undecided_for_budget_with_an_open_marker():
    share = Claim("EM-like faster", "Paper II", "every seed", "em_reading", "faster_share",
                  Null("a coin flip", value=0.5), SeedShare("n_seeds", level=0.9),
                  key="em-faster-share")
    results = quick_results()
    results["em_reading"]["metrics"] |= {"faster_share": 0.75, "n_seeds": 4}
    ledger = report.build_ledger([share], results, {})
    row = ledger.headline.loc[1]
    assert (row["verdict"], row["basis"]) == ("inconclusive", "undecided for budget")
    grey = mcolors.to_hex(report.VERDICT_COLOURS["inconclusive"])
    figure = report.claims_figure(ledger)
    assert figure_rows(figure) == [("Chapter 3", "EM-like is faster",
                                    report.VERDICT_COLUMNS["inconclusive"], "#ffffff", grey)]
    assert marker_of(figure.axes[0].collections[0]) == "o"


def test_the_table_has_one_row_per_claim_numbered_from_one():
    ledger = report.build_ledger([EXACT, LOWER], quick_results(), {})
    table = report.ledger_table(ledger)
    assert list(table.index) == [1, 2]
    assert "<b>not reproduced</b> (quick)" in table.loc[2, "verdict, on the most decisive evidence"]
    assert table.loc[1, "the other profile"] == "–"
    assert "measured:" not in table.loc[2, "ours, and the null or reference"]  # not declared


def test_a_row_whose_verdict_the_rule_log_moved_is_marked_with_a_link_to_the_log():
    from attention_dynamics.book.rule_log import Move, RuleChange

    def moved(*keys):
        return RuleChange("2026-12-07", "abc1234", keys, "old", "new", "why",
                          "reproduced (quick)", "partly (quick)",
                          moved={key: Move("reproduced", "partly", "quick") for key in keys},
                          in_brief="moved")

    quiet = RuleChange("2026-12-07", "abc1234", ("identity-exact",), "old", "new", "why",
                       "reproduced (quick)", "reproduced (quick)")
    ledger = report.build_ledger([EXACT, LOWER], quick_results(), {})
    table = report.ledger_table(ledger, [quiet, moved("em-lower"), moved("em-lower")])
    cells = table["verdict, on the most decisive evidence"]
    assert "rule log" not in cells[1]  # changed, but its verdict never moved
    assert cells[2].endswith('<a href="rule_log.html" title="the rule log moved this row\'s '
                             'verdict">verdict moved by the rule log 2×</a></small>')
    assert report.rule_log_mark("em-lower", [moved("em-lower")]).endswith(
        ">verdict moved by the rule log</a></small>")
    # the book's own table marks the rows that the book's rule log moved, and only those
    assert report.rule_log_mark("routing-gradients-fade")
    assert report.rule_log_mark("routing-law-exact") == ""


def test_a_cell_says_in_words_what_a_declared_metric_measures():
    declared = Claim("identity", "Paper II", "exact", "score_gradient", "routing_law_max_abs_error",
                     Null("float64 round-off"), Bound(1e-10), key="identity-exact")
    results = quick_results()
    results["score_gradient"]["metrics"]["routing_law_max_abs_error"] = 1e-15
    ledger = report.build_ledger([declared], results, {})
    cell = report.ledger_table(ledger).loc[1, "ours, and the null or reference"]
    assert "<i>measured:</i> Largest absolute difference between the closed-form score" in cell


def test_a_control_by_construction_keeps_its_verdict_but_is_counted_apart():
    results = control_results()
    ledger = report.build_ledger([EXACT, LOWER, CONTROL], results, {})
    row = ledger.headline.loc[3]
    assert row["verdict"] == "inconclusive" and row["basis"] == "control by construction"
    assert row["reason"].startswith("it mixes no positions; the null (floor")
    recorded = Results("reproduction_report", "quick", "cpu", 0)
    report.record_ledger(recorded, ledger)
    metrics = recorded.metrics
    assert metrics["claims_tested"] == 2 and metrics["controls_tested"] == 1
    assert metrics["claims_inconclusive"] == 0 and metrics["controls_reproduced"] == 0
    assert metrics["claims_basis_control_by_construction"] == 1
    text = report.summary_text(ledger)
    assert "**2 claims" in text and "1 controls by construction (rows 3;" in text
    decided = {"em_reading": results["em_reading"] | {"profile": "decide", "stale": False}}
    decide_ledger = report.build_ledger([EXACT, LOWER, CONTROL], results, decided)
    assert "Of its 2 rows (1 claims and 1 controls)" in report.provenance_text(decide_ledger)
    figure = report.claims_figure(ledger, names={"mlp-fails": "the MLP fails"})
    assert figure_rows(figure)[-1][:3] == ("Chapter 3", "The MLP fails",
                                           report.VERDICT_COLUMNS["inconclusive"])
    assert marker_of(figure.axes[-1].collections[-1]) == "s"  # a control, not a claim
    with pytest.raises(ValueError, match="control must say why"):
        Claim("x", "y", "z", "nb", "m", Null("floor"), Bound(1.0), control=" ")


def test_the_headline_phrases_name_the_verdict_its_profile_and_the_seed_count():
    share = Claim("EM-like faster", "Paper II", "every seed", "em_reading", "faster_share",
                  Null("a coin flip", value=0.5), SeedShare("n_seeds", level=0.9),
                  key="em-faster-share")
    decided = {"em_reading": results_file("decide", {"em_loss": 1.9, "sgd_loss": 2.0,
                                                     "faster_share": 0.75, "n_seeds": 8})}
    results = quick_results()
    results["em_reading"]["metrics"] |= {"faster_share": 0.5, "n_seeds": 4}
    phrases = report.headline_phrases(report.build_ledger([EXACT, LOWER, share], results,
                                                          decided))
    verdicts = {name: phrase for name, phrase in phrases.items() if "_why_" not in name}
    assert verdicts == {"verdict_identity_exact": "reproduced (quick profile)",
                        "verdict_em_lower": "reproduced (decide profile)",
                        "verdict_em_faster_share": "inconclusive (decide profile, 6 of 8 seeds)"}
    # with the reason where the verdict has one
    assert phrases["verdict_why_identity_exact"] == "reproduced (quick profile)"
    why = phrases["verdict_why_em_faster_share"]
    assert why.startswith("inconclusive (decide profile, 6 of 8 seeds): ") and len(why) > 50


def test_the_sensitivity_paragraph_reads_its_runs_and_says_what_moved_the_number(tmp_path):
    assert report.sensitivity_text(tmp_path) == ""
    (tmp_path / "results").mkdir()
    runs = [{"code": code, "cpu_capability": capability, "recall_accuracy": accuracy,
             "loss_at_steps": {"10": 2.0, "100": loss}}
            for code in ("old", "HEAD")
            for capability, accuracy, loss in (("AVX512", 0.75, 0.25), ("AVX2", 0.25, 1.5))]
    content = {"runs": runs, "solve_bar": {"bar": 0.9},
               "first_step_whose_loss_differs_between_unpinned_and_pinned": 7}
    path = tmp_path / "results" / report.SENSITIVITY_FILE
    path.write_text(json.dumps(content))
    text = report.sensitivity_text(tmp_path)
    assert "0.750 with torch's AVX-512 kernels and 0.250 with its AVX2" in text
    assert "step 7" in text and "the kernels alone moved it" in text
    assert "below the solve bar under both" in text
    assert "the AVX2 run's loss is 1.5 and the AVX-512 run's 0.25" in text
    runs[0]["recall_accuracy"] = 0.5      # the old code differs under the same kernels
    path.write_text(json.dumps(content))
    assert "the kernels alone moved it" not in report.sensitivity_text(tmp_path)


def test_the_findings_name_every_claim_that_is_not_reproduced_and_count_the_rest():
    ledger = report.build_ledger([EXACT, LOWER], quick_results(), {})
    text = report.findings_text(ledger)
    assert text.startswith("Of the 2 claims, 1 reproduced, 0 partly, 1 not reproduced, 0 "
                           "inconclusive.\n\n**Not reproduced (1).**")
    assert "*EM-like ends lower* (row 2, chapter 3)" in text
    assert "Partly" not in text and "Inconclusive" not in text  # no such rows
    assert text.endswith("**Reproduced (1).** The table below gives each with its number and the "
                         "null it beats.")
    # a claim with a short name goes by it, capitalised
    named = report.findings_text(ledger, {"em-lower": "EM-like's loss ends lower"})
    assert "*EM-like's loss ends lower* (row 2, chapter 3)" in named
    assert "*EM-like ends lower*" not in named



def test_a_finding_judged_seed_by_seed_gives_its_seeds_not_a_share():
    """A decided row judged by a share of seeds reads as seeds out of seeds, never as the
    share set against a per-seed null (which reads as a value of the measure)."""
    per_seed = Claim("EM-like ends lower on most seeds", "Paper II", "lower", "em_reading",
                     "lower", Null("SGD", "sgd"), SeedShare("lower_n_seeds", level=0.9),
                     each_seed=BeatsNull(), key="em-lower-seeds")
    results = quick_results()
    results["em_reading"]["metrics"] |= {"lower": 0.6, "lower_n_seeds": 6, "sgd": 0.5} | {
        f"lower_seed{i}": 0.6 for i in range(6)}
    text = report.findings_text(report.build_ledger([per_seed], results, {}))
    assert "0 of 6 seeds show it (each seed's value < the null; the null is SGD (0.500))" in text
    assert "ours 0 against" not in text


SHARE = Claim("EM-like faster on most seeds", "Paper II", "every seed", "em_reading",
              "faster_share", Null("a coin flip", value=0.5), SeedShare("n_seeds", level=0.9),
              key="em-faster")
SUCCESS = re.compile(r"(?<!not )\breproduced\b|\bconfirm|\bholds?\b|\bsucce|\bsupport|"
                     r"\bas the paper\b|\bagrees?\b|\bverified\b", re.I)
"""Wording that reads as a success."""


def test_a_findings_box_gives_each_chosen_claim_in_words_ending_in_its_verdict():
    results = quick_results()
    results["em_reading"]["metrics"] |= {"faster_share": 0.5, "n_seeds": 4}
    ledger = report.build_ledger([EXACT, LOWER, SHARE], results, {})
    statements = {"em-lower": "EM-like ends with a lower loss than SGD"}
    box = report.chapter_findings(ledger, "em_reading", ["em-lower", "em-faster"], statements)
    lines = box.markdown.split("\n")
    assert lines == [
        "- EM-like ends with a lower loss than SGD: **not reproduced** (on this build's quick "
        "runs) — judged against SGD.",
        "- EM-like faster on most seeds: **inconclusive** (on this build's quick runs, 2 of 4 "
        "seeds showing it) — too few seeds to tell the share from one half."]
    assert identifiers_in(box.markdown, ["em-lower", "em-faster", "identity-exact"]) == []
    # nothing around the claim's own words reads as a success
    assert not SUCCESS.search(lines[0].replace(statements["em-lower"], ""))
    html = box._repr_html_()
    assert html.count("<li>") == 2 and "<strong>not reproduced</strong>" in html
    assert html.count("<strong>") == 2  # bold for the verdicts only
    # glued for a page, it must offer HTML: myst-nb pastes another notebook's value only so
    bundle, _ = format_display_data(box)
    assert {"text/html", "text/markdown", "text/plain"} <= set(bundle)
    # the same claim decided by the decide runs says so
    decided = {"em_reading": results_file("decide", {"em_loss": 1.9, "sgd_loss": 2.0})}
    decide_box = report.chapter_findings(report.build_ledger([EXACT, LOWER], quick_results(),
                                                             decided), "em_reading", ["em-lower"])
    assert decide_box.markdown == "- EM-like ends lower: **reproduced** (on the deciding runs)."
    with pytest.raises(ValueError, match="belongs to 'score_gradient'"):
        report.chapter_findings(ledger, "em_reading", ["identity-exact"])
    with pytest.raises(KeyError, match="no claim 'missing'"):
        report.chapter_findings(ledger, "em_reading", ["missing"])


def test_a_reason_in_a_findings_box_is_plain_and_short():
    assert report.plain_reason("the 90% interval 0.22–1.00 of the share contains 0.5 (2 of 2 "
                               "seeds) and still learning: the loss fell 4.9%") == (
        "too few seeds to tell the share from one half")
    assert report.plain_reason("the attention stayed near uniform (measured 0.951, above "
                               "0.8)") == "the attention stayed near uniform"
    long = ("training both halves gives much of the lead by itself: the better sequential order, "
            "which has no loop, recovers most of it")
    assert report.plain_reason(long) == "training both halves gives much of the lead by itself"
    assert report.plain_reason("an error of 4.4e-16.") == "an error of 4.4 × 10⁻¹⁶"


def test_each_chapter_names_three_to_six_of_its_own_claims_in_plain_words():
    assert set(report.FINDINGS) == set(report.CHAPTER_NUMBERS)
    for chapter, keys in report.FINDINGS.items():
        assert 3 <= len(keys) <= 6 and len(set(keys)) == len(keys), chapter
        for key in keys:
            assert key in REGISTRY, key
            assert REGISTRY[key].notebook == chapter, key
            statement = report.FINDING_STATEMENTS[key]
            assert identifiers_in(statement, REGISTRY) == [], key
            # the claim as the paper makes it, never its outcome
            assert not re.search(r"reproduced|inconclusive|partly|undecided", statement), key
            assert statement[0].isupper() and not statement.endswith("."), key
    assert report.AUTHORS_MODEL_CLAIMS <= set(REGISTRY)


def test_each_chapter_page_opens_with_its_findings_box_glued_by_the_report():
    root = Path(__file__).resolve().parents[1]
    for chapter in report.FINDINGS:
        page = (root / "book" / f"{chapter}.md").read_text()
        opening = page.split("\n## ", 1)[0]
        assert opening.startswith("# ")
        assert ("````{admonition} Findings\n:class: tip\n"
                f"```{{glue}} findings_{chapter}\n:doc: /notebooks/reproduction_report.ipynb\n"
                "```\n````\n") in opening, chapter
    notebook = (root / "notebooks" / "reproduction_report.py").read_text()
    assert "glue_each(report.findings_boxes(ledger))" in notebook


def test_the_registered_runs_table_gives_a_row_per_run_after_the_claims_it_decides():
    from attention_dynamics.book.verdicts import DecidingRun

    decide = DecidingRun("decide", 6, 1500, "n_seeds", "steps",
                         "the chapter's decide profile, about 75 CPU-minutes")
    paper = DecidingRun("paper", 5, 20_000, "n_seeds", "steps",
                        "about 8 GPU-hours on one consumer GPU at Paper I's rate")
    registered = dataclasses.replace(LOWER, decided_by=(decide, paper))
    # the same runs: the same row; a claim without a paper run: a row of its own
    same = dataclasses.replace(LOWER, key="em-lower-again", claim="EM-like ends lower again",
                               decided_by=(decide, paper))
    alone = dataclasses.replace(LOWER, key="em-lower-alone", claim="EM-like ends lower alone",
                                decided_by=(dataclasses.replace(decide, seeds=32),))
    ledger = report.build_ledger([EXACT, registered, alone, same], quick_results(), {})
    table = report.deciding_runs_table(ledger)
    space = "\N{NO-BREAK SPACE}"  # a number stays on the line of its unit
    decide_cell = (f"6{space}seeds × 1,500{space}steps, in the chapter's run of about "
                   f"75{space}CPU-minutes. ")
    paper_cell = (f"5{space}seeds × 20,000{space}steps, in the chapter's run of about "
                  f"8{space}GPU-hours. Not yet made.")
    assert table.fillna("").to_dict("list") == {
        "claims": [f"2.{space}EM-like ends lower; 4.{space}EM-like ends lower again",
                   f"3.{space}EM-like ends lower alone"],
        "decide profile": [decide_cell + "Not yet made.",
                           decide_cell.replace("6", "32", 1) + "Not yet made."],
        "paper profile": [paper_cell, ""]}
    shown = reader_table(table, "the registered runs", fold_rows=0, wrap=True)
    assert shown.frame.loc[1, "paper profile"] == "—" and shown.folded and shown.wrap

    def stands(content: dict) -> list[str]:
        made = dataclasses.replace(ledger, decided={registered.notebook: content})
        return list(report.deciding_runs_table(made)["decide profile"].str.removeprefix(
            decide_cell).str.removeprefix(decide_cell.replace("6", "32", 1)))

    assert stands({"stale": False}) == ["Made, current."] * 2
    assert stands({"stale": True}) == ["Made, stale until rerun."] * 2
    # a rule changed since the run makes its own claim's run stale, and parts it from the row
    # of a claim whose run is current
    assert stands({"stale": False, "stale_claims": [same.key]}) == [
        "Made, current.", "Made, current.", "Made, stale until rerun."]


def test_where_a_registered_run_stands_in_words():
    from attention_dynamics.book.verdicts import DecidingRun

    decide = DecidingRun("decide", 6, 1500, "n_seeds", "steps", "ten minutes")
    paper = DecidingRun("paper", 5, 20_000, "n_seeds", "steps", "eight GPU-hours")
    registered = dataclasses.replace(LOWER, decided_by=(decide, paper))
    ledger = report.build_ledger([EXACT, registered], quick_results(), {})
    assert report.deciding_run_state(decide, registered, ledger) == "not yet made"
    assert report.deciding_run_state(paper, registered, ledger) == "not yet made (a GPU run)"

    def state(content: dict) -> str:
        decided = {registered.notebook: content}
        return report.deciding_run_state(decide, registered,
                                         dataclasses.replace(ledger, decided=decided))

    assert state({"stale": True}).startswith("made, but its results are stale")
    assert state({"stale": False}) == "made, and its results judge the row"
    # a rule changed since the run makes its own row stale, not the other rows of the file
    assert state({"stale": False, "stale_claims": [registered.key]}).startswith(
        "made, but its results are stale")
    assert state({"stale": False, "stale_claims": ["another-claim"]}) == (
        "made, and its results judge the row")


DECIDE_RUN = dict(seeds_setting="n_seeds", steps_setting="steps")


def registered_shares():
    """Two claims of chapter 3 judged by a share of seeds that four quick seeds leave open,
    both registered to be decided by the same decide run (and one also by a paper run), and the
    quick results that leave them so."""
    from attention_dynamics.book.verdicts import DecidingRun

    decide = DecidingRun("decide", 8, 1_000, cost="ten CPU-minutes", **DECIDE_RUN)
    paper = DecidingRun("paper", 6, 20_000, cost="eight GPU-hours", **DECIDE_RUN)
    first = dataclasses.replace(SHARE, decided_by=(decide, paper))
    second = dataclasses.replace(SHARE, claim="EM-like faster again", key="em-faster-again",
                                 metric="again_share", decided_by=(decide,))
    results = quick_results()
    results["em_reading"]["metrics"] |= {"faster_share": 0.5, "again_share": 0.5,
                                         "n_seeds": 4}
    return [EXACT, first, second], results, decide


def test_a_registered_run_made_but_stale_reads_as_made_not_as_never_made():
    claims, results, decide = registered_shares()
    fresh = report.build_ledger(claims, results, {})
    assert report.would_decide(fresh, 2) == (f"{decide.describe()}, registered to decide it "
                                             "and not yet made")
    # the same run made, its results stale: the quick row still heads, and says the run exists
    made = {"em_reading": results_file("decide", {"faster_share": 0.5, "again_share": 0.5,
                                                  "n_seeds": 8}, stale=True)}
    stale = report.build_ledger(claims, results, made)
    assert list(stale.headline["profile"]) == ["quick"] * 3
    for number in (2, 3):
        assert report.would_decide(stale, number).endswith(
            "registered to decide it and made, but its results are stale for this row until it "
            "is rerun")
        cell = report.ledger_table(stale).loc[number, "verdict, on the most decisive evidence"]
        assert "made, but its results are stale" in cell
    # a row decided by the evidence keeps its own words
    assert report.would_decide(stale, 1) == stale.headline.loc[1, "would change"]


def test_a_run_made_before_its_rows_rule_changed_and_still_open_under_it_names_the_next():
    """A registered run made before the row's rule changed (its file current for every other
    row) would repeat its numbers on a rerun: where today's rule leaves the row open on them,
    the row names the next registered run and why the made one cannot decide."""
    claims, results, decide = registered_shares()
    made = results_file("decide", {"faster_share": 0.5, "again_share": 1.0, "n_seeds": 8})
    made["stale_claims"] = [claims[1].key]  # the first share's rule changed since the run
    ledger = report.build_ledger(claims, results, {"em_reading": made})
    text = report.would_decide(ledger, 2)
    assert text.startswith(f"{claims[1].decided_by[1].describe()}, registered to decide it and "
                           "not yet made (a GPU run); the decide profile's run, made before "
                           "this row's rule changed, leaves it open under today's rule too (")
    assert "4 of 8 seeds" in text
    # decided under today's rule on those numbers: the made run is named as before
    made["metrics"]["faster_share"] = 1.0
    again = report.build_ledger(claims, results, {"em_reading": made})
    assert "leaves it open" not in report.would_decide(again, 2)


def test_the_findings_say_what_would_decide_a_group_of_rows_once():
    claims, results, decide = registered_shares()
    text = report.findings_text(report.build_ledger(claims, results, {}))
    assert "**Inconclusive (2),** grouped by what would decide them." in text
    assert text.count(decide.describe()) == 1  # once for both rows that wait on it
    group = text[text.index("*What would decide each of rows 2 and 3:*"):]
    assert group.index("(row 2, chapter 3)") < group.index("(row 3, chapter 3)")
    assert "What would decide it:" not in text
    assert report.rows_words([4]) == "row 4"
    assert report.rows_words([4, 7, 9]) == "rows 4, 7 and 9"
    with pytest.raises(ValueError, match="at least one row"):
        report.rows_words([])


def test_the_verdict_counts_give_each_chapter_its_claims_and_leave_the_controls_out():
    ledger = report.build_ledger([EXACT, LOWER, CONTROL], control_results(), {})
    counts = report.verdict_counts(ledger)
    assert list(counts.index) == list(report.VERDICTS)
    assert list(counts.columns) == ["1", "3", "all"]
    assert (counts.index.name, counts.columns.name) == ("verdict", "chapter")
    assert counts.loc["reproduced", "1"] == 1 and counts.loc["not reproduced", "3"] == 1
    # the control (inconclusive by construction) is not a claim
    assert counts["all"].sum() == ledger.claims_only.shape[0] == 2
    assert (counts[["1", "3"]].sum(axis=1) == counts["all"]).all()
    html = report.CountsTable(counts)._repr_html_()
    assert 'class="dataframe counts-table"' in html and "<th>chapter</th>" in html
