"""Side-by-side speed measurements: each function times the library against a baseline in one run.

Every function returns a dict of median wall times (seconds) and the ratio that the book
reports. Timings depend on the machine; only ratios measured in the same run are compared.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from .attention import attention_forward
from .gradients import advantage, compatibility, value_gradient
from .problems import HeadProblem, sample_head_problem
from .sticky_model import init_params, loss_and_grads
from .tasks.sticky_chain import (
    bayes_log_predictive,
    sample_sticky_chain,
    symbol_means,
    transition_matrix,
)
from .timing import median_seconds


def routing_diagnostics(record, upstream: torch.Tensor) -> dict[str, torch.Tensor]:
    """The per-pair diagnostics of one head from ``u = dL/do``: B, A, dL/ds and dL/dv.

    ``record`` is an :class:`~attention_dynamics.attention.AttentionRecord`; shapes as there.
    """
    with torch.no_grad():
        alpha = record.weights.detach()
        b = compatibility(upstream, record.v.detach(), record.mask)
        a = advantage(alpha, b)
        return {"compatibility": b, "advantage": a, "score_grad": alpha * a,
                "value_grad": value_gradient(alpha, upstream)}


def _per_pair_autograd(problem: HeadProblem) -> torch.Tensor:
    """dL/ds_ij of the first sequence and head, one autograd call per allowed pair ``(i, j)``."""
    record = attention_forward(problem.x, problem.w_q, problem.w_k, problem.w_v, mask=problem.mask)
    loss = problem.loss_from_output(record.output)
    length = record.scores.shape[-1]
    out = torch.zeros(length, length, dtype=record.scores.dtype, device=record.scores.device)
    for i in range(length):
        for j in range(i + 1):
            (grad,) = torch.autograd.grad(loss, record.scores, retain_graph=True)
            out[i, j] = grad[0, 0, i, j]
    return out


def diagnostics_benchmark(length: int = 128, batch: int = 8, heads: int = 4, width: int = 32,
                          repeats: int = 5, seed: int = 0, device=None) -> dict[str, float]:
    """Routing diagnostics against a plain training step and against per-pair autograd.

    A plain step is one forward and backward pass of a causal head with a readout
    (cross-entropy); the diagnosed step adds :func:`routing_diagnostics` from the upstream
    gradient that the backward pass produced. The per-pair baseline differentiates the loss
    once per allowed score, ``T (T + 1) / 2`` autograd calls, timed once.

    Returns times in seconds and ``overhead_ratio`` (diagnosed / plain) and
    ``speedup_vs_per_pair`` (per-pair / diagnosed).
    """
    problem = sample_head_problem(torch.Generator(device=device or "cpu").manual_seed(seed), batch,
                                  heads, length, width, width, width, dtype=torch.float32,
                                  device=device)

    def plain():
        problem.forward_backward()

    def diagnosed():
        record, _ = problem.forward_backward()
        routing_diagnostics(record, record.upstream)

    t_plain = median_seconds(plain, repeats=repeats)
    t_diag = median_seconds(diagnosed, repeats=repeats)
    t_pairs = median_seconds(lambda: _per_pair_autograd(problem), repeats=1, warmup=0)
    return {"plain_step_s": t_plain, "diagnosed_step_s": t_diag, "per_pair_autograd_s": t_pairs,
            "pairs": length * (length + 1) / 2, "overhead_ratio": t_diag / t_plain,
            "speedup_vs_per_pair": t_pairs / t_diag}


def _loop_sampler_and_filter(transition: np.ndarray, means: np.ndarray, length: int,
                             n_sequences: int, rng: np.random.Generator) -> np.ndarray:
    """The straightforward baseline: one sequence at a time, one time step at a time.

    Samples each chain with one categorical draw per step, its inputs, and runs the forward
    filter as a Python loop over time; returns the predictive ``(n_sequences, length - 1, S)``.
    """
    n_symbols, dim = means.shape
    out = np.empty((n_sequences, length - 1, n_symbols))
    for n in range(n_sequences):
        symbols = [int(rng.integers(n_symbols))]
        for _ in range(1, length):
            symbols.append(int(rng.choice(n_symbols, p=transition[symbols[-1]])))
        inputs = means[symbols[:-1]] + rng.standard_normal((length - 1, dim))
        belief = np.full(n_symbols, 1.0 / n_symbols)  # over y_{t-1}, before seeing x_t
        for t in range(length - 1):
            likelihood = np.exp(-0.5 * ((inputs[t] - means) ** 2).sum(axis=1))
            posterior = belief * likelihood
            posterior /= posterior.sum()
            out[n, t] = posterior @ transition
            belief = out[n, t]
    return out


def sampler_benchmark(length: int = 200, n_sequences: int = 64, repeats: int = 3,
                      seed: int = 0) -> dict[str, float]:
    """Vectorised sticky-chain sampling + exact predictive against a per-sequence Python loop."""
    transition = transition_matrix()
    means = symbol_means()

    def vectorised():
        data = sample_sticky_chain(length, torch.Generator().manual_seed(seed),
                                   batch_size=n_sequences)
        bayes_log_predictive(data.inputs, data.transition, data.means, data.noise_std)

    t_vec = median_seconds(vectorised, repeats=repeats)
    t_loop = median_seconds(lambda: _loop_sampler_and_filter(
        transition.numpy(), means.double().numpy(), length, n_sequences,
        np.random.default_rng(seed)), repeats=1, warmup=0)
    return {"vectorised_s": t_vec, "loop_s": t_loop, "speedup": t_loop / t_vec}


def sticky_step_benchmark(length: int = 2000, runs: int = 10, repeats: int = 3,
                          seed: int = 0) -> dict[str, float]:
    """The fused closed-form training step of the sticky-chain model against autograd.

    Both compute the loss and all weight gradients of ``runs`` batched runs at sequence length
    ``length``; the autograd route materialises the ``(runs, T, T)`` attention matrix.
    """
    params = init_params(list(range(seed, seed + runs)))
    data = sample_sticky_chain(length, torch.Generator().manual_seed(seed), batch_size=runs)
    x, y = data.inputs, data.targets

    def autograd_step():
        leaves = params.map(lambda w: w.detach().requires_grad_())
        record = attention_forward(x, leaves.w_q, leaves.w_k, leaves.w_v)
        logits = record.output @ leaves.w_o
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="none")
        loss.view(runs, -1).mean(dim=1).sum().backward()

    t_fused = median_seconds(lambda: loss_and_grads(params, x, y), repeats=repeats)
    t_auto = median_seconds(autograd_step, repeats=repeats)
    return {"fused_s": t_fused, "autograd_s": t_auto, "speedup": t_auto / t_fused}
