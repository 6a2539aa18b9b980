"""The build's stamp: what a built book was made from, so that a later step can reuse it.

A full build writes ``<output>/build_stamp.json``: a digest of the sources it read from the
working tree (:func:`source_digest`), its profile, device and seed, the Python and torch that
ran it, and the addresses that change its pages. The test suite reuses ``_build`` when that
stamp equals the one the working tree would get now (:func:`current_build`) instead of
executing the notebooks again.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
from pathlib import Path

import torch

from attention_dynamics.runtime import resolve_device
from book_build.downloads import PACKAGE_SOURCES
from book_build.staging import BOOK_SOURCES, OPTIONAL_SOURCES

STAMP_FILE = "build_stamp.json"
"""The stamp's file name in the build's output folder."""
DIGESTED_SOURCES = tuple(dict.fromkeys((
    *BOOK_SOURCES, *OPTIONAL_SOURCES,  # staged: the pages, the config, the kept results
    "notebooks",  # converted and executed from the tree (book_build.execution)
    *PACKAGE_SOURCES,  # the library's wheel, and the library the notebooks import
    "requirements.txt",  # the pins the downloaded notebooks install
    "scripts",  # the build itself, which makes the pages
)))
"""The paths (relative to the repository root) whose files the book build reads."""
COMPLETE_BUILD = ("html/index.html", "results", "notebooks", "figures")
"""What the output folder of a complete build holds (a file, then folders)."""


class SourceDigestError(RuntimeError):
    """The sources' digest cannot be computed (no git, or not the top of a git checkout)."""


def _git(root: Path, *arguments: str) -> bytes:
    """The standard output of ``git arguments`` run in ``root``; :class:`SourceDigestError`
    when git is missing or fails."""
    try:
        completed = subprocess.run(["git", *arguments], cwd=root, capture_output=True)
    except OSError as err:
        raise SourceDigestError(f"cannot run git for the sources' digest: {err}") from err
    if completed.returncode != 0:
        message = completed.stderr.decode(errors="replace").strip()
        raise SourceDigestError(f"git {' '.join(arguments)} failed in {root}: {message}")
    return completed.stdout


def source_files(root: Path) -> list[str]:
    """The files of :data:`DIGESTED_SOURCES` that git lists in the checkout ``root`` (tracked,
    or untracked and not ignored), as sorted paths relative to ``root``; listed files that no
    longer exist are left out. :class:`SourceDigestError` unless ``root`` is the top of a
    git checkout."""
    root = Path(root).resolve()
    top = _git(root, "rev-parse", "--show-toplevel").decode().strip()
    if Path(top).resolve() != root:
        raise SourceDigestError(f"{root} is not the top of a git checkout (that is {top})")
    listed = _git(root, "ls-files", "-co", "--exclude-standard", "-z", "--", *DIGESTED_SOURCES)
    names = {name for name in listed.decode().split("\0") if name}
    return sorted(name for name in names if (root / name).is_file())


def source_digest(root: Path) -> str:
    """SHA-256 (hex) over every file the book build reads from the checkout ``root``
    (:func:`source_files`): each file's relative path, its length in bytes and its bytes, in
    sorted order. Ignored files (``_build``, ``.venv``, executed notebooks) do not count.

    Raises :class:`SourceDigestError` outside a git checkout.
    """
    root = Path(root).resolve()
    digest = hashlib.sha256()
    for name in source_files(root):
        try:
            data = (root / name).read_bytes()
        except FileNotFoundError:  # deleted since it was listed
            continue
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def _site_url(url: str | None) -> str | None:
    """``url`` with one ``/`` at its end, as the build takes it; None stays None."""
    return url.rstrip("/") + "/" if url else None


def build_stamp(root: Path, profile: str, device: str, seed: int, *, repository_url: str | None = None,
                site_url: str | None = None) -> dict:
    """The stamp of a build of the checkout ``root`` with these options, as a JSON-ready dict.

    ``device`` may be ``auto``, which is resolved here (``cuda`` where available, else ``cpu``);
    ``repository_url`` and ``site_url`` are the build's addresses (they change the pages).
    Raises :class:`SourceDigestError` outside a git checkout.
    """
    return {
        "digest": source_digest(root),
        "profile": profile,
        "device": resolve_device("auto").type if device == "auto" else device,
        "seed": int(seed),
        "repository_url": repository_url or None,
        "site_url": _site_url(site_url),
        "python": platform.python_version(),
        "torch": torch.__version__,
    }


def write_stamp(output: Path, stamp: dict) -> Path:
    """Write ``stamp`` to ``output/build_stamp.json`` atomically (a temporary file beside it,
    then renamed); return its path."""
    path = Path(output) / STAMP_FILE
    partial = path.with_name(f".{STAMP_FILE}.partial")
    partial.write_text(json.dumps(stamp, indent=1, sort_keys=True) + "\n")
    os.replace(partial, path)
    return path


def remove_stamp(output: Path) -> bool:
    """Delete ``output/build_stamp.json`` (a build that changes only part of ``output`` does);
    True if there was one."""
    path = Path(output) / STAMP_FILE
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def read_stamp(output: Path) -> dict | None:
    """The stamp in ``output``; None when it is missing or unreadable."""
    try:
        stamp = json.loads((Path(output) / STAMP_FILE).read_text())
    except (OSError, ValueError):
        return None
    return stamp if isinstance(stamp, dict) else None


def complete_build(output: Path) -> bool:
    """Whether ``output`` holds every part of a full build (:data:`COMPLETE_BUILD`)."""
    output = Path(output)
    page, *folders = COMPLETE_BUILD
    return (output / page).is_file() and all((output / name).is_dir() for name in folders)


def current_build(output: Path, stamp: dict) -> bool:
    """Whether ``output`` holds a complete build whose stamp file equals ``stamp``."""
    return complete_build(output) and read_stamp(output) == stamp
