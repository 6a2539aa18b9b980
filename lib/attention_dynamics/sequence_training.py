"""Online training of any sequence model on a wind-tunnel task.

Every step draws a fresh batch from the task (nothing is ever seen twice, so nothing can be
memorised), computes a cross-entropy at the task's scored positions and takes one AdamW step
with linear warm-up and cosine decay of the learning rate. At chosen steps the loop keeps a
copy of the weights and calls a callback, so that probes can follow the geometry through
training.

The model is anything that maps tokens ``(B, T)`` int64 to logits ``(B, T, vocab)``; the task
is anything with ``sample(batch_size, generator) -> TaskBatch`` (see
:mod:`~attention_dynamics.measures.metrics`). Two losses (nats, mean over scored positions):

- ``"sampled"``: ``-log p_model(target)`` of the sampled answer, the ordinary cross-entropy of
  next-token training; its minimiser is the Bayes predictive;
- ``"bayes"``: ``-sum_y p_Bayes(y) log p_model(y)``, the cross-entropy to the exact predictive
  (the authors' loss for the HMM task), which has the same minimiser and less variance.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from attention_dynamics.measures.metrics import LOSSES, EntropyReport, evaluate, sequence_loss
from attention_dynamics.models.registry import architecture_of, build_model
from attention_dynamics.models.sizing import count_parameters
from attention_dynamics.tasks.associative_recall import AssociativeRecallTask, recall_accuracy
from attention_dynamics.tasks.base import Task, TaskBatch
from attention_dynamics.validation import check_choice, check_positive_int


@dataclass(frozen=True)
class SequenceTrainingConfig:
    """Hyper-parameters of :func:`train_sequence_model`.

    Attributes:
        steps: number of AdamW updates.
        batch_size: sequences per update (each batch freshly sampled).
        lr: peak learning rate.
        weight_decay: AdamW decoupled weight decay, applied to weight matrices and embeddings
            (tensors with two or more dimensions), not to biases or norm gains.
        warmup_steps: linear warm-up from 0 to ``lr`` over this many steps.
        final_lr_fraction: the cosine decay ends at ``lr * final_lr_fraction``.
        grad_clip: clip the global gradient norm to this value (``None``: no clipping).
        loss: ``"sampled"`` or ``"bayes"`` (see the module docstring).
        betas: AdamW's moment decay rates.
    """

    steps: int
    batch_size: int
    lr: float = 1e-3
    weight_decay: float = 0.01
    warmup_steps: int = 0
    final_lr_fraction: float = 0.1
    grad_clip: float | None = 1.0
    loss: str = "sampled"
    betas: tuple[float, float] = (0.9, 0.999)

    def __post_init__(self):
        for name in ("steps", "batch_size", "warmup_steps"):
            value = getattr(self, name)
            minimum = 1 if name == "batch_size" else 0
            if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
                raise ValueError(f"{name} must be an int >= {minimum}; got {value!r}")
        if not self.lr > 0:
            raise ValueError(f"lr must be positive; got {self.lr!r}")
        if not self.weight_decay >= 0:
            raise ValueError(f"weight_decay must be non-negative; got {self.weight_decay!r}")
        if not 0 <= self.final_lr_fraction <= 1:
            raise ValueError(f"final_lr_fraction must lie in [0, 1]; got {self.final_lr_fraction!r}")
        if self.grad_clip is not None and not self.grad_clip > 0:
            raise ValueError(f"grad_clip must be positive or None; got {self.grad_clip!r}")
        check_choice("loss", self.loss, LOSSES)

    def learning_rate(self, step: int) -> float:
        """The rate of update ``step`` (0-based): linear warm-up, then cosine decay."""
        if step < self.warmup_steps:
            return self.lr * (step + 1) / self.warmup_steps
        span = max(self.steps - self.warmup_steps, 1)
        progress = min((step - self.warmup_steps) / span, 1.0)
        low = self.lr * self.final_lr_fraction
        return low + (self.lr - low) * 0.5 * (1 + math.cos(math.pi * progress))


@dataclass
class SequenceTrainingHistory:
    """What :func:`train_sequence_model` recorded.

    Attributes:
        loss: ``(steps,)`` float64, the training loss of each update's batch (nats).
        checkpoints: step -> a CPU copy of the ``state_dict`` after that many updates (step 0
            is the initialisation).
        seconds: wall time of the loop, including sampling and checkpointing.
    """

    loss: torch.Tensor
    checkpoints: dict[int, dict[str, torch.Tensor]] = field(default_factory=dict)
    seconds: float = 0.0

    def load_checkpoint(self, model: nn.Module, step: int) -> nn.Module:
        """Load the weights kept after ``step`` updates into ``model``; return it in eval mode."""
        if step not in self.checkpoints:
            raise ValueError(f"step must be a kept checkpoint, one of {sorted(self.checkpoints)}; "
                             f"got {step!r}")
        model.load_state_dict(self.checkpoints[step])
        return model.eval()


def geometric_checkpoints(steps: int, n: int, first: int = 10) -> list[int]:
    """Step 0, then about ``n`` steps spaced geometrically from ``first`` to ``steps`` (sorted,
    without repeats): dense early, where attention forms, sparse late."""
    check_positive_int("steps", steps)
    check_positive_int("n", n)
    check_positive_int("first", first)
    spaced = np.geomspace(first, steps, n).round().astype(int)
    return sorted({0, *spaced.tolist(), steps})


def held_out_batches(task: Task, n_batches: int, batch_size: int, seed: int,
                     device: torch.device | str = "cpu") -> list[TaskBatch]:
    """``n_batches`` batches of ``task`` from their own generator on ``device`` seeded with
    ``seed``: the same held-out data for every model that is given the same seed."""
    check_positive_int("n_batches", n_batches)
    check_positive_int("batch_size", batch_size)
    generator = torch.Generator(device=torch.device(device)).manual_seed(seed)
    return [task.sample(batch_size, generator) for _ in range(n_batches)]


def _optimizer(model: nn.Module, config: SequenceTrainingConfig) -> torch.optim.AdamW:
    decay = [p for p in model.parameters() if p.requires_grad and p.ndim >= 2]
    plain = [p for p in model.parameters() if p.requires_grad and p.ndim < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                              {"params": plain, "weight_decay": 0.0}],
                             lr=config.lr, betas=config.betas)


def train_sequence_model(model: nn.Module, task, config: SequenceTrainingConfig,
                         generator: torch.Generator, checkpoint_steps: Iterable[int] = (),
                         on_checkpoint: Callable[[int, nn.Module], None] | None = None
                         ) -> SequenceTrainingHistory:
    """Train ``model`` in place on fresh batches of ``task``.

    Args:
        model: tokens ``(B, T)`` -> logits ``(B, T, vocab)``, on ``generator``'s device.
        task: has ``sample(batch_size, generator)`` returning a
            :class:`~attention_dynamics.tasks.base.TaskBatch` on the generator's device.
        config: the hyper-parameters.
        generator: draws every batch; seed it (``seed_everything``) for a reproducible run.
        checkpoint_steps: steps in ``0..config.steps`` after which to keep the weights.
        on_checkpoint: called as ``on_checkpoint(step, model)`` at each checkpoint step (in eval
            mode, under ``torch.no_grad``); for probes that need more than the weights.

    Returns:
        A :class:`SequenceTrainingHistory`.
    """
    wanted = sorted(set(checkpoint_steps))
    if any(not isinstance(s, int) or not 0 <= s <= config.steps for s in wanted):
        raise ValueError(f"checkpoint_steps must be ints in 0..steps={config.steps}; got {wanted}")
    optimizer = _optimizer(model, config)
    history = SequenceTrainingHistory(loss=torch.zeros(config.steps, dtype=torch.float64))
    start = time.perf_counter()

    def checkpoint(step: int) -> None:
        if step not in wanted:
            return
        history.checkpoints[step] = {k: v.detach().to("cpu", copy=True)
                                     for k, v in model.state_dict().items()}
        if on_checkpoint is not None:
            model.eval()
            with torch.no_grad():
                on_checkpoint(step, model)
        model.train()

    model.train()
    checkpoint(0)
    losses = []
    for step in range(config.steps):
        for group in optimizer.param_groups:
            group["lr"] = config.learning_rate(step)
        batch = task.sample(config.batch_size, generator)
        loss = sequence_loss(model(batch.tokens), batch, config.loss)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if config.grad_clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
        optimizer.step()
        losses.append(loss.detach())
        checkpoint(step + 1)
    if losses:
        history.loss = torch.stack(losses).double().cpu()
    history.seconds = time.perf_counter() - start
    return history


@dataclass
class ArchitectureRun:
    """One training run of one architecture on one task, scored on held-out batches.

    Attributes:
        arch: the registry name.
        seed: the seed of the run (initial weights and training batches).
        n_parameters: trainable scalars of the model.
        report: the :class:`~attention_dynamics.measures.metrics.EntropyReport` against the Bayes
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
        config: a registered config (see :func:`~attention_dynamics.models.registry.architecture_config`).
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
    report = evaluate(model, eval_batches, answer_tokens=getattr(task, "answer_tokens", None))
    accuracy = None
    if isinstance(task, AssociativeRecallTask):
        with torch.no_grad():
            hits = [recall_accuracy(model(b.tokens), b) * b.mask.sum().item() for b in eval_batches]
        accuracy = sum(hits) / sum(b.mask.sum().item() for b in eval_batches)
    return model, ArchitectureRun(arch=architecture_of(config), seed=seed,
                                  n_parameters=count_parameters(model), report=report,
                                  accuracy=accuracy, history=history,
                                  seconds=time.perf_counter() - start)
