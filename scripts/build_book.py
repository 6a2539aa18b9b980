"""Build the book: convert the jupytext notebooks, execute them with papermill, render the HTML.

Usage (from the repository root; ``make book`` calls it)::

    python scripts/build_book.py [--profile quick|paper] [--device auto|cpu|cuda]
                                 [--seed N] [--output _build] [--only NAME ...]
                                 [--timeout SECONDS] [--jobs N]
                                 [--repository-url URL] [--site-url URL] [--pdf]

Everything happens in a staging folder (``<output>/.stage``): the book sources are copied
there, each notebook listed in ``_toc.yml`` is converted to ``.ipynb`` and executed, and
jupyter-book renders the staged tree with warnings as errors. The notebooks of the toc's first
part (the chapters, independent of each other) run side by side, ``--jobs`` at a time (by
default all at once, each kernel with an equal share of the CPUs and at least one thread, at a
nice level that gives the longer ones a larger share, so that the chapters end together; with
fewer jobs than chapters, the longest start first). The notebooks of the later parts read the
chapters' results and run after them, one at a time, in toc order. Only when every step
succeeds are the new ``html``, ``results`` and ``notebooks`` folders moved into ``<output>``,
replacing the previous build; a failure leaves the last good book in place and names the
notebook and cell that failed. A full build then writes ``<output>/build_stamp.json``
(``scripts/book_build/stamp.py``): a digest of the sources as they were when it started, its
options and versions, by which the tests reuse the build instead of executing the notebooks
again; it is left out when the sources changed during the build, and an ``--only`` build, which
refreshes some results but not the HTML, deletes it. The HTML carries the library's wheel,
linked from every page (``book/_ext/library_wheel.py``), and, as each notebook's download, a
copy that runs outside the book and installs the wheel (``scripts/book_build/downloads.py``).
With ``--pdf``, the whole book is also printed to ``<output>/html/book.pdf`` by the installed
Chromium (``scripts/book_build/pdf.py``).

The steps live in the package ``scripts/book_build``; this script parses the options and runs
them in order.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import time
import uuid
from pathlib import Path

from attention_dynamics.book.plotting import FIGURES_DIR_VARIABLE
from attention_dynamics.book.results import (
    BUILD_ID_VARIABLE,
    BUILD_START_VARIABLE,
    RESULTS_DIR_VARIABLE,
    book_notebook_parts,
)
from attention_dynamics.runtime import DEVICES, PROFILES
from book_build import ROOT, BuildError
from book_build.downloads import build_wheel, write_downloads
from book_build.execution import execute_all
from book_build.pdf import find_chromium, render_pdf
from book_build.schedule import expected_seconds, longest_first, nice_levels
from book_build.staging import publish, render_html, ship_wheel, stage_sources, write_banner
from book_build.stamp import SourceDigestError, build_stamp, remove_stamp, source_digest, write_stamp
from book_build.tidy import page_figures


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The build's options (``argv``, default the command line's); see the module's docstring."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="quick", choices=PROFILES)
    parser.add_argument("--device", default="auto", choices=DEVICES)
    parser.add_argument("--seed", type=non_negative_int, default=0,
                        help="the seed every notebook receives (default 0)")
    parser.add_argument("--output", type=Path, default=ROOT / "_build")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="execute only these notebooks (the book build is skipped)")
    parser.add_argument("--timeout", type=int, default=3600, help="seconds allowed per cell")
    parser.add_argument("--repository-url", default=os.environ.get("REPOSITORY_URL") or None,
                        help="the public repository of the book (default $REPOSITORY_URL): "
                             "adds a repository button to every page; none without it")
    parser.add_argument("--site-url", type=site_url, default=os.environ.get("SITE_URL") or None,
                        help="the address the book is published at (default $SITE_URL): the "
                             "downloaded notebooks install the library's wheel from there and "
                             "link the book's pages; without it, from a file beside them")
    parser.add_argument("--pdf", action="store_true",
                        help="also print the whole book to html/book.pdf (needs Chromium on the "
                             "PATH, e.g. Debian's; no download)")
    parser.add_argument("--jobs", type=positive_int, default=None,
                        help="chapter notebooks executed side by side (default: all of them, "
                             "each with an equal share of the CPUs, at least one thread)")
    return parser.parse_args(argv)  # argparse checks a default from the environment too


def _int_at_least(text: str, low: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = low - 1
    if value < low:
        raise argparse.ArgumentTypeError(f"must be a {what} int; got {text!r}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an int of at least 1."""
    return _int_at_least(text, 1, "positive")


def non_negative_int(text: str) -> int:
    """argparse type: an int of at least 0."""
    return _int_at_least(text, 0, "non-negative")


