"""The benchmark helpers compute what they time."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from attention_dynamics import timing as timing_module
from attention_dynamics.book import benchmarking
from attention_dynamics.book.benchmarking import (
    TorchEncoderLM,
    _diagnosed_transformer_loss,
    _loop_sampler_and_filter,
    mamba_scan_benchmark,
    routing_diagnostics,
)
from attention_dynamics.gradients import advantage, compatibility, value_gradient
from attention_dynamics.heads import sample_head_problem
from attention_dynamics.models import Transformer, TransformerConfig
from attention_dynamics.models.mamba import selective_scan_chunked, selective_scan_sequential
from attention_dynamics.tasks.sticky_chain import bayes_log_predictive, symbol_means, transition_matrix
from attention_dynamics.timing import interleaved_median_seconds


def test_routing_diagnostics_match_the_closed_forms_and_autograd():
    """In float64: B and dL/dv read from the backward pass equal their closed forms
    u_i . v_j and alpha^T u, A equals B minus its attention-weighted mean, and dL/ds equals
    autograd's gradient of the scores; all zero outside the causal mask."""
    problem = sample_head_problem(torch.Generator().manual_seed(0), 2, 2, 9, 5, 4, 3)
    record, _ = problem.forward_backward(retain=("scores", "weights", "v"))
    diag = routing_diagnostics(record)
    u, mask = record.upstream, record.mask
    b = compatibility(u, record.v.detach(), mask)
    torch.testing.assert_close(diag["compatibility"], b, rtol=0, atol=1e-12)
    torch.testing.assert_close(diag["advantage"], advantage(record.weights.detach(), b),
                               rtol=0, atol=1e-12)
    torch.testing.assert_close(diag["score_grad"], record.scores.grad.masked_fill(~mask, 0),
                               rtol=0, atol=1e-12)
    torch.testing.assert_close(diag["value_grad"], value_gradient(record.weights.detach(), u),
                               rtol=0, atol=1e-12)
    assert diag["advantage"][..., ~mask].abs().max() == 0


def test_routing_diagnostics_need_the_retained_gradients():
    problem = sample_head_problem(torch.Generator().manual_seed(0), 1, 1, 4, 3, 2, 2)
    record, _ = problem.forward_backward()
    with pytest.raises(ValueError, match="weights, v: call retain_for_diagnostics"):
        routing_diagnostics(record)


class _ScriptedDraws:
    """A stand-in for numpy's ``Generator`` that hands out draws the test chose: the symbols of
    each sequence in turn (its first by ``integers``, each next one by ``choice``) and each
    sequence's noise (``standard_normal``); it keeps the symbol each ``choice`` followed and
    the probabilities it was asked to draw with."""

    def __init__(self, symbols, noise):
        self._symbols, self._noise = iter(symbols), iter(noise)
        self._previous = None
        self.choices = []

    def integers(self, high):
        self._previous = next(self._symbols)
        return self._previous

    def choice(self, n, p):
        self.choices.append((self._previous, n, np.asarray(p)))
        self._previous = next(self._symbols)
        return self._previous

    def standard_normal(self, shape):
        noise = next(self._noise)
        assert noise.shape == shape
        return noise


def test_loop_baseline_draws_from_the_chain_and_filters_exactly():
    """On draws the test chose (two paths, their noise), the baseline draws every next symbol
    from the transition row of the one before, and its filter gives the library's exact
    predictive on the inputs those draws make, x_t = mu[y_t] + noise."""
    transition, means = transition_matrix(), symbol_means().double()
    generator = np.random.default_rng(3)
    paths = generator.integers(8, size=(2, 30))  # every transition of the chain is possible
    noise = generator.standard_normal((2, 29, 20))
    draws = _ScriptedDraws(paths.flatten().tolist(), list(noise))
    predictive = _loop_sampler_and_filter(transition.numpy(), means.numpy(), 30, 2, draws)
    assert predictive.shape == (2, 29, 8)
    assert np.allclose(predictive.sum(-1), 1.0)
    assert [previous for previous, _, _ in draws.choices] == paths[:, :-1].flatten().tolist()
    for previous, n, p in draws.choices:
        assert n == 8 and np.array_equal(p, transition.numpy()[previous])
    for n in range(2):
        inputs = means.numpy()[paths[n, :-1]] + noise[n]
        ours = bayes_log_predictive(torch.from_numpy(inputs), transition, means, 1.0).exp()
        assert np.allclose(ours.numpy(), predictive[n], rtol=0, atol=1e-10)


def test_torch_encoder_baseline_is_a_causal_model_of_the_same_size():
    config = TransformerConfig(vocab_size=7, max_len=6, n_layers=2, n_heads=2, d_model=8)
    torch.manual_seed(0)
    baseline = TorchEncoderLM(config)
    ours = Transformer(config, torch.Generator().manual_seed(0))
    tokens = torch.randint(7, (2, 6), generator=torch.Generator().manual_seed(1))
    logits = baseline(tokens)
    assert logits.shape == (2, 6, 7)
    changed = tokens.clone()
    changed[:, 4:] = (changed[:, 4:] + 1) % 7
    torch.testing.assert_close(baseline(changed)[:, :4], logits[:, :4])
    assert not torch.allclose(baseline(changed)[:, 4:], logits[:, 4:])
    counts = [sum(p.numel() for p in m.parameters()) for m in (baseline, ours)]
    assert abs(counts[0] - counts[1]) / counts[1] < 0.1  # torch adds attention and norm biases


