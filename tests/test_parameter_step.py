"""The score change of a step on W_Q and W_K, against autograd and exact recomputation (float64)."""

import pytest
import torch

from attention_dynamics.attention import attention_forward
from attention_dynamics.heads import HeadProblem, sample_head_problem
from attention_dynamics.parameter_step import (
    better_key_mass_change,
    first_order_score_change,
    gram_kernel_score_change,
    stepped_scores,
)


def _problem(seed: int, batch: int = 1, heads: int = 2, length: int = 12) -> HeadProblem:
    return sample_head_problem(torch.Generator().manual_seed(seed), batch, heads, length,
                               d_x=16, d_k=4, d_v=5)


def _allowed(tensor: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return tensor[..., mask]


def test_stepped_scores_are_the_scores_of_the_stepped_weights():
    problem = _problem(0, batch=3)
    record, _ = problem.forward_backward()
    eta = 0.3
    grad_q, grad_k = problem.w_q.grad, problem.w_k.grad  # autograd's
    with torch.no_grad():
        after = attention_forward(problem.x, problem.w_q - eta * grad_q,
                                  problem.w_k - eta * grad_k, problem.w_v, mask="causal")
    got = stepped_scores(record, grad_q, grad_k, eta)
    mask = record.mask
    assert torch.allclose(_allowed(got, mask), _allowed(after.scores, mask), atol=1e-12, rtol=0)
    assert torch.isneginf(got[..., ~mask]).all()


def test_the_first_order_change_is_autograds_directional_derivative():
    problem = _problem(1, batch=2)
    record, _ = problem.forward_backward()
    grad_q, grad_k = problem.w_q.grad.clone(), problem.w_k.grad.clone()
    mask = record.mask

    def allowed_scores(w_q, w_k):
        return _allowed(attention_forward(problem.x, w_q, w_k, problem.w_v.detach(),
                                          mask="causal").scores, mask)

    _, derivative = torch.func.jvp(allowed_scores, (problem.w_q.detach(), problem.w_k.detach()),
                                   (-grad_q, -grad_k))
    got = _allowed(first_order_score_change(record, grad_q, grad_k, 1.0), mask)
    assert torch.allclose(got, derivative, atol=1e-12, rtol=0)


def test_for_one_sequence_the_first_order_change_is_the_gram_kernel_smoothing():
    problem = _problem(2, batch=1, heads=3)
    record, _ = problem.forward_backward()
    grads = problem.closed_form(record)
    from_weights = first_order_score_change(record, grads.w_q, grads.w_k, 0.1)
    kernel = gram_kernel_score_change(record, grads.scores, 0.1)
    assert torch.allclose(from_weights, kernel, atol=1e-12, rtol=0)


def test_with_several_sequences_the_weight_step_also_mixes_sequences():
    problem = _problem(3, batch=3)
    record, _ = problem.forward_backward()
    grads = problem.closed_form(record)
    from_weights = first_order_score_change(record, grads.w_q, grads.w_k, 0.1)
    kernel = gram_kernel_score_change(record, grads.scores, 0.1)
    assert (from_weights - kernel).abs().max() > 1e-3 * from_weights.abs().max()


def _isotropic_problem(seed: int, length: int = 8, c_q: float = 1.5, c_k: float = 0.7):
    """Orthonormal inputs (X X^T = I) and orthogonal W_Q, W_K scaled by c_q, c_k (d_k = d_x)."""
    gen = torch.Generator().manual_seed(seed)

    def orthogonal(n):
        return torch.linalg.qr(torch.randn(n, n, generator=gen, dtype=torch.float64))[0]

    x = orthogonal(length)[None, None]
    return HeadProblem(
        x=x, w_q=(c_q * orthogonal(length))[None].requires_grad_(),
        w_k=(c_k * orthogonal(length))[None].requires_grad_(),
        w_v=torch.randn(1, length, 5, generator=gen, dtype=torch.float64).requires_grad_(),
        readout=torch.randn(1, 5, 4, generator=gen, dtype=torch.float64),
        targets=torch.randint(0, 4, (1, length), generator=gen)), c_q, c_k


def test_orthonormal_inputs_and_isotropic_heads_turn_the_weight_step_into_the_score_step():
    problem, c_q, c_k = _isotropic_problem(4)
    record, _ = problem.forward_backward()
    grads = problem.closed_form(record)
    eta = 1e-4
    change = first_order_score_change(record, grads.w_q, grads.w_k, eta)
    d_k = problem.w_q.shape[-1]
    expected = -eta * (c_q**2 + c_k**2) / d_k * grads.scores
    assert torch.allclose(change, expected, atol=1e-15, rtol=0)
    exact, _ = better_key_mass_change(record.weights.detach(), grads.advantage, change)
    assert (exact[..., 1:] > 0).all()  # every row with two or more keys gains


def test_the_mass_change_tends_to_its_first_order_prediction():
    problem = _problem(5, batch=2)
    record, _ = problem.forward_backward()
    grads = problem.closed_form(record)
    alpha = record.weights.detach()
    for eta, tolerance in ((1e-3, 5e-2), (1e-5, 5e-4)):
        change = first_order_score_change(record, grads.w_q, grads.w_k, eta)
        exact, predicted = better_key_mass_change(alpha, grads.advantage, change)
        rows = predicted.abs() > 1e-12
        ratio = exact[rows] / predicted[rows]
        assert ratio.median().item() == pytest.approx(1.0, abs=tolerance)


def test_the_score_step_raises_the_mass_in_every_row_the_weight_step_does_not():
    raised_by_scores, raised_by_weights = [], []
    for seed in range(20):
        problem = _problem(100 + seed, batch=1, heads=1, length=16)
        record, _ = problem.forward_backward()
        grads = problem.closed_form(record)
        alpha = record.weights.detach()
        for change, raised in ((-1e-4 * grads.scores, raised_by_scores),
                               (first_order_score_change(record, grads.w_q, grads.w_k, 1e-4),
                                raised_by_weights)):
            _, predicted = better_key_mass_change(alpha, grads.advantage, change)
            raised.append(predicted[..., 1:].flatten() > 0)
    assert torch.cat(raised_by_scores).all()
    assert not torch.cat(raised_by_weights).all()


def test_a_weight_step_keeps_the_balance_of_queries_and_keys_to_first_order():
    # W_Q^T W_Q - W_K^T W_K changes by eta^2 (g_Q^T g_Q - g_K^T g_K) only: the first-order
    # terms cancel, so gradient flow conserves it (per head, summed over a batch)
    problem = _problem(6, batch=3, heads=2)
    problem.forward_backward()
    w_q, w_k = problem.w_q.detach(), problem.w_k.detach()
    g_q, g_k = problem.w_q.grad, problem.w_k.grad

    def balance(q, k):
        return q.transpose(-1, -2) @ q - k.transpose(-1, -2) @ k

    eta = 0.05
    change = balance(w_q - eta * g_q, w_k - eta * g_k) - balance(w_q, w_k)
    assert torch.allclose(change, eta**2 * balance(g_q, g_k), atol=1e-12, rtol=0)
    # and the cancellation is not trivial: each factor alone moves at first order
    alone = eta * (g_q.transpose(-1, -2) @ w_q + w_q.transpose(-1, -2) @ g_q)
    assert alone.abs().max() > 10 * change.abs().max()