def site_url(text: str) -> str:
    """argparse type: an http(s) address, returned with one ``/`` at its end."""
    if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", text):
        raise argparse.ArgumentTypeError(f"must be an http:// or https:// address; got {text!r}")
    return text.rstrip("/") + "/"


def build(argv: list[str] | None = None) -> None:
    """Build the book as the options ``argv`` say (see the module's docstring)."""
    args = parse_args(argv)
    output = args.output.resolve()
    stage = output / ".stage"
    if args.repository_url and not args.repository_url.startswith("https://"):
        raise BuildError(f"--repository-url must start with https://; got {args.repository_url!r}")
    if args.pdf and not args.only and find_chromium() is None:  # before hours of notebooks
        raise BuildError("--pdf prints the book with Chromium, and none is on the PATH "
                         "(`make browser` installs Debian's)")
    stamp = None if args.only else starting_stamp(args)  # the sources as this build reads them
    src = stage_sources(stage, args.repository_url)
    results = stage / "results"
    os.environ[RESULTS_DIR_VARIABLE] = str(results)
    os.environ[BUILD_ID_VARIABLE] = uuid.uuid4().hex
    os.environ[BUILD_START_VARIABLE] = str(time.time())
    os.environ[FIGURES_DIR_VARIABLE] = str(src / "book" / "figures")

    figures = page_figures(src / "book")
    parts = book_notebook_parts(ROOT / "_toc.yml")
    if args.only:
        names = [name for part in parts for name in part]
        unknown = sorted(set(args.only) - set(names))
        if unknown:
            raise BuildError(f"--only names notebooks not in _toc.yml: {unknown}; "
                             f"allowed: {names}")
        parts = [[name for name in part if name in args.only] for part in parts]
    for index, part in enumerate(parts):
        if index == 0:  # side by side, shares weighted so that they end together
            seconds = expected_seconds(part, output / "results", args.profile)
            execute_all(longest_first(seconds), src, args, figures,
                        jobs=args.jobs or len(part), nice=nice_levels(seconds))
        else:
            execute_all(part, src, args, figures, jobs=1)

    built = {"results": results, "notebooks": src / "notebooks", "figures": src / "book" / "figures"}
    if not args.only:
        print(f"[build] banner: {write_banner(src, results, args.profile)}", flush=True)
        wheel = build_wheel(stage / "wheel", stage)
        ship_wheel(src, wheel)  # the render copies it into the HTML and links it from every page
        print("[build] rendering the HTML", flush=True)
        built["html"] = render_html(src, stage)
        wheel = write_downloads(built["html"], parts, wheel, args.site_url, args.repository_url)
        print(f"[build] runnable downloads written beside the wheel {wheel.name}", flush=True)
        if args.pdf:
            print("[build] printing the whole book to PDF", flush=True)
            print(f"[build] PDF written: {render_pdf(src, stage, built['html']).name}", flush=True)
    # the previous stamp goes before anything is replaced: a publish that fails half-way, or a
    # partial build (new results beside the old HTML), leaves no stamp that claims the output
    if remove_stamp(output) and args.only:
        print(f"[build] removed the build stamp of {output}: its HTML is older than its results",
              flush=True)
    publish(built, output, merge=bool(args.only))
    if stamp is not None:
        publish_stamp(output, stamp)
    shutil.rmtree(stage)
    print(f"[build] published {', '.join(built)} to {output}", flush=True)


def starting_stamp(args: argparse.Namespace) -> dict | None:
    """The stamp of a full build with the options ``args``, from the sources as they are now
    (:func:`~book_build.stamp.build_stamp`); None, with a line that says why, outside a git
    checkout (the build goes on, without a stamp)."""
    try:
        return build_stamp(ROOT, args.profile, args.device, args.seed,
                           repository_url=args.repository_url, site_url=args.site_url)
    except SourceDigestError as err:
        print(f"[build] no build stamp will be written: {err}", flush=True)
        return None


def publish_stamp(output: Path, stamp: dict) -> None:
    """Write ``stamp`` into ``output`` if the sources still have its digest; otherwise (they
    changed while the build ran) write none, and say so."""
    try:
        unchanged = source_digest(ROOT) == stamp["digest"]
    except SourceDigestError:
        unchanged = False
    if unchanged:
        print(f"[build] build stamp written: {write_stamp(output, stamp)}", flush=True)
    else:
        print("[build] the sources changed while the book was built: no build stamp written "
              "(the tests will build the book again)", flush=True)


def main() -> int:
    """Run the build; 0 on success, 1 (with the reason on standard error) on failure."""
    start = time.perf_counter()
    try:
        build()
    except BuildError as err:
        print(f"[build] FAILED: {err}\n[build] the previous book in _build was left as it was",
              file=sys.stderr)
        return 1
    print(f"[build] finished in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
