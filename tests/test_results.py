"""Reading the table of contents: which notebooks the build runs, and in which groups."""

from pathlib import Path

from attention_dynamics.book.results import book_notebook_parts, book_notebooks

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
