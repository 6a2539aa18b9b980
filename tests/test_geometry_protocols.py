"""The authors' variants of the geometry protocols, on data whose answers are known."""

import itertools
import math

import numpy as np
import pytest
import scipy.stats
import torch

from attention_dynamics.measures.geometry import (
    best_pc_pearson,
    group_explained_share,
    key_orthogonality,
    manifold_summary,
    principal_angle_cosines,
    standardize_features,
    subspace_similarity,
    within_group_correlation,
)


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _randn(*shape: int, seed: int) -> torch.Tensor:
    return torch.randn(*shape, generator=_generator(seed), dtype=torch.float64)


# key_orthogonality(signed=...)

def test_signed_key_orthogonality_of_a_simplex_and_default_unchanged():
    n = 4
    simplex = torch.eye(n, dtype=torch.float64) - 1.0 / n   # centred basis: cos = -1/(n-1)
    assert key_orthogonality(simplex, signed=True).item() == pytest.approx(-1 / (n - 1))
    assert key_orthogonality(simplex).item() == pytest.approx(1 / (n - 1))
    assert key_orthogonality(simplex, signed=False).item() == key_orthogonality(simplex).item()


def test_signed_key_orthogonality_keeps_leading_dimensions():
    keys = _randn(3, 2, 5, 16, seed=0)                           # (layers, heads, V, d)
    signed = key_orthogonality(keys, signed=True)
    assert signed.shape == (3, 2) and signed.dtype == torch.float64
    # reference: a loop over the ordered pairs of distinct keys, in NumPy
    for layer, head in ((1, 0), (2, 1)):
        k = keys[layer, head].numpy()
        pairs = [float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))
                 for a, b in itertools.permutations(k, 2)]
        assert len(pairs) == 5 * 4
        assert signed[layer, head].item() == pytest.approx(np.mean(pairs), abs=1e-12)
        assert key_orthogonality(keys)[layer, head].item() == pytest.approx(
            np.mean(np.abs(pairs)), abs=1e-12)
    assert (signed.abs() <= key_orthogonality(keys) + 1e-12).all()


def test_key_orthogonality_of_a_hand_worked_frame():
    # keys at 0, 90 and 180 degrees (of any length): the pairs' cosines are 0, -1 and 0
    keys = torch.tensor([[2.0, 0.0], [0.0, 0.5], [-1.0, 0.0]], dtype=torch.float64)
    assert key_orthogonality(keys, signed=True).item() == pytest.approx(-1 / 3, abs=1e-15)
    assert key_orthogonality(keys).item() == pytest.approx(1 / 3, abs=1e-15)


def test_key_orthogonality_rejects_a_non_bool_signed():
    with pytest.raises(ValueError, match="signed must be True or False"):
        key_orthogonality(torch.eye(3), signed="yes")


# standardize

def test_standardize_matches_manual_scaling_and_zeroes_constant_features():
    points = _randn(50, 4, seed=1) * torch.tensor([1.0, 10.0, 0.1, 1.0], dtype=torch.float64)
    points[:, 3] = 0.1                                   # constant, mean not exact in binary
    scaled = standardize_features(points)
    reference = scipy.stats.zscore(points[:, :3].numpy(), axis=0, ddof=0)   # independent
    np.testing.assert_allclose(scaled[:, :3].numpy(), reference, rtol=1e-12, atol=1e-12)
    assert (scaled[:, 3] == 0).all()
    # by hand: 1, 2, 3, 4 have mean 5/2 and population variance 5/4
    by_hand = standardize_features(torch.tensor([[1.0], [2.0], [3.0], [4.0]], dtype=torch.float64))
    expected = torch.tensor([-1.5, -0.5, 0.5, 1.5], dtype=torch.float64) / math.sqrt(1.25)
    torch.testing.assert_close(by_hand[:, 0], expected, rtol=0, atol=1e-15)
    torch.testing.assert_close(scaled[:, :3].std(0, unbiased=False),
                               torch.ones(3, dtype=torch.float64))


