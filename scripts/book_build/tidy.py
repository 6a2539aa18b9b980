"""What the book's pages show of an executed notebook: one pass over it after papermill."""

from __future__ import annotations

import re
from pathlib import Path

from book_build import KERNEL

FIGURE_BLOCK = re.compile(r"```\{figure\} figures/([\w-]+)\.png\n(?::(?!alt:)[^\n]*\n)*:alt: ([^\n]+)")
SHOWN_FIGURE = re.compile(r'show_figure\(\s*"([\w-]+)"')
SETTINGS_TAGS = {"parameters", "injected-parameters"}


def figure_alt_texts(pages: Path) -> dict[str, str]:
    """The alt text the book's pages give each figure they show, by figure name."""
    return {name: alt.strip() for page in sorted(pages.glob("*.md"))
            for name, alt in FIGURE_BLOCK.findall(page.read_text())}


def figure_alt_text(name: str, alt_texts: dict[str, str]) -> str:
    """The alt text of the figure ``name``: the one its chapter page gives it, else its name in
    words (without one, the page would show the image's hash)."""
    return alt_texts.get(name) or "Figure: " + name.removeprefix("fig_").replace("_", " ")


def tidy_executed_notebook(path: Path, alt_texts: dict[str, str]) -> None:
    """Prepare the executed notebook at ``path`` for its page, reading and writing it once.

    - its parameters cells (its own and papermill's) are tagged ``remove-cell``: the page says
      which profile produced it, and two cells of settings say nothing more;
    - every figure a cell shows (``show_figure("name", fig)``) gets its alt text
      (:func:`figure_alt_text`, from ``alt_texts`` as :func:`figure_alt_texts` reads them);
    - the notebook names the plain Python kernel, whichever kernel spec ran it.
    """
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    notebook.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python 3",
                                       "language": "python"}
    for cell in notebook.cells:
        tags = cell.metadata.setdefault("tags", [])
        if SETTINGS_TAGS & set(tags) and "remove-cell" not in tags:
            tags.append("remove-cell")
        shown = SHOWN_FIGURE.search(cell.source) if cell.cell_type == "code" else None
        if shown is not None:
            alt = figure_alt_text(shown.group(1), alt_texts)
            cell.metadata.setdefault("mystnb", {})["image"] = {"alt": alt}
    nbformat.write(notebook, path)
