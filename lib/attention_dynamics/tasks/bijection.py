"""Bijection elimination, Paper I's wind tunnel for belief accumulation.

Each sequence draws a fresh uniformly random bijection ``pi`` of ``V`` symbols and shows
``L`` of its pairs, key then value. Two layouts (:data:`LAYOUTS`, the ``layout`` field of
:class:`BijectionTask`) put them into tokens.

``"separate"`` (the default) uses separate key and value vocabularies::

    tokens:   k_1  v_1  k_2  v_2  ...  k_L          (T = 2L - 1 tokens)
    targets:  v_1   -   v_2   -   ...  v_L          (scored at the key positions 0, 2, 4, ...)

Key ``x`` is token ``x`` and value ``y`` is token ``V + y`` (``vocab_size = 2V``), so that the
``V`` value tokens are exactly the hypotheses of the posterior and never look like a key.

``"shared"`` is the authors' layout (``src/data/bijection.py`` of
``vishalmisra/bayesian-wind-tunnel``): keys and values share the tokens ``0..V-1``
(``vocab_size = V``, key ``x`` and value ``y`` are tokens ``x`` and ``y``), every pair is shown
and a final query key ``q``, drawn uniformly among the ``L`` keys of the context, asks again::

    tokens:   k_1  v_1  k_2  v_2  ...  k_L  v_L  q     (T = 2L + 1 tokens)
    targets:  v_1   -   v_2   -   ...  v_L   -   pi(q) (scored at 0, 2, ..., 2L - 2 and 2L)

The final query's answer is in the context: its Bayes predictive is a point mass on ``pi(q)``.
A token's role (key or value) is then told by its position only.

In both layouts the model predicts ``pi(k_i)`` at the ``i``-th key (``i = 1..L``) from the
``i - 1`` pairs before it and the key itself; targets and the Bayes predictive sit at the
position where the answer is asked (no shift).

Exact posterior. Under the uniform prior on bijections, given the pairs seen so far:

- if ``k_i`` appeared before (possible only with replacement), ``pi(k_i)`` is known: a point mass;
- otherwise ``pi(k_i)`` is uniform over the values not yet revealed, because every bijection
  consistent with the revealed pairs extends to the unseen keys in the same number of ways
  whichever unrevealed value ``k_i`` takes.

Keys drawn **without replacement** (the default) give the entropy ``log2(V - i + 1)`` bits at
the ``i``-th key, a smooth decline to 0 at ``i = V``; keys drawn **with replacement** give
a sawtooth, 0 at every repeated key. A fresh bijection per sequence (``V! = 3.6e6`` for
``V = 10``, ``2.4e18`` for ``V = 20``) leaves nothing to memorise: the marginal of
``pi(k_i)`` over sequences is uniform, so only the context tells anything.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from attention_dynamics.bayes import entropy
from attention_dynamics.tasks.base import IGNORE_INDEX, TaskBatch
from attention_dynamics.validation import check_choice

LAYOUTS = ("separate", "shared")
"""The token layouts of :class:`BijectionTask` (see the module docstring)."""


@dataclass(frozen=True)
class BijectionBatch(TaskBatch):
    """A :class:`~attention_dynamics.tasks.base.TaskBatch` with the bijections behind it.

    Attributes:
        bijections: ``(B, V)`` int64, row ``b`` maps key ``x`` to value ``bijections[b, x]``.
        keys: ``(B, L)`` int64 keys ``k_1..k_L`` (symbols ``0..V-1``, not tokens).
        values: ``(B, L)`` int64 values ``pi(k_i)`` (symbols ``0..V-1``).
        query_index: ``(B,)`` int64 in ``0..L-1`` for the ``"shared"`` layout, the pair whose
            key ``keys[b, query_index[b]]`` is asked again at the final position; ``None`` for
            the ``"separate"`` layout, which has no final query.
    """

    bijections: torch.Tensor
    keys: torch.Tensor
    values: torch.Tensor
    query_index: torch.Tensor | None = None


def random_permutations(batch_size: int, n: int, generator: torch.Generator) -> torch.Tensor:
    """``(batch_size, n)`` int64, each row a uniform random permutation of ``0..n-1``.

    Drawn as the ``argsort`` of i.i.d. float64 uniforms on the generator's device (a tie,
    which would favour one order, has probability about ``n^2 2^-54`` per row).
    """
    uniforms = torch.rand(batch_size, n, generator=generator, device=generator.device,
                          dtype=torch.float64)
    return uniforms.argsort(dim=1)


@dataclass(frozen=True)
class BijectionTask:
    """Sampler and exact Bayes predictive of bijection elimination.

    Attributes:
        n_symbols: ``V``, the number of keys and of values (at least 2).
        n_pairs: ``L``, pairs per sequence; at most ``V`` without replacement. ``None`` means
            ``V``, so that the last key's value is certain.
        with_replacement: draw keys i.i.d. uniform (sawtooth entropy) instead of a random
            ordering of distinct keys.
        layout: ``"separate"`` (key tokens ``0..V-1``, value tokens ``V..2V-1``, ``2L - 1``
            tokens) or ``"shared"`` (the authors' layout: both in ``0..V-1``, every pair shown,
            then a query key from the context, ``2L + 1`` tokens). See the module docstring.
    """

    n_symbols: int
    n_pairs: int | None = None
    with_replacement: bool = False
    layout: str = "separate"

    def __post_init__(self):
        if not isinstance(self.n_symbols, int) or self.n_symbols < 2:
            raise ValueError(f"n_symbols must be an int >= 2; got {self.n_symbols!r}")
        if self.n_pairs is None:
            object.__setattr__(self, "n_pairs", self.n_symbols)
        limit = None if self.with_replacement else self.n_symbols
        if (not isinstance(self.n_pairs, int) or self.n_pairs < 1
                or (limit is not None and self.n_pairs > limit)):
            allowed = "a positive int" + ("" if limit is None else f" <= n_symbols={limit}")
            raise ValueError(f"n_pairs must be {allowed} (or None for n_symbols); "
                             f"got {self.n_pairs!r}")
        check_choice("layout", self.layout, LAYOUTS)

    @property
    def shared(self) -> bool:
        """Whether keys and values share the tokens ``0..V-1`` (``layout == "shared"``)."""
        return self.layout == "shared"

    @property
    def value_offset(self) -> int:
        """The token of value symbol 0, ``V`` in the separate layout and 0 in the shared one."""
        return 0 if self.shared else self.n_symbols

    @property
    def vocab_size(self) -> int:
        """``2V`` where keys and values are separate (keys ``0..V-1``, values ``V..2V-1``), ``V``
        where they share symbols."""
        return self.n_symbols if self.shared else 2 * self.n_symbols

    @property
    def seq_len(self) -> int:
        """Tokens per sequence, ``2L - 1`` (separate) or ``2L + 1`` (shared)."""
        return 2 * self.n_pairs + (1 if self.shared else -1)

    @property
    def key_positions(self) -> torch.Tensor:
        """``(L,)`` int64, the positions ``0, 2, ..., 2L - 2`` of the context's key tokens.

        In the shared layout the final query position ``2L`` is not among them.
        """
        return torch.arange(0, 2 * self.n_pairs - 1, 2)

    @property
    def final_query_position(self) -> int | None:
        """``2L``, the position of the final query key in the shared layout; ``None`` otherwise."""
        return 2 * self.n_pairs if self.shared else None

    @property
    def query_positions(self) -> torch.Tensor:
        """The scored positions, ``(L,)`` key positions (separate), plus ``2L`` (shared, ``(L + 1,)``)."""
        if not self.shared:
            return self.key_positions
        return torch.cat([self.key_positions, torch.tensor([self.final_query_position])])

    @property
    def value_positions(self) -> torch.Tensor:
        """The positions ``1, 3, ...`` of the value tokens in the input, ``(L - 1,)`` where keys
        and values are separate and ``(L,)`` where they share symbols."""
        return torch.arange(1, 2 * self.n_pairs - (0 if self.shared else 1), 2)

    @property
    def hypothesis_tokens(self) -> torch.Tensor:
        """``(V,)`` int64, the value tokens: the hypotheses the posterior ranges over."""
        return torch.arange(self.value_offset, self.value_offset + self.n_symbols)

    @property
    def answer_tokens(self) -> torch.Tensor:
        """``(V,)`` int64, the tokens the Bayes predictive can put mass on: :attr:`hypothesis_tokens`.

        In the shared layout this is the whole vocabulary.
        """
        return self.hypothesis_tokens

    def bayes_entropy_curve(self) -> torch.Tensor:
        """``(Q,)`` float64 Bayes entropy (bits) at each of :attr:`query_positions` (without
        replacement), the same for every sequence.

        ``log2(V - i + 1)`` at key ``i = 1..L``; the shared layout appends 0 for the final query,
        whose answer is in the context.
        """
        if self.with_replacement:
            raise ValueError("with_replacement=True has no fixed entropy curve: it depends on "
                             "which keys repeat")
        remaining = self.n_symbols - torch.arange(self.n_pairs, dtype=torch.float64)
        curve = remaining.log2()
        if self.shared:
            curve = torch.cat([curve, curve.new_zeros(1)])
        return curve

    def sample(self, batch_size: int, generator: torch.Generator) -> BijectionBatch:
        """Draw ``batch_size`` sequences on ``generator``'s device, with their Bayes answers.

        Draws, in order: the bijections (one :func:`random_permutations` call), then the keys
        (a second permutation call truncated to ``L`` columns, or ``torch.randint`` with
        replacement), then, in the shared layout only, the query's pair index
        (``torch.randint(L, (B,))``).
        """
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int; got {batch_size!r}")
        V, L, device = self.n_symbols, self.n_pairs, generator.device
        bijections = random_permutations(batch_size, V, generator)
        if self.with_replacement:
            keys = torch.randint(V, (batch_size, L), generator=generator, device=device)
        else:
            keys = random_permutations(batch_size, V, generator)[:, :L]
        query_index = None
        if self.shared:
            query_index = torch.randint(L, (batch_size,), generator=generator, device=device)
        values = bijections.gather(1, keys)  # (B, L) in 0..V-1
        return self._assemble(bijections, keys, values, query_index)

    def _assemble(self, bijections: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                  query_index: torch.Tensor | None) -> BijectionBatch:
        """The batch of drawn ``(B, V)`` bijections, ``(B, L)`` keys and values and, in the
        shared layout, ``(B,)`` query indices."""
        batch_size, L = keys.shape
        offset, device = self.value_offset, keys.device
        pairs = torch.stack([keys, values + offset], dim=2).reshape(batch_size, 2 * L)
        key_pos = self.key_positions.to(device)
        posterior = self.posterior(keys, values)  # (B, L, V)
        predictive = torch.zeros(batch_size, self.seq_len, self.vocab_size, dtype=torch.float64,
                                 device=device)
        predictive[:, key_pos, offset:offset + self.n_symbols] = posterior
        if self.shared:
            query_key = keys.gather(1, query_index[:, None])  # (B, 1)
            tokens = torch.cat([pairs, query_key], dim=1)
            answer = values.gather(1, query_index[:, None])[:, 0]  # (B,) symbol = token
            predictive[:, -1] = torch.nn.functional.one_hot(answer, self.vocab_size).double()
        else:
            tokens = pairs[:, :-1]
        targets = torch.full_like(tokens, IGNORE_INDEX)
        targets[:, key_pos] = values + offset
        if self.shared:
            targets[:, -1] = answer
        entropy_bits = torch.zeros(batch_size, self.seq_len, dtype=torch.float64, device=device)
        entropy_bits[:, key_pos] = entropy(posterior, unit="bits")  # 0 at the final query
        return BijectionBatch(tokens=tokens, targets=targets, bayes_predictive=predictive,
                              bayes_entropy_bits=entropy_bits, bijections=bijections, keys=keys,
                              values=values, query_index=query_index)

    def posterior(self, keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """``p(pi(k_i) = y | pairs 1..i-1)``, shape ``(B, L, V)`` float64 (over value symbols).

        Args:
            keys: ``(B, L)`` int64 keys ``k_i`` in ``0..V-1``.
            values: ``(B, L)`` int64 values ``pi(k_i)`` in ``0..V-1``.
        """
        V = self.n_symbols
        seen_value = torch.nn.functional.one_hot(values, V).cumsum(1) > 0  # through pair i
        revealed = torch.zeros_like(seen_value)
        revealed[:, 1:] = seen_value[:, :-1]  # revealed strictly before pair i
        open_values = (~revealed).double()
        uniform = open_values / open_values.sum(-1, keepdim=True)
        earlier_same_key = (keys[:, :, None] == keys[:, None, :]).tril(diagonal=-1).any(-1)
        known = torch.nn.functional.one_hot(values, V).double()
        return torch.where(earlier_same_key[..., None], known, uniform)


def mean_entropy_gap_of_marginal(n_symbols: int, layout: str = "separate") -> float:
    """Entropy MAE (bits) of a predictor that ignores the context, on ``L = V`` distinct keys.

    Without context the best predictive is the marginal of the answer, uniform over all ``V``
    values, whose entropy is ``log2 V`` at every scored position. In the ``"separate"`` layout
    its gap to the Bayes curve ``log2(V - i + 1)``, averaged over the keys ``i = 1..V``, is
    ``log2 V - log2(V!) / V``. The ``"shared"`` layout scores the final query too, where the
    Bayes entropy is 0 (gap ``log2 V``): the average over the ``V + 1`` scored positions is
    ``log2 V - log2(V!) / (V + 1)``.
    """
    if not isinstance(n_symbols, int) or n_symbols < 2:
        raise ValueError(f"n_symbols must be an int >= 2; got {n_symbols!r}")
    check_choice("layout", layout, LAYOUTS)
    n_scored = n_symbols + (1 if layout == "shared" else 0)
    return math.log2(n_symbols) - math.lgamma(n_symbols + 1) / math.log(2) / n_scored
