"""Build the book: convert the jupytext notebooks, execute them with papermill, render the HTML.

Usage (from the repository root; ``make book`` calls it)::

    python scripts/build_book.py [--profile quick|paper] [--device auto|cpu|cuda]
                                 [--seed N] [--output _build] [--only NAME ...]
                                 [--timeout SECONDS]
                                 [--jobs N]

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
notebook and cell that failed.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import yaml

from attention_dynamics.book.plotting import FIGURES_DIR_VARIABLE
from attention_dynamics.book.results import (
    BUILD_ID_VARIABLE,
    BUILD_START_VARIABLE,
    RESULTS_DIR_VARIABLE,
    book_notebook_parts,
)
from attention_dynamics.runtime import DEVICES, PROFILES

ROOT = Path(__file__).resolve().parent.parent

BOOK_SOURCES = ("_config.yml", "_toc.yml", "book")


class BuildError(RuntimeError):
    """A step of the build failed; the message says which and why."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
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
    parser.add_argument("--jobs", type=positive_int, default=None,
                        help="chapter notebooks executed side by side (default: all of them, "
                             "each with an equal share of the CPUs, at least one thread)")
    return parser.parse_args(argv)


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


def available_cpus() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def stage_sources(stage: Path, repository_url: str | None = None) -> Path:
    """Copy the book's sources into a fresh ``stage/src``; return that folder.

    With ``repository_url``, the staged ``_config.yml`` gets the repository and its button.
    """
    if stage.exists():
        shutil.rmtree(stage)
    src = stage / "src"
    src.mkdir(parents=True)
    for name in BOOK_SOURCES:
        origin = ROOT / name
        if origin.is_dir():
            shutil.copytree(origin, src / name)
        else:
            shutil.copy2(origin, src / name)
    (src / "notebooks").mkdir()
    if repository_url:
        config_path = src / "_config.yml"
        config = yaml.safe_load(config_path.read_text())
        config["repository"] = {"url": repository_url, "path_to_book": "", "branch": "main"}
        config.setdefault("html", {})["use_repository_button"] = True
        config_path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
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

    The device is the one the executed notebooks report in their results files. Returns the text.
    """
    devices = sorted({json.loads(path.read_text()).get("device", "?")
                      for path in results.glob("*.json")}) or ["?"]
    scale = (" (small models trained for minutes on CPUs; see each chapter for what it can decide)"
             if profile == "quick" else "")
    text = (f"Built {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} from "
            f"{commit_label()} · profile {profile}{scale} · device {', '.join(devices)}")
    config_path = src / "_config.yml"
    config = yaml.safe_load(config_path.read_text())
    config.setdefault("html", {})["announcement"] = text
    config_path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    return text


class ProgressLines:
    """A file for papermill's progress bar that prints each new state on a line of its own:
    notebooks side by side then report as ``[build] notebooks/<name>: 12/40 cells, 01:23``."""

    def __init__(self):
        self.last = ""

    def write(self, text: str) -> None:
        line = text.replace("\r", "").strip()
        if line and line.split(",")[0] != self.last:
            print(line, flush=True)
            self.last = line.split(",")[0]

    def flush(self) -> None:
        pass


KERNEL = "python3"


def kernel_at_nice_level(folder: Path, nice: int) -> str:
    """The name of a kernel spec in ``folder/kernels`` that runs this Python's kernel at ``nice``.

    jupyter_client starts every kernel in a session of its own, and Linux shares the CPUs
    equally between sessions (autogroups), whatever the nice level of the processes in them; so
    the kernel sets the nice level of its own autogroup before it starts. Where that file does
    not exist (not Linux), the kernel starts as usual. Put ``folder`` on ``JUPYTER_PATH``.
    """
    name = f"{KERNEL}-nice{nice}"
    spec = folder / "kernels" / name
    spec.mkdir(parents=True, exist_ok=True)
    script = (f"echo {nice} > /proc/self/autogroup 2>/dev/null; "
              'exec "$0" -m ipykernel_launcher -f "$@"')
    (spec / "kernel.json").write_text(json.dumps({
        "argv": ["/bin/sh", "-c", script, sys.executable, "{connection_file}"],
        "display_name": f"Python 3 (nice {nice})", "language": "python"}))
    return name


def execute_notebook(name: str, src: Path, args: argparse.Namespace, nice: int = 0) -> float:
    """Convert ``notebooks/<name>.py`` to ``.ipynb`` in ``src`` and execute it; return seconds.

    With ``nice`` > 0 (and a POSIX shell), the kernel runs at that nice level
    (:func:`kernel_at_nice_level`); the executed notebook names the plain kernel either way.
    """
    import jupytext
    import papermill
    from papermill.exceptions import PapermillExecutionError

    source = ROOT / "notebooks" / f"{name}.py"
    if not source.exists():
        raise BuildError(f"_toc.yml lists notebooks/{name} but {source} does not exist")
    target = src / "notebooks" / f"{name}.ipynb"
    jupytext.write(jupytext.read(source), target)
    kernel = KERNEL
    if nice > 0 and os.name == "posix" and Path("/bin/sh").exists():
        kernel = kernel_at_nice_level(src.parent / "jupyter", nice)
        os.environ["JUPYTER_PATH"] = os.pathsep.join(
            filter(None, [str(src.parent / "jupyter"), os.environ.get("JUPYTER_PATH")]))
    start = time.perf_counter()
    progress = {"desc": f"[build] notebooks/{name}", "file": ProgressLines(), "mininterval": 0,
                "bar_format": "{desc}: {n_fmt}/{total_fmt} cells, {elapsed}"}
    try:
        papermill.execute_notebook(
            str(target), str(target), parameters={"profile": args.profile, "device": args.device,
                                          "seed": args.seed},
            kernel_name=kernel, language="python", cwd=str(target.parent),
            progress_bar=progress, execution_timeout=args.timeout,
            # the kernel application's own log stays quiet (its notice about unencrypted local
            # TCP, the interrupt jupyter_client sends at shutdown); cell errors still fail the build
            extra_arguments=["--IPKernelApp.log_level=CRITICAL"],
        )
    except PapermillExecutionError as err:
        raise BuildError(f"notebook {name} failed in cell {err.cell_index} "
                         f"(execution count {err.exec_count}): {err.ename}: {err.evalue}\n"
                         f"the partly executed notebook is {target}") from err
    hide_parameter_cells(target)
    describe_figures(target, figure_alt_texts(src / "book"))
    return time.perf_counter() - start



FIGURE_BLOCK = re.compile(r"```\{figure\} figures/([\w-]+)\.png\n(?::(?!alt:)[^\n]*\n)*:alt: ([^\n]+)")


def figure_alt_texts(pages: Path) -> dict[str, str]:
    """The alt text the book's pages give each figure they show, by figure name."""
    return {name: alt.strip() for page in sorted(pages.glob("*.md"))
            for name, alt in FIGURE_BLOCK.findall(page.read_text())}


