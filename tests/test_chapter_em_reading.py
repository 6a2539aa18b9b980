"""Chapter 3's module (:mod:`attention_dynamics.chapters.em_reading`): its settings, its pure
parts on inputs with known answers, and the whole experiment at a tiny size (finite metrics, the
same twice). What the experiment shows is the ledger's, not these tests'."""

import math

import matplotlib
import matplotlib.pyplot as plt
import pytest
import torch

from attention_dynamics.book.results import Results
from attention_dynamics.chapters import em_reading as chapter
from attention_dynamics.chapters.em_reading import extensions, figures, tables, words
from attention_dynamics.chapters.em_reading import reproduction as rp
from attention_dynamics.sticky.model import init_params
from attention_dynamics.sticky.training import sticky_chain_data

matplotlib.use("Agg")


def test_settings_are_copies_per_profile():
    quick, decide = chapter.settings("quick"), chapter.settings("decide")
    assert decide["fresh"]["n_seeds"] == 24 and quick["fresh"]["n_seeds"] == 8
    # the reproduction's seeds in decide: the authors' five first, then others, none twice
    assert decide["seeds"][:5] == quick["seeds"] and len(set(decide["seeds"])) >= 6
    assert len(set(decide["seeds"])) == len(decide["seeds"])
    assert decide["fresh"]["steps"] == 6000 and len(decide["seeds"]) == 48
    decide["fresh"]["n_seeds"] = quick["fresh"]["n_seeds"]
    decide["fresh"]["steps"] = quick["fresh"]["steps"]
    decide["seeds"] = quick["seeds"]
    assert decide == quick  # decide changes only the seeds and the fresh runs' steps
    quick["fresh"]["steps"] = 1
    quick["multipliers"].append(7)
    assert chapter.SETTINGS["quick"]["fresh"]["steps"] == 2000
    assert 7 not in chapter.SETTINGS["quick"]["multipliers"]
    assert chapter.settings("paper")["seeds"] == [42, 2024, 1337, 7777, 9999]


def test_n_seeds_sets_the_seeds_on_fresh_sequences_only():
    chosen = chapter.settings("paper", n_seeds=3)
    assert chosen["fresh"]["n_seeds"] == 3
    chosen["fresh"]["n_seeds"] = 8
    assert chosen == chapter.settings("paper")


@pytest.mark.parametrize(("profile", "n_seeds", "names"), [
    ("fast", None, ["profile", "'quick'", "'decide'", "'paper'", "'fast'"]),
    ("quick", 0, ["n_seeds", "at least 1", "0"]),
    ("quick", -2, ["n_seeds", "at least 1"]),
    ("quick", 2.5, ["n_seeds", "integer"]),
    ("quick", True, ["n_seeds", "integer"]),
])
def test_settings_refuse_bad_arguments_by_name(profile, n_seeds, names):
    with pytest.raises(ValueError) as error:
        chapter.settings(profile, n_seeds=n_seeds)
    for name in names:
        assert name in str(error.value)


def test_seed_counts_in_words():
    """With ``k = n = 5`` the one-sided 95 % low bound of the share solves ``p^5 = 0.05``:
    ``0.05 ** (1 / 5) = 0.549``; with ``k = 0`` the high bound is ``1 - 0.549``."""
    assert 0.05 ** (1 / 5) == pytest.approx(0.5493, abs=1e-4)
    assert words.on_seeds(5, 5) == "on every seed (one-sided 95 % bounds 0.55-1.00)"
    assert words.on_seeds(0, 5) == "on no seed (one-sided 95 % bounds 0.00-0.45)"
    assert words.on_seeds(3, 5).startswith("on 3 of 5 seeds (one-sided 95 % bounds ")
    assert words.on_seeds(3, 5).endswith(", too few to decide)")


def test_matched_snapshots_reach_the_first_snapshot_at_or_after_the_step():
    assert rp.matched_snapshots(0, 10) == 1
    assert rp.matched_snapshots(400, 10) == 41      # steps 0, 10, ..., 400
    assert rp.matched_snapshots(407, 10) == 42      # ..., 410
    assert rp.matched_snapshots(407.5, 10) == 42


def test_smooth_and_spike_multipliers():
    assert extensions.smooth_and_spike([1, 10, 30, 100], [False, False, True, True]) == (10, 30)
    assert extensions.smooth_and_spike([1, 10], [False, False]) == (10, 0)
    assert extensions.smooth_and_spike([1, 10, 30], [False, True, False]) == (30, 10)


def test_sweep_configs_scale_each_group():
    configs = extensions.sweep_configs([1, 10])
    assert list(configs) == ["value x1", "value x10", "routing x10", "readout x10", "all x10",
                             "EM-like, all x10"]
    assert configs["value x10"]["w_v"] == pytest.approx(10 * configs["value x1"]["w_v"])
    assert configs["EM-like, all x10"]["w_v"] == pytest.approx(100 * configs["value x1"]["w_v"])