def test_manifold_summary_standardize_equals_pca_of_scaled_points():
    generator = _generator(2)
    entropy = torch.rand(80, generator=generator, dtype=torch.float64)
    points = _randn(80, 5, seed=3) * torch.tensor([100.0, 1.0, 1.0, 1.0, 1.0],
                                                   dtype=torch.float64)
    points[:, 1] += 3 * entropy
    manual = (points - points.mean(0)) / points.std(0, unbiased=False)
    standardized = manifold_summary(points, entropy, standardize=True)
    reference = manifold_summary(manual, entropy)
    torch.testing.assert_close(standardized.pca.explained_variance_ratio,
                               reference.pca.explained_variance_ratio)
    assert standardized.pc1_spearman == pytest.approx(reference.pc1_spearman)
    assert standardized.pc12_r2 == pytest.approx(reference.pc12_r2)
    raw = manifold_summary(points, entropy)              # default: the big feature dominates
    assert raw.pc1_share > 0.99 > standardized.pc1_share
    with pytest.raises(ValueError, match="standardize must be True or False"):
        manifold_summary(points, entropy, standardize=1)


# best_pc_pearson

def _planted(seed: int, n: int = 400) -> tuple[torch.Tensor, torch.Tensor]:
    """Points whose third-largest-variance axis carries the coordinate."""
    coordinate = torch.rand(n, generator=_generator(seed), dtype=torch.float64)
    latent = _randn(n, 6, seed=seed + 1) * torch.tensor([10.0, 5.0, 0.0, 1.0, 0.5, 0.2],
                                                          dtype=torch.float64)
    latent[:, 2] = 2.5 * math.sqrt(12) * (coordinate - 0.5)   # std 2.5: the third axis
    rotation = torch.linalg.qr(_randn(6, 6, seed=seed + 2))[0]
    return latent @ rotation.T, coordinate


def test_best_pc_pearson_finds_a_planted_component():
    points, coordinate = _planted(4)
    index, r = best_pc_pearson(points, coordinate)
    assert index == 3
    assert r == pytest.approx(1.0, abs=0.02)
    # reference: the third eigenvector of the covariance matrix (NumPy's eigh, not an SVD) and
    # SciPy's Pearson correlation of the projections on it
    data = points.numpy()
    _, vectors = np.linalg.eigh(np.cov(data, rowvar=False))
    third = (data - data.mean(0)) @ vectors[:, -3]                    # eigh sorts ascending
    assert r == pytest.approx(abs(scipy.stats.pearsonr(third, coordinate.numpy())[0]), abs=1e-10)
    index_2, r_2 = best_pc_pearson(points, coordinate, n_components=2)
    assert index_2 in (1, 2) and r_2 < 0.3


def test_best_pc_pearson_edge_cases():
    points, coordinate = _planted(5, n=50)
    assert best_pc_pearson(points, coordinate, n_components=50)[0] == 3   # fewer axes exist
    line = coordinate[:, None] * _randn(1, 6, seed=6)             # rank 1: only PC1 is real
    assert best_pc_pearson(line, coordinate, n_components=5) == (1, pytest.approx(1.0))
    with pytest.raises(ValueError, match="coordinate must not be constant"):
        best_pc_pearson(points, torch.full((50,), 0.1, dtype=torch.float64))
    with pytest.raises(ValueError, match="n_components must be a positive int"):
        best_pc_pearson(points, coordinate, n_components=0)
    with pytest.raises(ValueError, match="one entry per point"):
        best_pc_pearson(points, coordinate[:10])
    with pytest.raises(ValueError, match="no component has variance"):
        best_pc_pearson(torch.ones(50, 3, dtype=torch.float64), coordinate)


# within_group_correlation, group_explained_share

def test_within_group_correlation_removes_a_between_group_correlation():
    groups = torch.arange(10).repeat_interleave(30)             # 10 positions, 30 sequences
    x = groups.double() + 0.3 * _randn(300, seed=7)
    y = groups.double() + 0.3 * _randn(300, seed=8)             # linked only through position
    assert torch.corrcoef(torch.stack([x, y]))[0, 1] > 0.95
    assert abs(within_group_correlation(x, y, groups)) < 0.15


def test_within_group_correlation_keeps_a_within_group_one():
    groups = torch.arange(10).repeat_interleave(30)
    noise = _randn(300, seed=9)
    x = 5.0 * groups.double() + noise
    y = -3.0 * groups.double() + 2.0 * noise                    # same noise: r = 1 within
    assert within_group_correlation(x, y, groups) == pytest.approx(1.0, abs=1e-12)
    # the within-group part is blind to any function of the group added to either side
    shifted = y + torch.sin(groups.double()) * 7
    assert within_group_correlation(x, shifted, groups) == pytest.approx(1.0, abs=1e-12)


