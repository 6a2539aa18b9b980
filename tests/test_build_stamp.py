"""The build's stamp: the sources' digest, when a built book is current, and what removes it.

Constructed cases in a temporary git repository; nothing here builds the book or executes a
notebook."""

import json
import subprocess
from pathlib import Path

import build_book
import pytest
import torch
from conftest import current_repository_build

from book_build.downloads import PACKAGE_SOURCES
from book_build.staging import BOOK_SOURCES, OPTIONAL_SOURCES
from book_build.stamp import (
    DIGESTED_SOURCES,
    STAMP_FILE,
    SourceDigestError,
    build_stamp,
    current_build,
    read_stamp,
    remove_stamp,
    source_digest,
    write_stamp,
)

FILES = {
    ".gitignore": "_build/\n.venv\nnotebooks/*.ipynb\n",
    "_config.yml": "title: A book\n",
    "_toc.yml": "format: jb-book\nroot: book/intro\n",
    "book/intro.md": "# Intro\n",
    "notebooks/chapter.py": "# %%\nx = 1\n",
    "lib/package/module.py": "VALUE = 1\n",
    "scripts/build.py": "print('build')\n",
    "tests/test_something.py": "def test_it():\n    pass\n",
}


def _git(root: Path, *arguments: str) -> None:
    subprocess.run(["git", "-c", "user.name=Test", "-c", "user.email=test@example.org",
                    "-c", "commit.gpgsign=false", *arguments], cwd=root, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path) -> Path:
    """A git repository with a few committed sources of a book."""
    root = tmp_path / "repo"
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "sources")
    return root


def _complete_output(output: Path) -> Path:
    """An output folder with every part of a full build."""
    (output / "html").mkdir(parents=True)
    (output / "html" / "index.html").write_text("<html></html>")
    for name in ("results", "notebooks", "figures"):
        (output / name).mkdir()
    return output


def test_the_digested_sources_are_what_the_build_reads():
    assert set(BOOK_SOURCES) | set(OPTIONAL_SOURCES) | set(PACKAGE_SOURCES) <= set(DIGESTED_SOURCES)
    assert {"notebooks", "lib", "scripts", "requirements.txt"} <= set(DIGESTED_SOURCES)
    assert "tests" not in DIGESTED_SOURCES and "_build" not in DIGESTED_SOURCES


@pytest.mark.parametrize("name", ["notebooks/chapter.py", "lib/package/module.py", "_config.yml",
                                  "book/intro.md", "scripts/build.py"])
def test_the_digest_changes_with_a_source_file(repo, name):
    before = source_digest(repo)
    assert source_digest(repo) == before  # the same tree, the same digest
    (repo / name).write_text((repo / name).read_text() + "# changed\n")
    assert source_digest(repo) != before


def test_the_digest_counts_untracked_files_and_skips_deleted_ones(repo):
    before = source_digest(repo)
    (repo / "lib" / "package" / "new.py").write_text("NEW = 2\n")  # untracked, not ignored
    with_new = source_digest(repo)
    assert with_new != before
    (repo / "notebooks" / "chapter.py").unlink()  # tracked, deleted: git still lists it
    assert source_digest(repo) not in (before, with_new)


