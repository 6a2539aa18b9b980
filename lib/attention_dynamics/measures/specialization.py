"""The value update, its feedback on routing, and measures of specialization (chapter 2).

Value update. With ``u_i = dL/do_i`` and attention weights ``alpha`` (``(..., N, M)``: N queries,
M values), ``dL/dv_j = sum_i alpha_ij u_i``, so one gradient step on free values is

    Delta v_j = -eta sum_i alpha_ij u_i.

When values are projections ``v_j = z_j W_V`` of inputs ``Z`` (``(..., M, d_z)``), the step on
``W_V`` is ``-eta Z^T alpha^T U`` and the values move by ``Delta V = -eta (Z Z^T) alpha^T U``: the
same pull, filtered through the Gram matrix of the inputs.

Specialization. For queries in ``G`` latent groups, the *routing matrix* ``P_gj`` is the mean
attention that group ``g`` pays to value ``j``. Give each group prior ``1/G`` and let a query draw
a value ``J`` from its attention: the joint law is ``p(g, j) = P_gj / G``. Then

- the *responsibility* of group ``g`` for value ``j`` is ``R_gj = p(g | j) = P_gj / sum_h P_hj``,
  the share of ``v_j``'s pull (in a group-balanced batch) that comes from group ``g``;
- *routing specialization* is the normalised mutual information ``I(G; J) / log G``: 0 when
  routing ignores the group, 1 when every value is used by one group only;
- *prototype specialization* asks in addition that the value a query draws serve it:
  ``S = sum_g (1/G) sum_j P_gj pi_j(c_g)``, with ``pi_j = softmax(v_j W_O)`` the prediction of value
  ``j`` read out alone and ``c_g`` the class group ``g`` needs, rescaled as
  ``(S - 1/G) / (1 - 1/G)``: 0 whenever routing ignores the group (whatever the values), 1 when
  each group draws only values that predict its class with certainty.

Feedback. After a value step the advantages change by ``dA``
(:func:`value_step_feedback`, first order; :func:`exact_advantage_change`, split exactly;
:func:`head_advantage` before and after a real step); the step reinforces routing when
``alpha * dA`` points along the score gradient ``alpha * A`` (:func:`reinforcement_index`).

Entropies use natural logarithms (nats) and ``xlogy``, so ``0 log 0 = 0`` without an epsilon.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from attention_dynamics.gradients import (
    advantage,
    cross_entropy_hvp,
    cross_entropy_upstream,
    projection_gradient,
    value_gradient,
)
from attention_dynamics.validation import check_float_tensor


def _check_groups(groups, n_queries: int, n_groups: int) -> torch.Tensor:
    if not isinstance(n_groups, int) or isinstance(n_groups, bool) or n_groups < 2:
        raise ValueError(f"n_groups must be an int >= 2; got {n_groups!r}")
    if not isinstance(groups, torch.Tensor) or groups.dtype != torch.long or groups.ndim != 1:
        raise ValueError(f"groups must be a 1-D long tensor of group indices; got "
                         f"{getattr(groups, 'dtype', type(groups).__name__)}")
    if groups.numel() != n_queries:
        raise ValueError(f"groups must have one entry per query ({n_queries}); got {groups.numel()}")
    if groups.numel() and (groups.min() < 0 or groups.max() >= n_groups):
        raise ValueError(f"groups must lie in 0 .. n_groups-1 = {n_groups - 1}")
    counts = torch.bincount(groups, minlength=n_groups)
    if (counts == 0).any():
        raise ValueError(f"groups leaves group(s) {(counts == 0).nonzero().flatten().tolist()} "
                         f"empty; every group needs a query")
    return groups


def routing_matrix(weights: torch.Tensor, groups: torch.Tensor, n_groups: int) -> torch.Tensor:
    """``P_gj``: mean attention of group ``g``'s queries to value ``j``.

    Args:
        weights: attention ``alpha`` ``(..., N, M)``, rows summing to one.
        groups: ``(N,)`` long, the latent group of each query.
        n_groups: ``G``.

    Returns:
        ``(..., G, M)``; each row sums to one.
    """
    check_float_tensor("weights", weights, min_dim=2)
    _check_groups(groups, weights.shape[-2], n_groups)
    onehot = F.one_hot(groups, n_groups).to(weights.dtype)          # (N, G)
    mean = onehot / onehot.sum(dim=0, keepdim=True)                 # columns average a group
    return mean.transpose(0, 1) @ weights


def responsibility_matrix(weights: torch.Tensor, groups: torch.Tensor,
                          n_groups: int) -> torch.Tensor:
    """``R_gj = P_gj / sum_h P_hj``: the share of value ``j``'s responsibility held by group ``g``.

    Group-balanced (each group weighs ``1/G`` whatever its size). Returns ``(..., G, M)``; each
    column sums to one. A value that no query attends to (``sum_h P_hj = 0``) gets ``1/G``.
    """
    p = routing_matrix(weights, groups, n_groups)
    total = p.sum(dim=-2, keepdim=True)
    return torch.where(total > 0, p / total.clamp_min(torch.finfo(p.dtype).tiny),
                       torch.full_like(p, 1.0 / n_groups))


def routing_specialization(weights: torch.Tensor, groups: torch.Tensor,
                           n_groups: int) -> torch.Tensor:
    """Normalised mutual information ``I(G; J) / log G`` between a query's group and its value.

    ``J`` is drawn from the query's attention and ``G`` is uniform. Equals
    ``1 - sum_j w_j H(R_.j) / log G`` with ``w_j = (1/G) sum_g P_gj`` the attention mass of value
    ``j`` and ``H(R_.j)`` the entropy of its responsibility column. 0 when the routing does not
    depend on the group, 1 when each value is attended by one group only. Returns ``(...)``.
    """
    p = routing_matrix(weights, groups, n_groups) / n_groups          # joint p(g, j)
    p_j = p.sum(dim=-2, keepdim=True)
    conditional_entropy = -(torch.xlogy(p, p) - torch.xlogy(p, p_j)).sum(dim=(-2, -1))
    return 1.0 - conditional_entropy / math.log(n_groups)


def value_predictions(values: torch.Tensor, readout: torch.Tensor | None = None) -> torch.Tensor:
    """``pi_j = softmax(v_j W_O)``: what each value predicts when read out alone.

    ``values`` ``(..., M, d_v)``, ``readout`` ``(d_v, C)`` (identity when ``None``); ``(..., M, C)``.
    """
    check_float_tensor("values", values, min_dim=2)
    logits = values if readout is None else values @ readout
    return torch.softmax(logits, dim=-1)


def prototype_specialization(weights: torch.Tensor, groups: torch.Tensor, n_groups: int,
                             predictions: torch.Tensor,
                             group_classes: torch.Tensor | None = None) -> torch.Tensor:
    """``(S - 1/G) / (1 - 1/G)`` with ``S = sum_g (1/G) sum_j P_gj pi_j(c_g)``.

    ``S`` is the probability that a value drawn by the attention of a query (of a uniformly
    chosen group) predicts, read out alone, the class that the query's group needs.

    Args:
        weights: ``(..., N, M)`` attention; groups: ``(N,)`` long; n_groups: ``G``.
        predictions: ``pi`` ``(..., M, C)``, rows on the simplex (see :func:`value_predictions`).
        group_classes: ``(G,)`` long, the class each group needs (default: group ``g`` needs
            class ``g``). With distinct classes, routing that ignores the group gives exactly 0.

    Returns:
        ``(...)``: 1 for a fully specialized head, 0 for group-blind routing.
    """
    check_float_tensor("weights", weights, min_dim=2)
    check_float_tensor("predictions", predictions, min_dim=2, dtype=weights.dtype)
    if predictions.shape[-2] != weights.shape[-1]:
        raise ValueError(f"predictions must have one row per value ({weights.shape[-1]}); got "
                         f"shape {tuple(predictions.shape)}")
    if group_classes is None:
        group_classes = torch.arange(n_groups, device=weights.device)
    if (group_classes.dtype != torch.long or group_classes.shape != (n_groups,)
            or group_classes.min() < 0 or group_classes.max() >= predictions.shape[-1]):
        raise ValueError(f"group_classes must be a ({n_groups},) long tensor of class indices "
                         f"below {predictions.shape[-1]}")
    p = routing_matrix(weights, groups, n_groups)                     # (..., G, M)
    fit = predictions[..., group_classes].transpose(-1, -2)           # (..., G, M): pi_j(c_g)
    score = (p * fit).sum(dim=(-2, -1)) / n_groups
    chance = 1.0 / n_groups
    return (score - chance) / (1.0 - chance)


def dominant_group(weights: torch.Tensor, groups: torch.Tensor, n_groups: int) -> torch.Tensor:
    """For each value, the group holding most of its responsibility: ``(..., M)`` long."""
    return responsibility_matrix(weights, groups, n_groups).argmax(dim=-2)


def predicted_value_step(weights: torch.Tensor, upstream: torch.Tensor, lr: float,
                         inputs: torch.Tensor | None = None,
                         w_v_shape: tuple[int, ...] | torch.Size | None = None) -> torch.Tensor:
    """The change of the values after one gradient-descent step of size ``lr``.

    Free values (``inputs is None``): ``Delta V = -lr alpha^T U``, i.e.
    ``Delta v_j = -lr sum_i alpha_ij u_i``, shape ``(..., M, d_v)``.

    W_V form (``inputs`` = ``Z`` of shape ``(..., M, d_z)``, values ``v_j = z_j W_V``):
    ``dL/dW_V = Z^T alpha^T U`` summed over the leading dimensions along which ``W_V`` is shared
    (down to ``w_v_shape``; default ``(d_z, d_v)``, one ``W_V`` for everything), then
    ``Delta V = Z Delta W_V = -lr Z (Z^T alpha^T U)``: for a single sequence,
    ``Delta v_j = -lr sum_l (z_j . z_l) sum_i alpha_il u_i``.

    Args:
        weights: ``alpha`` ``(..., N, M)``; upstream: ``u = dL/do`` ``(..., N, d_v)``;
        lr: the step size ``eta``; inputs, w_v_shape: see above.
    """
    check_float_tensor("weights", weights, min_dim=2)
    check_float_tensor("upstream", upstream, min_dim=2, dtype=weights.dtype)
    if upstream.shape[-2] != weights.shape[-2]:
        raise ValueError(f"upstream must have one row per query ({weights.shape[-2]}); got "
                         f"shape {tuple(upstream.shape)}")
    if not isinstance(lr, (int, float)) or isinstance(lr, bool) or not math.isfinite(lr):
        raise ValueError(f"lr must be a finite number; got {lr!r}")
    pull = value_gradient(weights, upstream)                          # (..., M, d_v) = dL/dV
    if inputs is None:
        if w_v_shape is not None:
            raise ValueError("w_v_shape applies only to the W_V form (pass inputs)")
        return -lr * pull
    check_float_tensor("inputs", inputs, min_dim=2, dtype=weights.dtype)
    if inputs.shape[-2] != weights.shape[-1]:
        raise ValueError(f"inputs must have one row per value ({weights.shape[-1]}); got "
                         f"shape {tuple(inputs.shape)}")
    if w_v_shape is None:
        w_v_shape = (inputs.shape[-1], upstream.shape[-1])
    grad_w_v = projection_gradient(inputs, pull, w_v_shape)           # dL/dW_V
    return inputs @ (-lr * grad_w_v)


def advantage_change(weights: torch.Tensor, upstream: torch.Tensor, values: torch.Tensor,
                     delta_values: torch.Tensor,
                     delta_upstream: torch.Tensor | None = None) -> torch.Tensor:
    """First-order change of the advantage ``A_ij`` when the values move and routing stays.

    ``Delta A = adv(alpha, U Delta V^T) + adv(alpha, Delta U V^T)``, where ``adv(alpha, C)``
    subtracts each row's ``alpha``-weighted mean from ``C``. The first term is the *value
    feedback* (error signals held fixed); the second, present only when ``delta_upstream`` is
    given, is the *curvature* term from the change of ``u`` (see
    :func:`~attention_dynamics.gradients.cross_entropy_hvp`).

    Shapes: weights ``(..., N, M)``; upstream and delta_upstream ``(..., N, d_v)``; values and
    delta_values ``(..., M, d_v)``. Returns ``(..., N, M)``.
    """
    check_float_tensor("values", values, min_dim=2, dtype=weights.dtype)
    check_float_tensor("delta_values", delta_values, min_dim=2, dtype=weights.dtype)
    change = upstream @ delta_values.transpose(-1, -2)
    if delta_upstream is not None:
        change = change + delta_upstream @ values.transpose(-1, -2)
    return advantage(weights, change)


def value_feedback_kernel(weights: torch.Tensor, upstream: torch.Tensor) -> torch.Tensor:
    """``D_ij = sum_m (u_i . u_m)(alpha_mj - sum_k alpha_ik alpha_mk)``, shape ``(..., N, M)``.

    After a value step of size ``eta`` with the error signals held fixed, the advantage changes
    by ``Delta A_ij = -eta D_ij`` (equal to the first term of :func:`advantage_change`); ``D_ij > 0``
    means value ``j`` becomes more attractive to query ``i`` (its advantage falls).
    """
    check_float_tensor("weights", weights, min_dim=2)
    check_float_tensor("upstream", upstream, min_dim=2, dtype=weights.dtype)
    kernel = upstream @ upstream.transpose(-1, -2)                    # (..., N, N): u_i . u_m
    overlap = weights @ weights.transpose(-1, -2)                     # (..., N, N): sum_k a_ik a_mk
    direct = kernel @ weights                                         # sum_m K_im alpha_mj
    baseline = (kernel * overlap).sum(dim=-1, keepdim=True)           # sum_m K_im sum_k a_ik a_mk
    return direct - baseline


def head_advantage(weights: torch.Tensor, values: torch.Tensor, targets: torch.Tensor,
                   readout: torch.Tensor) -> torch.Tensor:
    """The advantage ``A_ij`` of a head with free values under the mean cross-entropy.

    Logits ``alpha V W_O``, ``u = dL/do`` in closed form
    (:func:`~attention_dynamics.gradients.cross_entropy_upstream`), ``B = U V^T`` and
    ``A_ij = B_ij - sum_k alpha_ik B_ik``; the routing law gives ``dL/ds_ij = alpha_ij A_ij``.
    The same as :func:`value_step_feedback`'s ``advantage``, without the step's terms: for
    measuring the real change of the advantages after the values moved.

    Args:
        weights: ``(..., N, M)`` attention; values: ``(..., M, d_v)``; targets: ``(N,)`` long
            classes; readout: ``(d_v, C)``.

    Returns:
        ``(..., N, M)``.
    """
    check_float_tensor("weights", weights, min_dim=2)
    check_float_tensor("values", values, min_dim=2, dtype=weights.dtype)
    upstream = cross_entropy_upstream(weights @ values @ readout, targets, readout)
    return advantage(weights, upstream @ values.transpose(-1, -2))


def reinforcement_index(weights: torch.Tensor, change: torch.Tensor,
                        advantages: torch.Tensor) -> torch.Tensor:
    """``rho = <alpha * dA, alpha * A> / (|alpha * dA| |alpha * A|)``, in ``[-1, 1]``.

    The cosine, over the ``N x M`` entries of a head, between the change ``alpha * dA`` that a
    value step makes to the score gradient and the score gradient ``G = alpha * A`` itself:
    positive when the step makes the next routing step push harder the way it already goes.

    Args:
        weights: ``alpha`` ``(..., N, M)``; change: ``dA`` ``(..., N, M)`` (e.g. a part of
            :class:`FeedbackTerms`); advantages: ``A`` ``(..., N, M)``.

    Returns:
        ``(...)``; ``nan`` where either gradient is zero.
    """
    check_float_tensor("weights", weights, min_dim=2)
    check_float_tensor("change", change, min_dim=2, dtype=weights.dtype)
    check_float_tensor("advantages", advantages, min_dim=2, dtype=weights.dtype)
    moved, drive = weights * change, weights * advantages
    return (moved * drive).sum(dim=(-2, -1)) / (moved.norm(dim=(-2, -1)) * drive.norm(dim=(-2, -1)))


@dataclass
class FeedbackTerms:
    """The advantage and its first-order change after one free-value step (shapes ``(..., N, M)``).

    Attributes:
        advantage: ``A_ij = b_ij - sum_k alpha_ik b_ik`` before the step.
        feedback: the value-feedback part of ``Delta A`` (error signals held fixed).
        curvature: the part due to the change of the error signals, ``adv(alpha, Delta U V^T)``.
        upstream: ``u`` ``(..., N, d_v)``; step: ``Delta V`` ``(..., M, d_v)``.
    """

    advantage: torch.Tensor
    feedback: torch.Tensor
    curvature: torch.Tensor
    upstream: torch.Tensor
    step: torch.Tensor

    @property
    def total(self) -> torch.Tensor:
        """The first-order change ``Delta A = feedback + curvature``."""
        return self.feedback + self.curvature


def value_step_feedback(weights: torch.Tensor, values: torch.Tensor, targets: torch.Tensor,
                        readout: torch.Tensor, lr: float = 1.0) -> FeedbackTerms:
    """First-order effect on the advantages of one gradient step ``lr`` on free values.

    For a head with attention ``weights`` ``(..., N, M)``, values ``(..., M, d_v)``, fixed readout
    ``(d_v, C)`` and the mean cross-entropy against ``targets`` ``(N,)``: ``u`` in closed form,
    ``Delta V = -lr alpha^T U``, ``Delta u_i`` from the cross-entropy Hessian, and the two parts of
    ``Delta A`` (see :func:`advantage_change`). Routing is untouched by a value step, so
    ``alpha`` stays fixed. All terms are linear in ``lr``.
    """
    check_float_tensor("weights", weights, min_dim=2)
    check_float_tensor("values", values, min_dim=2, dtype=weights.dtype)
    logits = weights @ values @ readout
    upstream = cross_entropy_upstream(logits, targets, readout)
    step = predicted_value_step(weights, upstream, lr)
    delta_upstream = cross_entropy_hvp(logits, readout, weights @ step)
    return FeedbackTerms(
        advantage=advantage(weights, upstream @ values.transpose(-1, -2)),
        feedback=advantage_change(weights, upstream, values, step),
        curvature=advantage(weights, delta_upstream @ values.transpose(-1, -2)),
        upstream=upstream, step=step)


@dataclass
class AdvantageChange:
    """The exact change of the advantages when the values move and routing stays, in three parts.

    Each part is ``(..., N, M)``; with ``adv(alpha, C)`` the row-centring of
    :func:`~attention_dynamics.gradients.advantage`:

    Attributes:
        feedback: ``adv(alpha, U dV^T)``: the values move, the error signals are held.
        curvature: ``adv(alpha, dU V^T)``: the error signals respond, ``dU`` their exact change.
        product: ``adv(alpha, dU dV^T)``: second order in the step.
    """

    feedback: torch.Tensor
    curvature: torch.Tensor
    product: torch.Tensor

    @property
    def total(self) -> torch.Tensor:
        """``A(V + dV) - A(V)``, the sum of the three parts."""
        return self.feedback + self.curvature + self.product


def exact_advantage_change(weights: torch.Tensor, values: torch.Tensor,
                           delta_values: torch.Tensor, targets: torch.Tensor,
                           readout: torch.Tensor) -> AdvantageChange:
    """How the advantages change, exactly, when the values move by ``delta_values``.

    With routing fixed the advantage ``A = adv(alpha, U V^T)`` is bilinear in the error signals
    ``U`` and the values ``V``, so ``A(V + dV) - A(V)`` splits into the three parts of
    :class:`AdvantageChange` with no remainder; ``dU = U(V + dV) - U(V)`` comes from the closed
    form of the mean cross-entropy's error signal
    (:func:`~attention_dynamics.gradients.cross_entropy_upstream`). To first order in a value
    step, ``feedback`` and ``curvature`` are the two parts of :func:`value_step_feedback`.

    Shapes: weights ``(..., N, M)``; values and delta_values ``(..., M, d_v)``; targets ``(N,)``
    long; readout ``(d_v, C)``.
    """
    check_float_tensor("weights", weights, min_dim=2)
    check_float_tensor("values", values, min_dim=2, dtype=weights.dtype)
    check_float_tensor("delta_values", delta_values, min_dim=2, dtype=weights.dtype)
    before = cross_entropy_upstream(weights @ values @ readout, targets, readout)
    after = cross_entropy_upstream(weights @ (values + delta_values) @ readout, targets, readout)
    delta_upstream = after - before
    return AdvantageChange(
        feedback=advantage(weights, before @ delta_values.transpose(-1, -2)),
        curvature=advantage(weights, delta_upstream @ values.transpose(-1, -2)),
        product=advantage(weights, delta_upstream @ delta_values.transpose(-1, -2)))


def sum_zero_basis(n: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """An orthonormal basis ``(n, n-1)`` of the vectors whose entries sum to zero.

    Softmax ignores a constant added to every logit, so logit vectors of ``n`` classes live,
    for prediction, in this ``(n-1)``-dimensional plane; for ``n = 3`` it is the 2-D plane used to
    draw value trajectories. Columns are ``(e_1 + ... + e_k - k e_{k+1}) / sqrt(k (k+1))``.
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 2:
        raise ValueError(f"n must be an int >= 2; got {n!r}")
    basis = torch.zeros(n, n - 1, dtype=dtype)
    for k in range(1, n):
        basis[:k, k - 1] = 1.0
        basis[k, k - 1] = -float(k)
        basis[:, k - 1] /= math.sqrt(k * (k + 1))
    return basis