def describe_figures(path: Path, alt_texts: dict[str, str]) -> None:
    """Give every figure a notebook shows (``show_figure("name", fig)``) an alt text: the one its
    chapter page gives it, else its name in words (without one, the page would show a hash)."""
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        shown = re.search(r'show_figure\(\s*"([\w-]+)"', cell.source) \
            if cell.cell_type == "code" else None
        if shown is None:
            continue
        name = shown.group(1)
        alt = alt_texts.get(name) or "Figure: " + name.removeprefix("fig_").replace("_", " ")
        cell.metadata.setdefault("mystnb", {})["image"] = {"alt": alt}
    nbformat.write(notebook, path)


def hide_parameter_cells(path: Path) -> None:
    """Tag the notebook's parameters cells (its own and papermill's) ``remove-cell``: the
    page says which profile produced it; two cells of settings say nothing more. The notebook
    then names the plain Python kernel, whichever ran it."""
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    notebook.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python 3",
                                       "language": "python"}
    for cell in notebook.cells:
        tags = cell.metadata.setdefault("tags", [])
        if {"parameters", "injected-parameters"} & set(tags) and "remove-cell" not in tags:
            tags.append("remove-cell")
    nbformat.write(notebook, path)


def execute_and_report(name: str, src: Path, args: argparse.Namespace, nice: int = 0) -> None:
    """:func:`execute_notebook`, with a line before and after on standard output.

    With ``nice`` > 0 the notebook's kernel runs at that nice level.
    """
    print(f"[build] executing notebooks/{name} (profile {args.profile}, device {args.device}, "
          f"seed {args.seed})", flush=True)
    seconds = execute_notebook(name, src, args, nice)
    print(f"[build] notebooks/{name} done in {seconds:.1f} s", flush=True)


CPU_SECONDS_HINT = {"content_routing": 600.0, "manifold_formation": 500.0, "em_reading": 400.0}
"""CPU seconds of the heaviest chapters in a quick build, for when no earlier build says (a
scheduling hint); any other notebook counts as :data:`DEFAULT_CPU_SECONDS`."""
DEFAULT_CPU_SECONDS = 30.0
NICE_STEP = 1.25
"""Linux gives a process (or an autogroup) about 1.25 times the CPU share of one at the next
higher nice level."""


