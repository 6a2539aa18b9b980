"""One figure style for the whole book, and the hand-off of figures to the book's pages.

Figures carry no titles (the caption in the book is the title), have an opaque white
background so they stay readable in the theme's dark mode, and use seaborn's colour-blind
palette. Every figure is drawn for a narrow column (:data:`FIGURE_INCHES` wide, panels stacked
rather than side by side unless stacking would make it taller than :data:`MAX_HEIGHT_RATIO`
times its width) with no text under :data:`MIN_POINTS`, so that it reads both on a
phone, where the page shrinks it to the column, and on a desktop screen, where it shows at its
natural size; :func:`layout_problems` checks a figure against that (text inside the canvas, no
two texts overlapping, every text at least :data:`MIN_SHOWN_PX` px where it is shown).
:func:`show_figure` displays a figure in its notebook and writes it as a PNG file that the
derivation pages include with a numbered, captioned ``figure`` directive; the book build
points ``$ATTENTION_DYNAMICS_FIGURES`` at ``book/figures`` of the tree it renders.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter, LogFormatterSciNotation, LogLocator, NullFormatter
from matplotlib.transforms import ScaledTranslation

from attention_dynamics.book.results import book_root

FIGURES_DIR_VARIABLE = "ATTENTION_DYNAMICS_FIGURES"


FIGURE_DPI = 110
"""Pixels per inch of the figures' PNG files (and of their display in a notebook)."""

SAVED_DPI = 2 * FIGURE_DPI
"""Pixels per inch of the saved PNG files that the chapter pages show, twice the figure's, so
that a tap or a click opens a figure with more pixels than the column shows."""

FIGURE_INCHES = 5.0
"""The width of every chapter figure, in inches (550 px at :data:`FIGURE_DPI`), narrow enough
that text of :data:`MIN_POINTS` still shows at :data:`MIN_SHOWN_PX` px or more when a phone
shrinks the figure to its column (:data:`PHONE_COLUMN_PX`), and shown at its natural size,
text at 15 px or more, in a desktop column (:data:`DESKTOP_COLUMN_PX`)."""

PHONE_COLUMN_PX = 330
"""The width, in CSS px, of the column a figure is shown in on a 390 px phone screen (the text
column is about 342 px; a notebook's output area a little narrower)."""

DESKTOP_COLUMN_PX = 770
"""The width, in CSS px, of the text column on a 1,400 px desktop screen."""

MAX_HEIGHT_RATIO = 1.1
"""The greatest height of a chapter figure, as a multiple of its width. Shown across the
desktop column (:data:`DESKTOP_COLUMN_PX`, up to about 820 px on wide screens), such a figure
stays under about 900 px, within a laptop's screen, so that a reader sees it whole with the
first line of its caption. A figure of many panels sets them two to a row, or lower, rather
than stacking them taller."""

SHOWN_WIDTHS_PX = (PHONE_COLUMN_PX, DESKTOP_COLUMN_PX)
"""The column widths a figure must read at."""

MIN_SHOWN_PX = 9.0
"""The smallest text, in CSS px as shown, that a figure may hold at any of
:data:`SHOWN_WIDTHS_PX`."""

MIN_POINTS = 10
"""The smallest font size, in points, of any text in a figure (at :data:`FIGURE_INCHES` it
shows at ``10 / 72 * 330 / 5.0 = 9.2`` px on a phone)."""

LEGEND_POINTS = MIN_POINTS
"""The legends' font size in points."""

_FONT_POINTS = {
    "font.size": 10.5,
    "axes.labelsize": 10.5,
    "axes.titlesize": 10.5,
    "xtick.labelsize": MIN_POINTS,
    "ytick.labelsize": MIN_POINTS,
    "legend.fontsize": LEGEND_POINTS,
    "legend.title_fontsize": LEGEND_POINTS,
    "figure.titlesize": 11,
    "figure.labelsize": 10.5,
}
"""The style's font sizes (points), none under :data:`MIN_POINTS`."""


def use_book_style() -> None:
    """Apply the book's matplotlib/seaborn style (call once per notebook)."""
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")
    matplotlib.rcParams.update({
        "figure.facecolor": "white",
        "axes.facecolor": "white",
        "savefig.facecolor": "white",
        "savefig.transparent": False,
        "figure.dpi": FIGURE_DPI,
        "savefig.dpi": FIGURE_DPI,
        "figure.constrained_layout.use": True,
        **_FONT_POINTS,
    })


def figures_dir() -> Path:
    """Where figure files go: ``$ATTENTION_DYNAMICS_FIGURES``, else ``<book root>/_build/figures``."""
    if os.environ.get(FIGURES_DIR_VARIABLE):
        return Path(os.environ[FIGURES_DIR_VARIABLE])
    return (book_root() or Path.cwd()) / "_build" / "figures"


