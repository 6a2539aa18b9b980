"""Geometric diagnostics of trained sequence models (Paper I, section 5).

All functions take plain tensors, so that they apply to any model that exposes the tensors:

- :func:`cosine_matrix`, :func:`key_orthogonality` — how far a set of keys is from an
  orthogonal frame: the mean ``|cos|`` between distinct keys (0 for orthogonal keys, 1 for
  collinear ones; about ``sqrt(2 / (pi d))`` for random directions in ``d`` dimensions), or
  the mean signed ``cos``;
  :func:`class_means` turns per-position keys into one key per token, and
  :func:`contextual_keys` does so for one layer's keys at chosen positions;
- :func:`query_key_alignment` — ``cos(q_i, k_j)`` between the query at a scored position and
  the keys at earlier positions, averaged over sequences;
- :func:`pca` and :func:`manifold_summary` — principal components of representations and how
  well the first one tracks an external coordinate (the Bayes entropy): its variance share,
  its Spearman rank correlation and the ``R^2`` of a linear fit, pooled over sequences, or
  one sequence at a time (:func:`per_sequence_manifolds`); optionally on standardized
  features (:func:`standardize_features`), and :func:`best_pc_pearson`, the component among
  the first few that correlates best with the coordinate;
- :func:`within_group_correlation` and :func:`group_explained_share` — how much of a
  correlation, or of a coordinate's variance, a grouping (the position index) alone accounts
  for;
- :func:`principal_angle_cosines` and :func:`subspace_similarity` — how close two subspaces
  (e.g. the top principal axes at two checkpoints) are;
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


def key_orthogonality(keys: torch.Tensor, signed: bool = False) -> torch.Tensor:
    """Mean cosine over the ``N (N - 1)`` ordered pairs of distinct keys, shape ``(...)``.

    Two definitions of the authors' code:

    - ``signed=False`` (default): the mean ``|cos|``, as in their ``identify_frame_head``: 0
      for an orthogonal frame, 1 for collinear keys, about ``sqrt(2 / (pi d))`` for random ones;
    - ``signed=True``: the mean signed ``cos``, as in their Paper I figure script: 0 for an
      orthogonal frame, but also near 0 when positive and negative cosines cancel, and at least
      ``-1 / (N - 1)`` (reached by a regular simplex of keys).

    Args:
        keys: ``(..., N, d)`` with ``N >= 2``; leading dimensions (layers, heads) are kept.
        signed: ``True`` or ``False``, which definition (above).

    Returns:
        ``(...)`` float64, dimensionless.
    """
    check_float_tensor("keys", keys, min_dim=2)
    if not isinstance(signed, bool):
        raise ValueError(f"signed must be True or False; got {signed!r}")
    n = keys.shape[-2]
    if n < 2:
        raise ValueError(f"keys must hold at least 2 vectors along dim -2; got {n}")
    off_diagonal = ~torch.eye(n, dtype=torch.bool, device=keys.device)
    cosines = cosine_matrix(keys)[..., off_diagonal]
    return (cosines if signed else cosines.abs()).mean(-1)


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


def _check_paired(x: torch.Tensor, y: torch.Tensor) -> None:
    check_float_tensor("x", x, min_dim=1, max_dim=1)
    check_float_tensor("y", y, min_dim=1, max_dim=1)
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same shape; got {tuple(x.shape)} and "
                         f"{tuple(y.shape)}")


def spearman(x: torch.Tensor, y: torch.Tensor) -> float:
    """Spearman rank correlation of two ``(N,)`` tensors (the Pearson correlation of ranks)."""
    _check_paired(x, y)
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


_RANK_TOLERANCE = 1e-10
"""The share of a feature column's norm below which :func:`_r_squared` counts it as dependent."""


