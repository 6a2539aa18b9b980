"""The library reference (book/api.md) documents every module of the package and renders
without warnings."""

import importlib.util
import pkgutil
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import attention_dynamics

ROOT = Path(__file__).resolve().parents[1]


def _short_values():
    spec = importlib.util.spec_from_file_location("short_values",
                                                  ROOT / "book" / "_ext" / "short_values.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reference_shows_short_values_and_leaves_out_long_ones():
    short_values = _short_values()
    assert short_values.shows_value(3) and short_values.shows_value((1, 2, 3, 4, 5, 6, 7))
    settings = {"seeds": list(range(12)), "steps": 1000, "fresh": {"n_seeds": 8, "steps": 2000}}
    assert not short_values.shows_value(settings)  # 104 characters
    limit = short_values.MAX_VALUE_CHARS
    assert short_values.shows_value("x" * (limit - 2))  # quoted: exactly the limit
    assert not short_values.shows_value("x" * (limit - 1))


def test_every_module_has_a_section_in_the_reference():
    documented = set(re.findall(r"\.\. automodule:: (\S+)", (ROOT / "book" / "api.md").read_text()))
    modules = {info.name for info in pkgutil.walk_packages(attention_dynamics.__path__,
                                                           "attention_dynamics.")}
    skipped = {"attention_dynamics.__main__"}  # running it starts the command line
    assert sorted(modules - documented - skipped) == []
    assert sorted(documented - modules - {"attention_dynamics"}) == []


@pytest.mark.slow
def test_the_reference_renders_alone_without_warnings(tmp_path):
    # the full build treats warnings as errors; rendering only this page finds a docstring's
    # broken cross-reference in seconds instead of after the notebooks have run
    shutil.copy(ROOT / "_config.yml", tmp_path / "_config.yml")
    shutil.copytree(ROOT / "book", tmp_path / "book",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/api\n")
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    build = subprocess.run([str(jupyter_book), "build", str(tmp_path), "--path-output",
                            str(tmp_path / "out"), "-W", "-n", "--keep-going"],
                           capture_output=True, text=True)
    output = re.sub(r"\x1b\[[0-9;]*m", "", build.stdout + build.stderr)  # no colour codes
    warnings = [line for line in output.splitlines() if "WARNING" in line]
    assert warnings == []
    assert build.returncode == 0, build.stderr[-2000:]
    # and it shows no path of the machine that built it (a default argument, a constant)
    page = (tmp_path / "out" / "_build" / "html" / "book" / "api.html").read_text()
    assert str(ROOT) not in page and "PosixPath" not in page
    # nor a chapter's settings per profile written out as one long line
    assert "'sequence_length': 2000" not in page
    text = re.sub(r"<[^>]+>", "", page)
    assert "settings.FRAME_RANK = 3" in text  # short constants keep their value
    assert "settings.SETTINGS#" in text  # the long one keeps its name and docstring
