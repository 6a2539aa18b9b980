"""The value manifold measured under each protocol found in the papers' code, with a null.

Paper I reports that final-layer representations lie on a low-dimensional manifold whose first
principal axis is ordered by the posterior entropy. How much of that one sees depends on where
and how one looks; the authors' scripts (``../shared/papers/PROTOCOLS.md``) differ from each
other and from this book's first measurement. :func:`manifold_protocols` computes all of them on
one forward pass:

- ``"scored, after final norm"`` — the normed stream the head reads, at the scored positions,
  pooled over sequences (this book's first protocol);
- ``"value positions, before final norm"`` — the last residual stream at the value positions,
  pooled (one of the authors' printing scripts);
- ``"value positions, standardised"`` — the same points with every feature scaled to unit
  variance before the PCA (the authors' ``analyze_value_manifold``);
- ``"value positions, best of PC1-5"`` — the component among the first five with the largest
  ``|Pearson|`` with the entropy (one of the authors' correlation scripts);
- ``"one sequence at a time"`` — a PCA per sequence over its scored positions, averaged.

For each: the variance share of the axis used, its correlation with the Bayes entropy
(``|Spearman|``, or ``|Pearson|`` for the best-of-five protocol), and two position references:
the same correlation for a coordinate that knows only the position (the entropy averaged over
sequences at that position), and the correlation left after removing each position's mean
(``nan`` when the entropy is a function of the position, as in bijections without replacement).

:func:`best_pc_beyond_position` gives the best-of-five protocol's correlation beyond position a
null distribution, by shuffling the entropies across sequences within each position.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attention_dynamics.measures.geometry import (
    best_pc_pearson,
    manifold_summary,
    pca,
    pearson,
    per_sequence_manifolds,
    spearman,
    within_group_correlation,
)
from attention_dynamics.validation import check_float_tensor, check_positive_int

PROTOCOLS = ("scored, after final norm", "value positions, before final norm",
             "value positions, standardised", "value positions, best of PC1-5",
             "one sequence at a time")
"""The protocols of :func:`manifold_protocols`, in the order of the module docstring."""


@dataclass(frozen=True)
class ProtocolResult:
    """One protocol's numbers (floats; correlations are absolute values).

    Attributes:
        share: variance share of the axis the protocol reads (PC1, or the chosen component).
        component: 1-based index of that axis.
        correlation: its correlation with the Bayes entropy.
        position_alone: the same correlation for the position's average entropy.
        beyond_position: the correlation after removing each position's mean (``nan`` when the
            entropy does not vary within a position, or for the per-sequence protocol).
    """

    share: float
    component: int
    correlation: float
    position_alone: float
    beyond_position: float


def _pooled(points: torch.Tensor, entropy: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Flatten ``(B, P, d)`` and ``(B, P)`` with the position index of every row."""
    positions = torch.arange(entropy.shape[1], device=entropy.device).expand_as(entropy)
    return points.flatten(0, 1), entropy.double().flatten(), positions.flatten()


def _position_mean(entropy: torch.Tensor) -> torch.Tensor:
    """``(B, P)``: each entry replaced by the mean entropy of its position over sequences."""
    return entropy.double().mean(0, keepdim=True).expand_as(entropy)


def _beyond(coordinate: torch.Tensor, entropy: torch.Tensor, positions: torch.Tensor) -> float:
    value = within_group_correlation(coordinate, entropy, positions)
    return abs(value)


