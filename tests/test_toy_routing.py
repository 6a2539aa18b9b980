"""The toy routing problem of chapter 2: generator, model, closed-form upstream, trainer, recorder."""

import pytest
import torch

from attention_dynamics.gradients import cross_entropy_hvp, cross_entropy_upstream
from attention_dynamics.measures.specialization import (
    predicted_value_step,
    prototype_specialization,
    value_predictions,
)
from attention_dynamics.measures.trajectories import TrajectoryRecorder
from attention_dynamics.toy_routing import (
    CONDITIONS,
    EXTRA_CONDITIONS,
    ToyConfig,
    condition_masks,
    coupled_margin,
    init_toy_routing,
    run_ablation,
    sample_grouped_queries,
    toy_forward,
    train_toy_routing,
)

F64 = torch.float64
SMALL = ToyConfig(n_per_group=8, steps=30, record_every=10)


def _problem(seed=0, runs=2, slot_inputs=None):
    gen = torch.Generator().manual_seed(seed)
    queries = sample_grouped_queries(gen, runs, 3, 10, 5, separation=2.0)
    model = init_toy_routing(gen, runs, 5, 4, 6, 3, slot_inputs=slot_inputs)
    return queries, model


def test_grouped_queries_shapes_groups_and_determinism():
    gen = torch.Generator().manual_seed(1)
    q = sample_grouped_queries(gen, 4, 3, 50, 6, separation=5.0, noise=0.0)
    assert q.x.shape == (4, 150, 6) and q.means.shape == (4, 3, 6)
    assert torch.equal(torch.bincount(q.groups), torch.tensor([50, 50, 50]))
    assert torch.equal(q.targets, q.groups)
    assert torch.allclose(q.means.norm(dim=-1), torch.full((4, 3), 5.0, dtype=F64))
    assert torch.allclose(q.x, q.means[:, q.groups])  # noise 0: every query on its centre
    again = sample_grouped_queries(torch.Generator().manual_seed(1), 4, 3, 50, 6, 5.0, 0.0)
    assert torch.equal(q.x, again.x)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.func.jvp scripts decompositions
def test_closed_form_upstream_and_its_hessian_match_autograd():
    queries, model = _problem()
    model = model.detached()
    fwd = toy_forward(model, queries)
    logits = fwd.logits.detach()
    u = cross_entropy_upstream(logits, queries.targets, model.readout)
    grad = torch.autograd.grad(fwd.loss.sum(), fwd.output)[0]
    assert (u - grad).abs().max() < 1e-15

    def upstream_of(output):
        return cross_entropy_upstream(output @ model.readout, queries.targets, model.readout)

    direction = torch.randn(fwd.output.shape, dtype=F64, generator=torch.Generator().manual_seed(2))
    _, jvp = torch.func.jvp(upstream_of, (fwd.output.detach(),), (direction,))
    assert (cross_entropy_hvp(logits, model.readout, direction) - jvp).abs().max() < 1e-15


def test_one_sgd_step_of_the_toy_on_free_values_equals_the_identity():
    queries, model = _problem(3, runs=3)
    lr = 0.7
    fwd = toy_forward(model, queries)
    u = cross_entropy_upstream(fwd.logits.detach(), queries.targets, model.readout)
    before = model.values.detach().clone()
    optimizer = torch.optim.SGD([model.values], lr=lr)
    fwd.loss.sum().backward()
    optimizer.step()
    step = predicted_value_step(fwd.weights.detach(), u, lr)
    assert (model.values.detach() - before - step).abs().max() < 1e-13


def test_w_v_form_step_goes_through_the_slot_inputs():
    z = torch.randn(6, 4, dtype=F64, generator=torch.Generator().manual_seed(4))
    queries, model = _problem(4, runs=2, slot_inputs=z)
    assert model.values is None and model.w_v.shape == (2, 4, 3)
    lr = 0.3
    fwd = toy_forward(model, queries)
    u = cross_entropy_upstream(fwd.logits.detach(), queries.targets, model.readout)
    v_before = model.value_vectors().detach()
    trained = train_toy_routing(model, queries, 1, lr_routing=0.0, lr_values=lr)
    step = predicted_value_step(fwd.weights.detach(), u, lr, inputs=z, w_v_shape=model.w_v.shape)
    assert (trained.value_vectors().detach() - v_before - step).abs().max() < 1e-13


