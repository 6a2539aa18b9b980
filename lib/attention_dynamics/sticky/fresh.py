"""Online training of the sticky-chain head: a fresh sequence of the chain every step.

:func:`~attention_dynamics.sticky.training.train` fits one fixed sequence per run, full-batch,
as Paper II does; a long run then memorises that sequence. Here every step draws new sequences
of the same chain (:func:`~attention_dynamics.tasks.sticky_chain.sample_sticky_chain`, each data
stream from its own seeded ``torch.Generator``, so a stream's seed fixes its sequences whatever
other streams run beside it), so the loss being descended
is an unbiased estimate of the population loss and nothing can be memorised. The update rules
and learning-rate schedules are those of :mod:`~attention_dynamics.sticky.training` (plain
gradient descent per group, SGD and EM-like schedules, or Adam).

What is recorded, every ``record_every`` steps, is measured on a fixed *probe* set of held-out
sequences (:func:`make_probe`), the same for every run and every record:

- the probe cross-entropy and its gap to the exact Bayes predictor (the forward filter,
  :func:`~attention_dynamics.tasks.sticky_chain.bayes_reference`) on the same sequences;
- how uniform the attention rows are (:func:`~attention_dynamics.sticky.analysis.attention_uniformity`)
  and how much of their mass goes to keys of the query's own hidden symbol
  (:func:`~attention_dynamics.sticky.analysis.symbol_routing`);
- the ratio ``|dL/ds| / |dL/dv|`` of the gradient norms in the scores and in the value vectors
  (:func:`score_value_gradients`);
- a copy of the weights, from which :func:`probe_settling` measures how far the attention rows
  and the value vectors still are from where training leaves them, and
  :func:`smoothed_probe_settling` the same on trajectories averaged over a window of records
  (which a jittering run needs).

Shapes: ``R`` runs, ``P`` probe sequences of ``N = T - 1`` positions, ``Q`` probe query rows,
``K`` records. Losses are mean cross-entropies in nats.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from attention_dynamics.sticky.analysis import (
    attention_rows,
    attention_uniformity,
    frame_precision,
    symbol_routing,
)
from attention_dynamics.sticky.model import HeadParams, check_batch, loss_and_grads
from attention_dynamics.sticky.training import (
    AdamUpdate,
    Schedule,
    check_every,
    is_due,
    rate_tensors,
    sgd_update,
)
from attention_dynamics.tasks.sticky_chain import (
    StickyChainData,
    bayes_reference,
    sample_sticky_chain,
)
from attention_dynamics.validation import check_choice, check_positive_int

FRESH_OPTIMIZERS = ("sgd", "adam")
"""Update rules :func:`train_fresh` accepts (those of ``training.train`` that need no fixed data)."""


@dataclass(frozen=True)
class FreshProbe:
    """A fixed set of ``P`` held-out sequences to measure every run on.

    Attributes:
        data: the sequences, batched (``symbols`` ``(P, T)``, ``inputs`` ``(P, N, d_x)``).
        rows: ``(Q,)`` int64 query positions, each in ``1..N-1``, whose attention rows are
            measured.
        bayes_cross_entropy: the exact Bayes predictor's mean cross-entropy over all ``P N``
            probe positions (nats).
    """

    data: StickyChainData
    rows: torch.Tensor
    bayes_cross_entropy: float

    @property
    def n_sequences(self) -> int:
        """``P``."""
        return self.data.inputs.shape[0]

    @property
    def hidden(self) -> torch.Tensor:
        """``(P, N)`` int64: the hidden symbol ``y_{t-1}`` behind each input ``x_t``."""
        return self.data.symbols[:, :-1]


def make_probe(sequence_length: int, n_sequences: int, generator: torch.Generator,
               row_stride: int = 8, dtype: torch.dtype = torch.float32) -> FreshProbe:
    """Draw ``n_sequences`` held-out sequences of ``sequence_length`` symbols and score Bayes.

    Args:
        sequence_length: ``T`` symbols per sequence (``N = T - 1`` positions), at least 3.
        n_sequences: ``P``.
        generator: a seeded CPU generator, seeded apart from every training stream.
        row_stride: measure every ``row_stride``-th query, from position ``row_stride - 1``
            (at least 1, since row 0 sees one key only).
        dtype: floating dtype of the inputs (that of the weights).
    """
    if not isinstance(sequence_length, int) or sequence_length < 3:
        raise ValueError(f"sequence_length must be an int >= 3; got {sequence_length!r}")
    check_positive_int("n_sequences", n_sequences)
    check_positive_int("row_stride", row_stride)
    if not isinstance(generator, torch.Generator):
        raise ValueError(f"generator must be a torch.Generator; got {type(generator).__name__}")
    data = sample_sticky_chain(sequence_length, generator, batch_size=n_sequences, dtype=dtype)
    rows = torch.arange(max(row_stride - 1, 1), sequence_length - 1, row_stride)
    return FreshProbe(data=data, rows=rows,
                      bayes_cross_entropy=float(bayes_reference(data).cross_entropy.mean()))


def _over_probe(params: HeadParams, probe: FreshProbe) -> tuple[HeadParams, torch.Tensor]:
    """Every run paired with every probe sequence: ``R P`` runs (run-major) and their inputs
    ``(R P, N, d_x)``."""
    n_probe, n_runs = probe.n_sequences, params.n_runs
    x = probe.data.inputs.to(params.w_q.device, params.w_q.dtype).repeat(n_runs, 1, 1)
    return params.map(lambda w: w.repeat_interleave(n_probe, dim=0)), x


def score_value_gradients(params: HeadParams, x: torch.Tensor, targets: torch.Tensor
                          ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Gradients of each run's mean cross-entropy in its scores and its value vectors.

    Autograd through the head with the scores ``s_ij = q_i . k_j / sqrt(d_k)`` and the values
    ``v_j = x_j W_V`` as the leaves (so the gradients are those of the loss as a function of
    ``s`` and ``v``, the other weights held).

    Args:
        params: the weights of ``R`` runs; x: ``(R, N, d_x)``; targets: ``(R, N)`` int64.

    Returns:
        ``(loss, dL/ds, dL/dv)``: ``(R,)`` nats, ``(R, N, N)`` (zero above the diagonal) and
        ``(R, N, d_v)``.
    """
    check_batch(params, x, targets)
    length = x.shape[1]
    with torch.enable_grad():
        scores = ((x @ params.w_q) @ (x @ params.w_k).transpose(1, 2)
                  / math.sqrt(params.w_q.shape[-1])).detach().requires_grad_()
        values = (x @ params.w_v).detach().requires_grad_()
        future = torch.ones(length, length, dtype=torch.bool, device=x.device).triu(1)
        weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
        logits = (weights @ values) @ params.w_o
        loss = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none").mean(dim=1)
        score_grad, value_grad = torch.autograd.grad(loss.sum(), [scores, values])
    return loss.detach(), score_grad, value_grad


