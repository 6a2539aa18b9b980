"""HMM filtering, Paper I's wind tunnel for belief transport.

Each sequence draws a fresh hidden Markov model with ``S`` states and ``O`` symbols (5 and 5 in
the paper), runs it for ``K`` steps and asks, after each observation, for the filtered
posterior ``p(s_t | o_1..o_t)`` of the hidden state. The matrices are given to the model in
its prompt, as the authors do, so that the posterior is a function of the input alone::

    [TRANS] A_11 .. A_1S .. A_SS  [EMIT] E_11 .. E_SO  [OBS] o_1 o_2 .. o_K
    targets at o_t: the hidden state s_t (a state token); everywhere else ignored

Row ``i`` of the transition matrix ``A`` is ``p(s_{t+1} = . | s_t = i)``, row ``i`` of the
emission matrix ``E`` is ``p(o_t = . | s_t = i)``; the first state is uniform. Each entry is one
token: probabilities live on a grid ``floor + u * resolution`` (``u = 0, 1, ...``), with a token
per grid value. The authors' tokenizer also puts a marker before every observation (and a
separator after the matrices); with learned positions one marker before the observations
carries the same information in fewer tokens.

Rows are drawn as the authors' script draws them, in a vectorised form of our own: a
Dirichlet(1) row ``d`` (normalised i.i.d. exponentials) is clipped at the floor (0.05) and
renormalised to ``q``; the mass above the floor, ``(q - floor)_+``, is then put on the grid
(0.01 in the paper) by largest remainders, so that every entry is at least the floor and each
row sums to one exactly. Where the renormalisation left every entry at or above the floor this
returns ``q`` rounded to the grid; where it pushed a clipped entry back below, that entry is set
to the floor and the others give up the difference in proportion. The authors round each entry
to the nearest 0.01 and repair the sum one step at a time, which differs from this only in
which entries absorb the rounding. The exact posterior is computed from the very grid values
in the prompt, so there is no precision ceiling.

Nothing can be memorised: every sequence has its own matrices (with ``S = O = 5`` on the 0.01
grid each row is one of ``C(79, 4) = 1502501`` grid rows, so a prompt is one of about
``6e61``), and the state tokens that are the answers never appear in the input.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from attention_dynamics.bayes import entropy, forward_filter
from attention_dynamics.tasks.base import IGNORE_INDEX, TaskBatch
from attention_dynamics.validation import check_positive_int


@dataclass(frozen=True)
class HMMBatch(TaskBatch):
    """A :class:`~attention_dynamics.tasks.base.TaskBatch` with the hidden model behind it.

    Attributes:
        transition: ``(B, S, S)`` float64 grid-valued transition matrices (row = from-state).
        emission: ``(B, S, O)`` float64 grid-valued emission matrices (row = state).
        states: ``(B, K)`` int64 hidden states ``s_1..s_K``.
        observations: ``(B, K)`` int64 symbols ``o_1..o_K``.
        posterior: ``(B, K, S)`` float64 filtered posteriors ``p(s_t | o_1..o_t)``.
    """

    transition: torch.Tensor
    emission: torch.Tensor
    states: torch.Tensor
    observations: torch.Tensor
    posterior: torch.Tensor


@dataclass(frozen=True)
class HMMFilteringTask:
    """Sampler and exact filtered posterior of the HMM wind tunnel.

    Attributes:
        n_states: ``S`` (at least 2).
        n_symbols: ``O``, or ``None`` for ``S``.
        n_observations: ``K``, observations per sequence (20 in the paper's training).
        floor: the smallest probability of any matrix entry (0.05 in the paper).
        resolution: the grid step of the probabilities (0.01 in the paper). Both
            ``floor / resolution`` and ``(1 - n floor) / resolution`` for ``n = S, O`` must be
            whole numbers.
    """

    n_states: int = 5
    n_symbols: int | None = None
    n_observations: int = 20
    floor: float = 0.05
    resolution: float = 0.01

    def __post_init__(self):
        if self.n_symbols is None:
            object.__setattr__(self, "n_symbols", self.n_states)
        for name in ("n_states", "n_symbols"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 2:
                raise ValueError(f"{name} must be an int >= 2; got {value!r}")
        check_positive_int("n_observations", self.n_observations)
        if not 0 < self.resolution < 1:
            raise ValueError(f"resolution must lie in (0, 1); got {self.resolution!r}")
        widest = max(self.n_states, self.n_symbols)
        if not 0 <= self.floor < 1 / widest:
            raise ValueError(f"floor must lie in [0, 1/{widest}) so that rows of {widest} entries "
                             f"fit; got {self.floor!r}")
        for count in (self.floor / self.resolution, *self._units().values()):
            if abs(count - round(count)) > 1e-9:
                raise ValueError(f"floor={self.floor} and resolution={self.resolution} must "
                                 f"put the floor and each row's remaining mass on whole grid "
                                 f"steps")

    def _units(self) -> dict[int, float]:
        """Grid units above the floor in a row of ``n`` entries, for ``n = S, O``."""
        return {n: (1 - n * self.floor) / self.resolution
                for n in (self.n_states, self.n_symbols)}

    # Vocabulary: grid values, three markers, symbols, states.
    @property
    def n_grid(self) -> int:
        """The number of probability tokens (grid values ``floor .. floor + max units * resolution``)."""
        return round(max(self._units().values())) + 1

    @property
    def trans_token(self) -> int:
        """The ``[TRANS]`` marker."""
        return self.n_grid

    @property
    def emit_token(self) -> int:
        """The ``[EMIT]`` marker."""
        return self.n_grid + 1

    @property
    def obs_token(self) -> int:
        """The ``[OBS]`` marker."""
        return self.n_grid + 2

    @property
    def symbol_tokens(self) -> torch.Tensor:
        """``(O,)`` int64, the observation symbols' tokens."""
        return torch.arange(self.n_symbols) + self.n_grid + 3

    @property
    def state_tokens(self) -> torch.Tensor:
        """``(S,)`` int64, the hidden states' tokens: the answers, never in the input."""
        return torch.arange(self.n_states) + self.n_grid + 3 + self.n_symbols

    @property
    def answer_tokens(self) -> torch.Tensor:
        """``(S,)`` int64, the tokens the Bayes predictive ranges over: :attr:`state_tokens`."""
        return self.state_tokens

    @property
    def vocab_size(self) -> int:
        """Grid values + 3 markers + ``O`` symbols + ``S`` states."""
        return self.n_grid + 3 + self.n_symbols + self.n_states

    @property
    def prompt_length(self) -> int:
        """The number of tokens before the first observation, ``3 + S^2 + S O``."""
        return 3 + self.n_states**2 + self.n_states * self.n_symbols

    @property
    def seq_len(self) -> int:
        """Tokens per sequence, ``prompt_length + K``."""
        return self.prompt_length + self.n_observations

    @property
    def query_positions(self) -> torch.Tensor:
        """``(K,)`` int64, the scored positions: one per observation."""
        return torch.arange(self.prompt_length, self.seq_len)

    def grid_values(self) -> torch.Tensor:
        """``(n_grid,)`` float64, the probability each grid token stands for."""
        units = torch.arange(self.n_grid, dtype=torch.float64)
        return self.floor + units * self.resolution

    def random_rows(self, shape: tuple[int, ...], n: int, generator: torch.Generator
                    ) -> torch.Tensor:
        """Grid-valued stochastic rows ``shape + (n,)`` as int64 grid units above the floor.

        A Dirichlet(1) row, clipped at the floor and renormalised, apportions the row's
        ``M = (1 - n floor) / resolution`` units in proportion to its mass above the floor, by
        largest remainders; the row's probabilities are ``floor + units * resolution``.
        """
        total = round(self._units()[n])
        uniforms = torch.rand(*shape, n, generator=generator, device=generator.device,
                              dtype=torch.float64)
        exponentials = -torch.log1p(-uniforms)
        clipped = (exponentials / exponentials.sum(-1, keepdim=True)).clamp_min(self.floor)
        excess = (clipped / clipped.sum(-1, keepdim=True) - self.floor).clamp_min(0.0)
        share = excess / excess.sum(-1, keepdim=True) * total
        units = share.floor()
        missing = total - units.sum(-1, keepdim=True)  # 0 <= missing < n
        rank = (units - share).argsort(-1).argsort(-1)  # 0 = largest remainder
        return (units + (rank < missing)).long()

    def sample(self, batch_size: int, generator: torch.Generator) -> HMMBatch:
        """Draw ``batch_size`` sequences on ``generator``'s device, with their posteriors.

        Draws, in order: transition rows, emission rows (:meth:`random_rows`), then one
        ``(B, K, 2)`` block of uniforms from which the states and observations follow by
        inverse CDFs (``s_1`` uniform).
        """
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int; got {batch_size!r}")
        S, n_obs, K, device = self.n_states, self.n_symbols, self.n_observations, generator.device
        trans_units = self.random_rows((batch_size, S), S, generator)
        emit_units = self.random_rows((batch_size, S), n_obs, generator)
        transition = self.floor + trans_units.double() * self.resolution
        emission = self.floor + emit_units.double() * self.resolution
        uniforms = torch.rand(batch_size, K, 2, generator=generator, device=device,
                              dtype=torch.float64)

        states = torch.empty(batch_size, K, dtype=torch.long, device=device)
        rows = torch.arange(batch_size, device=device)
        current = (uniforms[:, 0, 0] * S).long().clamp_max(S - 1)
        for t in range(K):
            if t > 0:
                current = _inverse_cdf(transition[rows, current], uniforms[:, t, 0])
            states[:, t] = current
        observations = _inverse_cdf(emission.gather(1, states[..., None].expand(-1, -1, n_obs)),
                                    uniforms[..., 1])

        log_prior = torch.full((S,), -math.log(S), dtype=torch.float64, device=device)
        log_likelihood = emission.log().transpose(1, 2).gather(
            1, observations[..., None].expand(-1, -1, S))  # (B, K, S): log E[s, o_t]
        posterior = forward_filter(log_prior, transition.log(), log_likelihood).log_posterior.exp()

        tokens = torch.cat([
            torch.full((batch_size, 1), self.trans_token, device=device),
            trans_units.flatten(1),
            torch.full((batch_size, 1), self.emit_token, device=device),
            emit_units.flatten(1),
            torch.full((batch_size, 1), self.obs_token, device=device),
            self.symbol_tokens.to(device)[observations],
        ], dim=1)
        scored = slice(self.prompt_length, None)
        targets = torch.full_like(tokens, IGNORE_INDEX)
        targets[:, scored] = self.state_tokens.to(device)[states]
        predictive = torch.zeros(batch_size, self.seq_len, self.vocab_size,
                                 dtype=torch.float64, device=device)
        predictive[:, scored, self.state_tokens.to(device)] = posterior
        entropy_bits = torch.zeros(batch_size, self.seq_len, dtype=torch.float64,
                                   device=device)
        entropy_bits[:, scored] = entropy(posterior, unit="bits")
        return HMMBatch(tokens=tokens, targets=targets, bayes_predictive=predictive,
                        bayes_entropy_bits=entropy_bits, transition=transition,
                        emission=emission, states=states, observations=observations,
                        posterior=posterior)

    def prompt_matrices(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Read the matrices back from prompts ``(B, T)``: ``(B, S, S)`` and ``(B, S, O)`` float64."""
        S, n_obs = self.n_states, self.n_symbols
        if tokens.ndim != 2 or tokens.shape[1] < self.prompt_length:
            raise ValueError(f"tokens must be (B, T) with T >= prompt_length="
                             f"{self.prompt_length}; got {tuple(tokens.shape)}")
        grid = self.grid_values().to(tokens.device)
        transition = grid[tokens[:, 1:1 + S * S]].reshape(-1, S, S)
        emission = grid[tokens[:, 2 + S * S:2 + S * S + S * n_obs]].reshape(-1, S, n_obs)
        return transition, emission


def _inverse_cdf(probs: torch.Tensor, uniforms: torch.Tensor) -> torch.Tensor:
    """Index ``k`` with ``cdf[k-1] <= u < cdf[k]`` per row: ``probs (..., n)``, ``uniforms (...)``."""
    cdf = probs.cumsum(-1)
    index = (cdf <= uniforms[..., None]).sum(-1)
    return index.clamp_max(probs.shape[-1] - 1)
