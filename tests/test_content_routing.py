"""Chapter 5's notebook, executed by the book build: its results and the claims its page makes."""

import pytest

from attention_dynamics.book.paper_numbers import AUTHORS_TRAINING_SEQUENCES

ARCHITECTURES = ("transformer", "mamba", "lstm", "mlp")


@pytest.mark.slow
def test_notebook_records_the_architecture_table(results):
    content = results["content_routing"]
    metrics = content["metrics"]
    for arch in ARCHITECTURES:
        for task in ("bijection", "hmm"):
            for suffix in ("", "_min", "_max"):
                assert metrics[f"mae_bits_{arch}_{task}{suffix}"] >= 0, (arch, task, suffix)
            assert (metrics[f"mae_bits_{arch}_{task}_min"] <= metrics[f"mae_bits_{arch}_{task}"]
                    <= metrics[f"mae_bits_{arch}_{task}_max"])
        assert 0 <= metrics[f"recall_accuracy_{arch}"] <= 1, arch
        for task in ("bijection", "hmm", "recall"):
            assert metrics[f"n_parameters_{arch}_{task}"] > 1000
    assert metrics["n_seeds"] >= 2
    assert metrics["parameter_mismatch_max"] < 0.05
    assert content["profile"] == "quick"


@pytest.mark.slow
def test_notebook_numbers_support_the_pages_claims(results):
    m = results["content_routing"]["metrics"]
    # the MLP sits on its floors
    assert abs(m["mae_bits_mlp_bijection"] - m["bijection_marginal_gap_bits"]) < 0.05
    assert m["recall_accuracy_mlp"] < 2 * m["recall_chance_accuracy"]
    # the transformer binds on every seed and reads the HMM matrices
    assert m["recall_accuracy_transformer_min"] > 0.99
    assert m["mae_bits_transformer_hmm_max"] < 0.5 * m["hmm_uniform_predictor_mae_bits"]
    assert m["hmm_entropy_correlation_transformer"] > 0.5
    # the MLP cannot read the HMM prompt either: it stays on the prompt-blind plateau
    assert abs(m["mae_bits_mlp_hmm"] - m["hmm_uniform_predictor_mae_bits"]) < 0.02
    # bijection: the LSTM, which can accumulate, ends far below the MLP's floor
    assert m["mae_bits_lstm_bijection_max"] < 0.5 * m["mae_bits_mlp_bijection"]
    # recall: the LSTM does not reach 1/N; at least one Mamba seed binds
    assert m["recall_accuracy_lstm_max"] < m["recall_unbound_accuracy"]
    assert m["recall_mamba_solved_seeds"] >= 1
    # mixing weights sharpen on the queried pair, the transformer's far more
    assert m["recall_pair_share_transformer_final"] > 0.8 > m["recall_pair_share_transformer_init"]
    assert (m["recall_pair_share_mamba_init"] < m["recall_pair_share_mamba_final_shown"]
            < m["recall_pair_share_transformer_final"])
    assert m["recall_attribution_share_lstm_final"] < 0.3
    # the gradient formulas are exact; softmax rows re-route, the implicit attention's do not
    assert m["scan_gradient_max_rel_error"] < 1e-10
    assert m["transformer_score_gradient_net_fraction"] < 1e-8
    assert m["mamba_attention_gradient_net_fraction"] > 0.1
    assert 0 < m["mamba_attention_negative_fraction"] < 1
    # like with like (M * dL/dM): the authors' LayerNorm pools the reader's total to zero over
    # channels, not per channel
    assert m["mamba_authors_hmm_pooled_layers_measured"] >= 1
    assert m["mamba_authors_hmm_log_weight_gradient_pooled_net_fraction"] < 1e-2
    for variant in ("authors", "standard"):
        assert m[f"mamba_{variant}_hmm_log_weight_gradient_net_fraction"] > 0.05
    # the seeds off the plateau are those whose per-sample MAE is 0.05 bits below it
    plateau = m["hmm_uniform_predictor_mae_bits"]
    for name, seeds in (("mamba_authors_deep", "deep_mamba_seeds"),
                        ("mamba_standard_deep", "deep_mamba_seeds"), *(
                            (arch, "n_seeds") for arch in ARCHITECTURES)):
        key = f"mae_per_sample_bits_{name}_hmm"
        off = m[f"hmm_seeds_off_plateau_{name}"]
        assert 0 <= off <= m[seeds]
        assert (off == m[seeds]) == (m[f"{key}_max"] < plateau - 0.05), name
        assert (off == 0) == (m[f"{key}_min"] >= plateau - 0.05), name
    # the budget shares the page quotes are the run's sequences over the authors'
    for arch, task in (("mamba", "hmm"), ("lstm", "bijection")):
        share = m[f"budget_share_{arch}_{task}"]
        assert share == pytest.approx(m[f"training_sequences_{task}"]
                                      / AUTHORS_TRAINING_SEQUENCES[arch, task].value)
    # the capacity question is asked (more pairs than addresses) and its count is a count
    assert m["capacity_d_state"] < m["recall_n_pairs"]
    assert m["capacity_pairs_per_address"] == m["recall_n_pairs"] / m["capacity_d_state"]
    solved = m["recall_mamba_capacity_solved_seeds"]
    assert (solved == m["n_seeds"]) == (m["recall_accuracy_mamba_capacity_min"] > 0.9)
    assert (solved == 0) == (m["recall_accuracy_mamba_capacity_max"] <= 0.9)
    # the nulls the report judges chapter 5 against are recorded, and ordered as they must be
    assert 0 < m["hmm_average_curve_predictor_mae_bits"] < m["hmm_uniform_predictor_mae_bits"]
    for arch in ARCHITECTURES:
        for task in ("bijection", "hmm", "recall"):
            assert f"loss_fall_last_tenth_{arch}_{task}" in m, (arch, task)
    # both Mamba variants at depth two, on HMM filtering, matched to the transformer
    for variant in ("standard", "authors"):
        prefix = f"mamba_{variant}_deep_hmm"
        assert m[f"mae_per_sample_bits_{prefix}"] >= 0
        assert f"loss_fall_last_tenth_{prefix}" in m
        assert abs(m[f"n_parameters_{prefix}"] / m["n_parameters_transformer_hmm"] - 1) < 0.05


@pytest.mark.slow
def test_chapter_five_page_shows_the_notebook_numbers_and_figures(built_book, results):
    metrics = results["content_routing"]["metrics"]
    page = (built_book / "html" / "book" / "content_routing.html").read_text()
    for arch in ARCHITECTURES:
        # the table shows the mean-curve MAE on bijections, the per-sample MAE on HMM filtering
        for metric in (f"mae_bits_{arch}_bijection", f"mae_per_sample_bits_{arch}_hmm"):
            assert f"{metrics[metric]:.3f}" in page, metric
        assert f"{metrics[f'recall_accuracy_{arch}']:.3f}" in page, arch
        assert f"{metrics[f'n_parameters_{arch}_recall']:,.0f}" in page, arch
    assert f"{metrics['scan_gradient_max_rel_error']:.1e}" in page
    for figure in ("fig_routing_scores", "fig_routing_hmm_entropy", "fig_routing_sharpening",
                   "fig_routing_recall_maps", "fig_routing_manifolds"):
        assert f"{figure}.png" in page, figure
