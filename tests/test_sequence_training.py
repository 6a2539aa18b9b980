"""The online training loop and the entropy metrics: a short run lowers the loss, the metrics
give known answers on constructed predictives."""

import math

import numpy as np
import pytest
import torch

from attention_dynamics.measures.metrics import (
    blind_predictor_maes,
    evaluate,
    kl_to_bayes_bits,
    score_logits,
    sequence_loss,
)
from attention_dynamics.models import MLP, MLPConfig, Transformer, TransformerConfig
from attention_dynamics.runtime import seed_everything
from attention_dynamics.sequence_training import (
    SequenceTrainingConfig,
    geometric_checkpoints,
    held_out_batches,
    train_sequence_model,
)
from attention_dynamics.tasks.associative_recall import AssociativeRecallTask
from attention_dynamics.tasks.base import IGNORE_INDEX, Task, TaskBatch
from attention_dynamics.tasks.bijection import BijectionTask, mean_entropy_gap_of_marginal
from attention_dynamics.tasks.hmm_filtering import HMMFilteringTask

TASK = BijectionTask(4)
SHORT = SequenceTrainingConfig(steps=60, batch_size=64, lr=1e-2, warmup_steps=10)


def _transformer(generator):
    config = TransformerConfig(vocab_size=TASK.vocab_size, max_len=TASK.seq_len, n_layers=2,
                               n_heads=2, d_model=32, init_std=0.1)
    return Transformer(config, generator)


def _held_out():
    generator = torch.Generator().manual_seed(1234)
    return [TASK.sample(256, generator)]


def test_a_short_run_lowers_the_loss_of_either_model_and_is_scored_in_range():
    """How close a trained model comes to Bayes, and whether the MLP control stays at its
    context-free floor, are the ledger's; here the loop trains both the transformer and the MLP
    control (the loss it records falls, and so does the loss on one fixed held-out batch), and
    their reports are what they measure: entropies over the 8 tokens (at most 3 bits) against
    Bayes entropies of at most 2 bits."""
    generator = seed_everything(0)
    model = _transformer(generator)
    mlp = MLP(MLPConfig.matching(model.config), generator)
    held_out = _held_out()[0]

    def fixed_batch_loss(trained):
        with torch.no_grad():
            return sequence_loss(trained(held_out.tokens), held_out).item()

    for trained in (model, mlp):
        before = fixed_batch_loss(trained)
        history = train_sequence_model(trained, TASK, SHORT, generator)
        assert history.loss.shape == (60,) and torch.isfinite(history.loss).all()
        assert history.loss[-10:].mean() < history.loss[:10].mean()
        assert fixed_batch_loss(trained) < before
        report = evaluate(trained, _held_out())
        assert report.n_scored == 256 * 4
        assert 0 <= report.mae_mean_curve <= report.mae_per_sample + 1e-12 <= 3 + 1e-9
        assert report.kl_bits >= 0 and math.isfinite(report.kl_bits)


def test_the_context_free_marginal_is_scored_at_the_marginal_gap():
    """The best predictive blind to the context, uniform over the V values, scored on the
    answer slice: its MAEs are the floor the MLP control is held to, whatever the logits put
    outside the slice (which the report counts as leaked mass)."""
    batch = TASK.sample(64, torch.Generator().manual_seed(5))
    logits = torch.zeros(64, TASK.seq_len, TASK.vocab_size)
    logits[..., TASK.answer_tokens] = 5.0             # uniform over the values, little outside
    report = score_logits(logits, batch, answer_tokens=TASK.answer_tokens)
    assert report.mae_mean_curve == pytest.approx(mean_entropy_gap_of_marginal(4), abs=1e-6)
    assert report.mae_per_sample == pytest.approx(mean_entropy_gap_of_marginal(4), abs=1e-6)
    outside = TASK.vocab_size - 4
    assert report.leaked_mass == pytest.approx(outside / (outside + 4 * math.exp(5)), rel=1e-5)


