"""Paths, settling, linear response and curvature of the sticky-chain head (chapter 3)."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attention_dynamics.measures.geometry import class_means
from attention_dynamics.measures.settling import jitter_aware_settling_step
from attention_dynamics.measures.trajectories import (
    first_step_below,
    first_step_staying,
    first_step_where,
    path_summary,
    relative_fall,
    settling_step,
)
from attention_dynamics.sticky import analysis as ed
from attention_dynamics.sticky import model as sm
from attention_dynamics.sticky import training as tr

F64 = torch.float64


def _batch(n_runs, length, seed=0, dtype=F64):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n_runs, length, 20, generator=generator, dtype=dtype)
    y = torch.randint(8, (n_runs, length), generator=generator)
    return x, y


# ---- paths ----

def test_straight_path_has_straightness_and_persistence_one():
    t = torch.linspace(0, 1, 6, dtype=F64) ** 2          # uneven steps, one direction
    points = t[:, None] * torch.tensor([3.0, 4.0], dtype=F64)
    summary = path_summary(points)
    assert summary.length.item() == pytest.approx(5.0, abs=1e-12)
    assert summary.displacement.item() == pytest.approx(5.0, abs=1e-12)
    assert summary.straightness.item() == pytest.approx(1.0, abs=1e-12)
    assert summary.persistence.item() == pytest.approx(1.0, abs=1e-12)


def test_zigzag_and_batch_shapes():
    # right, up, right, up: length 4, displacement 2 sqrt 2, successive steps orthogonal
    zigzag = torch.tensor([[0, 0], [1, 0], [1, 1], [2, 1], [2, 2]], dtype=F64)
    back_and_forth = torch.tensor([[0, 0], [1, 0], [0, 0], [1, 0], [0, 0]], dtype=F64)
    summary = path_summary(torch.stack([zigzag, back_and_forth], dim=1))  # (S, 2, d)
    assert summary.length.tolist() == pytest.approx([4.0, 4.0])
    assert summary.straightness.tolist() == pytest.approx([2 * math.sqrt(2) / 4, 0.0])
    assert summary.persistence.tolist() == pytest.approx([0.0, -1.0])
    still = path_summary(torch.zeros(4, 3, 2, dtype=F64))
    assert still.straightness.isnan().all() and still.persistence.isnan().all()
    with pytest.raises(ValueError, match="points"):
        path_summary(torch.zeros(2, 3, dtype=F64))


def test_class_means():
    vectors = torch.arange(12, dtype=F64).view(2, 3, 2)
    labels = torch.tensor([[0, 1, 0], [2, 2, 2]])
    means = class_means(vectors, labels, 3)
    torch.testing.assert_close(means[0, 0], vectors[0, [0, 2]].mean(0))
    torch.testing.assert_close(means[1, 2], vectors[1].mean(0))
    assert means[0, 2].isnan().all() and means[1, :2].isnan().all()
    shared = class_means(vectors, torch.tensor([1, 1, 0]), 2)  # one labelling for both
    torch.testing.assert_close(shared[:, 0], vectors[:, 2])
    with pytest.raises(ValueError, match="labels"):
        class_means(vectors, torch.tensor([0, 1, 3]), 3)
    with pytest.raises(ValueError, match="labels"):
        class_means(vectors, labels.float(), 3)


# ---- attention rows, snapshots, routing ----

def test_attention_rows_match_the_full_forward_pass():
    params = sm.init_params([1, 2], dtype=F64).map(lambda w: w * 5)
    x, _ = _batch(2, 40)
    rows = torch.tensor([0, 7, 39])
    full = sm.forward_record(params, x)[0].weights
    torch.testing.assert_close(ed.attention_rows(params, x, rows), full[:, rows], rtol=0,
                               atol=1e-14)
    with pytest.raises(ValueError, match="rows"):
        ed.attention_rows(params, x, torch.tensor([40]))


def test_record_params_and_evaluate_snapshots():
    params = sm.init_params([3, 4], dtype=F64)
    x, y = _batch(2, 30, seed=1)
    history = tr.train(params, x, y, ["sgd", "em"], steps=9, snapshot_every=4,
                       record_params=True)
    assert history.snapshot_steps.tolist() == [0, 4, 8, 9]
    assert len(history.param_snapshots) == 4
    for name, w in history.final_params.tensors().items():
        assert torch.equal(getattr(history.param_snapshots[-1], name), w)
        assert torch.equal(getattr(history.param_snapshots[0], name), getattr(params, name))
    scored = ed.evaluate_snapshots(history.param_snapshots, x, y)
    assert scored.loss.shape == (4, 2)
    torch.testing.assert_close(scored.loss[[0, 2, 3]], history.loss[[0, 8, 9]], rtol=0,
                               atol=1e-14)
    assert tr.train(params, x, y, "sgd", steps=2).param_snapshots is None
    with pytest.raises(ValueError, match="snapshot_every"):
        tr.train(params, x, y, "sgd", steps=2, record_params=True)


def test_first_step_below():
    steps = torch.tensor([0, 10, 20])
    series = torch.tensor([[3.0, 3.0], [2.0, 2.9], [1.0, 2.95]])
    assert first_step_below(steps, series, 2.5) == [10, None]
    assert first_step_below(steps, series, torch.tensor([1.5, 2.96])) == [20, 10]
    assert first_step_below(steps, series, 2.5, never=20) == [10, 20]  # never -> a count
    assert first_step_below(steps, series, 0.5, never=-1) == [-1, -1]


def test_first_step_where_and_first_step_staying():
    steps = torch.tensor([0, 5, 10, 15])
    # run 0: holds from 5 on; run 1: holds at 0 and 10 but not at the end; run 2: only at 15
    condition = torch.tensor([[False, True, False], [True, False, False],
                              [True, True, False], [True, False, True]])
    assert first_step_where(steps, condition) == [5, 0, 15]
    assert first_step_staying(steps, condition) == [5, None, 15]
    assert first_step_staying(steps, condition, never=99) == [5, 99, 15]
    assert first_step_where(steps, torch.zeros(4, 2, dtype=torch.bool), never=15) == [15, 15]
    with pytest.raises(ValueError, match="condition"):
        first_step_where(steps, condition.int())
    with pytest.raises(ValueError, match="condition"):
        first_step_where(steps[:3], condition)


def test_symbol_routing():
    labels = torch.tensor([[0, 1, 0, 1]])
    rows = torch.tensor([2, 3])
    uniform = torch.tensor([[[1 / 3, 1 / 3, 1 / 3, 0.0], [0.25] * 4]], dtype=F64)
    assert ed.symbol_routing(uniform, rows, labels).item() == pytest.approx(1.0, abs=1e-14)
    same = torch.tensor([[[0.5, 0.0, 0.5, 0.0], [0.0, 0.5, 0.0, 0.5]]], dtype=F64)
    # row 2: all mass on label 0, which is 2 of the 3 visible keys: 1 / (2/3); row 3: 1 / (1/2)
    assert ed.symbol_routing(same, rows, labels).item() == pytest.approx((1.5 + 2.0) / 2)
    with pytest.raises(ValueError, match="labels"):
        ed.symbol_routing(same, rows, labels[:, :3])


# ---- settling ----

def test_frame_precision_on_a_short_run():
    params = sm.init_params([5, 6], dtype=F64).map(lambda w: w * 3)
    x, y = _batch(2, 50, seed=2)
    history = tr.train(params, x, y, ["sgd", "em"], steps=20, snapshot_every=5,
                       record_params=True)
    rows = torch.arange(4, 50, 5)
    fp = ed.frame_precision(history.param_snapshots, history.snapshot_steps, x, rows)
    assert fp.attention_remaining.shape == fp.value_remaining.shape == (5, 2)
    torch.testing.assert_close(fp.attention_remaining[0], torch.ones(2, dtype=F64))
    torch.testing.assert_close(fp.value_remaining[-1], torch.zeros(2, dtype=F64))
    # reference: the full attention matrices of the model's own forward pass, the rows
    # compared by a loop (half the summed absolute differences), the values in NumPy
    first = sm.forward_record(history.param_snapshots[0], x)[0].weights[1, rows]
    second = sm.forward_record(history.param_snapshots[1], x)[0].weights[1, rows]
    distances = [0.5 * sum(abs(a - b) for a, b in zip(row_a, row_b, strict=True))
                 for row_a, row_b in zip(first.tolist(), second.tolist(), strict=True)]
    assert fp.attention_change[0, 1].item() == pytest.approx(
        sum(distances) / len(distances) / 5, rel=1e-10)
    v0, v1 = ((x[0] @ history.param_snapshots[k].w_v[0]).numpy() for k in (0, 1))
    assert fp.value_change[0, 0].item() == pytest.approx(
        np.linalg.norm(v1 - v0) / np.linalg.norm(v0) / 5, rel=1e-12)
    # the EM-like run's values move about ten times as far in the same steps
    assert fp.value_total[1] > 5 * fp.value_total[0]
    with pytest.raises(ValueError, match="steps"):
        ed.frame_precision(history.param_snapshots, history.snapshot_steps.flip(0), x, rows)


def test_settling_step():
    steps = torch.tensor([0, 10, 20, 30, 40])
    remaining = torch.tensor([[1.0, 1.0], [0.05, 0.6], [0.2, 0.4], [0.08, 0.3], [0.0, 0.0]],
                             dtype=F64)
    assert settling_step(steps, remaining, 0.1).tolist() == [30, 40]
    assert settling_step(steps, remaining, 0.5).tolist() == [10, 20]
    with pytest.raises(ValueError, match="level"):
        settling_step(steps, remaining, 1.5)



def test_jitter_aware_settling_step():
    """Run 0 ends jittering at up to 0.3 of its start's distance: settled from the first record
    within 0.3 (step 10), not at the last; run 1 ends still, so a tenth decides, and it enters
    that band only where the end window begins (step 30): it has not settled, and reads as its
    last step (40)."""
    steps = torch.tensor([0, 10, 20, 30, 40])
    remaining = torch.tensor([[1.0, 1.0], [0.3, 0.6], [0.25, 0.4], [0.3, 0.08], [0.1, 0.0]],
                             dtype=F64)
    in_end = torch.tensor([False, False, False, True, True])
    assert jitter_aware_settling_step(steps, remaining, in_end).tolist() == [10, 40]
    assert settling_step(steps, remaining, 0.1).tolist() == [40, 30]   # the jitter ignored
    with pytest.raises(ValueError, match="in_end"):
        jitter_aware_settling_step(steps, remaining, torch.zeros(5, dtype=torch.bool))

# ---- linear response and curvature ----

def _first_order_by_autograd(params, x):
    """The logits at uniform attention and their first-order change, by autograd: the value
    and the derivative of the logits along ``W_Q -> t W_Q`` at ``t = 0`` (the scores are linear
    in ``t``, and ``t = 0`` makes every causal row uniform)."""
    def logits_at(t):
        scaled = sm.HeadParams(w_q=t * params.w_q, w_k=params.w_k, w_v=params.w_v,
                               w_o=params.w_o)
        return sm.forward_record(scaled, x)[1]
    zero = torch.zeros((), dtype=F64)
    return torch.autograd.functional.jvp(logits_at, zero, torch.ones_like(zero))


def test_linear_response_is_the_first_order_expansion():
    base = sm.init_params([7], dtype=F64)
    x, _ = _batch(1, 60, seed=3)
    errors = []
    for scale in (1e-1, 1e-2, 1e-3):
        params = sm.HeadParams(w_q=base.w_q * scale, w_k=base.w_k, w_v=base.w_v, w_o=base.w_o)
        baseline, content = ed.linear_response_logits(params, x)
        logits = sm.forward_record(params, x)[1]
        actual = logits - baseline
        errors.append(((actual - content).norm() / actual.norm()).item())
        uniform, slope = _first_order_by_autograd(params, x)
        beyond = logits - uniform
        reference = ((beyond - slope).norm() / beyond.norm()).item()
        assert ed.linear_response_error(params, x).item() == pytest.approx(reference, rel=1e-9)
    assert errors[1] < errors[0] / 5 and errors[2] < errors[1] / 5  # O(scale) relative error
    assert ed.linear_response_error(base.map(lambda w: w * 3), x).item() > 10 * errors[0]
    frozen = sm.HeadParams(w_q=base.w_q * 0, w_k=base.w_k, w_v=base.w_v, w_o=base.w_o)
    baseline, content = ed.linear_response_logits(frozen, x)
    torch.testing.assert_close(baseline, sm.forward_record(frozen, x)[1], rtol=0, atol=1e-14)
    assert content.abs().max() == 0


def test_attention_uniformity():
    rows = torch.tensor([1, 3])
    uniform = torch.tensor([[[0.5, 0.5, 0.0, 0.0], [0.25] * 4]], dtype=F64)
    torch.testing.assert_close(ed.attention_uniformity(uniform, rows),
                               torch.ones(1, 2, dtype=F64), rtol=0, atol=1e-15)
    one_key = torch.tensor([[[0.0, 1.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]]], dtype=F64)
    # row 1: all on one key; row 3: uniform over 2 of its 4 keys, log 2 / log 4
    torch.testing.assert_close(ed.attention_uniformity(one_key, rows),
                               torch.tensor([[0.0, 0.5]], dtype=F64), rtol=0, atol=1e-15)
    params = sm.init_params([8], dtype=F64)
    x, _ = _batch(1, 30, seed=8)
    query_rows = torch.tensor([5, 17, 29])
    zero_routing = params.map(torch.clone)
    zero_routing.w_q.zero_()
    flat = ed.attention_uniformity(ed.attention_rows(zero_routing, x, query_rows), query_rows)
    sharp = ed.attention_uniformity(
        ed.attention_rows(params.map(lambda w: w * 10), x, query_rows), query_rows)
    torch.testing.assert_close(flat, torch.ones(1, 3, dtype=F64))
    assert (sharp < 0.9).all()
    with pytest.raises(ValueError, match="rows"):
        ed.attention_uniformity(uniform, torch.tensor([0, 3]))


def test_value_curvature_matches_the_autograd_hessian():
    params = sm.init_params([8, 9], dtype=F64).map(lambda w: w * 4)
    x, y = _batch(2, 25, seed=4)
    lam = ed.value_curvature(params, x)
    for r in range(2):
        run = params.select(r)

        def loss(w_v, run=run, r=r):
            logits = sm.forward_record(sm.HeadParams(run.w_q, run.w_k, w_v, run.w_o),
                                       x[r:r + 1])[1]
            return F.cross_entropy(logits[0], y[r])

        hessian = torch.autograd.functional.hessian(loss, run.w_v).reshape(300, 300)
        top = torch.linalg.eigvalsh(hessian)[-1]
        assert lam[r].item() == pytest.approx(top.item(), rel=1e-10)


def test_gradient_descent_on_values_alone_is_stable_below_the_edge_only():
    """The first-order edge 2 / lambda_max: a little below it a step on W_V alone stays put to
    first order near a minimum, well above it the loss blows up along the top direction."""
    params = sm.init_params([10], dtype=F64).map(lambda w: w * 3)
    x, y = _batch(1, 40, seed=5)
    # find W_V's minimiser with the rest held (convex problem), then measure the edge there
    w_v = params.w_v.clone().requires_grad_()
    optimizer = torch.optim.LBFGS([w_v], max_iter=500, tolerance_grad=1e-12,
                                  tolerance_change=1e-15, line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        value = sm.loss_and_grads(sm.HeadParams(params.w_q, params.w_k, w_v, params.w_o), x,
                                  y, with_grads=False).loss.sum()
        value.backward()
        return value

    optimizer.step(closure)
    at_min = sm.HeadParams(params.w_q, params.w_k, w_v.detach(), params.w_o)
    edge = 2 / ed.value_curvature(at_min, x).item()
    kick = at_min.map(torch.clone)
    kick.w_v += 1e-3 * torch.randn(kick.w_v.shape, generator=torch.Generator().manual_seed(0),
                                   dtype=F64)
    start = sm.loss_and_grads(kick, x, y, with_grads=False).loss.item()
    finals = []
    for factor in (0.9, 1.5):
        rates = {"w_q": 0.0, "w_k": 0.0, "w_v": factor * edge, "w_o": 0.0}
        finals.append(tr.train(kick, x, y, rates, steps=60).loss[-1].item())
    assert finals[0] <= start + 1e-9
    assert finals[1] > start + 1e-3


def test_relative_fall_sees_a_loss_that_still_falls_and_not_a_flat_one():
    steps = torch.arange(1000, dtype=torch.float64)
    falling = 2.0 - steps / 1000                       # still falls at the end
    flat = 1.0 + torch.exp(-steps / 50)                # flattened long before
    both = torch.stack([falling, flat], dim=1)
    fall = relative_fall(both)
    # windows: records 800-899 (mean 2 - 0.8495) and 900-999 (mean 2 - 0.9495)
    assert fall[0].item() == pytest.approx(0.1 / 1.1505, rel=1e-12)
    assert 0 <= fall[1].item() < 1e-7
    assert relative_fall(falling).shape == ()
    with pytest.raises(ValueError, match="fraction"):
        relative_fall(falling, fraction=0.6)
    with pytest.raises(ValueError, match="at least"):
        relative_fall(falling[:1])


def test_head_problem_is_the_runs_own_head_and_loss():
    params = sm.init_params([3, 4], dtype=torch.float64)
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(2, 30, 20, generator=generator, dtype=torch.float64)
    y = torch.randint(8, (2, 30), generator=generator)
    problem = ed.head_problem(params, x, y, run=1)
    _, loss = problem.forward_backward()
    expected = sm.loss_and_grads(params, x, y, with_grads=False).loss[1]
    torch.testing.assert_close(loss, expected)
    # gradients reach the problem's own leaves, not the batched weights
    assert problem.w_q.grad is not None and params.w_q.grad is None
    short = ed.head_problem(params, x, y, run=0, length=10)
    assert short.x.shape == (1, 1, 10, 20) and short.targets.shape == (1, 10)
    with pytest.raises(ValueError, match="run"):
        ed.head_problem(params, x, y, run=2)
    with pytest.raises(ValueError, match="length"):
        ed.head_problem(params, x, y, run=0, length=31)
