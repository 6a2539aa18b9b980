"""How close a sequence model's predictive distributions are to the exact Bayes predictive.

Any architecture is scored the same way, through the task contract of
:mod:`~attention_dynamics.tasks.base`:

- a task draws a :class:`~attention_dynamics.tasks.base.TaskBatch` (tokens, targets, the exact
  Bayes predictive and its entropy at the scored positions);
- a model maps tokens ``(B, T)`` int64 to logits ``(B, T, vocab)``;
- :func:`evaluate` compares the two.

The metrics, all in bits (Paper I, section 3):

- **entropy MAE of the mean curve** (the authors' metric): average the model's and the Bayes
  entropy over samples at each scored position first, then take the mean absolute difference
  over positions;
- **per-sample entropy MAE**: the mean of ``|H_model - H_Bayes|`` over every scored position of
  every sample, which a model that is right only on average does not pass;
- **KL to the Bayes predictive**: ``KL(p_Bayes || p_model)``, the excess cross-entropy of the
  model over the Bayes-optimal predictor, averaged over scored positions. This direction is
  finite whenever the model gives every token positive probability, which a softmax does.

**The answer slice.** By default the model's distribution is the softmax over the whole
vocabulary, so probability a model puts on tokens that can never be the answer (a key, a marker)
counts as uncertainty. The authors instead measure the model on the answer slice: the tokens the
Bayes predictive can put mass on (a task's ``answer_tokens``: the value tokens, the hidden-state
tokens), with the softmax renormalised over them. Passing ``answer_tokens`` to :func:`evaluate`
or :func:`score_logits` does the same: the model's entropy and the KL are then those of
``softmax(logits[..., answer_tokens])``, and the report's ``leaked_mass`` says how much
probability the full softmax put outside the slice, the part the renormalisation hides.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from attention_dynamics.runtime import evaluation_mode
from attention_dynamics.tasks.base import IGNORE_INDEX, TaskBatch, check_logits
from attention_dynamics.validation import check_choice, check_positive_int

LN2 = math.log(2.0)


def check_answer_tokens(answer_tokens, vocab_size: int) -> torch.Tensor:
    """Require a non-empty 1-D int64 tensor of distinct token ids in ``0..vocab_size-1``."""
    if (not isinstance(answer_tokens, torch.Tensor) or answer_tokens.dtype != torch.int64
            or answer_tokens.ndim != 1 or answer_tokens.numel() == 0):
        raise ValueError(f"answer_tokens must be a non-empty 1-D int64 tensor of token ids; got "
                         f"{getattr(answer_tokens, 'dtype', type(answer_tokens).__name__)} of "
                         f"shape {tuple(getattr(answer_tokens, 'shape', ()))}")
    if answer_tokens.min() < 0 or answer_tokens.max() >= vocab_size:
        raise ValueError(f"answer_tokens must lie in 0..{vocab_size - 1} (the vocabulary); got "
                         f"values from {answer_tokens.min().item()} to {answer_tokens.max().item()}")
    if answer_tokens.unique().numel() != answer_tokens.numel():
        raise ValueError("answer_tokens must be distinct token ids; got repeats")
    return answer_tokens


def _outside(answer_tokens: torch.Tensor, vocab_size: int, device) -> torch.Tensor:
    """``(vocab_size,)`` bool, ``True`` at the tokens not in ``answer_tokens``."""
    outside = torch.ones(vocab_size, dtype=torch.bool, device=device)
    outside[answer_tokens.to(device)] = False
    return outside


def check_bayes_inside(batch: TaskBatch, answer_tokens: torch.Tensor,
                       tolerance: float = 1e-12) -> None:
    """Require ``batch``'s Bayes predictive to put at most ``tolerance`` mass outside the slice."""
    predictive = batch.bayes_predictive
    outside = _outside(answer_tokens, batch.vocab_size, predictive.device)
    leaked = predictive[..., outside].sum(-1).max().item() if outside.any() else 0.0
    if leaked > tolerance:
        raise ValueError(f"answer_tokens must hold all the Bayes predictive's mass; it puts up to "
                         f"{leaked:.3g} on other tokens")