def _r_squared(features: torch.Tensor, target: torch.Tensor) -> float:
    """``R^2`` of the least-squares fit of ``target`` ``(N,)`` on ``features`` ``(N, m)`` + 1.

    The share of the centred target's sum of squares that lies in the span of the centred
    features, found by modified Gram-Schmidt (each column orthogonalized twice) in float64 with
    torch's own reductions: the same bits in every process, where LAPACK's least squares moves
    the last digits with the memory alignment of its inputs. A column left with less than
    :data:`_RANK_TOLERANCE` of its norm after the projection is dependent and is skipped.
    """
    centred_target = target.double() - target.double().mean()
    features = features.double()
    basis: list[torch.Tensor] = []
    for column in (features - features.mean(dim=0)).T:
        norm = column.square().sum().sqrt()
        for _ in range(2):
            for unit in basis:
                column = column - (column * unit).sum() * unit
        remaining = column.square().sum().sqrt()
        if remaining > _RANK_TOLERANCE * norm:
            basis.append(column / remaining)
    explained = sum(((centred_target * unit).sum().square() for unit in basis),
                    torch.zeros((), dtype=torch.float64, device=target.device))
    return (explained / centred_target.square().sum()).item()


def standardize_features(points: torch.Tensor) -> torch.Tensor:
    """Centre each feature of ``points`` ``(N, d)`` and scale it to unit variance, in float64.

    The semantics of scikit-learn's ``StandardScaler``: the population standard deviation
    (divisor ``N``), and a feature that is constant (up to the rounding of its mean) is only
    centred, so it is 0 in every row.
    """
    check_float_tensor("points", points, min_dim=2, max_dim=2)
    data = points.double()
    mean = data.mean(0)
    centred = data - mean
    std = centred.square().mean(0).sqrt()
    # the spread that rounding alone gives a constant feature: N eps |mean|
    constant = std <= data.shape[0] * torch.finfo(torch.float64).eps * mean.abs()
    return centred / torch.where(constant, torch.ones_like(std), std)


def _no_variation(residual: torch.Tensor, values: torch.Tensor) -> bool:
    """Whether ``residual`` ``(N,)`` (``values`` ``(N,)`` minus some means) is only rounding.

    Rounding a mean of ``N`` numbers errs by at most about ``N eps max |values|``.
    """
    level = len(values) * torch.finfo(torch.float64).eps * values.abs().max()
    return bool(residual.abs().max() <= level)


def _check_points_coordinate(points: torch.Tensor, coordinate: torch.Tensor) -> None:
    """Require float ``points`` ``(N, d)`` and a float ``coordinate`` ``(N,)``."""
    check_float_tensor("points", points, min_dim=2, max_dim=2)
    check_float_tensor("coordinate", coordinate, min_dim=1, max_dim=1)
    if coordinate.shape[0] != points.shape[0]:
        raise ValueError(f"coordinate must have one entry per point ({points.shape[0]}); got "
                         f"{coordinate.shape[0]}")


def _check_standardize(standardize: bool) -> None:
    if not isinstance(standardize, bool):
        raise ValueError(f"standardize must be True or False; got {standardize!r}")


def _pca_of(points: torch.Tensor, standardize: bool) -> PCA:
    """:func:`pca` of ``points``, after :func:`standardize_features` if ``standardize``."""
    _check_standardize(standardize)
    return pca(standardize_features(points) if standardize else points)


def manifold_summary(points: torch.Tensor, coordinate: torch.Tensor,
                     standardize: bool = False) -> ManifoldSummary:
    """PCA of ``points`` ``(N, d)`` (``d >= 2``) and the fit of ``coordinate`` ``(N,)`` on it.

    Args:
        points: ``(N, d)`` representations (e.g. final-layer states at scored positions).
        coordinate: ``(N,)`` the external coordinate (e.g. the Bayes entropy in bits).
        standardize: ``False`` (default) runs PCA on the raw points; ``True`` first scales every
            feature to zero mean and unit variance (:func:`standardize_features`), as the
            authors' ``analyze_value_manifold`` does. The returned ``pca`` is then that of the
            standardized points.
    """
    _check_points_coordinate(points, coordinate)
    result = _pca_of(points, standardize)
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


