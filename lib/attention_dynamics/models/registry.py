"""The four architectures of chapter 5 by name: configs, models, and configs matched in size.

:data:`ARCHITECTURES` names them; :func:`architecture_config` builds the config of one from its
sizes, :func:`build_model` the model of a config, and :func:`matched_config` the config whose
parameter count is nearest a target (the capacity matching of the chapter's comparison), varying
the size that :func:`varied_size` reads.
"""

from __future__ import annotations

import dataclasses

import torch
from torch import nn

from attention_dynamics.models.lstm import LSTM, LSTMConfig
from attention_dynamics.models.mamba import Mamba, MambaConfig
from attention_dynamics.models.mlp import MLP, MLPConfig
from attention_dynamics.models.sizing import SizeMatch, match_parameters
from attention_dynamics.models.transformer import Transformer, TransformerConfig
from attention_dynamics.validation import check_choice

ARCHITECTURES = ("transformer", "mamba", "lstm", "mlp")
"""The registered architectures, in the order the book tables them."""

_CONFIGS = {"transformer": TransformerConfig, "mamba": MambaConfig, "lstm": LSTMConfig,
            "mlp": MLPConfig}
_MODELS = {TransformerConfig: Transformer, MambaConfig: Mamba, LSTMConfig: LSTM, MLPConfig: MLP}
_SIZE_FIELD = {"transformer": "d_model", "mamba": "d_model", "lstm": "d_model", "mlp": "d_ff"}
"""The size :func:`matched_config` varies, which is the width, except for the MLP, whose hidden layer
grows at the transformer's residual width (as :meth:`MLPConfig.matching` sizes it)."""


def architecture_config(arch: str, vocab_size: int, max_len: int, **sizes):
    """The config dataclass of ``arch`` with these sizes (the config's own defaults elsewhere).

    Args:
        arch: one of :data:`ARCHITECTURES`.
        vocab_size, max_len: the task's vocabulary and longest sequence.
        sizes: fields of the architecture's config (``n_layers``, ``d_model``, ``d_state``, ...),
            options included (e.g. Mamba's ``variant="authors"``).

    Raises:
        ValueError: for an unknown ``arch`` or a size the config does not have.
    """
    check_choice("arch", arch, ARCHITECTURES)
    cls = _CONFIGS[arch]
    fields = {f.name for f in dataclasses.fields(cls)} - {"vocab_size", "max_len"}
    unknown = sorted(set(sizes) - fields)
    if unknown:
        raise ValueError(f"sizes has fields {unknown} that {cls.__name__} lacks; it takes "
                         f"{sorted(fields)}")
    return cls(vocab_size=vocab_size, max_len=max_len, **sizes)


def build_model(config, generator: torch.Generator) -> nn.Module:
    """The model of ``config`` (any registered config), its weights drawn from ``generator`` (CPU)."""
    if type(config) not in _MODELS:
        raise ValueError(f"config must be one of {[c.__name__ for c in _MODELS]}; got "
                         f"{type(config).__name__}")
    return _MODELS[type(config)](config, generator)


def architecture_of(config) -> str:
    """The registry name of a config, e.g. ``"mamba"`` for a
    :class:`~attention_dynamics.models.mamba.MambaConfig`."""
    for name, cls in _CONFIGS.items():
        if isinstance(config, cls):
            return name
    raise ValueError(f"config must be one of {[c.__name__ for c in _MODELS]}; got "
                     f"{type(config).__name__}")


def varied_size(config) -> int:
    """The size that :func:`matched_config` varies for this config's architecture: ``d_model``
    (transformer, Mamba, LSTM) or the MLP's hidden width ``d_ff``."""
    return getattr(config, _SIZE_FIELD[architecture_of(config)])


def matched_config(arch: str, vocab_size: int, max_len: int, target: int, multiple_of: int = 1,
                   high: int = 2048, **sizes) -> tuple[object, SizeMatch]:
    """The config of ``arch`` whose parameter count is nearest ``target``, and the match.

    The other ``sizes`` are fixed; the one varied is the width ``d_model`` (transformer, Mamba,
    LSTM) or the hidden width ``d_ff`` (MLP). For a transformer, ``d_ff`` follows the width as
    ``4 d_model`` unless it is given, and ``multiple_of`` should be the number of heads.

    Args:
        arch: one of :data:`ARCHITECTURES`.
        vocab_size, max_len: the task's vocabulary and longest sequence.
        target: the parameter count to approach (typically that of the reference model).
        multiple_of: the step of allowed widths.
        high: the largest width tried.
        sizes: the fixed fields of the config, options included (e.g. Mamba's
            ``variant="authors"``, whose count differs from the standard one's).
    """
    check_choice("arch", arch, ARCHITECTURES)
    field = _SIZE_FIELD[arch]
    if field in sizes:
        raise ValueError(f"sizes must not fix {field!r}: it is the size matched_config chooses "
                         f"for {arch}")
    fixed_ff = arch == "transformer" and sizes.get("d_ff") is not None

    def config_of(width: int):
        extra = {} if arch != "transformer" or fixed_ff else {"d_ff": 4 * width}
        return architecture_config(arch, vocab_size, max_len, **(sizes | extra | {field: width}))

    match = match_parameters(lambda width: build_model(config_of(width), torch.Generator()),
                             target, low=multiple_of, high=high, multiple_of=multiple_of)
    return config_of(match.size), match
