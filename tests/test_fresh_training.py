"""Online training on fresh sticky-chain sequences (sticky.fresh) and its probe measures."""

import math

import pytest
import torch
import torch.nn.functional as F

from attention_dynamics.sticky import fresh as fr
from attention_dynamics.sticky import model as sm
from attention_dynamics.sticky.analysis import frame_precision
from attention_dynamics.sticky.training import scaled_schedule
from attention_dynamics.tasks.sticky_chain import bayes_reference, sample_sticky_chain


def _probe(T=48, n=3, seed=99, dtype=torch.float32):
    return fr.make_probe(T, n, torch.Generator().manual_seed(seed), row_stride=4, dtype=dtype)


def _train(seed=0, steps=12, T=40, runs=(1, 2), probe=None, **kwargs):
    """Train ``runs``; data stream k is seeded with ``seed + k``."""
    kwargs.setdefault("record_every", 4)
    kwargs.setdefault("draw_chunk", 5)
    streams = kwargs.get("streams") or range(len(runs))
    stream_seeds = kwargs.pop("stream_seeds", [seed + k for k in range(max(streams) + 1)])
    return fr.train_fresh(sm.init_params(list(runs)), kwargs.pop("schedules", "em"), steps, T,
                          stream_seeds, probe or _probe(), **kwargs)


def _fields(history):
    return {name: getattr(history, name) for name in
            ("steps", "train_loss", "probe_loss", "heldout_gap", "attention_uniformity",
             "symbol_routing", "score_value_gradient_ratio", "sequences_seen")}


def test_same_seed_same_history_other_seed_other_history():
    first, again, other = _train(seed=3), _train(seed=3), _train(seed=4)
    for name, value in _fields(first).items():
        assert torch.equal(value, _fields(again)[name]), name
    for a, b in zip(first.param_snapshots, again.param_snapshots, strict=True):
        assert all(torch.equal(a.tensors()[k], b.tensors()[k]) for k in sm.PARAM_NAMES)
    assert not torch.equal(first.final_params.w_v, other.final_params.w_v)
    assert first.steps.tolist() == [0, 4, 8, 12] and first.probe_loss.shape == (4, 2)