def best_pc_pearson(points: torch.Tensor, coordinate: torch.Tensor, n_components: int = 5,
                    standardize: bool = False) -> tuple[int, float]:
    """The principal component, among the first ``n_components``, that best tracks a coordinate.

    Args:
        points: ``(N, d)`` representations, ``N >= 2``.
        coordinate: ``(N,)`` the coordinate (e.g. the Bayes entropy in bits); must not be
            constant (a ValueError otherwise).
        n_components: a positive int; fewer are searched if the PCA has fewer axes.
        standardize: as in :func:`manifold_summary`.

    Returns:
        ``(index, |r|)``: the 1-based index of the component whose scores have the largest
        ``|Pearson|`` with ``coordinate``, and that ``|r|`` (a float in ``[0, 1]``). A component
        with no variance beyond rounding (points of lower rank) is never chosen; ties
        go to the lower index.
    """
    check_positive_int("n_components", n_components)
    _check_points_coordinate(points, coordinate)
    target = coordinate.double()
    if _no_variation(target - target.mean(), target):
        raise ValueError("coordinate must not be constant: it has no correlation with any "
                         "component")
    result = _pca_of(points, standardize)
    scores = result.scores[:, :n_components]
    spread = scores.norm(dim=0)                        # the singular values of these axes
    real = spread > max(points.shape) * torch.finfo(torch.float64).eps * spread.max()
    target = target.to(scores.device)
    correlations = torch.tensor(
        [abs(pearson(column, target)) if keep else float("nan")
         for column, keep in zip(scores.T, real.tolist(), strict=True)], dtype=torch.float64)
    if correlations.isnan().all():
        raise ValueError("points must not all be equal: no component has variance")
    best = int(torch.nan_to_num(correlations, nan=-1.0).argmax())
    return best + 1, correlations[best].item()


def _group_inverse(groups: torch.Tensor, n: int) -> tuple[torch.Tensor, int]:
    """Validate integer labels ``(N,)``; return each entry's group index ``0..G-1`` and ``G``."""
    if not isinstance(groups, torch.Tensor) or groups.is_floating_point() or groups.is_complex() \
            or groups.dtype == torch.bool or tuple(groups.shape) != (n,):
        raise ValueError(f"groups must be an integer tensor of shape ({n},); got "
                         f"{getattr(groups, 'dtype', type(groups).__name__)} "
                         f"{tuple(getattr(groups, 'shape', ()))}")
    unique, inverse = torch.unique(groups, return_inverse=True)
    return inverse, len(unique)


def _minus_group_means(values: torch.Tensor, inverse: torch.Tensor, n_groups: int
                       ) -> torch.Tensor:
    """``values`` ``(N,)`` float64 minus the mean of its group (given by ``inverse`` ``(N,)``)."""
    total = torch.zeros(n_groups, dtype=torch.float64, device=values.device)
    count = torch.zeros_like(total)
    total.index_add_(0, inverse, values)
    count.index_add_(0, inverse, torch.ones_like(values))
    return values - (total / count)[inverse]


def within_group_correlation(x: torch.Tensor, y: torch.Tensor, groups: torch.Tensor) -> float:
    """Pearson correlation of ``x`` and ``y`` after removing each group's mean from both.

    With ``groups`` the position index, this is the part of the correlation that position
    alone cannot explain: a correlation carried only by the group means (both drift with
    position) gives 0, one that holds among the members of each group survives.

    Args:
        x, y: ``(N,)`` float tensors.
        groups: ``(N,)`` integer labels (any values). A group of one member has no
            within-group variation and contributes nothing.

    Returns:
        The correlation, a float in ``[-1, 1]``; ``nan`` when ``x`` or ``y`` is constant
        within every group (including when every group has one member).
    """
    _check_paired(x, y)
    inverse, n_groups = _group_inverse(groups, x.shape[0])
    inverse = inverse.to(x.device)
    x, y = x.double(), y.double().to(x.device)
    residual_x = _minus_group_means(x, inverse, n_groups)
    residual_y = _minus_group_means(y, inverse, n_groups)
    if _no_variation(residual_x, x) or _no_variation(residual_y, y):
        return float("nan")
    return pearson(residual_x, residual_y)


