"""Entropy and KL of the model on the answer slice (softmax renormalised over the answer
tokens), the leaked mass outside it, and every task's answer tokens."""

import math

import pytest
import torch

from attention_dynamics.measures.metrics import (
    entropy_bits,
    evaluate,
    kl_to_bayes_bits,
    leaked_mass,
    score_logits,
)
from attention_dynamics.models.registry import architecture_config
from attention_dynamics.sequence_training import SequenceTrainingConfig, train_and_evaluate
from attention_dynamics.tasks.associative_recall import AssociativeRecallTask
from attention_dynamics.tasks.base import Task
from attention_dynamics.tasks.bijection import BijectionTask
from attention_dynamics.tasks.hmm_filtering import HMMFilteringTask

TASK = BijectionTask(4)  # vocab 8, answers are the value tokens 4..7
SLICE = TASK.answer_tokens


def _batch_and_logits(seed=0, batch_size=5, scale=3.0):
    """A bijection batch and random float64 logits ``(B, T, 8)`` for it."""
    batch = TASK.sample(batch_size, torch.Generator().manual_seed(seed))
    noise = torch.Generator().manual_seed(seed + 100)
    logits = scale * torch.randn(batch.bayes_predictive.shape, generator=noise, dtype=torch.float64)
    return batch, logits


def _renormalised(logits, tokens):
    """Brute force: the full softmax, its columns ``tokens``, divided by their sum."""
    probs = logits.exp() / logits.exp().sum(-1, keepdim=True)
    inside = probs[..., tokens]
    return inside / inside.sum(-1, keepdim=True), 1 - inside.sum(-1)


def test_renormalised_entropy_and_kl_match_brute_force():
    batch, logits = _batch_and_logits()
    q, _ = _renormalised(logits, SLICE)
    h_brute = -(q * q.log2()).sum(-1)  # (B, T), no zero probabilities
    torch.testing.assert_close(entropy_bits(logits, SLICE), h_brute, rtol=0, atol=1e-12)
    p = batch.bayes_predictive[..., SLICE]
    kl_brute = (torch.special.xlogy(p, p) - p * q.log()).sum(-1) / math.log(2) * batch.mask
    torch.testing.assert_close(kl_to_bayes_bits(logits, batch, SLICE), kl_brute, rtol=0, atol=1e-12)
    report = score_logits(logits, batch, answer_tokens=SLICE)
    mask = batch.mask
    scored = report.positions
    per_position = (h_brute * mask).sum(0)[scored] / mask.sum(0)[scored]
    torch.testing.assert_close(report.model_entropy, per_position, rtol=0, atol=1e-12)
    bayes = report.bayes_entropy
    assert report.mae_mean_curve == pytest.approx((per_position - bayes).abs().mean().item(), abs=1e-12)
    abs_error = (h_brute - batch.bayes_entropy_bits).abs()[mask]
    assert report.mae_per_sample == pytest.approx(abs_error.mean().item(), abs=1e-12)
    assert report.kl_bits == pytest.approx(kl_brute[mask].mean().item(), abs=1e-12)


def test_all_mass_in_the_slice_gives_the_full_vocabulary_numbers():
    batch, logits = _batch_and_logits(seed=1)
    outside = torch.ones(TASK.vocab_size, dtype=torch.bool)
    outside[SLICE] = False
    logits[..., outside] = -1e4  # exp(-1e4) underflows: no mass off the slice
    full = score_logits(logits, batch)
    sliced = score_logits(logits, batch, answer_tokens=SLICE)
    torch.testing.assert_close(sliced.model_entropy, full.model_entropy, rtol=0, atol=1e-12)
    torch.testing.assert_close(sliced.bayes_entropy, full.bayes_entropy, rtol=0, atol=0)
    for name in ("mae_mean_curve", "mae_per_sample", "kl_bits"):
        assert getattr(sliced, name) == pytest.approx(getattr(full, name), abs=1e-12)
    assert sliced.n_scored == full.n_scored and torch.equal(sliced.positions, full.positions)
    assert sliced.leaked_mass == 0.0 and math.isnan(full.leaked_mass)


def test_leaked_mass_on_a_constructed_case():
    batch = TASK.sample(2, torch.Generator().manual_seed(2))
    # per-token weights: 1 on each of the 4 answer tokens; keys 0..3 weigh 3, 1, 0.5, 0.5 in
    # sequence 0 (leak 5 / 9) and 0 in sequence 1 (leak 0)
    weights = torch.ones(2, TASK.seq_len, TASK.vocab_size, dtype=torch.float64)
    weights[0, :, :4] = torch.tensor([3.0, 1.0, 0.5, 0.5], dtype=torch.float64)
    weights[1, :, :4] = 0.0
    weights[:, 1::2, :4] = 1e6  # unscored positions leak almost everything; they must not count
    logits = weights.log()
    expected = torch.tensor([5 / 9, 0.0], dtype=torch.float64)
    torch.testing.assert_close(leaked_mass(logits, SLICE)[:, 0::2], expected[:, None].expand(2, 4),
                               rtol=0, atol=1e-15)
    report = score_logits(logits, batch, answer_tokens=SLICE)
    assert report.leaked_mass == pytest.approx((5 / 9) / 2, abs=1e-15)
    # the renormalised model is uniform on the slice whatever leaks: 2 bits everywhere
    torch.testing.assert_close(report.model_entropy, torch.full((4,), 2.0, dtype=torch.float64))


