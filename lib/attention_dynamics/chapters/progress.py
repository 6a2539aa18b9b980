"""Progress of a chapter's training runs, shown by the command line and silent elsewhere.

A chapter module wraps each training run in :func:`training_run`; it yields ``advance``, which
takes the number of steps done (and ignores any further arguments, so that it can be passed as
an ``on_checkpoint`` callback). Nothing is shown until :func:`show_progress` is called, so that
a notebook's page stays free of progress bars.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from tqdm import tqdm

_stream: TextIO | None = None


def show_progress(stream: TextIO | None = sys.stderr) -> None:
    """Show a bar per training run on ``stream`` from now on (``None``: show nothing)."""
    global _stream
    _stream = stream


@contextmanager
def training_run(label: str, steps: int) -> Iterator[Callable[..., None]]:
    """A bar of ``steps`` steps named ``label`` while the block runs (when shown).

    Yields ``advance(step, *ignored)``, which moves the bar to ``step`` (steps done, at most
    ``steps``); the bar is completed when the block ends without an error.
    """
    if steps < 0:
        raise ValueError(f"steps must be non-negative; got {steps}")
    if _stream is None:
        yield lambda step, *ignored: None
        return
    bar = tqdm(total=steps, desc=label, unit="step", file=_stream, leave=True,
               dynamic_ncols=True)

    def advance(step: int, *ignored) -> None:
        bar.update(max(0, min(step, steps) - bar.n))

    try:
        yield advance
        advance(steps)
    finally:
        bar.close()
