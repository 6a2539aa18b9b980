"""The benchmark helpers compute what they time."""

import torch

from attention_dynamics.benchmarking import _loop_sampler_and_filter, routing_diagnostics
from attention_dynamics.problems import sample_head_problem
from attention_dynamics.tasks.sticky_chain import (
    bayes_log_predictive,
    symbol_means,
    transition_matrix,
)


def test_routing_diagnostics_match_autograd():
    problem = sample_head_problem(torch.Generator().manual_seed(0), 2, 2, 9, 5, 4, 3)
    record, _ = problem.forward_backward(retain=("scores", "v"))
    diag = routing_diagnostics(record, record.upstream)
    assert (diag["score_grad"] - record.scores.grad.masked_fill(~record.mask, 0)).abs().max() < 1e-12
    assert (diag["value_grad"] - record.v.grad).abs().max() < 1e-12


def test_loop_baseline_computes_the_same_predictive():
    """The baseline's filter agrees with the library's on the baseline's own sequences."""
    import numpy as np

    transition, means = transition_matrix(), symbol_means().double()
    rng = np.random.default_rng(3)
    predictive = _loop_sampler_and_filter(transition.numpy(), means.numpy(), 30, 2, rng)
    assert predictive.shape == (2, 29, 8)
    assert np.allclose(predictive.sum(-1), 1.0)
    # replay the same draws to recover the inputs, then filter them with the library
    rng = np.random.default_rng(3)
    for n in range(2):
        symbols = [int(rng.integers(8))]
        for _ in range(29):
            symbols.append(int(rng.choice(8, p=transition.numpy()[symbols[-1]])))
        inputs = means.numpy()[symbols[:-1]] + rng.standard_normal((29, 20))
        ours = bayes_log_predictive(torch.from_numpy(inputs), transition, means, 1.0).exp()
        assert np.allclose(ours.numpy(), predictive[n], atol=1e-10)