def model_log_probs(logits: torch.Tensor, answer_tokens: torch.Tensor | None = None
                    ) -> torch.Tensor:
    """float64 log-probabilities of the model along the last dimension.

    Args:
        logits: ``(..., vocab)`` float.
        answer_tokens: ``(n,)`` int64 token ids, or ``None``.

    Returns:
        ``log_softmax(logits)`` ``(..., vocab)`` without ``answer_tokens``; with them, the
        log-softmax renormalised over the slice, ``(..., n)`` in the order of ``answer_tokens``.
    """
    logits = logits.double()
    if answer_tokens is not None:
        logits = logits[..., answer_tokens.to(logits.device)]
    return torch.log_softmax(logits, dim=-1)


def bayes_probs(batch: TaskBatch, answer_tokens: torch.Tensor | None = None) -> torch.Tensor:
    """The Bayes predictive ``(B, T, vocab)``, or its columns ``answer_tokens`` ``(B, T, n)``."""
    p = batch.bayes_predictive
    return p if answer_tokens is None else p[..., answer_tokens.to(p.device)]


def leaked_mass(logits: torch.Tensor, answer_tokens: torch.Tensor) -> torch.Tensor:
    """``(...)`` float64, the probability ``softmax(logits)`` puts outside ``answer_tokens``.

    Computed as ``1 - exp(logsumexp(logits[slice]) - logsumexp(logits))``, accurate for tiny
    leaks too; ``logits`` ``(..., vocab)``, ``answer_tokens`` ``(n,)`` int64.
    """
    logits = logits.double()
    inside = logits[..., answer_tokens.to(logits.device)].logsumexp(-1)
    return (-torch.expm1(inside - logits.logsumexp(-1))).clamp_min(0.0)


def entropy_bits(logits: torch.Tensor, answer_tokens: torch.Tensor | None = None) -> torch.Tensor:
    """Entropy in bits of ``softmax(logits)`` along the last dimension, computed in float64.

    With ``answer_tokens`` (``(n,)`` int64), of the softmax renormalised over those tokens. A
    ``-inf`` logit (probability 0) contributes 0.
    """
    log_probs = model_log_probs(logits, answer_tokens)
    terms = (log_probs.exp() * log_probs).masked_fill(log_probs == -math.inf, 0.0)
    return -terms.sum(-1) / LN2


def kl_to_bayes_bits(logits: torch.Tensor, batch: TaskBatch,
                     answer_tokens: torch.Tensor | None = None) -> torch.Tensor:
    """``KL(p_Bayes || softmax(logits))`` in bits, ``(B, T)``; zero at unscored positions.

    With ``answer_tokens`` (``(n,)`` int64, holding all the Bayes mass), the model's softmax is
    renormalised over those tokens.
    """
    check_logits(logits, batch)
    if answer_tokens is not None:
        check_answer_tokens(answer_tokens, batch.vocab_size)
        check_bayes_inside(batch, answer_tokens)
    return _kl_bits(logits, batch, answer_tokens)


def _kl_bits(logits: torch.Tensor, batch: TaskBatch, answer_tokens: torch.Tensor | None
             ) -> torch.Tensor:
    """:func:`kl_to_bayes_bits` without the argument checks, ``(B, T)``."""
    log_model = model_log_probs(logits, answer_tokens)
    p = bayes_probs(batch, answer_tokens)
    cross = torch.where(p > 0, p * log_model, 0.0)  # 0 where p = 0, even if log_model = -inf
    kl = (torch.special.xlogy(p, p) - cross).sum(-1) / LN2
    return kl * batch.mask