def test_same_seed_same_run_and_checkpoints():
    config = SequenceTrainingConfig(steps=6, batch_size=8)
    seen = []
    runs = []
    for _ in range(2):
        generator = seed_everything(3)
        model = _transformer(generator)
        initial = {k: v.clone() for k, v in model.state_dict().items()}
        history = train_sequence_model(model, TASK, config, generator, checkpoint_steps=[0, 3, 6],
                                       on_checkpoint=lambda step, m: seen.append((step, m.training)))
        runs.append(history)
    assert torch.equal(runs[0].loss, runs[1].loss)
    assert sorted(runs[0].checkpoints) == [0, 3, 6]
    for name, value in initial.items():
        assert torch.equal(runs[1].checkpoints[0][name], value)
    assert torch.equal(runs[1].checkpoints[6]["embed.weight"], model.embed.weight.detach())
    assert seen == [(0, False), (3, False), (6, False)] * 2
    with pytest.raises(ValueError, match="checkpoint_steps"):
        train_sequence_model(model, TASK, config, generator, checkpoint_steps=[7])


def test_losses_agree_on_point_mass_predictives():
    batch = TASK.sample(5, torch.Generator().manual_seed(0))
    logits = torch.randn(5, TASK.seq_len, TASK.vocab_size, generator=torch.Generator().manual_seed(1))
    # the last key's predictive is a point mass on the target: both losses coincide there
    last = torch.full_like(batch.targets, IGNORE_INDEX)
    last[:, -1] = batch.targets[:, -1]
    predictive = torch.zeros_like(batch.bayes_predictive)
    predictive[:, -1] = batch.bayes_predictive[:, -1]
    point = TaskBatch(batch.tokens, last, predictive, batch.bayes_entropy_bits * 0)
    torch.testing.assert_close(sequence_loss(logits, point, "sampled"),
                               sequence_loss(logits, point, "bayes"))
    with pytest.raises(ValueError, match="loss must be one of 'sampled', 'bayes'"):
        sequence_loss(logits, point, "mse")


def test_metrics_on_hand_built_logits():
    batch = TASK.sample(3, torch.Generator().manual_seed(2))
    exact = torch.where(batch.bayes_predictive > 0, batch.bayes_predictive.log(),
                        torch.tensor(-1e4, dtype=torch.float64)).float()
    report = score_logits(exact, batch)
    assert report.mae_mean_curve < 1e-5 and report.mae_per_sample < 1e-5 and report.kl_bits < 1e-5
    torch.testing.assert_close(report.bayes_entropy, TASK.bayes_entropy_curve())
    assert report.positions.tolist() == [0, 2, 4, 6] and report.n_scored == 12
    uniform = torch.zeros(3, TASK.seq_len, TASK.vocab_size)
    report = score_logits(uniform, batch)
    gap = (3 - TASK.bayes_entropy_curve()).mean().item()  # log2(8) = 3 bits for 8 tokens
    assert report.mae_mean_curve == pytest.approx(gap)
    kl = kl_to_bayes_bits(uniform, batch)
    torch.testing.assert_close(kl[:, 0::2], (3 - TASK.bayes_entropy_curve()).expand(3, -1).float().double())
    assert torch.all(kl[:, 1::2] == 0)
    with pytest.raises(ValueError, match="logits must have shape"):
        score_logits(uniform[:, :3], batch)


def test_config_validation_and_schedule():
    config = SequenceTrainingConfig(steps=100, batch_size=4, lr=1.0, warmup_steps=10,
                                    final_lr_fraction=0.1)
    assert config.learning_rate(0) == pytest.approx(0.1)
    assert config.learning_rate(9) == pytest.approx(1.0)
    assert config.learning_rate(55) == pytest.approx(0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * 0.5)))
    assert config.learning_rate(100) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="batch_size"):
        SequenceTrainingConfig(steps=1, batch_size=0)
    with pytest.raises(ValueError, match="loss"):
        SequenceTrainingConfig(steps=1, batch_size=1, loss="l2")


