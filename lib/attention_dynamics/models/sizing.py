"""Parameter counts, and sizing a model to a target count (capacity-matched comparisons).

Paper I compares architectures at about the same number of parameters. :func:`match_parameters`
finds the integer size (a width, usually) whose model is closest to a target count::

    target = count_parameters(transformer)
    match = match_parameters(lambda d: Mamba(replace(config, d_model=d), torch.Generator()),
                             target)
    mamba = Mamba(replace(config, d_model=match.size), torch.Generator().manual_seed(seed))

``dataclasses.replace`` re-runs a config's checks but keeps every stored field: a field that
``__post_init__`` fills in from the varied one (the transformer's ``d_ff = 4 d_model`` when
given as ``None``) keeps its old value, so pass it explicitly in ``build``. (Mamba's default
``dt_rank`` is computed from ``d_model`` on use and follows.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from torch import nn

from attention_dynamics.validation import check_positive_int


def count_parameters(model: nn.Module) -> int:
    """Number of trainable scalars of ``model`` (a tied weight counted once)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


@dataclass(frozen=True)
class SizeMatch:
    """The size :func:`match_parameters` chose.

    Attributes:
        size: the chosen value of the size argument.
        n_parameters: the parameter count of the model of that size.
        target: the count that was asked for.
    """

    size: int
    n_parameters: int
    target: int

    @property
    def relative_error(self) -> float:
        """``(n_parameters - target) / target``."""
        return (self.n_parameters - self.target) / self.target


def match_parameters(build: Callable[[int], nn.Module], target: int, low: int = 1,
                     high: int = 1024, multiple_of: int = 1) -> SizeMatch:
    """The size in ``[low, high]``, a multiple of ``multiple_of``, whose model's count is nearest ``target``.

    Bisection over the allowed sizes, so the count must not decrease with the size (true of
    every width and depth of the book's models); about ``log2((high - low) / multiple_of)``
    models are built. Ties go to the smaller model.

    Args:
        build: maps a size to a model (its initialisation does not matter here).
        target: the wanted number of trainable parameters.
        low, high: the range of sizes to search.
        multiple_of: the step of allowed sizes (e.g. the number of heads for a width).

    Raises:
        ValueError: if ``target`` lies outside the counts of the smallest and largest
            allowed sizes.
    """
    for name, value in (("target", target), ("low", low), ("high", high),
                        ("multiple_of", multiple_of)):
        check_positive_int(name, value)
    first, last = -(-low // multiple_of), high // multiple_of  # allowed sizes k * multiple_of
    if first > last:
        raise ValueError(f"no multiple of multiple_of={multiple_of} lies in [low, high] = "
                         f"[{low}, {high}]")

    def count(k: int) -> int:
        return count_parameters(build(k * multiple_of))

    smallest, largest = count(first), count(last)
    if not smallest <= target <= largest:
        raise ValueError(f"target must lie between {smallest} and {largest} parameters (sizes "
                         f"{first * multiple_of}..{last * multiple_of}); got {target}")
    lo, hi = first, last  # invariant: count(lo) <= target <= count(hi)
    counts = {first: smallest, last: largest}
    while hi - lo > 1:
        mid = (lo + hi) // 2
        counts[mid] = count(mid)
        if counts[mid] <= target:
            lo = mid
        else:
            hi = mid
    best = lo if target - counts[lo] <= counts[hi] - target else hi
    return SizeMatch(size=best * multiple_of, n_parameters=counts[best], target=target)
