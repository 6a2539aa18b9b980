"""Sequence models with one interface: tokens ``(B, T)`` int64 in, logits ``(B, T, vocab)`` out.

- :mod:`~attention_dynamics.models.transformer` — the small GPT of the wind tunnels, which
  exposes its queries, keys, values, attention weights and residual stream;
- :mod:`~attention_dynamics.models.mlp` — the attention-free per-position control;
- :mod:`~attention_dynamics.models.sizing` — parameter counts and capacity matching.
"""

from attention_dynamics.models.mlp import MLP, MLPConfig
from attention_dynamics.models.sizing import count_parameters
from attention_dynamics.models.transformer import Transformer, TransformerConfig, TransformerRecord

__all__ = ["MLP", "MLPConfig", "Transformer", "TransformerConfig", "TransformerRecord",
           "count_parameters"]