def test_the_digest_ignores_ignored_files_and_other_paths(repo):
    before = source_digest(repo)
    for name in ("_build/html/index.html", "_build/build_stamp.json", ".venv/lib/site.py",
                 "notebooks/chapter.ipynb", "tests/test_something.py", "other/notes.txt"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("anything\n")
    assert source_digest(repo) == before


def test_renaming_a_source_file_changes_the_digest(repo):
    before = source_digest(repo)
    (repo / "book" / "intro.md").rename(repo / "book" / "intro2.md")
    assert source_digest(repo) != before


def test_outside_a_git_checkout_the_digest_names_the_problem(tmp_path):
    (tmp_path / "_config.yml").write_text("title: A book\n")
    with pytest.raises(SourceDigestError, match="git"):
        source_digest(tmp_path)


def test_a_sub_folder_of_a_checkout_is_not_a_checkout(repo):
    with pytest.raises(SourceDigestError, match="not the top of a git checkout"):
        source_digest(repo / "lib")


def test_the_stamp_resolves_the_device_and_names_the_versions(repo):
    stamp = build_stamp(repo, "quick", "auto", 0)
    assert stamp["device"] == ("cuda" if torch.cuda.is_available() else "cpu")
    assert stamp["digest"] == source_digest(repo) and stamp["torch"] == torch.__version__
    assert {"profile", "seed", "python", "repository_url", "site_url"} <= set(stamp)
    assert build_stamp(repo, "quick", "cpu", 0, site_url="https://a.example/book")["site_url"] == \
        build_stamp(repo, "quick", "cpu", 0, site_url="https://a.example/book/")["site_url"]


def test_a_matching_complete_build_is_current(repo, tmp_path):
    output = _complete_output(tmp_path / "out")
    stamp = build_stamp(repo, "quick", "cpu", 0)
    assert not current_build(output, stamp)  # no stamp
    path = write_stamp(output, stamp)
    assert path == output / STAMP_FILE and read_stamp(output) == stamp
    assert [p.name for p in output.iterdir() if "stamp" in p.name] == [STAMP_FILE]  # no partial file
    assert current_build(output, stamp)
    assert current_build(output, build_stamp(repo, "quick", "cpu", 0))


@pytest.mark.parametrize("change", [{"profile": "paper"}, {"seed": 1}, {"device": "cuda"},
                                    {"digest": "0" * 64}, {"torch": "0.0"},
                                    {"repository_url": "https://github.com/a/b"}])
def test_a_build_with_other_options_or_sources_is_not_current(repo, tmp_path, change):
    output = _complete_output(tmp_path / "out")
    stamp = build_stamp(repo, "quick", "cpu", 0)
    write_stamp(output, {**stamp, **change})
    assert not current_build(output, stamp)


def test_a_build_is_not_current_once_a_source_changes(repo, tmp_path):
    output = _complete_output(tmp_path / "out")
    write_stamp(output, build_stamp(repo, "quick", "cpu", 0))
    (repo / "lib" / "package" / "module.py").write_text("VALUE = 2\n")
    assert not current_build(output, build_stamp(repo, "quick", "cpu", 0))


@pytest.mark.parametrize("missing", ["html/index.html", "results", "notebooks", "figures"])
def test_an_incomplete_build_is_not_current(repo, tmp_path, missing):
    output = _complete_output(tmp_path / "out")
    stamp = build_stamp(repo, "quick", "cpu", 0)
    write_stamp(output, stamp)
    path = output / missing
    path.unlink() if path.is_file() else path.rmdir()
    assert not current_build(output, stamp)


def test_an_unreadable_stamp_is_no_stamp(repo, tmp_path):
    output = _complete_output(tmp_path / "out")
    (output / STAMP_FILE).write_text("{not json")
    assert read_stamp(output) is None
    assert not current_build(output, build_stamp(repo, "quick", "cpu", 0))
    (output / STAMP_FILE).write_text(json.dumps([1, 2]))
    assert read_stamp(output) is None


def test_a_partial_build_removes_the_stamp(repo, tmp_path):
    output = _complete_output(tmp_path / "out")
    stamp = build_stamp(repo, "quick", "cpu", 0)
    write_stamp(output, stamp)
    assert remove_stamp(output)
    assert not (output / STAMP_FILE).exists() and not current_build(output, stamp)
    assert not remove_stamp(output)  # none left: nothing to do
    assert not remove_stamp(tmp_path / "no-such-output")


def test_the_stamp_is_written_only_if_the_sources_did_not_change(repo, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(build_book, "ROOT", repo)
    output = _complete_output(tmp_path / "out")
    stamp = build_stamp(repo, "quick", "cpu", 0)
    (repo / "notebooks" / "chapter.py").write_text("# %%\nx = 2\n")  # edited during the build
    build_book.publish_stamp(output, stamp)
    assert not (output / STAMP_FILE).exists()
    assert "sources changed while the book was built" in capsys.readouterr().out
    build_book.publish_stamp(output, build_stamp(repo, "quick", "cpu", 0))
    assert read_stamp(output) == build_stamp(repo, "quick", "cpu", 0)


def test_outside_a_checkout_the_build_goes_on_without_a_stamp(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(build_book, "ROOT", tmp_path)
    assert build_book.starting_stamp(build_book.parse_args(["--device", "cpu"])) is None
    assert "no build stamp will be written" in capsys.readouterr().out


@pytest.mark.skipif(torch.cuda.is_available(), reason="make book's --device auto is cuda here")
def test_the_tests_reuse_what_make_book_stamps(tmp_path, monkeypatch):
    """The stamp of ``make book`` (profile quick, device auto, seed 0) is the one the slow tests'
    fixture looks for, with the build's addresses taken from the environment by both."""
    monkeypatch.delenv("REPOSITORY_URL", raising=False)
    monkeypatch.setenv("SITE_URL", "https://someone.github.io/book")
    output = _complete_output(tmp_path / "out")
    assert not current_repository_build(output)
    stamp = build_book.starting_stamp(build_book.parse_args(["--profile", "quick", "--device", "auto"]))
    write_stamp(output, stamp)
    assert current_repository_build(output)
    monkeypatch.setenv("SITE_URL", "https://someone.github.io/other")
    assert not current_repository_build(output)
