"""Chapter 2's identities (the value update and its feedback) and the specialization measures."""

import math

import pytest
import torch
import torch.nn.functional as F

from attention_dynamics.attention import attention_forward
from attention_dynamics.gradients import advantage, value_gradient
from attention_dynamics.measures.specialization import (
    advantage_change,
    dominant_group,
    exact_advantage_change,
    head_advantage,
    predicted_value_step,
    prototype_specialization,
    reinforcement_index,
    responsibility_matrix,
    routing_matrix,
    routing_specialization,
    sum_zero_basis,
    value_feedback_kernel,
    value_predictions,
    value_step_feedback,
)

TOL = 1e-12
F64 = torch.float64


def _causal_batch(seed, batch=3, heads=2, length=9, d_x=5, d_k=4, d_v=3, classes=4):
    """A batch of causal sequences through a stack of heads, with a readout and cross-entropy."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, 1, length, d_x, dtype=F64, generator=gen)
    w_q, w_k, w_v = (torch.randn(heads, d_x, d, dtype=F64, generator=gen).requires_grad_()
                     for d in (d_k, d_k, d_v))
    readout = torch.randn(heads, d_v, classes, dtype=F64, generator=gen)
    targets = torch.randint(0, classes, (batch, length), generator=gen)
    return x, w_q, w_k, w_v, readout, targets


def _loss(output, readout, targets):
    logits = torch.einsum("bhtd,hdc->btc", output, readout)
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_value_gradient_identity_causal_batched_against_autograd(seed):
    x, w_q, w_k, w_v, readout, targets = _causal_batch(seed)
    rec = attention_forward(x, w_q, w_k, w_v, mask="causal", retain_upstream=True)
    rec.v.retain_grad()
    _loss(rec.output, readout, targets).backward()
    by_identity = value_gradient(rec.weights.detach(), rec.upstream)
    assert (by_identity - rec.v.grad).abs().max() < TOL
    # causality: the last position's value is pulled by the last query only
    last = rec.weights.detach()[..., -1, -1:, None] * rec.upstream[..., -1:, :]
    assert (rec.v.grad[..., -1:, :] - last).abs().max() < TOL


@pytest.mark.parametrize("lr", [0.1, 1e-3])
def test_one_sgd_step_on_free_values_is_minus_lr_responsibility_sum(lr):
    x, w_q, w_k, _, readout, targets = _causal_batch(3)
    gen = torch.Generator().manual_seed(30)
    values = torch.randn(3, 2, 9, 3, dtype=F64, generator=gen).requires_grad_()
    before = values.detach().clone()
    with torch.no_grad():
        weights = attention_forward(x, w_q, w_k, torch.zeros(2, 5, 3, dtype=F64)).weights
    output = (weights @ values).requires_grad_()
    output.retain_grad()
    optimizer = torch.optim.SGD([values], lr=lr)
    _loss(output, readout, targets).backward()
    optimizer.step()
    predicted = predicted_value_step(weights, output.grad, lr)
    assert (values.detach() - before - predicted).abs().max() < TOL
    # written out for one value: Delta v_j = -lr sum_i alpha_ij u_i, causal so i >= j
    j = 4
    by_hand = -lr * sum(weights[1, 0, i, j] * output.grad[1, 0, i] for i in range(j, 9))
    assert (values.detach()[1, 0, j] - before[1, 0, j] - by_hand).abs().max() < TOL


def test_one_sgd_step_on_w_v_moves_values_through_the_input_gram_matrix():
    x, w_q, w_k, w_v, readout, targets = _causal_batch(4)
    lr = 0.05
    rec = attention_forward(x, w_q, w_k, w_v, retain_upstream=True)
    optimizer = torch.optim.SGD([w_v], lr=lr)
    _loss(rec.output, readout, targets).backward()
    v_before = rec.v.detach()
    optimizer.step()
    v_after = (x @ w_v).detach()
    predicted = predicted_value_step(rec.weights.detach(), rec.upstream, lr, inputs=x,
                                     w_v_shape=w_v.shape)
    assert (v_after - v_before - predicted).abs().max() < TOL
    # the same, spelled out for batch 0, head 1, value 2: sum_b sum_l (x_j . x_bl) g_bl
    pull = value_gradient(rec.weights.detach(), rec.upstream)[:, 1]            # (B, T, d_v)
    gram = torch.einsum("d,btd->bt", x[0, 0, 2], x[:, 0])                      # (B, T)
    by_hand = -lr * torch.einsum("bt,btd->d", gram, pull)
    assert (v_after[0, 1, 2] - v_before[0, 1, 2] - by_hand).abs().max() < TOL


def test_orthonormal_inputs_make_the_w_v_step_equal_the_free_step():
    gen = torch.Generator().manual_seed(5)
    weights = torch.softmax(torch.randn(7, 4, dtype=F64, generator=gen), -1)
    upstream = torch.randn(7, 3, dtype=F64, generator=gen)
    z, _ = torch.linalg.qr(torch.randn(4, 4, dtype=F64, generator=gen))
    assert (predicted_value_step(weights, upstream, 0.3, inputs=z)
            - predicted_value_step(weights, upstream, 0.3)).abs().max() < TOL


def _first_order_setup(seed=6, n=12, m=5, c=3):
    gen = torch.Generator().manual_seed(seed)
    weights = torch.softmax(torch.randn(2, n, m, dtype=F64, generator=gen), -1)
    values = torch.randn(2, m, c, dtype=F64, generator=gen)
    targets = torch.randint(0, c, (n,), generator=gen)

    def loss_of(logits):
        return F.cross_entropy(logits.transpose(1, 2), targets.expand(2, -1),
                               reduction="none").mean(-1).sum()

    def upstream_of(v):  # u = dL/do by autograd (torch.func, so that jvp can go through it)
        return torch.func.grad(loss_of)(weights @ v)

    return weights, values, upstream_of


def _advantage_by_autograd(weights, upstream, values):
    """``A_ij`` with the error signals ``u`` held fixed, by the routing law through autograd:
    the loss linear in the outputs, ``sum_i u_i . o_i`` with ``o = softmax(s) V``, has
    ``dL/ds_ij = alpha_ij A_ij``, and the scores ``s = log alpha`` give back ``alpha``."""
    scores = weights.log().requires_grad_()
    (grad,) = torch.autograd.grad((upstream * (scores.softmax(-1) @ values)).sum(), scores)
    return grad / weights


def test_feedback_kernel_is_the_value_step_change_of_the_advantage():
    weights, values, upstream_of = _first_order_setup()
    u = upstream_of(values)
    eta = 0.2
    step = predicted_value_step(weights, u, eta)
    # with u held fixed the change is linear in the step, so this is exact
    exact = (_advantage_by_autograd(weights, u, values + step)
             - _advantage_by_autograd(weights, u, values))
    assert (advantage_change(weights, u, values, step) - exact).abs().max() < TOL
    assert (exact + eta * value_feedback_kernel(weights, u)).abs().max() < TOL


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.func.jvp scripts decompositions
def test_full_first_order_change_of_the_advantage_has_error_of_order_eta_squared():
    weights, values, upstream_of = _first_order_setup()
    u = upstream_of(values)
    a0 = advantage(weights, u @ values.transpose(-1, -2))
    errors = []
    for eta in (1e-2, 1e-3):
        step = predicted_value_step(weights, u, eta)
        u1 = upstream_of(values + step)
        actual = advantage(weights, u1 @ (values + step).transpose(-1, -2)) - a0
        # delta u by a directional derivative of u along the value step (autograd, not closed form)
        _, du = torch.func.jvp(upstream_of, (values,), (step,))
        predicted = advantage_change(weights, u, values, step, du)
        errors.append(((actual - predicted).norm() / actual.norm()).item())
    assert errors[0] < 1e-1 and errors[1] < errors[0] / 5  # shrinks linearly with eta


def test_value_step_feedback_matches_a_real_step_to_first_order():
    weights, values, _ = _first_order_setup(10)
    gen = torch.Generator().manual_seed(10)
    targets = torch.randint(0, 3, (12,), generator=gen)
    readout = torch.eye(3, dtype=F64)
    unit = value_step_feedback(weights, values, targets, readout, lr=1.0)
    eta = 1e-5
    small = value_step_feedback(weights, values, targets, readout, lr=eta)
    assert (small.total - eta * unit.total).abs().max() < TOL  # linear in the step
    logits1 = weights @ (values + small.step)
    u1 = torch.softmax(logits1, -1) - F.one_hot(targets, 3).to(F64)
    actual = advantage(weights, (u1 / 12) @ (values + small.step).transpose(-1, -2)) - unit.advantage
    assert ((actual - small.total).norm() / actual.norm()) < 1e-3


def test_head_advantage_gives_the_score_gradient_by_the_routing_law():
    gen = torch.Generator().manual_seed(12)
    scores = torch.randn(2, 9, 4, dtype=F64, generator=gen).requires_grad_()
    values = torch.randn(2, 4, 3, dtype=F64, generator=gen)
    readout = torch.randn(3, 5, dtype=F64, generator=gen)
    targets = torch.randint(0, 5, (9,), generator=gen)
    weights = torch.softmax(scores, -1)
    logits = weights @ values @ readout
    loss = F.cross_entropy(logits.transpose(1, 2), targets.expand(2, -1), reduction="none")
    loss.mean(-1).sum().backward()
    a = head_advantage(weights.detach(), values, targets, readout)
    torch.testing.assert_close(weights.detach() * a, scores.grad, rtol=0, atol=1e-14)
    unit = value_step_feedback(weights.detach(), values, targets, readout)
    torch.testing.assert_close(a, unit.advantage, rtol=0, atol=0)


def test_reinforcement_index():
    gen = torch.Generator().manual_seed(13)
    weights = torch.softmax(torch.randn(3, 6, 4, dtype=F64, generator=gen), -1)
    a = torch.randn(3, 6, 4, dtype=F64, generator=gen)
    ones = torch.ones(3, dtype=F64)
    torch.testing.assert_close(reinforcement_index(weights, 2.5 * a, a), ones)   # along G
    torch.testing.assert_close(reinforcement_index(weights, -a, a), -ones)       # against G
    other = torch.randn(3, 6, 4, dtype=F64, generator=gen)
    rho = reinforcement_index(weights, other, a)
    assert rho.shape == (3,) and (rho.abs() < 1).all()
    # reference: the cosine of the two gradients' N x M entries, summed entry by entry
    for r in range(3):
        w, drive, moved = (t[r].tolist() for t in (weights, a, other))
        g = [w[i][j] * drive[i][j] for i in range(6) for j in range(4)]
        dg = [w[i][j] * moved[i][j] for i in range(6) for j in range(4)]
        dot = sum(x * y for x, y in zip(g, dg, strict=True))
        norms = math.sqrt(sum(x * x for x in g)) * math.sqrt(sum(y * y for y in dg))
        assert rho[r].item() == pytest.approx(dot / norms, abs=1e-14)
    # constructed: a change whose weighted entries are orthogonal to G's gives 0, and that
    # change scaled to G's size and added to G's own direction gives cos 45 degrees
    g, dg = weights * a, weights * other
    along = (g * dg).sum(dim=(1, 2), keepdim=True) / g.square().sum(dim=(1, 2), keepdim=True)
    perpendicular = (dg - along * g) / weights                      # alpha * it is orthogonal
    torch.testing.assert_close(reinforcement_index(weights, perpendicular, a),
                               torch.zeros(3, dtype=F64), rtol=0, atol=1e-14)
    size = (g.norm(dim=(1, 2)) / (weights * perpendicular).norm(dim=(1, 2))).view(3, 1, 1)
    torch.testing.assert_close(reinforcement_index(weights, a + size * perpendicular, a),
                               torch.full((3,), 1 / math.sqrt(2), dtype=F64), rtol=0, atol=1e-14)
    with pytest.raises(ValueError, match="change"):
        reinforcement_index(weights, other.float(), a)


def test_values_made_of_their_own_pulls_get_a_pure_amplification():
    # V = -c alpha^T U: every value is (a multiple of) the pull of its users. Then A = -c D and the
    # feedback part of a value step of size eta is (eta / c) A: the advantages are only rescaled.
    gen = torch.Generator().manual_seed(11)
    weights = torch.softmax(torch.randn(3, 10, 4, dtype=F64, generator=gen), -1)
    u = torch.randn(3, 10, 2, dtype=F64, generator=gen)
    c, eta = 2.5, 0.1
    values = -c * value_gradient(weights, u)
    a = advantage(weights, u @ values.transpose(-1, -2))
    assert (a + c * value_feedback_kernel(weights, u)).abs().max() < TOL
    step = predicted_value_step(weights, u, eta)
    assert (advantage_change(weights, u, values, step) - eta / c * a).abs().max() < TOL


def test_uniform_attention_makes_the_feedback_kernel_vanish():
    # an identity (cor-group-blind): D = (1/M - sum_k 1/M^2) u_i . sum_m u_m = 0
    gen = torch.Generator().manual_seed(7)
    weights = torch.full((10, 4), 0.25, dtype=F64)
    u = torch.randn(10, 3, dtype=F64, generator=gen)
    assert value_feedback_kernel(weights, u).abs().max() < TOL


N_UNIFORM, M_UNIFORM, CLASSES = 12, 5, 3
UNIFORM_TARGETS = torch.arange(CLASSES).repeat_interleave(N_UNIFORM // CLASSES)


def _by_autograd(scores, values, readout, targets):
    """``(alpha, A, u = dL/do, dL/dV)`` of a head with free values, every gradient by autograd.

    scores ``(N, M)``, values ``(M, d_v)``, readout ``(d_v, C)``; ``A = (dL/ds) / alpha`` by the
    routing law (tested above and in chapter 1), so no closed form enters.
    """
    scores, values = scores.clone().requires_grad_(), values.clone().requires_grad_()
    weights = torch.softmax(scores, -1)
    output = weights @ values
    output.retain_grad()
    F.cross_entropy(output @ readout, targets).backward()
    return weights.detach(), scores.grad / weights.detach(), output.grad, values.grad


def _distinct_values(seed, d_v=4):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(M_UNIFORM, d_v, dtype=F64, generator=gen),
            torch.randn(d_v, CLASSES, dtype=F64, generator=gen))


@pytest.mark.parametrize("seed", [14, 15])
def test_with_uniform_attention_a_value_step_changes_the_advantages_by_the_curvature_term(seed):
    values, readout = _distinct_values(seed)
    uniform = torch.zeros(N_UNIFORM, M_UNIFORM, dtype=F64)
    weights, a0, u0, grad = _by_autograd(uniform, values, readout, UNIFORM_TARGETS)
    lr = 2.0
    stepped = values - lr * grad                                       # one SGD step on V
    _, a1, u1, _ = _by_autograd(uniform, stepped, readout, UNIFORM_TARGETS)
    change = a1 - a0
    assert change.abs().max() > 1e-3                                   # the advantages do move
    # ... by exactly the curvature term du_i . (v_j - o_i), with v_j - o_i unchanged
    output = weights @ values
    curvature = (u1 - u0) @ values.T - ((u1 - u0) * output).sum(-1, keepdim=True)
    assert (change - curvature).abs().max() < 1e-15
    parts = exact_advantage_change(weights, values, stepped - values, UNIFORM_TARGETS, readout)
    assert parts.feedback.abs().max() < 1e-15 and parts.product.abs().max() < 1e-15
    assert (parts.curvature - change).abs().max() < 1e-15
    # ... and by the same amount for every query, while the advantages differ between classes:
    # A_ij - A_lj = (l_j(y_l) - l_j(y_i)) / N with l_j = (v_j - v_bar) W_O
    assert (change - change[:1]).abs().max() < 1e-15
    centred_logits = (values - values.mean(0)) @ readout                # (M, C)
    first, last = UNIFORM_TARGETS[0], UNIFORM_TARGETS[-1]
    expected = (centred_logits[:, last] - centred_logits[:, first]) / N_UNIFORM
    assert (a0[0] - a0[-1] - expected).abs().max() < 1e-15 and expected.abs().max() > 1e-2


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_with_uniform_attention_the_first_order_curvature_part_is_the_whole_change():
    values, readout = _distinct_values(16)
    uniform = torch.zeros(N_UNIFORM, M_UNIFORM, dtype=F64)
    weights, a0, _, grad = _by_autograd(uniform, values, readout, UNIFORM_TARGETS)
    errors = []
    for lr in (1e-2, 1e-3):
        _, a1, _, _ = _by_autograd(uniform, values - lr * grad, readout, UNIFORM_TARGETS)
        terms = value_step_feedback(weights, values, UNIFORM_TARGETS, readout, lr)
        assert terms.feedback.abs().max() < 1e-17
        errors.append(((a1 - a0 - terms.curvature).norm() / (a1 - a0).norm()).item())
    assert errors[0] < 1e-2 and 8 < errors[0] / errors[1] < 12       # first order: error ~ lr


def test_exact_advantage_change_adds_up_to_the_real_change():
    weights, values, _ = _first_order_setup(17)
    gen = torch.Generator().manual_seed(17)
    readout = torch.randn(3, 4, dtype=F64, generator=gen)
    targets = torch.randint(0, 4, (12,), generator=gen)
    delta = 0.3 * torch.randn(values.shape, dtype=F64, generator=gen)
    parts = exact_advantage_change(weights, values, delta, targets, readout)
    real = (head_advantage(weights, values + delta, targets, readout)
            - head_advantage(weights, values, targets, readout))
    assert (parts.total - real).abs().max() < TOL
    assert parts.product.abs().max() > 1e-4  # a finite step: the product term is really there


def test_equal_values_give_routing_no_gradient_whatever_the_attention():
    # prop-symmetric-drive, exact: w = 0 makes dL/ds vanish for any alpha
    gen = torch.Generator().manual_seed(18)
    scores = torch.randn(N_UNIFORM, M_UNIFORM, dtype=F64, generator=gen)
    readout = torch.randn(4, CLASSES, dtype=F64, generator=gen)
    values = torch.randn(1, 4, dtype=F64, generator=gen).expand(M_UNIFORM, 4)
    _, a, _, _ = _by_autograd(scores, values, readout, UNIFORM_TARGETS)
    assert a.abs().max() < 1e-16


def test_the_values_spread_is_driven_by_the_attention_departing_from_uniform():
    # prop-symmetric-drive, exact: dL/dv_j - mean_k dL/dv_k = sum_i (alpha_ij - 1/M) u_i
    values, readout = _distinct_values(19)
    gen = torch.Generator().manual_seed(19)
    for scores in (torch.randn(N_UNIFORM, M_UNIFORM, dtype=F64, generator=gen),
                   torch.zeros(N_UNIFORM, M_UNIFORM, dtype=F64)):
        weights, _, u, grad = _by_autograd(scores, values, readout, UNIFORM_TARGETS)
        drive = (weights - 1 / M_UNIFORM).T @ u
        assert (grad - grad.mean(0) - drive).abs().max() < 1e-16
    assert drive.abs().max() < 1e-17     # uniform attention: every value gets the same pull


def test_near_the_symmetric_state_each_half_is_driven_by_the_other_to_first_order():
    # prop-symmetric-drive: dL/ds_ij = (1/M) u0_i . (w_j - w_bar) + O(eps^2), and the spread's
    # drive is sum_i beta_ij u0_i + O(eps^2), with u0 the error signals at the symmetric state
    gen = torch.Generator().manual_seed(20)
    readout = torch.randn(4, CLASSES, dtype=F64, generator=gen)
    centre = torch.randn(1, 4, dtype=F64, generator=gen).expand(M_UNIFORM, 4)
    spread = torch.randn(M_UNIFORM, 4, dtype=F64, generator=gen)
    tilt = torch.randn(N_UNIFORM, M_UNIFORM, dtype=F64, generator=gen)
    uniform = torch.zeros(N_UNIFORM, M_UNIFORM, dtype=F64)
    _, _, u0, _ = _by_autograd(uniform, centre, readout, UNIFORM_TARGETS)
    errors = []
    for eps in (1e-3, 1e-4):
        weights, a, _, grad = _by_autograd(eps * tilt, centre + eps * spread, readout,
                                           UNIFORM_TARGETS)
        w = eps * spread
        routing_drive = u0 @ (w - w.mean(0)).T / M_UNIFORM
        value_drive = (weights - 1 / M_UNIFORM).T @ u0
        errors.append(max(((weights * a - routing_drive).norm() / routing_drive.norm()).item(),
                          ((grad - grad.mean(0) - value_drive).norm() / value_drive.norm()).item()))
    assert errors[0] < 1e-2 and 8 < errors[0] / errors[1] < 12        # the remainder is O(eps^2)


# ---- specialization measures on cases with known answers ----

GROUPS = torch.tensor([0, 0, 0, 1, 1, 2, 2, 2, 2])  # unbalanced on purpose


def _specialized_weights():
    """Group g attends only to value g (of 4 values; value 3 is unused)."""
    return F.one_hot(GROUPS, 4).to(F64)


def test_fully_specialized_head_scores_one():
    weights = _specialized_weights()
    certain = torch.eye(4, 3, dtype=F64)  # value g predicts class g with probability 1
    assert abs(routing_specialization(weights, GROUPS, 3).item() - 1.0) < TOL
    assert abs(prototype_specialization(weights, GROUPS, 3, certain).item() - 1.0) < TOL
    resp = responsibility_matrix(weights, GROUPS, 3)
    assert torch.allclose(resp[:, :3], torch.eye(3, dtype=F64))
    assert torch.equal(dominant_group(weights, GROUPS, 3)[:3], torch.arange(3))


@pytest.mark.parametrize("case", ["uniform", "group_blind"])
def test_routing_that_ignores_the_group_scores_zero_whatever_the_values(case):
    gen = torch.Generator().manual_seed(8)
    if case == "uniform":
        weights = torch.full((9, 4), 0.25, dtype=F64)
    else:  # every query has the same, non-uniform attention
        weights = torch.softmax(torch.randn(4, dtype=F64, generator=gen), -1).expand(9, 4)
    predictions = value_predictions(3 * torch.randn(4, 3, dtype=F64, generator=gen))
    assert abs(routing_specialization(weights, GROUPS, 3).item()) < TOL
    assert abs(prototype_specialization(weights, GROUPS, 3, predictions).item()) < TOL
    assert torch.allclose(responsibility_matrix(weights, GROUPS, 3),
                          torch.full((3, 4), 1 / 3, dtype=F64))


def test_a_half_specialized_case_by_hand():
    # two groups; group 0 attends to value 0 only, group 1 splits evenly between values 0 and 1
    groups = torch.tensor([0, 0, 1, 1])
    weights = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.5, 0.5], [0.5, 0.5]], dtype=F64)
    # joint p(g, j) = [[1/2, 0], [1/4, 1/4]]; I(G; J) = H(G) - H(G | J)
    h_g_given_j = 0.75 * (-(2 / 3) * math.log(2 / 3) - (1 / 3) * math.log(1 / 3))
    expected = 1 - h_g_given_j / math.log(2)
    assert abs(routing_specialization(weights, groups, 2).item() - expected) < TOL
    # value 0 predicts class 0 with 0.9, value 1 predicts class 1 with 0.8:
    # S = 1/2 * 0.9 + 1/2 * (0.5 * 0.1 + 0.5 * 0.8) = 0.675, rescaled (S - 1/2) / (1/2) = 0.35
    predictions = torch.tensor([[0.9, 0.1], [0.2, 0.8]], dtype=F64)
    assert abs(prototype_specialization(weights, groups, 2, predictions).item() - 0.35) < TOL
    assert torch.allclose(routing_matrix(weights, groups, 2),
                          torch.tensor([[1.0, 0.0], [0.5, 0.5]], dtype=F64))
    assert torch.allclose(responsibility_matrix(weights, groups, 2),
                          torch.tensor([[2 / 3, 0.0], [1 / 3, 1.0]], dtype=F64))


def test_measures_broadcast_over_leading_dimensions():
    gen = torch.Generator().manual_seed(9)
    weights = torch.softmax(torch.randn(5, 2, 9, 4, dtype=F64, generator=gen), -1)
    predictions = value_predictions(torch.randn(5, 2, 4, 3, dtype=F64, generator=gen))
    batched = prototype_specialization(weights, GROUPS, 3, predictions)
    assert batched.shape == (5, 2)
    single = prototype_specialization(weights[3, 1], GROUPS, 3, predictions[3, 1])
    assert abs(batched[3, 1].item() - single.item()) < TOL
    assert routing_specialization(weights, GROUPS, 3).shape == (5, 2)
    assert torch.allclose(routing_matrix(weights, GROUPS, 3).sum(-1), torch.ones(5, 2, 3, dtype=F64))
    assert torch.allclose(responsibility_matrix(weights, GROUPS, 3).sum(-2),
                          torch.ones(5, 2, 4, dtype=F64))
    mi = routing_specialization(weights, GROUPS, 3)
    assert (mi >= -TOL).all() and (mi <= 1 + TOL).all()


def test_sum_zero_basis_is_orthonormal_and_orthogonal_to_ones():
    for n in (2, 3, 6):
        basis = sum_zero_basis(n)
        assert basis.shape == (n, n - 1)
        assert torch.allclose(basis.T @ basis, torch.eye(n - 1, dtype=F64), atol=TOL)
        assert (torch.ones(n, dtype=F64) @ basis).abs().max() < TOL


def test_bad_inputs_name_the_argument():
    weights = torch.full((9, 4), 0.25, dtype=F64)
    with pytest.raises(ValueError, match="groups"):
        routing_matrix(weights, GROUPS.float(), 3)
    with pytest.raises(ValueError, match="groups"):
        routing_matrix(weights, GROUPS[:5], 3)
    with pytest.raises(ValueError, match="groups"):
        routing_matrix(weights, GROUPS, 4)  # group 3 has no query
    with pytest.raises(ValueError, match="n_groups"):
        routing_specialization(weights, torch.zeros(9, dtype=torch.long), 1)
    with pytest.raises(ValueError, match="predictions"):
        prototype_specialization(weights, GROUPS, 3, torch.full((3, 3), 1 / 3, dtype=F64))
    with pytest.raises(ValueError, match="group_classes"):
        prototype_specialization(weights, GROUPS, 3, torch.full((4, 3), 1 / 3, dtype=F64),
                                 group_classes=torch.tensor([0, 1, 5]))
    with pytest.raises(ValueError, match="lr"):
        predicted_value_step(weights, torch.zeros(9, 3, dtype=F64), float("nan"))
    with pytest.raises(ValueError, match="inputs"):
        predicted_value_step(weights, torch.zeros(9, 3, dtype=F64), 0.1,
                             inputs=torch.zeros(3, 2, dtype=F64))
    with pytest.raises(ValueError, match="upstream"):
        predicted_value_step(weights, torch.zeros(8, 3, dtype=F64), 0.1)
    with pytest.raises(ValueError, match="n"):
        sum_zero_basis(1)
