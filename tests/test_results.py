"""Reading the table of contents: which notebooks the build runs, and in which groups."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from attention_dynamics.book.results import (
    RESULTS_DIR_VARIABLE,
    book_notebook_parts,
    book_notebooks,
    notebooks_before,
)
from attention_dynamics.chapters import CHAPTERS
from book_build.schedule import DEFAULT_CPU_SECONDS, expected_seconds, longest_first, nice_levels
from book_build.staging import stage_sources

ROOT = Path(__file__).resolve().parents[1]
def test_the_chapters_come_first_and_the_reports_after_them():
    parts = book_notebook_parts(ROOT / "_toc.yml")
    assert [name for part in parts for name in part] == book_notebooks(ROOT / "_toc.yml")
    assert parts[0][:2] == ["score_gradient", "value_update"]
    # everything that reads other notebooks' results runs after the chapters
    assert {"benchmarks", "reproduction_report", "execution_report"} <= set(parts[1])
    assert parts[1][-1] == "execution_report"


def test_a_toc_without_parts_is_one_group(tmp_path):
    toc = tmp_path / "_toc.yml"
    toc.write_text("format: jb-book\nroot: book/intro\nchapters:\n  - file: book/a\n"
                   "    sections:\n      - file: notebooks/a\n  - file: notebooks/b.ipynb\n")
    assert book_notebook_parts(toc) == [["a", "b"]]


def test_the_build_refuses_a_number_of_jobs_below_one(run_build):
    completed = run_build("--jobs", "0")
    assert completed.returncode == 2
    assert "--jobs" in completed.stderr and "must be a positive int" in completed.stderr


def test_chapters_are_scheduled_by_the_cpu_time_of_the_last_build_of_the_profile(tmp_path):
    names = ["a", "b", "c"]
    for name, cpu, wall in (("a", 5.0, 50.0), ("b", 50.0, 60.0), ("c", 20.0, 55.0)):
        (tmp_path / f"{name}.json").write_text(json.dumps(
            {"profile": "quick", "cpu_time_s": cpu, "wall_time_s": wall}))
    seconds = expected_seconds(names, tmp_path, "quick")
    assert seconds == {"a": 5.0, "b": 50.0, "c": 20.0}
    assert longest_first(seconds) == ["b", "c", "a"]
    # shares in proportion to the work: 1.25**n times shorter, n levels nicer
    assert nice_levels(seconds) == {"a": 10, "b": 0, "c": 4}
    # another profile's times, or a notebook without one, fall back to the hint
    hinted = expected_seconds([*names, "content_routing"], tmp_path, "paper")
    assert longest_first(hinted) == ["content_routing", *names]
    assert expected_seconds(names, tmp_path / "missing", "quick") == \
        {name: DEFAULT_CPU_SECONDS for name in names}


def test_the_repository_buttons_appear_only_with_a_repository_url(tmp_path, monkeypatch):
    plain = yaml.safe_load((stage_sources(tmp_path / "a") / "_config.yml").read_text())
    assert "repository" not in plain and not plain["html"].get("use_repository_button")
    assert not plain["html"].get("use_issues_button") and "launch_buttons" not in plain
    url = "https://github.com/example/book"
    staged = yaml.safe_load((stage_sources(tmp_path / "b", url) / "_config.yml")
                            .read_text())
    assert staged["repository"]["url"] == url and staged["html"]["use_repository_button"]
    assert staged["html"]["use_issues_button"]
    assert staged["launch_buttons"] == {"binderhub_url": "https://mybinder.org",
                                        "notebook_interface": "jupyterlab", "thebe": False}


def test_binder_makes_the_notebooks_that_the_launch_buttons_open(tmp_path):
    """A launch button opens ``notebooks/<name>.ipynb`` of the repository on Binder, which has
    only their jupytext sources: ``binder/postBuild`` makes them; ``binder/requirements.txt``
    installs the book's requirements with the CPU build of torch."""
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks",
                    ignore=shutil.ignore_patterns("*.ipynb", "__pycache__"))
    environment = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
                                         f"{os.environ.get('PATH', '')}"}
    subprocess.run([str(ROOT / "binder" / "postBuild")], cwd=tmp_path, env=environment,
                   check=True, capture_output=True)
    for name in book_notebooks(ROOT / "_toc.yml"):
        assert (tmp_path / "notebooks" / f"{name}.ipynb").is_file(), name
    lines = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in lines
    assert "-r ../requirements.txt" in lines
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"


def test_the_build_refuses_a_repository_url_that_is_not_https(run_build):
    completed = run_build("--repository-url", "github.com/example/book")
    assert completed.returncode == 1
    assert "--repository-url must start with https://" in completed.stderr


