"""Chapter 2's module (:mod:`attention_dynamics.chapters.value_update`): its settings, its pure
helpers on hand-made inputs, and its whole experiment at a tiny size (finite, deterministic)."""

import math
from types import SimpleNamespace

import matplotlib.pyplot as plt
import pytest
import torch
from matplotlib.figure import Figure

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.value_update import (
    SETTINGS,
    chapter_seeds,
    run,
    settings,
    toy_config,
)
from attention_dynamics.chapters.value_update import figures as chapter_figures
from attention_dynamics.chapters.value_update.conditions import train_conditions
from attention_dynamics.chapters.value_update.controls import (
    EM_MEASURES,
    EmComparison,
    departure_from_symmetry,
    switch_snapshot,
    symmetric_start,
)
from attention_dynamics.chapters.value_update.words import (
    between_phrase,
    page_phrases,
    seeds_phrase,
    symmetric_leaving_phrase,
)

CPU = torch.device("cpu")


def _tiny(n_seeds=2, steps=120, record_every=5, sweep_seeds=1):
    """Quick settings cut down to a run of a few seconds."""
    chosen = settings("quick", n_seeds=n_seeds)
    chosen.update(steps=steps, record_every=record_every, sweep_seeds=sweep_seeds)
    return chosen


def _run(tmp_path, seed=0):
    results = Results("value_update", "quick", CPU, seed, directory=tmp_path)
    return results, run(results, _tiny(), CPU, seed)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("value_update"))


# ---- settings ----

def test_settings_are_a_copy_per_profile_with_seeds_overridden():
    assert set(SETTINGS) == {"quick", "decide", "paper"}
    # the decide profile is the quick run on more seeds
    assert SETTINGS["decide"] == SETTINGS["quick"] | {"n_seeds": SETTINGS["decide"]["n_seeds"]}
    assert SETTINGS["decide"]["n_seeds"] > SETTINGS["quick"]["n_seeds"]
    chosen = settings("quick")
    chosen["steps"] = 3
    assert SETTINGS["quick"]["steps"] == 400
    assert settings("paper", n_seeds=3)["n_seeds"] == 3
    assert settings("paper")["n_seeds"] == SETTINGS["paper"]["n_seeds"]


@pytest.mark.parametrize("profile", ["fast", "", "Quick"])
def test_settings_reject_a_bad_profile_naming_the_allowed_ones(profile):
    with pytest.raises(ValueError, match="profile") as error:
        settings(profile)
    assert all(name in str(error.value) for name in ("quick", "decide", "paper"))


@pytest.mark.parametrize("n_seeds", [0, 1, -2, 1.5, True, "4"])
def test_settings_reject_a_bad_number_of_seeds(n_seeds):
    with pytest.raises(ValueError, match="n_seeds"):
        settings("quick", n_seeds=n_seeds)


def test_toy_config_needs_the_switch_to_be_a_snapshot():
    assert toy_config(settings("quick")).steps == 400
    with pytest.raises(ValueError, match="record_every"):
        toy_config(_tiny(steps=20, record_every=3))
    with pytest.raises(ValueError, match="record_every"):
        toy_config(_tiny(record_every=0))


def test_chapter_seeds_follow_the_base_seed_and_the_sweep_takes_the_first():
    assert chapter_seeds({"n_seeds": 3, "sweep_seeds": 2}, 10) == ([10, 11, 12], [10, 11])
    assert chapter_seeds({"n_seeds": 2, "sweep_seeds": 5}, 0) == ([0, 1], [0, 1])


# ---- pure helpers, on inputs with known answers ----

def test_phrases_for_hand_made_counts():
    assert seeds_phrase(4, 4) == "ahead of the better sequential order on every seed"
    assert seeds_phrase(0, 4) == "behind the better sequential order on every seed"
    assert seeds_phrase(3, 4) == "ahead of the better sequential order on 3 of 4 seeds"
    assert between_phrase(0.1, 0.2, 0.5) == "below both ablations"
    assert between_phrase(0.6, 0.2, 0.5) == "above both ablations"
    assert between_phrase(0.2, 0.2, 0.5) == "between the two ablations"
    assert symmetric_leaving_phrase(8, 8, 0.01) == "only the coupled run leaves it, on every seed"
    assert symmetric_leaving_phrase(8, 8, 0.1).endswith("8 of 8 seeds, and a control leaves it too")
    assert symmetric_leaving_phrase(5, 8, 0.0).endswith("5 of 8 seeds, and no control does")


