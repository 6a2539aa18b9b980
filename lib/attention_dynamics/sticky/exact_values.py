"""The values solved exactly: a block-coordinate baseline for the sticky chain's one-head model.

With the attention weights and the readout held fixed, the model's logits are
``(alpha X) W_V W_O``, a linear function of ``W_V`` of the *attended inputs* ``alpha X``
(:func:`attended_inputs`), so each run's mean cross-entropy is a convex function of ``W_V``: a
softmax regression. :func:`solve_values` minimises it (L-BFGS, started from the current
``W_V``). Alternating a gradient step on ``W_Q``, ``W_K`` and ``W_O`` with this solve
(``optimizer="exact-values"`` in :func:`~attention_dynamics.sticky.training.train`) is block
coordinate descent, the strongest value step there is: what Paper II's "EM-like" schedule, a
larger learning rate on ``W_V``, approximates.
"""

from __future__ import annotations

import torch

from attention_dynamics.sticky.model import HeadParams, check_batch
from attention_dynamics.validation import check_positive_int


def attended_inputs(params: HeadParams, x: torch.Tensor) -> torch.Tensor:
    """``(R, N, d_x)`` ``alpha X``: each query's attention-weighted average of the inputs.

    Causal scaled dot-product attention with the runs' ``W_Q``, ``W_K`` and the inputs
    themselves as values (no ``(N, N)`` matrix is kept).
    """
    check_batch(params, x)
    q, k = x @ params.w_q, x @ params.w_k
    return torch.nn.functional.scaled_dot_product_attention(q, k, x, is_causal=True)


def values_loss(w_v: torch.Tensor, attended: torch.Tensor, w_o: torch.Tensor,
                targets: torch.Tensor) -> torch.Tensor:
    """``(R,)`` each run's mean cross-entropy (nats) with values ``W_V``, weights held fixed.

    Args:
        w_v: ``(R, d_x, d_v)``; attended: ``(R, N, d_x)`` from :func:`attended_inputs`;
        w_o: ``(R, d_v, C)``; targets: ``(R, N)`` int64.
    """
    logits = attended @ w_v @ w_o
    nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
    return nll.mean(-1)


def solve_values(params: HeadParams, x: torch.Tensor, targets: torch.Tensor,
                 iterations: int = 20) -> torch.Tensor:
    """``(R, d_x, d_v)`` the ``W_V`` that minimises each run's loss, the rest held fixed.

    L-BFGS with a strong-Wolfe line search on the sum of the runs' losses (they do not
    interact), in float64, from the current ``W_V``, for at most ``iterations`` iterations;
    returned in the weights' dtype.
    """
    check_batch(params, x, targets)
    check_positive_int("iterations", iterations)
    attended = attended_inputs(params, x).double()
    w_o = params.w_o.double()
    w_v = params.w_v.detach().double().clone().requires_grad_()
    optimiser = torch.optim.LBFGS([w_v], max_iter=iterations, line_search_fn="strong_wolfe",
                                  tolerance_grad=1e-10, tolerance_change=1e-12)

    def closure():
        optimiser.zero_grad()
        loss = values_loss(w_v, attended, w_o, targets).sum()
        loss.backward()
        return loss

    with torch.enable_grad():
        optimiser.step(closure)
    return w_v.detach().to(params.w_v.dtype)