def test_geometric_checkpoints_start_at_zero_end_at_the_last_step_and_thin_out():
    steps = geometric_checkpoints(1000, 8)
    assert steps[0] == 0 and steps[1] == 10 and steps[-1] == 1000
    assert steps == sorted(set(steps))
    gaps = np.diff(steps[1:])
    assert (gaps[1:] >= gaps[:-1]).all()  # later checkpoints are sparser
    assert geometric_checkpoints(5, 3, first=1) == [0, 1, 2, 5]
    with pytest.raises(ValueError, match="steps must be a positive int"):
        geometric_checkpoints(0, 3)


def test_held_out_batches_repeat_with_their_seed_and_differ_between_seeds():
    first = held_out_batches(TASK, 2, 8, seed=3)
    again = held_out_batches(TASK, 2, 8, seed=3)
    other = held_out_batches(TASK, 2, 8, seed=4)
    assert len(first) == 2 and first[0].tokens.shape == (8, TASK.seq_len)
    assert all(torch.equal(a.tokens, b.tokens) for a, b in zip(first, again, strict=True))
    assert not torch.equal(first[0].tokens, other[0].tokens)
    assert not torch.equal(first[0].tokens, first[1].tokens)
    with pytest.raises(ValueError, match="n_batches"):
        held_out_batches(TASK, 0, 8, seed=3)


def test_load_checkpoint_restores_the_kept_weights():
    model = _transformer(torch.Generator().manual_seed(0))
    config = SequenceTrainingConfig(steps=3, batch_size=4, lr=1e-2, warmup_steps=1)
    history = train_sequence_model(model, TASK, config, torch.Generator().manual_seed(1),
                                   checkpoint_steps=[0, 3])
    trained = {k: v.clone() for k, v in model.state_dict().items()}
    restored = history.load_checkpoint(model, 0)
    assert restored is model and not model.training
    changed = [k for k, v in model.state_dict().items() if not torch.equal(v, trained[k])]
    assert changed  # the initial weights differ from the trained ones
    history.load_checkpoint(model, 3)
    assert all(torch.equal(v, trained[k]) for k, v in model.state_dict().items())
    with pytest.raises(ValueError, match="step must be a kept checkpoint"):
        history.load_checkpoint(model, 2)


def test_every_wind_tunnel_keeps_the_task_contract():
    for task in (TASK, HMMFilteringTask(3, n_observations=4, resolution=0.05),
                 AssociativeRecallTask(n_pairs=3, n_keys=5, n_values=4, n_queries=2)):
        assert isinstance(task, Task)
        batch = task.sample(2, torch.Generator().manual_seed(0))
        assert batch.tokens.shape == (2, task.seq_len)
        assert batch.bayes_predictive.shape == (2, task.seq_len, task.vocab_size)
        scored = batch.mask[0].nonzero().flatten()
        assert torch.equal(scored, task.query_positions)


def test_observation_blind_predictors_have_the_stated_maes():
    entropy = torch.tensor([[1.0, 0.5], [0.0, 1.5]], dtype=torch.float64)  # 2 sequences, 2 positions
    maes = blind_predictor_maes(entropy, n_outcomes=4)
    # average curve [0.5, 1.0]: deviations 0.5, 0.5, 0.5, 0.5
    assert maes["average_curve"] == pytest.approx(0.5, abs=1e-15)
    # uniform: log2 4 = 2 bits everywhere: deviations 1, 1.5, 2, 0.5
    assert maes["uniform"] == pytest.approx(1.25, abs=1e-15)
    with pytest.raises(ValueError, match="n_outcomes"):
        blind_predictor_maes(entropy, 0)
    with pytest.raises(ValueError, match=r"\(N, Q\)"):
        blind_predictor_maes(entropy[0], 4)