def test_departure_from_symmetry_by_hand():
    # three values (2-d logits) with mean (2, 0): distances 2, 0, 2; attention 1/2, 1/4, 1/4
    values = torch.tensor([[0.0, 0.0], [2.0, 0.0], [4.0, 0.0]], dtype=torch.float64)
    weights = torch.tensor([[0.5, 0.25, 0.25], [1 / 3, 1 / 3, 1 / 3]], dtype=torch.float64)
    fake = SimpleNamespace(values=values.expand(1, 1, 1, 3, 2), weights=weights.expand(1, 1, 1, 2, 3))
    spread, tilt = departure_from_symmetry(fake)
    assert spread.shape == tilt.shape == (1, 1, 1)
    assert spread.item() == pytest.approx(2.0, abs=1e-15)
    assert tilt.item() == pytest.approx(0.5 - 1 / 3, abs=1e-15)


def test_switch_snapshot_is_the_record_at_half_the_steps():
    fake = SimpleNamespace(steps=torch.tensor([0, 5, 10, 15, 20]), config=SimpleNamespace(steps=20))
    assert switch_snapshot(fake) == 2


def test_em_table_has_one_row_per_run_and_one_column_per_measure():
    measures = {run_name: {m: float(k + offset) for k, m in enumerate(EM_MEASURES)}
                for run_name, offset in (("em", 0.0), ("coupled", 10.0))}
    em = EmComparison(loss=torch.zeros(2, 1), proto=torch.zeros(2, 1), early=0, measures=measures)
    table = chapter_figures.em_table(em)
    assert list(table.columns) == list(EM_MEASURES.values())
    assert table.shape == (2, len(EM_MEASURES))
    assert table.iloc[0, 0] == 10.0 and table.iloc[1, -1] == len(EM_MEASURES) - 1


# ---- the experiment at a tiny size ----

def test_tiny_run_records_finite_metrics_and_every_phrase(tiny_run):
    results, chapter = tiny_run
    assert results.metrics["n_seeds"] == 2 and results.metrics["train_steps"] == 120
    assert results.metrics["sweep_seeds"] == 1 and results.metrics["coupling_margin_n_seeds"] == 2
    assert all(math.isfinite(value) for value in results.metrics.values())
    assert set(page_phrases(chapter)) == {
        "values_alone_phrase", "recombined_vs_ablations_phrase", "coupling_vs_sequential_phrase",
        "coupling_vs_sequential_equal_updates_phrase", "capacity_share_word",
        "symmetric_leaving_phrase", "sweep_coupling_margin_where_phrase", "toy_em_early_phrase",
        "toy_em_final_phrase", "toy_em_bound_phrase"}
    s, k = len(chapter.conditions.run.steps), 2
    assert chapter.conditions.proto.shape == (s, k, 5)
    assert chapter.symmetric.spread.shape == (s, k, 5)
    assert chapter.sweep.coupling.shape == (3, 3)
    assert chapter.em.loss.shape == (s, k)


def test_tiny_run_is_deterministic(tiny_run, tmp_path):
    first, _ = tiny_run
    again, _ = _run(tmp_path)
    assert again.metrics == first.metrics


def test_tiny_run_draws_every_figure(tiny_run):
    _, chapter = tiny_run
    c = chapter
    drawn = [chapter_figures.value_paths_figure(c.conditions),
             chapter_figures.responsibility_figure(c.conditions),
             chapter_figures.specialization_figure(c.conditions, c.uniform),
             chapter_figures.feedback_figure(c.first_order, c.alignment, c.conditions),
             chapter_figures.coupling_control_figure(c.conditions, c.capacity, c.symmetric),
             chapter_figures.init_sweep_figure(c.sweep),
             chapter_figures.em_figure(c.em, c.conditions)]
    assert all(isinstance(fig, Figure) and fig.axes for fig in drawn)
    for fig in drawn:
        plt.close(fig)
    assert c.identity.summary().startswith("free values")
    for part in (c.conditions, c.uniform, c.first_order, c.alignment, c.symmetric):
        assert part.summary()
    assert c.capacity.summary(c.conditions)


def test_a_part_is_deterministic(tmp_path):
    config = toy_config(_tiny(steps=20))
    results = [Results("value_update", "quick", CPU, 0, directory=tmp_path) for _ in range(2)]
    one = train_conditions(results[0], config, [3, 4], CPU)
    two = train_conditions(results[1], config, [3, 4], CPU)
    assert results[0].metrics == results[1].metrics
    assert torch.equal(one.proto, two.proto)


def test_symmetric_start_refuses_a_run_too_short_to_fit_the_growth(tmp_path):
    config = toy_config(_tiny(steps=10))
    results = Results("value_update", "quick", CPU, 0, directory=tmp_path)
    conditions = train_conditions(results, config, [0, 1], CPU)
    with pytest.raises(ValueError, match="steps"):
        symmetric_start(results, config, [0, 1], CPU, conditions)
