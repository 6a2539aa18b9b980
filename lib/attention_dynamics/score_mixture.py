"""The EM reading made precise: the score mixture's free energy, its evidence, and the M-step.

Chapter 3 reads a row of softmax attention as the E-step of a mixture whose likelihoods are
``exp(s_ij)`` under a uniform prior over the visible positions (the *score mixture*). Its Gibbs
free energy ``F(q) = sum_j q_j s_ij + H(q)`` equals ``log Z_i - KL(q || alpha_i)`` with
``Z_i = sum_j exp(s_ij)`` (:func:`gibbs_free_energy`), so ``alpha_i`` is its exact maximiser and
the maximum is the row's log-evidence up to the prior's ``log n_i`` (:func:`log_evidence`).
EM would climb that evidence; training descends the cross-entropy instead, which is not it.

The M-step counterpart for a head read out by a softmax over ``C`` classes explains query
``i`` by one source's value: ``Q(V) = sum_i sum_j alpha_ij ell_i(v_j)`` with
``ell_i(v) = -log softmax(v W_O)[y_i]`` (:func:`m_step_objective`, given the value logits
``v_j W_O``). Per source it is a cross-entropy against the responsibility-weighted histogram of
the classes that source explains (:func:`class_histograms`), so over free value logits its
minimiser is that histogram's log (:func:`closed_form_m_step`, the minimum
:func:`m_step_floor`); with values ``x_j W_V`` it is one convex, weighted softmax regression in
``W_V``. The head's own loss (:func:`head_loss`) lies below ``Q`` by Jensen's inequality.

Shapes: scores and weights ``(..., T, S)`` (``T`` queries, ``S`` sources), an optional boolean
``mask`` broadcasting against them (``True`` where a query may read a source), targets
``(..., T)`` class indices, value logits ``(..., S, C)``.
"""

from __future__ import annotations

import math

import torch

from attention_dynamics.validation import check_float_tensor, check_positive_int