def test_within_group_correlation_edge_cases():
    x, y = _randn(6, seed=10), _randn(6, seed=11)
    singletons = torch.arange(6)
    assert math.isnan(within_group_correlation(x, y, singletons))
    pairs = torch.tensor([0, 0, 1, 1, 2, 2])
    by_pair = x.repeat_interleave(2)[:6]          # x constant within each pair
    assert math.isnan(within_group_correlation(by_pair, y, pairs))
    with_single = torch.tensor([0, 0, 0, 1, 1, 9])  # a one-member group contributes nothing
    r_with = within_group_correlation(x, y, with_single)
    r_without = within_group_correlation(x[:5], y[:5], with_single[:5])
    assert r_with == pytest.approx(r_without, abs=1e-12)
    with pytest.raises(ValueError, match="groups must be an integer tensor"):
        within_group_correlation(x, y, singletons.double())
    with pytest.raises(ValueError, match=r"groups must be an integer tensor of shape \(6,\)"):
        within_group_correlation(x, y, singletons[:5])
    with pytest.raises(ValueError, match="x and y must have the same shape"):
        within_group_correlation(x, y[:5], singletons)


def test_group_explained_share():
    groups = torch.arange(8).repeat_interleave(50)
    assert group_explained_share(torch.cos(groups.double()), groups) == pytest.approx(1.0)
    independent = _randn(400, seed=12)
    share = group_explained_share(independent, groups)
    assert 0.0 <= share < 0.05                         # expectation (G - 1) / (N - 1) ~ 0.018
    mixed = groups.double() + _randn(400, seed=13)     # var(groups) = 5.25 against 1
    assert group_explained_share(mixed, groups) == pytest.approx(5.25 / 6.25, abs=0.05)
    assert math.isnan(group_explained_share(torch.full((400,), 0.1, dtype=torch.float64),
                                            groups))
    assert group_explained_share(independent[:5], torch.arange(5)) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="groups must be an integer tensor"):
        group_explained_share(independent, groups[:10])


# principal angles

def test_principal_angles_identical_and_orthogonal_spaces():
    basis = torch.linalg.qr(_randn(10, 10, seed=14))[0]
    a = basis[:, :3] @ _randn(3, 3, seed=15)              # another basis of the same space
    cosines = principal_angle_cosines(basis[:, :3], a)
    torch.testing.assert_close(cosines, torch.ones(3, dtype=torch.float64))
    assert subspace_similarity(basis[:, :3], a) == pytest.approx(1.0)
    orthogonal = principal_angle_cosines(basis[:, :3], basis[:, 3:7])
    assert orthogonal.shape == (3,)
    torch.testing.assert_close(orthogonal, torch.zeros(3, dtype=torch.float64),
                               atol=1e-12, rtol=0)
    assert subspace_similarity(basis[:, :3], basis[:, 3:6]) == pytest.approx(0.0, abs=1e-24)


def test_principal_angles_of_a_known_45_degree_case():
    e = torch.eye(4, dtype=torch.float64)
    a = e[:, :2]                                          # span(e1, e2)
    b = torch.stack([e[:, 0], e[:, 1] + e[:, 2]], dim=1)  # span(e1, e2 + e3): 0 and 45 degrees
    cosines = principal_angle_cosines(a, b)
    torch.testing.assert_close(cosines, torch.tensor([1.0, math.sqrt(0.5)],
                                                     dtype=torch.float64))
    assert subspace_similarity(a, b) == pytest.approx(0.75)
    assert (cosines[:-1] >= cosines[1:]).all()


def test_subspace_similarity_of_random_spaces_is_near_k_over_n():
    n, k = 40, 4
    values = [subspace_similarity(_randn(n, k, seed=100 + i), _randn(n, k, seed=200 + i))
              for i in range(200)]
    assert sum(values) / len(values) == pytest.approx(k / n, rel=0.1)


def test_principal_angles_reject_bad_inputs():
    with pytest.raises(ValueError, match="linearly independent"):
        principal_angle_cosines(torch.ones(5, 2, dtype=torch.float64), _randn(5, 2, seed=16))
    with pytest.raises(ValueError, match="same number of rows"):
        principal_angle_cosines(_randn(5, 2, seed=17), _randn(6, 2, seed=18))
    with pytest.raises(ValueError, match=r"b must have shape \(n, k\) with 1 <= k <= n"):
        principal_angle_cosines(_randn(3, 2, seed=19), _randn(3, 4, seed=20))
