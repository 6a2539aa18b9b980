"""A small GPT: pre-RMSNorm blocks, learned positions, a head tied to the token embedding.

The shape of Paper I's wind-tunnel model (6 layers, 6 heads, d_model 192, d_ff 768 for the
bijection; 9 layers, d_model 256 for the HMM), written so that everything the geometry of
chapter 4 measures can be read off a forward pass::

    h_0 = E[tokens] + P[positions]                        (B, T, d)
    for each layer l:   a_l = attention_l(RMSNorm(h_l))   per-head q, k, v, weights recorded
                        h_l' = h_l + W_O concat_heads(a_l)
                        h_{l+1} = h_l' + MLP(RMSNorm(h_l'))
    logits = RMSNorm(h_L) E^T                             (B, T, vocab)

Each layer's heads are a :class:`~attention_dynamics.attention.CausalSelfAttention`, so the
record of a layer is the same :class:`~attention_dynamics.attention.AttentionRecord` that the
closed-form gradients of chapters 1-3 read. Ablations: a head mask zeroes chosen heads'
outputs, and a bypassed layer passes its input through unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from torch import nn

from attention_dynamics.attention import AttentionRecord, CausalSelfAttention
from attention_dynamics.validation import check_positive_int_fields


@dataclass(frozen=True)
class TransformerConfig:
    """Sizes of a :class:`Transformer`.

    Attributes:
        vocab_size: tokens in and out (the head is tied to the embedding).
        max_len: the longest sequence (rows of the learned position table).
        n_layers, n_heads, d_model: depth, heads per layer, residual width;
            ``d_model`` must be a multiple of ``n_heads`` (head width ``d_model / n_heads``).
        d_ff: hidden width of each MLP; ``None`` means ``4 d_model``.
        init_std: standard deviation of the normal initialisation of every weight matrix and
            of the token and position tables; the two projections back into the residual
            stream are further divided by ``sqrt(2 n_layers)`` (GPT-2's scheme), biases start
            at zero, norm gains at one.
    """

    vocab_size: int
    max_len: int
    n_layers: int = 2
    n_heads: int = 4
    d_model: int = 64
    d_ff: int | None = None
    init_std: float = 0.02

    def __post_init__(self):
        if self.d_ff is None:
            object.__setattr__(self, "d_ff", 4 * self.d_model)
        check_positive_int_fields(self, ("vocab_size", "max_len", "n_layers", "n_heads", "d_model", "d_ff"))
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be a multiple of n_heads "
                             f"({self.n_heads})")
        if not self.init_std > 0:
            raise ValueError(f"init_std must be positive; got {self.init_std!r}")

    @property
    def d_head(self) -> int:
        """Width of each head's queries, keys and values."""
        return self.d_model // self.n_heads


@dataclass
class TransformerRecord:
    """Internals of one forward pass (``B`` sequences, ``T`` positions, ``H`` heads).

    Attributes:
        residual: ``n_layers + 1`` tensors ``(B, T, d_model)``: the residual stream entering
            each layer, then leaving the last one.
        attention: one :class:`~attention_dynamics.attention.AttentionRecord` per layer, with
            ``q``, ``k`` ``(B, H, T, d_head)``, ``v`` ``(B, H, T, d_head)`` and ``weights``
            ``(B, H, T, T)``, computed from the normed stream ``x`` ``(B, 1, T, d_model)``.
            A bypassed layer has ``None``.
        final: ``(B, T, d_model)``, the normed last stream that the tied head reads.
    """

    residual: list[torch.Tensor]
    attention: list[AttentionRecord | None]
    final: torch.Tensor


class _Block(nn.Module):
    """Pre-norm attention and MLP sublayers, each added to the residual stream."""

    def __init__(self, config: TransformerConfig, generator: torch.Generator):
        super().__init__()
        d, h = config.d_model, config.n_heads
        self.norm_attn = nn.RMSNorm(d, eps=1e-5)
        self.attn = CausalSelfAttention(d, config.d_head, config.d_head, n_heads=h,
                                        init_std=config.init_std, generator=generator)
        self.w_o = nn.Linear(d, d, bias=False)
        self.norm_mlp = nn.RMSNorm(d, eps=1e-5)
        self.mlp_in = nn.Linear(d, config.d_ff)
        self.mlp_out = nn.Linear(config.d_ff, d)
        out_std = config.init_std / math.sqrt(2 * config.n_layers)
        for linear, std in ((self.w_o, out_std), (self.mlp_in, config.init_std),
                            (self.mlp_out, out_std)):
            init_normal_(linear.weight, std, generator)
            if linear.bias is not None:
                nn.init.zeros_(linear.bias)

    def forward(self, h: torch.Tensor, head_mask: torch.Tensor, keep_record: bool
                ) -> tuple[torch.Tensor, AttentionRecord | None]:
        x = self.norm_attn(h)
        record = self.attn(x) if keep_record else None
        heads = record.output if keep_record else self.attn.output_only(x)  # (B, H, T, d_head)
        heads = heads * head_mask[:, None, None]
        h = h + self.w_o(heads.transpose(1, 2).flatten(2))
        h = h + self.mlp_out(nn.functional.gelu(self.mlp_in(self.norm_mlp(h))))
        return h, record


def init_normal_(weight: torch.Tensor, std: float, generator: torch.Generator) -> None:
    """Overwrite ``weight`` with ``N(0, std^2)`` draws from ``generator`` (a CPU generator)."""
    with torch.no_grad():
        weight.copy_(torch.randn(weight.shape, generator=generator) * std)


class Transformer(nn.Module):
    """A decoder-only transformer mapping tokens ``(B, T)`` to logits ``(B, T, vocab)``.

    Args:
        config: the sizes.
        generator: a CPU ``torch.Generator`` that draws every initial weight (move the model
            with ``.to(device)`` afterwards), so that a seed fixes the initialisation.

    Buffers ``head_mask`` ``(n_layers, n_heads)`` (1 = active) and ``bypass`` ``(n_layers,)``
    (``True`` = skip the layer) hold the ablations; set them with :meth:`ablated`.
    """

    def __init__(self, config: TransformerConfig, generator: torch.Generator):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.positions = nn.Embedding(config.max_len, config.d_model)
        init_normal_(self.embed.weight, config.init_std, generator)
        init_normal_(self.positions.weight, config.init_std, generator)
        self.blocks = nn.ModuleList(_Block(config, generator) for _ in range(config.n_layers))
        self.norm_final = nn.RMSNorm(config.d_model, eps=1e-5)
        self.register_buffer("head_mask", torch.ones(config.n_layers, config.n_heads))
        self.register_buffer("bypass", torch.zeros(config.n_layers, dtype=torch.bool))

    def forward(self, tokens: torch.Tensor, return_record: bool = False
                ) -> torch.Tensor | tuple[torch.Tensor, TransformerRecord]:
        """Logits ``(B, T, vocab)`` for ``tokens`` ``(B, T)`` int64 with ``T <= max_len``.

        With ``return_record=True``, also the :class:`TransformerRecord` of the pass. Without
        it, attention runs through torch's fused kernel and no ``(T, T)`` weights are stored.
        """
        if not isinstance(tokens, torch.Tensor) or tokens.dtype != torch.int64 or tokens.ndim != 2:
            raise ValueError(f"tokens must be a (B, T) int64 tensor; got "
                             f"{getattr(tokens, 'dtype', type(tokens).__name__)} of shape "
                             f"{tuple(getattr(tokens, 'shape', ()))}")
        length = tokens.shape[1]
        if not 1 <= length <= self.config.max_len:
            raise ValueError(f"sequence length must be in 1..max_len={self.config.max_len}; "
                             f"got {length}")
        h = self.embed(tokens) + self.positions(torch.arange(length, device=tokens.device))
        residual, records = [h], []
        for index, block in enumerate(self.blocks):
            if self.bypass[index]:
                records.append(None)
            else:
                h, record = block(h, self.head_mask[index], return_record)
                records.append(record)
            residual.append(h)
        final = self.norm_final(h)
        logits = final @ self.embed.weight.T
        if return_record:
            return logits, TransformerRecord(residual=residual, attention=records, final=final)
        return logits

    def token_keys(self, tokens: torch.Tensor) -> torch.Tensor:
        """Layer 0's keys of bare token embeddings, ``(n_heads, N, d_head)`` for ``tokens`` ``(N,)``.

        ``RMSNorm(E[token]) W_K`` per head, without a position: the key a token carries into
        the first layer wherever it stands, up to its position's contribution.
        """
        x = self.blocks[0].norm_attn(self.embed(tokens))
        return x @ self.blocks[0].attn.w_k

    @contextmanager
    def ablated(self, heads: Mapping[int, Sequence[int]] | None = None,
                bypass: Sequence[int] = ()) -> Iterator[Transformer]:
        """Within the ``with`` block, zero ``heads`` ``{layer: [head, ...]}`` and skip ``bypass``.

        The previous masks are restored on exit, even after an exception.
        """
        n_layers, n_heads = self.config.n_layers, self.config.n_heads
        heads = dict(heads or {})
        for layer in (*heads, *bypass):
            if not isinstance(layer, int) or not 0 <= layer < n_layers:
                raise ValueError(f"layer indices must be ints in 0..{n_layers - 1}; got {layer!r}")
        for layer, chosen in heads.items():
            if any(not isinstance(h, int) or not 0 <= h < n_heads for h in chosen):
                raise ValueError(f"head indices of layer {layer} must be ints in "
                                 f"0..{n_heads - 1}; got {list(chosen)!r}")
        saved = self.head_mask.clone(), self.bypass.clone()
        try:
            for layer, chosen in heads.items():
                self.head_mask[layer, list(chosen)] = 0.0
            self.bypass[list(bypass)] = True
            yield self
        finally:
            self.head_mask.copy_(saved[0])
            self.bypass.copy_(saved[1])

