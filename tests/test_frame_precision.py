"""Frame against precision: gradient norms at scores and values, probe directions."""

import math
from dataclasses import replace

import pytest
import torch

import attention_dynamics.attention as attention_module
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


def _closed_form_gradients(model: Transformer, batch: TaskBatch, loss: str):
    """Per layer, ``dL/ds`` and ``dL/dv`` by the closed form of softmax attention's backward,
    from the upstream gradient ``u = dL/do`` of each layer's output (read off the backward pass)
    and the recorded weights, values and outputs: ``dL/dv_j = sum_i alpha_ij u_i`` and
    ``dL/ds_ij = alpha_ij (u_i . v_j - u_i . o_i)`` (zero where ``alpha_ij`` is)."""
    logits, record = model(batch.tokens, return_record=True)
    for layer in record.attention:
        layer.output.retain_grad()
    sequence_loss(logits, batch, loss).backward()
    scores, values = [], []
    for layer in record.attention:
        u, alpha = layer.output.grad, layer.weights.detach()
        v, o = layer.v.detach(), layer.output.detach()
        values.append(torch.einsum("bhij,bhid->bhjd", alpha, u))
        reads = torch.einsum("bhid,bhjd->bhij", u, v)               # u_i . v_j
        scores.append(alpha * (reads - (u * o).sum(-1, keepdim=True)))
    return scores, values


@pytest.mark.parametrize("loss", ["sampled", "bayes"])
def test_gradient_norms_match_the_closed_form_backward_of_attention(loss):
    model, batch = _model(), _batch()
    result = routing_value_gradient_norms(model, batch.tokens, batch, loss=loss)
    assert isinstance(result, RoutingValueGradients)
    for field in (result.score_norm, result.value_norm, result.ratio):
        assert field.shape == (CONFIG.n_layers,) and field.dtype == torch.float64
    scores, values = _closed_form_gradients(_model(), batch, loss)
    expected_scores = torch.stack([g.norm() for g in scores])
    expected_values = torch.stack([g.norm() for g in values])
    torch.testing.assert_close(result.score_norm, expected_scores, rtol=1e-10, atol=0)
    torch.testing.assert_close(result.value_norm, expected_values, rtol=1e-10, atol=0)
    torch.testing.assert_close(result.ratio, expected_scores / expected_values)
    assert (result.score_norm > 0).all() and (result.value_norm > 0).all()
    future = ~torch.ones(LENGTH, LENGTH, dtype=torch.bool).tril()
    assert (scores[0][..., future] == 0).all()   # masked scores carry no gradient


def _shifted_attention(score_shifts, value_shifts):
    """The library's ``attention_forward``, its recorded scores and values then moved by
    ``score_shifts[l]`` and ``value_shifts[l]`` in the ``l``-th call (layer ``l`` of one pass)
    and the output mixed again from them: the loss as a function of the scores and values."""
    original = attention_module.attention_forward
    layers = iter(range(len(score_shifts)))

    def forward(*args, **kwargs):
        record = original(*args, **kwargs)
        layer = next(layers)
        scores, v = record.scores + score_shifts[layer], record.v + value_shifts[layer]
        weights = torch.softmax(scores, -1)
        return replace(record, scores=scores, v=v, weights=weights, output=weights @ v)

    return forward


def _loss_with_shifts(monkeypatch, model, batch, score_shifts, value_shifts):
    monkeypatch.setattr(attention_module, "attention_forward",
                        _shifted_attention(score_shifts, value_shifts))
    logits, _ = model(batch.tokens, return_record=True)
    monkeypatch.undo()
    return sequence_loss(logits, batch)


def _zero_shifts():
    head = CONFIG.d_model // CONFIG.n_heads
    scores = [torch.zeros(BATCH, CONFIG.n_heads, LENGTH, LENGTH, dtype=torch.float64)
              for _ in range(CONFIG.n_layers)]
    values = [torch.zeros(BATCH, CONFIG.n_heads, LENGTH, head, dtype=torch.float64)
              for _ in range(CONFIG.n_layers)]
    return scores, values


def test_gradient_norms_match_finite_differences(monkeypatch):
    """The derivative of the loss along ``g / ||g||`` is ``||g||``: checked on loss values, along
    the closed form's directions."""
    model, batch = _model(), _batch(seed=2)
    result = routing_value_gradient_norms(model, batch.tokens, batch)
    directions = _closed_form_gradients(_model(), batch, "sampled")
    step = 1e-5
    for kind, layer, norm in (("scores", 0, result.score_norm[0]),
                              ("values", 1, result.value_norm[1])):
        which = 0 if kind == "scores" else 1
        direction = directions[which][layer] / directions[which][layer].norm()
        losses = []
        for sign in (1.0, -1.0):
            shifts = _zero_shifts()
            shifts[which][layer] = sign * step * direction
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
