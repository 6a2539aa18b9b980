"""The Mamba model: its two selective scans, its implicit attention, its interface, its size."""

import math
from dataclasses import replace

import pytest
import torch

from attention_dynamics.measures.metrics import sequence_loss
from attention_dynamics.models.mamba import (
    Mamba,
    MambaConfig,
    mamba_implicit_attention,
    selective_scan,
    selective_scan_chunked,
    selective_scan_sequential,
)
from attention_dynamics.models.sizing import count_parameters, match_parameters
from attention_dynamics.models.transformer import Transformer, TransformerConfig
from attention_dynamics.sequence_training import SequenceTrainingConfig, train_sequence_model
from attention_dynamics.tasks.associative_recall import AssociativeRecallTask, recall_accuracy

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                               reason="no CUDA device"))]


def scan_inputs(batch=3, length=23, d_inner=5, d_state=4, seed=0, large_steps=False):
    """Random float64 scan inputs; ``large_steps`` makes some decays underflow to zero."""
    gen = torch.Generator().manual_seed(seed)

    def randn(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    delta = torch.nn.functional.softplus(randn(batch, length, d_inner) + (4.0 if large_steps else 0.0))
    A = -torch.rand(d_inner, d_state, generator=gen, dtype=torch.float64) * (30.0 if large_steps else 3.0)
    return (randn(batch, length, d_inner), delta, A, randn(batch, length, d_state),
            randn(batch, length, d_state), randn(d_inner))


def by_hand(x, delta, A, B, C, D):
    """The recurrence of the module docstring, one scalar at a time."""
    batch, length, d_inner = x.shape
    y = torch.zeros_like(x)
    for b in range(batch):
        for d in range(d_inner):
            h = torch.zeros(A.shape[1], dtype=x.dtype)
            for t in range(length):
                h = torch.exp(delta[b, t, d] * A[d]) * h + delta[b, t, d] * B[b, t] * x[b, t, d]
                y[b, t, d] = C[b, t] @ h + D[d] * x[b, t, d]
    return y


def test_sequential_scan_is_the_documented_recurrence():
    inputs = scan_inputs(batch=2, length=6, d_inner=3, d_state=2)
    assert torch.allclose(selective_scan_sequential(*inputs), by_hand(*inputs), rtol=0, atol=1e-13)


@pytest.mark.parametrize("chunk_size", [1, 3, 5, 23, 40, None])
@pytest.mark.parametrize("large_steps", [False, True])
def test_chunked_scan_agrees_with_sequential_in_float64(chunk_size, large_steps):
    inputs = scan_inputs(large_steps=large_steps)
    sequential = selective_scan_sequential(*inputs)
    chunked = selective_scan_chunked(*inputs, chunk_size=chunk_size)
    assert torch.isfinite(chunked).all()
    assert torch.allclose(chunked, sequential, rtol=0, atol=1e-12)


@pytest.mark.parametrize("length", [1, 2])
def test_scans_agree_on_the_shortest_sequences(length):
    inputs = scan_inputs(length=length)
    assert torch.allclose(selective_scan_chunked(*inputs), by_hand(*inputs), rtol=0, atol=1e-13)
    assert torch.allclose(selective_scan_sequential(*inputs), by_hand(*inputs), rtol=0, atol=1e-13)


def test_scans_without_skip_and_their_gradients_agree():
    x, delta, A, B, C, _ = scan_inputs(length=11)
    grads = []
    for scan in (selective_scan_sequential, selective_scan_chunked):
        leaves = [t.clone().requires_grad_() for t in (x, delta, A, B, C)]
        y = scan(*leaves)
        (y * torch.linspace(-1, 1, y.numel(), dtype=y.dtype).view_as(y)).sum().backward()
        grads.append([leaf.grad for leaf in leaves])
    for first, second in zip(*grads, strict=True):
        assert torch.allclose(first, second, rtol=0, atol=1e-11)


def test_auto_scan_picks_by_device():
    inputs = scan_inputs(length=9)
    assert torch.equal(selective_scan(*inputs, method="auto"), selective_scan_sequential(*inputs))
    assert torch.equal(selective_scan(*inputs, method="chunked", chunk_size=2),
                       selective_scan_chunked(*inputs, chunk_size=2))


def test_implicit_attention_reproduces_the_scan_exactly():
    x, delta, A, B, C, D = scan_inputs(large_steps=False)
    M = mamba_implicit_attention(delta, A, B, C)
    assert M.shape == (3, 5, 23, 23)
    assert torch.equal(M.triu(1), torch.zeros_like(M))  # causal
    mixed = torch.einsum("bdts,bsd->btd", M, x)
    assert torch.allclose(mixed, selective_scan_sequential(x, delta, A, B, C, D) - D * x,
                          rtol=0, atol=1e-12)
    # one entry by its formula: C_t (prod_{r=s+1..t} Abar_r) Bbar_s
    b, d, t, s = 1, 2, 9, 4
    product = torch.exp(delta[b, s + 1:t + 1, d].sum() * A[d])
    assert torch.allclose(M[b, d, t, s], (C[b, t] * product * delta[b, s, d] * B[b, s]).sum())


def test_implicit_attention_is_not_a_softmax():
    """Rows are neither normalised nor non-negative: no 'attention-weighted average'."""
    _, delta, A, B, C, _ = scan_inputs()
    M = mamba_implicit_attention(delta, A, B, C)
    assert (M < 0).any()
    assert not torch.allclose(M.sum(-1), torch.ones_like(M.sum(-1)))


@pytest.mark.parametrize(("position", "bad", "message"), [
    (0, torch.zeros(3, 23, 5, dtype=torch.int64), "x must be a floating-point tensor"),
    (1, torch.zeros(3, 22, 5, dtype=torch.float64), r"delta must have shape \(3, 23, 5\)"),
    (2, torch.zeros(5, 4, dtype=torch.float32), "A must have dtype torch.float64"),
    (3, torch.zeros(3, 23, 3, dtype=torch.float64), r"B must have shape \(3, 23, 4\)"),
    (5, torch.zeros(4, dtype=torch.float64), r"D must have shape \(5,\)"),
])
def test_scan_inputs_are_checked(position, bad, message):
    inputs = list(scan_inputs())
    inputs[position] = bad
    for scan in (selective_scan_sequential, selective_scan_chunked):
        with pytest.raises(ValueError, match=message):
            scan(*inputs)


def test_scan_choices_are_checked():
    inputs = scan_inputs(length=4)
    with pytest.raises(ValueError, match="method must be one of 'auto', 'chunked', 'sequential'"):
        selective_scan(*inputs, method="parallel")
    with pytest.raises(ValueError, match="chunk_size must be a positive int"):
        selective_scan_chunked(*inputs, chunk_size=0)


@pytest.mark.parametrize(("field", "value"), [("vocab_size", 0), ("d_model", 2.5), ("d_state", 0),
                                              ("expand", True), ("dt_rank", -1), ("max_len", None),
                                              ("chunk_size", 0)])
def test_config_rejects_bad_sizes(field, value):
    with pytest.raises(ValueError, match=f"{field} must be a positive int"):
        MambaConfig(**{"vocab_size": 10, "max_len": 8, field: value})


def test_config_rejects_bad_steps_and_scan():
    with pytest.raises(ValueError, match="dt_min and dt_max"):
        MambaConfig(vocab_size=10, max_len=8, dt_min=0.2, dt_max=0.1)
    with pytest.raises(ValueError, match="scan must be one of"):
        MambaConfig(vocab_size=10, max_len=8, scan="parallel")
    config = MambaConfig(vocab_size=10, max_len=8, d_model=40)
    assert config.delta_rank == math.ceil(40 / 16) and config.d_inner == 80
    assert replace(config, d_model=64).delta_rank == 4 and replace(config, dt_rank=7).delta_rank == 7


def tiny_config(**changes) -> MambaConfig:
    return replace(MambaConfig(vocab_size=11, max_len=12, n_layers=2, d_model=16, d_state=4), **changes)


def test_initialisation_follows_mamba_and_the_seed():
    config = tiny_config()
    model = Mamba(config, torch.Generator().manual_seed(3))
    mixer = model.mixers[0]
    assert torch.equal(-torch.exp(mixer.A_log), -torch.arange(1.0, 5.0).expand(config.d_inner, 4))
    dt = torch.nn.functional.softplus(mixer.dt_proj.bias.double())
    assert (dt >= config.dt_min * (1 - 1e-6)).all() and (dt <= config.dt_max * (1 + 1e-6)).all()
    assert torch.equal(mixer.D, torch.ones(config.d_inner))
    again = Mamba(config, torch.Generator().manual_seed(3))
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), again.parameters(), strict=True))


