"""The notebooks' shared set-up and recording helpers."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from attention_dynamics.book.formatting import format_number  # noqa: E402
from attention_dynamics.book.notebook import setup_notebook  # noqa: E402
from attention_dynamics.book.plotting import (  # noqa: E402
    FIGURE_INCHES,
    legend_outside,
    panel_grid,
    plot_seed_band,
    use_book_style,
)
from attention_dynamics.book.results import Results  # noqa: E402


def test_setup_notebook_seeds_opens_results_and_uses_one_thread(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_DYNAMICS_RESULTS", str(tmp_path))
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        device, generator, results = setup_notebook("demo", "quick", "cpu", 5)
        assert device == torch.device("cpu") and torch.get_num_threads() == 1
        first = torch.rand(3, generator=generator)
        assert torch.equal(first, torch.rand(3, generator=torch.Generator().manual_seed(5)))
        assert results.notebook == "demo" and results.seed == 5 and results.profile == "quick"
        assert results.directory == tmp_path
        # tables print their floats as the reader's numbers
        table = pd.DataFrame({"rows": [24290.0, 1.0], "error": [0.0363649, 2.6e-15]})
        text = table.to_string()
        assert "24,290" in text and "0.0364" in text and "2.60 × 10⁻¹⁵" in text
        assert "24290.0" not in text and "0.036365" not in text
    finally:
        torch.set_num_threads(before)
        pd.reset_option("display.float_format")
    with pytest.raises(ValueError, match="profile"):
        setup_notebook("demo", "fast", "cpu", 0)
    with pytest.raises(ValueError, match="seed"):
        setup_notebook("demo", "quick", "cpu", -1)


def test_record_all_and_record_spread(tmp_path):
    res = Results("demo", "quick", "cpu", 0, directory=tmp_path)
    res.record_all({"steps": 100, "lr": 0.5}, prefix="train_")
    assert res.metrics == {"train_steps": 100.0, "train_lr": 0.5}
    assert res.record_spread("mae", torch.tensor([0.25, 0.5, 1.5])) == (0.75, 0.25, 1.5)
    assert res.metrics["mae_min"] == 0.25 and res.metrics["mae_max"] == 1.5
    # each seed's value, in seed order, and their number
    assert [res.metrics[f"mae_seed{i}"] for i in range(3)] == [0.25, 0.5, 1.5]
    assert res.metrics["mae_n_seeds"] == 3 and "mae_seed3" not in res.metrics
    with pytest.raises(ValueError, match="already recorded"):
        res.record_spread("mae", [1.0])
    with pytest.raises(ValueError, match="non-empty 1-D"):
        res.record_spread("empty", [])


def test_plot_seed_band_draws_the_mean_and_the_extremes():
    fig, ax = plt.subplots()
    runs = np.array([[1.0, 3.0], [2.0, 6.0], [0.0, 0.0]])
    plot_seed_band(ax, [0, 1, 2], runs, "C0", label="demo", lw=2)
    line = ax.get_lines()[0]
    assert line.get_label() == "demo" and line.get_linewidth() == 2
    np.testing.assert_allclose(line.get_ydata(), [2.0, 4.0, 0.0])
    band = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert band.min() == 0.0 and band.max() == 6.0
    with pytest.raises(ValueError, match="runs must have shape"):
        plot_seed_band(ax, [0, 1], runs, "C0")
    plt.close(fig)


def test_format_number_writes_integers_whole_and_the_rest_to_three_figures():
    assert format_number(24290) == "24,290" and format_number(704.0) == "704"
    assert format_number(0.0363649) == "0.0364" and format_number(1.1428) == "1.14"
    assert format_number(0.5) == "0.500" and format_number(2.6e-15) == "2.60 × 10⁻¹⁵"
    assert format_number(1234567.5) == "1.23 × 10⁶" and format_number(-0.00012) == "−1.20 × 10⁻⁴"
    assert format_number(None) == "—" and format_number(float("nan")) == "—"
    assert format_number(0.0363649, digits=2) == "0.036"
    with pytest.raises(ValueError, match="digits"):
        format_number(1.0, digits=0)
    with pytest.raises(ValueError, match="value must be a number"):
        format_number("1.0")


def test_panel_grid_gives_exactly_the_panels_asked_for_in_the_column():
    fig, axes = panel_grid(3, sharey=True)
    assert axes.shape == (3,) and len(fig.axes) == 3
    assert fig.get_figwidth() <= FIGURE_INCHES
    assert axes[0].get_position().y0 > axes[1].get_position().y0  # stacked, one to a row
    plt.close(fig)
    fig, axes = panel_grid(3, columns=2, panel_size=(FIGURE_INCHES / 2, 2))
    assert axes.shape == (3,) and len(fig.axes) == 3  # the fourth cell is removed
    assert axes[0].get_position().y0 > axes[2].get_position().y0  # two to a row
    plt.close(fig)
    fig, axes = panel_grid(1)
    assert axes.shape == (1,)
    plt.close(fig)
    with pytest.raises(ValueError, match="n_panels"):
        panel_grid(0)
    with pytest.raises(ValueError, match="columns"):
        panel_grid(2, columns=0)


def test_format_number_writes_large_numbers_whole_not_in_e_notation():
    assert format_number(1143.5) == "1,144"
    assert format_number(999.7) == "1,000"
    assert format_number(123.4) == "123"
    assert format_number(2500000.5) == "2.50 × 10⁶"


def test_e_notation_in_text_becomes_a_power_of_ten_and_identifiers_stay():
    from attention_dynamics.book.formatting import without_e_notation

    assert without_e_notation("step_max = 1.8e+03, above 1.6e+03") == (
        "step_max = 1.8 × 10³, above 1.6 × 10³")
    assert without_e_notation("≤ 1e-10 and -2.5e-4") == "≤ 1 × 10⁻¹⁰ and −2.5 × 10⁻⁴"
    assert without_e_notation("seed1e3 and x_2e5 and 0.5 and 12") == (
        "seed1e3 and x_2e5 and 0.5 and 12")


def test_legends_outside_stand_off_the_data_at_nine_points_or_more_as_shown():
    use_book_style()
    fig, (below, above) = panel_grid(2)
    for ax in (below, above):
        ax.plot([0, 1], [0, 1], label="a line")
        ax.set_xlabel("step")
    legend_outside(below)
    legend_outside(above, "above", ncol=2)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax, outside in ((below, lambda box, axes: box.y1 <= axes.y0),
                        (above, lambda box, axes: box.y0 >= axes.y1)):
        legend = ax.get_legend()
        assert outside(legend.get_window_extent(renderer), ax.get_window_extent(renderer))
        # a figure FIGURE_INCHES wide is shrunk to a phone's column of about 330 px: its
        # text, in px there, is at least 9
        shown_px = legend.get_texts()[0].get_fontsize() / 72 * 330 / FIGURE_INCHES
        assert shown_px >= 9
    assert above.get_legend()._ncols == 2
    with pytest.raises(ValueError, match="where"):
        legend_outside(below, "inside")
    plt.close(fig)


def test_glue_as_text_glues_each_metric_written_for_a_reader(monkeypatch, tmp_path):
    from attention_dynamics.book import notebook
    from attention_dynamics.book.results import Results

    glued = {}
    monkeypatch.setattr(notebook, "_glue", lambda name, value: glued.__setitem__(name, value))
    results = Results("score_gradient", "quick", "cpu", 0, directory=tmp_path)
    results.record("error", 4.4e-16)
    results.record("share", 0.0364)
    notebook.glue_as_text(results, ["error", "share"])
    assert glued == {"error_text": "4.4 × 10⁻¹⁶", "share_text": "0.036"}
    with pytest.raises(KeyError):
        notebook.glue_as_text(results, ["missing"])