def test_a_streams_data_do_not_depend_on_the_other_streams():
    """Two runs trained beside a third (or with their streams listed in another order) follow
    exactly the history they follow alone: each stream draws from its own seed."""
    alone = _train(runs=(1, 2), stream_seeds=[5, 6])
    beside = _train(runs=(1, 2, 3), stream_seeds=[5, 6, 7])
    swapped = _train(runs=(2, 1), stream_seeds=[6, 5])
    for name in ("w_q", "w_v"):
        torch.testing.assert_close(getattr(beside.final_params, name)[:2],
                                   getattr(alone.final_params, name), rtol=1e-6, atol=1e-7)
        torch.testing.assert_close(getattr(swapped.final_params, name).flip(0),
                                   getattr(alone.final_params, name), rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(beside.probe_loss[:, :2], alone.probe_loss, rtol=1e-6, atol=0)


def test_a_shorter_run_sees_a_prefix_of_the_stream():
    short, long = _train(steps=8), _train(steps=16)
    for k in range(len(short.steps)):  # records at 0, 4, 8 in both
        assert torch.equal(short.param_snapshots[k].w_q, long.param_snapshots[k].w_q)
    assert torch.equal(short.probe_loss, long.probe_loss[:3])


def test_one_step_is_the_mean_gradient_over_fresh_sequences():
    """Rebuild two SGD steps by hand from the same draws: each stream its own generator,
    step-major, then the sequences of a step."""
    T, per_step, chunk, streams = 30, 2, 3, [1, 0]
    schedules = [scaled_schedule(scale=5), scaled_schedule(value=10, scale=5)]
    params = sm.init_params([5, 6], dtype=torch.float64)
    history = fr.train_fresh(params, schedules, 2, T, [8, 11], _probe(dtype=torch.float64),
                             record_every=1, sequences_per_step=per_step, streams=streams,
                             draw_chunk=chunk)
    drawn = [sample_sticky_chain(T, torch.Generator().manual_seed(seed),
                                 batch_size=chunk * per_step, dtype=torch.float64)
             for seed in (8, 11)]
    current = params.map(torch.clone)
    for step in range(2):
        grads = []
        for j in range(per_step):  # run r's j-th sequence: step * 2 + j of stream streams[r]
            x = torch.stack([drawn[k].inputs[step * per_step + j] for k in streams])
            y = torch.stack([drawn[k].targets[step * per_step + j] for k in streams])
            grads.append(sm.loss_and_grads(current, x, y).grads)
        for r, schedule in enumerate(schedules):
            for name in sm.PARAM_NAMES:
                mean = (getattr(grads[0], name)[r] + getattr(grads[1], name)[r]) / 2
                getattr(current, name)[r] -= schedule[name] * mean
        for name in sm.PARAM_NAMES:
            torch.testing.assert_close(getattr(history.param_snapshots[step + 1], name),
                                       getattr(current, name), rtol=1e-12, atol=1e-14)


def test_score_and_value_gradients_follow_the_routing_law():
    """Autograd in (s, v) against the closed form dL/ds_ij = alpha_ij (u_i.v_j - u_i.o_i),
    dL/dv_j = sum_i alpha_ij u_i with u_i = dL/do_i; and X^T dL/dv against the model's dL/dW_V."""
    params = sm.init_params([1, 2], dtype=torch.float64).map(lambda w: w * 8)
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(2, 25, 20, generator=generator, dtype=torch.float64)
    y = torch.randint(8, (2, 25), generator=generator)
    loss, ds, dv = fr.score_value_gradients(params, x, y)
    record, logits = sm.forward_record(params, x)
    alpha, v = record.weights, x @ params.w_v
    probs = logits.softmax(-1)
    u = (probs - F.one_hot(y, 8).double()) @ params.w_o.transpose(1, 2) / x.shape[1]
    out = alpha @ v
    expected_ds = alpha * (u @ v.transpose(1, 2) - (u * out).sum(-1, keepdim=True))
    torch.testing.assert_close(ds, expected_ds, rtol=1e-10, atol=1e-14)
    torch.testing.assert_close(dv, alpha.transpose(1, 2) @ u, rtol=1e-10, atol=1e-14)
    assert float(ds.triu(1).abs().max()) == 0.0
    step = sm.loss_and_grads(params, x, y)
    torch.testing.assert_close(loss, step.loss, rtol=1e-12, atol=0)
    torch.testing.assert_close(x.transpose(1, 2) @ dv, step.grads.w_v, rtol=1e-10, atol=1e-14)


def test_probe_metrics_against_a_brute_force_loop():
    probe = _probe(T=20, n=2, dtype=torch.float64)
    params = sm.init_params([3, 4], dtype=torch.float64).map(lambda w: w * 6)
    metrics = fr.probe_metrics(params, probe)
    bayes = bayes_reference(probe.data).cross_entropy.mean()
    for r in range(2):
        losses, entropies, routing, ds_sq, dv_sq = [], [], [], 0.0, 0.0
        for p in range(2):
            run = params.select(r)
            x, y = probe.data.inputs[p:p + 1], probe.data.targets[p:p + 1]
            record, logits = sm.forward_record(run, x)
            losses.append(F.cross_entropy(logits[0], y[0]).item())
            _, ds, dv = fr.score_value_gradients(run, x, y)
            ds_sq += ds.pow(2).sum().item() / 4  # the pooled loss is the mean over 2 sequences
            dv_sq += dv.pow(2).sum().item() / 4
            hidden = probe.hidden[p]
            for i in probe.rows.tolist():
                row = record.weights[0, i, : i + 1]
                entropies.append(-sum(a * math.log(a) for a in row.tolist() if a > 0)
                                 / math.log(i + 1))
                same = [j for j in range(i + 1) if hidden[j] == hidden[i]]
                routing.append(sum(row[j].item() for j in same) / (len(same) / (i + 1)))
        assert metrics.loss[r].item() == pytest.approx(sum(losses) / 2, rel=1e-10)
        assert metrics.heldout_gap[r].item() == pytest.approx(sum(losses) / 2 - bayes.item(),
                                                              rel=1e-9)
        assert metrics.attention_uniformity[r].item() == pytest.approx(
            sum(entropies) / len(entropies), rel=1e-10)
        assert metrics.symbol_routing[r].item() == pytest.approx(sum(routing) / len(routing),
                                                                 rel=1e-10)
        assert metrics.score_value_gradient_ratio[r].item() == pytest.approx(
            math.sqrt(ds_sq / dv_sq), rel=1e-9)


def test_probe_settling_pools_frame_precision():
    probe = _probe(T=30, n=2)
    history = _train(steps=10, probe=probe, schedules=scaled_schedule(scale=30))
    pooled = fr.probe_settling(history, probe)
    assert pooled.attention_remaining[0].tolist() == pytest.approx([1.0, 1.0])
    assert pooled.value_remaining[-1].abs().max().item() == pytest.approx(0.0, abs=1e-12)
    # one probe sequence: exactly frame_precision on that sequence
    single = fr.FreshProbe(data=sample_sticky_chain(30, torch.Generator().manual_seed(99),
                                                    batch_size=1), rows=probe.rows,
                           bayes_cross_entropy=0.0)
    alone = fr.probe_settling(history, single)
    direct = frame_precision(history.param_snapshots, history.steps,
                             single.data.inputs.expand(2, -1, -1), single.rows)
    torch.testing.assert_close(alone.attention_remaining, direct.attention_remaining)
    torch.testing.assert_close(alone.value_remaining, direct.value_remaining)
    # two sequences: the raw distances, pooled by hand
    x = probe.data.inputs
    for r in range(2):
        def values(params, r=r):
            return x @ params.w_v[r]
        end = values(history.final_params)
        dist = [(values(p) - end).double().norm().item() for p in history.param_snapshots]
        assert pooled.value_remaining[:, r].tolist() == pytest.approx(
            [d / dist[0] for d in dist], rel=1e-5)


def test_training_lowers_the_probe_loss_and_a_zero_routing_rate_keeps_attention_uniform():
    """Fresh-data training: the loss on the fixed probe falls below its start, in the run that
    trains everything and in an identically trained head whose attention is held uniform
    (W_Q = W_K = 0, routing rate 0), which keeps it uniform while the other's moves. (Whether
    the full head ends below log 8 and below that null is the ledger's.)"""
    params = sm.init_params([0, 1])
    params.w_q[1], params.w_k[1] = 0.0, 0.0
    schedules = [scaled_schedule(scale=30), scaled_schedule(routing=0.0, scale=30)]
    probe = fr.make_probe(128, 4, torch.Generator().manual_seed(7))
    history = fr.train_fresh(params, schedules, 300, 128, [1], probe, record_every=100,
                             streams=[0, 0])
    assert torch.isfinite(history.probe_loss).all()
    assert (history.probe_loss[-1] < history.probe_loss[0]).all()
    uniformity = history.attention_uniformity
    assert uniformity[:, 1].tolist() == pytest.approx([1.0] * 4)
    assert ((uniformity > 0) & (uniformity <= 1 + 1e-6)).all()  # float32 weights
    assert abs(uniformity[-1, 0] - uniformity[0, 0]) > 1e-6  # the trained routing moves it
    assert history.heldout_gap[-1, 0] > 0  # nothing beats the Bayes predictor on average


def test_adam_runs_and_differs_from_sgd():
    sgd, adam = _train(optimizer="sgd"), _train(optimizer="adam", schedules="sgd")
    assert not torch.equal(sgd.final_params.w_q, adam.final_params.w_q)
    assert torch.isfinite(adam.probe_loss).all()


@pytest.mark.parametrize("kwargs, match", [
    (dict(steps=-1), "steps"),
    (dict(T=1), "sequence_length"),
    (dict(record_every=0), "record_every"),
    (dict(sequences_per_step=0), "sequences_per_step"),
    (dict(draw_chunk=0), "draw_chunk"),
    (dict(streams=[0]), "streams"),
    (dict(streams=[0, 2]), "streams"),
    (dict(stream_seeds=[3]), "stream_seeds"),
    (dict(stream_seeds=[3, 3]), "stream_seeds"),
    (dict(stream_seeds=[3, -1]), "stream_seeds"),
    (dict(stream_seeds=7), "stream_seeds"),
    (dict(optimizer="exact-values"), "optimizer"),
    (dict(schedules=["sgd"] * 3), "schedules"),
    (dict(schedules="fast"), "schedule"),
])
def test_bad_arguments_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        _train(**kwargs)


def test_bad_probe_and_probe_arguments_raise():
    params = sm.init_params([0])
    with pytest.raises(ValueError, match="probe"):
        fr.train_fresh(params, "sgd", 1, 20, [0], None)
    with pytest.raises(ValueError, match="generator"):
        fr.make_probe(20, 1, 0)
    with pytest.raises(ValueError, match="sequence_length"):
        fr.make_probe(2, 1, torch.Generator())
    with pytest.raises(ValueError, match="n_sequences"):
        fr.make_probe(20, 0, torch.Generator())
    with pytest.raises(ValueError, match="row_stride"):
        fr.make_probe(20, 1, torch.Generator(), row_stride=0)