@pytest.mark.parametrize("device", DEVICES)
def test_model_maps_tokens_to_logits_and_records_its_internals(device):
    config = tiny_config()
    model = Mamba(config, torch.Generator().manual_seed(0)).to(device)
    tokens = torch.randint(11, (3, 9), generator=torch.Generator().manual_seed(1)).to(device)
    logits, record = model(tokens, return_record=True)
    assert logits.shape == (3, 9, 11) and logits.device.type == device
    assert torch.allclose(model(tokens), logits, atol=1e-6)
    on_cpu = Mamba(config, torch.Generator().manual_seed(0))(tokens.cpu())  # sequential scan
    assert torch.allclose(logits.cpu(), on_cpu, atol=1e-5)
    assert len(record.residual) == 3 and all(h.shape == (3, 9, 16) for h in record.residual)
    assert record.final.shape == (3, 9, 16) and len(record.layers) == 2
    layer = record.layers[1]
    assert layer.attention.shape == (3, config.d_inner, 9, 9)
    assert layer.delta.shape == layer.scan_input.shape == layer.gate.shape == (3, 9, config.d_inner)
    assert layer.B.shape == layer.C.shape == (3, 9, 4)
    # the block's own implicit attention reproduces its scan's output
    mixer = model.mixers[1]
    mixed = torch.einsum("bdts,bsd->btd", layer.attention, layer.scan_input)
    assert torch.allclose(mixed, layer.scan_output - mixer.D * layer.scan_input, atol=1e-5)


