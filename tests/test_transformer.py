"""The wind-tunnel transformer and the MLP control: shapes, causality, records, ablations."""

import pytest
import torch

from attention_dynamics.models import MLP, MLPConfig, Transformer, TransformerConfig, count_parameters

CONFIG = TransformerConfig(vocab_size=11, max_len=9, n_layers=2, n_heads=2, d_model=16)


def _model(config=CONFIG, seed=0):
    return Transformer(config, torch.Generator().manual_seed(seed))


def _tokens(batch=3, length=9, seed=1):
    return torch.randint(CONFIG.vocab_size, (batch, length), generator=torch.Generator().manual_seed(seed))


def test_shapes_and_record():
    model = _model()
    tokens = _tokens()
    logits, record = model(tokens, return_record=True)
    assert logits.shape == (3, 9, 11)
    torch.testing.assert_close(model(tokens), logits)
    assert len(record.residual) == 3 and len(record.attention) == 2
    assert record.final.shape == (3, 9, 16)
    for layer in record.attention:
        assert layer.q.shape == layer.k.shape == layer.v.shape == (3, 2, 9, 8)
        assert layer.weights.shape == (3, 2, 9, 9)
        torch.testing.assert_close(layer.weights.sum(-1), torch.ones(3, 2, 9))
        assert torch.all(layer.weights.triu(1) == 0)
    torch.testing.assert_close(record.final @ model.embed.weight.T, logits)


def test_causal_logits_and_shorter_sequences():
    model = _model()
    tokens = _tokens()
    changed = tokens.clone()
    changed[:, 5:] = (changed[:, 5:] + 1) % CONFIG.vocab_size
    torch.testing.assert_close(model(tokens)[:, :5], model(changed)[:, :5])
    assert not torch.allclose(model(tokens)[:, 5:], model(changed)[:, 5:])
    torch.testing.assert_close(model(tokens[:, :4]), model(tokens)[:, :4])


def test_seeded_initialisation():
    a, b, c = _model(seed=0), _model(seed=0), _model(seed=1)
    for (name, pa), pb in zip(a.state_dict().items(), b.state_dict().values(), strict=True):
        assert torch.equal(pa, pb), name
    assert not torch.equal(a.embed.weight, c.embed.weight)


def test_token_keys_are_layer_zero_keys_without_positions():
    model = _model()
    with torch.no_grad():
        model.positions.weight.zero_()
    tokens = _tokens(batch=1)
    _, record = model(tokens, return_record=True)
    keys = model.token_keys(tokens[0])  # (H, T, d_head)
    torch.testing.assert_close(record.attention[0].k[0], keys)


def test_head_mask_and_layer_bypass():
    model = _model()
    tokens = _tokens()
    plain = model(tokens)
    with model.ablated(heads={1: [0]}):
        masked = model(tokens)
    # zeroing head 0 of layer 1 is zeroing its slice of W_O's input
    reference = _model()
    with torch.no_grad():
        reference.blocks[1].w_o.weight[:, :8] = 0
    torch.testing.assert_close(masked, reference(tokens))
    with model.ablated(bypass=[0]):
        _, record = model(tokens, return_record=True)
    assert record.attention[0] is None
    torch.testing.assert_close(record.residual[1], record.residual[0])
    torch.testing.assert_close(model(tokens), plain)  # restored on exit
    with pytest.raises(ValueError, match="layer indices"):
        with model.ablated(bypass=[2]):
            pass
    with pytest.raises(ValueError, match="head indices"):
        with model.ablated(heads={0: [5]}):
            pass


def test_bad_inputs():
    model = _model()
    with pytest.raises(ValueError, match="int64"):
        model(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="max_len=9"):
        model(torch.zeros(1, 10, dtype=torch.long))
    with pytest.raises(ValueError, match="multiple of n_heads"):
        TransformerConfig(vocab_size=4, max_len=4, n_heads=3, d_model=16)
    with pytest.raises(ValueError, match="vocab_size"):
        TransformerConfig(vocab_size=0, max_len=4)


def test_mlp_is_per_position_and_capacity_matched():
    config = TransformerConfig(vocab_size=11, max_len=9, n_layers=3, n_heads=4, d_model=32)
    transformer = Transformer(config, torch.Generator().manual_seed(0))
    mlp = MLP(MLPConfig.matching(config), torch.Generator().manual_seed(0))
    n_t, n_m = count_parameters(transformer), count_parameters(mlp)
    assert abs(n_m - n_t) / n_t < 0.02
    tokens = _tokens()
    changed = tokens.clone()
    changed[:, 3] = (changed[:, 3] + 1) % 11
    logits, other = mlp(tokens), mlp(changed)
    assert logits.shape == (3, 9, 11)
    keep = torch.arange(9) != 3
    torch.testing.assert_close(logits[:, keep], other[:, keep])
    with pytest.raises(ValueError, match="d_ff"):
        MLPConfig(vocab_size=4, max_len=4, d_ff=0)
