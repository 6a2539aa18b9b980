"""Exact Bayesian reference computations, batched and in log space.

Two helpers that the tasks build their Bayes-optimal predictors from:

- :func:`entropy` of a categorical distribution, in nats or bits;
- :func:`forward_filter` for a discrete hidden Markov model (the forward algorithm), which
  returns the filtered log posteriors and the log evidence increments, with
  :func:`predict_next` for the one-step-ahead state distribution.

Everything is vectorised over leading batch dimensions, which broadcast against each other;
only the time recursion is a Python loop. Probabilities stay in log space (``logsumexp``), so
long sequences neither underflow nor need rescaling.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from attention_dynamics.validation import check_choice, check_float_tensor

UNITS = ("nats", "bits")


def entropy(probs: torch.Tensor, dim: int = -1, unit: str = "nats") -> torch.Tensor:
    """Shannon entropy ``-sum_k p_k log p_k`` of the distributions along ``dim``.

    Args:
        probs: probabilities, any shape, floating point; entries along ``dim`` should sum to
            one (not checked, so that sub-distributions can be measured too).
        dim: the dimension that indexes the outcomes.
        unit: ``"nats"`` (natural log) or ``"bits"`` (log base 2).

    Returns:
        ``probs`` with ``dim`` removed, in ``unit``. Zero probabilities contribute exactly 0
        (``torch.special.xlogy``), with no epsilon.
    """
    check_float_tensor("probs", probs, min_dim=1)
    check_choice("unit", unit, UNITS)
    nats = -torch.special.xlogy(probs, probs).sum(dim=dim)
    return nats / math.log(2.0) if unit == "bits" else nats


class FilterResult(NamedTuple):
    """Output of :func:`forward_filter` (``...`` is the broadcast batch shape).

    Attributes:
        log_posterior: ``log p(state_t | obs_1..obs_t)``, shape ``(..., T, S)``.
        log_evidence_increments: ``log p(obs_t | obs_1..obs_{t-1})``, shape ``(..., T)``
            (for ``t = 1`` this is ``log p(obs_1)``); their sum over time is the log
            evidence ``log p(obs_1..obs_T)``.
    """

    log_posterior: torch.Tensor
    log_evidence_increments: torch.Tensor


def predict_next(log_posterior: torch.Tensor, log_transition: torch.Tensor) -> torch.Tensor:
    """One-step-ahead state distribution ``log sum_s p(s) A[s, s']``.

    Args:
        log_posterior: ``(..., S)`` or ``(..., T, S)`` log probabilities over the current state.
        log_transition: ``(..., S, S)``, row = from-state, column = to-state; its leading
            dimensions broadcast against those of ``log_posterior`` before the state axis
            (so with a time axis, pass ``log_transition.unsqueeze(-3)`` for per-batch matrices).

    Returns:
        Log probabilities over the next state, the broadcast shape of ``(..., S)``.
    """
    return torch.logsumexp(log_posterior.unsqueeze(-1) + log_transition, dim=-2)


def _check_filter_inputs(log_prior, log_transition, log_likelihood) -> tuple[int, torch.Size]:
    """Validate :func:`forward_filter`'s arguments; return ``S`` and the broadcast batch shape."""
    check_float_tensor("log_prior", log_prior, min_dim=1)
    check_float_tensor("log_transition", log_transition, min_dim=2, dtype=log_prior.dtype)
    check_float_tensor("log_likelihood", log_likelihood, min_dim=2, dtype=log_prior.dtype)
    n_states = log_prior.shape[-1]
    if tuple(log_transition.shape[-2:]) != (n_states, n_states):
        raise ValueError(f"log_transition must have shape (..., S, S) with S={n_states} (the "
                         f"last dim of log_prior); got {tuple(log_transition.shape)}")
    if log_likelihood.shape[-1] != n_states or log_likelihood.shape[-2] < 1:
        raise ValueError(f"log_likelihood must have shape (..., T, S) with T >= 1 and "
                         f"S={n_states}; got {tuple(log_likelihood.shape)}")
    try:
        batch = torch.broadcast_shapes(log_prior.shape[:-1], log_transition.shape[:-2],
                                       log_likelihood.shape[:-2])
    except RuntimeError as err:
        raise ValueError(f"the batch dims of log_prior {tuple(log_prior.shape[:-1])}, "
                         f"log_transition {tuple(log_transition.shape[:-2])} and log_likelihood "
                         f"{tuple(log_likelihood.shape[:-2])} do not broadcast") from err
    return n_states, batch


def forward_filter(log_prior: torch.Tensor, log_transition: torch.Tensor,
                   log_likelihood: torch.Tensor) -> FilterResult:
    """Forward algorithm for a discrete HMM, in log space.

    The model: ``state_1 ~ prior``, ``state_{t+1} | state_t ~ A[state_t, :]``, and
    ``obs_t`` depends on ``state_t`` alone through ``log_likelihood[..., t, s] =
    log p(obs_t | state_t = s)`` (a log density for continuous observations, which is fine:
    it only shifts the evidence).

    Args:
        log_prior: ``(..., S)``, log probabilities of the first hidden state.
        log_transition: ``(..., S, S)``, ``log A``, row = from-state, column = to-state.
            Rows are not required to be normalised, but the evidence is only a probability
            if they are.
        log_likelihood: ``(..., T, S)``, log likelihood of each observation under each state.

    The leading (batch) dimensions of the three broadcast against each other. All three must
    share one floating dtype; use float64 when the result is a reference value.

    Returns:
        A :class:`FilterResult`: filtered log posteriors ``(..., T, S)`` and log evidence
        increments ``(..., T)``, in nats. A row of ``log_likelihood`` that is ``-inf`` under every
        state the filter allows gives ``nan`` (the observations are impossible).
    """
    n_states, batch = _check_filter_inputs(log_prior, log_transition, log_likelihood)
    length = log_likelihood.shape[-2]
    log_likelihood = log_likelihood.expand(*batch, length, n_states)
    log_posterior = log_likelihood.new_empty(*batch, length, n_states)
    increments = log_likelihood.new_empty(*batch, length)
    log_predicted = log_prior.expand(*batch, n_states)
    for t in range(length):
        joint = log_predicted + log_likelihood[..., t, :]
        increments[..., t] = torch.logsumexp(joint, dim=-1)
        log_posterior[..., t, :] = joint - increments[..., t, None]
        log_predicted = predict_next(log_posterior[..., t, :], log_transition)
    return FilterResult(log_posterior, increments)
