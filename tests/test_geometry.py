"""Geometry measures on synthetic data whose answers are known."""

import math

import pytest
import torch

from attention_dynamics.measures.geometry import (
    attention_drift,
    class_means,
    contextual_keys,
    key_orthogonality,
    linear_cka,
    manifold_summary,
    pca,
    per_sequence_manifolds,
    query_key_alignment,
    ranks,
    representation_drift,
    spearman,
)


def test_key_orthogonality_extremes():
    square = torch.randn(8, 8, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    orthonormal = torch.linalg.qr(square)[0]
    assert key_orthogonality(orthonormal[:5]).item() == pytest.approx(0.0, abs=1e-12)
    direction = torch.randn(8, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    collinear = torch.stack([2.0 * direction, -0.5 * direction, direction])
    assert key_orthogonality(collinear).item() == pytest.approx(1.0, abs=1e-12)
    per_head = key_orthogonality(torch.stack([orthonormal[:3], collinear]))  # (heads,)
    torch.testing.assert_close(per_head, torch.tensor([0.0, 1.0], dtype=torch.float64))
    with pytest.raises(ValueError, match="at least 2"):
        key_orthogonality(torch.ones(1, 3))


def test_random_keys_match_the_high_dimensional_value():
    keys = torch.randn(200, 256, generator=torch.Generator().manual_seed(2))
    assert key_orthogonality(keys).item() == pytest.approx(math.sqrt(2 / (math.pi * 256)), rel=0.05)


def test_points_on_a_line_ordered_by_entropy():
    generator = torch.Generator().manual_seed(3)
    entropy = torch.rand(100, generator=generator, dtype=torch.float64) * 3
    direction = torch.randn(12, generator=generator, dtype=torch.float64)
    points = 5.0 + entropy[:, None] * direction  # exactly on a line, ordered by entropy
    summary = manifold_summary(points, entropy)
    assert summary.pc1_share == pytest.approx(1.0, abs=1e-12)
    assert abs(summary.pc1_spearman) == pytest.approx(1.0, abs=1e-12)
    assert summary.pc1_r2 == pytest.approx(1.0, abs=1e-12)
    # a monotone but curved coordinate keeps |rho| = 1 and loses linear R^2
    curved = manifold_summary(5.0 + torch.exp(2 * entropy)[:, None] * direction, entropy)
    assert abs(curved.pc1_spearman) == pytest.approx(1.0, abs=1e-12)
    assert curved.pc1_r2 < 0.95
    with pytest.raises(ValueError, match="one entry per point"):
        manifold_summary(points, entropy[:10])


def test_pca_variance_shares_and_sign():
    generator = torch.Generator().manual_seed(4)
    scales = torch.tensor([3.0, 2.0, 1.0], dtype=torch.float64)
    points = torch.randn(5000, 3, generator=generator, dtype=torch.float64) * scales
    result = pca(points)
    torch.testing.assert_close(result.explained_variance_ratio, scales**2 / 14, rtol=0, atol=0.02)
    assert torch.all(result.components.abs().argmax(1) == torch.arange(3))
    assert torch.all(result.components.gather(1, result.components.abs().argmax(1, keepdim=True)) > 0)
    torch.testing.assert_close(result.scores @ result.components + result.mean, points)


def test_ranks_and_spearman_with_ties():
    assert ranks(torch.tensor([10.0, 20.0, 10.0, 5.0])).tolist() == [2.5, 4.0, 2.5, 1.0]
    x = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    assert spearman(x, x**3) == pytest.approx(1.0)
    assert spearman(x, -x) == pytest.approx(-1.0)
    # hand value: ranks (1,2,3,4,5) against (2,1,4,3,5): 1 - 6*4/(5*24) = 0.8
    assert spearman(x, torch.tensor([2.0, 1.0, 4.0, 3.0, 5.0])) == pytest.approx(0.8)
    with pytest.raises(ValueError, match="same shape"):
        spearman(x, x[:3])


def test_query_key_alignment_masks_later_keys():
    generator = torch.Generator().manual_seed(5)
    k = torch.randn(4, 2, 6, 3, generator=generator)
    q = k.clone()  # each query equals its own key
    q[:, :, 5] = k[:, :, 1]  # the last query equals the key at position 1
    alignment = query_key_alignment(q, k, torch.tensor([1, 5]), torch.tensor([0, 1, 3]))
    assert alignment.shape == (2, 2, 3)
    assert torch.isnan(alignment[:, 0, 1:]).all() and not torch.isnan(alignment[:, 0, 0]).any()
    torch.testing.assert_close(alignment[:, 1, 1], torch.ones(2, dtype=torch.float64))


def test_attention_and_representation_drift():
    weights = torch.softmax(torch.randn(3, 5, 5, generator=torch.Generator().manual_seed(6)), -1)
    assert attention_drift(weights, weights) == 0.0
    one_hot_a = torch.eye(5).expand(3, 5, 5)
    one_hot_b = torch.eye(5).roll(1, dims=1).expand(3, 5, 5)
    assert attention_drift(one_hot_a, one_hot_b) == pytest.approx(1.0)
    assert attention_drift(one_hot_a, one_hot_b, torch.tensor([0, 2])) == pytest.approx(1.0)
    generator = torch.Generator().manual_seed(7)
    a = torch.randn(300, 6, generator=generator, dtype=torch.float64)
    rotation = torch.linalg.qr(torch.randn(6, 6, generator=generator, dtype=torch.float64))[0]
    assert representation_drift(a, 3.0 * a @ rotation + 1.0) == pytest.approx(0.0, abs=1e-12)
    independent = torch.randn(300, 6, generator=generator, dtype=torch.float64)
    assert linear_cka(a, independent) < 0.1
    with pytest.raises(ValueError, match="same shape"):
        attention_drift(weights, weights[:2])


def test_per_sequence_manifolds_and_class_means():
    generator = torch.Generator().manual_seed(8)
    entropy = torch.rand(4, 7, generator=generator, dtype=torch.float64)
    directions = torch.randn(4, 1, 5, generator=generator, dtype=torch.float64)
    points = entropy[..., None] * directions  # each sequence on its own line, ordered by entropy
    shares, correlations = per_sequence_manifolds(points, entropy)
    torch.testing.assert_close(shares, torch.ones(4, dtype=torch.float64))
    torch.testing.assert_close(correlations.abs(), torch.ones(4, dtype=torch.float64))
    with pytest.raises(ValueError, match="coordinate must have shape"):
        per_sequence_manifolds(points, entropy[:, :3])
    vectors = torch.tensor([[1.0, 0.0], [3.0, 2.0], [5.0, 5.0]]).expand(2, 3, 2)  # two heads
    means = class_means(vectors, torch.tensor([1, 0, 1]), 2)
    torch.testing.assert_close(means, torch.tensor([[[3.0, 2.0], [3.0, 2.5]]] * 2))
    with pytest.raises(ValueError, match="every value"):
        class_means(vectors, torch.tensor([0, 0, 0]), 2, missing="error")


def test_contextual_keys_average_each_class_over_sequences_and_positions():
    k = torch.arange(2 * 2 * 4 * 3, dtype=torch.float64).reshape(2, 2, 4, 3)  # (B, H, T, d)
    positions = torch.tensor([1, 3])
    labels = torch.tensor([[0, 1], [1, 0]])  # sequence 0: class 0 at 1, class 1 at 3; 1: swapped
    keys = contextual_keys(k, positions, labels, 2)
    assert keys.shape == (2, 2, 3)
    for head in range(2):
        torch.testing.assert_close(keys[head, 0], (k[0, head, 1] + k[1, head, 3]) / 2)
        torch.testing.assert_close(keys[head, 1], (k[0, head, 3] + k[1, head, 1]) / 2)
    with pytest.raises(ValueError, match="every value"):
        contextual_keys(k, positions, torch.zeros(2, 2, dtype=torch.int64), 2)
    with pytest.raises(ValueError, match="labels of shape"):
        contextual_keys(k, positions, labels.flatten(), 2)


def test_ranks_and_spearman_agree_with_scipy_with_and_without_ties():
    from scipy import stats

    generator = torch.Generator().manual_seed(3)
    for values in (torch.randn(40, generator=generator, dtype=torch.float64),
                   torch.randint(0, 6, (40,), generator=generator).double()):  # many ties
        other = values + torch.randn(40, generator=generator, dtype=torch.float64)
        assert torch.equal(ranks(values), torch.from_numpy(stats.rankdata(values.numpy())))
        expected = stats.spearmanr(values.numpy(), other.numpy()).statistic
        assert spearman(values, other) == pytest.approx(expected, abs=1e-12)


def test_r_squared_matches_least_squares_with_an_intercept():
    from attention_dynamics.measures.geometry import _r_squared

    generator = torch.Generator().manual_seed(11)
    features = torch.randn(300, 6, generator=generator, dtype=torch.float64) * 3 + 2
    target = features @ torch.randn(6, 1, generator=generator, dtype=torch.float64)
    target = target.squeeze(1) + torch.randn(300, generator=generator, dtype=torch.float64)
    design = torch.cat([features, torch.ones(300, 1, dtype=torch.float64)], dim=1)
    fit = design @ torch.linalg.lstsq(design, target[:, None]).solution
    reference = 1 - (target - fit.squeeze(1)).square().sum() / (target - target.mean()).square().sum()
    assert _r_squared(features, target) == pytest.approx(reference.item(), abs=1e-12)
    # a repeated column and a constant one add nothing to the span (rank-deficient design)
    deficient = torch.cat([features, features[:, :1] * 2, torch.full((300, 1), 7.0)], dim=1)
    assert _r_squared(deficient, target) == pytest.approx(reference.item(), abs=1e-12)
    assert _r_squared(features[:, :1] * 0 + 1, target) == 0.0


def test_r_squared_keeps_its_bits_at_every_memory_offset():
    from attention_dynamics.measures.geometry import _r_squared

    generator = torch.Generator().manual_seed(12)
    features = torch.randn(257, 9, generator=generator, dtype=torch.float64)
    target = features.sum(dim=1) + torch.randn(257, generator=generator, dtype=torch.float64)
    values = set()
    for offset in range(8):  # copies whose data start 8 * offset bytes into a buffer
        storage = torch.empty(offset + features.numel(), dtype=torch.float64)
        shifted = storage[offset:].view(257, 9)
        shifted.copy_(features)
        values.add(_r_squared(shifted, target.clone()))
    assert len(values) == 1
