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


def entropy_bits(logits: torch.Tensor) -> torch.Tensor:
    """Entropy in bits of ``softmax(logits)`` along the last dimension, computed in float64."""
    log_probs = torch.log_softmax(logits.double(), dim=-1)
    return -(log_probs.exp() * log_probs).sum(-1) / LN2


def kl_to_bayes_bits(logits: torch.Tensor, batch: TaskBatch) -> torch.Tensor:
    """``KL(p_Bayes || softmax(logits))`` in bits, ``(B, T)``; zero at unscored positions."""
    check_logits(logits, batch)
    log_model = torch.log_softmax(logits.double(), dim=-1)
    p = batch.bayes_predictive
    kl = (torch.special.xlogy(p, p) - p * log_model).sum(-1) / LN2
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
    """

    positions: torch.Tensor
    model_entropy: torch.Tensor
    bayes_entropy: torch.Tensor
    abs_error: torch.Tensor
    mae_mean_curve: float
    mae_per_sample: float
    kl_bits: float
    n_scored: int


class _Accumulator:
    """Running sums per position for :func:`evaluate`."""

    def __init__(self, length: int):
        zeros = torch.zeros(length, dtype=torch.float64)
        self.count, self.model, self.bayes = zeros.clone(), zeros.clone(), zeros.clone()
        self.abs_error = zeros.clone()
        self.kl = 0.0

    def add(self, logits: torch.Tensor, batch: TaskBatch) -> None:
        mask = batch.mask
        h_model = entropy_bits(logits) * mask
        h_bayes = batch.bayes_entropy_bits * mask
        self.count += mask.sum(0).double().cpu()
        self.model += h_model.sum(0).cpu()
        self.bayes += h_bayes.sum(0).cpu()
        self.abs_error += (h_model - h_bayes).abs().sum(0).cpu()
        self.kl += kl_to_bayes_bits(logits, batch).sum().item()

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
                             n_scored=int(n))


def score_logits(logits: torch.Tensor, batch: TaskBatch) -> EntropyReport:
    """The :class:`EntropyReport` of logits ``(B, T, vocab)`` already computed on ``batch``."""
    check_logits(logits, batch)
    accumulator = _Accumulator(batch.tokens.shape[1])
    accumulator.add(logits, batch)
    return accumulator.report()


@torch.no_grad()
def evaluate(model: Callable[[torch.Tensor], torch.Tensor], batches: list[TaskBatch]
             ) -> EntropyReport:
    """Score ``model`` (tokens ``(B, T)`` -> logits ``(B, T, vocab)``) on held-out batches.

    All batches must have the same length ``T``. A ``torch.nn.Module`` is put in eval mode for
    the call and restored afterwards.
    """
    if not batches:
        raise ValueError("batches must be a non-empty list of TaskBatch")
    length = batches[0].tokens.shape[1]
    if any(b.tokens.shape[1] != length for b in batches):
        raise ValueError("batches must all have the same sequence length")
    accumulator = _Accumulator(length)
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
