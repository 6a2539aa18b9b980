"""Entropy and the HMM forward filter against hand values and brute-force enumeration."""

import itertools
import math

import pytest
import torch

from attention_dynamics.bayes import entropy, forward_filter, predict_next


def test_entropy_hand_values():
    probs = torch.tensor([[0.5, 0.5, 0.0, 0.0], [0.25] * 4, [1.0, 0.0, 0.0, 0.0]],
                         dtype=torch.float64)
    assert entropy(probs, unit="bits").tolist() == [1.0, 2.0, 0.0]
    torch.testing.assert_close(entropy(probs), torch.tensor([math.log(2), math.log(4), 0.0],
                                                            dtype=torch.float64))


def test_entropy_dim_and_bad_arguments():
    probs = torch.tensor([[0.5, 0.25], [0.5, 0.75]], dtype=torch.float64)
    expected = -(0.5 * math.log(0.5) + 0.5 * math.log(0.5))
    assert entropy(probs, dim=0)[0].item() == pytest.approx(expected, abs=1e-15)
    with pytest.raises(ValueError, match="unit.*'nats', 'bits'"):
        entropy(probs, unit="dits")
    with pytest.raises(ValueError, match="probs"):
        entropy(torch.tensor([1, 0]))


def _random_hmm(n_states, length, batch, generator):
    prior = torch.rand(*batch, n_states, generator=generator, dtype=torch.float64) + 0.1
    trans = torch.rand(*batch, n_states, n_states, generator=generator, dtype=torch.float64)
    lik = torch.rand(*batch, length, n_states, generator=generator, dtype=torch.float64)
    prior = prior / prior.sum(-1, keepdim=True)
    trans = trans / trans.sum(-1, keepdim=True)
    return prior, trans, lik


def _brute_force(prior, trans, lik):
    """Filtered posteriors and evidence increments of one HMM by summing over all paths."""
    length, n_states = lik.shape
    joint = torch.zeros(length, n_states, dtype=torch.float64)  # p(z_t, obs_1..obs_t)
    for t in range(length):
        for path in itertools.product(range(n_states), repeat=t + 1):
            p = prior[path[0]] * lik[0, path[0]]
            for s in range(1, t + 1):
                p = p * trans[path[s - 1], path[s]] * lik[s, path[s]]
            joint[t, path[-1]] += p
    evidence = joint.sum(-1)  # p(obs_1..obs_t)
    increments = evidence.log().diff(prepend=torch.zeros(1, dtype=torch.float64))
    return (joint / evidence[:, None]).log(), increments


def test_forward_filter_matches_enumeration():
    generator = torch.Generator().manual_seed(3)
    prior, trans, lik = _random_hmm(3, 5, (2,), generator)
    result = forward_filter(prior.log(), trans.log(), lik.log())
    for b in range(2):
        log_post, increments = _brute_force(prior[b], trans[b], lik[b])
        torch.testing.assert_close(result.log_posterior[b], log_post, rtol=0, atol=1e-12)
        torch.testing.assert_close(result.log_evidence_increments[b], increments,
                                   rtol=0, atol=1e-12)


def test_forward_filter_broadcasts_batch_dims():
    generator = torch.Generator().manual_seed(4)
    prior, trans, lik = _random_hmm(4, 6, (3,), generator)
    shared = forward_filter(prior[0].log(), trans[0].log(), lik.log())  # one HMM, 3 sequences
    for b in range(3):
        alone = forward_filter(prior[0].log(), trans[0].log(), lik[b].log())
        torch.testing.assert_close(shared.log_posterior[b], alone.log_posterior,
                                   rtol=0, atol=1e-14)


def test_forward_filter_long_sequence_stays_finite():
    generator = torch.Generator().manual_seed(5)
    prior, trans, lik = _random_hmm(3, 5000, (), generator)
    result = forward_filter(prior.log(), trans.log(), (lik * 1e-30).log())
    assert torch.isfinite(result.log_posterior).all()
    assert result.log_evidence_increments.sum() < -5000 * 60  # would underflow in linear space


def test_predict_next_is_matrix_product():
    generator = torch.Generator().manual_seed(6)
    prior, trans, _ = _random_hmm(5, 1, (), generator)
    torch.testing.assert_close(predict_next(prior.log(), trans.log()).exp(), prior @ trans,
                               rtol=0, atol=1e-15)


@pytest.mark.parametrize("change, name", [
    (lambda p, a, lik: (p.float(), a, lik), "log_transition"),  # dtypes must agree
    (lambda p, a, lik: (p, a[..., :2], lik), "log_transition"),
    (lambda p, a, lik: (p, a, lik[..., :2]), "log_likelihood"),
    (lambda p, a, lik: (p, a, lik.long()), "log_likelihood"),
    (lambda p, a, lik: (p.expand(2, 3), a, lik.expand(4, 5, 3)), "do not broadcast"),
])
def test_forward_filter_rejects_bad_inputs(change, name):
    generator = torch.Generator().manual_seed(7)
    prior, trans, lik = _random_hmm(3, 5, (), generator)
    with pytest.raises(ValueError, match=name):
        forward_filter(*change(prior.log(), trans.log(), lik.log()))