def test_model_scans_agree_and_the_model_is_causal():
    sequential = Mamba(tiny_config(scan="sequential"), torch.Generator().manual_seed(0)).double()
    chunked = Mamba(tiny_config(scan="chunked", chunk_size=4), torch.Generator().manual_seed(0)).double()
    tokens = torch.randint(11, (2, 12), generator=torch.Generator().manual_seed(2))
    logits = sequential(tokens)
    assert torch.allclose(chunked(tokens), logits, rtol=0, atol=1e-12)
    changed = tokens.clone()
    changed[:, 7:] = (changed[:, 7:] + 1) % 11
    assert torch.allclose(sequential(changed)[:, :7], logits[:, :7], rtol=0, atol=1e-12)
    assert not torch.allclose(sequential(changed)[:, 7:], logits[:, 7:])


def test_model_checks_its_tokens():
    model = Mamba(tiny_config(), torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match="int64"):
        model(torch.zeros(2, 4))
    with pytest.raises(ValueError, match="max_len=12"):
        model(torch.zeros(2, 13, dtype=torch.int64))


def test_training_is_seeded_and_the_scans_train_alike():
    """A short run on associative recall: the same seeds give the same run bit for bit; the
    chunked scan trains as the sequential one does (float64, to rounding); the loss it records
    falls, and so does the loss on one fixed held-out batch. (How far longer training takes
    Mamba past what storage alone allows is the ledger's.)"""
    task = AssociativeRecallTask(n_pairs=2, n_keys=4, n_values=4, n_queries=2)
    training = SequenceTrainingConfig(steps=20, batch_size=16, lr=1e-2, warmup_steps=2,
                                      final_lr_fraction=1.0)
    test = task.sample(64, torch.Generator().manual_seed(99))

    def held_out_loss(model):
        with torch.no_grad():
            return sequence_loss(model(test.tokens), test).item()

    def run(scan):
        config = MambaConfig(vocab_size=task.vocab_size, max_len=task.seq_len, n_layers=1,
                             d_model=16, d_state=4, scan=scan, chunk_size=4)
        model = Mamba(config, torch.Generator().manual_seed(0)).double()
        before = held_out_loss(model)
        history = train_sequence_model(model, task, training, torch.Generator().manual_seed(1))
        assert held_out_loss(model) < before
        return model, history.loss

    model, loss = run("sequential")
    again, loss_again = run("sequential")
    assert torch.equal(loss, loss_again)
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), again.parameters(), strict=True))
    chunked, loss_chunked = run("chunked")
    torch.testing.assert_close(loss_chunked, loss, rtol=1e-9, atol=1e-9)
    assert torch.isfinite(loss).all() and loss[-5:].mean() < loss[:5].mean()
    with torch.no_grad():
        assert 0 <= recall_accuracy(model(test.tokens), test) <= 1


def test_count_and_match_parameters():
    transformer = Transformer(TransformerConfig(vocab_size=20, max_len=16, n_layers=2, d_model=32,
                                                n_heads=2), torch.Generator().manual_seed(0))
    target = count_parameters(transformer)
    assert target == sum(p.numel() for p in transformer.parameters())

    def build(d_model):
        return Mamba(MambaConfig(vocab_size=20, max_len=16, n_layers=2, d_model=d_model),
                     torch.Generator())

    match = match_parameters(build, target, low=4, high=256, multiple_of=4)
    assert match.size % 4 == 0 and match.target == target
    assert match.n_parameters == count_parameters(build(match.size))
    for neighbour in (match.size - 4, match.size + 4):
        assert abs(match.n_parameters - target) <= abs(count_parameters(build(neighbour)) - target)
    assert abs(match.relative_error) < 0.1


def test_match_parameters_checks_its_arguments():
    def build(d_model):
        return Mamba(MambaConfig(vocab_size=20, max_len=16, n_layers=1, d_model=d_model),
                     torch.Generator())

    with pytest.raises(ValueError, match="target must lie between"):
        match_parameters(build, 10, low=4, high=16)
    with pytest.raises(ValueError, match="multiple_of must be a positive int"):
        match_parameters(build, 1000, multiple_of=0)
    with pytest.raises(ValueError, match="no multiple of multiple_of=8"):
        match_parameters(build, 1000, low=9, high=15, multiple_of=8)
