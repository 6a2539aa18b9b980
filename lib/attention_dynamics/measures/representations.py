"""The last residual stream of a sequence model, before and after its final norm.

Both the :class:`~attention_dynamics.models.transformer.Transformer` and the capacity-matched
:class:`~attention_dynamics.models.mlp.MLP` end in ``logits = norm_final(h) E^T``. The authors'
value-manifold scripts read ``h`` (before the norm) in one place and the normed stream in
another, so the geometry of chapter 4 needs both, for either model, from one forward pass.
"""

from __future__ import annotations

import torch
from torch import nn

from attention_dynamics.runtime import evaluation_mode


@torch.no_grad()
def final_streams(model: nn.Module, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The stream entering ``model.norm_final`` and leaving it, each ``(B, T, d_model)``.

    Args:
        model: a module with a ``norm_final`` submodule applied once per forward pass (the
            book's Transformer and MLP); run in eval mode for the call.
        tokens: ``(B, T)`` int64.

    Returns:
        ``(before_norm, after_norm)``, detached.
    """
    norm = getattr(model, "norm_final", None)
    if not isinstance(norm, nn.Module):
        raise ValueError(f"model must have a norm_final module (Transformer or MLP); got "
                         f"{type(model).__name__}")
    seen: list[tuple[torch.Tensor, torch.Tensor]] = []

    def keep(_module, inputs, output):
        seen.append((inputs[0].detach(), output.detach()))

    handle = norm.register_forward_hook(keep)
    try:
        with evaluation_mode(model):
            model(tokens)
    finally:
        handle.remove()
    if len(seen) != 1:
        raise RuntimeError(f"norm_final ran {len(seen)} times in one forward pass; expected once")
    return seen[0]
