"""One figure style for the whole book, and the hand-off of figures to the book's pages.

Figures carry no titles (the caption in the book is the title), have an opaque white
background so they stay readable in the theme's dark mode, and use seaborn's colour-blind
palette. :func:`show_figure` displays a figure in its notebook and writes it as a PNG file that
the derivation pages include with a numbered, captioned ``figure`` directive; the book build
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

from attention_dynamics.book.results import book_root

FIGURES_DIR_VARIABLE = "ATTENTION_DYNAMICS_FIGURES"


def use_book_style() -> None:
    """Apply the book's matplotlib/seaborn style (call once per notebook)."""
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")
    matplotlib.rcParams.update({
        "figure.facecolor": "white",
        "axes.facecolor": "white",
        "savefig.facecolor": "white",
        "savefig.transparent": False,
        "figure.dpi": 110,
        "savefig.dpi": 110,
        "figure.constrained_layout.use": True,
    })


def figures_dir() -> Path:
    """Where figure files go: ``$ATTENTION_DYNAMICS_FIGURES``, else ``<book root>/_build/figures``."""
    if os.environ.get(FIGURES_DIR_VARIABLE):
        return Path(os.environ[FIGURES_DIR_VARIABLE])
    return (book_root() or Path.cwd()) / "_build" / "figures"


COLUMN_INCHES = 9.0
"""The widest figure, in inches, that the book's text column shows at nearly natural size
(about 990 px at the style's 110 dpi, against a column of about 770 px on a desktop screen),
so that tick labels stay at 9 pt or more where they are shown."""


LEGEND_POINTS = 11
"""The legends' font size in points, which shows as 9 pt or more on a desktop screen when a
figure :data:`COLUMN_INCHES` wide is shown in the text column."""


def legend_outside(ax: matplotlib.axes.Axes, where: str = "below", ncol: int = 1,
                   **legend_kw) -> None:
    """``ax``'s legend outside the panel, off the data, without a frame, at
    :data:`LEGEND_POINTS`: ``where`` is ``"below"`` (under the horizontal axis label) or
    ``"above"`` (over the panel, from its left edge); ``ncol`` columns; ``legend_kw`` go to
    ``Axes.legend`` (``handles``, ...)."""
    places = {"below": {"loc": "upper center", "bbox_to_anchor": (0.5, -0.3)},
              "above": {"loc": "lower left", "bbox_to_anchor": (0, 1.0), "borderaxespad": 0.2}}
    if where not in places:
        raise ValueError(f"where must be one of {', '.join(places)}; got {where!r}")
    ax.legend(**places[where], ncol=ncol, frameon=False, fontsize=LEGEND_POINTS, **legend_kw)


def panel_grid(n_panels: int, columns: int = 2, panel_size: tuple[float, float] = (4.4, 3.3),
               **subplot_kw) -> tuple[matplotlib.figure.Figure, np.ndarray]:
    """A figure of ``n_panels`` panels, ``columns`` to a row, sized for the text column.

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
    also shows takes that page's caption instead and needs none here."""
    if not name.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"name must hold only letters, digits, '_' and '-'; got {name!r}")
    folder = figures_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    fig.savefig(path)
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
