"""The papers' numbers are typed once, in ``book.paper_numbers``, and the book reads them there."""

import ast
import math
from pathlib import Path

import pytest

from attention_dynamics.book import paper_numbers
from attention_dynamics.book.claims import REGISTRY
from attention_dynamics.book.paper_numbers import (
    AUTHORS_CHECKPOINT_KEY_ORTHOGONALITY,
    AUTHORS_TRAINING_SEQUENCES,
    ENTROPY_MAE_BITS,
    RECALL_ACCURACY,
    STICKY_CHAIN,
    VALUE_MANIFOLD_PC1_SHARE,
    PaperNumber,
)
from attention_dynamics.book.verdicts import Quantity
from attention_dynamics.models.registry import ARCHITECTURES

ROOT = Path(__file__).resolve().parents[1]
CHAPTER_FIVE = "lib/attention_dynamics/chapters/content_routing"  # the code of the notebook
TABLES = {"ENTROPY_MAE_BITS": ENTROPY_MAE_BITS, "RECALL_ACCURACY": RECALL_ACCURACY,
          "STICKY_CHAIN": STICKY_CHAIN,
          "AUTHORS_CHECKPOINT_KEY_ORTHOGONALITY": AUTHORS_CHECKPOINT_KEY_ORTHOGONALITY,
          "AUTHORS_TRAINING_SEQUENCES": AUTHORS_TRAINING_SEQUENCES}
NUMBERS = [number for table in TABLES.values() for number in table.values()]
NUMBERS.append(VALUE_MANIFOLD_PC1_SHARE)
QUOTED = [number.text for number in NUMBERS if any(c.isdigit() for c in number.text)]


def test_every_entry_is_a_well_formed_paper_number():
    assert {name for name, value in vars(paper_numbers).items()
            if isinstance(value, (dict, PaperNumber)) and name.isupper()} == \
        set(TABLES) | {"VALUE_MANIFOLD_PC1_SHARE"}
    for number in NUMBERS:
        assert isinstance(number, PaperNumber)
        assert number.value is None or (isinstance(number.value, (int, float))
                                        and math.isfinite(number.value)), number
        assert number.text.strip() and number.source.strip(), number
        assert number.source.startswith(("Paper I", "Paper II", "authors'")), number
        # a number is given exactly where the paper quotes one
        assert (number.value is None) == (number.text == "not reported"), number


def test_the_tables_cover_every_architecture_and_task():
    assert set(ENTROPY_MAE_BITS) == {(arch, task) for arch in ARCHITECTURES
                                     for task in ("bijection", "hmm")}
    assert set(RECALL_ACCURACY) == set(ARCHITECTURES)
    assert all(0 <= n.value <= 1 for n in RECALL_ACCURACY.values() if n.value is not None)
    assert all(n.value > 0 for n in ENTROPY_MAE_BITS.values() if n.value is not None)
    # every quoted MAE says which MAE it is: the two kinds differ by a factor of two on HMM
    assert all(n.kind in ("mean curve", "per sample") for n in ENTROPY_MAE_BITS.values()
               if n.value is not None)
    with pytest.raises(ValueError, match="kind"):
        PaperNumber(0.1, "0.1", "Paper I", kind="median")
    assert 0 < VALUE_MANIFOLD_PC1_SHARE.value < 1


def test_the_report_judges_quantities_by_the_module_numbers():
    quantities = [claim.rule for claim in REGISTRY.values() if isinstance(claim.rule, Quantity)]
    assert len(quantities) >= 2
    values = {number.value for number in NUMBERS if number.value is not None}
    assert all(rule.paper in values for rule in quantities), quantities
    # the value manifold's share, judged seed by seed, reaches the low end of the stated range
    for layout in ("separate", "shared"):
        per_seed = REGISTRY[f"value-manifold-pc1-share-{layout}"].each_seed
        assert per_seed.bound == VALUE_MANIFOLD_PC1_SHARE.value - VALUE_MANIFOLD_PC1_SHARE.precision


def test_the_report_quotes_the_module_texts():
    from_module = 0
    for claim in REGISTRY.values():
        if any(c.isdigit() for c in claim.paper):  # the paper's number, as the module quotes it
            assert any(text in claim.paper for text in QUOTED), claim.paper
            from_module += 1
        # else a qualitative claim: "exact", "lower", ...
    assert from_module >= 10


@pytest.mark.parametrize("source", ["lib/attention_dynamics/book/claims.py",
                                    "notebooks/reproduction_report.py",
                                    "notebooks/content_routing.py", *(
                                        str(path.relative_to(ROOT)) for path in sorted(
                                            (ROOT / CHAPTER_FIVE).glob("*.py")))])
def test_the_claims_and_notebooks_type_no_paper_number(source):
    tree = ast.parse((ROOT / source).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Quantity":
            paper = next(k.value for k in node.keywords if k.arg == "paper")
            assert not isinstance(paper, ast.Constant), ast.unparse(node)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            assert not any(text in node.value for text in QUOTED), node.value


def test_the_chapter_page_glues_the_papers_numbers():
    page = (ROOT / "book" / "content_routing.md").read_text()
    for table in (ENTROPY_MAE_BITS, RECALL_ACCURACY):
        for number in table.values():
            if any(c.isdigit() for c in number.text):
                assert number.text not in page, number.text
    assert "```{glue} results_table\n:doc: /notebooks/content_routing.ipynb\n```" in page


def test_a_stated_precision_gives_the_window_of_values_the_text_admits():
    assert STICKY_CHAIN["em_speedup"].relative_precision == pytest.approx(0.05 / 2.3)
    window = Quantity(paper=0.87, rel_tol=VALUE_MANIFOLD_PC1_SHARE.relative_precision,
                      direction=0.5).window()
    assert window == pytest.approx((0.84, 0.90))  # the paper's "84-90 %"
    with pytest.raises(ValueError, match="precision"):
        PaperNumber(None, "qualitative", "Paper I", precision=0.1)
    with pytest.raises(ValueError, match="states no precision"):
        _ = PaperNumber(1.0, "1", "Paper I").relative_precision
