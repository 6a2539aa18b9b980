"""Geometric diagnostics of trained sequence models (Paper I, section 5).

All functions take plain tensors, so that they apply to any model that exposes the tensors:

- :func:`cosine_matrix`, :func:`key_orthogonality` — how far a set of keys is from an
  orthogonal frame: the mean ``|cos|`` between distinct keys (0 for orthogonal keys, 1 for
  collinear ones; about ``sqrt(2 / (pi d))`` for random directions in ``d`` dimensions);
  :func:`class_means` turns per-position keys into one key per token, and
  :func:`contextual_keys` does so for one layer's keys at chosen positions;
- :func:`query_key_alignment` — ``cos(q_i, k_j)`` between the query at a scored position and
  the keys at earlier positions, averaged over sequences;
- :func:`pca` and :func:`manifold_summary` — principal components of representations and how
  well the first one tracks an external coordinate (the Bayes entropy): its variance share,
  its Spearman rank correlation and the ``R^2`` of a linear fit, pooled over sequences, or
  one sequence at a time (:func:`per_sequence_manifolds`);
- :func:`attention_drift` and :func:`representation_drift` — how much attention patterns
  and representations changed between two checkpoints, each on a 0-to-1 scale.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attention_dynamics.validation import check_choice, check_float_tensor, check_positive_int


def cosine_matrix(vectors: torch.Tensor) -> torch.Tensor:
    """Pairwise cosines ``(..., N, N)`` of ``vectors`` ``(..., N, d)`` (float64)."""
    check_float_tensor("vectors", vectors, min_dim=2)
    unit = torch.nn.functional.normalize(vectors.double(), dim=-1)
    return unit @ unit.transpose(-1, -2)


def key_orthogonality(keys: torch.Tensor) -> torch.Tensor:
    """Mean ``|cos|`` over the ``N (N - 1)`` ordered pairs of distinct keys, shape ``(...)``.

    Args:
        keys: ``(..., N, d)`` with ``N >= 2``; leading dimensions (layers, heads) are kept.
    """
    check_float_tensor("keys", keys, min_dim=2)
    n = keys.shape[-2]
    if n < 2:
        raise ValueError(f"keys must hold at least 2 vectors along dim -2; got {n}")
    off_diagonal = ~torch.eye(n, dtype=torch.bool, device=keys.device)
    return cosine_matrix(keys)[..., off_diagonal].abs().mean(-1)


def class_means(vectors: torch.Tensor, labels: torch.Tensor, n_classes: int,
                missing: str = "nan") -> torch.Tensor:
    """The mean vector of each class, ``(..., n_classes, d)``.

    Args:
        vectors: ``(..., N, d)``, e.g. the keys at every position of a batch flattened to ``N``
            rows, for each of the leading (head) dimensions.
        labels: ``(..., N)`` int64 class indices in ``0..n_classes-1``, with the batch shape of
            ``vectors``, or ``(N,)``, shared by every batch element.
        n_classes: a positive int.
        missing: what a class that never occurs gets: ``"nan"`` (its mean is ``nan``) or
            ``"error"`` (a ValueError).
    """
    check_float_tensor("vectors", vectors, min_dim=2)
    check_choice("missing", missing, ("nan", "error"))
    if labels.dtype != torch.int64 or labels.shape[-1] != vectors.shape[-2]:
        raise ValueError(f"labels must be int64 with last dim N={vectors.shape[-2]}; got "
                         f"{labels.dtype} {tuple(labels.shape)}")
    check_positive_int("n_classes", n_classes)
    if labels.numel() and (labels.min() < 0 or labels.max() >= n_classes):
        raise ValueError(f"labels must lie in 0..{n_classes - 1}")
    one_hot = torch.nn.functional.one_hot(labels, n_classes).to(vectors.dtype)   # (..., N, C)
    counts = one_hot.sum(dim=-2).unsqueeze(-1)                                   # (..., C, 1)
    if missing == "error" and (counts == 0).any():
        raise ValueError(f"labels must take every value in 0..{n_classes - 1}")
    return (one_hot.transpose(-1, -2) @ vectors) / counts


def contextual_keys(k: torch.Tensor, positions: torch.Tensor, labels: torch.Tensor,
                    n_classes: int) -> torch.Tensor:
    """One key per token class and head: the mean key at the positions holding each class.

    For bijection elimination, with ``positions`` the value positions and ``labels`` the value
    symbols there, this is the key each hypothesis has in context (the *contextual* key, as
    against the layer-0 token key, which ignores positions and context).

    Args:
        k: ``(B, H, T, d)`` one layer's keys (a transformer's ``AttentionRecord.k``).
        positions: ``(P,)`` int64 positions whose keys are averaged.
        labels: ``(B, P)`` int64 class of the token at each of those positions, in
            ``0..n_classes-1``; every class must occur.
        n_classes: a positive int.

    Returns:
        ``(H, n_classes, d)`` class means over every sequence and position of each class.
    """
    check_float_tensor("k", k, min_dim=4, max_dim=4)
    if positions.ndim != 1 or tuple(labels.shape) != (k.shape[0], positions.numel()):
        raise ValueError(f"positions must be 1-D and labels of shape (B, P) = ({k.shape[0]}, "
                         f"{positions.numel() if positions.ndim == 1 else '?'}); got "
                         f"{tuple(positions.shape)} and {tuple(labels.shape)}")
    keys = k[:, :, positions].transpose(0, 1).flatten(1, 2)                  # (H, B * P, d)
    return class_means(keys, labels.flatten(), n_classes, missing="error")


def query_key_alignment(q: torch.Tensor, k: torch.Tensor, query_positions: torch.Tensor,
                        key_positions: torch.Tensor) -> torch.Tensor:
    """Mean over sequences of ``cos(q_i, k_j)``, shape ``(..., Q, P)``; ``nan`` where ``j >= i``.

    Args:
        q, k: ``(B, ..., T, d)`` queries and keys (for one layer of a transformer, ``(B, H, T,
            d_head)``); the batch ``B`` is averaged, other leading dimensions kept.
        query_positions: ``(Q,)`` int64 positions ``i`` whose query is compared.
        key_positions: ``(P,)`` int64 positions ``j`` whose key is compared; only pairs with
            ``j < i`` (keys strictly before the query) get a value.
    """
    check_float_tensor("q", q, min_dim=3)
    check_float_tensor("k", k, min_dim=3)
    if q.shape != k.shape:
        raise ValueError(f"q and k must have the same shape; got {tuple(q.shape)} and "
                         f"{tuple(k.shape)}")
    unit_q = torch.nn.functional.normalize(q.double()[..., query_positions, :], dim=-1)
    unit_k = torch.nn.functional.normalize(k.double()[..., key_positions, :], dim=-1)
    cos = (unit_q @ unit_k.transpose(-1, -2)).mean(0)
    earlier = key_positions.to(q.device)[None, :] < query_positions.to(q.device)[:, None]
    return cos.masked_fill(~earlier, float("nan"))


@dataclass(frozen=True)
class PCA:
    """Principal components of ``N`` points in ``d`` dimensions.

    Attributes:
        mean: ``(d,)`` the centre.
        components: ``(r, d)`` unit principal axes, by decreasing variance (``r = min(N, d)``).
        explained_variance_ratio: ``(r,)`` each axis's share of the total variance.
        scores: ``(N, r)`` coordinates of the centred points on the axes.
    """

    mean: torch.Tensor
    components: torch.Tensor
    explained_variance_ratio: torch.Tensor
    scores: torch.Tensor


def pca(points: torch.Tensor) -> PCA:
    """PCA of ``points`` ``(N, d)`` by an SVD of the centred data, in float64.

    The sign of each axis is fixed so that the largest-magnitude loading is positive, which
    makes the result deterministic.
    """
    check_float_tensor("points", points, min_dim=2, max_dim=2)
    if points.shape[0] < 2:
        raise ValueError(f"points must hold at least 2 rows; got {points.shape[0]}")
    data = points.double()
    mean = data.mean(0)
    u, s, vh = torch.linalg.svd(data - mean, full_matrices=False)
    signs = torch.sign(vh.gather(1, vh.abs().argmax(1, keepdim=True))).squeeze(1)
    signs[signs == 0] = 1.0
    variance = s**2
    return PCA(mean=mean, components=vh * signs[:, None],
               explained_variance_ratio=variance / variance.sum().clamp_min(1e-300),
               scores=u * s * signs)


def ranks(values: torch.Tensor) -> torch.Tensor:
    """Ranks ``1..N`` of ``values`` ``(N,)`` in float64, ties given their average rank."""
    check_float_tensor("values", values, min_dim=1, max_dim=1)
    order = values.argsort()
    ordinal = torch.empty_like(values, dtype=torch.float64)
    ordinal[order] = torch.arange(1, len(values) + 1, dtype=torch.float64, device=values.device)
    unique, inverse = torch.unique(values, return_inverse=True)
    total = torch.zeros(len(unique), dtype=torch.float64, device=values.device)
    count = torch.zeros_like(total)
    total.index_add_(0, inverse, ordinal)
    count.index_add_(0, inverse, torch.ones_like(ordinal))
    return (total / count)[inverse]


def pearson(x: torch.Tensor, y: torch.Tensor) -> float:
    """Pearson correlation of two ``(N,)`` tensors (``nan`` if either is constant)."""
    x, y = x.double() - x.double().mean(), y.double() - y.double().mean()
    return (x @ y / (x.norm() * y.norm())).item()


def spearman(x: torch.Tensor, y: torch.Tensor) -> float:
    """Spearman rank correlation of two ``(N,)`` tensors (the Pearson correlation of ranks)."""
    check_float_tensor("x", x, min_dim=1, max_dim=1)
    check_float_tensor("y", y, min_dim=1, max_dim=1)
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same shape; got {tuple(x.shape)} and "
                         f"{tuple(y.shape)}")
    return pearson(ranks(x), ranks(y))


@dataclass(frozen=True)
class ManifoldSummary:
    """How the principal axes of representations relate to an external coordinate.

    Attributes:
        pca: the :class:`PCA` of the representations.
        pc1_share, pc2_share: variance shares of the first two axes.
        pc1_spearman: Spearman correlation of the PC1 coordinate with the coordinate (signed;
            the sign of an axis is arbitrary, so compare ``abs``).
        pc1_r2: ``R^2`` of the least-squares line predicting the coordinate from PC1.
        pc12_r2: ``R^2`` of the least-squares plane predicting it from PC1 and PC2.
        linear_r2: ``R^2`` of the least-squares fit on all coordinates (a linear probe,
            in-sample): how much of the coordinate is linearly readable at all.
    """

    pca: PCA
    pc1_share: float
    pc2_share: float
    pc1_spearman: float
    pc1_r2: float
    pc12_r2: float
    linear_r2: float


def _r_squared(features: torch.Tensor, target: torch.Tensor) -> float:
    """``R^2`` of the least-squares fit of ``target`` ``(N,)`` on ``features`` ``(N, m)`` + 1."""
    design = torch.cat([features, torch.ones_like(target)[:, None]], dim=1)
    solution = torch.linalg.lstsq(design, target[:, None]).solution
    residual = target - (design @ solution).squeeze(1)
    centred = target - target.mean()
    return (1 - residual @ residual / (centred @ centred)).item()


def manifold_summary(points: torch.Tensor, coordinate: torch.Tensor) -> ManifoldSummary:
    """PCA of ``points`` ``(N, d)`` (``d >= 2``) and the fit of ``coordinate`` ``(N,)`` on it."""
    check_float_tensor("coordinate", coordinate, min_dim=1, max_dim=1)
    if coordinate.shape[0] != points.shape[0]:
        raise ValueError(f"coordinate must have one entry per point ({points.shape[0]}); got "
                         f"{coordinate.shape[0]}")
    result = pca(points)
    if result.scores.shape[1] < 2:
        raise ValueError("points must span at least 2 dimensions for PC1 and PC2")
    target = coordinate.double().to(result.scores.device)
    return ManifoldSummary(pca=result,
                           pc1_share=result.explained_variance_ratio[0].item(),
                           pc2_share=result.explained_variance_ratio[1].item(),
                           pc1_spearman=spearman(result.scores[:, 0], target),
                           pc1_r2=_r_squared(result.scores[:, :1], target),
                           pc12_r2=_r_squared(result.scores[:, :2], target),
                           linear_r2=_r_squared(result.scores, target))


def per_sequence_manifolds(points: torch.Tensor, coordinate: torch.Tensor
                           ) -> tuple[torch.Tensor, torch.Tensor]:
    """PC1 share and Spearman of PC1 with the coordinate, one PCA per sequence.

    Args:
        points: ``(B, L, d)`` representations at ``L >= 3`` positions of ``B`` sequences.
        coordinate: ``(B, L)`` the coordinate (the Bayes entropy) at those positions; a
            sequence whose coordinate is constant gets ``nan`` for its correlation.

    Returns:
        ``(B,)`` PC1 variance shares and ``(B,)`` signed Spearman correlations, float64.
    """
    check_float_tensor("points", points, min_dim=3, max_dim=3)
    if coordinate.shape != points.shape[:2]:
        raise ValueError(f"coordinate must have shape {tuple(points.shape[:2])}; got "
                         f"{tuple(coordinate.shape)}")
    shares, correlations = [], []
    for sequence, values in zip(points, coordinate, strict=True):
        result = pca(sequence)
        shares.append(result.explained_variance_ratio[0].item())
        correlations.append(spearman(result.scores[:, 0], values.double()))
    return torch.tensor(shares, dtype=torch.float64), torch.tensor(correlations,
                                                                   dtype=torch.float64)


def attention_drift(weights_a: torch.Tensor, weights_b: torch.Tensor,
                    query_positions: torch.Tensor | None = None) -> float:
    """Mean total-variation distance between matching attention rows, in ``[0, 1]``.

    ``0.5 sum_j |alpha_ij - alpha'_ij|`` for every (sequence, layer, head, query) row, averaged.

    Args:
        weights_a, weights_b: attention weights ``(..., T, T)`` of the same inputs at two
            checkpoints (rows sum to one).
        query_positions: ``(Q,)`` rows to compare; ``None`` compares all.
    """
    check_float_tensor("weights_a", weights_a, min_dim=2)
    check_float_tensor("weights_b", weights_b, min_dim=2)
    if weights_a.shape != weights_b.shape:
        raise ValueError(f"weights_a and weights_b must have the same shape; got "
                         f"{tuple(weights_a.shape)} and {tuple(weights_b.shape)}")
    diff = (weights_a.double() - weights_b.double()).abs()
    if query_positions is not None:
        diff = diff[..., query_positions, :]
    return (0.5 * diff.sum(-1)).mean().item()


def linear_cka(a: torch.Tensor, b: torch.Tensor) -> float:
    """Linear centred kernel alignment of two representations ``(N, d_a)`` and ``(N, d_b)``.

    ``||A^T B||_F^2 / (||A^T A||_F ||B^T B||_F)`` on column-centred ``A``, ``B``: 1 when one is a
    rotation and scaling of the other, 0 when they share no linear structure.
    """
    check_float_tensor("a", a, min_dim=2, max_dim=2)
    check_float_tensor("b", b, min_dim=2, max_dim=2)
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"a and b must have the same number of rows; got {a.shape[0]} and "
                         f"{b.shape[0]}")
    a = a.double() - a.double().mean(0)
    b = b.double() - b.double().mean(0)
    cross = (a.T @ b).square().sum()
    return (cross / ((a.T @ a).norm() * (b.T @ b).norm())).item()


def representation_drift(a: torch.Tensor, b: torch.Tensor) -> float:
    """``1 - linear_cka(a, b)``: the change of a representation's geometry, in ``[0, 1]``.

    Blind to rotations and rescalings, which leave the manifold's shape unchanged.
    """
    return 1.0 - linear_cka(a, b)
