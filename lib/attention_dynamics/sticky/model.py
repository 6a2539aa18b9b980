"""Paper II's one-head model for the sticky chain, batched over ``R`` independent runs.

One causal softmax attention head and a linear readout, no biases (row-vector convention,
as in :mod:`~attention_dynamics.attention`):

    q = x W_Q, k = x W_K, v = x W_V,  s_ij = q_i . k_j / sqrt(d_k) (j <= i),
    alpha_i = softmax_j(s_ij),  o_i = sum_j alpha_ij v_j,  logits_i = o_i W_O,

with ``d_x = 20``, ``d_k = 10``, ``d_v = 15``, ``C = 8`` classes and every weight ``N(0, 0.1^2)``.
The loss of a run is the mean cross-entropy over its ``N`` positions, in nats.

``R`` runs (seeds x learning-rate schedules, say) live in one set of tensors with a leading
run dimension: ``w_q`` is ``(R, d_x, d_k)`` and so on; inputs are ``(R, N, d_x)``. Runs never
interact, and each run's initial weights depend only on its own seed (:func:`init_params`).

Two forward passes:

- :func:`forward_record` goes through
  :func:`~attention_dynamics.attention.attention_forward` and returns every intermediate
  (``(R, N, N)`` attention weights included), for inspection.
- :func:`loss_and_grads` is the training step: it walks over blocks of queries, visits only
  the keys a block may attend to (the causal upper triangle is skipped), and computes the
  gradients in closed form from the routing law ``dL/ds_ij = alpha_ij (b_ij - E_alpha_i[b])``
  with ``b_ij = u_i . v_j`` and ``E_alpha_i[b] = u_i . o_i``, so no ``(N, N)`` matrix is ever
  materialised. Each block's work is independent of the others except for sums into the key
  and value gradients. The tests check it against autograd.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from attention_dynamics.attention import AttentionRecord, attention_forward
from attention_dynamics.validation import check_float_tensor

PARAM_NAMES = ("w_q", "w_k", "w_v", "w_o")
"""The parameter groups, in the order they are drawn at initialisation."""
INIT_STD = 0.1


@dataclass
class HeadParams:
    """The weights of ``R`` runs of the model.

    Attributes:
        w_q, w_k: ``(R, d_x, d_k)``.
        w_v: ``(R, d_x, d_v)``.
        w_o: ``(R, d_v, C)``, the readout.
    """

    w_q: torch.Tensor
    w_k: torch.Tensor
    w_v: torch.Tensor
    w_o: torch.Tensor

    @property
    def n_runs(self) -> int:
        """``R``."""
        return self.w_q.shape[0]

    def tensors(self) -> dict[str, torch.Tensor]:
        """The weights by name, in :data:`PARAM_NAMES` order."""
        return {name: getattr(self, name) for name in PARAM_NAMES}

    def map(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> HeadParams:
        """A new :class:`HeadParams` with ``fn`` applied to each weight."""
        return HeadParams(**{name: fn(w) for name, w in self.tensors().items()})

    def select(self, runs: int | slice | Sequence[int]) -> HeadParams:
        """The runs ``runs`` (an int keeps the run dimension, of size 1)."""
        index = [runs] if isinstance(runs, int) else runs
        return self.map(lambda w: w[index])


def init_params(seeds: Sequence[int], d_x: int = 20, d_k: int = 10, d_v: int = 15,
                n_classes: int = 8, init_std: float = INIT_STD, dtype: torch.dtype = torch.float32,
                device: torch.device | str = "cpu") -> HeadParams:
    """Initial weights for one run per seed, stacked along a leading run dimension.

    Run ``r`` uses its own CPU generator seeded with ``seeds[r]`` and draws, in float32 and in
    this order, ``randn(d_x, d_k)`` for ``W_Q``, ``randn(d_x, d_k)`` for ``W_K``,
    ``randn(d_x, d_v)`` for ``W_V`` and ``randn(d_v, C)`` for ``W_O``, each times ``init_std``.
    That is the authors' initialisation after ``torch.manual_seed(seed)`` on the CPU, and it
    makes each run's weights independent of which other runs share the batch and of
    ``dtype`` (the float32 draws are cast, then scaled).
    """
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must name at least one run")
    shapes = {"w_q": (d_x, d_k), "w_k": (d_x, d_k), "w_v": (d_x, d_v), "w_o": (d_v, n_classes)}
    per_run = []
    for seed in seeds:
        generator = torch.Generator().manual_seed(seed)
        per_run.append({name: torch.randn(*shape, generator=generator).to(dtype) * init_std
                        for name, shape in shapes.items()})
    return HeadParams(**{name: torch.stack([run[name] for run in per_run]).to(device)
                         for name in PARAM_NAMES})


def check_batch(params: HeadParams, x: torch.Tensor, targets: torch.Tensor | None = None) -> None:
    """Require ``x`` of shape ``(R, N, d_x)`` and ``targets`` of shape ``(R, N)`` (int64)."""
    check_float_tensor("x", x, min_dim=3, max_dim=3, dtype=params.w_q.dtype)
    expected = (params.n_runs, x.shape[1], params.w_q.shape[1])
    if tuple(x.shape) != expected:
        raise ValueError(f"x must have shape (R, N, d_x) = (R={expected[0]}, N, "
                         f"d_x={expected[2]}); got {tuple(x.shape)}")
    if targets is not None and (targets.dtype != torch.int64
                                or tuple(targets.shape) != tuple(x.shape[:2])):
        raise ValueError(f"targets must be int64 of shape (R, N) = {tuple(x.shape[:2])}; got "
                         f"{targets.dtype} {tuple(targets.shape)}")


def forward_record(params: HeadParams, x: torch.Tensor) -> tuple[AttentionRecord, torch.Tensor]:
    """Full forward pass: the attention record (``(R, N, N)`` weights) and logits ``(R, N, C)``."""
    check_batch(params, x)
    record = attention_forward(x, params.w_q, params.w_k, params.w_v, mask="causal")
    return record, record.output @ params.w_o


@dataclass
class StepResult:
    """Per-run metrics of one forward pass (each ``(R,)``) and, optionally, the gradients.

    Attributes:
        loss: mean cross-entropy over positions (nats).
        entropy: mean entropy of the predictive distributions (nats).
        accuracy: fraction of positions whose most likely class is the target.
        grads: ``dL/dW`` for every weight (each run's own loss), or ``None``.
    """

    loss: torch.Tensor
    entropy: torch.Tensor
    accuracy: torch.Tensor
    grads: HeadParams | None


def loss_and_grads(params: HeadParams, x: torch.Tensor, targets: torch.Tensor,
                   with_grads: bool = True, block_size: int = 64) -> StepResult:
    """Loss, entropy and accuracy of every run, and the gradients, without ``(N, N)`` matrices.

    Args:
        params: the weights of ``R`` runs.
        x: inputs ``(R, N, d_x)``, the weights' dtype.
        targets: ``(R, N)`` int64 class indices.
        with_grads: also compute the gradients (``False`` gives metrics only).
        block_size: queries per block (a block holds ``R x block_size x N`` scores, which
            should fit in cache); 32 to 128 ran equally fast on a 2-core Xeon.

    Returns:
        A :class:`StepResult`.
    """
    check_batch(params, x, targets)
    if not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be a positive int; got {block_size!r}")
    n_runs, length, _ = x.shape
    scale = 1.0 / math.sqrt(params.w_q.shape[-1])
    q, k, v = (x @ params.w_q) * scale, x @ params.w_k, x @ params.w_v
    # Keys and the key/value gradients are kept transposed, (R, d, N): on one CPU thread the
    # products with a short inner dimension run two to five times faster in that layout.
    keys_t, values_t = k.transpose(1, 2).contiguous(), v.transpose(1, 2).contiguous()
    above_diagonal = torch.ones(block_size, block_size, dtype=torch.bool,
                                device=x.device).triu(1)
    sums = torch.zeros(3, n_runs, dtype=x.dtype, device=x.device)  # nll, entropy, correct
    if with_grads:
        outputs = torch.empty_like(v)
        logit_grads = torch.empty(n_runs, length, params.w_o.shape[-1], dtype=x.dtype,
                                  device=x.device)
        dq = torch.empty_like(q)
        dk_t, dv_t = torch.zeros_like(keys_t), torch.zeros_like(v.transpose(1, 2))
    for start in range(0, length, block_size):
        stop = min(length, start + block_size)
        rows = slice(start, stop)
        scores = torch.bmm(q[:, rows], keys_t[:, :, :stop])
        scores[:, :, start:].masked_fill_(above_diagonal[: stop - start, : stop - start],
                                          float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = torch.bmm(values_t[:, :, :stop], weights.transpose(1, 2)).transpose(1, 2)
        log_probs = torch.log_softmax(torch.bmm(out, params.w_o), dim=-1)
        probs = log_probs.exp()
        block_targets = targets[:, rows, None]
        sums[0] -= log_probs.gather(-1, block_targets).sum(dim=(1, 2))
        sums[1] -= (probs * log_probs).sum(dim=(1, 2))
        sums[2] += (log_probs.argmax(dim=-1, keepdim=True) == block_targets).sum(dim=(1, 2))
        if not with_grads:
            continue
        g = probs.scatter_add(-1, block_targets, -torch.ones_like(log_probs[..., :1])) / length
        u = torch.bmm(g, params.w_o.transpose(1, 2))  # upstream dL/do of this block
        outputs[:, rows], logit_grads[:, rows] = out, g
        dv_t[:, :, :stop] += torch.bmm(u.transpose(1, 2), weights)
        score_grads = torch.bmm(u, v[:, :stop].transpose(1, 2))  # compatibility b_ij
        score_grads.sub_((u * out).sum(dim=-1, keepdim=True)).mul_(weights)  # routing law
        dq[:, rows] = torch.bmm(keys_t[:, :, :stop], score_grads.transpose(1, 2)).transpose(1, 2)
        dk_t[:, :, :stop] += torch.bmm(q[:, rows].transpose(1, 2), score_grads)
    loss, entropy, accuracy = sums / length
    grads = None
    if with_grads:
        xt = x.transpose(1, 2)
        grads = HeadParams(w_q=torch.bmm(xt, dq) * scale, w_k=torch.bmm(dk_t, x).transpose(1, 2),
                           w_v=torch.bmm(dv_t, x).transpose(1, 2),
                           w_o=torch.bmm(outputs.transpose(1, 2), logit_grads))
    return StepResult(loss=loss, entropy=entropy, accuracy=accuracy, grads=grads)
