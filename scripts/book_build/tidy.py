"""What the book's pages show of an executed notebook: one pass over it after papermill."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from book_build import KERNEL

FIGURE_BLOCK = re.compile(r"```\{figure\} figures/([\w-]+)\.png\n((?::[^\n]*\n)*)(.*?)\n```", re.S)
SHOWN_FIGURE = re.compile(r'show_figure\(\s*"([\w-]+)"')
SETTINGS_TAGS = {"parameters", "injected-parameters"}


@dataclass(frozen=True)
class PageFigure:
    """What a chapter page gives one figure: its alt text and its caption (the first paragraph
    of the figure's text, the title in bold first), and the page and label that number it."""

    alt: str
    caption: str
    page: str
    label: str


def page_figures(pages: Path) -> dict[str, PageFigure]:
    """What the book's pages (``pages/*.md``) give each figure they show, by figure name."""
    found = {}
    for page in sorted(pages.glob("*.md")):
        for name, options, body in FIGURE_BLOCK.findall(page.read_text()):
            fields = dict(re.findall(r"^:(\w+): ?(.*)$", options, re.M))
            caption = body.strip().split("\n\n")[0].replace("\n", " ")
            found[name] = PageFigure(fields.get("alt", "").strip(), caption, page.stem,
                                     fields.get("name", "").strip())
    return found


def figure_caption(figure: PageFigure) -> str:
    """The caption a notebook page gives a figure its chapter page shows: the chapter's
    caption, and a link to the figure there."""
    where = (f"as {{numref}}`{figure.label}` in the chapter" if figure.label
             else f"in {{doc}}`/book/{figure.page}`")
    return f"{figure.caption} (Also shown {where}.)"


def figure_alt_text(name: str, figure: PageFigure | None) -> str:
    """The alt text of the figure ``name``: the one its chapter page gives it (``figure``, None
    where no page shows it), else its name in words (without one, the page would show the
    image's hash)."""
    return (figure.alt if figure is not None and figure.alt
            else "Figure: " + name.removeprefix("fig_").replace("_", " "))


def own_caption(cell) -> str | None:
    """The caption the notebook gave its figure (``show_figure(..., caption=...)``), if any."""
    return next((output.get("metadata", {}).get("caption") for output in cell.get("outputs", [])
                 if _is_image(output) and output.get("metadata", {}).get("caption")), None)


def _is_image(output) -> bool:
    return output.get("output_type") in ("display_data", "execute_result") and \
        "image/png" in output.get("data", {})


def split_out_figure(cell, caption: str) -> list:
    """``cell`` (a code cell whose outputs hold one image) as the cells its page shows: the
    code with the outputs before the image, the image alone in a cell of its own whose input is
    hidden and whose output is a figure with ``caption`` (myst-nb's ``figure`` cell metadata),
    and the outputs after the image, if any, in a third cell whose input is hidden. The new
    cells' source is a comment saying what they hold."""
    import nbformat

    images = [k for k, output in enumerate(cell.get("outputs", [])) if _is_image(output)]
    if len(images) != 1:
        return [cell]
    k = images[0]
    outputs = cell.outputs
    cell.outputs = outputs[:k]

    def output_cell(shown: list, metadata: dict, what: str):
        # a comment for a source: myst-nb skips cells without one; the page hides it
        new = nbformat.v4.new_code_cell(source=f"# {what} of the cell above", outputs=shown)
        new.metadata.update(metadata, tags=["remove-input"])
        return new

    figure = output_cell([outputs[k]], {"mystnb": {**cell.metadata.get("mystnb", {}),
                                                   "figure": {"caption": caption}}},
                         "the figure")
    after = [output_cell(outputs[k + 1:], {}, "the rest of the output")] if outputs[k + 1:] else []
    return [cell, figure, *after]


def tidy_executed_notebook(path: Path, figures: dict[str, PageFigure]) -> None:
    """Prepare the executed notebook at ``path`` for its page, reading and writing it once.

    - its parameters cells (its own and papermill's) are tagged ``remove-cell``: the page says
      which profile produced it, and two cells of settings say nothing more;
    - every figure a cell shows (``show_figure("name", fig)``) gets its alt text
      (:func:`figure_alt_text`, from ``figures`` as :func:`page_figures` reads them)
      and, where a chapter page shows it too, that page's caption and a link to it
      (:func:`split_out_figure`, :func:`figure_caption`);
    - the notebook names the plain Python kernel, whichever kernel spec ran it.
    """
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    notebook.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python 3",
                                       "language": "python"}
    cells = []
    for cell in notebook.cells:
        tags = cell.metadata.setdefault("tags", [])
        if SETTINGS_TAGS & set(tags) and "remove-cell" not in tags:
            tags.append("remove-cell")
        shown = SHOWN_FIGURE.search(cell.source) if cell.cell_type == "code" else None
        if shown is None:
            cells.append(cell)
            continue
        figure = figures.get(shown.group(1))
        alt = figure_alt_text(shown.group(1), figure)
        cell.metadata.setdefault("mystnb", {})["image"] = {"alt": alt}
        caption = figure_caption(figure) if figure else own_caption(cell)
        cells += split_out_figure(cell, caption) if caption else [cell]
    notebook.cells = cells
    nbformat.write(notebook, path)