@dataclass(frozen=True)
class ProbeMetrics:
    """What one set of weights does on the probe, per run (each ``(R,)``, float64).

    Attributes:
        loss: mean cross-entropy over all ``P N`` probe positions (nats).
        heldout_gap: ``loss`` minus the Bayes predictor's on the same positions (nats).
        attention_uniformity: mean over the probe rows and sequences of each row's entropy
            over ``log`` (number of visible keys): 1 for uniform attention.
        symbol_routing: mean over rows and sequences of the attention mass on keys of the
            query's own hidden symbol over their share of the visible keys (1 for uniform).
        score_value_gradient_ratio: ``|dL/ds|_F / |dL/dv|_F``, both over all probe sequences,
            with ``L`` the probe loss (:func:`score_value_gradients`).
    """

    loss: torch.Tensor
    heldout_gap: torch.Tensor
    attention_uniformity: torch.Tensor
    symbol_routing: torch.Tensor
    score_value_gradient_ratio: torch.Tensor


def probe_metrics(params: HeadParams, probe: FreshProbe) -> ProbeMetrics:
    """Measure the ``R`` runs of ``params`` on ``probe`` (see :class:`ProbeMetrics`)."""
    if not isinstance(probe, FreshProbe):
        raise ValueError(f"probe must be a FreshProbe (make_probe); got {type(probe).__name__}")
    n_runs, n_probe = params.n_runs, probe.n_sequences
    expanded, x = _over_probe(params, probe)
    device = x.device
    targets = probe.data.targets.to(device).repeat(n_runs, 1)
    loss, score_grad, value_grad = score_value_gradients(expanded, x, targets)
    rows = probe.rows.to(device)
    weights = attention_rows(expanded, x, rows)                                   # (R P, Q, N)
    uniformity = attention_uniformity(weights, rows).view(n_runs, -1).mean(dim=1)
    routing = symbol_routing(weights, rows, probe.hidden.to(device).repeat(n_runs, 1))
    score_norm = score_grad.double().view(n_runs, -1).norm(dim=1)
    value_norm = value_grad.double().view(n_runs, -1).norm(dim=1)
    # every probe sequence has the same N positions, so the mean of means is the pooled mean
    pooled_loss = loss.double().view(n_runs, n_probe).mean(dim=1)
    return ProbeMetrics(loss=pooled_loss.cpu(),
                        heldout_gap=(pooled_loss - probe.bayes_cross_entropy).cpu(),
                        attention_uniformity=uniformity.cpu(),
                        symbol_routing=routing.view(n_runs, n_probe).mean(dim=1).cpu(),
                        score_value_gradient_ratio=(score_norm / value_norm).cpu())


