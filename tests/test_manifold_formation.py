"""Chapter 4 as executed by the book build: calibration, the MLP control, geometry numbers."""

import pytest

pytestmark = pytest.mark.slow


def test_chapter_four_metrics(results):
    m = results["manifold_formation"]["metrics"]
    assert m["bijection_entropy_mae_bits"] < 0.05
    assert m["hmm_entropy_mae_bits"] < 0.2
    assert m["mlp_bijection_entropy_mae_bits"] > 10 * m["bijection_entropy_mae_bits"]
    for name in ("value_pc1_share", "value_pc1_entropy_spearman", "key_orthogonality",
                 "key_orthogonality_random_init"):
        assert 0 <= m[name] <= 1, name


def test_chapter_four_page_shows_the_numbers(built_book, results):
    m = results["manifold_formation"]["metrics"]
    page = (built_book / "html" / "book" / "manifold_formation.html").read_text()
    assert "figures/" in page or "_images/" in page
    assert any(f"{m['bijection_entropy_mae_bits']:{fmt}}" in page for fmt in (".3f", ".4f", ".2g"))
