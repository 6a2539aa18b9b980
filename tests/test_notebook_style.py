"""The notebooks' code fits the book's code blocks: every code line at most 88 columns. And
chapter 3's page reads in minutes (issue 38): at most half of the 238 numbers it once glued, and
no bold, which the book keeps for verdicts (glued from the report, never typed on the page).
The chapters' pages and the notebooks' markdown cells name no code in their reading text: the
library's and the authors' files and functions only in footnotes (issue 38)."""

import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))
CODE_COLUMNS = 88  # notebooks/ruff.toml: the formatter's line length there
CHAPTER_THREE = ROOT / "book" / "em_reading.md"
CHAPTER_THREE_GLUED_AT_MOST = 238 // 2  # issue 38: half of what the page glued before


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_every_code_line_fits_a_code_block(path):
    notebook = jupytext.read(path)
    long = [f"cell {index}: {line}" for index, cell in enumerate(notebook.cells)
            if cell.cell_type == "code" for line in cell.source.splitlines()
            if len(line) > CODE_COLUMNS]
    assert not long, "\n".join(long)


def glued_texts(page: str) -> int:
    """How many ``{glue:text}`` roles a page's source holds (numbers, and the words and
    verdicts glued beside them)."""
    return page.count("{glue:text}")


def bold_lines(page: str) -> list[str]:
    """The lines of a page's source that set text in bold (``**``), a ``prf`` block's title
    line and a figure caption's bold title aside: verdicts come glued from the report, so a
    chapter types no bold of its own in its running text."""
    found, in_figure, caption_starts = [], False, False
    for line in page.splitlines():
        if line.startswith("```{figure}"):
            in_figure, caption_starts = True, False
            continue
        if in_figure and line.startswith("```"):
            in_figure = False
            continue
        if in_figure and not caption_starts and line and not line.startswith(":"):
            caption_starts = True  # the caption's first line may open with its bold title
            if line.startswith("**") and "**" not in line[2:].split("**", 1)[1]:
                continue
        if "**" in line and not line.startswith("```{prf:"):
            found.append(line)
    return found


def test_the_page_checks_count_roles_and_bold():
    page = ("A {glue:text}`/n.ipynb::a:.2f` and {glue:text}`/n.ipynb::b:s`.\n"
            "```{prf:proposition} **Titled**\n**Not a verdict.** Text.\n"
            "```{figure} f.png\n:name: fig-f\n\n**The title.** The caption, **not bold**.\n```\n"
            "```{figure} g.png\n:name: fig-g\n\n**The title.** A caption.\n```\n")
    assert glued_texts(page) == 2
    assert bold_lines(page) == ["**Not a verdict.** Text.",
                                "**The title.** The caption, **not bold**."]


def test_chapter_three_glues_at_most_half_its_old_numbers_and_types_no_bold():
    page = CHAPTER_THREE.read_text()
    assert glued_texts(page) <= CHAPTER_THREE_GLUED_AT_MOST, glued_texts(page)
    assert bold_lines(page) == []


CHAPTERS = [ROOT / "book" / f"{name}.md" for name in (
    "score_gradient", "value_update", "em_reading", "manifold_formation", "content_routing")]


CODE_ROLE = r"\{(?:py:)?(?:func|mod|class|meth|attr|data|obj)\}`([^`]+)`"
"""A role that names the library's code (a link to the API page, shown as code)."""


def inline_code(page: str) -> list[str]:
    """The inline code spans of a page's reading text: outside code blocks, roles (a role's
    target is its syntax, not text) and footnotes, where the authors' files and functions are
    cited. A directive's body (a figure's caption, a proof) is reading text."""
    found, blocks, in_note = [], [], False
    for line in page.splitlines():
        fence = re.match(r"(`{3,}|~{3,})(.*)$", line)
        if fence:
            opener = fence[2].strip()
            if not opener:
                if blocks:
                    blocks.pop()
            else:
                name = opener[1:opener.index("}")] if opener.startswith("{") else "code"
                blocks.append("code" if name in ("code", "code-cell", "code-block") else "text")
            continue
        if line.startswith("[^"):
            in_note = True
        elif in_note and line and not line.startswith("    "):
            in_note = False
        if in_note or "code" in blocks:
            continue
        found += re.findall(CODE_ROLE, line)  # a link to the API renders as code
        words = re.sub(r"\{[\w:-]+\}`[^`]*`", " ", line)
        found += re.findall(r"`([^`]+)`", words)
    return found


def test_the_inline_code_check_finds_what_it_must():
    page = ("````{admonition} Findings\n```{glue} box\n```\n````\n"
            "Text with `a_name` and a {glue:text}`/n.ipynb::a:.2f` role.[^n]\n"
            "```python\nx = `not_here`\n```\n"
            "```{figure} f.png\n\n**Title.** Caption with `caption_code`.\n```\n"
            "[^n]: The script `train.py`,\n    and `more.py`, {func}`~a.b.c`.\n"
            "After the note, `after` and {mod}`~a.b`.\n")
    assert inline_code(page) == ["a_name", "caption_code", "~a.b", "after"]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda path: path.stem)
def test_a_chapter_cites_code_in_its_footnotes_only(path):
    assert inline_code(path.read_text()) == []


def notebook_inline_code(notebook) -> list[str]:
    """The inline code spans of a notebook's reading text, as ``"cell N: span"``: those of
    :func:`inline_code` in each markdown cell (a footnote's definition sits in the cell that
    cites it); code cells are code, and may name anything."""
    return [f"cell {index}: {span}" for index, cell in enumerate(notebook.cells)
            if cell.cell_type == "markdown" for span in inline_code(cell.source)]


def test_the_notebook_check_reads_the_markdown_cells():
    notebook = jupytext.reads(
        "# %% [markdown]\n# The next cell trains `train_fresh` seeds.[^n]\n#\n"
        "# [^n]: `attention_dynamics.sticky.fresh.train_fresh`.\n\n"
        "# %%\nrun = \"`in_code`\"  # `in_a_comment`\n\n"
        "# %% [markdown]\n# A {glue:text}`sticky_steps:,.0f` steps, then `sticky_T`.\n",
        fmt="py:percent")
    assert notebook_inline_code(notebook) == ["cell 0: train_fresh", "cell 2: sticky_T"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_a_notebook_cites_code_in_its_footnotes_only(path):
    assert notebook_inline_code(jupytext.read(path)) == []
