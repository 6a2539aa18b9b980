"""The block-coordinate baseline of chapter 3: values solved exactly, checked in float64."""

import torch

from attention_dynamics.sticky import model as sm
from attention_dynamics.sticky import training as tr
from attention_dynamics.sticky.exact_values import attended_inputs, solve_values, values_loss


def _problem(n_runs=2, length=400, seed=0):
    # random classes at 400 positions: not separable, so each run's loss has a minimiser
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n_runs, length, 20, generator=generator, dtype=torch.float64)
    y = torch.randint(8, (n_runs, length), generator=generator)
    params = sm.init_params(list(range(1, n_runs + 1)), dtype=torch.float64)
    return params.map(lambda w: w * 5), x, y


def test_attended_inputs_are_the_attention_weighted_inputs():
    params, x, _ = _problem()
    record, _ = sm.forward_record(params, x)
    torch.testing.assert_close(attended_inputs(params, x), record.weights @ x)


def test_values_loss_is_the_models_loss():
    params, x, y = _problem()
    expected = sm.loss_and_grads(params, x, y, with_grads=False).loss
    got = values_loss(params.w_v, attended_inputs(params, x), params.w_o, y)
    torch.testing.assert_close(got, expected)


def test_solved_values_are_each_runs_minimiser():
    params, x, y = _problem()
    solved = params.map(torch.clone)
    solved.w_v = solve_values(params, x, y, iterations=200)
    result = sm.loss_and_grads(solved, x, y)
    before = sm.loss_and_grads(params, x, y, with_grads=False).loss
    assert (result.loss < before - 0.05).all()
    # stationary in W_V (the model's own gradient), and no perturbation does better
    assert result.grads.w_v.abs().max() < 1e-5  # from 0.3 before the solve
    generator = torch.Generator().manual_seed(3)
    for _ in range(10):
        nudged = solved.map(torch.clone)
        nudged.w_v = solved.w_v + 1e-2 * torch.randn(solved.w_v.shape, generator=generator,
                                                     dtype=torch.float64)
        assert (sm.loss_and_grads(nudged, x, y, with_grads=False).loss > result.loss).all()


def test_exact_values_training_keeps_the_values_optimal_and_beats_sgd():
    params, x, y = _problem(seed=5)
    params = sm.init_params([1, 2], dtype=torch.float64)
    steps = 5
    exact = tr.train(params, x, y, "sgd", steps, optimizer="exact-values", value_iterations=200)
    plain = tr.train(params, x, y, "sgd", steps)
    after = sm.loss_and_grads(exact.final_params, x, y)
    assert after.grads.w_v.abs().max() < 1e-5  # vs gradients of order 1e-2 before a solve
    # the routing and readout took the same kind of step; the values went all the way
    assert (exact.loss[-1] < plain.loss[-1]).all()
    assert (exact.loss[1:] <= exact.loss[0]).all()