def legend_outside(ax: matplotlib.axes.Axes, where: str = "below", ncol: int = 1,
                   **legend_kw) -> None:
    """``ax``'s legend outside the panel, off the data, without a frame, at
    :data:`LEGEND_POINTS`: ``where`` is ``"below"`` (under the horizontal axis label) or
    ``"above"`` (over the panel, from its left edge); ``ncol`` columns; ``legend_kw`` go to
    ``Axes.legend`` (``handles``, ...)."""
    if where not in ("below", "above"):
        raise ValueError(f"where must be one of below, above; got {where!r}")
    if where == "above":
        place = {"loc": "lower left", "bbox_to_anchor": (0, 1.0), "borderaxespad": 0.2}
    else:  # under the tick labels and a one-line axis label, whatever the panel's height
        drop = 0.5 + 0.2 * ax.get_xlabel().count("\n")
        shift = ax.transAxes + ScaledTranslation(0, -drop, ax.figure.dpi_scale_trans)
        place = {"loc": "upper center", "bbox_to_anchor": (0.5, 0), "bbox_transform": shift,
                 "borderaxespad": 0}
    ax.legend(**place, ncol=ncol, frameon=False, fontsize=LEGEND_POINTS, **legend_kw)


def short_log_labels(ax: matplotlib.axes.Axes, axis: str = "y") -> None:
    """Label ``ax``'s log-scale ``axis`` (``"x"`` or ``"y"``) with plain short numbers
    (``0.854``, ``2``) instead of powers of ten, which a log axis spanning less than a decade
    prints on every minor tick (``8.54 × 10⁻¹``)."""
    short = FuncFormatter(lambda value, _: f"{value:.3g}")
    chosen = ax.yaxis if axis == "y" else ax.xaxis
    chosen.set_major_formatter(short)
    chosen.set_minor_formatter(short)


def figure_legend(fig: matplotlib.figure.Figure, handles=None, ncol: int = 1,
                  where: str = "lower", **legend_kw) -> None:
    """One legend for the whole figure, outside its panels (``where``: ``"lower"``, under them,
    or ``"upper"``, over them), centred, without a frame, at :data:`LEGEND_POINTS`;
    ``handles`` default to the first panel's labelled artists."""
    if where not in ("lower", "upper"):
        raise ValueError(f"where must be one of lower, upper; got {where!r}")
    if handles is None:
        handles = fig.axes[0].get_legend_handles_labels()[0]
    fig.legend(handles=handles, loc=f"outside {where} center", ncol=ncol, frameon=False,
               fontsize=LEGEND_POINTS, **legend_kw)


def panel_grid(n_panels: int, columns: int = 1,
               panel_size: tuple[float, float] = (FIGURE_INCHES, 2.9),
               **subplot_kw) -> tuple[matplotlib.figure.Figure, np.ndarray]:
    """A figure of ``n_panels`` panels, ``columns`` to a row (one: stacked), each
    ``panel_size`` inches (the figure's width is ``columns`` times the first, so keep it at
    :data:`FIGURE_INCHES` in all).

    Returns the figure and a flat array of exactly ``n_panels`` axes, in reading order (unused
    cells of the last row are removed), so that code written for one row of panels
    (``axes[i]``, ``zip(axes, ...)``) works unchanged. ``subplot_kw`` goes to
    ``matplotlib.pyplot.subplots`` (``sharex``, ``sharey``...).
    """
    if not isinstance(n_panels, int) or n_panels < 1:
        raise ValueError(f"n_panels must be a positive int; got {n_panels!r}")
    if not isinstance(columns, int) or columns < 1:
        raise ValueError(f"columns must be a positive int; got {columns!r}")
    columns = min(columns, n_panels)
    rows = -(-n_panels // columns)
    width, height = panel_size
    fig, axes = plt.subplots(rows, columns, figsize=(width * columns, height * rows),
                             squeeze=False, **subplot_kw)
    flat = axes.ravel()
    for unused in flat[n_panels:]:
        unused.remove()
    return fig, flat[:n_panels]


def show_figure(name: str, fig: matplotlib.figure.Figure, caption: str | None = None) -> None:
    """Save ``fig`` as ``<figures dir>/<name>.png`` (:func:`figures_dir`), display it in the
    notebook, close it. Returns nothing, so that a cell ending with it shows only the figure.

    ``caption`` (MyST markdown, the title in bold first) goes with the displayed figure as its
    output's metadata, for the book's page to show under it; a figure that a chapter page
    also shows takes that page's caption instead and needs none here. The saved file has
    :data:`SAVED_DPI` pixels per inch, its crowded log-axis labels thinned first
    (:func:`thin_log_tick_labels`). Layout problems (:func:`layout_problems`) are the tests' to
    find, not the reader's page's."""
    if not name.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"name must hold only letters, digits, '_' and '-'; got {name!r}")
    folder = figures_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    thin_log_tick_labels(fig)
    fig.savefig(path, dpi=SAVED_DPI)
    if "ipykernel" in sys.modules:
        from IPython.display import display

        display(fig, metadata={"caption": caption} if caption else None)
    plt.close(fig)


