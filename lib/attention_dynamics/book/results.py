"""The results file of a notebook: its measured numbers and how they were produced.

Each executed notebook (and each run of the command line) writes ``<results dir>/<notebook>.json``::

    {"notebook": ..., "profile": ..., "device": ..., "seed": ..., "wall_time_s": ...,
     "metrics": {name: number}, "timing_metrics": [names], "versions": {...}, "build_id": ...,
     "date": ..., "commit": ..., "library_fingerprint": ..., "library_modules": {...},
     "settings": {...}, "seeds_argument": ..., "claims": {key: fingerprint}}

``build_id`` names the book build that executed the notebook (``None`` for a run by hand), so
the report pages can refuse a results file left over from an earlier build. ``date``,
``commit``, ``library_modules``, ``settings`` and ``claims`` say when and from what it was
produced (:mod:`~attention_dynamics.book.provenance`), so that results kept with the sources (a
profile run once and committed, :func:`load_profile_results`) are flagged stale when what made
them has changed since, and only then. A file merged from parts
(:mod:`attention_dynamics.parts`) also lists them under ``"parts"``: each part's file, seed
range, commit, date, CPU and times.

Metrics listed in ``timing_metrics`` are machine-dependent (speeds, ratios of timings); every
other metric is a deterministic function of the profile, device and seed. Each recorded
metric is also glued (myst-nb) under the same name, so the book's prose shows the very number
that the file holds.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import torch
import yaml

from attention_dynamics.book.provenance import (
    changed_rules,
    claim_fingerprints,
    environment_versions,
    jsonable,
    library_fingerprint,
    loaded_library_modules,
    rules_reason,
    source_commit,
    stale_reasons,
)
from attention_dynamics.runtime import check_profile

RESULTS_DIR_VARIABLE = "ATTENTION_DYNAMICS_RESULTS"
BUILD_ID_VARIABLE = "ATTENTION_DYNAMICS_BUILD_ID"
BUILD_START_VARIABLE = "ATTENTION_DYNAMICS_BUILD_START"  # seconds since the epoch


def book_root() -> Path | None:
    """The nearest folder at or above the working directory that holds ``_toc.yml``, if any."""
    here = Path.cwd().resolve()
    return next((folder for folder in (here, *here.parents) if (folder / "_toc.yml").exists()),
                None)


def results_dir() -> Path:
    """Where results files go: ``$ATTENTION_DYNAMICS_RESULTS``, else ``<book root>/_build/results``.

    The book root is :func:`book_root`; outside a book, ``./_build/results``.
    """
    if os.environ.get(RESULTS_DIR_VARIABLE):
        return Path(os.environ[RESULTS_DIR_VARIABLE])
    return (book_root() or Path.cwd()) / "_build" / "results"


def current_build_id() -> str | None:
    """The identifier of the book build in progress (``$ATTENTION_DYNAMICS_BUILD_ID``), if any."""
    return os.environ.get(BUILD_ID_VARIABLE) or None


def _glue(name: str, value) -> None:
    """Glue ``value`` for the book when running under a Jupyter kernel; a no-op elsewhere."""
    if "ipykernel" not in sys.modules:
        return
    from myst_nb import glue

    glue(name, value, display=False)


class Results:
    """Collects one notebook's metrics and writes its results file.

    The wall clock starts when the object is created, so create it in the first code cell.

    Args:
        notebook: the notebook's name (the file stem), which names the JSON file.
        profile, device, seed: the notebook's parameters, recorded as they were resolved.
        directory: where to write; defaults to :func:`results_dir`.
    """

    def __init__(self, notebook: str, profile: str, device: str | torch.device, seed: int,
                 directory: str | Path | None = None):
        if not notebook or any(c in notebook for c in "/\\"):
            raise ValueError(f"notebook must be a plain file stem; got {notebook!r}")
        self.notebook = notebook
        self.profile = check_profile(profile)
        self.device = str(device)
        self.seed = seed
        self.directory = Path(directory) if directory is not None else results_dir()
        self.metrics: dict[str, float] = {}
        self.timing_metrics: list[str] = []
        self.settings: dict | None = None
        self.seeds_argument: int | None = None
        self.parts: list[dict] | None = None
        self._start = time.perf_counter()
        self._started_at = time.time()  # seconds since the epoch, for the modules' check

    def use_settings(self, settings: Mapping, seeds_argument: int | None = None) -> None:
        """Record the chapter's ``settings`` as resolved for this run, and the number of seeds
        asked for (``seeds_argument``; ``None``: the profile's), in the file's provenance."""
        self.settings = jsonable(dict(settings))
        self.seeds_argument = seeds_argument

    def record(self, name: str, value, timing: bool = False) -> float:
        """Store a finite number under ``name`` (and glue it); return it as a float.

        ``timing=True`` marks a machine-dependent number (a speed or a ratio of timings).
        Recording a name twice is an error, so no number is silently replaced.
        """
        if not name.isidentifier():
            raise ValueError(f"name must be an identifier-like metric name; got {name!r}")
        if name in self.metrics:
            raise ValueError(f"metric {name!r} was already recorded")
        number = float(value.item() if isinstance(value, torch.Tensor) else value)
        if not math.isfinite(number):
            raise ValueError(f"metric {name!r} must be finite; got {number}")
        self.metrics[name] = number
        if timing:
            self.timing_metrics.append(name)
        _glue(name, number)
        return number

    def record_all(self, values: Mapping[str, object], prefix: str = "") -> None:
        """:meth:`record` each ``prefix + name`` of ``values`` (e.g. a notebook's settings)."""
        for name, value in values.items():
            self.record(prefix + name, value)

    def record_seeds(self, name: str, values) -> np.ndarray:
        """Record each seed's value of ``name``: ``name_seed<i>`` for the ``i``-th of ``values``
        (one per seed, in seed order) and their number as ``name_n_seeds``, so that the report
        can judge a claim seed by seed and on each half of the seeds. Returns the values as a
        float64 array."""
        data = np.asarray(values.cpu() if isinstance(values, torch.Tensor) else values,
                          dtype=float)
        if data.ndim != 1 or data.size == 0:
            raise ValueError(f"values must be a non-empty 1-D sequence; got shape {data.shape}")
        for index, value in enumerate(data):
            self.record(f"{name}_seed{index}", value)
        self.record(f"{name}_n_seeds", data.size)
        return data

    def record_spread(self, name: str, values) -> tuple[float, float, float]:
        """Record the mean of ``values`` (one per seed) as ``name``, its extremes as
        ``name_min`` and ``name_max``, and each seed's value (:meth:`record_seeds`); return the
        mean and the extremes."""
        data = self.record_seeds(name, values)
        return (self.record(name, data.mean()), self.record(f"{name}_min", data.min()),
                self.record(f"{name}_max", data.max()))

    def as_dict(self) -> dict:
        """The results file's content."""
        return {
            "notebook": self.notebook,
            "profile": self.profile,
            "device": self.device,
            "seed": self.seed,
            "wall_time_s": round(time.perf_counter() - self._start, 3),
            "cpu_time_s": round(time.process_time(), 3),  # of the whole kernel, imports included
            "build_id": current_build_id(),
            "date": datetime.date.today().isoformat(),
            "commit": source_commit(),
            "library_fingerprint": library_fingerprint(),
            "library_modules": loaded_library_modules(since=self._started_at),
            "settings": self.settings,
            "seeds_argument": self.seeds_argument,
            "claims": claim_fingerprints(self.notebook),
            "metrics": self.metrics,
            "timing_metrics": self.timing_metrics,
            "versions": environment_versions(),
        } | ({"parts": self.parts} if self.parts is not None else {})

    def save(self) -> Path:
        """Write ``<directory>/<notebook>.json`` atomically and return its path."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / f"{self.notebook}.json"
        partial = path.with_suffix(".json.partial")
        partial.write_text(json.dumps(self.as_dict(), indent=2, sort_keys=True) + "\n")
        partial.replace(path)
        return path


def load_results(directory: str | Path | None = None) -> dict[str, dict]:
    """Every results file in ``directory`` (default :func:`results_dir`), keyed by notebook."""
    folder = Path(directory) if directory is not None else results_dir()
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}


PROFILE_RESULTS_DIR = "results"
"""The folder at the book's root that keeps results with the sources, one subfolder per profile
that was run once and committed (``results/decide``)."""


def load_profile_results(profile: str, root: str | Path | None = None) -> dict[str, dict]:
    """The committed results of ``profile`` (``<root>/results/<profile>/*.json``), keyed by
    notebook; empty if that profile's results were never committed. ``root`` defaults to
    :func:`book_root`. Each file gets ``"stale_reasons"``, why it is no longer what the library
    would make (:func:`~attention_dynamics.book.provenance.stale_reasons`; empty while it is
    current), ``"stale"``: whether a reason makes the whole file stale (its code, settings,
    CPU dispatch or records), and ``"stale_claims"``: the claims whose rule changed since it
    ran (:func:`~attention_dynamics.book.provenance.changed_rules`), whose rows alone it can
    no longer judge."""
    check_profile(profile)
    base = Path(root) if root is not None else (book_root() or Path.cwd())
    folder = base / PROFILE_RESULTS_DIR / profile
    found = load_results(folder) if folder.is_dir() else {}
    for content in found.values():
        whole_file = stale_reasons(content, rules=False)  # the library compared once
        content["stale_claims"] = changed_rules(content)
        content["stale"] = bool(whole_file)
        content["stale_reasons"] = whole_file + (
            [rules_reason(content["stale_claims"])] if content["stale_claims"] else [])
    return found


def load_build_results(expected: list[str], directory: str | Path | None = None) -> dict[str, dict]:
    """The results of the notebooks ``expected``, all from the build in progress.

    Raises a RuntimeError naming the notebooks whose results file is missing, or was written by
    another build than :func:`current_build_id` (a stale file).
    """
    found = load_results(directory)
    missing = [name for name in expected if name not in found]
    stale = [name for name in expected
             if name in found and found[name].get("build_id") != current_build_id()]
    if missing or stale:
        raise RuntimeError(f"results missing for {missing} and stale (from another build) for "
                           f"{stale} in {Path(directory) if directory else results_dir()}")
    return {name: found[name] for name in expected}


def _notebooks_below(node, found: list[str]) -> list[str]:
    """Append the ``notebooks/<name>`` entries below a node of ``_toc.yml`` to ``found``."""
    if isinstance(node, dict):
        entry = node.get("file")
        if isinstance(entry, str) and entry.startswith("notebooks/"):
            found.append(entry.removeprefix("notebooks/").removesuffix(".ipynb"))
        for value in node.values():
            _notebooks_below(value, found)
    elif isinstance(node, list):
        for item in node:
            _notebooks_below(item, found)
    return found


def book_notebooks(toc_path: str | Path) -> list[str]:
    """The notebooks of the book, in reading order: ``notebooks/<name>`` entries of ``_toc.yml``."""
    return _notebooks_below(yaml.safe_load(Path(toc_path).read_text()), [])


def notebooks_before(name: str) -> list[str]:
    """The notebooks that the book runs before ``name``, in reading order.

    Inside a book (:func:`book_root`) they come from its ``_toc.yml``; outside one (a
    downloaded notebook) they are the notebooks whose results files :func:`results_dir` holds,
    in name order, without ``name``: what a report can read there.
    """
    root = book_root()
    if root is None:
        return [found for found in load_results() if found != name]
    order = book_notebooks(root / "_toc.yml")
    return order[: order.index(name)] if name in order else order


def book_notebook_parts(toc_path: str | Path) -> list[list[str]]:
    """The notebooks of each part of ``_toc.yml`` (one list for a toc without parts).

    The build runs the first part's notebooks (the chapters, which are independent) side by
    side, then the later parts' (which read the chapters' results) one at a time.
    """
    toc = yaml.safe_load(Path(toc_path).read_text())
    parts = toc.get("parts") if isinstance(toc, dict) else None
    if not parts:
        return [book_notebooks(toc_path)]
    return [names for part in parts if (names := _notebooks_below(part, []))]
