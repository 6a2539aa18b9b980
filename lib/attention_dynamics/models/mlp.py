"""The attention-free control: a per-position MLP with the transformer's embeddings and head.

Paper I's negative control. Each position is processed on its own: token and position
embeddings, then residual pre-norm MLP blocks, then the tied head::

    h_0 = E[tokens] + P[positions];   h_{l+1} = h_l + MLP_l(RMSNorm(h_l));   logits = RMSNorm(h_L) E^T

No operation mixes positions, so the logits at position ``t`` are a function of
``(tokens[t], t)`` alone: whatever the training, the model cannot use its context. On the
bijection task its best predictive is the context-free marginal, uniform over the ``V``
values, and its entropy gap to Bayes is at least
:func:`~attention_dynamics.tasks.bijection.mean_entropy_gap_of_marginal`.

:meth:`MLPConfig.matching` sizes it to a transformer's parameter count: the same depth and
width, each MLP widened by ``2 d_model`` to absorb the ``4 d_model^2`` attention weights.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from attention_dynamics.models.transformer import TransformerConfig, init_normal_
from attention_dynamics.validation import check_positive_int_fields


@dataclass(frozen=True)
class MLPConfig:
    """Sizes of an :class:`MLP` (see :class:`~attention_dynamics.models.transformer.TransformerConfig`)."""

    vocab_size: int
    max_len: int
    n_layers: int = 2
    d_model: int = 64
    d_ff: int = 256
    init_std: float = 0.02

    def __post_init__(self):
        check_positive_int_fields(self, ("vocab_size", "max_len", "n_layers", "d_model", "d_ff"))
        if not self.init_std > 0:
            raise ValueError(f"init_std must be positive; got {self.init_std!r}")

    @classmethod
    def matching(cls, config: TransformerConfig) -> MLPConfig:
        """The MLP with ``config``'s vocabulary, length, depth and width and about its parameters.

        A transformer block holds ``4 d^2`` attention weights (``W_Q, W_K, W_V, W_O``) and
        ``2 d d_ff`` MLP weights; an MLP block of hidden width ``d_ff + 2d`` holds as many. The
        counts differ only by the ``2d`` extra biases and the attention norm's ``d`` gains.
        """
        return cls(vocab_size=config.vocab_size, max_len=config.max_len,
                   n_layers=config.n_layers, d_model=config.d_model,
                   d_ff=config.d_ff + 2 * config.d_model, init_std=config.init_std)


class MLP(nn.Module):
    """Per-position residual MLP mapping tokens ``(B, T)`` to logits ``(B, T, vocab)``.

    Args:
        config: the sizes.
        generator: a CPU ``torch.Generator`` that draws every initial weight.
    """

    def __init__(self, config: MLPConfig, generator: torch.Generator):
        super().__init__()
        self.config = config
        d = config.d_model
        self.embed = nn.Embedding(config.vocab_size, d)
        self.positions = nn.Embedding(config.max_len, d)
        init_normal_(self.embed.weight, config.init_std, generator)
        init_normal_(self.positions.weight, config.init_std, generator)
        self.norms = nn.ModuleList(nn.RMSNorm(d, eps=1e-5) for _ in range(config.n_layers))
        self.inner = nn.ModuleList(nn.Linear(d, config.d_ff) for _ in range(config.n_layers))
        self.outer = nn.ModuleList(nn.Linear(config.d_ff, d) for _ in range(config.n_layers))
        out_std = config.init_std / math.sqrt(config.n_layers)
        for inner, outer in zip(self.inner, self.outer, strict=True):
            init_normal_(inner.weight, config.init_std, generator)
            init_normal_(outer.weight, out_std, generator)
            nn.init.zeros_(inner.bias)
            nn.init.zeros_(outer.bias)
        self.norm_final = nn.RMSNorm(d, eps=1e-5)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, T, vocab)`` for ``tokens`` ``(B, T)`` int64 with ``T <= max_len``."""
        if not isinstance(tokens, torch.Tensor) or tokens.dtype != torch.int64 or tokens.ndim != 2:
            raise ValueError("tokens must be a (B, T) int64 tensor")
        length = tokens.shape[1]
        if not 1 <= length <= self.config.max_len:
            raise ValueError(f"sequence length must be in 1..max_len={self.config.max_len}; "
                             f"got {length}")
        h = self.embed(tokens) + self.positions(torch.arange(length, device=tokens.device))
        for norm, inner, outer in zip(self.norms, self.inner, self.outer, strict=True):
            h = h + outer(nn.functional.gelu(inner(norm(h))))
        return self.norm_final(h) @ self.embed.weight.T
