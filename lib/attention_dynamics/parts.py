"""A chapter's run in parts: its trainings split by seed over separate processes or machines,
merged before anything is judged.

A chapter that can run in parts declares its *units*: the independent trainings that cost most
of its time, each a :class:`Unit` (a name and a seed index) that its seeds alone determine. Its
module then offers

- ``units(chosen) -> list[Unit]``: every unit of a run at settings ``chosen``;
- ``unit_trainer(chosen, device, seed) -> Callable[[Unit], object]``: what trains one unit, the
  very function its ``run`` calls for it;
- ``run(results, chosen, device, seed, units=None)``: the whole experiment, which takes every
  unit from ``units`` (a :class:`Units`) and trains it in place without one.

:func:`run_part` trains the units of a range of seed indices (a :class:`SeedRange`) and writes
them, with the provenance of the run that made them, to a part file pair
``DIR/<chapter>.part-A-B.pt`` (the trained units) and ``.json`` (settings, library, machine,
times). A merge (:func:`load_parts`, then the chapter's ``run``) checks that the part files
of a folder were made at the same settings by the code it runs itself and together hold every
unit exactly once, then runs the chapter with its units taken from them: its results file is
the one a whole run writes, bit for bit (timings aside), and lists the parts it was merged from.

Unit files are pickles (``torch.save`` of models and their training records); load only part
files you made.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import torch

T = TypeVar("T")

PART_PATTERN = re.compile(r"^(?P<chapter>[a-z_]+)\.part-(?P<start>\d+)-(?P<stop>\d+)\.json$")
"""The name of a part's provenance file, ``<chapter>.part-<start>-<stop>.json``."""


@dataclass(frozen=True, order=True)
class Unit:
    """One training of a chapter: ``name`` says what is trained (e.g. ``"hmm/mamba"``) and
    ``index`` the position of its seed in the chapter's seed list (from 0)."""

    name: str
    index: int


@dataclass(frozen=True)
class SeedRange:
    """The seed indices ``start, ..., stop - 1`` of one part (half open, ``0 <= start < stop``).
    """

    start: int
    stop: int

    def __post_init__(self):
        if not (isinstance(self.start, int) and isinstance(self.stop, int)
                and 0 <= self.start < self.stop):
            raise ValueError(f"a seed range must be two integers 0 <= start < stop; got "
                             f"{self.start!r}:{self.stop!r}")

    @classmethod
    def parse(cls, text: str) -> SeedRange:
        """``"A:B"`` as the range ``A, ..., B - 1``; a ValueError says what is allowed."""
        match = re.fullmatch(r"\s*(\d+)\s*:\s*(\d+)\s*", text)
        if match is None:
            raise ValueError(f"a seed range is written START:STOP (seed indices, STOP "
                             f"excluded, e.g. 0:3); got {text!r}")
        return cls(int(match.group(1)), int(match.group(2)))

    def __contains__(self, index: int) -> bool:
        return self.start <= index < self.stop

    def __str__(self) -> str:
        return f"{self.start}:{self.stop}"

    @property
    def stem(self) -> str:
        """The part's file name without extension and chapter, ``part-<start>-<stop>``."""
        return f"part-{self.start}-{self.stop}"


class PartsError(ValueError):
    """Parts that cannot be run or merged as asked (the message says why and what to do)."""


class MissingUnitError(PartsError):
    """A merge needed a unit that no part file holds."""


class Units:
    """Where a chapter's run takes its units from: trained in place (no ``stored``), or taken
    from ``stored`` (``{unit: trained}``, read from part files), where a missing unit is an
    error that names it."""

    def __init__(self, stored: Mapping[Unit, object] | None = None):
        self.stored = dict(stored) if stored is not None else None

    def get(self, unit: Unit, train: Callable[[], T]) -> T:
        """``unit`` trained: from the stored units where there are some, else ``train()``."""
        if self.stored is None:
            return train()
        if unit not in self.stored:
            raise MissingUnitError(f"no part file holds unit {unit.name!r} of seed index "
                                   f"{unit.index}; run the part whose seed range covers "
                                   f"{unit.index}")
        return self.stored[unit]


