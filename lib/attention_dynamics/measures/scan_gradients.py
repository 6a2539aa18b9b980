"""The routing gradients of a selective scan and of softmax scores, in closed form and by autograd.

:func:`scan_routing_gradients` gives the gradient of a loss with respect to a selective scan's
implicit attention and to the ``Delta``, ``B``, ``C`` that build it, the Mamba counterpart of
chapter 1's routing law; :func:`mamba_routing_gradients` reads it off a model's backward pass,
:func:`transformer_score_gradients` does the same for softmax scores, and
:func:`zero_sum_fraction` measures what separates the two: whether a gradient only moves weight
between positions or also changes a row's total. Like is compared with like through
:func:`log_weight_gradient` (``M ⊙ dL/dM``, the counterpart of ``dL/ds``, which is the gradient
with respect to the log of the softmax weights), per channel or pooled over channels
(:func:`pooled_zero_sum_fraction`), where a LayerNorm on the scan output makes it vanish.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attention_dynamics.attention import causal_mask
from attention_dynamics.measures.metrics import TaskBatch, sequence_loss
from attention_dynamics.models.mamba import Mamba, mamba_implicit_attention
from attention_dynamics.models.transformer import Transformer
from attention_dynamics.runtime import evaluation_mode
from attention_dynamics.validation import check_float_tensor


@dataclass(frozen=True)
class ScanRoutingGradients:
    """The gradient of a loss through a selective scan's implicit attention, in closed form.

    With ``y_t[d] = sum_{s<=t} M[d, t, s] x_s[d] + D[d] x_t[d]`` and ``g = dL/dy``
    (see :func:`scan_routing_gradients`). Shapes for ``batch`` sequences of ``T`` positions,
    ``d_inner`` channels and ``d_state`` states.

    Attributes:
        attention: ``(batch, d_inner, T, T)`` the implicit attention ``M``.
        compatibility: ``(batch, d_inner, T, T)`` ``dL/dM[d, t, s] = g_t[d] x_s[d]`` for
            ``s <= t``, zero above the diagonal: the per-channel compatibility, with no
            baseline subtracted.
        C: ``(batch, T, d_state)`` ``dL/dC_t``.
        B: ``(batch, T, d_state)`` ``dL/dB_s``.
        log_delta_write: ``(batch, T, d_inner)`` the part of ``dL/dlog Delta_r`` that comes
            from ``Delta_r`` scaling what position ``r`` writes:
            ``sum_{t>=r} M[d, t, r] compatibility[d, t, r]``.
        log_delta_forget: ``(batch, T, d_inner)`` the part that comes from ``Delta_r``
            decaying everything written before ``r``:
            ``Delta_r[d] sum_n A[d, n] sum_{t>=r} sum_{s<r} m_n[d, t, s] compatibility[d, t, s]``,
            with ``m_n`` the state-``n`` term of ``M``.
    """

    attention: torch.Tensor
    compatibility: torch.Tensor
    C: torch.Tensor
    B: torch.Tensor
    log_delta_write: torch.Tensor
    log_delta_forget: torch.Tensor

    @property
    def log_delta(self) -> torch.Tensor:
        """``(batch, T, d_inner)`` the whole ``dL/dlog Delta``: write part plus forget part."""
        return self.log_delta_write + self.log_delta_forget


def scan_routing_gradients(x: torch.Tensor, delta: torch.Tensor, A: torch.Tensor, B: torch.Tensor,
                           C: torch.Tensor, grad_y: torch.Tensor) -> ScanRoutingGradients:
    """Closed-form gradients of a selective scan through its implicit attention.

    The scan (see :mod:`~attention_dynamics.models.mamba`) unrolls to
    ``y_t[d] = sum_{s<=t} M[d, t, s] x_s[d] + D[d] x_t[d]`` with
    ``M[d, t, s] = sum_n m_n[d, t, s]``,
    ``m_n[d, t, s] = C_t[n] exp(A[d, n] sum_{r=s+1..t} Delta_r[d]) Delta_s[d] B_s[n]``.
    Given the upstream gradient ``g = dL/dy``:

    - ``dL/dM[d, t, s] = g_t[d] x_s[d]`` (the compatibility ``b``; nothing is subtracted);
    - ``dL/dC_t[n] = sum_d sum_{s<=t} b[d, t, s] m_n[d, t, s] / C_t[n]``, a sum of keys
      ``B_s[n]`` weighted by compatibility, decay and step;
    - ``dL/dB_s[n] = sum_d sum_{t>=s} b[d, t, s] m_n[d, t, s] / B_s[n]``, likewise of queries;
    - ``dL/dlog Delta_r[d] = sum_{t>=r} b M [d, t, r]
      + Delta_r[d] sum_n A[d, n] sum_{t>=r, s<r} b m_n [d, t, s]``,
      since ``dlog m_n[d, t, s] / dlog Delta_r[d] = [r = s] + A[d, n] Delta_r[d] [s < r <= t]``.

    (The divisions are only a way to read the formulas; the code multiplies the factors.)
    These are the gradients with respect to the scan's own inputs ``Delta``, ``B``, ``C``;
    the chain rule continues from there to the projections that compute them from the input.

    Args:
        x: ``(batch, T, d_inner)`` the scan input.
        delta: ``(batch, T, d_inner)`` positive steps.
        A: ``(d_inner, d_state)``.
        B, C: ``(batch, T, d_state)``.
        grad_y: ``(batch, T, d_inner)`` ``dL/dy``.

    Cost ``O(batch d_inner T^2 d_state)`` time, ``O(batch d_inner T^2)`` memory.
    """
    check_float_tensor("grad_y", grad_y, min_dim=3, max_dim=3, dtype=x.dtype)
    if grad_y.shape != x.shape:
        raise ValueError(f"grad_y must have x's shape {tuple(x.shape)}; got {tuple(grad_y.shape)}")
    check_float_tensor("x", x, min_dim=3, max_dim=3)
    if x.shape != delta.shape:
        raise ValueError(f"x must have delta's shape {tuple(delta.shape)}; got {tuple(x.shape)}")
    M = mamba_implicit_attention(delta, A, B, C)       # checks delta, A, B, C
    length = x.shape[1]
    causal = causal_mask(length, x.device)
    after = causal.tril(-1)                            # [r, s] = True for r > s
    compat = (grad_y.transpose(1, 2)[..., :, None] * x.transpose(1, 2)[..., None, :]) * causal
    delta_t = delta.transpose(1, 2)                    # (batch, d_inner, T)
    grad_C = torch.zeros_like(C)
    grad_B = torch.zeros_like(B)
    forget = torch.zeros_like(delta_t)
    for n in range(A.shape[1]):
        log_decay = delta_t * A[:, n, None]            # (batch, d_inner, T), entry r
        segment = torch.where(after, log_decay[..., :, None], 0.0).cumsum(dim=-2)
        decay = torch.where(causal, segment.exp(), 0.0)                  # [t, s]
        core = decay * delta_t[:, :, None, :]                             # K Delta_s, [t, s]
        weighted = compat * core                                          # b K Delta_s
        grad_C[..., n] = (weighted * B[:, None, None, :, n]).sum(dim=(1, 3))
        grad_B[..., n] = (weighted * C[:, None, :, n, None]).sum(dim=(1, 2))
        term = weighted * B[:, None, None, :, n] * C[:, None, :, n, None]  # b m_n, [t, s]
        # sum over t >= r and s < r of term[t, s]: exclusive cumulative sum over s, then t >= r
        before = torch.nn.functional.pad(term.cumsum(-1)[..., :-1], (1, 0))  # [t, r] = sum_{s<r}
        forget = forget + A[:, n, None] * (before * causal).sum(-2)
    write = (compat * M).sum(-2)                       # sum over t >= r of b M [t, r]
    return ScanRoutingGradients(attention=M, compatibility=compat, C=grad_C, B=grad_B,
                                log_delta_write=write.transpose(1, 2),
                                log_delta_forget=(delta_t * forget).transpose(1, 2))


def mamba_routing_gradients(model: Mamba, batch: TaskBatch, loss: str = "sampled"
                            ) -> list[ScanRoutingGradients]:
    """:class:`ScanRoutingGradients` of every layer of ``model`` for its loss on ``batch``.

    One forward pass with the record, one backward pass of the mean cross-entropy
    (:func:`~attention_dynamics.measures.metrics.sequence_loss`) that keeps ``dL/dy`` of each
    scan; the model's own parameter gradients are left as they were.
    """
    if not isinstance(model, Mamba):
        raise ValueError(f"model must be a Mamba; got {type(model).__name__}")
    authors = model.config.variant == "authors"
    with evaluation_mode(model), torch.enable_grad():
        logits, record = model(batch.tokens, return_record=True)
        # standard: y = M u + D u; the authors': y = LayerNorm(M u) + D u (M u is the raw scan,
        # exact while no clamp fires); either way dL/d(M u) is the upstream of the mixing part
        outputs = [layer.raw_scan if authors else layer.scan_output for layer in record.layers]
        grads = torch.autograd.grad(sequence_loss(logits, batch, loss), outputs)
    result = []
    for layer, grad_y in zip(record.layers, grads, strict=True):
        result.append(scan_routing_gradients(layer.scan_input.detach(), layer.delta.detach(),
                                             layer.A.detach(), layer.B.detach(), layer.C.detach(),
                                             grad_y))
    return result


def transformer_score_gradients(model: Transformer, batch: TaskBatch, loss: str = "sampled"
                                ) -> list[torch.Tensor]:
    """``dL/ds`` of every layer's scores, ``(B, H, T, T)`` per layer (zero at masked pairs).

    The softmax counterpart of :func:`mamba_routing_gradients`: one forward pass with the
    record and one backward pass of the mean cross-entropy on ``batch``; by chapter 1's routing
    law each row equals ``alpha (b - E_alpha b)`` and sums to zero.
    """
    if not isinstance(model, Transformer):
        raise ValueError(f"model must be a Transformer; got {type(model).__name__}")
    with evaluation_mode(model), torch.enable_grad():
        logits, record = model(batch.tokens, return_record=True)
        scores = [layer.scores for layer in record.attention]
        grads = torch.autograd.grad(sequence_loss(logits, batch, loss), scores)
    return list(grads)


def zero_sum_fraction(gradient: torch.Tensor, rows: torch.Tensor | None = None) -> float:
    """``|sum_s G[t, s]| / sum_s |G[t, s]|`` averaged over rows: 0 if the rows only re-route.

    A softmax's score gradient has rows that sum to zero (chapter 1), so this is 0 for it: the
    gradient moves weight between positions and never changes a row's total. A gradient whose
    entries in a row all share a sign gives 1: it only rescales the row.

    Args:
        gradient: ``(..., T, T)`` a gradient with respect to mixing weights or scores.
        rows: ``(R,)`` the rows (reading positions) to average over; all by default.
    """
    check_float_tensor("gradient", gradient, min_dim=2)
    selected = gradient if rows is None else gradient[..., rows, :]
    gross = selected.abs().sum(-1)
    net = selected.sum(-1).abs()
    keep = gross > 0
    if not keep.any():
        raise ValueError("gradient has no row with a non-zero entry")
    return (net[keep] / gross[keep]).mean().item()


def log_weight_gradient(gradients: ScanRoutingGradients) -> torch.Tensor:
    """``(batch, d_inner, T, T)`` ``M ⊙ dL/dM``: the implicit attention's counterpart of ``dL/ds``.

    A softmax score is a log weight up to the row's constant, and ``dL/ds = α ⊙ dL/dα`` minus
    its row's baseline; ``M[d, t, s] dL/dM[d, t, s]`` is the same product without the baseline
    (the derivative along ``M -> (1 + ε) M`` entry by entry). Comparing its rows with those of
    ``dL/ds`` compares like with like, where the raw ``dL/dM`` carries the scale of ``u``.
    """
    return gradients.attention * gradients.compatibility


def pooled_readers(gradient: torch.Tensor, keep: torch.Tensor | None = None) -> torch.Tensor:
    """``(..., T)`` bool: the readers :func:`pooled_zero_sum_fraction` can measure.

    A reader counts when ``keep`` (``(..., T)`` bool; all by default) keeps it and its row of
    ``gradient`` (``(..., C, T, T)``), pooled over channels, has a non-zero entry.
    """
    check_float_tensor("gradient", gradient, min_dim=3)
    valid = gradient.abs().sum(dim=(-3, -1)) > 0
    if keep is not None:
        if keep.shape != valid.shape or keep.dtype != torch.bool:
            raise ValueError(f"keep must be a bool tensor of shape {tuple(valid.shape)}; got "
                             f"{keep.dtype} {tuple(keep.shape)}")
        valid = valid & keep
    return valid


def pooled_zero_sum_fraction(gradient: torch.Tensor, rows: torch.Tensor | None = None,
                             keep: torch.Tensor | None = None) -> float:
    """:func:`zero_sum_fraction` with the channels pooled into each reader's row.

    ``|sum_c sum_s G[c, t, s]| / sum_c sum_s |G[c, t, s]|`` averaged over rows: 0 when every
    reader's total over all channels is fixed, as a LayerNorm on the scan output makes it for
    ``G = M ⊙ dL/dM`` (chapter 5), even when no single channel's row sums to zero.

    Args:
        gradient: ``(..., C, T, T)`` a gradient over channels, readers and sources.
        rows: ``(R,)`` the readers to average over; all by default.
        keep: ``(..., R)`` bool (``R`` = the rows chosen), ``False`` for readers to leave out
            (e.g. where the authors' scan clamped, so that ``M`` no longer describes it).

    Raises:
        ValueError: when no reader is left to measure (:func:`pooled_readers`).
    """
    check_float_tensor("gradient", gradient, min_dim=3)
    if rows is not None:
        gradient = gradient[..., rows, :]
    valid = pooled_readers(gradient, keep)
    if not valid.any():
        raise ValueError("gradient has no kept row with a non-zero entry")
    readers = gradient.movedim(-3, -2).flatten(-2)         # (..., R, C * T)
    net = readers.sum(-1).abs()
    gross = readers.abs().sum(-1)
    return (net[valid] / gross[valid]).mean().item()
