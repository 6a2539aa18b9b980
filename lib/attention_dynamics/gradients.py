"""Closed-form gradients of a softmax attention layer, from the upstream gradient alone.

With ``u_i = dL/do_i`` (the upstream gradient) and ``b_ij = u_i . v_j`` (the compatibility),

    dL/dalpha_ij = b_ij,        dL/ds_ij = alpha_ij (b_ij - sum_k alpha_ik b_ik)   (routing law),
    dL/dv_j = sum_i alpha_ij u_i,
    dL/dq_i = sum_j (dL/ds_ij) k_j / sqrt(d_k),   dL/dk_j = sum_i (dL/ds_ij) q_i / sqrt(d_k),
    dL/dW = x^T (dL/d projection)   for W in W_Q, W_K, W_V.

Every function is batched over leading dimensions and honours the mask: disallowed pairs have
``alpha_ij = 0`` and so contribute nothing; their entries of ``B``, ``A`` and ``dL/ds`` are 0.
The book's chapter 1 derives these identities; the tests check them against autograd.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch.nn import functional as F

from attention_dynamics.attention import AttentionRecord
from attention_dynamics.validation import check_float_tensor, check_same_shape


def compatibility(upstream: torch.Tensor, values: torch.Tensor,
                  mask: torch.Tensor | None = None) -> torch.Tensor:
    """``B_ij = u_i . v_j``: ``(..., T, d_v)`` and ``(..., T, d_v)`` give ``(..., T, T)``.

    Entries outside ``mask`` (boolean ``(T, T)``, ``True`` = allowed) are set to 0.
    """
    check_float_tensor("upstream", upstream, min_dim=2)
    check_float_tensor("values", values, min_dim=2, dtype=upstream.dtype)
    if upstream.shape[-1] != values.shape[-1] or upstream.shape[-2] != values.shape[-2]:
        raise ValueError(f"upstream and values must both be (..., T, d_v); got "
                         f"{tuple(upstream.shape)} and {tuple(values.shape)}")
    b = upstream @ values.transpose(-1, -2)
    return b if mask is None else b.masked_fill(~mask, 0.0)


def advantage(weights: torch.Tensor, compat: torch.Tensor) -> torch.Tensor:
    """``A_ij = b_ij - E_{alpha_i}[b]``, the compatibility minus its attention-weighted mean.

    ``weights`` and ``compat`` are ``(..., T, T)``; entries where ``weights == 0`` because of a
    mask are returned as 0, since such keys were never candidates.
    """
    check_float_tensor("weights", weights, min_dim=2)
    check_float_tensor("compat", compat, min_dim=2, dtype=weights.dtype)
    check_same_shape(weights=weights, compat=compat)
    baseline = (weights * compat).sum(dim=-1, keepdim=True)
    return torch.where(weights > 0, compat - baseline, torch.zeros_like(compat))


def score_gradient(weights: torch.Tensor, compat: torch.Tensor) -> torch.Tensor:
    """The routing law ``dL/ds_ij = alpha_ij A_ij``, shape ``(..., T, T)``; rows sum to 0."""
    return weights * advantage(weights, compat)


def value_gradient(weights: torch.Tensor, upstream: torch.Tensor) -> torch.Tensor:
    """``dL/dv_j = sum_i alpha_ij u_i``: weights ``(..., T, T)``, upstream ``(..., T, d_v)``."""
    check_float_tensor("weights", weights, min_dim=2)
    check_float_tensor("upstream", upstream, min_dim=2, dtype=weights.dtype)
    return weights.transpose(-1, -2) @ upstream


def query_gradient(score_grad: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """``dL/dq_i = sum_j (dL/ds_ij) k_j / sqrt(d_k)``, shape ``(..., T, d_k)``."""
    return score_grad @ keys / math.sqrt(keys.shape[-1])


def key_gradient(score_grad: torch.Tensor, queries: torch.Tensor) -> torch.Tensor:
    """``dL/dk_j = sum_i (dL/ds_ij) q_i / sqrt(d_k)``, shape ``(..., T, d_k)``."""
    return score_grad.transpose(-1, -2) @ queries / math.sqrt(queries.shape[-1])


def projection_gradient(x: torch.Tensor, grad_projected: torch.Tensor,
                        weight_shape: torch.Size | tuple[int, ...]) -> torch.Tensor:
    """``dL/dW = sum over the batch of x^T (dL/d(xW))``, summed down to ``weight_shape``.

    ``x`` is ``(..., T, d_x)``, ``grad_projected`` is ``(..., T, d)``; dimensions along which the
    weight was broadcast (a batch of sequences sharing one head, say) are summed.
    """
    full = x.transpose(-1, -2) @ grad_projected
    try:
        return full.sum_to_size(*weight_shape)
    except RuntimeError as err:
        raise ValueError(f"weight_shape {tuple(weight_shape)} does not broadcast to the "
                         f"gradient shape {tuple(full.shape)}") from err


@dataclass
class AttentionGradients:
    """Closed-form gradients of one attention layer (shapes as in
    :class:`~attention_dynamics.attention.AttentionRecord`)."""

    compatibility: torch.Tensor  # B, (..., T, T)
    advantage: torch.Tensor  # A, (..., T, T)
    scores: torch.Tensor  # dL/ds, (..., T, T)
    q: torch.Tensor  # dL/dq, (..., T, d_k)
    k: torch.Tensor  # dL/dk, (..., T, d_k)
    v: torch.Tensor  # dL/dv, (..., T, d_v)
    w_q: torch.Tensor | None = None  # dL/dW_Q, weight_shapes[0]
    w_k: torch.Tensor | None = None  # dL/dW_K, weight_shapes[1]
    w_v: torch.Tensor | None = None  # dL/dW_V, weight_shapes[2]


def closed_form_gradients(record: AttentionRecord, upstream: torch.Tensor | None = None,
                          weight_shapes: tuple | None = None) -> AttentionGradients:
    """All gradients of an attention layer from its record and ``u = dL/do``.

    Args:
        record: the forward pass, from :func:`~attention_dynamics.attention.attention_forward`.
        upstream: ``(..., T, d_v)``; defaults to ``record.upstream`` (needs ``retain_upstream``).
        weight_shapes: shapes of ``(w_q, w_k, w_v)`` to also return their gradients.
    """
    u = record.upstream if upstream is None else upstream
    check_float_tensor("upstream", u, min_dim=2, dtype=record.output.dtype)
    if u.shape != record.output.shape:
        raise ValueError(f"upstream must have the output's shape {tuple(record.output.shape)}; "
                         f"got {tuple(u.shape)}")
    with torch.no_grad():
        alpha = record.weights.detach()
        b = compatibility(u, record.v.detach(), record.mask)
        a = advantage(alpha, b)
        ds = alpha * a
        dq = query_gradient(ds, record.k.detach())
        dk = key_gradient(ds, record.q.detach())
        dv = value_gradient(alpha, u)
        grads = AttentionGradients(compatibility=b, advantage=a, scores=ds, q=dq, k=dk, v=dv)
        if weight_shapes is not None:
            x = record.x.detach()
            grads.w_q, grads.w_k, grads.w_v = (
                projection_gradient(x, g, shape)
                for g, shape in zip((dq, dk, dv), weight_shapes, strict=True))
    return grads


def cross_entropy_upstream(logits: torch.Tensor, targets: torch.Tensor,
                           readout: torch.Tensor) -> torch.Tensor:
    """``u_i = dL/do_i = (softmax(logits_i) - e_{y_i}) W_O^T / N`` for the mean cross-entropy.

    ``logits`` ``(..., N, C)``, ``targets`` ``(N,)`` or ``(..., N)`` long, ``readout`` ``(d_v, C)``;
    returns ``(..., N, d_v)``. Closed form, no autograd.
    """
    check_float_tensor("logits", logits, min_dim=2)
    if targets.dtype != torch.long:
        raise ValueError(f"targets must be a long tensor of class indices; got {targets.dtype}")
    n = logits.shape[-2]
    error = torch.softmax(logits, dim=-1) - F.one_hot(targets, logits.shape[-1]).to(logits.dtype)
    return error @ readout.transpose(-1, -2) / n


def cross_entropy_hvp(logits: torch.Tensor, readout: torch.Tensor,
                      delta_output: torch.Tensor) -> torch.Tensor:
    """The first-order change of ``u`` when the outputs move by ``delta_output``.

    ``Delta u_i = W_O (diag p_i - p_i p_i^T) W_O^T Delta o_i / N`` with ``p_i = softmax(logits_i)``:
    the Hessian of the mean cross-entropy in ``o_i`` applied to ``Delta o_i``. Shapes: logits
    ``(..., N, C)``, ``delta_output`` ``(..., N, d_v)``; returns ``(..., N, d_v)``.
    """
    n = logits.shape[-2]
    p = torch.softmax(logits, dim=-1)
    dz = delta_output @ readout                                  # change of logits (..., N, C)
    dp = p * dz - p * (p * dz).sum(dim=-1, keepdim=True)         # softmax Jacobian times dz
    return dp @ readout.transpose(-1, -2) / n
