"""Four architectures side by side: build them at one parameter count, train, score, probe routing.

Chapter 5 compares a transformer, a Mamba, an LSTM and the per-position MLP on the same
tasks. This module holds what that comparison needs beyond the models themselves:

- a registry (:data:`ARCHITECTURES`, :func:`architecture_config`, :func:`build_model`,
  :func:`matched_config`) that builds any of the four from its sizes, or at the width that
  brings it nearest a target number of parameters;
- :func:`train_and_evaluate`, one seeded training run and its held-out scores (entropy MAE in
  bits, and recall accuracy on associative recall);
- routing probes on associative recall: which stored pair a query reads, from the mixing
  weights (:func:`mixing_weights`, :func:`queried_pair_share`, :func:`offset_profile`) or,
  for any model, from input
  attributions (:func:`input_attributions`, :func:`attribution_share`);
- the closed-form gradient of a selective scan with respect to its implicit attention and to
  the ``Delta``, ``B``, ``C`` that build it (:func:`scan_routing_gradients`), the Mamba
  counterpart of chapter 1's routing law, and :func:`mamba_routing_gradients`, which reads it
  off a model's backward pass; :func:`transformer_score_gradients` does the same for softmax
  scores, and :func:`zero_sum_fraction` measures what separates the two: whether a gradient
  only moves weight between positions or also changes a row's total.

Every model maps tokens ``(B, T)`` int64 to logits ``(B, T, vocab)``, embeds tokens with a
module named ``embed`` and normalises its last stream with one named ``norm_final`` before the
tied head; the probes rely on those two names.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable
from dataclasses import dataclass

import torch
from torch import nn

from .attention import causal_mask
from .metrics import EntropyReport, TaskBatch, evaluate
from .models.lstm import LSTM, LSTMConfig
from .models.mamba import Mamba, MambaConfig, mamba_implicit_attention
from .models.mlp import MLP, MLPConfig
from .models.sizing import SizeMatch, count_parameters, match_parameters
from .models.transformer import Transformer, TransformerConfig
from .runtime import check_choice, evaluation_mode
from .sequence_training import (
    SequenceTrainingConfig,
    SequenceTrainingHistory,
    sequence_loss,
    train_sequence_model,
)
from .tasks.associative_recall import AssociativeRecallTask, recall_accuracy
from .validation import check_float_tensor

ARCHITECTURES = ("transformer", "mamba", "lstm", "mlp")
"""The registered architectures, in the order the book tables them."""

_CONFIGS = {"transformer": TransformerConfig, "mamba": MambaConfig, "lstm": LSTMConfig,
            "mlp": MLPConfig}
_MODELS = {TransformerConfig: Transformer, MambaConfig: Mamba, LSTMConfig: LSTM, MLPConfig: MLP}
_SIZE_FIELD = {"transformer": "d_model", "mamba": "d_model", "lstm": "d_model", "mlp": "d_ff"}
"""The size :func:`matched_config` varies: the width, except for the MLP, whose hidden layer
grows at the transformer's residual width (as :meth:`MLPConfig.matching` sizes it)."""


def architecture_config(arch: str, vocab_size: int, max_len: int, **sizes):
    """The config dataclass of ``arch`` with these sizes (the config's own defaults elsewhere).

    Args:
        arch: one of :data:`ARCHITECTURES`.
        vocab_size, max_len: the task's vocabulary and longest sequence.
        sizes: fields of the architecture's config (``n_layers``, ``d_model``, ``d_state``, ...).

    Raises:
        ValueError: for an unknown ``arch`` or a size the config does not have.
    """
    check_choice("arch", arch, ARCHITECTURES)
    cls = _CONFIGS[arch]
    fields = {f.name for f in dataclasses.fields(cls)} - {"vocab_size", "max_len"}
    unknown = sorted(set(sizes) - fields)
    if unknown:
        raise ValueError(f"sizes has fields {unknown} that {cls.__name__} lacks; it takes "
                         f"{sorted(fields)}")
    return cls(vocab_size=vocab_size, max_len=max_len, **sizes)