@dataclass
class FreshHistory:
    """What :func:`train_fresh` recorded (``K`` records, ``R`` runs).

    A record at step ``s`` describes the weights after ``s`` updates (step 0 is the
    initialisation); the last record is always the final weights. All metric tensors are
    ``(K, R)`` float64 on the CPU.

    Attributes:
        steps: ``(K,)`` int64 record steps.
        train_loss: the loss of the record step's fresh batch, before that step's update
            (nats); at the last record, the loss of one more fresh batch.
        probe_loss, heldout_gap, attention_uniformity, symbol_routing,
            score_value_gradient_ratio: :class:`ProbeMetrics` of the weights at each record.
        bayes_cross_entropy: the Bayes predictor's mean cross-entropy on the probe (nats).
        param_snapshots: the ``K`` weight snapshots (each a ``HeadParams`` of ``R`` runs).
        final_params: the weights after the last update.
        sequences_seen: ``(K,)`` int64, training sequences each run has been shown by then.
    """

    steps: torch.Tensor
    train_loss: torch.Tensor
    probe_loss: torch.Tensor
    heldout_gap: torch.Tensor
    attention_uniformity: torch.Tensor
    symbol_routing: torch.Tensor
    score_value_gradient_ratio: torch.Tensor
    bayes_cross_entropy: float
    param_snapshots: list[HeadParams]
    final_params: HeadParams
    sequences_seen: torch.Tensor


def _check_streams(streams: Sequence[int] | None, n_runs: int) -> list[int]:
    if streams is None:
        return list(range(n_runs))
    streams = list(streams)
    if (len(streams) != n_runs
            or any(not isinstance(s, int) or isinstance(s, bool) or s < 0 for s in streams)):
        raise ValueError(f"streams must give one non-negative int per run ({n_runs}); got "
                         f"{streams!r}")
    if set(streams) != set(range(max(streams) + 1)):
        raise ValueError(f"streams must use every index 0..{max(streams)} (no stream drawn for "
                         f"nothing); got {sorted(set(streams))}")
    return streams


def _check_stream_seeds(stream_seeds: Sequence[int], n_streams: int) -> list[int]:
    seeds = list(stream_seeds) if isinstance(stream_seeds, Sequence) else None
    if (seeds is None or len(seeds) != n_streams
            or any(not isinstance(s, int) or isinstance(s, bool) or s < 0 for s in seeds)
            or len(set(seeds)) != n_streams):
        raise ValueError(f"stream_seeds must give one distinct non-negative int per data stream "
                         f"({n_streams}); got {stream_seeds!r}")
    return seeds


