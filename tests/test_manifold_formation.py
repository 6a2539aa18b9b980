"""Chapter 4 as executed by the book build: calibration, the nulls, the geometry's numbers.

No test here asserts how a trained model comes out (how well the transformer calibrates,
whether the MLP stays at its floor, whether the transformer beats the blind predictors):
those are the claims the ledger judges. The tests check ranges, the floors' formulas, and
consistency between a measure and its nulls, which hold whatever the training reached.
"""

import math

import pytest

from attention_dynamics.tasks.bijection import mean_entropy_gap_of_marginal

pytestmark = pytest.mark.slow

LAYOUTS = ("separate", "shared")


def test_chapter_four_calibration_and_controls(results):
    m = results["manifold_formation"]["metrics"]
    # the separate layout scores only key positions: its two MAEs are one number
    assert m["separate_bijection_entropy_mae_bits"] == \
        pytest.approx(m["separate_bijection_entropy_mae_keys_bits"], rel=1e-9)
    # entropies over the V answer values lie in [0, log2 V], and so do their gaps
    top = math.log2(m["n_symbols"]) + 1e-9
    for layout in LAYOUTS:
        for name in ("bijection_entropy_mae_keys_bits", "bijection_entropy_mae_bits",
                     "bijection_entropy_mae_per_sample_bits", "mlp_bijection_entropy_mae_bits"):
            assert 0 <= m[f"{layout}_{name}"] <= top, (layout, name)
        # the gap of the mean curves is at most the mean gap (every sequence is scored at
        # the same positions)
        assert (m[f"{layout}_bijection_entropy_mae_bits"]
                <= m[f"{layout}_bijection_entropy_mae_per_sample_bits"] + 1e-9), layout
        # the context-free floor is the marginal's gap, whatever the MLP reached
        assert m[f"{layout}_bijection_marginal_gap_bits"] == pytest.approx(
            mean_entropy_gap_of_marginal(int(m["n_symbols"]), layout), rel=1e-12), layout
        assert 0 <= m[f"{layout}_bijection_leaked_mass"] <= 1, layout
    # HMM filtering: predictives over the hidden states, gaps within [0, log2 S]
    top = math.log2(results["manifold_formation"]["settings"]["hmm_task"]["n_states"]) + 1e-9
    for name in ("hmm_entropy_mae_bits", "hmm_entropy_mae_per_sample_bits",
                 "hmm_average_curve_predictor_mae_bits", "hmm_uniform_predictor_mae_bits"):
        assert 0 <= m[name] <= top, name
    assert m["hmm_entropy_mae_bits"] <= m["hmm_entropy_mae_per_sample_bits"] + 1e-9
    assert 0 <= m["hmm_leaked_mass"] <= 1
    assert m["hmm_average_curve_predictor_mae_bits"] < m["hmm_uniform_predictor_mae_bits"]


def test_chapter_four_geometry_numbers_are_in_range(results):
    m = results["manifold_formation"]["metrics"]
    for layout in LAYOUTS:
        for suffix in ("", "_random_init"):
            assert 0 <= m[f"{layout}_key_orthogonality{suffix}"] <= 1
            # signed: at least the simplex's -1 / (V - 1), at most 1
            signed = m[f"{layout}_key_signed_cosine{suffix}"]
            assert -1 / (m["n_symbols"] - 1) - 1e-9 <= signed <= 1
        for ending in ("key_orthogonality", "key_signed_cosine"):   # 95 % of the inits
            low, high = m[f"{layout}_{ending}_init_low"], m[f"{layout}_{ending}_init_high"]
            assert -1 <= low < high <= 1
    for task in (*LAYOUTS, "hmm"):
        for protocol in ("scored_final", "value_prenorm", "value_standardised", "value_best_pc",
                         "per_sequence"):
            prefix = f"{task}_manifold_{protocol}"
            assert 0 < m[f"{prefix}_share"] <= 1, prefix
            corr, strongest = m[f"{prefix}_entropy_corr"], m[f"{prefix}_entropy_corr_strongest_null"]
            assert 0 <= corr <= 1 and 0 <= strongest <= 1 + 1e-9, prefix
            assert strongest >= m[f"{prefix}_position_alone"] - 1e-12, prefix
    # in bijections without replacement the position alone fixes the entropy (ties in the
    # ranks are broken by order, so the rank correlation is 1 only up to them)
    for layout in LAYOUTS:
        assert m[f"{layout}_manifold_value_standardised_position_alone"] > 0.99
    assert m["hmm_manifold_value_standardised_position_alone"] < 0.99
    # per seed of the constant-rate runs: finite falls and gains, each inside the interval
    # whose end the ledger judges, settling steps inside the run
    for seed in range(int(m["frame_routing_value_gradient_ratio_fall_n_seeds"])):
        fall = m[f"frame_routing_value_gradient_ratio_fall_seed{seed}"]
        assert 0 < fall <= m[f"frame_routing_value_gradient_ratio_fall_high_seed{seed}"]
        gain = m[f"frame_mae_gain_after_attention_settle_seed{seed}"]
        assert 0 < m[f"frame_mae_gain_after_attention_settle_low_seed{seed}"] <= gain
        for name in ("attention", "precision"):
            assert 0 <= m[f"frame_{name}_settle_step_seed{seed}"] <= m["frame_steps"]
    for layout in LAYOUTS:
        prefix = f"{layout}_manifold_value_standardised_share"
        low, high = m[f"{prefix}_low"], m[f"{prefix}_high"]
        assert 0 < low < high < 1.05, layout  # a t-interval of shares may pass 1 a little
        assert low - 0.1 < m[prefix] < high + 0.1, layout  # parts of a 1/8 size, near the whole


def test_chapter_four_page_shows_the_numbers(built_book, results):
    m = results["manifold_formation"]["metrics"]
    page = (built_book / "html" / "book" / "manifold_formation.html").read_text()
    assert "figures/" in page or "_images/" in page
    value = m["separate_bijection_entropy_mae_bits"]
    assert any(f"{value:{fmt}}" in page for fmt in (".3f", ".4f", ".2g"))