@dataclass(frozen=True)
class EntropyReport:
    """Model against Bayes on the scored positions of some batches (``P`` scored columns).

    Attributes:
        positions: ``(P,)`` int64, the token positions that were scored in some sequence.
        model_entropy: ``(P,)`` mean model entropy per position (bits).
        bayes_entropy: ``(P,)`` mean Bayes entropy per position (bits).
        abs_error: ``(P,)`` mean of ``|H_model - H_Bayes|`` per position over samples (bits).
        mae_mean_curve: mean over positions of ``|model_entropy - bayes_entropy|`` (bits).
        mae_per_sample: mean of ``|H_model - H_Bayes|`` over all scored entries (bits).
        kl_bits: mean ``KL(p_Bayes || p_model)`` over all scored entries (bits).
        n_scored: number of scored entries.
        leaked_mass: mean over scored entries of the probability the model's full softmax puts
            outside the answer slice (a fraction in ``[0, 1]``); ``nan`` when the report was made
            without ``answer_tokens`` (the model is then measured on the whole vocabulary).

    With ``answer_tokens`` the model's entropies and ``kl_bits`` are those of its softmax
    renormalised over the slice.
    """

    positions: torch.Tensor
    model_entropy: torch.Tensor
    bayes_entropy: torch.Tensor
    abs_error: torch.Tensor
    mae_mean_curve: float
    mae_per_sample: float
    kl_bits: float
    n_scored: int
    leaked_mass: float = math.nan


class _Accumulator:
    """Running sums per position for :func:`evaluate` (``answer_tokens`` already checked)."""

    def __init__(self, length: int, answer_tokens: torch.Tensor | None = None):
        zeros = torch.zeros(length, dtype=torch.float64)
        self.count, self.model, self.bayes = zeros.clone(), zeros.clone(), zeros.clone()
        self.abs_error = zeros.clone()
        self.kl = 0.0
        self.leaked = 0.0
        self.answer_tokens = answer_tokens

    def add(self, logits: torch.Tensor, batch: TaskBatch) -> None:
        mask = batch.mask
        tokens = self.answer_tokens
        if tokens is not None:
            check_bayes_inside(batch, tokens)
            self.leaked += (leaked_mass(logits, tokens) * mask).sum().item()
        h_model = entropy_bits(logits, tokens) * mask
        h_bayes = batch.bayes_entropy_bits * mask
        self.count += mask.sum(0).double().cpu()
        self.model += h_model.sum(0).cpu()
        self.bayes += h_bayes.sum(0).cpu()
        self.abs_error += (h_model - h_bayes).abs().sum(0).cpu()
        self.kl += _kl_bits(logits, batch, tokens).sum().item()

    def report(self) -> EntropyReport:
        scored = self.count > 0
        n = self.count.sum().item()
        if n == 0:
            raise ValueError("the batches had no scored position")
        count = self.count[scored]
        model, bayes = self.model[scored] / count, self.bayes[scored] / count
        return EntropyReport(positions=scored.nonzero().flatten(), model_entropy=model,
                             bayes_entropy=bayes, abs_error=self.abs_error[scored] / count,
                             mae_mean_curve=(model - bayes).abs().mean().item(),
                             mae_per_sample=self.abs_error.sum().item() / n, kl_bits=self.kl / n,
                             n_scored=int(n), leaked_mass=self._leaked_mass(n))

    def _leaked_mass(self, n: float) -> float:
        """Mean leaked mass over ``n`` scored entries; ``nan`` without an answer slice."""
        return math.nan if self.answer_tokens is None else self.leaked / n


