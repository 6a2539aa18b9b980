"""Executing the notebooks: jupytext converts each, papermill runs it, side by side or in turn."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

from book_build import KERNEL, ROOT, BuildError
from book_build.schedule import available_cpus
from book_build.tidy import PageFigure, tidy_executed_notebook


class ProgressLines:
    """A file for papermill's progress bar that prints each new state on a line of its own:
    notebooks side by side then report as ``[build] notebooks/<name>: 12/40 cells, 01:23``."""

    def __init__(self):
        self.last = ""

    def write(self, text: str) -> None:
        """Print ``text`` unless it repeats the last state (the elapsed time aside)."""
        line = text.replace("\r", "").strip()
        if line and line.split(",")[0] != self.last:
            print(line, flush=True)
            self.last = line.split(",")[0]

    def flush(self) -> None:
        """Nothing to flush: every line is printed as it comes."""


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


def execute_notebook(name: str, src: Path, args: argparse.Namespace, figures: dict[str, PageFigure],
                     nice: int = 0) -> float:
    """Convert ``notebooks/<name>.py`` to ``.ipynb`` in ``src``, execute it and tidy it for its
    page (:func:`~book_build.tidy.tidy_executed_notebook` with ``figures``); return seconds.

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
        for attempt in range(1, KERNEL_STARTS + 1):
            try:
                papermill.execute_notebook(
                    str(target), str(target),
                    parameters={"profile": args.profile, "device": args.device, "seed": args.seed},
                    kernel_name=kernel, language="python", cwd=str(target.parent),
                    progress_bar=progress, execution_timeout=args.timeout,
                    # the kernel application's own log stays quiet (its notice about unencrypted
                    # local TCP, the interrupt jupyter_client sends at shutdown); cell errors
                    # still fail the build
                    extra_arguments=["--IPKernelApp.log_level=CRITICAL"],
                )
                break
            except RuntimeError as err:  # the kernel died before it ran a cell: start another
                if not kernel_never_started(err) or attempt == KERNEL_STARTS:
                    raise
                print(f"[build] notebooks/{name}: its kernel died at start ({err}); starting "
                      f"another ({attempt + 1} of {KERNEL_STARTS})", flush=True)
                jupytext.write(jupytext.read(source), target)
    except PapermillExecutionError as err:
        raise BuildError(f"notebook {name} failed in cell {err.cell_index} "
                         f"(execution count {err.exec_count}): {err.ename}: {err.evalue}\n"
                         f"the partly executed notebook is {target}") from err
    tidy_executed_notebook(target, figures)
    return time.perf_counter() - start


KERNEL_STARTS = 3
"""How many kernels a notebook may start before its build fails: a kernel that dies before it
runs a cell (two kernels starting at once can race for one free TCP port) is replaced."""


def kernel_never_started(error: BaseException) -> bool:
    """Whether ``error`` says that a notebook's kernel died before it answered its first request
    (nbclient's words), so that no cell of the notebook ran.

    >>> kernel_never_started(RuntimeError("Kernel died before replying to kernel_info"))
    True
    >>> kernel_never_started(RuntimeError("division by zero"))
    False
    """
    return "before replying to kernel_info" in str(error) or "Kernel didn't respond" in str(error)


def execute_and_report(name: str, src: Path, args: argparse.Namespace, figures: dict[str, PageFigure],
                       nice: int = 0) -> None:
    """:func:`execute_notebook`, with a line before and after on standard output.

    With ``nice`` > 0 the notebook's kernel runs at that nice level.
    """
    print(f"[build] executing notebooks/{name} (profile {args.profile}, device {args.device}, "
          f"seed {args.seed})", flush=True)
    seconds = execute_notebook(name, src, args, figures, nice)
    print(f"[build] notebooks/{name} done in {seconds:.1f} s", flush=True)


def execute_all(names: list[str], src: Path, args: argparse.Namespace, figures: dict[str, PageFigure],
                jobs: int, nice: dict[str, int] | None = None) -> None:
    """Execute ``names``, ``jobs`` at a time in worker processes; stop at the first failure.

    ``figures`` are what the chapter pages give each figure (:func:`~book_build.tidy.page_figures`);
    ``nice`` gives the nice level of a notebook's kernel (default 0).

    A failure raises its :class:`BuildError` here as soon as it happens; leaving the pool
    terminates the notebooks still running. Side by side, each kernel gets an equal share of
    the CPUs as its thread count (``OMP_NUM_THREADS``, unless that is set already).
    """
    if jobs == 1 or len(names) < 2:
        for name in names:
            execute_and_report(name, src, args, figures)
        return
    workers = min(jobs, len(names))
    # the kernels share the CPUs: without a cap, each would start one thread per CPU
    threads_set = "OMP_NUM_THREADS" not in os.environ
    if threads_set:
        os.environ["OMP_NUM_THREADS"] = str(max(1, available_cpus() // workers))
    try:
        with multiprocessing.Pool(workers) as pool:
            pending = {name: pool.apply_async(execute_and_report,
                                              (name, src, args, figures,
                                               (nice or {}).get(name, 0)))
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
