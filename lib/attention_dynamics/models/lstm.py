"""An LSTM language model with the transformer's interface and readable gates.

Paper I's recurrent control. Its gates at position ``t`` see only the current input and the
previous hidden state, never the content of other positions directly: the architecture
routes by order, not by content. The model::

    h^0 = E[tokens]                                        (B, T, d_model)
    h^{l+1} = LSTM_l(h^l)                                  one single-layer LSTM per layer
    logits = RMSNorm(h^L) E^T                              (B, T, vocab), head tied to E

Each layer follows PyTorch's :class:`torch.nn.LSTM` (gate order input, forget, cell,
output)::

    i_t = sigma(W_ii x_t + b_ii + W_hi h_{t-1} + b_hi)      f_t, o_t likewise (sigmoid)
    g_t = tanh(W_ig x_t + b_ig + W_hg h_{t-1} + b_hg)
    c_t = f_t * c_{t-1} + i_t * g_t,    h_t = o_t * tanh(c_t),    h_0 = c_0 = 0.

The ordinary forward pass runs ``torch.nn.LSTM``; ``return_record=True`` runs the same
weights through an explicit cell loop that keeps the gates (tested to match ``nn.LSTM``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from attention_dynamics.validation import check_positive_int_fields, check_tokens


@dataclass(frozen=True)
class LSTMConfig:
    """Sizes of an :class:`LSTM` model.

    Attributes:
        vocab_size: tokens in and out (the head is tied to the embedding).
        max_len: the longest accepted sequence (the model has no position table: the
            recurrence carries order; the bound keeps the interface of the other models).
        n_layers: stacked LSTM layers.
        d_model: embedding width, and hidden and cell width of every layer.
        init_std: standard deviation of the normal initialisation of the token embedding; the
            LSTM weights and biases follow PyTorch's ``U(-1/sqrt(d_model), 1/sqrt(d_model))``.
    """

    vocab_size: int
    max_len: int
    n_layers: int = 2
    d_model: int = 64
    init_std: float = 0.02

    def __post_init__(self):
        check_positive_int_fields(self, ("vocab_size", "max_len", "n_layers", "d_model"))
        if not self.init_std > 0:
            raise ValueError(f"init_std must be positive; got {self.init_std!r}")


@dataclass
class LSTMLayerRecord:
    """Gates and states of one LSTM layer, each ``(B, T, d_model)``.

    Attributes:
        input_gate, forget_gate, output_gate: ``i_t``, ``f_t``, ``o_t`` in ``(0, 1)``.
        candidate: ``g_t`` in ``(-1, 1)``, the proposed cell content.
        cell: ``c_t``, the cell state.
        hidden: ``h_t``, the layer's output.
    """

    input_gate: torch.Tensor
    forget_gate: torch.Tensor
    output_gate: torch.Tensor
    candidate: torch.Tensor
    cell: torch.Tensor
    hidden: torch.Tensor


@dataclass
class LSTMRecord:
    """Internals of one forward pass of :class:`LSTM`.

    Attributes:
        residual: ``n_layers + 1`` tensors ``(B, T, d_model)``: the stream entering each
            layer, then leaving the last one (the embeddings, then each layer's hidden
            states; the LSTM has no skip connections, so each layer replaces the stream).
        layers: one :class:`LSTMLayerRecord` per layer.
        final: ``(B, T, d_model)``, the normed last stream that the tied head reads.
    """

    residual: list[torch.Tensor]
    layers: list[LSTMLayerRecord]
    final: torch.Tensor


def lstm_with_gates(lstm: nn.LSTM, x: torch.Tensor) -> LSTMLayerRecord:
    """Run a single-layer, unidirectional, ``batch_first`` ``nn.LSTM`` step by step, keeping its gates.

    Args:
        lstm: the module whose weights to use (``weight_ih_l0`` ``(4H, d_in)``,
            ``weight_hh_l0`` ``(4H, H)`` and both biases ``(4H,)``).
        x: ``(B, T, d_in)`` inputs.

    Returns:
        The :class:`LSTMLayerRecord`; its ``hidden`` equals ``lstm(x)[0]`` up to rounding.
    """
    if (lstm.num_layers != 1 or lstm.bidirectional or not lstm.batch_first or not lstm.bias
            or lstm.proj_size):
        raise ValueError("lstm must be a single-layer, unidirectional, batch_first nn.LSTM "
                         "with biases and no projection")
    pre = x @ lstm.weight_ih_l0.T + lstm.bias_ih_l0 + lstm.bias_hh_l0  # (B, T, 4H)
    h = x.new_zeros(x.shape[0], lstm.hidden_size)
    c = torch.zeros_like(h)
    steps = {name: [] for name in ("input_gate", "forget_gate", "candidate", "output_gate",
                                   "cell", "hidden")}
    for pre_t in pre.unbind(1):
        i, f, g, o = (pre_t + h @ lstm.weight_hh_l0.T).chunk(4, dim=-1)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c = f * c + i * g
        h = o * torch.tanh(c)
        for name, value in zip(steps, (i, f, g, o, c, h), strict=True):
            steps[name].append(value)
    return LSTMLayerRecord(**{name: torch.stack(values, dim=1) for name, values in steps.items()})


class LSTM(nn.Module):
    """A stacked LSTM language model mapping tokens ``(B, T)`` to logits ``(B, T, vocab)``.

    Args:
        config: the sizes.
        generator: a CPU ``torch.Generator`` that draws every initial weight (move the model
            with ``.to(device)`` afterwards), so that a seed fixes the initialisation.
    """

    def __init__(self, config: LSTMConfig, generator: torch.Generator):
        super().__init__()
        self.config = config
        d = config.d_model
        self.embed = nn.Embedding(config.vocab_size, d)
        self.layers = nn.ModuleList(nn.LSTM(d, d, batch_first=True) for _ in range(config.n_layers))
        self.norm_final = nn.RMSNorm(d, eps=1e-5)
        bound = 1 / math.sqrt(d)
        with torch.no_grad():
            self.embed.weight.copy_(torch.randn(self.embed.weight.shape, generator=generator)
                                    * config.init_std)
            for layer in self.layers:
                for weight in layer.parameters():
                    weight.copy_((torch.rand(weight.shape, generator=generator) * 2 - 1) * bound)

    def forward(self, tokens: torch.Tensor, return_record: bool = False
                ) -> torch.Tensor | tuple[torch.Tensor, LSTMRecord]:
        """Logits ``(B, T, vocab)`` for ``tokens`` ``(B, T)`` int64 with ``T <= max_len``.

        With ``return_record=True``, also the :class:`LSTMRecord` of the pass (computed by
        :func:`lstm_with_gates`, slower than ``nn.LSTM``'s fused kernel).
        """
        check_tokens(tokens, self.config.max_len)
        h = self.embed(tokens)
        residual, records = [h], []
        for layer in self.layers:
            if return_record:
                record = lstm_with_gates(layer, h)
                h = record.hidden
                records.append(record)
            else:
                h = layer(h)[0]
            residual.append(h)
        final = self.norm_final(h)
        logits = final @ self.embed.weight.T
        if return_record:
            return logits, LSTMRecord(residual=residual, layers=records, final=final)
        return logits