def split_range(n_indices: int, n_parts: int) -> list[SeedRange]:
    """``n_indices`` seed indices in ``n_parts`` consecutive ranges as equal as can be (the
    first ones one longer); ``n_parts`` is at least 1 and at most ``n_indices``."""
    if not 1 <= n_parts <= n_indices:
        raise ValueError(f"n_parts must be between 1 and the number of seed indices "
                         f"({n_indices}); got {n_parts}")
    size, extra = divmod(n_indices, n_parts)
    ranges, start = [], 0
    for part in range(n_parts):
        stop = start + size + (part < extra)
        ranges.append(SeedRange(start, stop))
        start = stop
    return ranges


def seed_indices(units: list[Unit]) -> int:
    """The number of seed indices that ``units`` span (their largest index plus one)."""
    return max(unit.index for unit in units) + 1


def part_paths(directory: str | Path, chapter: str, seeds: SeedRange) -> tuple[Path, Path]:
    """The provenance (``.json``) and units (``.pt``) files of ``chapter``'s part ``seeds``."""
    base = f"{chapter}.{seeds.stem}"
    return Path(directory) / f"{base}.json", Path(directory) / f"{base}.pt"


def _write_atomically(path: Path, write: Callable[[Path], None]) -> None:
    """``write`` to a sibling ``.partial`` file, then move it onto ``path``."""
    partial = path.with_name(path.name + ".partial")
    write(partial)
    partial.replace(path)


PROVENANCE_FIELDS = ("notebook", "profile", "device", "seed", "date", "commit",
                     "library_fingerprint", "library_modules", "settings", "seeds_argument",
                     "versions")
"""What a part file records of its run, as a results file does (no metrics and no claims, since
a part judges nothing)."""

MUST_AGREE = ("notebook", "profile", "device", "seed", "settings")
"""The provenance fields on which every part of a merge, and the merge itself, agree; besides,
the code of every module a part ran is the code the merge runs, and its CPU dispatch was the
pin (:func:`part_problems`)."""


def run_part(module, results, chosen: dict, device: torch.device, seed: int,
             seeds: SeedRange) -> tuple[Path, Path]:
    """Train the units of ``module`` (a chapter module that runs in parts) whose seed index lies
    in ``seeds``, and write them and their provenance to :func:`part_paths` in
    ``results.directory``; return the two paths (provenance first).

    Args:
        module: the chapter module (its ``units`` and ``unit_trainer``).
        results: the run's :class:`~attention_dynamics.book.results.Results`, settings recorded;
            only its provenance is written.
        chosen: the chapter's settings.
        device: where the units train.
        seed: the chapter's base seed.
        seeds: the part's seed indices; a :class:`PartsError` where the settings have fewer.
    """
    every = module.units(chosen)
    if seeds.stop > (available := seed_indices(every)):
        raise PartsError(f"seed range {seeds} reaches beyond the {available} seed indices of "
                         f"these settings (0:{available})")
    started = time.perf_counter()
    train = module.unit_trainer(chosen, device, seed)
    trained = {unit: train(unit) for unit in every if unit.index in seeds}
    info_path, units_path = part_paths(results.directory, results.notebook, seeds)
    results.directory.mkdir(parents=True, exist_ok=True)
    _write_atomically(units_path, lambda path: torch.save(trained, path))
    content = {name: value for name, value in results.as_dict().items()
               if name in PROVENANCE_FIELDS}
    content |= {"seed_range": [seeds.start, seeds.stop],
                "units": [[unit.name, unit.index] for unit in sorted(trained)],
                "wall_time_s": round(time.perf_counter() - started, 3),
                "cpu_time_s": round(time.process_time(), 3)}
    _write_atomically(info_path, lambda path: path.write_text(
        json.dumps(content, indent=2, sort_keys=True) + "\n"))
    return info_path, units_path


