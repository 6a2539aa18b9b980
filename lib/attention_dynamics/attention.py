"""Causal softmax attention that exposes everything the book differentiates.

Convention (row vectors, as in code): for an input sequence ``x`` of shape ``(T, d_x)``,

    q = x W_Q,  k = x W_K,  v = x W_V,   s_ij = q_i . k_j / sqrt(d_k),
    alpha_i = softmax_j(s_ij) over the allowed j (j <= i when causal),   o_i = sum_j alpha_ij v_j.

``W_Q`` has shape ``(d_x, d_k)``; the papers write ``q_i = W_Q x_i`` with the transpose. Leading
dimensions broadcast, so one call handles a batch of sequences, a stack of heads, or a stack of
independent runs: ``x`` of shape ``(B, 1, T, d_x)`` with ``w_q`` of shape ``(H, d_x, d_k)`` gives
``q`` of shape ``(B, H, T, d_k)``.

Names follow TransformerLens's hook points (``hook_q``, ``hook_attn_scores``, ``hook_pattern``…)
in spirit: the record holds ``q``, ``k``, ``v``, ``scores``, ``weights`` (the pattern) and
``output``. Nothing is stored globally: each forward returns its own record.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from attention_dynamics.validation import check_float_tensor, check_mask


def causal_mask(length: int, device: torch.device | str | None = None) -> torch.Tensor:
    """Boolean ``(length, length)`` mask, ``True`` where query ``i`` may attend to key ``j <= i``."""
    if not isinstance(length, int) or length < 1:
        raise ValueError(f"length must be a positive int; got {length!r}")
    return torch.ones(length, length, dtype=torch.bool, device=device).tril()


@dataclass
class AttentionRecord:
    """Everything one attention forward pass computed (shapes for ``x`` of shape ``(..., T, d_x)``).

    Attributes:
        x: inputs ``(..., T, d_x)``.
        q, k: queries and keys ``(..., T, d_k)``.
        v: values ``(..., T, d_v)``.
        scores: scaled scores ``s = q k^T / sqrt(d_k)``, ``(..., T, T)``; disallowed entries ``-inf``.
        weights: attention weights ``alpha`` (rows sum to one over allowed keys), ``(..., T, T)``.
        output: ``o = alpha v``, ``(..., T, d_v)``.
        mask: boolean ``(T, T)`` mask of allowed pairs, or ``None`` for full attention.
    """

    x: torch.Tensor
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    scores: torch.Tensor
    weights: torch.Tensor
    output: torch.Tensor
    mask: torch.Tensor | None

    @property
    def d_k(self) -> int:
        """Key dimension, which sets the score scale ``1 / sqrt(d_k)``."""
        return self.q.shape[-1]

    @property
    def upstream(self) -> torch.Tensor:
        """``u = dL/do`` of shape ``(..., T, d_v)``, available after ``loss.backward()``.

        Only when the forward pass was run with ``retain_upstream=True``.
        """
        if not self.output.retains_grad or self.output.grad is None:
            raise RuntimeError("no upstream gradient: run the forward pass with "
                               "retain_upstream=True and call backward() on a loss first")
        return self.output.grad


def _resolve_mask(mask: torch.Tensor | str | None, length: int, device) -> torch.Tensor | None:
    if isinstance(mask, str):
        if mask != "causal":
            raise ValueError(f"mask must be 'causal', None or a boolean (T, T) tensor; got {mask!r}")
        return causal_mask(length, device)
    if mask is None:
        return None
    return check_mask("mask", mask, length)


def attention_forward(
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    w_v: torch.Tensor,
    mask: torch.Tensor | str | None = "causal",
    retain_upstream: bool = False,
) -> AttentionRecord:
    """One softmax attention layer, returning all its intermediate tensors.

    Args:
        x: inputs ``(..., T, d_x)``, floating point.
        w_q, w_k: projections ``(..., d_x, d_k)``; leading dims broadcast against ``x``'s.
        w_v: value projection ``(..., d_x, d_v)``.
        mask: ``"causal"`` (default), ``None`` (every query sees every key) or a boolean
            ``(T, T)`` tensor, ``True`` where attending is allowed; every row needs one ``True``.
        retain_upstream: keep ``dL/do`` after backward, readable as ``record.upstream``.

    Returns:
        An :class:`AttentionRecord`.
    """
    check_float_tensor("x", x, min_dim=2)
    d_x = x.shape[-1]
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        check_float_tensor(name, w, min_dim=2, dtype=x.dtype)
        if w.shape[-2] != d_x:
            raise ValueError(f"{name} must have shape (..., d_x={d_x}, d); got {tuple(w.shape)}")
    if w_q.shape[-1] != w_k.shape[-1]:
        raise ValueError(f"w_q and w_k must share d_k; got {w_q.shape[-1]} and {w_k.shape[-1]}")
    length = x.shape[-2]
    mask = _resolve_mask(mask, length, x.device)

    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    output = weights @ v
    if retain_upstream and output.requires_grad:
        output.retain_grad()
    return AttentionRecord(x=x, q=q, k=k, v=v, scores=scores, weights=weights, output=output,
                           mask=mask)


class CausalSelfAttention(nn.Module):
    """A stack of ``n_heads`` independent causal attention heads without biases.

    Parameters ``w_q``, ``w_k`` of shape ``(n_heads, d_in, d_k)`` and ``w_v`` of shape
    ``(n_heads, d_in, d_v)``, initialised ``N(0, init_std^2)``. ``forward`` maps ``(B, T, d_in)``
    to per-head outputs ``(B, n_heads, T, d_v)``; heads are concatenated by the caller if needed.
    """

    def __init__(self, d_in: int, d_k: int, d_v: int, n_heads: int = 1, init_std: float = 0.1,
                 causal: bool = True, generator: torch.Generator | None = None,
                 dtype: torch.dtype = torch.float32, device: torch.device | str | None = None):
        super().__init__()
        for name, value in (("d_in", d_in), ("d_k", d_k), ("d_v", d_v), ("n_heads", n_heads)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int; got {value!r}")
        if not init_std > 0:
            raise ValueError(f"init_std must be positive; got {init_std!r}")
        self.causal = causal

        def init(*shape):
            w = torch.randn(*shape, generator=generator, dtype=dtype, device=device)
            return nn.Parameter(w * init_std)

        self.w_q = init(n_heads, d_in, d_k)
        self.w_k = init(n_heads, d_in, d_k)
        self.w_v = init(n_heads, d_in, d_v)

    def forward(self, x: torch.Tensor, retain_upstream: bool = False) -> AttentionRecord:
        """Run every head on ``x`` of shape ``(B, T, d_in)``; outputs have shape ``(B, H, T, d_v)``."""
        check_float_tensor("x", x, min_dim=3, max_dim=3)
        return attention_forward(x.unsqueeze(-3), self.w_q, self.w_k, self.w_v,
                                 mask="causal" if self.causal else None,
                                 retain_upstream=retain_upstream)

    def output_only(self, x: torch.Tensor) -> torch.Tensor:
        """The heads' outputs ``(B, H, T, d_v)`` for ``x`` ``(B, T, d_in)``, without a record.

        The same function as :meth:`forward` (equal up to floating-point rounding) through
        torch's fused ``scaled_dot_product_attention``, which never stores the ``(T, T)``
        weights: the path for training when no diagnostic is read.
        """
        check_float_tensor("x", x, min_dim=3, max_dim=3)
        heads, d_in, d_k = self.w_q.shape
        d_v = self.w_v.shape[-1]
        # one (d_in, H (2 d_k + d_v)) matmul instead of B H small ones
        stacked = torch.cat([w.transpose(0, 1).reshape(d_in, -1)
                             for w in (self.w_q, self.w_k, self.w_v)], dim=1)
        q, k, v = (x @ stacked).split([heads * d_k, heads * d_k, heads * d_v], dim=-1)

        def per_head(t: torch.Tensor) -> torch.Tensor:  # (B, T, H d) -> (B, H, T, d)
            return t.unflatten(-1, (heads, -1)).transpose(1, 2)

        return nn.functional.scaled_dot_product_attention(per_head(q), per_head(k), per_head(v),
                                                          is_causal=self.causal)
