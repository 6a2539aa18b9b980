"""The attention head: its forward pass, its record, its input checks."""

import pytest
import torch

from attention_dynamics.attention import CausalSelfAttention, attention_forward, causal_mask


def test_record_is_consistent_and_causal():
    gen = torch.Generator().manual_seed(0)
    head = CausalSelfAttention(6, 4, 5, n_heads=3, generator=gen, dtype=torch.float64)
    x = torch.randn(2, 7, 6, dtype=torch.float64, generator=gen)
    rec = head(x)
    assert rec.q.shape == (2, 3, 7, 4) and rec.v.shape == (2, 3, 7, 5)
    assert rec.weights.shape == (2, 3, 7, 7) and rec.output.shape == (2, 3, 7, 5)
    assert torch.allclose(rec.weights.sum(-1), torch.ones(2, 3, 7, dtype=torch.float64))
    assert torch.equal(rec.weights.triu(1), torch.zeros_like(rec.weights))  # no look-ahead
    by_hand = torch.softmax(rec.q[0, 1, 3] @ rec.k[0, 1, :4].T / 2.0, -1) @ rec.v[0, 1, :4]
    assert torch.allclose(rec.output[0, 1, 3], by_hand)


def test_future_inputs_do_not_change_past_outputs():
    gen = torch.Generator().manual_seed(1)
    head = CausalSelfAttention(4, 3, 3, generator=gen, dtype=torch.float64)
    x = torch.randn(1, 8, 4, dtype=torch.float64, generator=gen)
    changed = x.clone()
    changed[:, 5:] += 10.0
    assert torch.allclose(head(x).output[..., :5, :], head(changed).output[..., :5, :])


@pytest.mark.parametrize("causal", [True, False])
def test_fused_output_equals_the_recorded_one_with_its_gradients(causal):
    gen = torch.Generator().manual_seed(3)
    head = CausalSelfAttention(6, 4, 5, n_heads=3, causal=causal, generator=gen,
                               dtype=torch.float64)
    x = torch.randn(2, 7, 6, dtype=torch.float64, generator=gen, requires_grad=True)
    target = torch.randn(2, 3, 7, 5, dtype=torch.float64, generator=gen)
    grads = []
    for output in (head(x).output, head.output_only(x)):
        loss = (output * target).sum()
        grads.append(torch.autograd.grad(loss, (x, *head.parameters())))
        grads[-1] = (output.detach(), *grads[-1])
    for recorded, fused in zip(*grads, strict=True):
        torch.testing.assert_close(fused, recorded, rtol=0, atol=1e-12)


def test_same_generator_seed_gives_same_head():
    a = CausalSelfAttention(4, 3, 2, generator=torch.Generator().manual_seed(5))
    b = CausalSelfAttention(4, 3, 2, generator=torch.Generator().manual_seed(5))
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))


def test_upstream_needs_retain_and_backward():
    head = CausalSelfAttention(4, 3, 2, generator=torch.Generator().manual_seed(0))
    rec = head(torch.randn(1, 3, 4))
    with pytest.raises(RuntimeError, match="retain_upstream"):
        _ = rec.upstream
    rec = head(torch.randn(1, 3, 4), retain_upstream=True)
    rec.output.sum().backward()
    assert torch.equal(rec.upstream, torch.ones_like(rec.output))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_runs_on_cuda():
    head = CausalSelfAttention(4, 3, 2, device="cuda")
    assert head(torch.randn(2, 5, 4, device="cuda")).output.is_cuda


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: attention_forward(torch.ones(3, 4, dtype=torch.long), *[torch.ones(4, 2)] * 3), "x"),
        (lambda: attention_forward(torch.ones(3, 4), torch.ones(5, 2), torch.ones(4, 2),
                                   torch.ones(4, 2)), "w_q"),
        (lambda: attention_forward(torch.ones(3, 4), torch.ones(4, 2), torch.ones(4, 3),
                                   torch.ones(4, 2)), "d_k"),
        (lambda: attention_forward(torch.ones(3, 4), *[torch.ones(4, 2, dtype=torch.float64)] * 3),
         "w_q"),
        (lambda: attention_forward(torch.ones(3, 4), *[torch.ones(4, 2)] * 3, mask="future"), "mask"),
        (lambda: attention_forward(torch.ones(3, 4), *[torch.ones(4, 2)] * 3,
                                   mask=torch.ones(3, 3)), "mask"),
        (lambda: attention_forward(torch.ones(3, 4), *[torch.ones(4, 2)] * 3,
                                   mask=torch.ones(2, 2, dtype=torch.bool)), "mask"),
        (lambda: attention_forward(torch.ones(3, 4), *[torch.ones(4, 2)] * 3,
                                   mask=causal_mask(3).triu(1)), "mask"),
        (lambda: CausalSelfAttention(0, 2, 2), "d_in"),
        (lambda: CausalSelfAttention(3, 2, 2, init_std=0.0), "init_std"),
        (lambda: CausalSelfAttention(3, 2, 2)(torch.ones(3, 3)), "x"),
    ],
)
def test_bad_input_names_the_argument(call, argument):
    with pytest.raises(ValueError, match=argument):
        call()
