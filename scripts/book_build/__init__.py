"""The steps of the book build; ``scripts/build_book.py`` runs them in order.

- :mod:`book_build.schedule`: how the chapters share the CPUs (expected times, nice levels);
- :mod:`book_build.execution`: converting and executing the notebooks with papermill;
- :mod:`book_build.tidy`: what the pages show of an executed notebook (hidden settings, alt texts);
- :mod:`book_build.staging`: the staging folder, the banner, the wheel's link, jupyter-book,
  publishing;
- :mod:`book_build.downloads`: the library's wheel and the runnable notebooks readers download,
  with :mod:`book_build.plain_markdown` turning their MyST into what a plain Jupyter shows.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository root: the book's sources, its notebooks and its library."""

KERNEL = "python3"
"""The kernel the executed notebooks name, whichever kernel spec ran them."""


class BuildError(RuntimeError):
    """A step of the build failed; the message says which and why."""
