"""Frame against precision: gradient norms at scores and values, probe directions."""

import math

import pytest
import torch

import attention_dynamics.attention as attention_module
from attention_dynamics.attention import AttentionRecord
from attention_dynamics.measures.frame_precision import (
    RoutingValueGradients,
    direction_stability,
    probe_direction,
    routing_value_gradient_norms,
)
from attention_dynamics.measures.metrics import sequence_loss
from attention_dynamics.models import Transformer, TransformerConfig
from attention_dynamics.tasks.base import IGNORE_INDEX, TaskBatch

VOCAB, LENGTH, BATCH = 7, 6, 3
CONFIG = TransformerConfig(vocab_size=VOCAB, max_len=LENGTH, n_layers=2, n_heads=2, d_model=8,
                           d_ff=16, init_std=0.5)


def _model() -> Transformer:
    return Transformer(CONFIG, torch.Generator().manual_seed(0)).double()


def _batch(seed: int = 1) -> TaskBatch:
    """Random tokens, scored at positions 2.. with a random Bayes predictive."""
    generator = torch.Generator().manual_seed(seed)
    tokens = torch.randint(VOCAB, (BATCH, LENGTH), generator=generator)
    scored = torch.zeros(BATCH, LENGTH, dtype=torch.bool)
    scored[:, 2:] = True
    targets = torch.randint(VOCAB, (BATCH, LENGTH), generator=generator)
    targets = targets.masked_fill(~scored, IGNORE_INDEX)
    logits = torch.randn(BATCH, LENGTH, VOCAB, generator=generator, dtype=torch.float64)
    predictive = torch.softmax(logits, -1) * scored[..., None]
    entropy = -(torch.special.xlogy(predictive, predictive)).sum(-1) / math.log(2)
    return TaskBatch(tokens=tokens, targets=targets, bayes_predictive=predictive,
                     bayes_entropy_bits=entropy)


def _shifted_attention(score_shifts, value_shifts):
    """An ``attention_forward`` that adds ``score_shifts[l]`` to the scores and
    ``value_shifts[l]`` to the values of the ``l``-th call (layer ``l`` of one pass)."""
    layers = iter(range(len(score_shifts)))

    def forward(x, w_q, w_k, w_v, mask="causal", retain_upstream=False):
        layer = next(layers)
        q, k, v = x @ w_q, x @ w_k, x @ w_v + value_shifts[layer]
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + score_shifts[layer]
        causal = torch.ones(x.shape[-2], x.shape[-2], dtype=torch.bool).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        weights = torch.softmax(scores, -1)
        return AttentionRecord(x=x, q=q, k=k, v=v, scores=scores, weights=weights,
                               output=weights @ v, mask=causal)

    return forward


def _loss_with_shifts(monkeypatch, model, batch, score_shifts, value_shifts, loss="sampled"):
    monkeypatch.setattr(attention_module, "attention_forward",
                        _shifted_attention(score_shifts, value_shifts))
    logits, _ = model(batch.tokens, return_record=True)
    monkeypatch.undo()
    return sequence_loss(logits, batch, loss)


def _zero_shifts(requires_grad: bool):
    head = CONFIG.d_model // CONFIG.n_heads
    scores = [torch.zeros(BATCH, CONFIG.n_heads, LENGTH, LENGTH, dtype=torch.float64,
                          requires_grad=requires_grad) for _ in range(CONFIG.n_layers)]
    values = [torch.zeros(BATCH, CONFIG.n_heads, LENGTH, head, dtype=torch.float64,
                          requires_grad=requires_grad) for _ in range(CONFIG.n_layers)]
    return scores, values


@pytest.mark.parametrize("loss", ["sampled", "bayes"])
def test_gradient_norms_match_a_brute_force_computation(monkeypatch, loss):
    model, batch = _model(), _batch()
    result = routing_value_gradient_norms(model, batch.tokens, batch, loss=loss)
    assert isinstance(result, RoutingValueGradients)
    for field in (result.score_norm, result.value_norm, result.ratio):
        assert field.shape == (CONFIG.n_layers,) and field.dtype == torch.float64
    score_shifts, value_shifts = _zero_shifts(requires_grad=True)
    value = _loss_with_shifts(monkeypatch, model, batch, score_shifts, value_shifts, loss)
    gradients = torch.autograd.grad(value, score_shifts + value_shifts)
    expected_scores = torch.stack([g.norm() for g in gradients[:CONFIG.n_layers]])
    expected_values = torch.stack([g.norm() for g in gradients[CONFIG.n_layers:]])
    torch.testing.assert_close(result.score_norm, expected_scores, rtol=1e-10, atol=0)
    torch.testing.assert_close(result.value_norm, expected_values, rtol=1e-10, atol=0)
    torch.testing.assert_close(result.ratio, expected_scores / expected_values)
    assert (result.score_norm > 0).all() and (result.value_norm > 0).all()
    future = ~torch.ones(LENGTH, LENGTH, dtype=torch.bool).tril()
    assert (gradients[0][..., future] == 0).all()   # masked scores carry no gradient