def test_training_lowers_the_loss_and_frozen_parts_stay_put():
    queries, model = _problem(5, runs=3)
    routing, values = condition_masks(CONDITIONS)
    start = toy_forward(model, queries).loss.detach()
    trained = train_toy_routing(model, queries, 40, 0.5, 0.5, routing, values)
    end = toy_forward(trained, queries).loss.detach()
    assert end[0] < start[0] - 0.1  # coupled learns
    assert torch.equal(trained.w_q[1], model.w_q[1]) and torch.equal(trained.keys[1], model.keys[1])
    assert torch.equal(trained.values[2], model.values[2])
    assert not torch.equal(trained.values[1], model.values[1])
    assert not torch.equal(trained.w_q[2], model.w_q[2])
    assert torch.equal(model.values.detach(), _problem(5, runs=3)[1].values.detach())  # input unchanged


def test_runs_do_not_interact():
    queries, model = _problem(6, runs=2)
    both = train_toy_routing(model, queries, 15, 0.5, 0.5)
    alone = train_toy_routing(model.repeat_runs(1), queries, 15, 0.5, 0.5)
    assert torch.allclose(both.values, alone.values, atol=1e-14)
    from dataclasses import replace
    first = replace(model, w_q=model.w_q[:1], keys=model.keys[:1], values=model.values[:1])
    single = train_toy_routing(first, replace(queries, x=queries.x[:1], means=queries.means[:1]),
                               15, 0.5, 0.5)
    assert torch.allclose(single.values[0], both.values[0], atol=1e-13)


def test_recorder_keeps_clones_at_the_requested_steps():
    rec = TrajectoryRecorder(every=3)
    t = torch.zeros(2)
    for step in range(8):
        rec.maybe_record(step, t=t)
        t += 1
    assert rec.steps == [0, 3, 6]
    assert torch.equal(rec.stack("t")[:, 0], torch.tensor([0.0, 3.0, 6.0]))
    with pytest.raises(ValueError, match="step"):
        rec.record(5, t=t)
    with pytest.raises(ValueError, match="same names"):
        rec.record(9, other=t)
    with pytest.raises(ValueError, match="name"):
        rec.stack("missing")
    with pytest.raises(ValueError, match="every"):
        TrajectoryRecorder(every=0)


def test_trainer_records_first_and_last_state():
    queries, model = _problem(7)
    rec = TrajectoryRecorder(every=4)
    trained = train_toy_routing(model, queries, 10, 0.5, 0.5, recorder=rec)
    assert rec.steps == [0, 4, 8, 10]
    assert torch.allclose(rec.stack("values")[0], model.values)
    assert torch.allclose(rec.stack("values")[-1], trained.values)
    assert rec.stack("weights").shape == (4, 2, 30, 6)


def test_ablation_starts_every_condition_from_the_same_head_and_is_reproducible():
    conditions = CONDITIONS + EXTRA_CONDITIONS
    run = run_ablation(SMALL, [3, 4], conditions)
    assert run.weights.shape == (4, 2, 4, 24, 6) and run.loss.shape == (4, 2, 4)
    for c in (1, 2):
        assert torch.equal(run.weights[0, :, c], run.weights[0, :, 0])
        assert torch.equal(run.values[0, :, c], run.values[0, :, 0])
    assert torch.equal(run.values[:, :, run.condition("frozen_values")],
                       run.values[:1, :, run.condition("frozen_values")].expand(4, -1, -1, -1))
    uniform = run.weights[:, :, run.condition("uniform_routing")]
    assert torch.allclose(uniform, torch.full_like(uniform, 1 / 6))
    spec = prototype_specialization(run.weights, run.queries.groups, 3, value_predictions(run.values))
    assert spec[:, :, 3].abs().max() < 1e-12  # values alone cannot specialize under uniform routing
    again = run_ablation(SMALL, [4], conditions)
    assert torch.equal(again.values[:, 0], run.values[:, 1])  # a replicate ignores the other seeds


