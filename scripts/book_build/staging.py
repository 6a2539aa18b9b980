"""The staging folder: the book's sources copied in, the banner, the wheel's link, jupyter-book,
publishing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from book_build import ROOT, BuildError

BOOK_SOURCES = ("_config.yml", "_toc.yml", "book")
BINDER_URL = "https://mybinder.org"
"""Where a notebook page's launch button opens the notebook, with a repository configured."""
# results kept with the sources (a profile run once and committed, e.g. results/decide): the
# report shows them beside this build's when they are there
OPTIONAL_SOURCES = ("results",)


def stage_sources(stage: Path, repository_url: str | None = None) -> Path:
    """Copy the book's sources into a fresh ``stage/src``; return that folder.

    With ``repository_url``, the staged ``_config.yml`` gets the repository (branch ``main``)
    and the buttons that link it and its issue tracker from every page, and a launch button on
    every notebook page: Binder (:data:`BINDER_URL`) builds the repository's ``binder/``
    environment and opens the notebook in JupyterLab (``binder/postBuild`` makes the
    ``notebooks/*.ipynb`` that the button names from their jupytext sources).
    """
    if stage.exists():
        shutil.rmtree(stage)
    src = stage / "src"
    src.mkdir(parents=True)
    for name in (*BOOK_SOURCES, *OPTIONAL_SOURCES):
        origin = ROOT / name
        if name in OPTIONAL_SOURCES and not origin.exists():
            continue
        if origin.is_dir():
            shutil.copytree(origin, src / name)
        else:
            shutil.copy2(origin, src / name)
    (src / "notebooks").mkdir()
    if repository_url:
        def add_repository(config: dict) -> None:
            config["repository"] = {"url": repository_url, "path_to_book": "", "branch": "main"}
            config.setdefault("html", {}).update(use_repository_button=True,
                                                 use_issues_button=True)
            config["launch_buttons"] = {"binderhub_url": BINDER_URL,
                                        "notebook_interface": "jupyterlab", "thebe": False}

        _update_config(src, add_repository)
    return src


def commit_label() -> str:
    """The short commit of the sources, marked ``+ local changes`` if the tree differs from it;
    ``unknown commit`` outside a git checkout."""
    def git(*arguments: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *arguments], cwd=ROOT, capture_output=True, text=True)

    try:
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except OSError:
        return "unknown commit"
    if head.returncode != 0:
        return "unknown commit"
    return f"commit {head.stdout.strip()}" + (" + local changes" if dirty.stdout.strip() else "")


def write_banner(src: Path, results: Path, profile: str) -> str:
    """Put a banner on every page (the theme's announcement): profile, device, commit, date.

    The device is the one the executed notebooks report in their results files. The profile's
    explanation is a ``banner-detail`` span, which a phone hides (``book/_ext/static/
    page_fit.css``) so that the banner stays within two lines. Returns the banner's HTML.
    """
    devices = sorted({json.loads(path.read_text()).get("device", "?")
                      for path in results.glob("*.json")}) or ["?"]
    scale = (' <span class="banner-detail">(small models trained for minutes on CPUs; see each '
             "chapter for what it can decide)</span>" if profile == "quick" else "")
    text = (f"Built {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} from "
            f"{commit_label()} · profile {profile}{scale} · device {', '.join(devices)}")
    _update_config(src, lambda config: config.setdefault("html", {}).update(announcement=text))
    return text


def ship_wheel(src: Path, wheel: Path) -> None:
    """Have the rendered book carry the library's ``wheel`` and link it from every page
    (``book/_ext/library_wheel.py`` reads the path from the staged ``_config.yml``)."""
    _update_config(src, lambda config: config.setdefault("sphinx", {}).setdefault(
        "config", {}).update(library_wheel=str(wheel.resolve())))


def _update_config(src: Path, change) -> None:
    """Apply ``change`` (a function that edits a dict in place) to the staged ``_config.yml``."""
    config_path = src / "_config.yml"
    config = yaml.safe_load(config_path.read_text())
    change(config)
    config_path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))


def render_html(src: Path, stage: Path) -> Path:
    """Run jupyter-book on the staged sources with warnings as errors; return the HTML folder."""
    command = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(src), "--path-output",
               str(stage / "out"), "-W", "-n", "--keep-going"]
    completed = subprocess.run(command, cwd=src, text=True, capture_output=True)
    sys.stdout.write(completed.stdout[-20000:])
    if completed.returncode != 0:
        sys.stderr.write(completed.stderr[-20000:])
        raise BuildError(f"jupyter-book build failed (exit {completed.returncode}); "
                         "warnings count as errors")
    return stage / "out" / "_build" / "html"


def publish(built: dict[str, Path], output: Path, merge: bool) -> None:
    """Move each built folder to ``output/<name>``, replacing the previous one.

    With ``merge``, only the files built now replace their namesakes; the others stay.
    """
    for name, folder in built.items():
        if merge:
            (output / name).mkdir(parents=True, exist_ok=True)
            for path in folder.iterdir() if folder.exists() else ():
                shutil.copy2(path, output / name / path.name)
            continue
        destination = output / name
        previous = output / f".{name}.previous"
        if previous.exists():
            shutil.rmtree(previous)
        if destination.exists():
            destination.rename(previous)
        shutil.move(str(folder), str(destination))
        if previous.exists():
            shutil.rmtree(previous)
