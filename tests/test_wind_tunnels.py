"""The wind-tunnel tasks: exact posteriors against brute-force enumeration, and the samplers."""

import itertools
import math

import pytest
import torch

from attention_dynamics.tasks.base import IGNORE_INDEX
from attention_dynamics.tasks.bijection import (
    BijectionTask,
    mean_entropy_gap_of_marginal,
    random_permutations,
)
from attention_dynamics.tasks.hmm_filtering import HMMFilteringTask


def _bijection_posterior_by_enumeration(n_symbols, keys, values):
    """``p(pi(k_i) = y | pairs before i)`` for one sequence, by counting consistent bijections."""
    perms = torch.tensor(list(itertools.permutations(range(n_symbols))))  # (V!, V)
    posterior = torch.zeros(len(keys), n_symbols, dtype=torch.float64)
    consistent = torch.ones(len(perms), dtype=torch.bool)
    for i, (key, value) in enumerate(zip(keys.tolist(), values.tolist(), strict=True)):
        counts = torch.bincount(perms[consistent, key], minlength=n_symbols).double()
        posterior[i] = counts / counts.sum()
        consistent &= perms[:, key] == value
    return posterior


@pytest.mark.parametrize("n_symbols, n_pairs, with_replacement",
                         [(2, None, False), (4, None, False), (5, 3, False), (5, None, False),
                          (3, 7, True), (5, 8, True)])
def test_bijection_posterior_matches_enumeration(n_symbols, n_pairs, with_replacement):
    task = BijectionTask(n_symbols, n_pairs, with_replacement=with_replacement)
    batch = task.sample(6, torch.Generator().manual_seed(n_symbols))
    V = n_symbols
    for b in range(6):
        expected = _bijection_posterior_by_enumeration(V, batch.keys[b], batch.values[b])
        torch.testing.assert_close(batch.bayes_predictive[b, 0::2, V:], expected, rtol=0,
                                   atol=1e-12)
        exact_entropy = -(torch.special.xlogy(expected, expected)).sum(-1) / math.log(2)
        torch.testing.assert_close(batch.bayes_entropy_bits[b, 0::2], exact_entropy, rtol=0,
                                   atol=1e-12)


def test_bijection_entropy_curve_and_sawtooth():
    task = BijectionTask(6)
    batch = task.sample(5, torch.Generator().manual_seed(0))
    curve = torch.tensor([math.log2(6 - i) for i in range(6)], dtype=torch.float64)
    torch.testing.assert_close(task.bayes_entropy_curve(), curve)
    torch.testing.assert_close(batch.bayes_entropy_bits[:, 0::2], curve.expand(5, -1))
    with_repl = BijectionTask(6, 12, with_replacement=True).sample(50, torch.Generator().manual_seed(1))
    keys = with_repl.keys
    repeated = (keys[:, :, None] == keys[:, None, :]).tril(-1).any(-1)
    entropy = with_repl.bayes_entropy_bits[:, 0::2]
    assert repeated.any() and (~repeated).any()
    assert torch.all(entropy[repeated] == 0)
    distinct_before = torch.tensor([[len(set(row[:i].tolist())) for i in range(12)] for row in keys])
    torch.testing.assert_close(entropy[~repeated], (6 - distinct_before[~repeated]).double().log2())


def test_bijection_samples_are_valid_and_do_not_leak():
    task = BijectionTask(7)
    batch = task.sample(64, torch.Generator().manual_seed(2))
    V = 7
    assert torch.equal(batch.bijections.sort(1).values, torch.arange(V).expand(64, -1))
    assert torch.equal(batch.keys.sort(1).values, torch.arange(V).expand(64, -1))
    assert torch.equal(batch.values, batch.bijections.gather(1, batch.keys))
    assert batch.tokens.shape == (64, task.seq_len) and batch.tokens.dtype == torch.int64
    assert torch.equal(batch.tokens[:, 0::2], batch.keys)
    assert torch.equal(batch.tokens[:, 1::2], batch.values[:, :-1] + V)
    assert torch.equal(batch.mask[0], torch.arange(task.seq_len) % 2 == 0)
    assert torch.all(batch.targets[:, 1::2] == IGNORE_INDEX)
    for t in task.query_positions.tolist():
        # the answer at a key position is never among the tokens up to and including it
        assert not (batch.tokens[:, :t + 1] == batch.targets[:, t:t + 1]).any()
    torch.testing.assert_close(batch.bayes_predictive[:, 0::2].sum(-1),
                               torch.ones(64, V, dtype=torch.float64))
    assert torch.all(batch.bayes_predictive[:, 0::2, :V] == 0)  # no mass on key tokens


def test_random_permutations_are_uniform_and_seeded():
    perms = random_permutations(6000, 3, torch.Generator().manual_seed(0))
    counts = torch.unique(perms, dim=0, return_counts=True)[1]
    assert len(counts) == 6 and counts.min() > 900 and counts.max() < 1100
    again = random_permutations(6000, 3, torch.Generator().manual_seed(0))
    assert torch.equal(perms, again)


def test_bijection_bad_arguments():
    with pytest.raises(ValueError, match="n_symbols"):
        BijectionTask(1)
    with pytest.raises(ValueError, match="n_pairs.*<= n_symbols=4"):
        BijectionTask(4, 5)
    with pytest.raises(ValueError, match="batch_size"):
        BijectionTask(4).sample(0, torch.Generator())
    with pytest.raises(ValueError, match="with_replacement"):
        BijectionTask(4, 6, with_replacement=True).bayes_entropy_curve()