def test_coupled_margin():
    scores = torch.tensor([[0.9, 0.5, 0.7], [0.4, 0.6, 0.1]], dtype=F64)  # (K, C), CONDITIONS
    torch.testing.assert_close(coupled_margin(scores), torch.tensor([0.2, -0.2], dtype=F64))
    # the conditions may come in any order, with extra ones, which do not count
    reordered = torch.tensor([[0.7, 5.0, 0.9, 0.5]], dtype=F64)
    order = ("frozen_values", "uniform_routing", "coupled", "frozen_routing")
    torch.testing.assert_close(coupled_margin(reordered, order), torch.tensor([0.2], dtype=F64))
    with pytest.raises(ValueError, match="conditions"):
        coupled_margin(scores, ("coupled", "frozen_routing", "uniform_routing"))
    with pytest.raises(ValueError, match="conditions"):
        coupled_margin(scores[:, :2])


def test_bad_inputs_name_the_argument():
    gen = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match="n_groups"):
        sample_grouped_queries(gen, 1, 1, 5, 3)
    with pytest.raises(ValueError, match="separation"):
        sample_grouped_queries(gen, 1, 2, 5, 3, separation=-1.0)
    with pytest.raises(ValueError, match="generator"):
        sample_grouped_queries(0, 1, 2, 5, 3)
    with pytest.raises(ValueError, match="readout"):
        init_toy_routing(gen, 1, 3, 2, 4, 3, readout=torch.eye(2, dtype=F64))
    with pytest.raises(ValueError, match="slot_inputs"):
        init_toy_routing(gen, 1, 3, 2, 4, 3, slot_inputs=torch.zeros(5, 2, dtype=F64))
    with pytest.raises(ValueError, match="conditions"):
        condition_masks(["coupled", "frozen_keys"])
    with pytest.raises(ValueError, match="steps"):
        ToyConfig(steps=0)
    with pytest.raises(ValueError, match="seeds"):
        run_ablation(SMALL, [])
    with pytest.raises(ValueError, match="config"):
        run_ablation({"steps": 3}, [0])
    queries, model = _problem()
    with pytest.raises(ValueError, match="train_values"):
        train_toy_routing(model, queries, 2, 0.1, 0.1, train_values=torch.ones(5))
    with pytest.raises(ValueError, match="targets"):
        cross_entropy_upstream(torch.zeros(4, 3, dtype=F64), torch.zeros(4), torch.eye(3, dtype=F64))


def test_an_ablation_run_moves_to_a_device_unchanged():
    run = run_ablation(SMALL, [1], CONDITIONS)
    moved = run.to("cpu")
    assert torch.equal(moved.weights, run.weights) and torch.equal(moved.queries.x, run.queries.x)
    assert moved.conditions == run.conditions and moved.seeds == run.seeds


# ---- the chapter's notebook, executed by the book build (slow) ----

@pytest.mark.slow
def test_notebook_records_the_coupled_versus_ablation_comparison(results):
    content = results["value_update"]
    metrics = content["metrics"]
    for name in ("value_update_max_abs_error", "specialization_coupled",
                 "specialization_frozen_routing", "specialization_frozen_values"):
        assert name in metrics, name
    assert metrics["value_update_max_abs_error"] < 1e-12
    assert metrics["value_update_projected_max_abs_error"] < 1e-12
    assert metrics["n_seeds"] >= 5
    assert 0 <= metrics["specialization_frozen_routing"] < metrics["specialization_coupled"] <= 1
    assert 0 <= metrics["specialization_frozen_values"] < metrics["specialization_coupled"]
    assert metrics["specialization_uniform_routing_max_abs"] < 1e-12
    assert metrics["advantage_first_order_rel_error"] < 1e-4
    assert content["profile"] == "quick"


@pytest.mark.slow
def test_chapter_two_page_shows_the_notebook_numbers_and_figures(built_book, results):
    metrics = results["value_update"]["metrics"]
    page = (built_book / "html" / "book" / "value_update.html").read_text()
    for name in ("specialization_coupled", "specialization_frozen_routing",
                 "specialization_frozen_values"):
        assert f"{metrics[name]:.3f}" in page, name
    assert f"{metrics['value_update_max_abs_error']:.1e}" in page
    for figure in ("fig_value_trajectories", "fig_value_responsibility", "fig_value_specialization",
                   "fig_value_feedback", "fig_value_init_sweep"):
        assert f"{figure}.png" in page, figure
