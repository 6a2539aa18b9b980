"""Sequence models with one interface: tokens ``(B, T)`` int64 in, logits ``(B, T, vocab)`` out.

- :mod:`~attention_dynamics.models.transformer` — the small GPT of the wind tunnels, which
  exposes its queries, keys, values, attention weights and residual stream;
- :mod:`~attention_dynamics.models.mlp` — the attention-free per-position control.
"""

from torch import nn

from .mlp import MLP, MLPConfig
from .transformer import Transformer, TransformerConfig, TransformerRecord

__all__ = ["MLP", "MLPConfig", "Transformer", "TransformerConfig", "TransformerRecord",
           "count_parameters"]


def count_parameters(model: nn.Module) -> int:
    """Number of trainable scalars of ``model`` (a tied weight counted once)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