def train_fresh(params: HeadParams, schedules: Schedule | Sequence[Schedule], steps: int,
                sequence_length: int, stream_seeds: Sequence[int], probe: FreshProbe,
                record_every: int = 10, sequences_per_step: int = 1,
                streams: Sequence[int] | None = None, optimizer: str = "sgd",
                draw_chunk: int = 50, adam_betas: tuple[float, float] = (0.9, 0.999),
                adam_eps: float = 1e-8,
                block_size: int = 64) -> FreshHistory:
    """Train ``R`` runs online on fresh sequences of the sticky chain; ``params`` is unchanged.

    Every step uses ``sequences_per_step`` new sequences of ``sequence_length`` symbols per
    data stream. Stream ``k`` draws them from its own generator, seeded with
    ``stream_seeds[k]``, by :func:`~attention_dynamics.tasks.sticky_chain.sample_sticky_chain`
    for ``draw_chunk`` steps at a time (one call per stream, step-major: the sampler loops over
    positions in Python, so one large draw costs about what one small one does). A stream's
    sequences therefore depend on its seed alone, not on how many streams run beside it. Run
    ``r`` gets the sequences of stream ``streams[r]``, so runs that share a stream (one seed
    under two schedules, say) see exactly the same data and differ only in their schedule.
    Each run's loss is its mean cross-entropy over all its positions of the step, its gradient
    the mean of the per-sequence gradients of
    :func:`~attention_dynamics.sticky.model.loss_and_grads`, and the update is ``training``'s
    (plain gradient descent with each run's per-group rates, or Adam).

    Args:
        params: initial weights of ``R`` runs (:func:`~attention_dynamics.sticky.model.init_params`).
        schedules: one schedule (a name in ``training.SCHEDULES`` or a mapping group -> rate)
            for all runs, or one per run.
        steps: number of updates (non-negative int).
        sequence_length: ``T`` symbols per training sequence (``T - 1`` positions), at least 2.
        stream_seeds: one distinct non-negative int per data stream (``n_streams`` of them,
            the number of distinct ``streams``): the only source of training data, so the same
            seeds (and the same ``params``) give the same history.
        probe: the held-out sequences measured at every record (:func:`make_probe`).
        record_every: record every so many steps (and at step 0 and at the end).
        sequences_per_step: sequences per run per step.
        streams: ``R`` stream indices using every index ``0..n_streams-1``; default
            ``0..R-1`` (every run its own data).
        optimizer: ``"sgd"`` (plain gradient descent per group) or ``"adam"``.
        draw_chunk: steps whose sequences are drawn together (always a whole chunk, so that
            the first ``s`` steps of a longer run see the same data as a run of ``s`` steps).
            Part of the data stream's definition: the same seed with another ``draw_chunk``
            gives other sequences.
        adam_betas, adam_eps: Adam's constants.
        block_size: queries per block in the fused forward/backward pass.

    Returns:
        A :class:`FreshHistory`.
    """
    check_choice("optimizer", optimizer, FRESH_OPTIMIZERS)
    if not isinstance(params, HeadParams):
        raise ValueError(f"params must be HeadParams (init_params); got {type(params).__name__}")
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
        raise ValueError(f"steps must be a non-negative int; got {steps!r}")
    if not isinstance(sequence_length, int) or isinstance(sequence_length, bool) \
            or sequence_length < 2:
        raise ValueError(f"sequence_length must be an int >= 2; got {sequence_length!r}")
    if not isinstance(probe, FreshProbe):
        raise ValueError(f"probe must be a FreshProbe (make_probe); got {type(probe).__name__}")
    if probe.data.inputs.shape[-1] != params.w_q.shape[1]:
        raise ValueError(f"probe inputs have d_x={probe.data.inputs.shape[-1]}, the weights "
                         f"d_x={params.w_q.shape[1]}")
    check_every("record_every", record_every, allow_none=False)
    check_positive_int("sequences_per_step", sequences_per_step)
    check_positive_int("draw_chunk", draw_chunk)
    stream_of = torch.tensor(_check_streams(streams, params.n_runs))
    n_streams, per_step = int(stream_of.max()) + 1, sequences_per_step
    generators = [torch.Generator().manual_seed(s)
                  for s in _check_stream_seeds(stream_seeds, n_streams)]
    rates = rate_tensors(schedules, params)
    params = params.map(torch.clone)
    update = AdamUpdate(params, adam_betas, adam_eps).update if optimizer == "adam" else sgd_update
    device, dtype = params.w_q.device, params.w_q.dtype
    # run r's j-th sequence of a step is sequence (step % draw_chunk) * per_step + j of
    # stream streams[r]'s current draw
    n_runs = params.n_runs
    stream_index = stream_of.repeat_interleave(per_step)
    within_step = torch.arange(per_step).repeat(n_runs)
    records, snapshots = [], []
    for step in range(steps + 1):
        if step % draw_chunk == 0:  # whole chunks, so a shorter run sees a prefix of the stream
            draws = [sample_sticky_chain(sequence_length, g, batch_size=draw_chunk * per_step,
                                         dtype=dtype) for g in generators]
            inputs = torch.stack([d.inputs for d in draws])      # (n_streams, chunk P, N, d_x)
            labels = torch.stack([d.targets for d in draws])     # (n_streams, chunk P, N)
        sequence = (step % draw_chunk) * per_step + within_step
        x = inputs[stream_index, sequence].to(device)
        targets = labels[stream_index, sequence].to(device)
        expanded = (params if per_step == 1
                    else params.map(lambda w: w.repeat_interleave(per_step, dim=0)))
        result = loss_and_grads(expanded, x, targets, with_grads=step < steps,
                                block_size=block_size)
        if is_due(step, record_every, steps):
            metrics = probe_metrics(params, probe)
            train_loss = result.loss.double().view(n_runs, per_step).mean(dim=1).cpu()
            records.append((step, train_loss, metrics))
            snapshots.append(params.map(torch.clone))
        if step < steps:
            grads = (result.grads if per_step == 1 else result.grads.map(
                lambda g: g.view(n_runs, per_step, *g.shape[1:]).mean(dim=1)))
            update(params, grads, rates)
    record_steps = torch.tensor([r[0] for r in records], dtype=torch.int64)

    def stacked(field: str) -> torch.Tensor:
        return torch.stack([getattr(r[2], field) for r in records])

    return FreshHistory(steps=record_steps, train_loss=torch.stack([r[1] for r in records]),
                        probe_loss=stacked("loss"), heldout_gap=stacked("heldout_gap"),
                        attention_uniformity=stacked("attention_uniformity"),
                        symbol_routing=stacked("symbol_routing"),
                        score_value_gradient_ratio=stacked("score_value_gradient_ratio"),
                        bayes_cross_entropy=probe.bayes_cross_entropy,
                        param_snapshots=snapshots, final_params=params,
                        sequences_seen=record_steps * per_step)


