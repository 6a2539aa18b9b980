"""The closed-form gradients of chapter 1 against autograd, in float64."""

import pytest
import torch

from attention_dynamics.attention import causal_mask
from attention_dynamics.gradients import (
    advantage,
    closed_form_gradients,
    compatibility,
    score_gradient,
    value_gradient,
)
from attention_dynamics.heads import gradient_errors, sample_head_problem

TOL = 1e-10
SHAPES = [  # (batch, heads, T, d_x, d_k, d_v)
    (1, 1, 1, 3, 2, 2),
    (2, 1, 5, 4, 3, 2),
    (3, 2, 9, 6, 4, 5),
    (1, 4, 17, 8, 8, 3),
    (2, 3, 32, 5, 2, 7),
]


def _random_head(shape, seed, scale=1.0, mask="causal"):
    """A random head with a readout and cross-entropy loss, after autograd's backward pass."""
    b, h, t, d_x, d_k, d_v = shape
    problem = sample_head_problem(torch.Generator().manual_seed(seed), b, h, t, d_x, d_k, d_v,
                                  score_scale=scale, mask=mask)
    rec, _ = problem.forward_backward(retain=("scores", "weights", "q", "k", "v"))
    return rec, (problem.w_q, problem.w_k, problem.w_v)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", [0, 1])
def test_every_closed_form_gradient_matches_autograd(shape, seed):
    rec, weights = _random_head(shape, seed)
    grads = closed_form_gradients(rec, weight_shapes=tuple(w.shape for w in weights))
    allowed = rec.mask
    assert torch.allclose(grads.compatibility, rec.weights.grad.masked_fill(~allowed, 0), atol=TOL)
    assert (grads.scores - rec.scores.grad.masked_fill(~allowed, 0)).abs().max() < TOL
    for mine, autograd in [(grads.q, rec.q.grad), (grads.k, rec.k.grad), (grads.v, rec.v.grad),
                           (grads.w_q, weights[0].grad), (grads.w_k, weights[1].grad),
                           (grads.w_v, weights[2].grad)]:
        assert mine.shape == autograd.shape
        assert (mine - autograd).abs().max() < TOL


def test_full_attention_and_a_custom_mask():
    shape = (2, 2, 6, 4, 3, 3)
    band = causal_mask(6) & ~causal_mask(6).tril(-3)  # each query sees itself and two before
    for mask in (None, band):
        rec, weights = _random_head(shape, 3, mask=mask)
        grads = closed_form_gradients(rec, weight_shapes=tuple(w.shape for w in weights))
        expected = rec.scores.grad if mask is None else rec.scores.grad.masked_fill(~mask, 0)
        assert (grads.scores - expected).abs().max() < TOL
        assert (grads.w_q - weights[0].grad).abs().max() < TOL


def test_saturated_softmax_keeps_the_identity():
    # scores of order 1e2: most rows put all their mass on one key
    rec, weights = _random_head((2, 1, 12, 6, 4, 3), 5, scale=60.0)
    assert rec.weights.max(dim=-1).values.median() > 0.999
    grads = closed_form_gradients(rec)
    assert (grads.scores - rec.scores.grad.masked_fill(~rec.mask, 0)).abs().max() < TOL


def test_rows_of_the_score_gradient_sum_to_zero():
    rec, _ = _random_head((3, 2, 20, 5, 4, 4), 7)
    grads = closed_form_gradients(rec)
    assert grads.scores.sum(dim=-1).abs().max() < 1e-14
    # the attention-weighted advantage is zero too: the baseline is the weighted mean
    assert (rec.weights.detach() * grads.advantage).sum(dim=-1).abs().max() < 1e-14


def test_single_position_has_zero_score_gradient():
    rec, _ = _random_head((2, 1, 1, 3, 2, 2), 0)
    grads = closed_form_gradients(rec)
    assert torch.equal(grads.scores, torch.zeros_like(grads.scores))


def test_gradcheck_of_the_routing_law():
    """gradcheck on the softmax layer with a fixed linear loss L = <C, alpha>: dL/ds = alpha * A."""
    gen = torch.Generator().manual_seed(11)
    scores = torch.randn(2, 5, 5, dtype=torch.float64, generator=gen, requires_grad=True)
    compat = torch.randn(2, 5, 5, dtype=torch.float64, generator=gen)
    assert torch.autograd.gradcheck(lambda s: (torch.softmax(s, -1) * compat).sum(), (scores,))
    alpha = torch.softmax(scores, -1)
    (alpha * compat).sum().backward()
    assert (score_gradient(alpha.detach(), compat) - scores.grad).abs().max() < TOL


def test_value_gradient_is_responsibility_weighted_sum():
    gen = torch.Generator().manual_seed(2)
    alpha = torch.softmax(torch.randn(4, 4, dtype=torch.float64, generator=gen), -1)
    u = torch.randn(4, 3, dtype=torch.float64, generator=gen)
    by_hand = torch.stack([sum(alpha[i, j] * u[i] for i in range(4)) for j in range(4)])
    assert (value_gradient(alpha, u) - by_hand).abs().max() < 1e-15


def test_bad_inputs_name_the_argument():
    u = torch.randn(3, 4)
    with pytest.raises(ValueError, match="values"):
        compatibility(u, torch.randn(3, 5))
    with pytest.raises(ValueError, match="upstream"):
        compatibility(torch.ones(3, 4, dtype=torch.long), u)
    with pytest.raises(ValueError, match="compat"):
        advantage(torch.rand(3, 3), torch.rand(3, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match="shapes must agree"):
        advantage(torch.rand(3, 3), torch.rand(4, 4))


def test_gradient_errors_report_every_quantity_below_tolerance():
    problem = sample_head_problem(torch.Generator().manual_seed(4), 2, 3, 10, 6, 4, 5)
    errors = gradient_errors(problem)
    assert set(errors) == {"compatibility", "scores", "q", "k", "v", "w_q", "w_k", "w_v", "row_sum"}
    assert max(errors.values()) < TOL
    # and the check can fail: a wrong readout breaks the agreement of u with autograd's graph
    record, _ = problem.forward_backward(retain=("scores",))
    wrong = problem.closed_form(record)
    wrong_scores = score_gradient(record.weights.detach(), 2 * wrong.compatibility)
    assert (wrong_scores - record.scores.grad.masked_fill(~record.mask, 0)).abs().max() > 1e-4
