"""The contract every task keeps: what a batch holds, and what a task offers.

A task (:class:`Task`) draws a :class:`TaskBatch`: token sequences, the sampled answer at the
scored positions, and the exact Bayes predictive there. Models map the tokens to logits of the
same shape as the predictive (:func:`check_logits`), and the measures of
:mod:`~attention_dynamics.measures.metrics` compare the two.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import torch

IGNORE_INDEX = -100
"""The ``targets`` value of positions that are not scored (PyTorch's default ``ignore_index``)."""


@dataclass(frozen=True)
class TaskBatch:
    """A batch of sequences with the exact Bayes answer at every scored position.

    Attributes:
        tokens: ``(B, T)`` int64 model input.
        targets: ``(B, T)`` int64, the sampled answer at scored positions and
            :data:`IGNORE_INDEX` elsewhere. The model's logits at position ``t`` are scored
            against ``targets[:, t]`` (no shift: a task puts the answer where it is asked).
        bayes_predictive: ``(B, T, vocab)`` float64, the exact Bayes predictive distribution of
            the answer given ``tokens[:, :t + 1]`` at scored positions; zero rows elsewhere.
        bayes_entropy_bits: ``(B, T)`` float64, the entropy of ``bayes_predictive`` in bits at
            scored positions; zero elsewhere.
    """

    tokens: torch.Tensor
    targets: torch.Tensor
    bayes_predictive: torch.Tensor
    bayes_entropy_bits: torch.Tensor

    @property
    def mask(self) -> torch.Tensor:
        """``(B, T)`` bool, ``True`` at scored positions."""
        return self.targets != IGNORE_INDEX

    @property
    def vocab_size(self) -> int:
        """Size of the output vocabulary (the last dimension of ``bayes_predictive``)."""
        return self.bayes_predictive.shape[-1]


def check_logits(logits: torch.Tensor, batch: TaskBatch) -> torch.Tensor:
    """Require float logits of shape ``(B, T, vocab)`` matching ``batch``."""
    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point():
        raise ValueError(f"logits must be a floating-point tensor; got {type(logits).__name__}")
    if tuple(logits.shape) != tuple(batch.bayes_predictive.shape):
        raise ValueError(f"logits must have shape (B, T, vocab) = "
                         f"{tuple(batch.bayes_predictive.shape)}; got {tuple(logits.shape)}")
    return logits


@runtime_checkable
class Task(Protocol):
    """What the training loop, the measures and the probes need of a task.

    Attributes:
        vocab_size: tokens ``0..vocab_size-1`` may appear in a sequence and as an answer.
        seq_len: ``T``, tokens per sequence.
        query_positions: ``(Q,)`` int64, the scored positions of every sequence.
        answer_tokens: ``(n,)`` int64, distinct token ids outside which the Bayes predictive
            puts no mass at any scored position (the answer slice: the value tokens, the
            hidden-state tokens). :func:`~attention_dynamics.measures.metrics.evaluate` can
            measure the model on this slice, renormalised.
    """

    @property
    def vocab_size(self) -> int: ...

    @property
    def seq_len(self) -> int: ...

    @property
    def query_positions(self) -> torch.Tensor: ...

    @property
    def answer_tokens(self) -> torch.Tensor: ...

    def sample(self, batch_size: int, generator: torch.Generator) -> TaskBatch:
        """A batch of ``batch_size`` fresh sequences drawn with ``generator`` (on its device)."""
        ...


def sequences_of(batch: TaskBatch, index: slice | torch.Tensor) -> TaskBatch:
    """The same kind of batch holding only the sequences ``index`` selects.

    Every tensor field (all of them ``(B, ...)``) is indexed along its first dimension; fields
    that are ``None`` stay ``None``. ``index`` is a slice, or a ``(k,)`` int64 or ``(B,)`` bool
    tensor, as for ``batch.tokens[index]``.
    """
    chosen = {field.name: getattr(batch, field.name)[index]
              for field in dataclasses.fields(batch)
              if isinstance(getattr(batch, field.name), torch.Tensor)}
    if chosen["tokens"].shape[0] == 0:
        raise ValueError(f"index selects no sequence of the batch of {batch.tokens.shape[0]}")
    return dataclasses.replace(batch, **chosen)