def expected_seconds(names: list[str], previous_results: Path, profile: str) -> dict[str, float]:
    """CPU seconds each notebook is expected to take, from the last build of the same profile.

    Read from the results files in ``previous_results`` (``cpu_time_s``, else ``wall_time_s``);
    without one for every notebook, :data:`CPU_SECONDS_HINT` for all of them.
    """
    seconds = {}
    for name in names:
        path = previous_results / f"{name}.json"
        try:
            content = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            break
        measured = content.get("cpu_time_s", content.get("wall_time_s")) \
            if isinstance(content, dict) and content.get("profile") == profile else None
        if not isinstance(measured, int | float) or measured <= 0:
            break
        seconds[name] = float(measured)
    else:
        return seconds
    return {name: CPU_SECONDS_HINT.get(name, DEFAULT_CPU_SECONDS) for name in names}


def longest_first(seconds: dict[str, float]) -> list[str]:
    """The notebooks in order of expected seconds, longest first (ties keep their order)."""
    return sorted(seconds, key=lambda name: -seconds[name])


def nice_levels(seconds: dict[str, float]) -> dict[str, int]:
    """A nice level per notebook so that the CPU shares follow the expected seconds.

    Side by side on fewer CPUs than notebooks, the operating system shares the CPUs by
    weight; a weight proportional to the work left lets the notebooks end together instead of
    the longest finishing alone. The longest gets level 0, one ``NICE_STEP**n`` times shorter
    level ``n`` (at most 19). Only the schedule changes, never what a notebook computes.
    """
    longest = max(seconds.values(), default=0.0)
    return {name: min(19, round(math.log(longest / max(s, 1e-9)) / math.log(NICE_STEP)))
            for name, s in seconds.items()}


def execute_all(names: list[str], src: Path, args: argparse.Namespace, jobs: int,
                nice: dict[str, int] | None = None) -> None:
    """Execute ``names``, ``jobs`` at a time in worker processes; stop at the first failure.

    ``nice`` gives the nice level of a notebook's kernel (default 0).

    A failure raises its :class:`BuildError` here as soon as it happens; leaving the pool
    terminates the notebooks still running. Side by side, each kernel gets an equal share of
    the CPUs as its thread count (``OMP_NUM_THREADS``, unless that is set already).
    """
    if jobs == 1 or len(names) < 2:
        for name in names:
            execute_and_report(name, src, args)
        return
    workers = min(jobs, len(names))
    # the kernels share the CPUs: without a cap, each would start one thread per CPU
    threads_set = "OMP_NUM_THREADS" not in os.environ
    if threads_set:
        os.environ["OMP_NUM_THREADS"] = str(max(1, available_cpus() // workers))
    try:
        with multiprocessing.Pool(workers) as pool:
            pending = {name: pool.apply_async(execute_and_report,
                                              (name, src, args, (nice or {}).get(name, 0)))
                       for name in names}
            while pending:
                finished = [name for name, result in pending.items() if result.ready()]
                for name in finished:
                    pending.pop(name).get()  # re-raises the notebook's error
                if not finished:
                    time.sleep(0.2)
    finally:
        if threads_set:
            del os.environ["OMP_NUM_THREADS"]


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


def build(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    output = args.output.resolve()
    stage = output / ".stage"
    if args.repository_url and not args.repository_url.startswith("https://"):
        raise BuildError(f"--repository-url must start with https://; got {args.repository_url!r}")
    src = stage_sources(stage, args.repository_url)
    results = stage / "results"
    os.environ[RESULTS_DIR_VARIABLE] = str(results)
    os.environ[BUILD_ID_VARIABLE] = uuid.uuid4().hex
    os.environ[BUILD_START_VARIABLE] = str(time.time())
    os.environ[FIGURES_DIR_VARIABLE] = str(src / "book" / "figures")

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
            execute_all(longest_first(seconds), src, args, jobs=args.jobs or len(part),
                        nice=nice_levels(seconds))
        else:
            execute_all(part, src, args, jobs=1)

    built = {"results": results, "notebooks": src / "notebooks", "figures": src / "book" / "figures"}
    if not args.only:
        print(f"[build] banner: {write_banner(src, results, args.profile)}", flush=True)
        print("[build] rendering the HTML", flush=True)
        built["html"] = render_html(src, stage)
    publish(built, output, merge=bool(args.only))
    shutil.rmtree(stage)
    print(f"[build] published {', '.join(built)} to {output}", flush=True)


def main() -> int:
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
