"""Frame against precision: where the training signal of a transformer goes (Paper I, sec. 5).

Paper I's claim (iii) is that attention (the *frame*: which keys a query reads) settles early
in training, while the *precision* (how well the predictive's entropy is calibrated) keeps
refining. Two measurements of that, on plain tensors or one forward pass:

- :func:`routing_value_gradient_norms` — per layer, the size of the loss gradient that reaches
  the attention scores (the routing) against the one that reaches the values (the content
  the routing reads): a settled frame gets little score gradient while values still move;
- :func:`probe_direction` and :func:`direction_stability` — the direction along which a
  coordinate (the Bayes entropy) is linearly read from representations, and how much that
  direction still turns between checkpoints.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from attention_dynamics.measures.metrics import sequence_loss
from attention_dynamics.runtime import evaluation_mode
from attention_dynamics.tasks.base import TaskBatch, check_logits
from attention_dynamics.validation import check_float_tensor


@dataclass(frozen=True)
class RoutingValueGradients:
    """Loss-gradient norms at each layer's attention scores and values.

    Attributes:
        score_norm: ``(n_layers,)`` float64, ``||dL/ds||_F`` over every sequence, head and
            allowed (query, key) pair of the layer's scaled scores ``s`` (units of the loss,
            nats, per unit of score).
        value_norm: ``(n_layers,)`` float64, ``||dL/dv||_F`` over every sequence, head and
            position of the layer's values ``v``.
        ratio: ``(n_layers,)`` float64, ``score_norm / value_norm`` (``nan`` where
            ``value_norm`` is 0).

    A bypassed layer (no attention record) gets ``nan`` in all three.
    """

    score_norm: torch.Tensor
    value_norm: torch.Tensor
    ratio: torch.Tensor


def _recorded_pass(model: nn.Module, tokens: torch.Tensor, batch: TaskBatch, loss: str):
    """The loss (a scalar) and the per-layer attention records of one forward pass."""
    logits, record = model(tokens, return_record=True)
    check_logits(logits, batch)
    return sequence_loss(logits, batch, loss), record.attention


def _masked_norm(gradient: torch.Tensor | None, mask: torch.Tensor | None) -> float:
    """Frobenius norm (float64) of ``gradient`` at allowed entries; 0 for no gradient."""
    if gradient is None:
        return 0.0
    gradient = gradient.double()
    if mask is not None:
        gradient = gradient.masked_fill(~mask, 0.0)
    return gradient.norm().item()


def routing_value_gradient_norms(model: nn.Module, tokens: torch.Tensor, batch: TaskBatch,
                                 loss: str = "sampled") -> RoutingValueGradients:
    """Per layer, the norms of ``dL/ds`` (scores) and ``dL/dv`` (values) on one batch.

    One forward pass with ``return_record=True``, the loss
    :func:`~attention_dynamics.measures.metrics.sequence_loss` (mean cross-entropy in nats at
    the scored positions), and ``torch.autograd.grad`` on the record's ``scores`` and
    ``v`` tensors: the model's parameters get no ``.grad`` (existing ones are left untouched).
    The pass runs in eval mode and the model's train/eval mode is restored afterwards.
    Masked (future) score entries have zero gradient and are excluded.

    Args:
        model: a :class:`~attention_dynamics.models.transformer.Transformer`, or any module whose
            ``forward(tokens, return_record=True)`` returns logits ``(B, T, vocab)`` and a
            record whose ``attention`` lists one
            :class:`~attention_dynamics.attention.AttentionRecord` (or ``None``) per layer;
            its parameters must require gradients.
        tokens: ``(B, T)`` int64 input (usually ``batch.tokens``).
        batch: the :class:`~attention_dynamics.tasks.base.TaskBatch` that scores the logits.
        loss: ``"sampled"`` (cross-entropy against the sampled targets) or ``"bayes"``
            (against the Bayes predictive).

    Returns:
        A :class:`RoutingValueGradients` of ``(n_layers,)`` float64 tensors on the CPU.
    """
    with torch.enable_grad(), evaluation_mode(model):
        value, records = _recorded_pass(model, tokens, batch, loss)
        present = [r for r in records if r is not None]
        wanted = [t for r in present for t in (r.scores, r.v)]
        if not all(t.requires_grad for t in wanted):
            raise ValueError("model must have parameters that require gradients: the "
                             "attention scores and values carry no gradient")
        gradients = iter(torch.autograd.grad(value, wanted, allow_unused=True))
    scores, values = [], []
    for record in records:
        if record is None:
            scores.append(float("nan"))
            values.append(float("nan"))
            continue
        scores.append(_masked_norm(next(gradients), record.mask))
        values.append(_masked_norm(next(gradients), None))
    score_norm = torch.tensor(scores, dtype=torch.float64)
    value_norm = torch.tensor(values, dtype=torch.float64)
    ratio = torch.where(value_norm > 0, score_norm / value_norm, float("nan"))
    return RoutingValueGradients(score_norm=score_norm, value_norm=value_norm, ratio=ratio)


def probe_direction(points: torch.Tensor, coordinate: torch.Tensor) -> torch.Tensor:
    """Unit direction of the least-squares linear probe (with intercept) for a coordinate.

    The weights ``w`` of ``coordinate ~ points w + b``, found on centred data with the
    pseudo-inverse (the minimum-norm solution when ``N <= d`` or the points are degenerate),
    divided by ``||w||``. Its sign points towards increasing ``coordinate``.

    Args:
        points: ``(N, d)`` representations, ``N >= 2``.
        coordinate: ``(N,)`` the probed coordinate (e.g. the Bayes entropy in bits); must vary,
            and must be linearly related to the points at least a little.

    Returns:
        ``(d,)`` float64 unit vector.
    """
    check_float_tensor("points", points, min_dim=2, max_dim=2)
    check_float_tensor("coordinate", coordinate, min_dim=1, max_dim=1)
    if coordinate.shape[0] != points.shape[0] or points.shape[0] < 2:
        raise ValueError(f"points (N, d) and coordinate (N,) must share N >= 2; got "
                         f"{tuple(points.shape)} and {tuple(coordinate.shape)}")
    x = points.double() - points.double().mean(0)
    target = coordinate.double().to(x.device)
    y = target - target.mean()
    rounding = len(y) * torch.finfo(torch.float64).eps * target.abs().max()
    if y.abs().max() <= rounding:
        raise ValueError("coordinate must not be constant: a probe has no direction")
    weights = torch.linalg.pinv(x) @ y
    norm = weights.norm()
    if not norm > 0:
        raise ValueError("points must vary along some direction correlated with coordinate")
    return weights / norm


def direction_stability(directions: torch.Tensor) -> torch.Tensor:
    """``|cos|`` between each direction and the last one, e.g. probe directions over training.

    Args:
        directions: ``(S, d)`` nonzero vectors, one per checkpoint in training order (any
            length; sign ignored).

    Returns:
        ``(S,)`` float64 in ``[0, 1]``; the last entry is 1. A value near 1 means the
        direction had already settled at that checkpoint.
    """
    check_float_tensor("directions", directions, min_dim=2, max_dim=2)
    if directions.shape[0] < 1:
        raise ValueError("directions must hold at least one row")
    data = directions.double()
    norms = data.norm(dim=1)
    if not (norms > 0).all():
        raise ValueError(f"directions must be nonzero; rows {(norms == 0).nonzero().flatten().tolist()} "
                         f"are zero")
    unit = data / norms[:, None]
    return (unit @ unit[-1]).abs().clamp(max=1.0)