def part_problems(content: Mapping, expected: Mapping) -> list[str]:
    """Why the part whose provenance is ``content`` cannot join a merge whose own provenance is
    ``expected``, in words (empty when it can): a field of :data:`MUST_AGREE` that differs, code
    changed since in a module the part ran, or a run without the CPU dispatch pin."""
    from attention_dynamics.book.provenance import changed_library_modules, dispatch_difference

    problems = [f"made with another {field} ({content.get(field)!r} against "
                f"{expected.get(field)!r})"
                for field in MUST_AGREE if content.get(field) != expected.get(field)]
    if "library_modules" not in content:
        problems.append("no record of the modules it ran")
    elif changed := changed_library_modules(content["library_modules"]):
        problems.append("code changed since it ran: " + ", ".join(changed))
    if expected.get("device") == "cpu" and (
            difference := dispatch_difference(content.get("versions", {}))) is not None:
        problems.append(difference)
    return problems


def find_parts(directory: str | Path, chapter: str) -> list[Path]:
    """The provenance files of ``chapter``'s parts in ``directory``, by seed range."""
    found = []
    for path in Path(directory).glob(f"{chapter}.part-*.json"):
        match = PART_PATTERN.match(path.name)
        if match and match.group("chapter") == chapter:
            found.append((int(match.group("start")), path))
    return [path for _, path in sorted(found)]


def load_parts(directory: str | Path, chapter: str, expected: Mapping,
               needed: list[Unit]) -> tuple[dict[Unit, object], list[dict]]:
    """Read ``chapter``'s part files in ``directory`` and check them for a merge.

    Args:
        directory: the folder of the part files.
        chapter: the chapter's name.
        expected: the merge's own provenance (as in a results file); every part must agree with
            it on :data:`MUST_AGREE`.
        needed: every unit the merge needs.

    Returns:
        The units by :class:`Unit`, and each part's summary (file, seed range, commit, date,
        machine, times) for the merged file's provenance.

    Raises:
        PartsError: no part file; a part made at other settings or by another library than the
            merge (naming the file and the field); a unit held twice; a needed unit in none.
    """
    paths = find_parts(directory, chapter)
    if not paths:
        raise PartsError(f"no part file of {chapter} in {directory} (expected "
                         f"{chapter}.part-START-STOP.json and .pt)")
    stored: dict[Unit, object] = {}
    summaries = []
    for path in paths:
        content = json.loads(path.read_text())
        if problems := part_problems(content, expected):
            raise PartsError(f"{path.name} cannot be merged here: {'; '.join(problems)}; "
                             f"rerun that part")
        trained = torch.load(path.with_name(path.name[:-len(".json")] + ".pt"),
                             weights_only=False)
        if twice := sorted(set(trained) & set(stored)):
            raise PartsError(f"{path.name} holds units that another part holds too: "
                             + ", ".join(f"{u.name} #{u.index}" for u in twice))
        stored |= trained
        versions = content.get("versions", {})
        summaries.append({"file": path.name, "seed_range": content["seed_range"],
                          "commit": content["commit"], "date": content["date"],
                          "cpu_model": versions.get("cpu_model"),
                          "cpu_features": versions.get("cpu_features"),
                          "wall_time_s": content["wall_time_s"],
                          "cpu_time_s": content["cpu_time_s"]})
    if missing := sorted(set(needed) - set(stored)):
        indices = sorted({unit.index for unit in missing})
        raise PartsError(f"the parts in {directory} lack the units of seed indices "
                         f"{', '.join(map(str, indices))}: run the parts that cover them")
    if extra := sorted(set(stored) - set(needed)):
        raise PartsError(f"the parts in {directory} hold units these settings do not have: "
                         + ", ".join(f"{u.name} #{u.index}" for u in extra))
    return stored, summaries