def build_model(config, generator: torch.Generator) -> nn.Module:
    """The model of ``config`` (any registered config), its weights drawn from ``generator`` (CPU)."""
    if type(config) not in _MODELS:
        raise ValueError(f"config must be one of {[c.__name__ for c in _MODELS]}; got "
                         f"{type(config).__name__}")
    return _MODELS[type(config)](config, generator)


def architecture_of(config) -> str:
    """The registry name of a config, e.g. ``"mamba"`` for a
    :class:`~attention_dynamics.models.mamba.MambaConfig`."""
    for name, cls in _CONFIGS.items():
        if isinstance(config, cls):
            return name
    raise ValueError(f"config must be one of {[c.__name__ for c in _MODELS]}; got "
                     f"{type(config).__name__}")


def matched_config(arch: str, vocab_size: int, max_len: int, target: int, multiple_of: int = 1,
                   high: int = 2048, **sizes) -> tuple[object, SizeMatch]:
    """The config of ``arch`` whose parameter count is nearest ``target``, and the match.

    The other ``sizes`` are fixed; the one varied is the width ``d_model`` (transformer, Mamba,
    LSTM) or the hidden width ``d_ff`` (MLP). For a transformer, ``d_ff`` follows the width as
    ``4 d_model`` unless it is given, and ``multiple_of`` should be the number of heads.

    Args:
        arch: one of :data:`ARCHITECTURES`.
        vocab_size, max_len: the task's vocabulary and longest sequence.
        target: the parameter count to approach (typically that of the reference model).
        multiple_of: the step of allowed widths.
        high: the largest width tried.
        sizes: the fixed fields of the config.
    """
    check_choice("arch", arch, ARCHITECTURES)
    field = _SIZE_FIELD[arch]
    if field in sizes:
        raise ValueError(f"sizes must not fix {field!r}: it is the size matched_config chooses "
                         f"for {arch}")
    fixed_ff = arch == "transformer" and sizes.get("d_ff") is not None

    def config_of(width: int):
        extra = {} if arch != "transformer" or fixed_ff else {"d_ff": 4 * width}
        return architecture_config(arch, vocab_size, max_len, **(sizes | extra | {field: width}))

    match = match_parameters(lambda width: build_model(config_of(width), torch.Generator()),
                             target, low=multiple_of, high=high, multiple_of=multiple_of)
    return config_of(match.size), match


@dataclass
class ArchitectureRun:
    """One training run of one architecture on one task, scored on held-out batches.

    Attributes:
        arch: the registry name.
        seed: the seed of the run (initial weights and training batches).
        n_parameters: trainable scalars of the model.
        report: the :class:`~attention_dynamics.metrics.EntropyReport` against the Bayes
            predictive (bits); on associative recall the Bayes entropy is 0 everywhere.
        accuracy: on associative recall, the fraction of queries answered by the argmax;
            ``None`` on other tasks.
        history: the training losses and any checkpoints kept.
        seconds: wall time of training and scoring.
    """

    arch: str
    seed: int
    n_parameters: int
    report: EntropyReport
    accuracy: float | None
    history: SequenceTrainingHistory
    seconds: float


