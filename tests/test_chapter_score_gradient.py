"""Chapter 1's module (:mod:`attention_dynamics.chapters.score_gradient`): its settings, its
measures on hand-made problems, its tables and figures, and its whole experiment at a tiny size
(finite, deterministic, recording every number the chapter page glues)."""

import math
import re
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest
import torch
from matplotlib.figure import Figure

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.score_gradient import SETTINGS, ScoreGradientRun, run, settings, tables
from attention_dynamics.chapters.score_gradient import figures as chapter_figures
from attention_dynamics.chapters.score_gradient.checks import (
    CONDITIONS,
    QUANTITIES,
    SHAPE_NAMES,
    GradientCheck,
    WeightStep,
    mass_shift,
    orthonormal_inputs,
    random_shape,
    rows_gaining,
)
from attention_dynamics.heads import sample_head_problem

ROOT = Path(__file__).resolve().parents[1]
CPU = torch.device("cpu")


TINY = dict(n_problems=6, max_length=6, n_step_problems=4, n_kernel_heads=2, sticky_T=24,
            sticky_steps=2, sticky_window=8, timing_length=4, repeats=1)
"""The quick settings' sizes cut down to a run of a second."""


def _results_of_a_tiny_run(directory, seed=0) -> tuple[Results, ScoreGradientRun]:
    """The metrics and the parts of the whole experiment, on the CPU with :data:`TINY` sizes."""
    results = Results("score_gradient", "quick", CPU, seed, directory=directory)
    return results, run(results, {**settings("quick"), **TINY}, CPU, seed)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    return _results_of_a_tiny_run(tmp_path_factory.mktemp("score_gradient"))


def _two_key_problem(seed=0):
    """One causal head on one sequence of two positions: row 0 sees one key, row 1 two."""
    return sample_head_problem(torch.Generator().manual_seed(seed), 1, 1, 2, 3, 2, 2)


# ---- settings ----

def test_settings_are_a_copy_per_profile():
    assert SETTINGS["decide"] == SETTINGS["quick"]  # the decide profile changes nothing here
    copies = [settings(profile) for profile in ("quick", "paper")]
    for chosen in copies:
        chosen["kernel_steps"] = None
    assert [SETTINGS[p]["n_problems"] for p in ("quick", "paper")] == [300, 3000]
    assert SETTINGS["quick"]["kernel_steps"] == SETTINGS["paper"]["kernel_steps"] == (1e-3, 1e-1)


def test_settings_refuse_a_bad_profile_naming_the_argument():
    with pytest.raises(ValueError, match="profile.*'quick', 'decide', 'paper'"):
        settings("fast")


@pytest.mark.parametrize("n_seeds", [0, 1, 5])
def test_settings_refuse_any_number_of_seeds_the_chapter_has_none(n_seeds):
    with pytest.raises(ValueError, match="n_seeds.*no seeds setting"):
        settings("quick", n_seeds=n_seeds)


# ---- the measures on hand-made problems ----

def test_random_shapes_stay_in_their_ranges_and_follow_the_generator():
    shapes = [random_shape(torch.Generator().manual_seed(3), 7) for _ in range(2)]
    assert shapes[0] == shapes[1]
    generator = torch.Generator().manual_seed(0)
    for _ in range(50):
        batch, heads, length, *widths = random_shape(generator, 7)
        assert 1 <= batch <= 4 and 1 <= heads <= 4 and 1 <= length <= 7
        assert all(1 <= width <= 16 for width in widths)
    assert random_shape(generator, 1)[2] == 1


def test_mass_shift_on_two_keys_matches_the_logistic_by_hand():
    """With two keys of weights ``a, 1 - a`` the mass on key 0 is ``sigmoid(logit a + ds_0 -
    ds_1)``; its first-order change is ``a (1 - a) (ds_0 - ds_1)``, ``ds = -eta alpha A``. The
    single-key row has no change and is left out. The loss falls by ``eta |dL/ds|^2`` to first
    order."""
    problem = _two_key_problem()
    record, _ = problem.forward_backward()
    grads = problem.closed_form(record)
    a = record.weights.detach()[0, 0, 1, 0]
    advantage = grads.advantage[0, 0, 1]
    sign = 1 if advantage[0] < 0 else -1  # the better key's mass is a (key 0) or 1 - a
    step = 1e-4
    eta = step / grads.scores.abs().max()
    ds = -eta * grads.scores[0, 0, 1]
    exact = torch.sigmoid(torch.logit(a) + ds[0] - ds[1]) - a
    out = mass_shift(problem, step)
    assert out.shift.shape == out.predicted.shape == (1,)
    assert out.predicted.item() == pytest.approx((a * (1 - a) * (ds[0] - ds[1])).item() * sign,
                                                 rel=1e-9)
    assert out.shift.item() == pytest.approx(sign * exact.item(), rel=1e-6)
    assert out.loss_drop == pytest.approx((eta * grads.scores.pow(2).sum()).item(), rel=1e-3)


