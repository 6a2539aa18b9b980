"""When a trajectory settles, against an end state that still jitters.

A run trained at a constant rate, or on fresh data, does not come to rest: its last record is
one draw of a state that keeps moving around where it has settled. Its end state is the mean
of an end window, and a record counts as settled once its distance to that state stays within
the end window's own jitter (or a tenth of the starting distance, where the end is still).
"""

from __future__ import annotations

import torch

from attention_dynamics.measures.trajectories import settling_step
from attention_dynamics.validation import check_float_tensor


def jitter_aware_settling_step(steps: torch.Tensor, remaining: torch.Tensor, in_end: torch.Tensor,
                               level: float = 0.1) -> torch.Tensor:
    """Per run, the first snapshot step from which ``remaining`` stays within the larger of
    ``level`` and the end window's own jitter (the largest ``remaining`` of the snapshots in
    ``in_end``), for a run whose end state is the mean of its end window, so that no snapshot
    sits on it: a run still moving a little at its end settles where it enters that band, not
    at its last snapshot.

    Args:
        steps: ``(M,)`` snapshot steps.
        remaining: ``(M, R)`` the distance to the end state over the distance at the start.
        in_end: ``(M,)`` bool, the snapshots of the end window (at least one).
        level: the fraction of the initial distance that counts as settled, in ``(0, 1)``.

    Returns:
        ``(R,)`` int64 steps.
    """
    check_float_tensor("remaining", remaining, min_dim=2, max_dim=2)
    if in_end.shape != remaining.shape[:1] or in_end.dtype != torch.bool or not in_end.any():
        raise ValueError(f"in_end must be a bool tensor of shape ({remaining.shape[0]},) with at "
                         f"least one True; got {in_end.dtype} of shape {tuple(in_end.shape)}")
    threshold = remaining[in_end].max(dim=0).values.clamp_min(level)  # (R,)
    return settling_step(steps, level * remaining / threshold, level)