def test_gradient_norms_match_finite_differences(monkeypatch):
    """The derivative of the loss along ``g / ||g||`` is ``||g||``: checked on loss values."""
    model, batch = _model(), _batch(seed=2)
    result = routing_value_gradient_norms(model, batch.tokens, batch)
    step = 1e-5
    for kind, layer, norm in (("scores", 0, result.score_norm[0]),
                              ("values", 1, result.value_norm[1])):
        shifts = _zero_shifts(requires_grad=True)
        value = _loss_with_shifts(monkeypatch, model, batch, *shifts)
        chosen = shifts[0 if kind == "scores" else 1][layer]
        direction = torch.autograd.grad(value, chosen)[0]
        direction = direction / direction.norm()
        losses = []
        for sign in (1.0, -1.0):
            shifts = _zero_shifts(requires_grad=False)
            shifts[0 if kind == "scores" else 1][layer] = sign * step * direction
            with torch.no_grad():
                losses.append(_loss_with_shifts(monkeypatch, model, batch, *shifts).item())
        slope = (losses[0] - losses[1]) / (2 * step)
        assert slope == pytest.approx(norm.item(), rel=1e-6), kind


def test_no_parameter_gradients_and_mode_restored():
    model, batch = _model(), _batch()
    for training in (True, False):
        model.train(training)
        routing_value_gradient_norms(model, batch.tokens, batch)
        assert model.training is training
        assert all(p.grad is None for p in model.parameters())
    with torch.no_grad():                              # works inside a no_grad block too
        result = routing_value_gradient_norms(model, batch.tokens, batch)
    assert torch.isfinite(result.ratio).all()


def test_ablations_bypass_and_bad_arguments():
    model, batch = _model(), _batch()
    with model.ablated(bypass=[0]):
        bypassed = routing_value_gradient_norms(model, batch.tokens, batch)
    assert math.isnan(bypassed.score_norm[0]) and math.isnan(bypassed.ratio[0])
    assert torch.isfinite(bypassed.ratio[1])
    with pytest.raises(ValueError, match="loss must be one of 'sampled', 'bayes'"):
        routing_value_gradient_norms(model, batch.tokens, batch, loss="kl")
    with pytest.raises(ValueError, match="logits must have shape"):
        routing_value_gradient_norms(model, batch.tokens[:, :4], batch)
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    with pytest.raises(ValueError, match="parameters that require gradients"):
        routing_value_gradient_norms(model, batch.tokens, batch)


def test_probe_direction_recovers_a_linear_readout():
    generator = torch.Generator().manual_seed(3)
    points = torch.randn(200, 6, generator=generator, dtype=torch.float64) + 4.0
    weights = torch.tensor([1.0, -2.0, 0.0, 0.5, 0.0, 3.0], dtype=torch.float64)
    coordinate = points @ weights + 7.0
    direction = probe_direction(points, coordinate)
    assert direction.shape == (6,) and direction.dtype == torch.float64
    torch.testing.assert_close(direction, weights / weights.norm())
    torch.testing.assert_close(probe_direction(points, -coordinate), -direction)
    # more dimensions than points: the minimum-norm probe still reads the coordinate exactly
    wide = torch.randn(5, 20, generator=generator, dtype=torch.float64)
    target = torch.arange(5, dtype=torch.float64)
    readout = probe_direction(wide, target)
    centred = wide - wide.mean(0)
    assert torch.corrcoef(torch.stack([centred @ readout, target]))[0, 1] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="coordinate must not be constant"):
        probe_direction(points, torch.full((200,), 0.1, dtype=torch.float64))
    with pytest.raises(ValueError, match="must share N"):
        probe_direction(points, coordinate[:10])


def test_direction_stability():
    angles = torch.tensor([math.pi / 2, math.pi / 3, math.pi / 6, 0.0], dtype=torch.float64)
    directions = torch.stack([torch.cos(angles), torch.sin(angles)], dim=1) * 3.0
    directions[1] *= -1                                  # the sign of a direction is ignored
    stability = direction_stability(directions)
    torch.testing.assert_close(stability, torch.cos(angles).abs(), atol=1e-12, rtol=0)
    assert stability[-1] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="directions must be nonzero"):
        direction_stability(torch.tensor([[1.0, 0.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match="directions must have 2 dimensions"):
        direction_stability(torch.ones(3))
