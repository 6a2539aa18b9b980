"""Online training of any sequence model on a wind-tunnel task.

Every step draws a fresh batch from the task (nothing is ever seen twice, so nothing can be
memorised), computes a cross-entropy at the task's scored positions and takes one AdamW step
with linear warm-up and cosine decay of the learning rate. At chosen steps the loop keeps a
copy of the weights and calls a callback, so that probes can follow the geometry through
training.

The model is anything that maps tokens ``(B, T)`` int64 to logits ``(B, T, vocab)``; the task
is anything with ``sample(batch_size, generator) -> TaskBatch`` (see
:mod:`~attention_dynamics.metrics`). Two losses (nats, mean over scored positions):

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

import torch
from torch import nn

from .metrics import IGNORE_INDEX, TaskBatch
from .runtime import check_choice

LOSSES = ("sampled", "bayes")


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


def sequence_loss(logits: torch.Tensor, batch: TaskBatch, loss: str = "sampled") -> torch.Tensor:
    """Mean cross-entropy (nats) at ``batch``'s scored positions; ``logits`` ``(B, T, vocab)``."""
    check_choice("loss", loss, LOSSES)
    if loss == "sampled":
        return nn.functional.cross_entropy(logits.flatten(0, 1), batch.targets.flatten(),
                                           ignore_index=IGNORE_INDEX)
    mask = batch.mask
    log_probs = torch.log_softmax(logits[mask], dim=-1)
    return -(batch.bayes_predictive[mask].to(log_probs.dtype) * log_probs).sum(-1).mean()


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
            :class:`~attention_dynamics.metrics.TaskBatch` on the generator's device.
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