def group_explained_share(y: torch.Tensor, groups: torch.Tensor) -> float:
    """``R^2`` of ``y`` on its group means: the share of ``y``'s variance the groups explain.

    ``1 - sum (y - mean_g(y))^2 / sum (y - mean(y))^2``, the in-sample ``R^2`` of a
    one-way ANOVA (not adjusted for the number of groups: ``G`` groups of random data give
    about ``(G - 1) / (N - 1)``, and a group of one member is explained exactly by its own mean).

    Args:
        y: ``(N,)`` float tensor.
        groups: ``(N,)`` integer labels, e.g. the position index of each entry.

    Returns:
        A float in ``[0, 1]``: 1 when ``y`` is a function of the group, near 0 when ``y`` does
        not depend on it; ``nan`` when ``y`` is constant (no variance to explain).
    """
    check_float_tensor("y", y, min_dim=1, max_dim=1)
    inverse, n_groups = _group_inverse(groups, y.shape[0])
    values = y.double()
    residual = _minus_group_means(values, inverse.to(values.device), n_groups)
    centred = values - values.mean()
    if _no_variation(centred, values):
        return float("nan")
    return (1 - residual @ residual / (centred @ centred)).clamp(0.0, 1.0).item()


def _orthonormal_basis(name: str, matrix: torch.Tensor) -> torch.Tensor:
    """``Q`` ``(n, k)`` of the reduced QR of ``matrix`` ``(n, k)``, float64, full column rank."""
    check_float_tensor(name, matrix, min_dim=2, max_dim=2)
    n, k = matrix.shape
    if not 1 <= k <= n:
        raise ValueError(f"{name} must have shape (n, k) with 1 <= k <= n; got {(n, k)}")
    q, r = torch.linalg.qr(matrix.double())
    diagonal = r.diagonal().abs()
    if not diagonal.min() > n * torch.finfo(torch.float64).eps * diagonal.max():
        raise ValueError(f"{name} must have linearly independent columns")
    return q


def principal_angle_cosines(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Cosines of the principal angles between the column spaces of ``a`` and ``b``.

    The singular values of ``Q_a^T Q_b``, with ``Q`` an orthonormal basis from a QR
    decomposition (Björck and Golub's method).

    Args:
        a: ``(n, k_a)`` with linearly independent columns, ``k_a <= n``.
        b: ``(n, k_b)`` likewise, the same ``n``.

    Returns:
        ``(min(k_a, k_b),)`` float64 in ``[0, 1]``, descending: 1 for a direction the two
        spaces share, 0 for one orthogonal to the other space.
    """
    q_a = _orthonormal_basis("a", a)
    q_b = _orthonormal_basis("b", b)
    if q_a.shape[0] != q_b.shape[0]:
        raise ValueError(f"a and b must have the same number of rows; got {q_a.shape[0]} and "
                         f"{q_b.shape[0]}")
    return torch.linalg.svdvals(q_a.T @ q_b.to(q_a.device)).clamp(0.0, 1.0)


def subspace_similarity(a: torch.Tensor, b: torch.Tensor) -> float:
    """Mean squared cosine of the principal angles between the column spaces of ``a``, ``b``.

    ``a`` and ``b`` are ``(n, k_a)`` and ``(n, k_b)`` (see :func:`principal_angle_cosines`).
    The result lies in ``[0, 1]``: 1 when one space contains the other (the same space when
    ``k_a = k_b``), 0 when they are orthogonal, and ``k / n`` in expectation for two
    independent uniformly random ``k``-dimensional subspaces of ``R^n`` (``max(k_a, k_b) / n``
    when the dimensions differ), the chance level to compare against.
    """
    return principal_angle_cosines(a, b).square().mean().item()


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
