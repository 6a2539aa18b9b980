"""Training every architecture on every task and seed, with the same optimiser, batches and
steps per task, scored on held-out batches drawn once per task."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch
from torch import nn

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.content_routing.architectures import Architectures
from attention_dynamics.chapters.content_routing.settings import (
    ENTROPY_TASKS,
    SOLVE_CHECKPOINTS,
    TASKS,
)
from attention_dynamics.chapters.progress import training_run
from attention_dynamics.models.registry import ARCHITECTURES
from attention_dynamics.sequence_training import (
    ArchitectureRun,
    SequenceTrainingConfig,
    geometric_checkpoints,
    held_out_batches,
    train_and_evaluate,
)
from attention_dynamics.tasks.base import Task, TaskBatch


def training_config(chosen: dict, task: str, arch: str) -> SequenceTrainingConfig:
    """The shared training settings of ``arch`` on ``task``: AdamW without weight decay, the
    task's steps and batch size, the architecture's learning rate; the Bayes loss on HMM
    filtering, the sampled answers elsewhere."""
    return SequenceTrainingConfig(
        steps=chosen["steps"][task],
        batch_size=chosen["batch_size"][task],
        lr=chosen["lr"][arch][task],
        warmup_steps=chosen["warmup_steps"],
        weight_decay=0.0,
        loss="bayes" if task == "hmm" else "sampled",
    )


def held_out_sets(chosen: dict, tasks: dict[str, Task], seed: int,
                  device: torch.device) -> dict[str, list[TaskBatch]]:
    """Each task's held-out batches (``eval_batches`` of ``eval_batch_size`` sequences), the
    ``k``-th task's drawn from seed ``seed + 1000 + k``."""
    return {name: held_out_batches(tasks[name], chosen["eval_batches"], chosen["eval_batch_size"],
                                   seed + 1000 + k, device)
            for k, name in enumerate(TASKS)}


def train_seeds(config, task: Task, training: SequenceTrainingConfig, seeds: Iterable[int],
                eval_batches: list[TaskBatch], device: torch.device, label: str,
                keep: Callable[[int], Iterable[int]] | None = None
                ) -> list[tuple[nn.Module, ArchitectureRun]]:
    """Train ``config`` on ``task`` once per seed of ``seeds`` (a progress bar each, named
    ``label`` and the seed); the ``r``-th seed keeps the checkpoints ``keep(r)`` (none without
    ``keep``). The trained models and their runs, in seed order."""
    trained = []
    for replicate, run_seed in enumerate(seeds):
        with training_run(f"{label}, seed {run_seed}", training.steps):
            trained.append(train_and_evaluate(config, task, training, run_seed, eval_batches,
                                              device,
                                              checkpoint_steps=keep(replicate) if keep else ()))
    return trained


@dataclass
class Training:
    """Every architecture trained on every task and seed.

    Attributes:
        seeds: the ``S`` seeds of the runs.
        eval_sets: each task's held-out batches, the same for every model.
        recall_checkpoints: the steps (geometrically spaced) at which the recall runs of the
            transformer, the Mamba and the LSTM kept their weights.
        runs: ``runs[arch, task, r]``, the run of seed ``seeds[r]``.
        first_models: ``first_models[arch, task]``, the trained model of the first seed (on the
            training device, in eval mode).
    """

    seeds: list[int]
    eval_sets: dict[str, list[TaskBatch]]
    recall_checkpoints: list[int]
    runs: dict[tuple[str, str, int], ArchitectureRun]
    first_models: dict[tuple[str, str], nn.Module]

    def seed_runs(self, arch: str, task: str) -> list[ArchitectureRun]:
        """The runs of ``arch`` on ``task``, one per seed, in seed order."""
        return [self.runs[arch, task, r] for r in range(len(self.seeds))]

    def summary(self) -> str:
        """One line per task and architecture: each seed's score (entropy MAE of the mean curve
        in bits, or recall accuracy) and the seconds of all seeds."""
        lines = []
        for name in TASKS:
            for arch in ARCHITECTURES:
                runs = self.seed_runs(arch, name)
                scores = "  ".join(f"MAE {run.report.mae_mean_curve:.4f}" if name != "recall"
                                   else f"acc {run.accuracy:.3f}" for run in runs)
                lines.append(f"{name:9s} {arch:11s} {scores}   "
                             f"({sum(run.seconds for run in runs):.0f} s)")
        return "\n".join(lines)


def train_architectures(results: Results, chosen: dict, tasks: dict[str, Task],
                        architectures: Architectures, seeds: list[int], device: torch.device,
                        seed: int) -> Training:
    """Train every architecture on every task and seed; record the training seconds (timings:
    ``training_seconds`` and ``training_seconds_<arch>``).

    On recall every architecture but the MLP keeps ``recall_checkpoints`` checkpoints; on the
    entropy tasks the transformer's first seed keeps ``SOLVE_CHECKPOINTS``. The held-out sets
    come from :func:`held_out_sets` with base seed ``seed``.
    """
    eval_sets = held_out_sets(chosen, tasks, seed, device)
    recall_checkpoints = geometric_checkpoints(chosen["steps"]["recall"],
                                               chosen["recall_checkpoints"])
    solve_checkpoints = {name: geometric_checkpoints(chosen["steps"][name], SOLVE_CHECKPOINTS)
                         for name in ENTROPY_TASKS}

    def kept(name: str, arch: str):
        def steps(replicate: int):
            if name == "recall" and arch != "mlp":
                return recall_checkpoints
            if arch == "transformer" and replicate == 0:
                return solve_checkpoints[name]
            return ()
        return steps

    runs, first_models = {}, {}
    for name, task in tasks.items():
        for arch in ARCHITECTURES:
            trained = train_seeds(architectures.configs[name][arch], task,
                                  training_config(chosen, name, arch), seeds, eval_sets[name],
                                  device, f"{name}, {arch}", keep=kept(name, arch))
            for r, (_, run) in enumerate(trained):
                runs[arch, name, r] = run
            first_models[arch, name] = trained[0][0]
    results.record("training_seconds", sum(run.seconds for run in runs.values()), timing=True)
    for arch in ARCHITECTURES:
        results.record(f"training_seconds_{arch}",
                       sum(run.seconds for (a, _, _), run in runs.items() if a == arch),
                       timing=True)
    return Training(seeds, eval_sets, recall_checkpoints, runs, first_models)