def _allowed(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    allowed = torch.ones_like(scores, dtype=torch.bool) if mask is None else mask.expand_as(scores)
    if not allowed.any(-1).all():
        raise ValueError("mask must allow at least one source in every query row")
    return allowed


def log_evidence(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """``(..., T)`` log-evidence of each row's score mixture: ``log mean_j exp(s_ij)`` (nats).

    The mean runs over the visible sources (the uniform prior of the score mixture).
    """
    check_float_tensor("scores", scores, min_dim=1)
    allowed = _allowed(scores, mask)
    visible = scores.masked_fill(~allowed, -math.inf)
    return torch.logsumexp(visible, dim=-1) - allowed.sum(-1).to(scores.dtype).log()


def gibbs_free_energy(q: torch.Tensor, scores: torch.Tensor,
                      mask: torch.Tensor | None = None) -> torch.Tensor:
    """``(..., T)`` ``F(q_i) = sum_j q_ij s_ij + H(q_i)`` in nats, for distributions ``q``.

    ``q`` has the shape of ``scores``, rows summing to one and zero where the mask forbids;
    ``0 log 0 = 0``. ``F(q_i) = log sum_j exp(s_ij) - KL(q_i || softmax(s_i))``, largest at the
    softmax.
    """
    check_float_tensor("q", q, min_dim=1)
    check_float_tensor("scores", scores, min_dim=1)
    if q.shape != scores.shape:
        raise ValueError(f"q must have the scores' shape {tuple(scores.shape)}; got {tuple(q.shape)}")
    allowed = _allowed(scores, mask)
    if (q < 0).any() or (q[~allowed] != 0).any():
        raise ValueError("q must be non-negative and zero where the mask forbids")
    if not torch.allclose(q.sum(-1), torch.ones((), dtype=q.dtype)):
        raise ValueError("every row of q must sum to one")
    entropy = -torch.xlogy(q, q).sum(-1)
    return (q * scores.masked_fill(~allowed, 0.0)).sum(-1) + entropy


def class_histograms(weights: torch.Tensor, targets: torch.Tensor,
                     n_classes: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The classes each source explains, weighted by its responsibilities.

    Args:
        weights: ``(..., T, S)`` attention weights (rows summing to one).
        targets: ``(..., T)`` class indices in ``[0, n_classes)``.
        n_classes: ``C``.

    Returns:
        ``(histograms, mass)``: ``(..., S, C)`` the distribution
        ``h_j[c] = sum_i alpha_ij [y_i = c] / lambda_j`` (zero rows where ``lambda_j = 0``) and
        ``(..., S)`` the responsibility mass ``lambda_j = sum_i alpha_ij``.
    """
    check_float_tensor("weights", weights, min_dim=2)
    if targets.shape != weights.shape[:-1] or targets.dtype != torch.long:
        raise ValueError(f"targets must be a long tensor of shape {tuple(weights.shape[:-1])}; "
                         f"got {targets.dtype} {tuple(targets.shape)}")
    if targets.numel() and (targets.min() < 0 or targets.max() >= n_classes):
        raise ValueError(f"targets must lie in [0, n_classes={n_classes})")
    one_hot = torch.nn.functional.one_hot(targets, n_classes).to(weights.dtype)  # (..., T, C)
    counts = weights.transpose(-1, -2) @ one_hot                                   # (..., S, C)
    mass = counts.sum(-1)
    histograms = counts / mass.clamp_min(torch.finfo(weights.dtype).tiny)[..., None]
    return histograms, mass


def m_step_objective(weights: torch.Tensor, value_logits: torch.Tensor,
                     targets: torch.Tensor) -> torch.Tensor:
    """``Q = sum_i sum_j alpha_ij (-log softmax(z_j)[y_i])``, summed over everything (nats).

    Args:
        weights: ``(..., T, S)`` the responsibilities, held fixed.
        value_logits: ``(..., S, C)`` ``z_j = v_j W_O``, each source's own prediction.
        targets: ``(..., T)`` class indices.
    """
    check_float_tensor("value_logits", value_logits, min_dim=2)
    histograms, mass = class_histograms(weights, targets, value_logits.shape[-1])
    log_p = torch.log_softmax(value_logits, dim=-1)
    terms = torch.where(histograms > 0, histograms * log_p, 0.0)  # 0 log 0 = 0
    return -(mass[..., None] * terms).sum()


def head_loss(weights: torch.Tensor, values: torch.Tensor, readout: torch.Tensor,
              targets: torch.Tensor) -> torch.Tensor:
    """The head's own cross-entropy ``L = sum_i -log softmax((sum_j alpha_ij v_j) W_O)[y_i]``.

    Args:
        weights: ``(..., T, S)``; values: ``(..., S, d_v)``; readout: ``(d_v, C)``;
        targets: ``(..., T)`` class indices. Summed over everything (nats).
    """
    logits = (weights @ values) @ readout
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                             targets.reshape(-1), reduction="sum")


def closed_form_m_step(weights: torch.Tensor, targets: torch.Tensor, n_classes: int) -> torch.Tensor:
    """``(..., S, C)`` value logits that minimise :func:`m_step_objective`: ``log h_j``.

    Per source, ``Q_j(z) = lambda_j CE(h_j, softmax(z))`` is smallest, at ``lambda_j H(h_j)``,
    when ``softmax(z) = h_j`` (Gibbs' inequality); any logits do for a source with no mass.
    Where ``h_j`` has a zero the logit is ``-inf``: the infimum is then a limit. A readout
    ``W_O`` whose rows span the logits modulo the all-ones direction realises any finite
    ``log h_j`` as ``v_j W_O``.
    """
    histograms, _ = class_histograms(weights, targets, n_classes)
    return histograms.log()


def m_step_floor(weights: torch.Tensor, targets: torch.Tensor, n_classes: int) -> torch.Tensor:
    """The infimum of :func:`m_step_objective` over free value logits:
    ``sum_j lambda_j H(h_j)`` (nats), attained by :func:`closed_form_m_step` where every
    histogram is positive and approached otherwise."""
    histograms, mass = class_histograms(weights, targets, n_classes)
    return (mass * -torch.xlogy(histograms, histograms).sum(-1)).sum()


def descend_values(weights: torch.Tensor, values: torch.Tensor, readout: torch.Tensor,
                   targets: torch.Tensor, steps: int, lr: float) -> torch.Tensor:
    """``values`` after ``steps`` plain gradient steps of size ``lr`` on :func:`head_loss`,
    the weights and readout held fixed (a new tensor; shapes as there)."""
    check_positive_int("steps", steps)
    values = values.detach()
    for _ in range(steps):
        leaf = values.clone().requires_grad_()
        (grad,) = torch.autograd.grad(head_loss(weights, leaf, readout, targets), leaf)
        values = values - lr * grad
    return values