def plot_seed_band(ax: matplotlib.axes.Axes, x, runs, color, label: str | None = None,
                   alpha: float = 0.18, **line_style) -> None:
    """The mean over runs as a line, and the band from the lowest to the highest run.

    Args:
        ax: where to draw.
        x: ``(S,)`` the horizontal positions (e.g. steps).
        runs: ``(S, R)`` array-like (NumPy, or a CPU tensor), one column per run (seed).
        color: the colour of the line and of its band.
        label: the legend entry of the line.
        alpha: the band's opacity.
        line_style: further keyword arguments of the line (``lw``, ``ls``, ...).
    """
    data = np.asarray(runs, dtype=float)
    if data.ndim != 2 or data.shape[0] != len(x):
        raise ValueError(f"runs must have shape (len(x), R) = ({len(x)}, R); got {data.shape}")
    ax.plot(x, data.mean(axis=1), color=color, label=label, **line_style)
    ax.fill_between(x, data.min(axis=1), data.max(axis=1), color=color, alpha=alpha, lw=0)


def drawn_texts(fig: matplotlib.figure.Figure) -> list[Text]:
    """Every text that drawing ``fig`` puts on its canvas (tick labels, axis labels, titles,
    legends, annotations...), in drawing order: those drawn and not empty, no hidden tick label
    nor the label of an axis without one."""
    drawn: list[Text] = []
    original = Text.draw

    def recording(text, renderer):
        original(text, renderer)
        if text.get_visible() and text.get_text().strip():
            drawn.append(text)

    Text.draw = recording
    try:
        fig.canvas.draw()
    finally:
        Text.draw = original
    return drawn


def _tick_labels_overlap(axis: matplotlib.axis.Axis, renderer) -> bool:
    """Whether two of ``axis``'s drawn tick labels (major and minor) overlap."""
    boxes = [tick.label1.get_window_extent(renderer)
             for tick in (*axis.get_major_ticks(), *axis.get_minor_ticks())
             if tick.label1.get_visible() and tick.label1.get_text().strip()]
    return any(first.overlaps(second) for index, first in enumerate(boxes)
               for second in boxes[index + 1:])


def thin_log_tick_labels(fig: matplotlib.figure.Figure) -> None:
    """On every log axis of ``fig`` whose tick labels overlap (matplotlib labels minor ticks
    on an axis that spans less than a decade or two, which a narrow panel cannot fit), label
    fewer minor ticks until none overlap: those at 2 and 5 times a power of ten, then at 3
    times one, then none (the major ticks' labels alone). Other axes are left as they are."""
    renderer = fig.canvas.get_renderer()
    fig.canvas.draw()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for subs in ((2.0, 5.0), (3.0,), None):
                if axis.get_scale() != "log" or not _tick_labels_overlap(axis, renderer):
                    break
                if subs is None:
                    axis.set_minor_formatter(NullFormatter())
                else:
                    axis.set_minor_formatter(LogFormatterSciNotation(
                        labelOnlyBase=False, minor_thresholds=(np.inf, np.inf)))
                    axis.set_minor_locator(LogLocator(subs=subs))
                fig.canvas.draw()


def layout_problems(fig: matplotlib.figure.Figure, widths_px=SHOWN_WIDTHS_PX,
                    min_px: float = MIN_SHOWN_PX, tolerance_px: float = 0.5) -> list[str]:
    """What keeps ``fig`` from reading where it is shown, one line each (none: it reads).

    The figure is drawn as its PNG file is (at :data:`FIGURE_DPI`) and shown in columns
    ``widths_px`` CSS px wide: at its natural width where that fits, else shrunk to the column.
    Every drawn text (:func:`drawn_texts`) must lie inside the canvas, overlap no other drawn
    text (bounding boxes, by more than ``tolerance_px`` either way), and show at ``min_px`` px
    or more in every column."""
    fig.set_dpi(FIGURE_DPI)
    texts = drawn_texts(fig)
    renderer = fig.canvas.get_renderer()
    width, height = fig.canvas.get_width_height()
    boxes = [text.get_window_extent(renderer) for text in texts]
    names = [repr(text.get_text())[:60] for text in texts]
    problems = []
    for name, box in zip(names, boxes, strict=True):
        if (box.x0 < -tolerance_px or box.y0 < -tolerance_px or box.x1 > width + tolerance_px
                or box.y1 > height + tolerance_px):
            problems.append(f"{name} is cut: it spans x {box.x0:.0f}..{box.x1:.0f}, "
                            f"y {box.y0:.0f}..{box.y1:.0f} of a {width} x {height} px canvas")
    for i, first in enumerate(boxes):
        for j in range(i + 1, len(boxes)):
            second = boxes[j]
            wide = min(first.x1, second.x1) - max(first.x0, second.x0)
            high = min(first.y1, second.y1) - max(first.y0, second.y0)
            if wide > tolerance_px and high > tolerance_px:
                problems.append(f"{names[i]} and {names[j]} overlap ({wide:.0f} x {high:.0f} px)")
    for shown in widths_px:
        scale = min(1.0, shown / width)
        for name, text in zip(names, texts, strict=True):
            px = text.get_fontsize() / 72 * FIGURE_DPI * scale
            if px < min_px:
                problems.append(f"{name} shows at {px:.1f} px in a {shown} px column "
                                f"(at least {min_px:g})")
    return problems
