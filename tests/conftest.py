"""Shared fixtures: the build runner, one full build of the book per test session (reused by the
slow tests; ``$BUILT_BOOK`` names one built already), and one CPU thread for the whole
session."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent


def _run_build(*args: str, root: Path = ROOT) -> subprocess.CompletedProcess:
    """Run the book build script of the tree ``root`` with ``args``; capture its output."""
    return subprocess.run([sys.executable, str(root / "scripts" / "build_book.py"), *args],
                          cwd=root, text=True, capture_output=True)


@pytest.fixture(scope="session")
def run_build():
    """``run_build(*args, root=ROOT)``: run the book build script of a tree, capture its output."""
    return _run_build


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    """The tests' models and problems are tiny: extra threads only add synchronisation, and
    stall on a CPU shared with the book build's kernels."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


BUILT_BOOK_VARIABLE = "BUILT_BOOK"
"""An environment variable: the output folder of a book built already (the ``--output`` of
``scripts/build_book.py``, holding ``html/`` and ``results/``), which the slow tests then read
instead of building one, e.g. ``BUILT_BOOK=_build pytest tests/test_browser.py`` after
``make book`` (minutes instead of the build's half hour)."""


@pytest.fixture(scope="session")
def built_book(tmp_path_factory) -> Path:
    """The output folder of one complete ``quick`` build (notebooks executed, HTML rendered):
    built now, or the one ``$BUILT_BOOK`` names."""
    if os.environ.get(BUILT_BOOK_VARIABLE):
        given = Path(os.environ[BUILT_BOOK_VARIABLE]).resolve()
        assert (given / "html" / "index.html").is_file(), f"${BUILT_BOOK_VARIABLE}: no book in {given}"
        return given
    output = tmp_path_factory.mktemp("book")
    completed = _run_build("--profile", "quick", "--device", "cpu", "--output", str(output))
    assert completed.returncode == 0, completed.stdout[-5000:] + completed.stderr[-5000:]
    return output


@pytest.fixture(scope="session")
def results(built_book) -> dict[str, dict]:
    """The results files of that build, keyed by notebook name."""
    return {p.stem: json.loads(p.read_text()) for p in (built_book / "results").glob("*.json")}
