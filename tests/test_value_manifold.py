"""The value-manifold protocols on planted geometries whose answers are known."""

import math

import pytest
import torch

from attention_dynamics.measures.value_manifold import (
    PROTOCOLS,
    best_pc_beyond_position,
    manifold_protocols,
)


def _planted(entropy: torch.Tensor, d: int = 6, seed: int = 0) -> torch.Tensor:
    """``(B, P, d)`` points whose first four features are multiples of the entropy, the rest
    small noise (so that even standardised, the entropy axis holds 4/6 of the variance)."""
    noise = 0.1 * torch.randn(*entropy.shape, d, generator=torch.Generator().manual_seed(seed),
                              dtype=torch.float64)
    noise[..., :4] += 10 * entropy[..., None] * torch.arange(1, 5, dtype=torch.float64)
    return noise


def test_an_entropy_axis_is_found_by_every_protocol():
    generator = torch.Generator().manual_seed(1)
    entropy = torch.rand(40, 8, generator=generator, dtype=torch.float64)  # varies within positions
    points = _planted(entropy)
    positions = torch.arange(8)
    results = manifold_protocols(points, points, positions, entropy, positions, entropy)
    assert tuple(results) == PROTOCOLS
    for name, result in results.items():
        assert result.share > 0.6, name
        assert result.correlation > 0.99, name
        assert result.position_alone < 0.3, name  # the position says little here
    assert results[PROTOCOLS[3]].component == 1
    assert results[PROTOCOLS[0]].beyond_position > 0.99


def test_when_the_entropy_is_a_function_of_position_the_position_null_is_perfect():
    entropy = torch.log2(torch.arange(8, 0, -1, dtype=torch.float64)).expand(30, 8)
    points = _planted(entropy, seed=2)
    positions = torch.arange(8)
    results = manifold_protocols(points, points, positions, entropy, positions, entropy)
    for name, result in results.items():
        assert result.position_alone == pytest.approx(1.0), name
        assert math.isnan(result.beyond_position), name


def test_standardising_lets_a_small_feature_lead():
    generator = torch.Generator().manual_seed(3)
    entropy = torch.rand(50, 6, generator=generator, dtype=torch.float64)
    points = torch.randn(50, 6, 4, generator=generator, dtype=torch.float64) * 0.01
    points[..., 0] = entropy * 0.01                      # the entropy, on a tiny scale
    points[..., 1] = 100 * torch.randn(50, 6, generator=generator, dtype=torch.float64)
    positions = torch.arange(6)
    results = manifold_protocols(points, points, positions, entropy, positions, entropy)
    assert results[PROTOCOLS[1]].correlation < 0.3      # raw PCA: the loud feature wins
    assert results[PROTOCOLS[3]].correlation > 0.99     # but it is among PC1-5


def test_mismatched_shapes_are_refused():
    points = torch.zeros(4, 5, 3)
    with pytest.raises(ValueError, match="value_entropy"):
        manifold_protocols(points, points, torch.arange(5), torch.zeros(4, 5), torch.arange(2),
                           torch.zeros(4, 3))


def _position_free_hmm_like(generator, batch=200, length=10, d=8):
    """Entropies that vary between sequences at every position around a position trend, and
    representations whose third feature carries the entropy beyond that trend."""
    trend = torch.linspace(1.0, 0.5, length)
    entropy = trend + 1.5 * torch.rand(batch, length, generator=generator)
    points = torch.randn(batch, length, d, generator=generator, dtype=torch.float64)
    points[..., 0] += 4 * trend                          # the position, on the leading axis
    return entropy.double(), points


def test_best_pc_beyond_position_finds_a_within_position_signal_beyond_its_null():
    generator = torch.Generator().manual_seed(0)
    entropy, points = _position_free_hmm_like(generator)
    points[..., 2] += 10 * (entropy - entropy.mean(0))    # the entropy beyond its position mean
    observed, null = best_pc_beyond_position(points, entropy, 100, generator)
    assert observed > 0.8
    assert null.shape == (100,) and observed > null.max() + 0.5


def test_best_pc_beyond_position_of_blind_representations_sits_inside_its_null():
    generator = torch.Generator().manual_seed(1)
    entropy, points = _position_free_hmm_like(generator)  # nothing beyond the position
    observed, null = best_pc_beyond_position(points, entropy, 200, generator)
    assert observed <= torch.quantile(null, 0.99).item()
    assert null.max() < 0.2                               # 2000 points: |r| of order 0.02


def test_best_pc_beyond_position_refuses_an_entropy_fixed_by_position():
    entropy = torch.linspace(3.0, 0.0, 10).expand(50, 10).double()   # bijection-like
    points = torch.randn(50, 10, 4, generator=torch.Generator().manual_seed(2))
    with pytest.raises(ValueError, match="function of the\\s+position"):
        best_pc_beyond_position(points, entropy, 10, torch.Generator())
    with pytest.raises(ValueError, match="n_permutations"):
        best_pc_beyond_position(points, entropy + torch.rand(50, 10).double(), 0,
                                torch.Generator())
