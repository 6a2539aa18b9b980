"""Associative recall: the sampler's layout, its exact answers, the accuracy metric."""

import pytest
import torch

from attention_dynamics.tasks.associative_recall import AssociativeRecallTask, recall_accuracy
from attention_dynamics.tasks.base import IGNORE_INDEX

TASK = AssociativeRecallTask(n_pairs=5, n_keys=9, n_values=7, n_queries=3, n_filler=2)


def test_sizes_and_tokens():
    assert TASK.vocab_size == 9 + 7 + 2 and TASK.seq_len == 2 * 5 + 2 + 1 + 3
    assert TASK.filler_token == 16 and TASK.query_token == 17
    assert torch.equal(TASK.query_positions, torch.tensor([13, 14, 15]))
    assert torch.equal(TASK.value_tokens, torch.arange(9, 16))
    assert TASK.chance_accuracy == 1 / 7 and TASK.unbound_accuracy == 1 / 5


def test_sampler_layout():
    batch = TASK.sample(64, torch.Generator().manual_seed(0))
    tokens = batch.tokens
    assert tokens.shape == (64, TASK.seq_len) and tokens.dtype == torch.int64
    assert torch.equal(tokens[:, 0:10:2], batch.keys)
    assert torch.equal(tokens[:, 1:10:2], batch.values + 9)
    assert (tokens[:, 10:12] == TASK.filler_token).all() and (tokens[:, 12] == TASK.query_token).all()
    assert torch.equal(tokens[:, 13:], batch.keys.gather(1, batch.queried))
    for row in range(64):  # distinct keys, values and queries per sequence
        for symbols in (batch.keys[row], batch.values[row], batch.queried[row]):
            assert len(set(symbols.tolist())) == len(symbols)
    assert (batch.keys < 9).all() and (batch.values < 7).all() and (batch.queried < 5).all()


def test_targets_are_the_exact_answers():
    batch = TASK.sample(64, torch.Generator().manual_seed(1))
    scored = batch.mask
    assert torch.equal(scored.nonzero()[:, 1].unique(), TASK.query_positions)
    assert (batch.targets[~scored] == IGNORE_INDEX).all()
    answers = TASK.answers(batch.tokens)
    assert torch.equal(batch.targets[:, TASK.query_positions], answers)
    assert torch.equal(answers, batch.values.gather(1, batch.queried) + 9)
    predictive = batch.bayes_predictive[:, TASK.query_positions]
    assert torch.equal(predictive.argmax(-1), answers) and (predictive.max(-1).values == 1).all()
    assert torch.equal(batch.bayes_predictive[~scored], torch.zeros(int((~scored).sum()), 18,
                                                                    dtype=torch.float64))
    assert (batch.bayes_entropy_bits == 0).all()


def test_answers_reject_malformed_tokens():
    tokens = TASK.sample(2, torch.Generator().manual_seed(2)).tokens
    with pytest.raises(ValueError, match=r"tokens must be a \(B, 16\) int64 tensor"):
        TASK.answers(tokens[:, :-1])
    unknown = tokens.clone()
    unknown[0, -1] = TASK.filler_token
    with pytest.raises(ValueError, match="each queried key exactly once"):
        TASK.answers(unknown)


def test_same_generator_same_batch_and_every_pair_gets_queried():
    first = TASK.sample(8, torch.Generator().manual_seed(3))
    second = TASK.sample(8, torch.Generator().manual_seed(3))
    assert torch.equal(first.tokens, second.tokens) and torch.equal(first.targets, second.targets)
    queried = TASK.sample(2000, torch.Generator().manual_seed(4)).queried
    assert torch.equal(queried.unique(), torch.arange(5))


def test_accuracy_of_exact_and_wrong_predictions():
    batch = TASK.sample(32, torch.Generator().manual_seed(5))
    exact = batch.bayes_predictive.float()
    assert recall_accuracy(exact, batch) == 1.0
    wrong = exact.roll(1, dims=-1)
    assert recall_accuracy(wrong, batch) == 0.0
    with pytest.raises(ValueError, match="logits must have shape"):
        recall_accuracy(exact[:, :-1], batch)


@pytest.mark.parametrize(("changes", "message"), [
    ({"n_pairs": 0}, "n_pairs must be a positive int"),
    ({"n_keys": 4}, "n_keys must be >= n_pairs=5"),
    ({"n_values": 3}, "n_values must be >= n_pairs=5"),
    ({"n_queries": 6}, "n_queries must be <= n_pairs=5"),
    ({"n_filler": -1}, "n_filler must be a non-negative int"),
    ({"n_queries": 1.0}, "n_queries must be a positive int"),
])
def test_task_rejects_bad_settings(changes, message):
    settings = {"n_pairs": 5, "n_keys": 9, "n_values": 7} | changes
    with pytest.raises(ValueError, match=message):
        AssociativeRecallTask(**settings)
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        TASK.sample(0, torch.Generator())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_samples_on_the_generators_device():
    batch = TASK.sample(4, torch.Generator(device="cuda").manual_seed(0))
    assert batch.tokens.is_cuda and batch.targets.is_cuda
    assert torch.equal(TASK.answers(batch.tokens), batch.targets[:, TASK.query_positions])
