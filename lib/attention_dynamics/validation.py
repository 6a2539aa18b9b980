"""Argument checks shared by the library: each failure is a ValueError naming the argument."""

from __future__ import annotations

import torch


def check_positive_int(name: str, value) -> int:
    """Require an ``int`` (not a ``bool``) of at least 1; return it."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive int; got {value!r}")
    return value


def check_positive_int_fields(owner, names) -> None:
    """:func:`check_positive_int` on each attribute ``names`` of ``owner`` (a config)."""
    for name in names:
        check_positive_int(name, getattr(owner, name))


def check_float_tensor(name: str, value, min_dim: int = 0, max_dim: int | None = None,
                       dtype: torch.dtype | None = None) -> torch.Tensor:
    """Require a floating-point tensor with ``min_dim <= ndim <= max_dim`` (and ``dtype``)."""
    if not isinstance(value, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor; got {type(value).__name__}")
    if not value.is_floating_point():
        raise ValueError(f"{name} must be a floating-point tensor; got dtype {value.dtype}")
    if dtype is not None and value.dtype != dtype:
        raise ValueError(f"{name} must have dtype {dtype} (like the other inputs); got {value.dtype}")
    if value.ndim < min_dim or (max_dim is not None and value.ndim > max_dim):
        wanted = f"{min_dim}" if max_dim == min_dim else f"at least {min_dim}"
        if max_dim is not None and max_dim != min_dim:
            wanted = f"{min_dim} to {max_dim}"
        raise ValueError(f"{name} must have {wanted} dimensions; got shape {tuple(value.shape)}")
    return value


def check_mask(name: str, mask, length: int) -> torch.Tensor:
    """Require a boolean ``(length, length)`` mask whose every row allows at least one key."""
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"{name} must be a boolean tensor; got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    if tuple(mask.shape) != (length, length):
        raise ValueError(f"{name} must have shape ({length}, {length}); got {tuple(mask.shape)}")
    empty = (~mask.any(dim=-1)).nonzero().flatten().tolist()
    if empty:
        raise ValueError(f"{name} leaves rows {empty[:5]} with no allowed key; softmax is undefined")
    return mask


def check_same_shape(**tensors: torch.Tensor) -> None:
    """Require every named tensor to have the same shape."""
    shapes = {name: tuple(t.shape) for name, t in tensors.items()}
    if len(set(shapes.values())) > 1:
        listed = ", ".join(f"{n} {s}" for n, s in shapes.items())
        raise ValueError(f"shapes must agree: {listed}")


def check_choice(name: str, value: object, allowed: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``allowed``, else raise a ValueError naming ``name``."""
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value


def check_tokens(tokens, max_len: int) -> torch.Tensor:
    """Require a ``(B, T)`` int64 tensor with ``1 <= T <= max_len``."""
    if not isinstance(tokens, torch.Tensor) or tokens.dtype != torch.int64 or tokens.ndim != 2:
        raise ValueError(f"tokens must be a (B, T) int64 tensor; got "
                         f"{getattr(tokens, 'dtype', type(tokens).__name__)} of shape "
                         f"{tuple(getattr(tokens, 'shape', ()))}")
    if not 1 <= tokens.shape[1] <= max_len:
        raise ValueError(f"sequence length must be in 1..max_len={max_len}; got {tokens.shape[1]}")
    return tokens
