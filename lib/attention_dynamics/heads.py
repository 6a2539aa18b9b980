"""Random attention problems: a head, a readout and a cross-entropy loss, for checking identities.

A :class:`HeadProblem` is one layer of the book's setting: inputs ``x``, projections
``W_Q, W_K, W_V`` (a stack of heads), a fixed linear readout per head and targets. Its loss is
the mean cross-entropy of the summed head readouts, in nats.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from attention_dynamics.attention import AttentionRecord, attention_forward
from attention_dynamics.gradients import AttentionGradients, closed_form_gradients


@dataclass
class HeadProblem:
    """One attention layer with a loss (shapes: B sequences, H heads, T positions, C classes).

    Attributes:
        x: ``(B, 1, T, d_x)`` inputs, shared by the heads.
        w_q, w_k: ``(H, d_x, d_k)``; w_v: ``(H, d_x, d_v)``.
        readout: ``(H, d_v, C)``: logits are ``sum_h o_h readout_h``.
        targets: ``(B, T)`` class indices.
        mask: ``"causal"``, ``None`` or a boolean ``(T, T)`` tensor.
    """

    x: torch.Tensor
    w_q: torch.Tensor
    w_k: torch.Tensor
    w_v: torch.Tensor
    readout: torch.Tensor
    targets: torch.Tensor
    mask: torch.Tensor | str | None = "causal"

    def loss_from_output(self, output: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy (nats) of head outputs ``(B, H, T, d_v)``."""
        logits = torch.einsum("bhtd,hdc->btc", output, self.readout)
        return F.cross_entropy(logits.flatten(0, 1), self.targets.flatten())

    def loss_from_scores(self, scores: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """The loss after replacing the scores ``(B, H, T, T)`` (``-inf`` where masked)."""
        return self.loss_from_output(torch.softmax(scores, dim=-1) @ values)

    def forward_backward(self, retain: tuple[str, ...] = ()) -> tuple[AttentionRecord, torch.Tensor]:
        """Run the layer and backpropagate the loss; the record keeps ``u`` and the named gradients.

        ``retain`` names record fields (``"scores"``, ``"weights"``, ``"q"``…) whose gradient to keep.
        Parameter gradients are reset first, so repeated calls do not accumulate.
        """
        for w in (self.w_q, self.w_k, self.w_v):
            w.grad = None
        record = attention_forward(self.x, self.w_q, self.w_k, self.w_v, mask=self.mask,
                                   retain_upstream=True)
        for name in retain:
            getattr(record, name).retain_grad()
        loss = self.loss_from_output(record.output)
        loss.backward()
        return record, loss.detach()

    def closed_form(self, record: AttentionRecord) -> AttentionGradients:
        """Closed-form gradients of this problem's layer, including the weight gradients."""
        return closed_form_gradients(record, weight_shapes=(self.w_q.shape, self.w_k.shape,
                                                            self.w_v.shape))


def sample_head_problem(generator: torch.Generator, batch: int, heads: int, length: int,
                        d_x: int, d_k: int, d_v: int, classes: int = 5, score_scale: float = 1.0,
                        mask: torch.Tensor | str | None = "causal",
                        dtype: torch.dtype = torch.float64, device=None) -> HeadProblem:
    """Draw a problem with standard-normal entries; ``score_scale`` multiplies ``W_Q`` and ``W_K``.

    A large ``score_scale`` (10 or more) saturates the softmax.
    """
    opts = dict(generator=generator, dtype=dtype, device=device)

    def weight(*shape, scale=1.0):
        return (scale * torch.randn(*shape, **opts) / d_x**0.5).requires_grad_()

    return HeadProblem(
        x=torch.randn(batch, 1, length, d_x, **opts),
        w_q=weight(heads, d_x, d_k, scale=score_scale),
        w_k=weight(heads, d_x, d_k, scale=score_scale),
        w_v=weight(heads, d_x, d_v),
        readout=torch.randn(heads, d_v, classes, **opts),
        targets=torch.randint(0, classes, (batch, length), generator=generator, device=device),
        mask=mask,
    )


def gradient_errors(problem: HeadProblem) -> dict[str, float]:
    """Max absolute difference between each closed-form gradient and autograd's.

    Keys: ``compatibility`` (B against dL/dalpha), ``scores``, ``q``, ``k``, ``v``, ``w_q``,
    ``w_k``, ``w_v``, and ``row_sum`` (the largest ``|sum_j dL/ds_ij|``, zero by the routing law).
    Masked pairs are compared as zeros.
    """
    record, _ = problem.forward_backward(retain=("scores", "weights", "q", "k", "v"))
    grads = problem.closed_form(record)
    allowed = record.mask if record.mask is not None else torch.ones_like(record.weights, dtype=bool)
    pairs = {
        "compatibility": (grads.compatibility, record.weights.grad.masked_fill(~allowed, 0.0)),
        "scores": (grads.scores, record.scores.grad.masked_fill(~allowed, 0.0)),
        "q": (grads.q, record.q.grad), "k": (grads.k, record.k.grad), "v": (grads.v, record.v.grad),
        "w_q": (grads.w_q, problem.w_q.grad), "w_k": (grads.w_k, problem.w_k.grad),
        "w_v": (grads.w_v, problem.w_v.grad),
    }
    errors = {name: (mine - ref).abs().max().item() for name, (mine, ref) in pairs.items()}
    errors["row_sum"] = grads.scores.sum(dim=-1).abs().max().item()
    return errors
