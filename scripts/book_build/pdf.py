"""The whole book as one PDF, offline: the staged book rendered as a single HTML page, printed by
the Chromium on the PATH (Debian's, which ``make browser`` installs), driven by Playwright.

Jupyter Book 1's own PDF builders need what an offline machine lacks: ``pdfhtml`` prints with
Playwright's own Chromium, which ``playwright install`` downloads, and ``pdflatex`` a TeX
installation. This renders the same single page (``--builder singlehtml``) and prints it the
way ``pdfhtml`` does, with the installed Chromium instead.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from book_build import BuildError

CHROMIUM_NAMES = ("chromium", "chromium-browser")
PDF_NAME = "book.pdf"
"""The PDF's name in the HTML folder."""
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update"]
TIMEOUT_MS = 600_000
"""How long loading, typesetting and printing the whole book may take."""
KEEP_TOGETHER = """
div.cell_input, div.cell_output, figure { break-inside: avoid; }
"""
OPEN_FOLDS = "document.querySelectorAll('details').forEach(fold => { fold.open = true; })"
"""Paper cannot unfold: the folded proofs (``book/_ext/reading_aids.py``) print open."""


def find_chromium() -> str | None:
    """The Chromium on the PATH, if any."""
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


def render_single_page(src: Path, stage: Path) -> Path:
    """Render the staged book ``src`` as one HTML page; return that page, put beside its
    ``_static`` folder (the single page of a book whose root page is in a folder links its
    assets as if it were at the top)."""
    command = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(src), "--builder",
               "singlehtml", "--path-output", str(stage / "single")]
    completed = subprocess.run(command, cwd=src, text=True, capture_output=True)
    if completed.returncode != 0:
        sys.stderr.write(completed.stdout[-10000:] + completed.stderr[-10000:])
        raise BuildError(f"the single-page render for the PDF failed (exit {completed.returncode})")
    folder = stage / "single" / "_build" / "singlehtml"
    root = yaml.safe_load((src / "_toc.yml").read_text())["root"]
    page = folder / "whole_book.html"
    shutil.copy2(folder / f"{Path(root).with_suffix('')}.html", page)
    return page


def print_pdf(page: Path, destination: Path, chromium: str, timeout_ms: int = TIMEOUT_MS) -> Path:
    """Print the HTML ``page`` to the PDF ``destination`` with ``chromium``, once its math is
    typeset, with every fold open; each step may take ``timeout_ms``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            tab = browser.new_page()
            tab.set_default_timeout(timeout_ms)
            tab.goto(page.resolve().as_uri(), wait_until="networkidle")
            if tab.locator(".math").count():
                tab.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise")
                tab.evaluate("MathJax.startup.promise")
            tab.add_style_tag(content=KEEP_TOGETHER)
            tab.evaluate(OPEN_FOLDS)
            tab.pdf(path=str(destination), format="A4", print_background=True,
                    margin={"top": "15mm", "bottom": "15mm", "left": "12mm", "right": "12mm"})
        finally:
            browser.close()
    return destination


def render_pdf(src: Path, stage: Path, html: Path, timeout_ms: int = TIMEOUT_MS) -> Path:
    """The whole staged book ``src`` as ``html/book.pdf`` (:data:`PDF_NAME`); a
    :class:`BuildError` that says so where no Chromium is installed."""
    chromium = find_chromium()
    if chromium is None:
        raise BuildError("--pdf prints the book with Chromium, and none is on the PATH "
                         "(`make browser` installs Debian's)")
    return print_pdf(render_single_page(src, stage), html / PDF_NAME, chromium, timeout_ms)
