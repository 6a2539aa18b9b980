"""Paper II's sticky Markov chain, seen through noisy Gaussian inputs.

The task (Agarwal, Dalal, Misra, Paper II, section 5.2, and their script
``experiments/paper2_gradient/em_vs_sgd_multiseed.py``):

- A Markov chain on ``S = 8`` symbols that "sticks": it stays put with probability about 0.3
  and otherwise jumps, preferring nearby symbols on a circle, with weight ``1 / d`` for circular
  distance ``d = min(|i - j|, S - |i - j|)``. :func:`transition_matrix` builds it two ways,
  which differ (see there): ``"text"`` as the paper describes it, ``"script"`` as the authors'
  script computes it and as every reported number was produced.
- One chain ``y_0, y_1, ..., y_{T-1}`` of ``T`` symbols (``T = 2000`` in the paper). The first
  symbol ``y_0`` is uniform on the ``S`` symbols, which is the chain's stationary distribution.
- Position ``t = 1, ..., T - 1`` shows the input ``x_t = mu[y_{t-1}] + noise_std * eps_t``
  (``eps_t ~ N(0, I_20)``, ``noise_std = 1``) and asks for the target ``y_t``. So ``T``
  symbols give ``N = T - 1`` (input, target) pairs; ``y_0`` is never a target, only the hidden
  symbol behind ``x_1``. The means ``mu`` (``S x 20``) are fixed across seeds:
  :func:`symbol_means`.

Bayes-optimal prediction: given ``x_1..x_t`` the symbol ``y_{t-1}`` is hidden, so the inputs
form a hidden Markov model with hidden state ``z_t = y_{t-1}``, Gaussian emissions
``x_t ~ N(mu[z_t], noise_std^2 I)``, prior ``z_1 = y_0`` uniform, and transitions ``P``. The
predictive ``p(y_t | x_1..x_t) = sum_s p(z_t = s | x_1..x_t) P[s, y_t]`` follows from
:func:`~attention_dynamics.bayes.forward_filter`. The authors' "theoretical minimum"
``H(Y_t | Y_{t-1})`` (:func:`conditional_entropy`) is a lower bound on its expected
cross-entropy, reached only if the inputs revealed ``y_{t-1}`` exactly.

All entropies and cross-entropies here are in nats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from attention_dynamics.bayes import entropy, forward_filter, predict_next
from attention_dynamics.validation import check_choice, check_float_tensor

N_SYMBOLS = 8
"""Alphabet size ``S``."""
INPUT_DIM = 20
"""Input dimension ``d_x``."""
SELF_PROB = 0.3
"""The nominal self-transition probability (the paper's text)."""
SEQUENCE_LENGTH = 2000
"""Symbols per sequence in the paper (so 1999 training positions)."""
MEANS_SEED = 0
"""Seed of the fixed symbol means ``mu``."""
PAPER_SEEDS = (42, 2024, 1337, 7777, 9999)
"""The five seeds of the paper's EM-like versus SGD comparison."""
CONSTRUCTIONS = ("script", "text")


def circular_distance(n_symbols: int = N_SYMBOLS) -> torch.Tensor:
    """``d_ij = min(|i - j|, S - |i - j|)`` as a ``(S, S)`` int64 tensor (0 on the diagonal)."""
    if not isinstance(n_symbols, int) or n_symbols < 2:
        raise ValueError(f"n_symbols must be an int >= 2; got {n_symbols!r}")
    idx = torch.arange(n_symbols)
    gap = (idx[:, None] - idx[None, :]).abs()
    return torch.minimum(gap, n_symbols - gap)


def transition_matrix(n_symbols: int = N_SYMBOLS, self_prob: float = SELF_PROB,
                      construction: str = "script", dtype: torch.dtype = torch.float64
                      ) -> torch.Tensor:
    """The sticky chain's ``(S, S)`` transition matrix, row = from-symbol.

    Both constructions give off-diagonal entries proportional to ``1 / d_ij`` within a row;
    they differ in the diagonal:

    - ``"text"`` (the paper's description): ``P[i, i] = self_prob`` exactly and the
      off-diagonal entries share ``1 - self_prob`` in proportion to ``1 / d_ij``.
    - ``"script"`` (the authors' code): a row starts as ``w_ii = self_prob``,
      ``w_ij = 1 / d_ij``; it is rescaled to total ``1 - self_prob`` and then ``self_prob`` is
      added on the diagonal (a final renormalisation changes nothing, the row already sums to
      one). The diagonal thus counts ``self_prob`` twice:
      ``P[i, i] = self_prob + (1 - self_prob) * self_prob / (self_prob + sum_{j != i} 1 / d_ij)``,
      which for ``S = 8``, ``self_prob = 0.3`` is ``0.3 + 0.21 / (0.3 + 47/12) = 0.349802...``.

    Both matrices are circulant, hence doubly stochastic: the stationary distribution is
    uniform.

    Args:
        n_symbols: ``S``.
        self_prob: the nominal self-transition probability, in ``[0, 1)``.
        construction: ``"script"`` (default: what produced the paper's numbers) or ``"text"``.
        dtype: floating dtype of the result.
    """
    check_choice("construction", construction, CONSTRUCTIONS)
    if not 0.0 <= self_prob < 1.0:
        raise ValueError(f"self_prob must lie in [0, 1); got {self_prob!r}")
    dist = circular_distance(n_symbols).to(torch.float64)
    eye = torch.eye(n_symbols, dtype=torch.float64)
    inverse_distance = torch.where(dist > 0, 1.0 / dist.clamp(min=1.0), 0.0)
    if construction == "text":
        weights = inverse_distance
    else:
        weights = inverse_distance + self_prob * eye
    rescaled = weights / weights.sum(dim=1, keepdim=True) * (1.0 - self_prob)
    return (rescaled + self_prob * eye).to(dtype)


def stationary_distribution(transition: torch.Tensor) -> torch.Tensor:
    """The stationary distribution ``pi`` (``pi P = pi``, ``sum pi = 1``) of an ``(S, S)`` chain.

    Solved as a linear system in the matrix's dtype (one balance equation replaced by the
    normalisation); assumes the chain is irreducible, so that ``pi`` is unique.
    """
    check_float_tensor("transition", transition, min_dim=2, max_dim=2)
    n = transition.shape[0]
    if transition.shape != (n, n):
        raise ValueError(f"transition must be square; got {tuple(transition.shape)}")
    system = transition.T - torch.eye(n, dtype=transition.dtype, device=transition.device)
    system[-1] = 1.0
    rhs = torch.zeros(n, dtype=transition.dtype, device=transition.device)
    rhs[-1] = 1.0
    return torch.linalg.solve(system, rhs)


def conditional_entropy(transition: torch.Tensor, unit: str = "nats") -> float:
    """``H(Y_t | Y_{t-1}) = sum_i pi_i H(P[i, :])`` under the stationary distribution ``pi``.

    This is the authors' "theoretical minimum" (their script averages the row entropies with
    equal weights, the same thing here since ``pi`` is uniform). It lower-bounds the expected
    cross-entropy of any predictor of ``y_t`` from ``x_1..x_t`` in the stationary chain: knowing
    ``y_{t-1}`` exactly is at least as good as seeing it through noise.
    """
    pi = stationary_distribution(transition)
    return float((pi * entropy(transition, dim=-1, unit=unit)).sum())


def symbol_means(n_symbols: int = N_SYMBOLS, input_dim: int = INPUT_DIM, seed: int = MEANS_SEED,
                 dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """The fixed means ``mu`` of shape ``(S, input_dim)``, entries i.i.d. ``N(0, 1)``.

    Exactly as the authors' script draws them on the CPU: a torch CPU generator seeded with
    ``seed`` (0), then ``torch.randn(S, input_dim)`` in float32, row ``s`` being ``mu[s]``;
    the float32 values are then cast to ``dtype`` (exactly, for float64). The same means are
    used for every sequence seed. (Their script draws on its device, CUDA when available, whose
    generator gives different numbers; these are the CPU ones.)
    """
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(n_symbols, input_dim, generator=generator).to(dtype)


@dataclass(frozen=True)
class StickyChainData:
    """Sequences of the sticky chain task (``B`` sequences, ``T`` symbols, ``N = T - 1``).

    Without a batch (``batch_size=None`` in :func:`sample_sticky_chain`) the leading ``B``
    dimension is absent.

    Attributes:
        symbols: ``(B, T)`` int64, the chain ``y_0..y_{T-1}``.
        inputs: ``(B, N, d)``, ``x_t = mu[y_{t-1}] + noise_std * eps_t`` for ``t = 1..N``.
        transition: ``(S, S)``, the chain's transition matrix.
        means: ``(S, d)``, the symbol means ``mu``.
        noise_std: standard deviation of each input coordinate around its mean.
    """

    symbols: torch.Tensor
    inputs: torch.Tensor
    transition: torch.Tensor
    means: torch.Tensor
    noise_std: float

    @property
    def targets(self) -> torch.Tensor:
        """``(B, N)`` int64: the target ``y_t`` of input ``x_t``, for ``t = 1..N``."""
        return self.symbols[..., 1:]


def _sample_chain(transition: torch.Tensor, length: int, batch: int,
                  generator: torch.Generator) -> torch.Tensor:
    """``(batch, length)`` chains: ``y_0`` uniform, then one multinomial draw per step."""
    n_symbols = transition.shape[0]
    symbols = torch.empty(batch, length, dtype=torch.int64)
    symbols[:, 0] = torch.randint(n_symbols, (batch,), generator=generator)
    for t in range(1, length):
        rows = transition[symbols[:, t - 1]]
        symbols[:, t] = torch.multinomial(rows, 1, generator=generator).squeeze(1)
    return symbols


def sample_sticky_chain(T: int, generator: torch.Generator, batch_size: int | None = None,
                        transition: torch.Tensor | None = None, means: torch.Tensor | None = None,
                        noise_std: float = 1.0, dtype: torch.dtype = torch.float32
                        ) -> StickyChainData:
    """Sample ``batch_size`` independent sequences of ``T`` symbols (``T - 1`` positions).

    The draws, all from ``generator`` (a CPU generator), in this order: ``y_0`` for every
    sequence (``torch.randint``), then for ``t = 1..T-1`` one ``torch.multinomial`` call over the
    rows ``P[y_{t-1}]`` of all sequences (probabilities in float32), then the noise
    ``eps`` as one float32 ``torch.randn(B, T - 1, d)``. For ``batch_size=None`` (or 1) and a
    generator freshly seeded with ``seed`` this is, draw for draw, what the authors' script
    does on the CPU after ``torch.manual_seed(seed)``: the same chain and the same inputs. The
    draws do not depend on ``dtype``, which only sets the dtype of ``inputs``.

    Args:
        T: symbols per sequence (``T >= 2``); the paper uses 2000.
        generator: a seeded CPU ``torch.Generator`` (see :func:`~attention_dynamics.runtime.seed_everything`).
        batch_size: number of independent sequences, or ``None`` for one without a batch dim.
        transition: ``(S, S)`` matrix; default ``transition_matrix(construction="script")``.
        means: ``(S, d)`` means; default :func:`symbol_means`.
        noise_std: input noise scale (1 in the paper).
        dtype: floating dtype of ``inputs``.

    Returns:
        A :class:`StickyChainData` holding the ``transition`` and ``means`` in float64.
    """
    if not isinstance(T, int) or T < 2:
        raise ValueError(f"T must be an int >= 2 (T symbols give T - 1 positions); got {T!r}")
    if batch_size is not None and (not isinstance(batch_size, int) or batch_size < 1):
        raise ValueError(f"batch_size must be a positive int or None; got {batch_size!r}")
    if not noise_std > 0:
        raise ValueError(f"noise_std must be positive; got {noise_std!r}")
    transition = transition_matrix() if transition is None else transition
    means = symbol_means() if means is None else means
    check_float_tensor("transition", transition, min_dim=2, max_dim=2)
    check_float_tensor("means", means, min_dim=2, max_dim=2)
    if transition.shape != (means.shape[0], means.shape[0]):
        raise ValueError(f"transition must be (S, S) with S={means.shape[0]} (rows of means); "
                         f"got {tuple(transition.shape)}")
    batch = 1 if batch_size is None else batch_size
    symbols = _sample_chain(transition.float(), T, batch, generator)
    noise = torch.randn(batch, T - 1, means.shape[1], generator=generator)
    inputs = (means.double()[symbols[:, :-1]] + noise_std * noise.double()).to(dtype)
    if batch_size is None:
        symbols, inputs = symbols[0], inputs[0]
    return StickyChainData(symbols=symbols, inputs=inputs, transition=transition.double(),
                           means=means.double(), noise_std=float(noise_std))


def gaussian_log_likelihood(inputs: torch.Tensor, means: torch.Tensor,
                            noise_std: float = 1.0) -> torch.Tensor:
    """``log N(x_t; mu_s, noise_std^2 I)`` for every position and symbol, ``(..., N, S)``.

    Args:
        inputs: ``(..., N, d)``.
        means: ``(S, d)``.
        noise_std: the isotropic noise standard deviation.
    """
    sq_dist = ((inputs.unsqueeze(-2) - means) ** 2).sum(dim=-1)
    dim = inputs.shape[-1]
    return -0.5 * sq_dist / noise_std**2 - 0.5 * dim * math.log(2 * math.pi * noise_std**2)


def _check_predictor_arguments(inputs, transition, means) -> None:
    """Inputs ``(..., N, d)``, a ``(S, S)`` transition and ``(S, d)`` means, or a ValueError."""
    check_float_tensor("inputs", inputs, min_dim=2)
    check_float_tensor("transition", transition, min_dim=2, max_dim=2)
    check_float_tensor("means", means, min_dim=2, max_dim=2)
    if means.shape[1] != inputs.shape[-1]:
        raise ValueError(f"means must be (S, d) with d={inputs.shape[-1]} (the inputs' last dim); "
                         f"got {tuple(means.shape)}")


def bayes_log_predictive(inputs: torch.Tensor, transition: torch.Tensor, means: torch.Tensor,
                         noise_std: float = 1.0) -> torch.Tensor:
    """The exact ``log p(y_t = c | x_1..x_t)``, shape ``(..., N, S)``, computed in float64.

    A forward filter over the hidden state ``z_t = y_{t-1}`` (uniform prior on ``z_1 = y_0``,
    transitions ``P``, Gaussian emissions) gives ``p(y_{t-1} | x_1..x_t)``; one more transition
    gives the predictive. Pass the true ``transition``, ``means`` and ``noise_std``: with any
    others the result is a mis-specified filter, not the Bayes-optimal predictor.

    Args:
        inputs: ``(..., N, d)`` inputs ``x_1..x_N``.
        transition: ``(S, S)`` transition matrix.
        means: ``(S, d)`` symbol means.
        noise_std: input noise standard deviation.
    """
    _check_predictor_arguments(inputs, transition, means)
    log_transition = transition.double().log()
    n_symbols = transition.shape[0]
    log_prior = torch.full((n_symbols,), -math.log(n_symbols), dtype=torch.float64)
    log_lik = gaussian_log_likelihood(inputs.double(), means.double(), noise_std)
    filtered = forward_filter(log_prior, log_transition, log_lik).log_posterior
    return predict_next(filtered, log_transition)


def memoryless_log_predictive(inputs: torch.Tensor, transition: torch.Tensor,
                              means: torch.Tensor, noise_std: float = 1.0) -> torch.Tensor:
    """``log p(y_t = c | x_t)`` from the current input alone, shape ``(..., N, S)``, float64.

    The posterior over ``y_{t-1}`` from ``x_t`` alone under the stationary (uniform) prior,
    pushed through one transition: the best predictor that ignores ``x_1..x_{t-1}``. Its
    cross-entropy minus :func:`bayes_log_predictive`'s is what the history is worth.

    Args:
        inputs: ``(..., N, d)``; transition: ``(S, S)``; means: ``(S, d)``; noise_std: as in
            :func:`bayes_log_predictive`.
    """
    _check_predictor_arguments(inputs, transition, means)
    log_lik = gaussian_log_likelihood(inputs.double(), means.double(), noise_std)
    return predict_next(log_lik.log_softmax(dim=-1), transition.double().log())


@dataclass(frozen=True)
class BayesReference:
    """What the Bayes-optimal predictor achieves on given sequences (``(B,)`` or scalars).

    Attributes:
        cross_entropy: mean over positions of ``-log p(y_t | x_1..x_t)`` (nats).
        predictive_entropy: mean over positions of the predictive's entropy (nats).
        accuracy: fraction of positions where the predictive's mode is ``y_t``.
        lower_bound: ``H(Y_t | Y_{t-1})`` (nats), the authors' theoretical minimum.
    """

    cross_entropy: torch.Tensor
    predictive_entropy: torch.Tensor
    accuracy: torch.Tensor
    lower_bound: float


def bayes_reference(data: StickyChainData) -> BayesReference:
    """Score the exact Bayes predictive of ``data`` (with its true parameters) on its targets."""
    log_pred = bayes_log_predictive(data.inputs, data.transition, data.means, data.noise_std)
    targets = data.targets
    nll = -log_pred.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return BayesReference(
        cross_entropy=nll.mean(dim=-1),
        predictive_entropy=entropy(log_pred.exp()).mean(dim=-1),
        accuracy=(log_pred.argmax(dim=-1) == targets).double().mean(dim=-1),
        lower_bound=conditional_entropy(data.transition),
    )