def test_a_pdf_build_without_chromium_stops_before_it_stages_anything(tmp_path, monkeypatch):
    """``--pdf`` needs the Chromium on the PATH; without one the build says so at once, not
    after the notebooks have run."""
    import build_book

    from book_build import BuildError

    def must_not_stage(*args, **kwargs):
        raise AssertionError("the build staged the book before refusing")

    monkeypatch.setattr(build_book, "find_chromium", lambda: None)
    monkeypatch.setattr(build_book, "stage_sources", must_not_stage)
    with pytest.raises(BuildError, match="--pdf prints the book with Chromium"):
        build_book.build(["--pdf", "--output", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()


def test_notebooks_before_follow_the_toc_inside_a_book_and_the_results_outside(tmp_path,
                                                                              monkeypatch):
    monkeypatch.chdir(ROOT)
    assert notebooks_before("score_gradient") == []
    assert notebooks_before("value_update") == ["score_gradient"]
    assert "benchmarks" in notebooks_before("execution_report")
    outside = tmp_path / "download"
    (outside / "results").mkdir(parents=True)
    for name in ("value_update", "score_gradient", "execution_report"):
        (outside / "results" / f"{name}.json").write_text("{}")
    monkeypatch.chdir(outside)
    monkeypatch.setenv(RESULTS_DIR_VARIABLE, str(outside / "results"))
    assert notebooks_before("execution_report") == ["score_gradient", "value_update"]


def test_library_fingerprint_follows_the_code_that_makes_results(tmp_path):
    from attention_dynamics.book.provenance import library_fingerprint

    (tmp_path / "book").mkdir()
    (tmp_path / "models.py").write_text("WIDTH = 64\n")
    (tmp_path / "book" / "verdicts.py").write_text("BOUND = 0.05\n")
    before = library_fingerprint(tmp_path)
    (tmp_path / "book" / "verdicts.py").write_text("BOUND = 0.1\n")    # the report's rules
    assert library_fingerprint(tmp_path) == before
    (tmp_path / "models.py").write_text("WIDTH = 32\n")                 # what makes numbers
    assert library_fingerprint(tmp_path) != before
    assert len(before) == 16 and int(before, 16) >= 0


def test_loaded_library_modules_list_what_was_imported_and_flag_what_changed(tmp_path,
                                                                              monkeypatch):
    import importlib
    import sys

    from attention_dynamics.book.provenance import changed_library_modules, loaded_library_modules

    package = tmp_path / "fakepkg"
    (package / "book").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "models.py").write_text("WIDTH = 64\n")
    (package / "tasks.py").write_text("LENGTH = 8\n")
    (package / "book" / "__init__.py").write_text("")
    (package / "book" / "report.py").write_text("BAR = 0.5\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("fakepkg.models", "fakepkg.book.report"):
        importlib.import_module(name)
    try:
        recorded = loaded_library_modules(package)
    finally:
        for name in ("fakepkg", "fakepkg.models", "fakepkg.book", "fakepkg.book.report"):
            sys.modules.pop(name, None)
    assert sorted(recorded) == ["__init__.py", "models.py"]     # tasks.py never imported
    assert changed_library_modules(recorded, package) == []
    (package / "tasks.py").write_text("LENGTH = 16\n")            # not used: still current
    (package / "book" / "report.py").write_text("BAR = 0.9\n")
    assert changed_library_modules(recorded, package) == []
    (package / "models.py").write_text("WIDTH = 32\n")
    assert changed_library_modules(recorded, package) == ["models.py"]
    (package / "models.py").unlink()
    assert changed_library_modules(recorded, package) == ["models.py"]


def test_the_runner_files_neither_count_nor_stale_a_result(tmp_path):
    from attention_dynamics.book.provenance import (
        RUNNER_FILES,
        changed_library_modules,
        library_fingerprint,
    )

    (tmp_path / "chapters").mkdir()
    (tmp_path / "models.py").write_text("WIDTH = 64\n")
    (tmp_path / "cli.py").write_text("CHOICES = 1\n")
    (tmp_path / "chapters" / "__init__.py").write_text('CHAPTERS = ("a",)\n')
    recorded = {"models.py": "0" * 16, "cli.py": "0" * 16, "chapters/__init__.py": "0" * 16}
    before = library_fingerprint(tmp_path)
    (tmp_path / "cli.py").write_text("CHOICES = 2\n")
    (tmp_path / "chapters" / "__init__.py").write_text('CHAPTERS = ("a", "b")\n')
    assert library_fingerprint(tmp_path) == before
    assert changed_library_modules(recorded, tmp_path) == ["models.py"]   # the hash is made up
    assert {"cli.py", "chapters/__init__.py"} <= RUNNER_FILES


def test_a_chapters_page_modules_neither_count_nor_stale_a_result(tmp_path):
    from attention_dynamics.book.provenance import changed_library_modules

    chapter = tmp_path / "chapters" / "some_chapter"
    chapter.mkdir(parents=True)
    (chapter / "words.py").write_text('WORD = "more"\n')
    (chapter / "training.py").write_text("STEPS = 10\n")
    (tmp_path / "words.py").write_text('WORD = "more"\n')  # not a chapter's: it counts
    recorded = {"chapters/some_chapter/words.py": "0" * 16,
                "chapters/some_chapter/training.py": "0" * 16, "words.py": "0" * 16}
    assert changed_library_modules(recorded, tmp_path) == [
        "chapters/some_chapter/training.py", "words.py"]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_part_of_a_chapters_run_imports_its_page_modules(chapter):
    """The command line imports a chapter's package to run it: that must load no page module."""
    code = (f"import sys, attention_dynamics.chapters.{chapter}\n"
            "print(sorted(n for n in sys.modules if n.rsplit('.', 1)[-1] in "
            "('words', 'tables', 'figures', 'metrics') and n.startswith('attention_dynamics.chapters.')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.strip()
    assert loaded == "[]"
