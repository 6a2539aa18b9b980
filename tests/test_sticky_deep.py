"""The authors' deep sticky-chain transformer and its AdamW training (chapter 3, paper profile)."""

import pytest
import torch

from attention_dynamics.sticky.deep import DeepConfig, DeepStickyTransformer, evaluate_deep, train_deep
from attention_dynamics.sticky.training import sticky_chain_data

SMALL = DeepConfig(d_model=16, n_layers=2, n_heads=2)


def test_default_config_is_the_authors_deep_variant():
    config = DeepConfig()
    assert (config.d_model, config.n_layers, config.n_heads, config.d_ff) == (64, 4, 4, 256)
    assert config.dropout == 0.1 and config.d_x == 20 and config.n_classes == 8
    model = DeepStickyTransformer(config, torch.Generator().manual_seed(0))
    assert len(model.value_parameters()) == 2 * config.n_layers  # weight and bias per layer


def test_shapes_causality_and_seeded_initialisation():
    model = DeepStickyTransformer(SMALL, torch.Generator().manual_seed(1)).eval()
    x = torch.randn(2, 12, 20, generator=torch.Generator().manual_seed(2))
    logits = model(x)
    assert logits.shape == (2, 12, 8)
    changed = x.clone()
    changed[:, 7:] += 5.0
    torch.testing.assert_close(model(changed)[:, :7], logits[:, :7], rtol=0, atol=1e-6)
    assert not torch.allclose(model(changed)[:, 7:], logits[:, 7:])
    again = DeepStickyTransformer(SMALL, torch.Generator().manual_seed(1))
    for a, b in zip(model.parameters(), again.parameters(), strict=True):
        assert torch.equal(a, b)
    bound = 1 / 20 ** 0.5  # PyTorch's default Linear bound for fan-in 20
    assert model.input_proj.weight.abs().max() <= bound


def test_evaluation_mode_is_deterministic_and_restored():
    model = DeepStickyTransformer(SMALL, torch.Generator().manual_seed(3))
    data = sticky_chain_data([5], T=30)
    first = evaluate_deep(model, data.inputs, data.targets)
    second = evaluate_deep(model, data.inputs, data.targets)
    assert first == second and model.training
    assert 0 < first.loss and 0 <= first.accuracy <= 1 and 0 < first.entropy <= 2.08


def test_training_lowers_the_loss_and_scales_the_value_rate():
    data, heldout = sticky_chain_data([6], T=60), sticky_chain_data([7], T=60)
    torch.manual_seed(0)
    model = DeepStickyTransformer(SMALL, torch.Generator().manual_seed(4))
    history = train_deep(model, data.inputs, data.targets, heldout.inputs, heldout.targets,
                         steps=40, lr=3e-3, eval_every=20)
    assert history.eval_steps.tolist() == [0, 20, 40]
    assert history.train_loss.shape == (40,)
    assert history.train_eval_loss[-1] < history.train_eval_loss[0] - 0.05
    assert history.final_heldout.loss == pytest.approx(history.heldout_loss[-1].item())

    # one AdamW step moves every weight by about lr (sign of its gradient): 10 lr for values
    fresh = DeepStickyTransformer(DeepConfig(d_model=16, n_layers=2, n_heads=2, dropout=0.0),
                                  torch.Generator().manual_seed(5))
    before = {name: p.detach().clone() for name, p in fresh.named_parameters()}
    train_deep(fresh, data.inputs, data.targets, heldout.inputs, heldout.targets, steps=1,
               lr=1e-3, weight_decay=0.0, value_lr_multiplier=10.0)
    moved = {name: (p.detach() - before[name]).abs().max().item()
             for name, p in fresh.named_parameters()}
    assert moved["blocks.0.w_v.weight"] == pytest.approx(1e-2, rel=1e-3)
    assert moved["blocks.1.w_q.weight"] == pytest.approx(1e-3, rel=1e-3)


@pytest.mark.parametrize("kwargs, name", [
    ({"d_model": 10, "n_heads": 4}, "d_model"),
    ({"dropout": 1.0}, "dropout"),
    ({"n_layers": 0}, "n_layers"),
])
def test_config_rejects_bad_sizes(kwargs, name):
    with pytest.raises(ValueError, match=name):
        DeepConfig(**kwargs)


def test_train_and_forward_reject_bad_arguments():
    model = DeepStickyTransformer(SMALL, torch.Generator().manual_seed(6))
    data = sticky_chain_data([8], T=20)
    with pytest.raises(ValueError, match="steps"):
        train_deep(model, data.inputs, data.targets, data.inputs, data.targets, steps=0)
    with pytest.raises(ValueError, match="value_lr_multiplier"):
        train_deep(model, data.inputs, data.targets, data.inputs, data.targets, steps=1,
                   value_lr_multiplier=0.0)
    with pytest.raises(ValueError, match="x must have shape"):
        model(torch.zeros(1, 5, 19))
