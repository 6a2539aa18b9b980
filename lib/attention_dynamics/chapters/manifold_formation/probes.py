"""The probes of the geometry, a run's checkpoints loaded on demand, fixed probe sequences and parts.

A :class:`CheckpointProbe` holds one trained run's history, one scratch model of its architecture
into which any kept checkpoint is loaded, and the probe sequences the geometry is measured on.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from attention_dynamics.chapters.manifold_formation.settings import PROBE_PARTS
from attention_dynamics.sequence_training import SequenceTrainingHistory
from attention_dynamics.tasks.base import TaskBatch, sequences_of


@dataclass
class CheckpointProbe:
    """One run's checkpoints and the probe sequences its geometry is measured on.

    Attributes:
        history: the run's training history (its kept checkpoints).
        scratch: a model of the run's architecture, on the device: :meth:`at_step` loads into it,
            so every call returns this same model, holding the last step loaded.
        batch: the probe sequences (``probe_size`` of the run's task).
    """

    history: SequenceTrainingHistory
    scratch: nn.Module
    batch: TaskBatch

    @property
    def final_step(self) -> int:
        """The last kept checkpoint (the trained model)."""
        return max(self.history.checkpoints)

    def at_step(self, step: int) -> nn.Module:
        """The scratch model with the weights kept after ``step`` updates, in eval mode."""
        return self.history.load_checkpoint(self.scratch, step)


def probe_sequences(task, chosen: dict, seed: int, device: torch.device) -> TaskBatch:
    """``chosen["probe_size"]`` sequences of ``task`` from a generator on ``device`` seeded with
    ``seed``."""
    return task.sample(chosen["probe_size"], torch.Generator(device=device).manual_seed(seed))


def probe_part(batch: TaskBatch, i: int) -> TaskBatch:
    """The ``i``-th of :data:`~attention_dynamics.chapters.manifold_formation.settings.PROBE_PARTS`
    disjoint slices of ``batch``'s sequences, each ``B // PROBE_PARTS`` long (a remainder left
    out)."""
    size = batch.tokens.shape[0] // PROBE_PARTS
    return sequences_of(batch, slice(i * size, (i + 1) * size))