def test_marginal_gap_formula():
    for V in (2, 5, 10):
        expected = sum(math.log2(V) - math.log2(V - i) for i in range(V)) / V
        assert mean_entropy_gap_of_marginal(V) == pytest.approx(expected, abs=1e-12)


def _hmm_posterior_by_enumeration(transition, emission, observations):
    """Filtered ``p(s_t | o_1..o_t)`` for one HMM by summing over every state path."""
    S, K = transition.shape[0], len(observations)
    posterior = torch.zeros(K, S, dtype=torch.float64)
    for t in range(K):
        for path in itertools.product(range(S), repeat=t + 1):
            p = emission[path[0], observations[0]] / S
            for step in range(1, t + 1):
                p = p * transition[path[step - 1], path[step]] * emission[path[step], observations[step]]
            posterior[t, path[-1]] += p
    return posterior / posterior.sum(-1, keepdim=True)


@pytest.mark.parametrize("n_states, n_symbols, length", [(2, 3, 6), (3, 2, 5), (5, 5, 4)])
def test_hmm_posterior_matches_enumeration(n_states, n_symbols, length):
    task = HMMFilteringTask(n_states, n_symbols, n_observations=length)
    batch = task.sample(3, torch.Generator().manual_seed(n_states))
    for b in range(3):
        expected = _hmm_posterior_by_enumeration(batch.transition[b], batch.emission[b],
                                                 batch.observations[b].tolist())
        torch.testing.assert_close(batch.posterior[b], expected, rtol=0, atol=1e-12)
        scored = task.query_positions
        torch.testing.assert_close(batch.bayes_predictive[b][scored][:, task.state_tokens],
                                   expected, rtol=0, atol=1e-12)
        exact_entropy = -(torch.special.xlogy(expected, expected)).sum(-1) / math.log(2)
        torch.testing.assert_close(batch.bayes_entropy_bits[b, scored], exact_entropy, rtol=0,
                                   atol=1e-12)


def test_hmm_matrices_are_stochastic_on_the_grid():
    task = HMMFilteringTask(5, 4, n_observations=8)
    batch = task.sample(500, torch.Generator().manual_seed(3))
    for matrix in (batch.transition, batch.emission):
        torch.testing.assert_close(matrix.sum(-1), torch.ones(matrix.shape[:-1], dtype=torch.float64))
        assert matrix.min() >= task.floor - 1e-12
        units = (matrix - task.floor) / task.resolution
        torch.testing.assert_close(units, units.round(), rtol=0, atol=1e-9)
    # Dirichlet(1) rows are exchangeable: every entry has mean 1/n
    torch.testing.assert_close(batch.transition.mean((0, 1)), torch.full((5,), 0.2, dtype=torch.float64),
                               rtol=0, atol=0.01)
    decoded = task.prompt_matrices(batch.tokens)
    torch.testing.assert_close(decoded[0], batch.transition, rtol=0, atol=1e-12)
    torch.testing.assert_close(decoded[1], batch.emission, rtol=0, atol=1e-12)


def test_hmm_sampler_follows_the_matrices_and_does_not_leak():
    task = HMMFilteringTask(3, 3, n_observations=6)
    n = 10000
    batch = task.sample(n, torch.Generator().manual_seed(4))
    rows = torch.arange(n)
    # E[1(s_2 = j) - A(s_1, j)] = 0 and E[1(o_1 = y) - E(s_1, y)] = 0 for the right sampler
    step = torch.nn.functional.one_hot(batch.states[:, 1], 3) - batch.transition[rows, batch.states[:, 0]]
    emit = torch.nn.functional.one_hot(batch.observations[:, 0], 3) - batch.emission[rows, batch.states[:, 0]]
    assert step.mean(0).abs().max() < 0.02 and emit.mean(0).abs().max() < 0.02
    assert torch.bincount(batch.states[:, 0], minlength=3).min() > n / 3 - 300
    assert not torch.isin(batch.tokens, task.state_tokens).any()
    assert torch.equal(batch.tokens[:, task.query_positions], task.symbol_tokens[batch.observations])
    assert torch.equal(batch.mask[0], torch.arange(task.seq_len) >= task.prompt_length)
    assert torch.equal(batch.targets[:, task.query_positions], task.state_tokens[batch.states])
    assert batch.tokens.max() < task.vocab_size and batch.tokens.min() >= 0


def test_hmm_is_seeded():
    task = HMMFilteringTask(n_observations=5)
    a = task.sample(4, torch.Generator().manual_seed(9))
    b = task.sample(4, torch.Generator().manual_seed(9))
    assert torch.equal(a.tokens, b.tokens) and torch.equal(a.posterior, b.posterior)


def test_hmm_bad_arguments():
    with pytest.raises(ValueError, match="n_states"):
        HMMFilteringTask(1)
    with pytest.raises(ValueError, match="n_observations"):
        HMMFilteringTask(n_observations=0)
    with pytest.raises(ValueError, match="floor"):
        HMMFilteringTask(5, floor=0.25)
    with pytest.raises(ValueError, match="whole grid steps"):
        HMMFilteringTask(5, resolution=0.03)
    with pytest.raises(ValueError, match="prompt_length"):
        HMMFilteringTask(5).prompt_matrices(torch.zeros(2, 10, dtype=torch.long))