@dataclass(frozen=True)
class ProbeSettling:
    """How far the attention rows and the value vectors on the probe are from their final
    state, per record (``K`` records, ``R`` runs), in float64.

    Attributes:
        steps: ``(K,)`` the record steps.
        attention_remaining: ``(K, R)`` mean total-variation distance between the probe's
            attention rows (all sequences, ``probe.rows``) at the record and at the end, over
            the same at the start: 1 at the start, 0 at the end.
        value_remaining: ``(K, R)`` ``|V_k - V_end|_F / |V_0 - V_end|_F`` for the value vectors
            ``V = X W_V`` of all probe positions.
        attention_total: ``(R,)`` mean total-variation distance between the first and the last
            record's rows (how far attention moves at all, on a 0-to-1 scale).
        value_total: ``(R,)`` ``|V_end - V_0|_F / |V_0|_F``.
    """

    steps: torch.Tensor
    attention_remaining: torch.Tensor
    value_remaining: torch.Tensor
    attention_total: torch.Tensor
    value_total: torch.Tensor


def probe_settling(history: FreshHistory, probe: FreshProbe) -> ProbeSettling:
    """:func:`~attention_dynamics.sticky.analysis.frame_precision` on every probe sequence,
    pooled over the probe.

    Each (run, probe sequence) pair is measured by ``frame_precision``; the attention
    distances are then averaged over the sequences (so over all probe rows) and the value
    distances combined into one Frobenius norm over all probe positions, before dividing by
    their values at the start.
    """
    if len(history.param_snapshots) < 2:
        raise ValueError("history must hold at least 2 records (train at least 1 step)")
    n_runs, n_probe = history.final_params.n_runs, probe.n_sequences
    expanded = [_over_probe(p, probe)[0] for p in history.param_snapshots]
    _, x = _over_probe(history.param_snapshots[0], probe)
    frames = frame_precision(expanded, history.steps, x, probe.rows.to(x.device))
    # undo frame_precision's normalisation per (run, sequence) to pool the raw distances
    attention = (frames.attention_remaining * frames.attention_total).view(-1, n_runs, n_probe)
    first_norm = (x @ expanded[0].w_v).double().flatten(1).norm(dim=1).cpu()
    value_sq = (frames.value_remaining * frames.value_total * first_norm).pow(2)
    values = value_sq.view(-1, n_runs, n_probe).sum(dim=2).sqrt()
    attention = attention.mean(dim=2)
    return ProbeSettling(steps=history.steps.clone(),
                         attention_remaining=attention / attention[0],
                         value_remaining=values / values[0],
                         attention_total=attention[0],
                         value_total=values[0] / first_norm.pow(2).view(n_runs, n_probe)
                         .sum(dim=1).sqrt())



