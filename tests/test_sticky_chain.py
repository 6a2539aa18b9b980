"""The sticky Markov chain task: its two constructions, the sampler and the Bayes reference."""

import math

import pytest
import torch

from attention_dynamics.bayes import entropy
from attention_dynamics.tasks import sticky_chain as sc


def _authors_rows(dtype):
    """The script's construction restated: weights, rescale to 0.7, add 0.3, renormalise."""
    n, c = 8, 0.3
    rows = []
    for i in range(n):
        w = torch.tensor([c if j == i else 1.0 / min(abs(i - j), n - abs(i - j))
                          for j in range(n)], dtype=dtype)
        w = w / w.sum() * (1 - c) + (torch.arange(n) == i).to(dtype) * c
        rows.append(w / w.sum())
    return torch.stack(rows)


@pytest.mark.parametrize("construction", sc.CONSTRUCTIONS)
def test_transition_matrix_is_stochastic_with_inverse_distance_jumps(construction):
    p = sc.transition_matrix(construction=construction)
    torch.testing.assert_close(p.sum(dim=1), torch.ones(8, dtype=torch.float64), rtol=0,
                               atol=1e-15)
    assert (p > 0).all()
    dist = sc.circular_distance()
    off = ~torch.eye(8, dtype=torch.bool)
    jump_times_distance = (p * dist)[off].view(8, 7)  # constant within a row: P_ij = c / d_ij
    torch.testing.assert_close(jump_times_distance, jump_times_distance[:, :1].expand(8, 7),
                               rtol=1e-14, atol=0)


def test_self_transition_probabilities():
    text = sc.transition_matrix(construction="text").diagonal()
    script = sc.transition_matrix(construction="script").diagonal()
    torch.testing.assert_close(text, torch.full((8,), 0.3, dtype=torch.float64), rtol=0,
                               atol=1e-15)
    realised = 0.3 + 0.7 * 0.3 / (0.3 + 47 / 12)  # 0.3 counted twice, see the docstring
    torch.testing.assert_close(script, torch.full((8,), realised, dtype=torch.float64),
                               rtol=0, atol=1e-15)
    assert realised == pytest.approx(0.349802, abs=1e-6)


def test_script_construction_matches_the_authors():
    torch.testing.assert_close(sc.transition_matrix(), _authors_rows(torch.float64), rtol=0,
                               atol=1e-15)
    torch.testing.assert_close(sc.transition_matrix(dtype=torch.float32),
                               _authors_rows(torch.float32), rtol=0, atol=1e-7)


def test_stationary_distribution_and_lower_bound():
    for construction in sc.CONSTRUCTIONS:
        p = sc.transition_matrix(construction=construction)
        pi = sc.stationary_distribution(p)
        torch.testing.assert_close(pi, torch.full((8,), 1 / 8, dtype=torch.float64), rtol=0,
                                   atol=1e-14)
        # the authors' formula: the plain mean of the row entropies
        assert sc.conditional_entropy(p) == pytest.approx(entropy(p).mean().item(), abs=1e-14)
    assert sc.conditional_entropy(sc.transition_matrix()) == pytest.approx(1.829188059467,
                                                                            abs=1e-11)
    lazy = torch.tensor([[0.9, 0.1], [0.3, 0.7]], dtype=torch.float64)
    torch.testing.assert_close(sc.stationary_distribution(lazy),
                               torch.tensor([0.75, 0.25], dtype=torch.float64))


def test_symbol_means_are_the_authors_seed_zero_draws():
    with torch.random.fork_rng():
        torch.manual_seed(0)
        expected = torch.randn(8, 20)
    assert torch.equal(sc.symbol_means(dtype=torch.float32), expected)
    assert torch.equal(sc.symbol_means(), expected.double())


def test_sampler_reproduces_the_authors_draws():
    """Their script after torch.manual_seed(seed), on the CPU, with the global generator."""
    seed, length = 42, 300
    p32, mu = sc.transition_matrix(dtype=torch.float32), sc.symbol_means(dtype=torch.float32)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        chain = [torch.randint(8, (1,)).item()]
        for _ in range(length - 1):
            chain.append(torch.multinomial(p32[chain[-1]], 1).item())
        chain = torch.tensor(chain)
        inputs = mu[chain[:-1]] + torch.randn(length - 1, 20)
    data = sc.sample_sticky_chain(length, torch.Generator().manual_seed(seed))
    assert torch.equal(data.symbols, chain)
    assert torch.equal(data.targets, chain[1:])
    torch.testing.assert_close(data.inputs, inputs, rtol=0, atol=1e-6)


def test_sampler_shapes_dtype_and_determinism():
    data = sc.sample_sticky_chain(50, torch.Generator().manual_seed(1), batch_size=3,
                                  dtype=torch.float64)
    assert data.symbols.shape == (3, 50) and data.targets.shape == (3, 49)
    assert data.inputs.shape == (3, 49, 20) and data.inputs.dtype == torch.float64
    again = sc.sample_sticky_chain(50, torch.Generator().manual_seed(1), batch_size=3)
    assert torch.equal(again.symbols, data.symbols)
    torch.testing.assert_close(again.inputs.double(), data.inputs, rtol=0, atol=1e-6)