def test_diagnosed_transformer_step_reads_the_score_gradients_of_every_layer():
    config = TransformerConfig(vocab_size=7, max_len=6, n_layers=2, n_heads=2, d_model=8)
    model = Transformer(config, torch.Generator().manual_seed(0)).double()
    tokens = torch.randint(7, (3, 6), generator=torch.Generator().manual_seed(2))
    loss, records = _diagnosed_transformer_loss(model, tokens, tokens.roll(-1, dims=1))
    scores = [record.scores for record in records]
    for s in scores:
        s.retain_grad()
    loss.backward()
    for record, s in zip(records, scores, strict=True):
        diag = routing_diagnostics(record)
        torch.testing.assert_close(diag["score_grad"], s.grad.masked_fill(~record.mask, 0),
                                   rtol=0, atol=1e-12)


def test_both_mamba_scans_are_timed_on_the_same_problem(monkeypatch):
    """On a clock that only the scans move (the sequential one by 3 s a call, the chunked one
    by 1 s), the benchmark reports 3 s, 1 s and a speed-up of 3; and both scans were handed
    the very same inputs, on which they compute the same outputs."""
    now = [0.0]
    monkeypatch.setattr(timing_module, "time", SimpleNamespace(perf_counter=lambda: now[0]))
    calls = {"sequential": [], "chunked": []}

    def on_the_clock(name, scan, seconds):
        def timed(*inputs):
            calls[name].append((inputs, scan(*inputs)))
            now[0] += seconds
            return calls[name][-1][1]
        return timed

    monkeypatch.setattr(benchmarking, "selective_scan_sequential",
                        on_the_clock("sequential", selective_scan_sequential, 3.0))
    monkeypatch.setattr(benchmarking, "selective_scan_chunked",
                        on_the_clock("chunked", selective_scan_chunked, 1.0))
    timing = mamba_scan_benchmark(9, batch=2, d_inner=4, d_state=3, repeats=3)
    assert timing == {"sequential_s": 3.0, "chunked_s": 1.0, "chunked_speedup": 3.0}
    assert len(calls["sequential"]) == len(calls["chunked"]) == 4     # one warm-up, 3 repeats
    problem = calls["sequential"][0][0]
    assert problem[0].shape == (2, 9, 4) and problem[2].shape == (4, 3)
    for inputs, output in calls["sequential"] + calls["chunked"]:
        assert all(a is b for a, b in zip(inputs, problem, strict=True))
        torch.testing.assert_close(output, calls["sequential"][0][1], rtol=1e-5, atol=1e-6)


def test_interleaved_timing_calls_each_function_in_turns():
    calls = []
    timed = interleaved_median_seconds({"a": lambda: calls.append("a"),
                                        "b": lambda: calls.append("b")}, repeats=3, warmup=1)
    assert calls == ["a", "b"] * 4 and set(timed) == {"a", "b"}
    assert all(seconds >= 0 for seconds in timed.values())


def test_interleaved_timing_divides_a_turn_by_its_calls(monkeypatch):
    """On a clock that each call of ``a`` moves by 2 s and of ``b`` by 1 s, turns of three
    calls each give 2 s and 1 s per call; every turn holds three calls in a row."""
    now, calls = [0.0], []
    monkeypatch.setattr(timing_module, "time", SimpleNamespace(perf_counter=lambda: now[0]))

    def call(name, seconds):
        def timed():
            calls.append(name)
            now[0] += seconds
        return timed

    timed = interleaved_median_seconds({"a": call("a", 2.0), "b": call("b", 1.0)}, repeats=2,
                                       warmup=0, number=3)
    assert timed == {"a": 2.0, "b": 1.0}
    assert calls == ["a"] * 3 + ["b"] * 3 + ["a"] * 3 + ["b"] * 3
    with pytest.raises(ValueError, match="number=0"):
        interleaved_median_seconds({"a": call("a", 1.0)}, number=0)


def test_the_pin_cost_compares_pinned_and_unpinned_processes_taken_in_turns(monkeypatch):
    from attention_dynamics.book import benchmarking

    calls = []

    def fake_process(pinned: bool, steps: int) -> dict:
        calls.append(pinned)
        return {"seconds": {arch: (2.0 if pinned else 1.0) * steps
                            for arch in benchmarking.REFERENCE_MODELS},
                "capability": "AVX2" if pinned else "AVX512"}

    monkeypatch.setattr(benchmarking, "_step_seconds_in_a_process", fake_process)
    cost = benchmarking.pin_cost_benchmark(repeats=3, steps=5)
    assert calls == [True, False, False, True, True, False]
    assert cost["unpinned_capability"] == "AVX512"
    assert cost["transformer_pin_cost"] == cost["lstm_pin_cost"] == 2.0
    with pytest.raises(ValueError, match="repeats"):
        benchmarking.pin_cost_benchmark(repeats=0)


def test_a_process_measures_the_dispatch_it_was_given():
    from attention_dynamics.book.benchmarking import _step_seconds_in_a_process

    pinned = _step_seconds_in_a_process(True, 1)
    assert pinned["capability"] == "AVX2"
    assert set(pinned["seconds"]) == {"transformer", "mamba", "lstm"}
    assert all(seconds > 0 for seconds in pinned["seconds"].values())