def train_and_evaluate(config, task, training: SequenceTrainingConfig, seed: int,
                       eval_batches: list[TaskBatch], device: torch.device | str = "cpu",
                       checkpoint_steps: Iterable[int] = ()) -> tuple[nn.Module, ArchitectureRun]:
    """Build the model of ``config``, train it on ``task`` and score it on ``eval_batches``.

    The initial weights come from a CPU generator seeded with ``seed``, the training batches
    from a generator on ``device`` seeded with ``seed + 1``, so a run is fixed by its seed and
    two architectures given the same seed see the same batches.

    Args:
        config: a registered config (see :func:`architecture_config`).
        task: a wind-tunnel task with ``sample(batch_size, generator)``.
        training: the optimiser's settings.
        seed: a non-negative int.
        eval_batches: held-out batches of ``task``, on ``device``.
        device: where to train.
        checkpoint_steps: steps after which to keep the weights (see
            :func:`~attention_dynamics.sequence_training.train_sequence_model`).

    Returns:
        The trained model (on ``device``, in eval mode) and its :class:`ArchitectureRun`.
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int; got {seed!r}")
    if not eval_batches:
        raise ValueError("eval_batches must be a non-empty list of TaskBatch")
    start = time.perf_counter()
    device = torch.device(device)
    model = build_model(config, torch.Generator().manual_seed(seed)).to(device)
    data = torch.Generator(device=device).manual_seed(seed + 1)
    history = train_sequence_model(model, task, training, data,
                                   checkpoint_steps=list(checkpoint_steps))
    model.eval()
    report = evaluate(model, eval_batches)
    accuracy = None
    if isinstance(task, AssociativeRecallTask):
        with torch.no_grad():
            hits = [recall_accuracy(model(b.tokens), b) * b.mask.sum().item() for b in eval_batches]
        accuracy = sum(hits) / sum(b.mask.sum().item() for b in eval_batches)
    return model, ArchitectureRun(arch=architecture_of(config), seed=seed,
                                  n_parameters=count_parameters(model), report=report,
                                  accuracy=accuracy, history=history,
                                  seconds=time.perf_counter() - start)


def final_representations(model: nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    """``(B, T, d_model)``: the normed last stream that the tied head reads, without gradients.

    Read from the output of the model's ``norm_final`` module, so it works for every registered
    architecture.
    """
    if not isinstance(getattr(model, "norm_final", None), nn.Module):
        raise ValueError("model must have a norm_final module (every registered architecture has)")
    captured = []
    handle = model.norm_final.register_forward_hook(lambda _m, _i, out: captured.append(out))
    try:
        with torch.no_grad():
            model(tokens)
    finally:
        handle.remove()
    return captured[-1]


def _check_recall(task, batch) -> None:
    if not isinstance(task, AssociativeRecallTask):
        raise ValueError(f"task must be an AssociativeRecallTask; got {type(task).__name__}")
    if not isinstance(batch, TaskBatch) or tuple(batch.tokens.shape[1:]) != (task.length,):
        raise ValueError(f"batch must be a TaskBatch of the task's length {task.length}")


def queried_pair_positions(task: AssociativeRecallTask, batch) -> torch.Tensor:
    """``(B, M, 2)`` int64: the key and value positions of the pair each query asks for.

    Found from the tokens (the stored key equal to the query), so it holds for any batch of the
    task's layout.
    """
    _check_recall(task, batch)
    tokens = batch.tokens
    stored_keys = tokens[:, 0:2 * task.n_pairs:2]                          # (B, N)
    queries = tokens[:, task.query_positions.to(tokens.device)]            # (B, M)
    pair = (queries[:, :, None] == stored_keys[:, None, :]).long().argmax(-1)  # (B, M)
    return torch.stack([2 * pair, 2 * pair + 1], dim=-1)


def _check_weights(weights: torch.Tensor, task: AssociativeRecallTask, batch) -> None:
    check_float_tensor("weights", weights, min_dim=3, max_dim=3)
    length = task.length
    if tuple(weights.shape) != (batch.tokens.shape[0], length, length):
        raise ValueError(f"weights must have shape (B, T, T) = ({batch.tokens.shape[0]}, {length}, "
                         f"{length}); got {tuple(weights.shape)}")
    if (weights < 0).any():
        raise ValueError("weights must be non-negative (pass |M| for an implicit attention)")


def queried_pair_share(weights: torch.Tensor, task: AssociativeRecallTask, batch,
                       delay: int = 0) -> torch.Tensor:
    """Share of each query's mixing mass on the queried pair, ``(B, M)`` in ``[0, 1]``.

    For the row of query position ``t``: the mass on the two positions ``2j + delay`` and
    ``2j + 1 + delay`` of the queried pair ``j``, divided by the mass on the ``2N`` positions
    ``delay .. 2N - 1 + delay``. Uniform mixing over those positions gives ``1 / N``.

    ``delay`` is for a model whose mixing input at position ``s`` holds the tokens of earlier
    positions: a Mamba's scan input is a causal convolution of the last ``d_conv`` tokens, so a
    pair can be read at the positions after it (:func:`offset_profile` shows where).

    Args:
        weights: ``(B, T, T)`` non-negative mixing weights (row = reading position).
        task, batch: the recall task and the batch the weights were computed on.
        delay: a non-negative int with ``2N + delay`` at most the first query position.
    """
    _check_recall(task, batch)
    _check_weights(weights, task, batch)
    first_query = int(task.query_positions[0])
    if not isinstance(delay, int) or isinstance(delay, bool) or not 0 <= delay <= (
            first_query - 2 * task.n_pairs):
        raise ValueError(f"delay must be an int in 0..{first_query - 2 * task.n_pairs} (the "
                         f"shifted pairs must end before the first query); got {delay!r}")
    rows = weights[:, task.query_positions.to(weights.device), delay:2 * task.n_pairs + delay]
    on_pair = rows.gather(2, queried_pair_positions(task, batch)).sum(-1)
    return on_pair / rows.sum(-1).clamp_min(torch.finfo(rows.dtype).tiny)


def offset_profile(weights: torch.Tensor, task: AssociativeRecallTask, batch,
                   offsets: Iterable[int]) -> torch.Tensor:
    """Mean share of a query row's mass at each offset from the queried key, ``(len(offsets),)``.

    For query position ``t`` asking for the pair whose key sits at ``2j``: the weight at
    position ``2j + offset`` over the row's total mass, averaged over queries and sequences
    (rows where ``2j + offset`` falls outside ``0..t`` count as zero).

    Args:
        weights: ``(B, T, T)`` non-negative mixing weights (row = reading position).
        task, batch: the recall task and the batch the weights were computed on.
        offsets: ints, positions relative to the queried key.
    """
    _check_recall(task, batch)
    _check_weights(weights, task, batch)
    offsets = torch.as_tensor(list(offsets), dtype=torch.int64, device=weights.device)
    rows = weights[:, task.query_positions.to(weights.device)]                 # (B, M, T)
    rows = rows / rows.sum(-1, keepdim=True).clamp_min(torch.finfo(rows.dtype).tiny)
    key = queried_pair_positions(task, batch)[..., :1]                         # (B, M, 1)
    index = key + offsets                                                      # (B, M, K)
    inside = (index >= 0) & (index < task.length)
    picked = rows.gather(2, index.clamp(0, task.length - 1)) * inside
    return picked.mean(dim=(0, 1))


def mixing_weights(model: nn.Module, tokens: torch.Tensor) -> list[torch.Tensor]:
    """Each layer's mixing weights over positions, ``(B, T, T)`` per layer, without gradients.

    For a transformer, the softmax weights averaged over heads; for a Mamba, the magnitude of
    the implicit attention ``|M|`` averaged over channels. An LSTM or MLP has no mixing weights
    over positions: a ValueError says so.
    """
    if isinstance(model, Transformer):
        with torch.no_grad():
            _, record = model(tokens, return_record=True)
        return [layer.weights.mean(1) for layer in record.attention]
    if isinstance(model, Mamba):
        with torch.no_grad():
            _, record = model(tokens, return_record=True)
        return [layer.attention.abs().mean(1) for layer in record.layers]
    raise ValueError(f"model must be a Transformer or a Mamba; a {type(model).__name__} has no "
                     f"mixing weights over positions")


def input_attributions(model: nn.Module, task: AssociativeRecallTask, batch) -> torch.Tensor:
    """``(B, M, T)``: how strongly each query's correct answer depends on each position's token.

    Entry ``[b, m, s]`` is the norm of the gradient of the correct answer's logit at the
    ``m``-th query position with respect to the token embedding at position ``s`` (the output
    of the model's ``embed`` module). It needs no mixing weights, so it applies to every
    architecture; an MLP's attributions to other positions are all zero.
    """
    _check_recall(task, batch)
    if not isinstance(getattr(model, "embed", None), nn.Embedding):
        raise ValueError("model must have an nn.Embedding named embed")
    captured = []
    handle = model.embed.register_forward_hook(lambda _m, _i, out: captured.append(out))
    try:
        with evaluation_mode(model), torch.enable_grad():
            logits = model(batch.tokens)
            embedded = captured[-1]
            positions = task.query_positions.to(logits.device)
            answers = batch.targets[:, positions]                                    # (B, M)
            chosen = logits[:, positions].gather(2, answers[..., None]).squeeze(-1)  # (B, M)
            norms = []
            for m in range(len(positions)):
                (grad,) = torch.autograd.grad(chosen[:, m].sum(), embedded, retain_graph=True)
                norms.append(grad.norm(dim=-1))                                       # (B, T)
    finally:
        handle.remove()
    return torch.stack(norms, dim=1)


def attribution_share(model: nn.Module, task: AssociativeRecallTask, batch) -> torch.Tensor:
    """Share of each answer's input attribution on the queried pair, ``(B, M)`` in ``[0, 1]``.

    :func:`input_attributions` of the queried pair's two positions over those of all ``2N``
    pair positions; ``nan`` where the answer depends on no pair position (an MLP).
    """
    norms = input_attributions(model, task, batch)[..., :2 * task.n_pairs]     # (B, M, 2N)
    on_pair = norms.gather(2, queried_pair_positions(task, batch)).sum(-1)
    total = norms.sum(-1)
    return torch.where(total > 0, on_pair / total.clamp_min(torch.finfo(total.dtype).tiny),
                       torch.nan)


@dataclass(frozen=True)
class ScanRoutingGradients:
    """The gradient of a loss through a selective scan's implicit attention, in closed form.

    With ``y_t[d] = sum_{s<=t} M[d, t, s] x_s[d] + D[d] x_t[d]`` and ``g = dL/dy``
    (see :func:`scan_routing_gradients`). Shapes for ``batch`` sequences of ``T`` positions,
    ``d_inner`` channels and ``d_state`` states.

    Attributes:
        attention: ``(batch, d_inner, T, T)`` the implicit attention ``M``.
        compatibility: ``(batch, d_inner, T, T)`` ``dL/dM[d, t, s] = g_t[d] x_s[d]`` for
            ``s <= t``, zero above the diagonal: the per-channel compatibility, with no
            baseline subtracted.
        C: ``(batch, T, d_state)`` ``dL/dC_t``.
        B: ``(batch, T, d_state)`` ``dL/dB_s``.
        log_delta_write: ``(batch, T, d_inner)`` the part of ``dL/dlog Delta_r`` that comes
            from ``Delta_r`` scaling what position ``r`` writes:
            ``sum_{t>=r} M[d, t, r] compatibility[d, t, r]``.
        log_delta_forget: ``(batch, T, d_inner)`` the part that comes from ``Delta_r``
            decaying everything written before ``r``:
            ``Delta_r[d] sum_n A[d, n] sum_{t>=r} sum_{s<r} m_n[d, t, s] compatibility[d, t, s]``,
            with ``m_n`` the state-``n`` term of ``M``.
    """

    attention: torch.Tensor
    compatibility: torch.Tensor
    C: torch.Tensor
    B: torch.Tensor
    log_delta_write: torch.Tensor
    log_delta_forget: torch.Tensor

    @property
    def log_delta(self) -> torch.Tensor:
        """``(batch, T, d_inner)`` the whole ``dL/dlog Delta``: write part plus forget part."""
        return self.log_delta_write + self.log_delta_forget


def scan_routing_gradients(x: torch.Tensor, delta: torch.Tensor, A: torch.Tensor, B: torch.Tensor,
                           C: torch.Tensor, grad_y: torch.Tensor) -> ScanRoutingGradients:
    """Closed-form gradients of a selective scan through its implicit attention.

    The scan (see :mod:`~attention_dynamics.models.mamba`) unrolls to
    ``y_t[d] = sum_{s<=t} M[d, t, s] x_s[d] + D[d] x_t[d]`` with
    ``M[d, t, s] = sum_n m_n[d, t, s]``,
    ``m_n[d, t, s] = C_t[n] exp(A[d, n] sum_{r=s+1..t} Delta_r[d]) Delta_s[d] B_s[n]``.
    Given the upstream gradient ``g = dL/dy``:

    - ``dL/dM[d, t, s] = g_t[d] x_s[d]`` (the compatibility ``b``; nothing is subtracted);
    - ``dL/dC_t[n] = sum_d sum_{s<=t} b[d, t, s] m_n[d, t, s] / C_t[n]``, a sum of keys
      ``B_s[n]`` weighted by compatibility, decay and step;
    - ``dL/dB_s[n] = sum_d sum_{t>=s} b[d, t, s] m_n[d, t, s] / B_s[n]``, likewise of queries;
    - ``dL/dlog Delta_r[d] = sum_{t>=r} b M [d, t, r]
      + Delta_r[d] sum_n A[d, n] sum_{t>=r, s<r} b m_n [d, t, s]``,
      since ``dlog m_n[d, t, s] / dlog Delta_r[d] = [r = s] + A[d, n] Delta_r[d] [s < r <= t]``.

    (The divisions are only a way to read the formulas; the code multiplies the factors.)
    These are the gradients with respect to the scan's own inputs ``Delta``, ``B``, ``C``;
    the chain rule continues from there to the projections that compute them from the input.

    Args:
        x: ``(batch, T, d_inner)`` the scan input.
        delta: ``(batch, T, d_inner)`` positive steps.
        A: ``(d_inner, d_state)``.
        B, C: ``(batch, T, d_state)``.
        grad_y: ``(batch, T, d_inner)`` ``dL/dy``.

    Cost ``O(batch d_inner T^2 d_state)`` time, ``O(batch d_inner T^2)`` memory.
    """
    check_float_tensor("grad_y", grad_y, min_dim=3, max_dim=3, dtype=x.dtype)
    if grad_y.shape != x.shape:
        raise ValueError(f"grad_y must have x's shape {tuple(x.shape)}; got {tuple(grad_y.shape)}")
    check_float_tensor("x", x, min_dim=3, max_dim=3)
    if x.shape != delta.shape:
        raise ValueError(f"x must have delta's shape {tuple(delta.shape)}; got {tuple(x.shape)}")
    M = mamba_implicit_attention(delta, A, B, C)       # checks delta, A, B, C
    length = x.shape[1]
    causal = causal_mask(length, x.device)
    after = causal.tril(-1)                            # [r, s] = True for r > s
    compat = (grad_y.transpose(1, 2)[..., :, None] * x.transpose(1, 2)[..., None, :]) * causal
    delta_t = delta.transpose(1, 2)                    # (batch, d_inner, T)
    grad_C = torch.zeros_like(C)
    grad_B = torch.zeros_like(B)
    forget = torch.zeros_like(delta_t)
    for n in range(A.shape[1]):
        log_decay = delta_t * A[:, n, None]            # (batch, d_inner, T), entry r
        segment = torch.where(after, log_decay[..., :, None], 0.0).cumsum(dim=-2)
        decay = torch.where(causal, segment.exp(), 0.0)                  # [t, s]
        core = decay * delta_t[:, :, None, :]                             # K Delta_s, [t, s]
        weighted = compat * core                                          # b K Delta_s
        grad_C[..., n] = (weighted * B[:, None, None, :, n]).sum(dim=(1, 3))
        grad_B[..., n] = (weighted * C[:, None, :, n, None]).sum(dim=(1, 2))
        term = weighted * B[:, None, None, :, n] * C[:, None, :, n, None]  # b m_n, [t, s]
        # sum over t >= r and s < r of term[t, s]: exclusive cumulative sum over s, then t >= r
        before = torch.nn.functional.pad(term.cumsum(-1)[..., :-1], (1, 0))  # [t, r] = sum_{s<r}
        forget = forget + A[:, n, None] * (before * causal).sum(-2)
    write = (compat * M).sum(-2)                       # sum over t >= r of b M [t, r]
    return ScanRoutingGradients(attention=M, compatibility=compat, C=grad_C, B=grad_B,
                                log_delta_write=write.transpose(1, 2),
                                log_delta_forget=(delta_t * forget).transpose(1, 2))


def mamba_routing_gradients(model: Mamba, batch: TaskBatch, loss: str = "sampled"
                            ) -> list[ScanRoutingGradients]:
    """:class:`ScanRoutingGradients` of every layer of ``model`` for its loss on ``batch``.

    One forward pass with the record, one backward pass of the mean cross-entropy
    (:func:`~attention_dynamics.sequence_training.sequence_loss`) that keeps ``dL/dy`` of each
    scan; the model's own parameter gradients are left as they were.
    """
    if not isinstance(model, Mamba):
        raise ValueError(f"model must be a Mamba; got {type(model).__name__}")
    with evaluation_mode(model), torch.enable_grad():
        logits, record = model(batch.tokens, return_record=True)
        outputs = [layer.scan_output for layer in record.layers]
        grads = torch.autograd.grad(sequence_loss(logits, batch, loss), outputs)
    result = []
    for layer, grad_y in zip(record.layers, grads, strict=True):
        # y = M u + D u, so the upstream gradient of the mixing part M u is dL/dy itself
        result.append(scan_routing_gradients(layer.scan_input.detach(), layer.delta.detach(),
                                             layer.A.detach(), layer.B.detach(), layer.C.detach(),
                                             grad_y))
    return result


def transformer_score_gradients(model: Transformer, batch: TaskBatch, loss: str = "sampled"
                                ) -> list[torch.Tensor]:
    """``dL/ds`` of every layer's scores, ``(B, H, T, T)`` per layer (zero at masked pairs).

    The softmax counterpart of :func:`mamba_routing_gradients`: one forward pass with the
    record and one backward pass of the mean cross-entropy on ``batch``; by chapter 1's routing
    law each row equals ``alpha (b - E_alpha b)`` and sums to zero.
    """
    if not isinstance(model, Transformer):
        raise ValueError(f"model must be a Transformer; got {type(model).__name__}")
    with evaluation_mode(model), torch.enable_grad():
        logits, record = model(batch.tokens, return_record=True)
        scores = [layer.scores for layer in record.attention]
        grads = torch.autograd.grad(sequence_loss(logits, batch, loss), scores)
    return list(grads)


def zero_sum_fraction(gradient: torch.Tensor, rows: torch.Tensor | None = None) -> float:
    """``|sum_s G[t, s]| / sum_s |G[t, s]|`` averaged over rows: 0 if the rows only re-route.

    A softmax's score gradient has rows that sum to zero (chapter 1), so this is 0 for it: the
    gradient moves weight between positions and never changes a row's total. A gradient whose
    entries in a row all share a sign gives 1: it only rescales the row.

    Args:
        gradient: ``(..., T, T)`` a gradient with respect to mixing weights or scores.
        rows: ``(R,)`` the rows (reading positions) to average over; all by default.
    """
    check_float_tensor("gradient", gradient, min_dim=2)
    selected = gradient if rows is None else gradient[..., rows, :]
    gross = selected.abs().sum(-1)
    net = selected.sum(-1).abs()
    keep = gross > 0
    if not keep.any():
        raise ValueError("gradient has no row with a non-zero entry")
    return (net[keep] / gross[keep]).mean().item()
