"""Shared fixtures: the build runner, one full build of the book per test session (reused by the
slow tests), and one CPU thread for the whole session.

The slow tests' book (the fixture ``built_book``) is, in this order:

- the output folder ``$BUILT_BOOK`` names, as it is;
- ``_build``, when ``make book`` made it from the sources of the working tree as they are now
  (profile ``quick``, seed 0, device cpu, the same Python and torch, the same
  ``$REPOSITORY_URL`` and ``$SITE_URL``): its ``build_stamp.json`` equals the stamp the tree
  gets now (``scripts/book_build/stamp.py``), so ``make book && make test`` executes the
  notebooks once. ``FRESH_BOOK=1`` skips it;
- otherwise a fresh build into a temporary folder (a clean clone, as in CI, has no ``_build``).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import attention_dynamics  # noqa: F401 (pins the CPU dispatch before any test computes)
from book_build.stamp import SourceDigestError, build_stamp, current_build

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


FRESH_BOOK_VARIABLE = "FRESH_BOOK"
"""An environment variable: set (to anything but ``0``), the slow tests build the book afresh
even where ``_build`` is current (``$BUILT_BOOK`` still wins)."""

_BOOK_CHOICE: list[str] = []
"""How this session got its book, one line, printed in the terminal summary."""


def current_repository_build(output: Path = ROOT / "_build") -> bool:
    """Whether ``output`` holds a build of the working tree as it is now, with the options the
    fresh build below uses (the build addresses from the environment, as the build takes them)."""
    try:
        stamp = build_stamp(ROOT, "quick", "cpu", 0,
                            repository_url=os.environ.get("REPOSITORY_URL") or None,
                            site_url=os.environ.get("SITE_URL") or None)
    except SourceDigestError:
        return False
    return current_build(output, stamp)


@pytest.fixture(scope="session")
def built_book(tmp_path_factory) -> Path:
    """The output folder of one complete ``quick`` build (notebooks executed, HTML rendered):
    the one ``$BUILT_BOOK`` names, else ``_build`` if it is current, else built now (see the
    module's docstring)."""
    if os.environ.get(BUILT_BOOK_VARIABLE):
        given = Path(os.environ[BUILT_BOOK_VARIABLE]).resolve()
        assert (given / "html" / "index.html").is_file(), f"${BUILT_BOOK_VARIABLE}: no book in {given}"
        _announce(f"the slow tests read the book in {given} (${BUILT_BOOK_VARIABLE})")
        return given
    fresh = os.environ.get(FRESH_BOOK_VARIABLE, "") not in ("", "0")
    if not fresh and current_repository_build():
        _announce(f"the slow tests reuse {ROOT / '_build'}: its build stamp matches the working tree "
                  f"(${FRESH_BOOK_VARIABLE}=1 builds afresh)")
        return ROOT / "_build"
    output = tmp_path_factory.mktemp("book")
    completed = _run_build("--profile", "quick", "--device", "cpu", "--output", str(output))
    assert completed.returncode == 0, completed.stdout[-5000:] + completed.stderr[-5000:]
    _announce(f"the slow tests built the book afresh in {output}"
              + (f" (${FRESH_BOOK_VARIABLE})" if fresh else ": _build is missing or not current"))
    return output


def _announce(line: str) -> None:
    """Print ``line`` now (shown with a failing test's output) and in the terminal summary."""
    print(f"[built_book] {line}", flush=True)
    _BOOK_CHOICE.append(line)


def pytest_terminal_summary(terminalreporter) -> None:
    """Say which book the slow tests read, if any did."""
    for line in _BOOK_CHOICE:
        terminalreporter.write_line(f"built_book: {line}")


@pytest.fixture(scope="session")
def results(built_book) -> dict[str, dict]:
    """The results files of that build, keyed by notebook name."""
    return {p.stem: json.loads(p.read_text()) for p in (built_book / "results").glob("*.json")}