def score_logits(logits: torch.Tensor, batch: TaskBatch,
                 answer_tokens: torch.Tensor | None = None) -> EntropyReport:
    """The :class:`EntropyReport` of logits ``(B, T, vocab)`` already computed on ``batch``.

    Args:
        logits: ``(B, T, vocab)`` float.
        batch: the batch the logits were computed on.
        answer_tokens: ``(n,)`` int64 distinct token ids holding all the Bayes mass (a task's
            ``answer_tokens``): measure the model's softmax renormalised over them. ``None``
            measures it over the whole vocabulary.
    """
    check_logits(logits, batch)
    if answer_tokens is not None:
        check_answer_tokens(answer_tokens, batch.vocab_size)
    accumulator = _Accumulator(batch.tokens.shape[1], answer_tokens)
    accumulator.add(logits, batch)
    return accumulator.report()


@torch.no_grad()
def evaluate(model: Callable[[torch.Tensor], torch.Tensor], batches: list[TaskBatch],
             answer_tokens: torch.Tensor | None = None) -> EntropyReport:
    """Score ``model`` (tokens ``(B, T)`` -> logits ``(B, T, vocab)``) on held-out batches.

    All batches must have the same length ``T``. A ``torch.nn.Module`` is put in eval mode for
    the call and restored afterwards. ``answer_tokens`` (``(n,)`` int64, or ``None``) is as in
    :func:`score_logits`.
    """
    if not batches:
        raise ValueError("batches must be a non-empty list of TaskBatch")
    length = batches[0].tokens.shape[1]
    if any(b.tokens.shape[1] != length for b in batches):
        raise ValueError("batches must all have the same sequence length")
    if answer_tokens is not None:
        check_answer_tokens(answer_tokens, batches[0].vocab_size)
    accumulator = _Accumulator(length, answer_tokens)
    with evaluation_mode(model):
        for batch in batches:
            accumulator.add(check_logits(model(batch.tokens), batch), batch)
    return accumulator.report()


LOSSES = ("sampled", "bayes")


def sequence_loss(logits: torch.Tensor, batch: TaskBatch, loss: str = "sampled") -> torch.Tensor:
    """Mean cross-entropy (nats) at ``batch``'s scored positions; ``logits`` ``(B, T, vocab)``."""
    check_choice("loss", loss, LOSSES)
    if loss == "sampled":
        return nn.functional.cross_entropy(logits.flatten(0, 1), batch.targets.flatten(),
                                           ignore_index=IGNORE_INDEX)
    mask = batch.mask
    log_probs = torch.log_softmax(logits[mask], dim=-1)
    return -(batch.bayes_predictive[mask].to(log_probs.dtype) * log_probs).sum(-1).mean()


def blind_predictor_maes(bayes_entropy_bits: torch.Tensor, n_outcomes: int) -> dict[str, float]:
    """Per-sample entropy MAEs (bits) of two predictors that ignore the observations.

    Nulls for the claim that a model tracks the Bayes entropy of *each* sequence:

    - ``"average_curve"``: the predictor whose entropy at every position is the Bayes entropy
      averaged over sequences. It scores 0 on the MAE of the mean curve by construction, so only
      the per-sample MAE can tell a filtering model from it;
    - ``"uniform"``: the uniform predictive over ``n_outcomes`` answers (entropy
      ``log2 n_outcomes`` everywhere), the plateau of a model that learned nothing.

    Args:
        bayes_entropy_bits: ``(N, Q)`` the Bayes entropy at the scored positions of ``N``
            sequences.
        n_outcomes: the number of possible answers at a scored position.
    """
    if bayes_entropy_bits.ndim != 2 or not bayes_entropy_bits.is_floating_point():
        raise ValueError(f"bayes_entropy_bits must be a float (N, Q) tensor; got "
                         f"{bayes_entropy_bits.dtype} {tuple(bayes_entropy_bits.shape)}")
    check_positive_int("n_outcomes", n_outcomes)
    average = (bayes_entropy_bits - bayes_entropy_bits.mean(0)).abs().mean().item()
    uniform = (math.log2(n_outcomes) - bayes_entropy_bits).abs().mean().item()
    return {"average_curve": average, "uniform": uniform}
