"""When a trajectory settles, against an end state that still jitters.

A run trained at a constant rate, or on fresh data, does not come to rest: its last record is
one draw of a state that keeps moving around where it has settled. Its end state is the mean
of an end window, and a record counts as settled once its distance to that state stays within
the end window's own jitter (or a tenth of the starting distance, where the end is still).

Within the end window every record is within that band by construction (the band is the
window's largest distance), so a run still drifting when its window begins would "settle"
exactly there, wherever the window lies: its settling step would follow the length of the run,
not its dynamics. A run therefore settles only if it is seen at rest *before* its end window:
inside the band over a stretch before the window at least as long as the window itself (so
that the test scales with the run, and a run that drifts into the band just before the window
does not pass). One that is not has not settled (:func:`has_settled`), and its step is
reported as its last record's, so that in any order of settling it comes after every part that
did settle and is never first.
"""

from __future__ import annotations

import torch

from attention_dynamics.measures.trajectories import settling_step
from attention_dynamics.validation import check_float_tensor


def _check_end(remaining: torch.Tensor, in_end: torch.Tensor) -> None:
    if in_end.shape != remaining.shape[:1] or in_end.dtype != torch.bool or not in_end.any():
        raise ValueError(f"in_end must be a bool tensor of shape ({remaining.shape[0]},) with at "
                         f"least one True; got {in_end.dtype} of shape {tuple(in_end.shape)}")


def jitter_aware_settling_step(steps: torch.Tensor, remaining: torch.Tensor, in_end: torch.Tensor,
                               level: float = 0.1) -> torch.Tensor:
    """Per run, the first snapshot step from which ``remaining`` stays within the larger of
    ``level`` and the end window's own jitter (the largest ``remaining`` of the snapshots in
    ``in_end``), for a run whose end state is the mean of its end window, so that no snapshot
    sits on it: a run that jitters around where it came to rest settles where it enters that
    band, not at its last snapshot.

    Only a run that stays in the band from a step at least one end window's span (its last step
    minus its first) before the end window begins has settled: every record of the window is
    inside the band by construction, so a run still drifting enters it at the window, or just
    before it, wherever the window lies. A run that has not settled gets the step of its last
    snapshot, which no settled run gets: it comes after every settled run in an order, and
    :func:`has_settled` tells it apart.

    Args:
        steps: ``(M,)`` snapshot steps, increasing.
        remaining: ``(M, R)`` the distance to the end state over the distance at the start.
        in_end: ``(M,)`` bool, the snapshots of the end window (at least one).
        level: the fraction of the initial distance that counts as settled, in ``(0, 1)``.

    Returns:
        ``(R,)`` int64 steps: the settling step, or the last snapshot's step for a run that has
        not settled before its end window.
    """
    check_float_tensor("remaining", remaining, min_dim=2, max_dim=2)
    _check_end(remaining, in_end)
    threshold = remaining[in_end].max(dim=0).values.clamp_min(level)  # (R,)
    settled = settling_step(steps, level * remaining / threshold, level)
    return torch.where(_before_end(settled, steps, in_end), settled, steps[-1])


def _before_end(settle_steps: torch.Tensor, steps: torch.Tensor, in_end: torch.Tensor
                ) -> torch.Tensor:
    """Whether each step lies before the end window by at least the window's span."""
    start = steps[in_end].min()
    span = steps[in_end].max() - start
    return (settle_steps <= start - span) & (settle_steps < start)


def has_settled(settle_steps: torch.Tensor, steps: torch.Tensor, in_end: torch.Tensor
                ) -> torch.Tensor:
    """``(R,)`` bool: which of ``settle_steps`` (from :func:`jitter_aware_settling_step` on the
    same ``steps`` and ``in_end``) mark a run that settled: in the band from at least the end
    window's span before the window begins."""
    if in_end.shape != steps.shape or in_end.dtype != torch.bool or not in_end.any():
        raise ValueError(f"in_end must be a bool tensor of shape {tuple(steps.shape)} with at "
                         f"least one True; got {in_end.dtype} of shape {tuple(in_end.shape)}")
    return _before_end(settle_steps, steps, in_end)