def test_mass_shift_leaves_out_a_problem_with_no_resolvable_row():
    problem = sample_head_problem(torch.Generator().manual_seed(0), 2, 1, 1, 3, 2, 2)
    out = mass_shift(problem, 1e-2)
    assert out.shift.numel() == out.predicted.numel() == 0
    assert out.loss_drop is None


def test_a_score_step_raises_the_better_key_of_a_two_key_row():
    # two keys: the step moves mass from the worse key to the better one, always
    for seed in range(5):
        assert rows_gaining(_two_key_problem(seed), 1e-3, "scores") == 1.0


def test_rows_gaining_measures_a_weight_step_and_refuses_other_targets():
    problem = sample_head_problem(torch.Generator().manual_seed(1), 1, 1, 6, 8, 4, 4)
    fraction = rows_gaining(problem, 1e-3, "weights")
    assert 0.0 <= fraction <= 1.0
    with pytest.raises(ValueError, match="on must be one of 'scores', 'weights'"):
        rows_gaining(problem, 1e-3, "values")


def test_orthonormal_inputs_keep_the_head_and_the_span():
    problem = sample_head_problem(torch.Generator().manual_seed(2), 1, 1, 5, 8, 4, 4)
    replaced = orthonormal_inputs(problem)
    rows = replaced.x[0, 0]
    assert rows.shape == (5, 8)
    assert torch.allclose(rows @ rows.T, torch.eye(5, dtype=rows.dtype), atol=1e-12)
    original = problem.x[0, 0]
    assert torch.allclose(original @ rows.T @ rows, original, atol=1e-12)  # the same span
    assert replaced.w_q is problem.w_q and replaced.targets is problem.targets


# ---- tables and figures on hand-made results ----

def test_the_gradient_error_table_takes_the_max_and_median_per_quantity():
    errors = pd.DataFrame([dict(zip(SHAPE_NAMES, (1,) * 6, strict=True), saturated=False,
                                causal=True, **{q: value for q in QUANTITIES})
                           for value in (1.0, 2.0, 6.0)])
    table = tables.gradient_error_table(GradientCheck(errors))
    assert list(table.index) == list(QUANTITIES)
    assert (table["max |closed form - autograd|"] == 6.0).all() and (table["median"] == 2.0).all()


def test_the_weight_step_table_counts_the_heads_gaining_in_every_row():
    names = [condition for condition, _ in CONDITIONS]
    fractions = pd.DataFrame([dict(step=0.1, head=head, condition=condition, fraction=value)
                              for condition in names
                              for head, value in enumerate((1.0, 0.5, 1.0, 0.25))])
    table = tables.weight_step_table(WeightStep(fractions, 0.1))
    assert table.loc["weight step", ("mean", 0.1)] == pytest.approx(0.688)
    assert table.loc["weight step", ("worst", 0.1)] == 0.25
    assert table.loc["weight step", ("all_rows", 0.1)] == 0.5


# ---- the whole experiment at a tiny size ----

def test_the_tiny_run_records_finite_metrics_and_every_number_the_page_glues(tiny_run):
    results, _ = tiny_run
    assert results.metrics and all(math.isfinite(v) for v in results.metrics.values())
    page = (ROOT / "book" / "score_gradient.md").read_text()
    glued = set(re.findall(r"score_gradient\.ipynb::(\w+)", page))
    # a name ending in _text is a recorded metric glued as text (glue_as_text)
    glued = {name.removesuffix("_text") for name in glued}
    assert glued and glued <= set(results.metrics)
    assert set(results.timing_metrics) == {"diagnostics_overhead_ratio",
                                           "diagnostics_speedup_vs_autograd"}
    assert results.metrics["n_random_problems"] == 6 and results.metrics["sticky_steps"] == 2


def test_the_tiny_run_is_deterministic(tiny_run, tmp_path):
    results, _ = tiny_run
    again, _ = _results_of_a_tiny_run(tmp_path)
    timings = set(results.timing_metrics)
    assert {k: v for k, v in again.metrics.items() if k not in timings} == \
        {k: v for k, v in results.metrics.items() if k not in timings}


def test_the_tables_and_figures_of_the_tiny_run(tiny_run):
    results, chapter = tiny_run
    assert tables.gradient_error_table(chapter.closed_form).shape == (len(QUANTITIES), 2)
    assert chapter.matrices.scores.shape == (12, 12)
    assert len(chapter.score_step.table) == 3
    assert tables.trained_heads_table(chapter.trained).shape == (2, 4)
    assert "overhead_ratio" in tables.diagnostics_table(chapter.cost).index
    assert len(tables.results_table(results)) == len(results.metrics)
    for draw, part, n_axes in ((chapter_figures.score_heatmaps, chapter.matrices, 6),
                               (chapter_figures.mass_shift_figure, chapter.score_step, 1),
                               (chapter_figures.weight_step_figure, chapter.weight_step, 1)):
        fig = draw(part)
        assert isinstance(fig, Figure) and len(fig.axes) == n_axes
        plt.close(fig)