def manifold_protocols(before_norm: torch.Tensor, after_norm: torch.Tensor,
                       scored_positions: torch.Tensor, scored_entropy: torch.Tensor,
                       value_positions: torch.Tensor, value_entropy: torch.Tensor
                       ) -> dict[str, ProtocolResult]:
    """Every protocol of :data:`PROTOCOLS` on one batch of representations.

    Args:
        before_norm, after_norm: ``(B, T, d)`` the last residual stream before and after the
            final norm (:func:`~attention_dynamics.measures.representations.final_streams`).
        scored_positions: ``(P,)`` int64 positions where the model is scored.
        scored_entropy: ``(B, P)`` Bayes entropy (bits) at those positions.
        value_positions: ``(P_v,)`` int64 positions of the value tokens (for a task without
            separate value tokens, the scored positions again).
        value_entropy: ``(B, P_v)`` the Bayes entropy (bits) attached to each value position
            (for bijections, that of the next key, once the pair is revealed).

    Returns:
        Protocol name -> :class:`ProtocolResult`.
    """
    check_float_tensor("before_norm", before_norm, min_dim=3, max_dim=3)
    check_float_tensor("after_norm", after_norm, min_dim=3, max_dim=3)
    if before_norm.shape != after_norm.shape:
        raise ValueError("before_norm and after_norm must have the same shape (B, T, d)")
    batch = before_norm.shape[0]
    for name, positions, entropy in (("scored", scored_positions, scored_entropy),
                                     ("value", value_positions, value_entropy)):
        if positions.ndim != 1 or tuple(entropy.shape) != (batch, positions.numel()):
            raise ValueError(f"{name}_entropy must have shape (B, P) = ({batch}, "
                             f"{positions.numel()}) to match {name}_positions; got "
                             f"{tuple(entropy.shape)}")
    results = {}
    points, entropy, positions = _pooled(after_norm[:, scored_positions], scored_entropy)
    summary = manifold_summary(points, entropy)
    results[PROTOCOLS[0]] = ProtocolResult(
        summary.pc1_share, 1, abs(summary.pc1_spearman),
        abs(spearman(_position_mean(scored_entropy).flatten(), entropy)),
        _beyond(summary.pca.scores[:, 0], entropy, positions))

    points, entropy, positions = _pooled(before_norm[:, value_positions], value_entropy)
    alone = abs(spearman(_position_mean(value_entropy).flatten(), entropy))
    for name, standardize in ((PROTOCOLS[1], False), (PROTOCOLS[2], True)):
        summary = manifold_summary(points, entropy, standardize=standardize)
        results[name] = ProtocolResult(summary.pc1_share, 1, abs(summary.pc1_spearman), alone,
                                       _beyond(summary.pca.scores[:, 0], entropy, positions))
    component, correlation = best_pc_pearson(points, entropy)
    axes = pca(points)
    results[PROTOCOLS[3]] = ProtocolResult(
        axes.explained_variance_ratio[component - 1].item(), component, correlation,
        abs(pearson(_position_mean(value_entropy).flatten(), entropy)),
        _beyond(axes.scores[:, component - 1], entropy, positions))

    shares, rhos = per_sequence_manifolds(after_norm[:, scored_positions], scored_entropy)
    mean_curve = _position_mean(scored_entropy)[0]
    alone = torch.tensor([abs(spearman(mean_curve, row)) for row in scored_entropy.double()])
    results[PROTOCOLS[4]] = ProtocolResult(shares.mean().item(), 1, rhos.abs().nanmean().item(),
                                           alone.nanmean().item(), float("nan"))
    return results


def best_pc_beyond_position(points: torch.Tensor, entropy: torch.Tensor,
                            n_permutations: int, generator: torch.Generator,
                            n_components: int = 5) -> tuple[float, torch.Tensor]:
    """The best-of-PC1-5 protocol's correlation beyond position, and its permutation null.

    The protocol (the authors' ``experiments/paper1_hmm/figures/hmm_geometric_analysis.py``,
    ``analyze_layer``): a PCA of the pooled points, the component among the first
    ``n_components`` with the largest ``|Pearson|`` with the entropy; here its correlation is
    then taken within positions (:func:`~attention_dynamics.measures.geometry.within_group_correlation`),
    so that a coordinate that only tracks the position scores 0. The null repeats the whole
    procedure, component choice included, with the entropies shuffled across sequences within
    each position: it keeps every position's entropies and the representations, and breaks only
    the link between a sequence's representation and its own entropy.

    Args:
        points: ``(B, P, d)`` representations at ``P`` positions of ``B`` sequences.
        entropy: ``(B, P)`` the Bayes entropy (bits) at the same places; it must vary within
            some position (a ValueError otherwise: such a task cannot separate the two orders).
        n_permutations: a positive int, the size of the null sample.
        generator: a CPU ``torch.Generator`` for the shuffles.
        n_components: a positive int, the components searched.

    Returns:
        ``(observed, null)``: the absolute within-position correlation of the chosen component
        (a float in ``[0, 1]``) and ``(n_permutations,)`` float64, the same for each shuffle.
    """
    check_float_tensor("points", points, min_dim=3, max_dim=3)
    check_float_tensor("entropy", entropy, min_dim=2, max_dim=2)
    if tuple(entropy.shape) != tuple(points.shape[:2]):
        raise ValueError(f"entropy must have shape (B, P) = {tuple(points.shape[:2])}; got "
                         f"{tuple(entropy.shape)}")
    check_positive_int("n_permutations", n_permutations)
    check_positive_int("n_components", n_components)
    spread = entropy.double() - entropy.double().mean(0, keepdim=True)
    if not bool((spread.abs() > 1e-12 * (1 + entropy.double().abs().max())).any()):
        raise ValueError("entropy must vary within some position; it is a function of the "
                         "position alone, so no protocol can separate entropy from position")
    batch, length = entropy.shape
    flat_points, flat_entropy, positions = _pooled(points, entropy)
    scores = pca(flat_points).scores[:, :n_components]                        # (B * P, k)

    def statistic(coordinate: torch.Tensor) -> float:
        target = coordinate - coordinate.mean()
        centred = scores - scores.mean(0)
        r = (centred.T @ target) / (centred.norm(dim=0) * target.norm()).clamp_min(1e-300)
        return abs(within_group_correlation(scores[:, int(r.abs().argmax())], coordinate,
                                            positions))

    observed = statistic(flat_entropy)
    columns = entropy.double().cpu()
    null = torch.empty(n_permutations, dtype=torch.float64)
    for index in range(n_permutations):
        order = torch.argsort(torch.rand(batch, length, generator=generator), dim=0)
        shuffled = torch.gather(columns, 0, order).to(flat_entropy.device)
        null[index] = statistic(shuffled.flatten())
    return observed, null
