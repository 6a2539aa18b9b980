"""Wall-clock timing for side-by-side comparisons (medians of repeats, CUDA-synchronised)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch


def median_seconds(fn: Callable[[], object], repeats: int = 5, warmup: int = 1) -> float:
    """Median wall time of ``fn()`` over ``repeats`` calls after ``warmup`` calls, in seconds."""
    if repeats < 1 or warmup < 0:
        raise ValueError(f"repeats must be >= 1 and warmup >= 0; got {repeats}, {warmup}")
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def interleaved_median_seconds(fns: dict[str, Callable[[], object]], repeats: int = 5,
                               warmup: int = 1, number: int = 1) -> dict[str, float]:
    """Median wall time of one call of each of ``fns`` in seconds, timed in turns.

    Each round times ``number`` calls of every function in a row, in order, so that a change
    in the machine's load during the measurement falls on all of them alike and cancels in
    their ratios; a ``number`` above one spreads the clock's resolution and the scheduler's
    jitter over several calls of a function that lasts a millisecond or so.
    """
    if repeats < 1 or warmup < 0 or number < 1:
        raise ValueError(f"repeats and number must be >= 1 and warmup >= 0; got repeats="
                         f"{repeats}, warmup={warmup}, number={number}")
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            sync()
            start = time.perf_counter()
            for _ in range(number):
                fn()
            sync()
            times[name].append((time.perf_counter() - start) / number)
    return {name: statistics.median(values) for name, values in times.items()}
