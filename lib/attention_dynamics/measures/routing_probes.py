"""Which stored pair a query reads on associative recall, and what a model's last layer holds.

- from the mixing weights of a transformer or a Mamba (:func:`mixing_weights`,
  :func:`queried_pair_share`, :func:`offset_profile`; :func:`pair_read_delay` says where a
  model can read a pair, :func:`reading_layer` which layer reads it);
- for any model, from input attributions (:func:`input_attributions`,
  :func:`attribution_share`);
- :func:`final_representations`, the normed last stream that the tied head reads.

Every registered model embeds tokens with a module named ``embed`` and normalises its last
stream with one named ``norm_final``; the probes rely on those two names.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import nn

from attention_dynamics.measures.metrics import TaskBatch
from attention_dynamics.models.mamba import Mamba, MambaConfig
from attention_dynamics.models.transformer import Transformer, TransformerConfig
from attention_dynamics.runtime import evaluation_mode
from attention_dynamics.tasks.associative_recall import AssociativeRecallTask
from attention_dynamics.validation import check_float_tensor


def final_representations(model: nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    """``(B, T, d_model)``: the normed last stream that the tied head reads, without gradients.

    Read from the output of the model's ``norm_final`` module, so it works for every registered
    architecture.
    """
    if not isinstance(getattr(model, "norm_final", None), nn.Module):
        raise ValueError("model must have a norm_final module (every registered architecture has)")
    captured = []
    handle = model.norm_final.register_forward_hook(lambda _m, _i, out: captured.append(out))
    try:
        with torch.no_grad():
            model(tokens)
    finally:
        handle.remove()
    return captured[-1]


def _check_recall(task, batch) -> None:
    if not isinstance(task, AssociativeRecallTask):
        raise ValueError(f"task must be an AssociativeRecallTask; got {type(task).__name__}")
    if not isinstance(batch, TaskBatch) or tuple(batch.tokens.shape[1:]) != (task.seq_len,):
        raise ValueError(f"batch must be a TaskBatch of the task's length {task.seq_len}")


def queried_pair_positions(task: AssociativeRecallTask, batch) -> torch.Tensor:
    """``(B, M, 2)`` int64: the key and value positions of the pair each query asks for.

    Found from the tokens (the stored key equal to the query), so it holds for any batch of the
    task's layout.
    """
    _check_recall(task, batch)
    tokens = batch.tokens
    stored_keys = tokens[:, 0:2 * task.n_pairs:2]                          # (B, N)
    queries = tokens[:, task.query_positions.to(tokens.device)]            # (B, M)
    pair = (queries[:, :, None] == stored_keys[:, None, :]).long().argmax(-1)  # (B, M)
    return torch.stack([2 * pair, 2 * pair + 1], dim=-1)


def _check_weights(weights: torch.Tensor, task: AssociativeRecallTask, batch) -> None:
    check_float_tensor("weights", weights, min_dim=3, max_dim=3)
    length = task.seq_len
    if tuple(weights.shape) != (batch.tokens.shape[0], length, length):
        raise ValueError(f"weights must have shape (B, T, T) = ({batch.tokens.shape[0]}, {length}, "
                         f"{length}); got {tuple(weights.shape)}")
    if (weights < 0).any():
        raise ValueError("weights must be non-negative (pass |M| for an implicit attention)")


def queried_pair_share(weights: torch.Tensor, task: AssociativeRecallTask, batch,
                       delay: int = 0) -> torch.Tensor:
    """Share of each query's mixing mass on the queried pair, ``(B, M)`` in ``[0, 1]``.

    For the row of query position ``t``: the mass on the two positions ``2j + delay`` and
    ``2j + 1 + delay`` of the queried pair ``j``, divided by the mass on the ``2N`` positions
    ``delay .. 2N - 1 + delay``. Uniform mixing over those positions gives ``1 / N``.

    ``delay`` is for a model whose mixing input at position ``s`` holds the tokens of earlier
    positions: a Mamba's scan input is a causal convolution of the last ``d_conv`` tokens, so a
    pair can be read at the positions after it (:func:`offset_profile` shows where).

    Args:
        weights: ``(B, T, T)`` non-negative mixing weights (row = reading position).
        task, batch: the recall task and the batch the weights were computed on.
        delay: a non-negative int with ``2N + delay`` at most the first query position.
    """
    _check_recall(task, batch)
    _check_weights(weights, task, batch)
    first_query = int(task.query_positions[0])
    if not isinstance(delay, int) or isinstance(delay, bool) or not 0 <= delay <= (
            first_query - 2 * task.n_pairs):
        raise ValueError(f"delay must be an int in 0..{first_query - 2 * task.n_pairs} (the "
                         f"shifted pairs must end before the first query); got {delay!r}")
    rows = weights[:, task.query_positions.to(weights.device), delay:2 * task.n_pairs + delay]
    on_pair = rows.gather(2, queried_pair_positions(task, batch)).sum(-1)
    return on_pair / rows.sum(-1).clamp_min(torch.finfo(rows.dtype).tiny)


def pair_read_delay(config) -> int:
    """The ``delay`` of :func:`queried_pair_share` at which a model reads a stored pair whole.

    A transformer's attention reads each position's own token: 0. A Mamba's scan input at
    position ``s`` is a causal convolution of the tokens ``s - d_conv + 1 .. s``, so the pair
    ``(2j, 2j + 1)`` is whole in the inputs at ``2j + 1 .. 2j + d_conv - 1``; the delay is that
    of the last two of them, ``d_conv - 2`` (2 for the usual kernel width 4; a width below 2
    never holds a pair whole and is refused).

    Args:
        config: a :class:`~attention_dynamics.models.transformer.TransformerConfig` or a
            :class:`~attention_dynamics.models.mamba.MambaConfig` (the models with mixing
            weights over positions).
    """
    if isinstance(config, TransformerConfig):
        return 0
    if isinstance(config, MambaConfig):
        if config.d_conv < 2:
            raise ValueError(f"a Mamba with d_conv={config.d_conv} never holds a pair whole in "
                             "one scan input")
        return config.d_conv - 2
    raise ValueError(f"config must be a TransformerConfig or a MambaConfig (models with mixing "
                     f"weights over positions); got {type(config).__name__}")


def reading_layer(layers: list[torch.Tensor], task: AssociativeRecallTask, batch,
                  delay: int = 0) -> int:
    """The index of the layer whose mixing weights put the most mass on the queried pair.

    Args:
        layers: per layer, ``(B, T, T)`` non-negative mixing weights (:func:`mixing_weights`).
        task, batch: the recall task and the batch the weights were computed on.
        delay: as in :func:`queried_pair_share`.

    Returns:
        The layer with the largest :func:`queried_pair_share` averaged over queries and
        sequences (the first of equal ones).
    """
    if not layers:
        raise ValueError("layers must hold at least one layer's weights")
    shares = [queried_pair_share(w, task, batch, delay=delay).mean().item() for w in layers]
    return max(range(len(shares)), key=shares.__getitem__)


def offset_profile(weights: torch.Tensor, task: AssociativeRecallTask, batch,
                   offsets: Iterable[int]) -> torch.Tensor:
    """Mean share of a query row's mass at each offset from the queried key, ``(len(offsets),)``.

    For query position ``t`` asking for the pair whose key sits at ``2j``: the weight at
    position ``2j + offset`` over the row's total mass, averaged over queries and sequences
    (rows where ``2j + offset`` falls outside ``0..t`` count as zero).

    Args:
        weights: ``(B, T, T)`` non-negative mixing weights (row = reading position).
        task, batch: the recall task and the batch the weights were computed on.
        offsets: ints, positions relative to the queried key.
    """
    _check_recall(task, batch)
    _check_weights(weights, task, batch)
    offsets = torch.as_tensor(list(offsets), dtype=torch.int64, device=weights.device)
    rows = weights[:, task.query_positions.to(weights.device)]                 # (B, M, T)
    rows = rows / rows.sum(-1, keepdim=True).clamp_min(torch.finfo(rows.dtype).tiny)
    key = queried_pair_positions(task, batch)[..., :1]                         # (B, M, 1)
    index = key + offsets                                                      # (B, M, K)
    inside = (index >= 0) & (index < task.seq_len)
    picked = rows.gather(2, index.clamp(0, task.seq_len - 1)) * inside
    return picked.mean(dim=(0, 1))


def mixing_weights(model: nn.Module, tokens: torch.Tensor) -> list[torch.Tensor]:
    """Each layer's mixing weights over positions, ``(B, T, T)`` per layer, without gradients.

    For a transformer, the softmax weights averaged over heads; for a Mamba, the magnitude of
    the implicit attention ``|M|`` averaged over channels. An LSTM or MLP has no mixing weights
    over positions: a ValueError says so.
    """
    if isinstance(model, Transformer):
        with torch.no_grad():
            _, record = model(tokens, return_record=True)
        return [layer.weights.mean(1) for layer in record.attention]
    if isinstance(model, Mamba):
        with torch.no_grad():
            _, record = model(tokens, return_record=True)
        return [layer.attention.abs().mean(1) for layer in record.layers]
    raise ValueError(f"model must be a Transformer or a Mamba; a {type(model).__name__} has no "
                     f"mixing weights over positions")


def input_attributions(model: nn.Module, task: AssociativeRecallTask, batch) -> torch.Tensor:
    """``(B, M, T)``: how strongly each query's correct answer depends on each position's token.

    Entry ``[b, m, s]`` is the norm of the gradient of the correct answer's logit at the
    ``m``-th query position with respect to the token embedding at position ``s`` (the output
    of the model's ``embed`` module). It needs no mixing weights, so it applies to every
    architecture; an MLP's attributions to other positions are all zero.
    """
    _check_recall(task, batch)
    if not isinstance(getattr(model, "embed", None), nn.Embedding):
        raise ValueError("model must have an nn.Embedding named embed")
    captured = []
    handle = model.embed.register_forward_hook(lambda _m, _i, out: captured.append(out))
    try:
        with evaluation_mode(model), torch.enable_grad():
            logits = model(batch.tokens)
            embedded = captured[-1]
            positions = task.query_positions.to(logits.device)
            answers = batch.targets[:, positions]                                    # (B, M)
            chosen = logits[:, positions].gather(2, answers[..., None]).squeeze(-1)  # (B, M)
            norms = []
            for m in range(len(positions)):
                (grad,) = torch.autograd.grad(chosen[:, m].sum(), embedded, retain_graph=True)
                norms.append(grad.norm(dim=-1))                                       # (B, T)
    finally:
        handle.remove()
    return torch.stack(norms, dim=1)


def attribution_share(model: nn.Module, task: AssociativeRecallTask, batch) -> torch.Tensor:
    """Share of each answer's input attribution on the queried pair, ``(B, M)`` in ``[0, 1]``.

    :func:`input_attributions` of the queried pair's two positions over those of all ``2N``
    pair positions; ``nan`` where the answer depends on no pair position (an MLP).
    """
    norms = input_attributions(model, task, batch)[..., :2 * task.n_pairs]     # (B, M, 2N)
    on_pair = norms.gather(2, queried_pair_positions(task, batch)).sum(-1)
    total = norms.sum(-1)
    return torch.where(total > 0, on_pair / total.clamp_min(torch.finfo(total.dtype).tiny),
                       torch.nan)
