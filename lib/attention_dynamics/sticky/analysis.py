"""The EM reading of the sticky-chain head, measured: paths, settling, linear response, curvature.

Measures for the one-head model of :mod:`~attention_dynamics.sticky.model` and the snapshots
that :func:`~attention_dynamics.sticky.training.train` keeps (``record_params=True``):

- **Paths** of the value prototypes: :func:`~attention_dynamics.measures.geometry.class_means`
  turns the ``N`` value vectors of a sequence into one prototype per hidden symbol, and
  :func:`~attention_dynamics.measures.trajectories.path_summary` measures their paths over the
  snapshots (length, straightness, persistence), which is what Paper II's PCA pictures show.
- **Settling** (:func:`frame_precision`): at every snapshot, how far the attention weights
  (mean total-variation distance between rows, via
  :func:`~attention_dynamics.measures.geometry.attention_drift`) and the value vectors (relative
  Frobenius distance) still are from where training leaves them, and how much each changes
  per step. :func:`~attention_dynamics.measures.trajectories.settling_step` reads off when
  each has come within a fraction of its final state, which is how "attention settles before
  the values" is measured.
- **Linear response** (:func:`linear_response_logits`): to first order in the scores, around
  uniform attention, the head's logits are ``xbar_i W_V W_O + x_i M S_i W_V W_O`` with
  ``M = W_Q W_K^T / sqrt(d_k)`` and ``S_i`` the covariance of the inputs ``x_1..x_i``; how
  well this reproduces the real logits (:func:`linear_response_error`) says whether the head
  routes at all or only tilts a uniform average; so does how close to uniform its attention
  rows stay (:func:`attention_uniformity`).
- **Curvature** (:func:`value_curvature`): the largest eigenvalue of the Hessian of the loss
  in ``W_V`` (the loss is convex in ``W_V`` when the rest is held), whose inverse sets the
  largest stable learning rate of plain gradient descent on the values, ``2 / lambda_max``.

Snapshots come first in every tensor (``S`` or ``M``), runs second (``R``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from attention_dynamics.bayes import entropy
from attention_dynamics.heads import HeadProblem
from attention_dynamics.measures.geometry import attention_drift
from attention_dynamics.sticky.model import (
    HeadParams,
    StepResult,
    check_batch,
    forward_record,
    loss_and_grads,
)
from attention_dynamics.validation import check_float_tensor


def evaluate_snapshots(snapshots: Sequence[HeadParams], x: torch.Tensor,
                       targets: torch.Tensor) -> StepResult:
    """Loss, entropy and accuracy of every snapshot on ``(x, targets)``, each ``(M, R)``.

    For scoring weight snapshots on a sequence they were not trained on (a held-out one).

    Args:
        snapshots: ``M`` weight snapshots of ``R`` runs; x: ``(R, N, d_x)``;
            targets: ``(R, N)`` int64.
    """
    results = [loss_and_grads(params, x, targets, with_grads=False) for params in snapshots]
    return StepResult(loss=torch.stack([r.loss for r in results]),
                      entropy=torch.stack([r.entropy for r in results]),
                      accuracy=torch.stack([r.accuracy for r in results]), grads=None)


def attention_rows(params: HeadParams, x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """The causal attention weights of the queries ``rows`` only, ``(R, Q, N)``.

    The same weights as :func:`~attention_dynamics.sticky.model.forward_record` gives in
    those rows, without computing the other ``N - Q`` rows.

    Args:
        params: the weights of ``R`` runs.
        x: ``(R, N, d_x)`` inputs.
        rows: ``(Q,)`` int64 query positions in ``0..N-1``.
    """
    check_batch(params, x)
    if rows.dtype != torch.int64 or rows.ndim != 1:
        raise ValueError(f"rows must be a 1-d int64 tensor; got {rows.dtype} "
                         f"{tuple(rows.shape)}")
    length = x.shape[1]
    if rows.numel() and (rows.min() < 0 or rows.max() >= length):
        raise ValueError(f"rows must lie in 0..{length - 1}")
    rows = rows.to(x.device)
    q = x[:, rows] @ params.w_q
    k = x @ params.w_k
    scores = q @ k.transpose(1, 2) / q.shape[-1] ** 0.5
    future = torch.arange(length, device=x.device)[None, :] > rows[:, None]      # (Q, N)
    return scores.masked_fill(future, float("-inf")).softmax(dim=-1)


def symbol_routing(weights: torch.Tensor, rows: torch.Tensor, labels: torch.Tensor
                   ) -> torch.Tensor:
    """How much more attention goes to keys of the query's own hidden symbol than chance, ``(R,)``.

    For query ``i``, the attention mass on the visible keys ``j <= i`` with ``labels_j =
    labels_i``, divided by the share of such keys among the visible ones (so uniform attention
    scores 1, and attention that acts as a responsibility over the hidden symbol scores up to
    ``i / #{j <= i : labels_j = labels_i}``); averaged over the rows.

    Args:
        weights: ``(R, Q, N)`` attention rows (:func:`attention_rows`).
        rows: ``(Q,)`` their query positions.
        labels: ``(R, N)`` int64 hidden symbols of the positions.
    """
    check_float_tensor("weights", weights, min_dim=3, max_dim=3)
    if labels.shape != (weights.shape[0], weights.shape[2]) or rows.shape != weights.shape[1:2]:
        raise ValueError(f"labels must be (R, N) = {(weights.shape[0], weights.shape[2])} and "
                         f"rows ({weights.shape[1]},); got {tuple(labels.shape)} and "
                         f"{tuple(rows.shape)}")
    length = weights.shape[2]
    visible = torch.arange(length, device=weights.device)[None, :] <= rows[:, None]     # (Q, N)
    same = (labels[:, rows].unsqueeze(-1) == labels.unsqueeze(1)) & visible             # (R, Q, N)
    mass = (weights.double() * same).sum(dim=-1)
    share = same.sum(dim=-1).double() / visible.sum(dim=-1).double()
    return (mass / share).mean(dim=-1)


@dataclass(frozen=True)
class FramePrecision:
    """How far attention and values are from their final state along training (``M``
    snapshots, ``R`` runs).

    Attributes:
        steps: ``(M,)`` the snapshot steps.
        attention_remaining: ``(M, R)``, the mean total-variation distance between the
            attention rows at the snapshot and at the end, divided by the same at the start
            (1 at the start, 0 at the end).
        value_remaining: ``(M, R)``, ``|V_s - V_end|_F / |V_0 - V_end|_F`` for the value
            vectors ``V = X W_V`` of all positions.
        attention_change: ``(M - 1, R)``, the mean total-variation distance between the rows
            at consecutive snapshots, per training step.
        value_change: ``(M - 1, R)``, ``|V_{k+1} - V_k|_F / |V_k|_F`` per training step.
        attention_total: ``(R,)``, the total-variation distance between the first and last
            snapshot's rows (how far attention moves at all, on a 0-to-1 scale).
        value_total: ``(R,)``, ``|V_end - V_0|_F / |V_0|_F``.
    """

    steps: torch.Tensor
    attention_remaining: torch.Tensor
    value_remaining: torch.Tensor
    attention_change: torch.Tensor
    value_change: torch.Tensor
    attention_total: torch.Tensor
    value_total: torch.Tensor


def frame_precision(snapshots: Sequence[HeadParams], steps: torch.Tensor, x: torch.Tensor,
                    rows: torch.Tensor) -> FramePrecision:
    """Distances of the attention weights and the values from their final state, per snapshot.

    Args:
        snapshots: ``M >= 2`` weight snapshots of ``R`` runs, in training order
            (``TrainingHistory.param_snapshots``).
        steps: ``(M,)`` their step numbers (``TrainingHistory.snapshot_steps``), increasing.
        x: ``(R, N, d_x)`` the inputs the runs were trained on.
        rows: ``(Q,)`` int64 query positions whose attention rows are compared (all ``N``
            rows cost ``R N^2`` numbers per snapshot; an evenly spaced subset is enough).

    Returns:
        A :class:`FramePrecision`, in float64.
    """
    snapshots = list(snapshots)
    if len(snapshots) < 2:
        raise ValueError(f"snapshots must hold at least 2 snapshots; got {len(snapshots)}")
    if steps.shape != (len(snapshots),) or not bool((steps.diff() > 0).all()):
        raise ValueError(f"steps must be {len(snapshots)} increasing step numbers (one per "
                         f"snapshot); got {steps.tolist()}")
    n_runs = snapshots[0].n_runs

    def drift(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.tensor([attention_drift(a[r], b[r]) for r in range(n_runs)],
                            dtype=torch.float64)

    def frobenius(v: torch.Tensor) -> torch.Tensor:
        return v.double().flatten(1).norm(dim=1)

    final_rows = attention_rows(snapshots[-1], x, rows)
    final_values = x @ snapshots[-1].w_v
    first_values = x @ snapshots[0].w_v
    to_final_attention, to_final_values, attention_change, value_change = [], [], [], []
    previous_rows, previous_values = None, None
    for params in snapshots:
        current_rows, values = attention_rows(params, x, rows), x @ params.w_v
        to_final_attention.append(drift(current_rows, final_rows))
        to_final_values.append(frobenius(values - final_values))
        if previous_rows is not None:
            attention_change.append(drift(current_rows, previous_rows))
            value_change.append(frobenius(values - previous_values) / frobenius(previous_values))
        previous_rows, previous_values = current_rows, values
    gaps = steps.diff().double().unsqueeze(1)
    attention_to_final = torch.stack(to_final_attention)
    values_to_final = torch.stack(to_final_values)
    return FramePrecision(
        steps=steps.clone(),
        attention_remaining=attention_to_final / attention_to_final[0],
        value_remaining=values_to_final / values_to_final[0],
        attention_change=torch.stack(attention_change) / gaps,
        value_change=torch.stack(value_change) / gaps,
        attention_total=attention_to_final[0],
        value_total=values_to_final[0] / frobenius(first_values),
    )


def _running_moments(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Causal running means ``(R, N, d)`` and covariances ``(R, N, d, d)`` of ``x_1..x_i``."""
    count = torch.arange(1, x.shape[1] + 1, dtype=x.dtype, device=x.device).view(1, -1, 1)
    mean = x.cumsum(dim=1) / count
    second = (x.unsqueeze(-1) * x.unsqueeze(-2)).cumsum(dim=1) / count.unsqueeze(-1)
    return mean, second - mean.unsqueeze(-1) * mean.unsqueeze(-2)


def linear_response_logits(params: HeadParams, x: torch.Tensor) -> tuple[torch.Tensor,
                                                                          torch.Tensor]:
    """The head's logits to first order in the scores around uniform causal attention.

    With ``alpha_ij = (1 + s_ij - mean_j s_ij) / i + O(s^2)`` over the ``i`` visible keys,
    the output ``o_i = sum_j alpha_ij x_j W_V`` becomes ``xbar_i W_V + x_i M S_i W_V`` with
    ``M = W_Q W_K^T / sqrt(d_k)``, ``xbar_i`` and ``S_i`` the mean and (biased) covariance of
    ``x_1..x_i``. The first term is the same uniform average the untrained head computes; the
    second, linear in each of ``W_Q``, ``W_K``, ``W_V`` (and ``W_O`` after the readout), is
    the only part of the logits that depends on the current input.

    Args:
        params: the weights of ``R`` runs; x: ``(R, N, d_x)`` inputs.

    Returns:
        ``(baseline, content)``, each ``(R, N, C)``: ``xbar_i W_V W_O`` and
        ``x_i M S_i W_V W_O``. Their sum approximates the logits of
        :func:`~attention_dynamics.sticky.model.forward_record`.
    """
    check_batch(params, x)
    mean, cov = _running_moments(x.double())
    readout = params.w_v.double() @ params.w_o.double()                         # (R, d_x, C)
    frame = params.w_q.double() @ params.w_k.double().transpose(1, 2) / params.w_q.shape[-1] ** 0.5
    baseline = mean @ readout
    tilted = torch.einsum("rnd,rde,rnef->rnf", x.double(), frame, cov)          # x_i M S_i
    return baseline, tilted @ readout


def linear_response_error(params: HeadParams, x: torch.Tensor) -> torch.Tensor:
    """How far the first-order expansion is from the head's input-dependent logits, ``(R,)``.

    The relative Frobenius error ``|c - c_lin| / |c|`` over all positions and classes of a
    run, where ``c = logits - baseline`` is the part of the real logits
    (:func:`~attention_dynamics.sticky.model.forward_record`) beyond the uniform average and
    ``c_lin`` its first-order expansion (both from :func:`linear_response_logits`), in float64.
    Of order the scores' size: near 0 when the head only tilts a uniform average, near 1 or
    above when it routes.

    Args:
        params: the weights of ``R`` runs; x: ``(R, N, d_x)`` inputs.
    """
    baseline, content = linear_response_logits(params, x)
    _, logits = forward_record(params, x)
    actual = logits.double() - baseline
    return (actual - content).flatten(1).norm(dim=1) / actual.flatten(1).norm(dim=1)


def attention_uniformity(weights: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """The entropy of each causal attention row over its largest possible value, ``(R, Q)``.

    Row ``i`` sees the ``i + 1`` keys ``0..i``, so its entropy (nats, in float64) is divided by
    ``log(i + 1)``: 1 for uniform attention over the visible keys, 0 for all of it on one key.

    Args:
        weights: ``(R, Q, N)`` attention rows (:func:`attention_rows`).
        rows: ``(Q,)`` their query positions, each at least 1 (row 0 has one key only).
    """
    check_float_tensor("weights", weights, min_dim=3, max_dim=3)
    if rows.shape != weights.shape[1:2] or (rows.numel() and rows.min() < 1):
        raise ValueError(f"rows must be ({weights.shape[1]},) positions of at least 1; got "
                         f"{tuple(rows.shape)}")
    return entropy(weights.double()) / torch.log(rows.double().to(weights.device) + 1)


def value_curvature(params: HeadParams, x: torch.Tensor) -> torch.Tensor:
    """Largest eigenvalue of the Hessian of the mean cross-entropy in ``W_V``, per run ``(R,)``.

    The logits ``z_i = a_i W_V W_O`` (``a_i = sum_j alpha_ij x_j``) are linear in ``W_V``, so
    the Hessian does not depend on the targets:
    ``H = (1/N) sum_i (a_i^T a_i) (x) (W_O (diag p_i - p_i p_i^T) W_O^T)``, a
    ``d_x d_v x d_x d_v`` positive semi-definite matrix, computed exactly in float64. Plain
    gradient descent on ``W_V`` alone is stable (locally, with everything else held) for
    learning rates below ``2 / lambda_max``.

    Args:
        params: the weights of ``R`` runs; x: ``(R, N, d_x)`` inputs.
    """
    check_batch(params, x)
    rows = torch.arange(x.shape[1], device=x.device)
    largest = []
    for r in range(params.n_runs):
        run = params.select(r).map(torch.Tensor.double)
        averaged = attention_rows(run, x[r:r + 1].double(), rows)[0] @ x[r].double()  # (N, d_x)
        probs = (averaged @ run.w_v[0] @ run.w_o[0]).softmax(dim=-1)                   # (N, C)
        w_o = run.w_o[0]
        # W_O (diag p - p p^T) W_O^T for every position, (N, d_v, d_v)
        spread = torch.einsum("ec,nc,fc->nef", w_o, probs, w_o)
        projected = probs @ w_o.T
        spread -= projected.unsqueeze(-1) * projected.unsqueeze(-2)
        hessian = torch.einsum("nd,ng,nef->degf", averaged, averaged, spread) / x.shape[1]
        size = averaged.shape[1] * w_o.shape[0]
        largest.append(torch.linalg.eigvalsh(hessian.reshape(size, size))[-1])
    return torch.stack(largest)


def head_problem(params: HeadParams, x: torch.Tensor, targets: torch.Tensor, run: int,
                 length: int | None = None) -> HeadProblem:
    """Run ``run`` of the batched model as a float64 :class:`~attention_dynamics.heads.HeadProblem`.

    So that chapter 1's measures, written for one attention layer with a loss, apply to a
    sticky-chain head as trained: one sequence (``x[run]``, ``targets[run]``, their first
    ``length`` positions; all by default), one head, the causal mask, fresh leaf weights.

    Args:
        params: the weights of ``R`` runs; x: ``(R, N, d_x)``; targets: ``(R, N)`` int64;
        run: which run, in ``0..R-1``; length: positions to keep, ``1..N``.
    """
    check_batch(params, x, targets)
    if not isinstance(run, int) or not 0 <= run < params.n_runs:
        raise ValueError(f"run must be an int in 0..{params.n_runs - 1}; got {run!r}")
    length = x.shape[1] if length is None else length
    if not isinstance(length, int) or not 1 <= length <= x.shape[1]:
        raise ValueError(f"length must be an int in 1..{x.shape[1]}; got {length!r}")

    def leaf(weight: torch.Tensor) -> torch.Tensor:
        return weight[run : run + 1].detach().double().clone().requires_grad_()

    return HeadProblem(x=x[run, None, None, :length].double(), w_q=leaf(params.w_q),
                       w_k=leaf(params.w_k), w_v=leaf(params.w_v),
                       readout=params.w_o[run : run + 1].detach().double(),
                       targets=targets[run, None, :length], mask="causal")
