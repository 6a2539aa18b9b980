"""One experiment per chapter: the notebook and the command line run the same function.

Each chapter notebook takes its settings from
:func:`~attention_dynamics.book.notebook.chapter_settings` and calls its chapter module's ``run``
once; the command line does the same. The slow test runs every chapter at a tiny size
(``tests/tiny_settings/<chapter>.json``, a few seconds each) both ways and asserts that the two
results files hold the same numbers, metric for metric.
"""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from attention_dynamics.book.catalogue import undeclared
from attention_dynamics.book.results import RESULTS_DIR_VARIABLE
from attention_dynamics.chapters import CHAPTERS

ROOT = Path(__file__).resolve().parents[1]
TINY = Path(__file__).resolve().parent / "tiny_settings"


def calls_named(path: Path, name: str) -> int:
    """How many calls in the notebook text ``path`` call a function or method named ``name``."""
    tree = ast.parse(path.read_text())
    return sum(1 for node in ast.walk(tree) if isinstance(node, ast.Call)
               and getattr(node.func, "attr", getattr(node.func, "id", None)) == name)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_chapter_notebook_runs_its_chapter_once(chapter):
    notebook = ROOT / "notebooks" / f"{chapter}.py"
    assert calls_named(notebook, "chapter_settings") == 1
    assert calls_named(notebook, "run") == 1


def test_every_chapter_has_tiny_settings():
    assert sorted(path.stem for path in TINY.glob("*.json")) == sorted(CHAPTERS)


def run_notebook(chapter: str, settings: Path, folder: Path, monkeypatch) -> dict:
    """Execute ``notebooks/<chapter>.py`` with ``settings`` (papermill, on the CPU, seed 0)
    and return the results file it wrote into ``folder``."""
    import jupytext
    import papermill

    from attention_dynamics.book.plotting import FIGURES_DIR_VARIABLE

    monkeypatch.setenv(RESULTS_DIR_VARIABLE, str(folder / "results"))
    monkeypatch.setenv(FIGURES_DIR_VARIABLE, str(folder / "figures"))
    notebook = folder / f"{chapter}.ipynb"
    jupytext.write(jupytext.read(ROOT / "notebooks" / f"{chapter}.py"), notebook)
    papermill.execute_notebook(
        str(notebook), str(notebook), kernel_name="python3", language="python", cwd=str(folder),
        parameters={"profile": "quick", "device": "cpu", "seed": 0,
                    "settings_file": str(settings)},
        progress_bar=False, extra_arguments=["--IPKernelApp.log_level=CRITICAL"])
    return json.loads((folder / "results" / f"{chapter}.json").read_text())


def run_command_line(chapter: str, settings: Path, folder: Path) -> dict:
    """Run ``chapter`` by the command line with ``settings``; return its results file."""
    completed = subprocess.run(
        [sys.executable, "-m", "attention_dynamics", "run", chapter, "--device", "cpu",
         "--settings", str(settings), "--out", str(folder), "--quiet"],
        cwd=folder, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads((folder / f"{chapter}.json").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_notebook_and_the_command_line_give_the_same_numbers(chapter, tmp_path, monkeypatch):
    settings = TINY / f"{chapter}.json"
    (tmp_path / "notebook").mkdir()
    (tmp_path / "cli").mkdir()
    notebook = run_notebook(chapter, settings, tmp_path / "notebook", monkeypatch)
    command_line = run_command_line(chapter, settings, tmp_path / "cli")
    assert notebook["settings"] == command_line["settings"] == json.loads(settings.read_text())
    timings = set(notebook["timing_metrics"]) | set(command_line["timing_metrics"])
    numbers = {name: value for name, value in notebook["metrics"].items() if name not in timings}
    assert numbers, "the notebook recorded no metric"
    other = {name: value for name, value in command_line["metrics"].items() if name not in timings}
    assert other.keys() == numbers.keys()
    assert numbers == other
    assert undeclared(chapter, numbers) == []  # every metric says what it is
