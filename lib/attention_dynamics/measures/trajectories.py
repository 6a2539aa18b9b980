"""Following quantities through training: snapshots, when a series first crosses a level,
when it settles, and the shape of a path.

- :class:`TrajectoryRecorder` keeps detached snapshots of named tensors every few steps;
- :func:`first_step_where`, :func:`first_step_below`, :func:`first_step_staying` and
  :func:`settling_step` read a recorded series, :func:`relative_fall` whether it still falls;
- :func:`path_summary` describes the path of a point (e.g. a value vector) over training.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from attention_dynamics.validation import check_float_tensor, check_positive_int


@dataclass
class TrajectoryRecorder:
    """Keeps snapshots of named tensors every ``every`` steps (always including step 0).

    Call :meth:`maybe_record` at each step with the tensors to keep; read back with
    :meth:`stack`, which returns ``(S, ...)`` for ``S`` snapshots, and ``steps``.
    Snapshots are detached clones, so later in-place updates do not alter them.
    """

    every: int = 1
    steps: list[int] = field(default_factory=list)
    snapshots: dict[str, list[torch.Tensor]] = field(default_factory=dict)

    def __post_init__(self):
        check_positive_int("every", self.every)

    def due(self, step: int) -> bool:
        """Whether ``step`` is a recording step."""
        return step % self.every == 0

    def record(self, step: int, **tensors: torch.Tensor) -> None:
        """Store a snapshot of every named tensor at ``step`` (steps must increase)."""
        if self.steps and step <= self.steps[-1]:
            raise ValueError(f"step must increase; got {step} after {self.steps[-1]}")
        if self.snapshots and set(tensors) != set(self.snapshots):
            raise ValueError(f"record the same names each time: {sorted(self.snapshots)}; got "
                             f"{sorted(tensors)}")
        self.steps.append(step)
        for name, value in tensors.items():
            self.snapshots.setdefault(name, []).append(value.detach().clone())

    def maybe_record(self, step: int, **tensors: torch.Tensor) -> bool:
        """Record when :meth:`due`; return whether it did."""
        if self.due(step):
            self.record(step, **tensors)
            return True
        return False

    def stack(self, name: str) -> torch.Tensor:
        """All snapshots of ``name`` stacked along a new first dimension: ``(S, ...)``."""
        if name not in self.snapshots:
            raise ValueError(f"name must be one of {sorted(self.snapshots)}; got {name!r}")
        return torch.stack(self.snapshots[name])

    @property
    def step_tensor(self) -> torch.Tensor:
        """The recorded steps as a long tensor ``(S,)``."""
        return torch.tensor(self.steps, dtype=torch.long)


def first_step_where(steps: torch.Tensor, condition: torch.Tensor,
                     never: int | None = None) -> list[int | None]:
    """Per run, the first of ``steps`` at which ``condition`` holds.

    Args:
        steps: ``(K,)`` the record steps.
        condition: ``(K, R)`` bool, one column per run.
        never: what a run whose condition never holds gets (``None``; or e.g. the number of
            steps trained, to count such a run as reaching it only at the end).

    Returns:
        ``R`` ints (or ``never``).
    """
    if condition.dtype != torch.bool or condition.ndim != 2 or condition.shape[0] != len(steps):
        raise ValueError(f"condition must be a ({len(steps)}, R) bool tensor; got "
                         f"{condition.dtype} {tuple(condition.shape)}")
    first = condition.int().argmax(dim=0)
    return [int(steps[i]) if condition[i, r] else never for r, i in enumerate(first.tolist())]


def first_step_below(steps: torch.Tensor, series: torch.Tensor,
                     threshold: float | torch.Tensor, never: int | None = None
                     ) -> list[int | None]:
    """Per run, the first of ``steps`` ``(K,)`` at which ``series`` ``(K, R)`` is below
    ``threshold`` (a number or one per run, ``(R,)``); ``never`` (default ``None``) where it
    never is."""
    below = series < torch.as_tensor(threshold, dtype=series.dtype, device=series.device)
    return first_step_where(steps, below, never)


def first_step_staying(steps: torch.Tensor, condition: torch.Tensor,
                       never: int | None = None) -> list[int | None]:
    """Per run, the first of ``steps`` from which ``condition`` holds at every later record.

    Args:
        steps: ``(K,)`` the record steps.
        condition: ``(K, R)`` bool, one column per run.
        never: what a run gets whose condition fails at the last record (so never holds for
            good); ``None`` by default.

    Returns:
        ``R`` ints (or ``never``): e.g. the step from which a mean stays above a level.
    """
    if condition.dtype != torch.bool or condition.ndim != 2:
        raise ValueError(f"condition must be a (K, R) bool tensor; got {condition.dtype} "
                         f"{tuple(condition.shape)}")
    for_good = condition.flip(0).int().cumprod(0).flip(0).bool()  # holds here and after
    return first_step_where(steps, for_good, never)


@dataclass(frozen=True)
class PathSummary:
    """Shape measures of paths through ``d`` dimensions (``...`` is the batch shape).

    Attributes:
        length: ``(...)``, the sum of the step lengths ``sum_s |p_{s+1} - p_s|``.
        displacement: ``(...)``, ``|p_last - p_first|``.
        straightness: ``(...)``, ``displacement / length`` in ``[0, 1]``; ``nan`` for a path
            that never moves.
        persistence: ``(...)``, the mean over consecutive step pairs of the cosine between
            them, in ``[-1, 1]`` (pairs with a zero step are left out; ``nan`` if none is left).
    """

    length: torch.Tensor
    displacement: torch.Tensor
    straightness: torch.Tensor
    persistence: torch.Tensor


def path_summary(points: torch.Tensor) -> PathSummary:
    """Length, displacement, straightness and persistence of paths, in float64.

    Args:
        points: ``(S, ..., d)``, the position of each path at ``S >= 3`` snapshots, in order;
            the dimensions between the first and the last index independent paths.
    """
    check_float_tensor("points", points, min_dim=2)
    if points.shape[0] < 3:
        raise ValueError(f"points must hold at least 3 snapshots along dim 0 (two steps, for "
                         f"the persistence); got {points.shape[0]}")
    data = points.double()
    steps = data.diff(dim=0)                                      # (S - 1, ..., d)
    step_norms = steps.norm(dim=-1)
    length = step_norms.sum(dim=0)
    displacement = (data[-1] - data[0]).norm(dim=-1)
    straightness = torch.where(length > 0, displacement / length, torch.nan)
    products = (steps[1:] * steps[:-1]).sum(dim=-1)
    norms = step_norms[1:] * step_norms[:-1]
    moving = norms > 0
    cosines = torch.where(moving, products / norms.clamp_min(1e-300), 0.0)
    persistence = cosines.sum(dim=0) / moving.sum(dim=0)          # nan where none moves
    return PathSummary(length=length, displacement=displacement, straightness=straightness,
                       persistence=persistence)


def settling_step(steps: torch.Tensor, remaining: torch.Tensor, level: float = 0.1
                  ) -> torch.Tensor:
    """Per run, the first snapshot step from which ``remaining`` stays at or below ``level``.

    Args:
        steps: ``(M,)`` snapshot steps.
        remaining: ``(M, R)`` a distance to the final state relative to the initial one (e.g.
            :class:`~attention_dynamics.sticky.analysis.FramePrecision`'s ``*_remaining``);
            its last row is 0.
        level: the fraction of the initial distance that counts as settled, in ``(0, 1)``.

    Returns:
        ``(R,)`` int64 steps (the last snapshot's step if only the end is within ``level``).
    """
    check_float_tensor("remaining", remaining, min_dim=2, max_dim=2)
    if steps.shape != remaining.shape[:1]:
        raise ValueError(f"steps must have shape ({remaining.shape[0]},) to match remaining; "
                         f"got {tuple(steps.shape)}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1); got {level!r}")
    above = remaining > level
    # index of the last snapshot above the level, plus one (0 if none is above)
    index = torch.arange(1, len(steps) + 1).unsqueeze(1)
    first_settled = torch.where(above, index, 0).max(dim=0).values
    return steps[first_settled.clamp(max=len(steps) - 1)]


def relative_fall(series: torch.Tensor, fraction: float = 0.1) -> torch.Tensor:
    """How much a series (a training loss, say) still fell at the end of training.

    The mean over the last ``fraction`` of the records against the mean over the window just
    before it: ``(before - last) / |before|``. Averaging over a window makes it usable on the
    noisy loss of online training.

    Args:
        series: ``(K,)`` or ``(K, R)`` records in step order (``R`` runs).
        fraction: the window's share of the records, in ``(0, 0.5]``.

    Returns:
        ``()`` or ``(R,)``: positive while the series still falls (0.05 = fell 5 %).
    """
    check_float_tensor("series", series, min_dim=1, max_dim=2)
    if not 0 < fraction <= 0.5:
        raise ValueError(f"fraction must lie in (0, 0.5]; got {fraction!r}")
    window = max(1, round(series.shape[0] * fraction))
    if 2 * window > series.shape[0]:
        raise ValueError(f"series must have at least {2 * window} records; got {series.shape[0]}")
    last = series[-window:].mean(dim=0)
    before = series[-2 * window:-window].mean(dim=0)
    return (before - last) / before.abs()
