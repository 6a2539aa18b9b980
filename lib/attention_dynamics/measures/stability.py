"""When a run reaches a bar and stays there: the first of its checkpoints from which every later
one meets the bar (a solve step), so that a model that touches the bar once and leaves it again
has not yet solved its task."""

from __future__ import annotations

from collections.abc import Mapping


def first_stable_step(meets: Mapping[int, bool]) -> int | None:
    """The first step (a key of ``meets``) from which every later step meets the bar too;
    ``None`` where the last step does not (or there is no step).

    >>> first_stable_step({0: False, 10: True, 20: False, 40: True, 80: True})
    40
    >>> first_stable_step({0: True, 10: False}) is None
    True
    """
    stable = None
    for step in sorted(meets, reverse=True):
        if not meets[step]:
            break
        stable = step
    return stable