def smoothed_probe_settling(history: FreshHistory, probe: FreshProbe, window: int
                            ) -> ProbeSettling:
    """:func:`probe_settling` on time-averaged trajectories: each record's attention rows and
    value vectors on the probe replaced by their mean over the last ``window`` records.

    A run whose values jitter from record to record around where they have settled (a high
    value rate on fresh data) stays as far from the last record as the jitter is large, so its
    raw half-way point comes late whatever its trend. Averaging over a window fixed in advance
    takes the jitter out and keeps the trend. Record ``k`` averages records
    ``max(0, k - window + 1) .. k`` (record 0 is the initial state itself, and each average sees
    only records up to its own), and the state that training leaves is the average of the last
    ``window`` records. Averaged attention rows are still distributions, so their distances are
    mean total variations, as in :func:`probe_settling`; averaged values are pooled into one
    Frobenius norm over all probe positions.

    Args:
        history: a :func:`train_fresh` history of ``R`` runs and ``K >= 2`` records.
        probe: the probe it was measured on.
        window: records averaged, a positive int at most ``K``; 1 gives the numbers of
            :func:`probe_settling`.

    Returns:
        A :class:`ProbeSettling` of the averaged trajectories: ``(K, R)`` remaining distances,
        and ``attention_total``, ``value_total`` ``(R,)`` between the averaged first and last
        states (the values' relative to ``|V_0|_F``).
    """
    return _settling_against_end(history, probe, window, average=window)


def end_window_settling(history: FreshHistory, probe: FreshProbe, window: int) -> ProbeSettling:
    """:func:`probe_settling` against the mean of the last ``window`` records instead of the
    last record: each record's own (unaveraged) attention rows and value vectors on the probe,
    their distance to that end state. The records of the end window keep a distance of the size
    of the run's jitter, which a settling rule can take as its floor (see
    :func:`~attention_dynamics.measures.settling.jitter_aware_settling_step`).

    Args:
        history: a :func:`train_fresh` history of ``R`` runs and ``K >= 2`` records.
        probe: the probe it was measured on.
        window: records averaged into the end state, a positive int at most ``K``.

    Returns:
        A :class:`ProbeSettling`: ``(K, R)`` remaining distances, and ``attention_total``,
        ``value_total`` ``(R,)`` between the first record and the end state (the values'
        relative to ``|V_0|_F``).
    """
    return _settling_against_end(history, probe, window, average=1)


def _settling_against_end(history: FreshHistory, probe: FreshProbe, window: int, average: int
                          ) -> ProbeSettling:
    """Each record's state averaged over its last ``average`` records, against the end state
    (the mean of the last ``window`` records); see :func:`smoothed_probe_settling`."""
    snapshots = history.param_snapshots
    if len(snapshots) < 2:
        raise ValueError("history must hold at least 2 records (train at least 1 step)")
    check_positive_int("window", window)
    if window > len(snapshots):
        raise ValueError(f"window must be at most the {len(snapshots)} records; got {window}")
    n_runs = history.final_params.n_runs
    _, x = _over_probe(snapshots[0], probe)
    rows = probe.rows.to(x.device)

    def state(params: HeadParams) -> tuple[torch.Tensor, torch.Tensor]:
        """Rows ``(R P, Q, N)`` and values ``(R P, N, d_v)`` on the probe, float64."""
        expanded = _over_probe(params, probe)[0]
        return attention_rows(expanded, x, rows).double(), (x @ expanded.w_v).double()

    def averaged(states) -> tuple[torch.Tensor, torch.Tensor]:
        return tuple(torch.stack(part).mean(dim=0) for part in zip(*states, strict=True))

    final_rows, final_values = averaged([state(p) for p in snapshots[-window:]])
    recent = deque(maxlen=average)
    attention, values = [], []
    for params in snapshots:
        recent.append(state(params))
        current_rows, current_values = averaged(recent)
        drift = 0.5 * (current_rows - final_rows).abs().sum(dim=-1)           # (R P, Q)
        attention.append(drift.view(n_runs, -1).mean(dim=1))
        values.append((current_values - final_values).view(n_runs, -1).norm(dim=1))
    attention, values = torch.stack(attention).cpu(), torch.stack(values).cpu()
    first_norm = state(snapshots[0])[1].view(n_runs, -1).norm(dim=1).cpu()
    return ProbeSettling(steps=history.steps.clone(),
                         attention_remaining=attention / attention[0],
                         value_remaining=values / values[0],
                         attention_total=attention[0],
                         value_total=values[0] / first_norm)
