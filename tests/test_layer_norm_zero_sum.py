"""Chapter 5's "no baseline" statement for the authors' Mamba: with a LayerNorm on the scan
output, the loss is blind to the scale of each reader's row of mixing weights, so the
channel-pooled sum of M ⊙ dL/dM vanishes for every reader, checked against autograd (float64).

For a reader t, scaling M[:, t, :] by c scales raw_t = sum_s M[:, t, s] u_s by c, which the
LayerNorm (eps = 0) removes: d/dc L = sum_{d, s} M[d, t, s] dL/dM[d, t, s] = 0. The standard
variant has no such law (its D u and gate see the scale)."""

import pytest
import torch

from attention_dynamics.measures.metrics import sequence_loss
from attention_dynamics.measures.scan_gradients import (
    log_weight_gradient,
    mamba_routing_gradients,
    pooled_readers,
    pooled_zero_sum_fraction,
    zero_sum_fraction,
)
from attention_dynamics.models.mamba import Mamba, MambaConfig
from attention_dynamics.tasks.bijection import BijectionTask


def _model_and_batch(variant: str):
    task = BijectionTask(4)
    config = MambaConfig(vocab_size=task.vocab_size, max_len=task.seq_len, d_model=12, n_layers=2, d_state=3,
                         variant=variant)
    model = Mamba(config, torch.Generator().manual_seed(0)).double()
    for mixer in model.mixers:
        if variant == "authors":
            mixer.scan_norm.eps = 0.0
    return model, task.sample(6, torch.Generator().manual_seed(1))


def _reader_sums(gradients) -> torch.Tensor:
    """``(batch, T)``: sum over channels and sources of M * dL/dM, per reader."""
    return (gradients.attention * gradients.compatibility).sum(dim=(1, 3))


def test_the_authors_layer_norm_pools_the_mixing_gradient_to_zero_per_reader():
    model, batch = _model_and_batch("authors")
    for layer in mamba_routing_gradients(model, batch):
        sums = _reader_sums(layer)
        scale = (layer.attention.abs() * layer.compatibility.abs()).sum(dim=(1, 3))
        assert (sums.abs() <= 1e-9 * scale + 1e-15).all()


def test_the_compatibility_is_the_autograd_gradient_of_the_raw_scan():
    model, batch = _model_and_batch("authors")
    layers = mamba_routing_gradients(model, batch)
    with torch.enable_grad():
        logits, record = model(batch.tokens, return_record=True)
        raws = [layer.raw_scan for layer in record.layers]
        grads = torch.autograd.grad(sequence_loss(logits, batch), raws)
    for layer, recorded, grad in zip(layers, record.layers, grads, strict=True):
        assert recorded.exact.all()  # no clamp fired: the raw scan is M u
        reader, source = grad.transpose(1, 2), recorded.scan_input.transpose(1, 2)  # (B, d, T)
        expected = reader[..., :, None] * source[..., None, :]
        causal = torch.ones(grad.shape[1], grad.shape[1], dtype=torch.bool).tril()
        torch.testing.assert_close(layer.compatibility, expected * causal, rtol=1e-10, atol=1e-14)


def test_the_standard_variant_has_no_such_law():
    model, batch = _model_and_batch("standard")
    layers = mamba_routing_gradients(model, batch)
    sums = torch.cat([_reader_sums(layer).flatten() for layer in layers])
    assert sums.abs().max() > 1e-6


def test_pooled_net_fraction_separates_the_variants_where_per_channel_rows_do_not():
    fractions = {}
    for variant in ("authors", "standard"):
        model, batch = _model_and_batch(variant)
        layers = [log_weight_gradient(g) for g in mamba_routing_gradients(model, batch)]
        fractions[variant] = (
            max(pooled_zero_sum_fraction(g) for g in layers),
            min(zero_sum_fraction(g) for g in layers),
        )
    pooled_authors, channel_authors = fractions["authors"]
    pooled_standard, channel_standard = fractions["standard"]
    assert pooled_authors < 1e-9          # the LayerNorm's law, pooled over channels
    assert pooled_standard > 1e-3         # no such law without it
    assert channel_authors > 0.05 and channel_standard > 0.05  # no channel's row sums to zero


def test_pooled_net_fraction_on_a_constructed_gradient():
    # two channels, one reader row with entries [+1, -1] and [+2, 0] -> net 2, gross 4
    gradient = torch.zeros(2, 2, 2, dtype=torch.float64)
    gradient[0, 1] = torch.tensor([1.0, -1.0])
    gradient[1, 1] = torch.tensor([2.0, 0.0])
    rows = torch.tensor([1])
    assert pooled_zero_sum_fraction(gradient, rows) == 0.5
    # per channel: 0 for the first, 1 for the second
    assert zero_sum_fraction(gradient, rows) == 0.5
    # channels that cancel each other: pooled 0 where each channel's row is all one sign
    gradient[0, 1] = torch.tensor([1.0, 0.0])
    gradient[1, 1] = torch.tensor([-1.0, 0.0])
    assert pooled_zero_sum_fraction(gradient, rows) == 0.0
    assert zero_sum_fraction(gradient, rows) == 1.0
    # a reader left out does not count
    keep = torch.tensor([False, True])
    gradient[0, 0] = torch.tensor([1.0, 0.0])
    assert pooled_zero_sum_fraction(gradient, keep=keep) == 0.0
    assert pooled_zero_sum_fraction(gradient) == 0.5
    with pytest.raises(ValueError, match="keep"):
        pooled_zero_sum_fraction(gradient, keep=torch.tensor([True]))
    # a kept reader whose row is all zero cannot be measured: nothing left is an error
    assert pooled_readers(gradient, keep).tolist() == [False, True]
    gradient[:, 1] = 0.0
    assert not pooled_readers(gradient, keep).any()
    with pytest.raises(ValueError, match="no kept row"):
        pooled_zero_sum_fraction(gradient, keep=keep)
