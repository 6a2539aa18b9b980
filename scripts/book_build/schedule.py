"""How the chapters' notebooks share the CPUs: expected times, start order and nice levels."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

CPU_SECONDS_HINT = {"content_routing": 600.0, "manifold_formation": 500.0, "em_reading": 400.0}
"""CPU seconds of the heaviest chapters in a quick build, for when no earlier build says (a
scheduling hint); any other notebook counts as :data:`DEFAULT_CPU_SECONDS`."""
DEFAULT_CPU_SECONDS = 30.0
NICE_STEP = 1.25
"""Linux gives a process (or an autogroup) about 1.25 times the CPU share of one at the next
higher nice level."""


def available_cpus() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


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