def test_metrics_by_schedule_reads_each_schedules_metrics(tmp_path):
    results = Results("em_reading", "quick", "cpu", 0, directory=tmp_path)
    results.record_all({"sgd_a": 1.0, "em_a": 2.0, "sgd_ab": 3.0, "fresh_sgd_a": 4.0,
                        "fresh_em_a": 5.0, "sgd_c": 6.0})
    table = tables.metrics_by_schedule(results, "", ("sgd", "em"), ("a",))
    assert set(table.index) == {"a", "ab"} and list(table.columns) == ["sgd", "em"]
    assert table.loc["a"].tolist() == [1.0, 2.0]
    assert table.loc["ab", "sgd"] == 3.0 and math.isnan(table.loc["ab", "em"])
    fresh = tables.metrics_by_schedule(results, "fresh_", ("sgd", "em"))
    assert fresh.loc["a"].tolist() == [4.0, 5.0] and list(fresh.index) == ["a"]
    # a spread's per-seed values stay out of the tables; its mean and extremes stay in
    results.record_spread("sgd_a_step", torch.tensor([1.0, 3.0]))
    spread = tables.metrics_by_schedule(results, "", ("sgd",), ("step",))
    assert spread["sgd"].to_dict() == {"a_step": 2.0, "a_step_min": 1.0, "a_step_max": 3.0}


def test_em_checks_of_heads_that_read_nothing():
    """With ``W_V = 0`` every value is zero: the logits are zero whatever the attention, so the
    loss ``L`` is ``N log 8`` and its gradient in the scores is zero (no row's evidence moves);
    at zero values the gradients of ``L`` and of ``Q`` in the values coincide (both predict
    uniformly), so a small descent step on ``L`` lowers ``Q`` too; and ``L = N log 8`` is not
    below ``Q``'s floor ``sum_j lambda_j H(h_j)``, which is at most ``N log 8``."""
    data = sticky_chain_data([3, 4], 40)
    heads = init_params([5, 6])
    heads.w_v.zero_()
    checks = rp.em_checks(heads, data, torch.tensor([0, 1]), prefix=24, step=1e-4,
                          device=torch.device("cpu"))
    assert list(checks.columns) == list(rp.EM_CHECKS)
    assert checks.to_numpy().tolist() == [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]


def _tiny_settings():
    chosen = chapter.settings("quick", n_seeds=2)
    chosen.update(seeds=[42, 2024, 1337], sequence_length=256, steps=150, snapshot_every=10,
                  em_prefix=16, exact_steps=3, sweep_T=48, sweep_steps=20,
                  multipliers=[1, 10, 100], adam_T=48, adam_seeds=2, adam_steps=50,
                  deep_seeds=1, deep_steps=2)
    chosen["fresh"].update(steps=20, sequence_length=32, record_every=5, probe=2)
    return chosen


def _tiny_run(directory):
    torch.manual_seed(0)  # the deep variant's dropout draws from the global generator
    results = Results("em_reading", "quick", "cpu", 0, directory=directory)
    return results, chapter.run(results, _tiny_settings(), torch.device("cpu"), seed=0)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return _tiny_run(tmp_path_factory.mktemp("em_reading"))


def test_a_tiny_run_records_finite_metrics_the_same_twice(tiny, tmp_path):
    results, _ = tiny
    again, _ = _tiny_run(tmp_path)
    assert all(math.isfinite(v) for v in results.metrics.values())
    timings = set(results.timing_metrics)
    assert timings == {"reproduction_seconds", "exact_step_cost_ratio", "exact_time_to_sgd_final_ratio",
                       "sweep_seconds", "adam_seconds"}
    assert results.metrics.keys() == again.metrics.keys()
    for name, value in results.metrics.items():
        if name not in timings:
            assert again.metrics[name] == value, name
    metrics = results.metrics
    assert (metrics["n_seeds"], metrics["train_steps"], metrics["fresh_n_seeds"]) == (3, 150, 2)
    assert metrics["deep_variant_seeds"] == 1 and "deep_em_heldout_loss" in metrics


def test_a_tiny_runs_parts_phrases_and_tables(tiny):
    results, run = tiny
    assert run.reproduction.loss.shape[1] == 6 and run.heldout.loss.shape == (16, 6)
    assert run.paths.coords.shape == (16, 2, 8, 2)
    phrases = words.page_phrases(run, results, _tiny_settings())
    assert set(phrases) == {
        "authors_attention_phrase", "em_quality_phrase", "longer_phrase", "rate_phrase",
        "coherent_phrase",
        "coherence_conclusion", "em_attention_moves",
        "value_step_q_phrase", "schedule_table", "closest_schedule", "exact_heldout_relation",
        "exact_heldout_lesson"}
    assert phrases["closest_schedule"] in ("SGD", "EM-like", "values solved")
    assert list(run.deep.index) == [1.0, 10.0]
    assert list(tables.chain_table(run.chain).index) == [42, 2024, 1337]
    assert tables.per_seed_table(run.chain, run.reproduction).shape == (3, 8)
    assert tables.path_table(run.paths, run.reproduction.runs).shape == (4, 2)
    assert tables.em_checks_table(run.em).shape == (3, 4)
    assert list(tables.settling_table(results).columns) == ["sgd", "em"]
    assert "attention_half_step" in tables.fresh_table(results).index
    assert list(run.sweep.value_rows.index) == ["value x1", "value x10", "value x100"]


def test_the_figures_of_a_tiny_run(tiny):
    _, run = tiny
    drawn = {
        "chain": (figures.chain_figure(run.chain), 2),
        "loss": (figures.loss_curves_figure(run.chain, run.reproduction, run.heldout), 2),
        "paths": (figures.value_paths_figure(run.paths), 2),
        "fresh": (figures.fresh_figure(run.fresh), 3),  # with the twin axis
        "sweep": (figures.sweep_figure(run.sweep), 2),
        "frames": (figures.frame_precision_figure(run.reproduction, run.settling, run.long,
                                                  run.sweep), 3),
        "adam": (figures.adam_figure(run.adam), 1),
    }
    for name, (fig, n_axes) in drawn.items():
        assert len(fig.axes) == n_axes, name
        plt.close(fig)