def test_sampler_statistics():
    p = sc.transition_matrix()
    data = sc.sample_sticky_chain(2000, torch.Generator().manual_seed(2), batch_size=50)
    prev, nxt = data.symbols[:, :-1].flatten(), data.symbols[:, 1:].flatten()
    counts = torch.zeros(8, 8, dtype=torch.float64).index_put_((prev, nxt),
                                                              torch.ones(prev.numel(),
                                                                         dtype=torch.float64),
                                                              accumulate=True)
    visits = counts.sum(dim=1, keepdim=True)
    standard_error = (p * (1 - p) / visits).sqrt()
    # 4 standard errors: the text construction (self-probability 0.30, not 0.35) fails this
    assert ((counts / visits - p).abs() < 4 * standard_error).all()
    noise = data.inputs.double() - data.means[data.symbols[:, :-1]]
    assert noise.mean().abs() < 4 / math.sqrt(noise.numel())
    assert (noise.var() - 1).abs() < 4 * math.sqrt(2 / noise.numel())


def test_bayes_predictive_basic_properties():
    data = sc.sample_sticky_chain(400, torch.Generator().manual_seed(3), batch_size=4)
    log_pred = sc.bayes_log_predictive(data.inputs, data.transition, data.means)
    assert log_pred.shape == (4, 399, 8) and log_pred.dtype == torch.float64
    torch.testing.assert_close(log_pred.exp().sum(-1), torch.ones(4, 399, dtype=torch.float64),
                               rtol=0, atol=1e-13)
    # every row of P has the same entropy, and entropy is concave: a mixture of rows has more
    bound = sc.conditional_entropy(data.transition)
    assert (entropy(log_pred.exp()) >= bound - 1e-12).all()


def test_bayes_predictive_limits():
    data = sc.sample_sticky_chain(200, torch.Generator().manual_seed(4), batch_size=2,
                                  dtype=torch.float64)
    blind = sc.bayes_log_predictive(data.inputs, data.transition, torch.zeros(8, 20))
    torch.testing.assert_close(blind, torch.full_like(blind, -math.log(8)), rtol=0, atol=1e-13)
    sharp = sc.sample_sticky_chain(200, torch.Generator().manual_seed(4), batch_size=2,
                                   noise_std=1e-3, dtype=torch.float64)
    log_pred = sc.bayes_log_predictive(sharp.inputs, sharp.transition, sharp.means, 1e-3)
    oracle = sharp.transition[sharp.symbols[:, :-1]].log()  # knows y_{t-1}
    torch.testing.assert_close(log_pred, oracle, rtol=0, atol=1e-12)


def test_bayes_reference_is_calibrated_and_beats_misspecified_filters():
    data = sc.sample_sticky_chain(200, torch.Generator().manual_seed(5), batch_size=200,
                                  noise_std=2.0, dtype=torch.float64)  # noisy: history matters
    log_pred = sc.bayes_log_predictive(data.inputs, data.transition, data.means, 2.0)
    nll = -log_pred.gather(-1, data.targets.unsqueeze(-1)).squeeze(-1)
    surprise = nll - entropy(log_pred.exp())  # mean 0 exactly under the true model
    assert surprise.mean().abs() < 4 * surprise.std() / math.sqrt(surprise.numel())
    bound = sc.conditional_entropy(data.transition)
    assert nll.mean() > bound - 4 * nll.std() / math.sqrt(nll.numel())
    assert nll.mean() < math.log(8) - 0.05  # well below the model-free baseline
    for transition, noise_std in ((sc.transition_matrix(construction="text"), 2.0),
                                  (data.transition, 1.0)):
        wrong = sc.bayes_log_predictive(data.inputs, transition, data.means, noise_std)
        wrong_nll = -wrong.gather(-1, data.targets.unsqueeze(-1)).squeeze(-1)
        gap = wrong_nll - nll
        assert gap.mean() > 4 * gap.std() / math.sqrt(gap.numel())


def test_bayes_reference_numbers_for_seed_42():
    ref = sc.bayes_reference(sc.sample_sticky_chain(2000, torch.Generator().manual_seed(42)))
    assert ref.lower_bound == pytest.approx(1.829188059467, abs=1e-11)
    assert ref.cross_entropy.item() == pytest.approx(1.841189, abs=1e-5)
    assert ref.predictive_entropy.item() == pytest.approx(1.835217, abs=1e-5)
    assert ref.predictive_entropy.item() > ref.lower_bound


@pytest.mark.parametrize("call, name", [
    (lambda: sc.transition_matrix(construction="paper"), "construction"),
    (lambda: sc.sample_sticky_chain(1, torch.Generator()), "T"),
    (lambda: sc.sample_sticky_chain(5, torch.Generator(), batch_size=0), "batch_size"),
    (lambda: sc.sample_sticky_chain(5, torch.Generator(), means=torch.zeros(7, 20)),
     "transition"),
    (lambda: sc.bayes_log_predictive(torch.zeros(5, 3), sc.transition_matrix(),
                                     sc.symbol_means()), "means"),
])
def test_bad_arguments_name_themselves(call, name):
    with pytest.raises(ValueError, match=name):
        call()
