"""Associative recall, Paper I's (v3) wind tunnel for random-access binding.

Each sequence stores ``N`` key-value pairs, then asks for the values of ``M`` of the stored
keys::

    tokens:   k_1 v_1 k_2 v_2 ... k_N v_N  [F filler]  Q  q_1     q_2     ...  q_M
    targets:   -   -   -   -  ...  -   -       -       -  v(q_1)  v(q_2)  ...  v(q_M)

(``T = 2N + F + 1 + M`` tokens, scored at the ``M`` query positions.) Per sequence, the
``N`` keys are distinct, drawn uniformly from ``n_keys`` key symbols, the ``N`` values
distinct from ``n_values`` value symbols, and the ``M`` queried keys distinct among the
stored ones. Key ``x`` is token ``x``, value ``y`` is token ``n_keys + y``; then come the
filler token and the query marker ``Q`` (``vocab_size = n_keys + n_values + 2``).

The exact answer is deterministic: the value stored with the queried key, readable from the
tokens alone (:meth:`AssociativeRecallTask.answers`). The Bayes predictive is a point mass on
it, entropy 0, so the task is scored by accuracy (:func:`recall_accuracy`). A model that
ignores the context can do no better than ``1 / n_values`` (the answer's marginal is uniform
over the value tokens); one that stores which values occurred but not with which key, no
better than ``1 / N``. To answer, a model must retrieve by content: find the position holding
the queried key and copy the token after it.

Paper I (v3) reports accuracies of 100% (transformer), 97.8% (Mamba) and 0.5% (LSTM). The
authors' script (``src/data/associative_recall.py`` of ``vishalmisra/bayesian-wind-tunnel``)
defaults to 64 pairs, 3 queries, 32 filler tokens and 256 key and 256 value symbols, with
four tokens per pair (``STORE k SEP v``) and three per query (``QUERY k PAD``, half the filler
between queries); which of its settings produced the reported numbers is not stated. This
layout keeps the task (distinct keys and values, queries among the stored keys, a filler gap)
and drops the marker tokens, which carry no information, to keep the sequences short.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attention_dynamics.tasks.base import IGNORE_INDEX, TaskBatch, check_logits
from attention_dynamics.tasks.bijection import random_permutations
from attention_dynamics.validation import check_positive_int_fields


@dataclass(frozen=True)
class AssociativeRecallBatch(TaskBatch):
    """A :class:`~attention_dynamics.tasks.base.TaskBatch` with the pairs behind it.

    Attributes:
        keys: ``(B, N)`` int64 stored keys (symbols ``0..n_keys-1``, not tokens), in order.
        values: ``(B, N)`` int64 their values (symbols ``0..n_values-1``).
        queried: ``(B, M)`` int64, the index (``0..N-1``) of the pair asked by each query.
    """

    keys: torch.Tensor
    values: torch.Tensor
    queried: torch.Tensor


@dataclass(frozen=True)
class AssociativeRecallTask:
    """Sampler and exact answers of associative recall.

    Attributes:
        n_pairs: ``N``, stored pairs per sequence (at most ``n_keys`` and ``n_values``).
        n_keys: key symbols to draw the keys from.
        n_values: value symbols to draw the values from.
        n_queries: ``M``, queried keys per sequence (at most ``N``).
        n_filler: ``F``, filler tokens between the pairs and the queries.
    """

    n_pairs: int
    n_keys: int
    n_values: int
    n_queries: int = 1
    n_filler: int = 0

    def __post_init__(self):
        check_positive_int_fields(self, ("n_pairs", "n_keys", "n_values", "n_queries"))
        if not isinstance(self.n_filler, int) or isinstance(self.n_filler, bool) or self.n_filler < 0:
            raise ValueError(f"n_filler must be a non-negative int; got {self.n_filler!r}")
        for name in ("n_keys", "n_values"):
            if getattr(self, name) < self.n_pairs:
                raise ValueError(f"{name} must be >= n_pairs={self.n_pairs} (distinct symbols per "
                                 f"sequence); got {getattr(self, name)}")
        if self.n_queries > self.n_pairs:
            raise ValueError(f"n_queries must be <= n_pairs={self.n_pairs} (distinct stored keys); "
                             f"got {self.n_queries}")

    @property
    def filler_token(self) -> int:
        """The filler token, ``n_keys + n_values``."""
        return self.n_keys + self.n_values

    @property
    def query_token(self) -> int:
        """The query marker ``Q``, ``n_keys + n_values + 1``."""
        return self.n_keys + self.n_values + 1

    @property
    def vocab_size(self) -> int:
        """``n_keys + n_values + 2``: keys, values, filler, query marker."""
        return self.n_keys + self.n_values + 2

    @property
    def seq_len(self) -> int:
        """Tokens per sequence, ``2N + F + 1 + M``."""
        return 2 * self.n_pairs + self.n_filler + 1 + self.n_queries

    @property
    def query_positions(self) -> torch.Tensor:
        """``(M,)`` int64, the scored positions of the queried keys (the last ``M``)."""
        return torch.arange(self.seq_len - self.n_queries, self.seq_len)

    @property
    def value_tokens(self) -> torch.Tensor:
        """``(n_values,)`` int64, the tokens an answer can be."""
        return torch.arange(self.n_keys, self.n_keys + self.n_values)

    @property
    def answer_tokens(self) -> torch.Tensor:
        """``(n_values,)`` int64, the tokens the Bayes predictive can put mass on: :attr:`value_tokens`."""
        return self.value_tokens

    @property
    def chance_accuracy(self) -> float:
        """``1 / n_values``: the best accuracy without the context."""
        return 1.0 / self.n_values

    @property
    def unbound_accuracy(self) -> float:
        """``1 / N``: the best accuracy knowing the stored values but not their keys."""
        return 1.0 / self.n_pairs

    def sample(self, batch_size: int, generator: torch.Generator) -> AssociativeRecallBatch:
        """Draw ``batch_size`` sequences on ``generator``'s device, with their exact answers.

        Draws, in order, three calls of
        :func:`~attention_dynamics.tasks.bijection.random_permutations`: the keys (first
        ``N`` of a permutation of the ``n_keys`` symbols), the values (likewise of
        ``n_values``), the queried pairs (first ``M`` of a permutation of ``0..N-1``).
        """
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int; got {batch_size!r}")
        n, device = self.n_pairs, generator.device
        keys = random_permutations(batch_size, self.n_keys, generator)[:, :n]
        values = random_permutations(batch_size, self.n_values, generator)[:, :n]
        queried = random_permutations(batch_size, n, generator)[:, :self.n_queries]

        pairs = torch.stack([keys, values + self.n_keys], dim=2).reshape(batch_size, 2 * n)
        gap = torch.full((batch_size, self.n_filler), self.filler_token, device=device)
        marker = torch.full((batch_size, 1), self.query_token, device=device)
        tokens = torch.cat([pairs, gap, marker, keys.gather(1, queried)], dim=1)
        positions = self.query_positions.to(device)
        targets = torch.full_like(tokens, IGNORE_INDEX)
        targets[:, positions] = values.gather(1, queried) + self.n_keys
        predictive = torch.zeros(batch_size, self.seq_len, self.vocab_size, dtype=torch.float64,
                                 device=device)
        predictive[:, positions] = torch.nn.functional.one_hot(
            targets[:, positions], self.vocab_size).double()
        entropy_bits = torch.zeros(batch_size, self.seq_len, dtype=torch.float64, device=device)
        return AssociativeRecallBatch(tokens=tokens, targets=targets, bayes_predictive=predictive,
                                      bayes_entropy_bits=entropy_bits, keys=keys, values=values,
                                      queried=queried)

    def answers(self, tokens: torch.Tensor) -> torch.Tensor:
        """The exact answer of each query, read from the tokens alone: ``(B, M)`` value tokens.

        For each query key, the token after the one stored pair whose key it is.

        Args:
            tokens: ``(B, T)`` int64 sequences of this task's layout.
        """
        if (not isinstance(tokens, torch.Tensor) or tokens.dtype != torch.int64
                or tokens.ndim != 2 or tokens.shape[1] != self.seq_len):
            raise ValueError(f"tokens must be a (B, {self.seq_len}) int64 tensor; got "
                             f"{getattr(tokens, 'dtype', type(tokens).__name__)} of shape "
                             f"{tuple(getattr(tokens, 'shape', ()))}")
        stored_keys = tokens[:, 0:2 * self.n_pairs:2]  # (B, N)
        stored_values = tokens[:, 1:2 * self.n_pairs:2]
        queries = tokens[:, self.query_positions.to(tokens.device)]  # (B, M)
        matches = queries[:, :, None] == stored_keys[:, None, :]  # (B, M, N)
        if not torch.equal(matches.sum(-1), torch.ones_like(queries)):
            raise ValueError("tokens must store each queried key exactly once")
        return stored_values.gather(1, matches.long().argmax(-1))


def recall_accuracy(logits: torch.Tensor, batch: TaskBatch) -> float:
    """Fraction of scored positions whose most likely token (``argmax`` over the whole
    vocabulary) is the target; ``logits`` ``(B, T, vocab)``."""
    check_logits(logits, batch)
    mask = batch.mask
    return (logits.argmax(-1)[mask] == batch.targets[mask]).double().mean().item()
