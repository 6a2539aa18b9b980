"""The LSTM model: its gate-keeping path matches torch.nn.LSTM; its interface; a seeded short run."""

import math

import pytest
import torch
from torch import nn

from attention_dynamics.measures.metrics import sequence_loss
from attention_dynamics.models.lstm import LSTM, LSTMConfig, lstm_with_gates
from attention_dynamics.models.sizing import count_parameters, match_parameters
from attention_dynamics.sequence_training import SequenceTrainingConfig, train_sequence_model
from attention_dynamics.tasks.bijection import BijectionTask

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                               reason="no CUDA device"))]


def test_gate_path_matches_torch_lstm_exactly():
    gen = torch.Generator().manual_seed(0)
    lstm = nn.LSTM(5, 7, batch_first=True).double()
    with torch.no_grad():
        for p in lstm.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) * 0.5)
    x = torch.randn(3, 11, 5, generator=gen, dtype=torch.float64)
    record = lstm_with_gates(lstm, x)
    hidden, (h_last, c_last) = lstm(x)
    assert torch.allclose(record.hidden, hidden, rtol=0, atol=1e-14)
    assert torch.allclose(record.cell[:, -1], c_last[0], rtol=0, atol=1e-14)
    # the gates recombine into the states: c_t = f c_{t-1} + i g, h_t = o tanh(c_t)
    previous = torch.cat([torch.zeros_like(record.cell[:, :1]), record.cell[:, :-1]], dim=1)
    assert torch.allclose(record.cell, record.forget_gate * previous
                          + record.input_gate * record.candidate, rtol=0, atol=1e-14)
    assert torch.allclose(record.hidden, record.output_gate * torch.tanh(record.cell),
                          rtol=0, atol=1e-14)


def test_gate_path_rejects_other_lstms():
    with pytest.raises(ValueError, match="single-layer, unidirectional, batch_first"):
        lstm_with_gates(nn.LSTM(3, 4, num_layers=2, batch_first=True), torch.zeros(1, 2, 3))
    with pytest.raises(ValueError, match="single-layer, unidirectional, batch_first"):
        lstm_with_gates(nn.LSTM(3, 4), torch.zeros(1, 2, 3))


@pytest.mark.parametrize("device", DEVICES)
def test_model_maps_tokens_to_logits_and_records_its_gates(device):
    config = LSTMConfig(vocab_size=13, max_len=10, n_layers=2, d_model=8)
    model = LSTM(config, torch.Generator().manual_seed(0)).to(device)
    tokens = torch.randint(13, (4, 10), generator=torch.Generator().manual_seed(1)).to(device)
    logits, record = model(tokens, return_record=True)
    assert logits.shape == (4, 10, 13) and logits.device.type == device
    assert torch.allclose(model(tokens), logits, atol=1e-5)
    assert len(record.residual) == 3 and all(h.shape == (4, 10, 8) for h in record.residual)
    assert record.final.shape == (4, 10, 8) and len(record.layers) == 2
    for layer, output in zip(record.layers, record.residual[1:], strict=True):
        assert torch.equal(layer.hidden, output)
        for gate in (layer.input_gate, layer.forget_gate, layer.output_gate):
            assert gate.shape == (4, 10, 8) and ((gate > 0) & (gate < 1)).all()


def test_model_is_causal_and_seeded():
    config = LSTMConfig(vocab_size=13, max_len=10, d_model=8)
    model = LSTM(config, torch.Generator().manual_seed(0)).double()
    tokens = torch.randint(13, (2, 10), generator=torch.Generator().manual_seed(2))
    changed = tokens.clone()
    changed[:, 6:] = (changed[:, 6:] + 1) % 13
    assert torch.allclose(model(changed)[:, :6], model(tokens)[:, :6], rtol=0, atol=1e-14)
    again = LSTM(config, torch.Generator().manual_seed(0)).double()
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), again.parameters(), strict=True))
    with pytest.raises(ValueError, match="max_len=10"):
        model(torch.zeros(1, 11, dtype=torch.int64))


@pytest.mark.parametrize(("field", "value"), [("vocab_size", 0), ("max_len", 1.0), ("n_layers", 0),
                                              ("d_model", False)])
def test_config_rejects_bad_sizes(field, value):
    with pytest.raises(ValueError, match=f"{field} must be a positive int"):
        LSTMConfig(**{"vocab_size": 10, "max_len": 8, field: value})
    with pytest.raises(ValueError, match="init_std must be positive"):
        LSTMConfig(vocab_size=10, max_len=8, init_std=0.0)


def test_parameter_count_and_matching():
    config = LSTMConfig(vocab_size=13, max_len=10, n_layers=2, d_model=8)
    model = LSTM(config, torch.Generator().manual_seed(0))
    per_layer = 4 * 8 * (8 + 8) + 2 * 4 * 8  # W_ih, W_hh, two biases
    assert count_parameters(model) == 13 * 8 + 2 * per_layer + 8  # tied head, final norm

    def build(d_model):
        return LSTM(LSTMConfig(vocab_size=13, max_len=10, d_model=d_model), torch.Generator())

    match = match_parameters(build, 100_000, high=512)
    assert abs(match.relative_error) < 0.01


def test_training_is_seeded_and_lowers_the_loss_on_bijections():
    """A short run on bijections: the same seeds give the same run bit for bit, another data
    seed another one; the loss it records falls, and so does the loss on one fixed held-out
    batch. (How far below the context-free loss longer training takes the LSTM is the
    ledger's.)"""
    task = BijectionTask(4)
    training = SequenceTrainingConfig(steps=40, batch_size=32, lr=1e-2, warmup_steps=5)
    test = task.sample(256, torch.Generator().manual_seed(99))

    def held_out_loss(model):
        with torch.no_grad():
            return sequence_loss(model(test.tokens), test).item()

    def run(data_seed):
        model = LSTM(LSTMConfig(vocab_size=task.vocab_size, max_len=task.seq_len, d_model=16),
                     torch.Generator().manual_seed(0))
        before = held_out_loss(model)
        history = train_sequence_model(model, task, training, torch.Generator().manual_seed(data_seed))
        assert held_out_loss(model) < before
        return model, history.loss

    model, loss = run(1)
    again, loss_again = run(1)
    assert torch.equal(loss, loss_again)
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), again.parameters(), strict=True))
    assert not torch.equal(run(2)[1], loss)
    assert torch.isfinite(loss).all() and loss[-5:].mean() < loss[:5].mean()
    assert 0 < held_out_loss(model) < math.inf
