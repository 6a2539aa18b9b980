"""The final streams read by hooks equal what the models compute."""

import pytest
import torch

from attention_dynamics.measures.representations import final_streams
from attention_dynamics.models import MLP, MLPConfig, Transformer, TransformerConfig


def _transformer():
    config = TransformerConfig(vocab_size=7, max_len=9, n_layers=2, n_heads=2, d_model=8)
    return Transformer(config, torch.Generator().manual_seed(0))


def test_transformer_streams_match_its_record():
    model = _transformer()
    tokens = torch.randint(7, (3, 9), generator=torch.Generator().manual_seed(1))
    before, after = final_streams(model, tokens)
    _, record = model(tokens, return_record=True)
    torch.testing.assert_close(before, record.residual[-1])
    torch.testing.assert_close(after, record.final)
    torch.testing.assert_close(after @ model.embed.weight.T, model(tokens))


def test_mlp_streams_give_its_logits_and_leave_its_mode():
    model = MLP(MLPConfig.matching(_transformer().config), torch.Generator().manual_seed(2))
    model.train()
    tokens = torch.randint(7, (2, 5), generator=torch.Generator().manual_seed(3))
    before, after = final_streams(model, tokens)
    assert model.training
    torch.testing.assert_close(model.norm_final(before), after)
    torch.testing.assert_close(after @ model.embed.weight.T, model.eval()(tokens))
    assert not model.norm_final._forward_hooks


def test_a_model_without_a_final_norm_is_refused():
    with pytest.raises(ValueError, match="norm_final"):
        final_streams(torch.nn.Linear(3, 3), torch.zeros(1, 3, dtype=torch.int64))
