"""The notebooks' code fits the book's code blocks: every code line at most 88 columns."""

from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))
CODE_COLUMNS = 88  # notebooks/ruff.toml: the formatter's line length there


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_every_code_line_fits_a_code_block(path):
    notebook = jupytext.read(path)
    long = [f"cell {index}: {line}" for index, cell in enumerate(notebook.cells)
            if cell.cell_type == "code" for line in cell.source.splitlines()
            if len(line) > CODE_COLUMNS]
    assert not long, "\n".join(long)
