"""What a gradient step on ``W_Q`` and ``W_K`` does to the scores: the routing law in parameter space.

Chapter 1's routing law is about a step taken on the scores themselves,
``s' = s - eta dL/ds``, which moves attention mass toward the keys of negative advantage in
every row. Training steps the weights instead. For a head with ``q = x W_Q``, ``k = x W_K``
and ``s = q k^T / sqrt(d_k)``, the step ``W_Q -= eta dL/dW_Q``, ``W_K -= eta dL/dW_K`` changes
the queries by ``dq = -eta x dL/dW_Q`` and the keys by ``dk = -eta x dL/dW_K``, and the scores,
exactly (they are bilinear in the two weights), by

    s' - s = (dq k^T + q dk^T) / sqrt(d_k)  +  dq dk^T / sqrt(d_k)
             \\_____ first order in eta ____/     \\_ second order _/

For one sequence, with ``G = dL/ds`` (zero where masked), ``X`` its ``(T, d_x)`` inputs and
``Q, K`` its queries and keys, the first-order term is a smoothing of ``G`` by two Gram
matrices (:func:`gram_kernel_score_change`)::

    Delta s = -(eta / d_k) [ (X X^T) G (K K^T) + (Q Q^T) G (X X^T) ]

so a weight step mixes the score gradient of every query row into every other row through
``X X^T`` and ``Q Q^T``, and across key columns through ``K K^T`` and ``X X^T``. It is the score
step (times ``(c_Q + c_K) / d_k``) when the inputs are orthonormal (``X X^T = I``) and the
queries and keys isotropic (``Q Q^T = c_Q I``, ``K K^T = c_K I``); otherwise the sign of the
advantage need not survive in a row. With a batch, the Gram matrices run across the sequences
that share the weights, and :func:`first_order_score_change` (which reads the weight gradients)
is the general form.

Shapes follow :class:`~attention_dynamics.attention.AttentionRecord`: ``x`` ``(B, 1, T, d_x)``
shared by ``H`` heads, ``q, k`` ``(B, H, T, d_k)``, weights ``(H, d_x, d_k)``.
"""

from __future__ import annotations

import math

import torch

from attention_dynamics.attention import AttentionRecord


def _masked(change: torch.Tensor, record: AttentionRecord) -> torch.Tensor:
    """Zero the entries that the record's mask disallows (their scores stay ``-inf``)."""
    if record.mask is None:
        return change
    return change.masked_fill(~record.mask, 0.0)


def query_key_changes(record: AttentionRecord, grad_w_q: torch.Tensor, grad_w_k: torch.Tensor,
                      eta: float | torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``dq = -eta x dL/dW_Q`` and ``dk = -eta x dL/dW_K``, each ``(B, H, T, d_k)``.

    ``eta`` is a number or a tensor that broadcasts against ``(B, H, 1, 1)`` (one step size
    per problem, say).
    """
    if grad_w_q.shape != grad_w_k.shape or grad_w_q.shape[-2] != record.x.shape[-1]:
        raise ValueError(f"grad_w_q and grad_w_k must both be (H, d_x={record.x.shape[-1]}, "
                         f"d_k); got {tuple(grad_w_q.shape)} and {tuple(grad_w_k.shape)}")
    return -eta * (record.x @ grad_w_q), -eta * (record.x @ grad_w_k)


def first_order_score_change(record: AttentionRecord, grad_w_q: torch.Tensor,
                             grad_w_k: torch.Tensor, eta: float | torch.Tensor) -> torch.Tensor:
    """The part of ``s' - s`` linear in ``eta``: ``(dq k^T + q dk^T) / sqrt(d_k)``, ``(B, H, T, T)``,
    zero where masked."""
    dq, dk = query_key_changes(record, grad_w_q, grad_w_k, eta)
    q, k = record.q.detach(), record.k.detach()
    change = (dq @ k.transpose(-1, -2) + q @ dk.transpose(-1, -2)) / math.sqrt(record.d_k)
    return _masked(change, record)


def weight_step_score_change(record: AttentionRecord, grad_w_q: torch.Tensor,
                             grad_w_k: torch.Tensor, eta: float | torch.Tensor) -> torch.Tensor:
    """The exact ``s' - s`` of the weight step (first and second order), ``(B, H, T, T)``, zero
    where masked."""
    dq, dk = query_key_changes(record, grad_w_q, grad_w_k, eta)
    second = _masked(dq @ dk.transpose(-1, -2) / math.sqrt(record.d_k), record)
    return first_order_score_change(record, grad_w_q, grad_w_k, eta) + second


def stepped_scores(record: AttentionRecord, grad_w_q: torch.Tensor, grad_w_k: torch.Tensor,
                   eta: float | torch.Tensor) -> torch.Tensor:
    """The exact scores after the weight step, ``(B, H, T, T)``, ``-inf`` where masked."""
    return record.scores.detach() + weight_step_score_change(record, grad_w_q, grad_w_k, eta)


def gram_kernel_score_change(record: AttentionRecord, score_grads: torch.Tensor,
                             eta: float | torch.Tensor) -> torch.Tensor:
    """``-(eta / d_k) [(X X^T) G (K K^T) + (Q Q^T) G (X X^T)]`` per sequence, ``(B, H, T, T)``.

    Equal to :func:`first_order_score_change` when the batch holds one sequence (``B = 1``);
    with more, the weight step also mixes sequences, and this per-sequence form leaves that out.
    ``score_grads`` is ``G = dL/ds`` ``(B, H, T, T)`` with zeros where masked.
    """
    x, q, k = record.x.detach(), record.q.detach(), record.k.detach()
    inputs_gram = x @ x.transpose(-1, -2)                       # (B, 1, T, T)
    change = (inputs_gram @ score_grads @ (k @ k.transpose(-1, -2))
              + (q @ q.transpose(-1, -2)) @ score_grads @ inputs_gram)
    return _masked(-eta / record.d_k * change, record)


def better_key_mass_change(weights: torch.Tensor, advantage: torch.Tensor,
                           score_change: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per query row, the change of the attention mass on the keys with ``A_ij < 0``.

    Args:
        weights: ``alpha`` ``(..., T, T)`` before the step (zero where masked).
        advantage: ``A`` ``(..., T, T)``.
        score_change: ``ds = s' - s`` ``(..., T, T)``, finite (zero where masked).

    Returns:
        ``(exact, first_order)``, each ``(..., T)``: the mass on those keys after the step
        minus before (``alpha' = softmax(log alpha + ds)``, the softmax being blind to a
        shift of a row), and its first-order prediction
        ``sum_{j: A_ij < 0} alpha_ij (ds_ij - sum_l alpha_il ds_il)``.
    """
    better = advantage < 0
    new_weights = torch.softmax(torch.log(weights) + score_change, dim=-1)
    exact = ((new_weights - weights) * better).sum(-1)
    centred = score_change - (weights * score_change).sum(-1, keepdim=True)
    first_order = (weights * centred * better).sum(-1)
    return exact, first_order