def test_kl_is_non_negative_and_zero_at_the_bayes_predictive():
    batch, logits = _batch_and_logits(seed=3, batch_size=16)
    assert torch.all(kl_to_bayes_bits(logits, batch, SLICE) >= -1e-12)
    bayes = batch.bayes_predictive
    scored = batch.mask
    exact = logits.clone()  # arbitrary logits off the slice: renormalisation removes them
    on_slice = exact[..., SLICE]
    on_slice[scored] = bayes[..., SLICE][scored].log() + 7.0  # -inf at the excluded values
    exact[..., SLICE] = on_slice
    kl = kl_to_bayes_bits(exact, batch, SLICE)
    assert kl[scored].abs().max().item() < 1e-12
    report = score_logits(exact, batch, answer_tokens=SLICE)
    assert report.kl_bits == pytest.approx(0.0, abs=1e-12)
    assert report.mae_per_sample == pytest.approx(0.0, abs=1e-12)
    assert 0 < report.leaked_mass < 1


def test_evaluate_with_answer_tokens_matches_score_logits():
    batch, logits = _batch_and_logits(seed=4)
    model = lambda tokens: logits  # noqa: E731 - a stand-in model for one batch
    via_evaluate = evaluate(model, [batch], answer_tokens=SLICE)
    direct = score_logits(logits, batch, answer_tokens=SLICE)
    assert via_evaluate.kl_bits == direct.kl_bits and via_evaluate.leaked_mass == direct.leaked_mass
    assert math.isnan(evaluate(model, [batch]).leaked_mass)


@pytest.mark.parametrize("bad, message", [
    (torch.tensor([4.0, 5.0]), "1-D int64"),
    (torch.tensor([[4, 5]]), "1-D int64"),
    (torch.tensor([], dtype=torch.int64), "non-empty"),
    ([4, 5, 6, 7], "int64 tensor"),
    (torch.tensor([4, 5, 8]), "lie in 0..7"),
    (torch.tensor([-1, 4, 5]), "lie in 0..7"),
    (torch.tensor([4, 5, 5, 6, 7]), "distinct"),
    (torch.tensor([4, 5, 6]), "all the Bayes predictive's mass"),
    (torch.tensor([0, 1, 2, 3]), "all the Bayes predictive's mass"),
])
def test_bad_answer_tokens_are_rejected(bad, message):
    batch, logits = _batch_and_logits(seed=5)
    with pytest.raises(ValueError, match=f"answer_tokens must.*{message}"):
        score_logits(logits, batch, answer_tokens=bad)
    with pytest.raises(ValueError, match="answer_tokens"):
        evaluate(lambda tokens: logits, [batch], answer_tokens=bad)
    with pytest.raises(ValueError, match="answer_tokens"):
        kl_to_bayes_bits(logits, batch, bad)


TASKS = [BijectionTask(4), BijectionTask(4, layout="shared"),
         BijectionTask(3, 5, with_replacement=True, layout="shared"),
         HMMFilteringTask(3, n_observations=4, resolution=0.05),
         AssociativeRecallTask(n_pairs=3, n_keys=5, n_values=4, n_queries=2)]


@pytest.mark.parametrize("task", TASKS, ids=lambda t: type(t).__name__)
def test_every_task_answer_slice_holds_the_bayes_mass(task):
    assert isinstance(task, Task)
    tokens = task.answer_tokens
    assert tokens.dtype == torch.int64 and tokens.ndim == 1
    assert tokens.unique().numel() == tokens.numel() and int(tokens.max()) < task.vocab_size
    batch = task.sample(8, torch.Generator().manual_seed(6))
    outside = torch.ones(task.vocab_size, dtype=torch.bool)
    outside[tokens] = False
    assert torch.all(batch.bayes_predictive[..., outside] == 0)
    assert torch.isin(batch.targets[batch.mask], tokens).all()
    report = score_logits(torch.zeros(batch.bayes_predictive.shape), batch, answer_tokens=tokens)
    assert report.model_entropy.sub(math.log2(len(tokens))).abs().max() < 1e-6  # uniform on slice
    assert report.leaked_mass == pytest.approx(1 - len(tokens) / task.vocab_size, abs=1e-12)


def test_the_task_protocol_asks_for_answer_tokens():
    class NoSlice:
        vocab_size, seq_len = 4, 3
        query_positions = torch.arange(3)

        def sample(self, batch_size, generator):
            raise NotImplementedError

    assert not isinstance(NoSlice(), Task)


def test_train_and_evaluate_scores_on_the_answer_slice():
    task = BijectionTask(4)
    config = architecture_config("mlp", task.vocab_size, task.seq_len, n_layers=1, d_model=8,
                                 d_ff=16)
    batches = [task.sample(16, torch.Generator().manual_seed(7))]
    training = SequenceTrainingConfig(steps=2, batch_size=8, lr=1e-3)
    model, run = train_and_evaluate(config, task, training, 0, batches)
    expected = evaluate(model, batches, answer_tokens=task.answer_tokens)
    assert 0 < run.report.leaked_mass < 1 and run.report.leaked_mass == expected.leaked_mass
    assert run.report.mae_mean_curve == expected.mae_mean_curve
