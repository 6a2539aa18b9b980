"""Chapter 3's EM reading made precise, in float64: the score mixture's Gibbs free energy, its
evidence, the M-step's closed form, and the two ways training departs from EM."""

import math

import pytest
import torch

from attention_dynamics.attention import causal_mask
from attention_dynamics.score_mixture import (
    class_histograms,
    closed_form_m_step,
    descend_values,
    gibbs_free_energy,
    head_loss,
    log_evidence,
    m_step_floor,
    m_step_objective,
)

T, C, D = 7, 5, 6


def _problem(seed: int):
    gen = torch.Generator().manual_seed(seed)
    scores = torch.randn(T, T, generator=gen, dtype=torch.float64)
    mask = causal_mask(T)
    weights = torch.softmax(scores.masked_fill(~mask, -math.inf), -1)
    targets = torch.randint(0, C, (T,), generator=gen)
    values = torch.randn(T, D, generator=gen, dtype=torch.float64)
    readout = torch.randn(D, C, generator=gen, dtype=torch.float64)
    return scores, mask, weights, targets, values, readout


def test_free_energy_is_log_partition_minus_kl_and_softmax_maximises_it():
    scores, mask, weights, _, _, _ = _problem(0)
    gen = torch.Generator().manual_seed(1)
    log_z = torch.logsumexp(scores.masked_fill(~mask, -math.inf), -1)
    torch.testing.assert_close(gibbs_free_energy(weights, scores, mask), log_z)
    for _ in range(20):
        q = torch.rand(T, T, generator=gen, dtype=torch.float64).masked_fill(~mask, 0.0)
        q = q / q.sum(-1, keepdim=True)
        kl = torch.xlogy(q, q).sum(-1) - (q * torch.log(weights.clamp_min(1e-300))).sum(-1)
        torch.testing.assert_close(gibbs_free_energy(q, scores, mask), log_z - kl)
        assert (gibbs_free_energy(q, scores, mask) <= log_z + 1e-12).all()
    # the evidence is the maximum less the uniform prior's log n_i
    counts = mask.sum(-1).to(torch.float64)
    torch.testing.assert_close(log_evidence(scores, mask), log_z - counts.log())


def test_free_energy_rejects_what_is_not_a_distribution():
    scores, mask, weights, _, _, _ = _problem(0)
    with pytest.raises(ValueError, match="sum to one"):
        gibbs_free_energy(weights * 2, scores, mask)
    with pytest.raises(ValueError, match="mask forbids"):
        gibbs_free_energy(torch.full((T, T), 1 / T, dtype=torch.float64), scores, mask)
    with pytest.raises(ValueError, match="at least one source"):
        log_evidence(scores, torch.zeros(T, T, dtype=torch.bool))


def test_histograms_count_the_classes_each_source_explains():
    _, _, weights, targets, _, _ = _problem(2)
    histograms, mass = class_histograms(weights, targets, C)
    for j in range(T):
        for c in range(C):
            expected = sum(weights[i, j].item() for i in range(T) if targets[i] == c)
            assert histograms[j, c].item() * mass[j].item() == pytest.approx(expected, abs=1e-12)
    torch.testing.assert_close(mass, weights.sum(0))
    with pytest.raises(ValueError, match="n_classes"):
        class_histograms(weights, targets + C, C)


def test_closed_form_m_step_is_the_minimum_of_the_m_step_objective():
    scores, _, _, _, _, _ = _problem(3)
    # every source read by every query, every class some query's: all histograms positive
    weights = torch.softmax(scores, -1)
    targets = torch.arange(T) % C
    best = closed_form_m_step(weights, targets, C)
    assert torch.isfinite(best).all()
    q_best = m_step_objective(weights, best, targets)
    histograms, mass = class_histograms(weights, targets, C)
    entropy = -(histograms * histograms.log()).sum(-1)
    torch.testing.assert_close(q_best, (mass * entropy).sum())
    torch.testing.assert_close(m_step_floor(weights, targets, C), q_best)
    # stationary (autograd) and below every perturbation
    z = best.clone().requires_grad_()
    (grad,) = torch.autograd.grad(m_step_objective(weights, z, targets), z)
    assert grad.abs().max() < 1e-12
    gen = torch.Generator().manual_seed(4)
    for _ in range(20):
        other = best + 0.1 * torch.randn(best.shape, generator=gen, dtype=torch.float64)
        assert m_step_objective(weights, other, targets) > q_best


def test_the_m_step_bounds_the_head_loss_from_above():
    for seed in range(10):
        _, _, weights, targets, values, readout = _problem(seed)
        loss = head_loss(weights, values, readout, targets)
        bound = m_step_objective(weights, values @ readout, targets)
        assert loss <= bound + 1e-12   # Jensen: the cross-entropy is convex in the logits


def _loss_gradient_by_hand(weights, values, readout, targets):
    """``dL/dV = alpha^T (p - e_y) W_O^T`` for the head loss ``L`` (summed over queries):
    softmax minus one-hot at the logits, carried back through the readout and the mixing."""
    logits = (weights @ values) @ readout
    residual = torch.softmax(logits, -1) - torch.nn.functional.one_hot(targets, C).double()
    return weights.T @ residual @ readout.T


def test_descent_on_the_values_moves_the_loss_and_the_m_step_objective_to_first_order():
    """``descend_values`` takes plain gradient steps on the head loss (its step, against the
    gradient by hand); the loss falls, and a small step changes the loss by ``-lr |g|^2`` and the
    M-step objective by ``-lr <dQ/dV, g>``, to first order. (Whether near the head's optimum that
    step raises the objective, and on how many problems, is the ledger's.)"""
    lr = 1e-5
    for seed in range(10):
        _, _, weights, targets, values, readout = _problem(seed)
        trained = descend_values(weights, values, readout, targets, steps=200, lr=0.05)
        assert head_loss(weights, trained, readout, targets) < head_loss(weights, values,
                                                                          readout, targets)
        g = _loss_gradient_by_hand(weights, trained, readout, targets)
        stepped = descend_values(weights, trained, readout, targets, steps=1, lr=lr)
        torch.testing.assert_close(stepped, trained - lr * g, rtol=0, atol=1e-15)
        d_loss = (head_loss(weights, stepped, readout, targets)
                  - head_loss(weights, trained, readout, targets))
        assert d_loss < 0
        assert d_loss.item() == pytest.approx(-lr * (g * g).sum().item(), rel=1e-5)
        z = trained.clone().requires_grad_()
        (dq,) = torch.autograd.grad(m_step_objective(weights, z @ readout, targets), z)
        d_bound = (m_step_objective(weights, stepped @ readout, targets)
                   - m_step_objective(weights, trained @ readout, targets))
        first_order = -lr * (dq * g).sum().item()
        scale = lr * (dq.norm() * g.norm()).item()     # the largest first-order change
        assert d_bound.item() == pytest.approx(first_order, abs=1e-5 * scale)


def test_a_descent_step_on_the_scores_can_lower_the_score_mixtures_evidence():
    falls = rises = 0
    for seed in range(50):
        scores, mask, _, targets, values, readout = _problem(seed)
        s = scores.clone().requires_grad_()
        weights = torch.softmax(s.masked_fill(~mask, -math.inf), -1)
        (grad,) = torch.autograd.grad(head_loss(weights, values, readout, targets), s)
        change = log_evidence(scores - 1e-4 * grad, mask) - log_evidence(scores, mask)
        falls += int((change[1:] < 0).sum())   # row 0 reads one source: nothing moves
        rises += int((change[1:] > 0).sum())
    assert falls > 0 and rises > 0
