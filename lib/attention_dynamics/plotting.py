"""One figure style for the whole book, and the hand-off of figures to the book's pages.

Figures carry no titles (the caption in the book is the title), have an opaque white
background so they stay readable in the theme's dark mode, and use seaborn's colour-blind
palette.
"""

from __future__ import annotations

import sys

import matplotlib
import matplotlib.pyplot as plt
import seaborn as sns


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


def show_figure(name: str, fig: matplotlib.figure.Figure) -> None:
    """Display ``fig`` in the notebook and glue it as ``name`` for the book's derivation pages.

    Outside a Jupyter kernel (a plain script) the figure is only closed.
    """
    if "ipykernel" in sys.modules:
        from myst_nb import glue

        glue(name, fig, display=True)
    plt.close(fig)
