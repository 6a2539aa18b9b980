"""One set-up call at the top of every notebook.

:func:`setup_notebook` does what every notebook of the book needs before its first
computation, so that the policy is the same everywhere: the device resolved, every random
number generator seeded, the results file opened (its wall clock starts), the figure style
and the tables' number format set, and one CPU thread.

One thread because the book's models and problems are small: on the two-core machines the
book is built on, threads mostly wait for each other at every small operation (and stall when
the build runs two notebooks side by side), and a single thread fixes the order of
floating-point sums, so that a seed fixes every number. With the CPU dispatch pinned
(:mod:`attention_dynamics.dispatch`) it fixes it on every x86-64 machine with AVX2; a run whose
dispatch is not pinned says so with a warning.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

import torch

from attention_dynamics.book.formatting import format_number, use_reader_number_format
from attention_dynamics.book.plotting import use_book_style
from attention_dynamics.book.results import Results, _glue
from attention_dynamics.dispatch import dispatch_state, unpinned_warning
from attention_dynamics.runtime import resolve_device, seed_everything


class NotebookSetup(NamedTuple):
    """What :func:`setup_notebook` returns; unpack it as ``device, generator, results``."""

    device: torch.device
    generator: torch.Generator
    results: Results


def setup_notebook(notebook: str, profile: str, device: str, seed: int) -> NotebookSetup:
    """Prepare a notebook run from its papermill parameters.

    Args:
        notebook: the notebook's file stem (it names the results file).
        profile: ``"quick"`` or ``"paper"``.
        device: ``"auto"``, ``"cpu"`` or ``"cuda"``.
        seed: a non-negative int; seeds Python, NumPy and torch, and the returned generator.

    Returns:
        The resolved device, a generator on it seeded with ``seed``, and the notebook's
        :class:`~attention_dynamics.book.results.Results`.
    """
    resolved = resolve_device(device)
    generator = seed_everything(seed, resolved)
    results = Results(notebook, profile, resolved, seed)
    use_book_style()
    use_reader_number_format()
    if resolved.type == "cpu":
        torch.set_num_threads(1)
        if (warning := unpinned_warning(dispatch_state())) is not None:
            warnings.warn(warning, RuntimeWarning, stacklevel=2)
    return NotebookSetup(resolved, generator, results)


def chapter_settings(chapter: object, profile: str, results: Results,
                     settings_file: str | Path | None = None, seeds: int | None = None) -> dict:
    """The settings a chapter's experiment runs with, recorded in ``results``'s provenance.

    ``chapter`` is a chapter module (:mod:`attention_dynamics.chapters`). Its
    ``settings(profile, n_seeds=seeds)``, or, with ``settings_file``, the
    JSON object that file holds (a run at other settings than a profile's, e.g. the tests'
    tiny ones). The notebook and the command line both call this and then the chapter's
    ``run``, so that they run one experiment.

    Raises:
        ValueError: ``settings_file`` is missing or does not hold a JSON object, or it is given
            together with ``seeds``.
    """
    if settings_file is None:
        chosen = chapter.settings(profile, n_seeds=seeds)
    else:
        if seeds is not None:
            raise ValueError("seeds must be None when settings_file is given (the file sets them)")
        path = Path(settings_file)
        if not path.is_file():
            raise ValueError(f"settings_file must name a JSON file; {path} does not exist")
        chosen = json.loads(path.read_text())
        if not isinstance(chosen, dict):
            raise ValueError(f"settings_file must hold a JSON object; {path} holds "
                             f"{type(chosen).__name__}")
    results.use_settings(chosen, seeds)
    return chosen


def glue_each(values: Mapping[str, object]) -> None:
    """Glue each of ``values`` (phrases, tables, figures that a chapter page places) under its
    name, without displaying it; a no-op outside a Jupyter kernel."""
    for name, value in values.items():
        _glue(name, value)


def glue_as_text(results: Results, names: list[str], digits: int = 2) -> None:
    """Glue each recorded metric of ``names`` as text, ``<name>_text``, written as a reader
    reads it (:func:`~attention_dynamics.book.formatting.format_number`: a power of ten as
    ``4.4 × 10⁻¹⁶``, never e-notation), for a page that quotes a very small or large number."""
    glue_each({f"{name}_text": format_number(results.metrics[name], digits) for name in names})
