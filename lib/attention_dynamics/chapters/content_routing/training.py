"""Training every architecture on every task and seed, with the same optimiser, batches and
steps per task, scored on held-out batches drawn once per task."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import torch
from torch import nn

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.content_routing.architectures import (
    Architectures,
    build_tasks,
    matched_architectures,
)
from attention_dynamics.chapters.content_routing.settings import (
    ENTROPY_TASKS,
    SOLVE_CHECKPOINTS,
    TASKS,
    chapter_seeds,
)
from attention_dynamics.chapters.progress import training_run
from attention_dynamics.models.mamba import VARIANTS as MAMBA_VARIANTS
from attention_dynamics.models.registry import ARCHITECTURES, matched_config
from attention_dynamics.parts import Unit, Units
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


@dataclass(frozen=True)
class Job:
    """The trainings of one model on one task, one per seed.

    Attributes:
        config: the model's registered config.
        task: the task's name (one of :data:`~.settings.TASKS`).
        training: the optimiser, steps and loss.
        seeds: the seeds of its runs, in order (a unit's index is a position in it).
        label: the name of its progress bars.
        keep: the checkpoint steps kept by the ``r``-th seed's run.
    """

    config: object
    task: str
    training: SequenceTrainingConfig
    seeds: tuple[int, ...]
    label: str
    keep: tuple[tuple[int, ...], ...]


@dataclass
class TrainingPlan:
    """Every training of the chapter, planned from its settings and base seed alone, so that a
    part of them can run in another process (:mod:`attention_dynamics.parts`).

    Attributes:
        tasks: the three tasks by name.
        architectures: the matched configs of the table's architectures.
        seeds: the ``S`` seeds of the table's runs.
        eval_sets: each task's held-out batches, the same for every model.
        recall_checkpoints: the steps (geometrically spaced) at which the recall runs of the
            transformer, the Mamba and the LSTM keep their weights.
        jobs: every training by unit name: ``"<task>/<arch>"`` for the table,
            ``"deep/<variant>"`` for the deeper Mamba, ``"capacity"`` for the smaller state.
        device: where the models train.
    """

    tasks: dict[str, Task]
    architectures: Architectures
    seeds: list[int]
    eval_sets: dict[str, list[TaskBatch]]
    recall_checkpoints: list[int]
    jobs: dict[str, Job]
    device: torch.device

    def units(self) -> list[Unit]:
        """Every training as a unit, job by job and seed by seed."""
        return [Unit(name, r) for name, job in self.jobs.items() for r in range(len(job.seeds))]

    def train(self, unit: Unit) -> tuple[nn.Module, ArchitectureRun]:
        """Train ``unit`` (a progress bar named by its job's label and seed): its model (on the
        training device, in eval mode) and run."""
        job = self.jobs[unit.name]
        run_seed = job.seeds[unit.index]
        with training_run(f"{job.label}, seed {run_seed}", job.training.steps):
            return train_and_evaluate(job.config, self.tasks[job.task], job.training, run_seed,
                                      self.eval_sets[job.task], self.device,
                                      checkpoint_steps=job.keep[unit.index])

    def trained(self, name: str, units: Units | None = None
                ) -> list[tuple[nn.Module, ArchitectureRun]]:
        """Job ``name``'s trained models and runs in seed order, each taken from ``units``
        (trained here without them)."""
        store = units if units is not None else Units()
        return [store.get(unit, partial(self.train, unit))
                for unit in (Unit(name, r) for r in range(len(self.jobs[name].seeds)))]


def _jobs(chosen: dict, tasks: dict[str, Task], architectures: Architectures,
          seeds: list[int], recall_checkpoints: list[int]) -> dict[str, Job]:
    """The chapter's trainings by unit name (:class:`TrainingPlan`'s ``jobs``): on recall every
    architecture but the MLP keeps ``recall_checkpoints``; on the entropy tasks the
    transformer's first seed keeps ``SOLVE_CHECKPOINTS``."""
    jobs = {}
    for name in TASKS:
        solve = tuple(geometric_checkpoints(chosen["steps"][name], SOLVE_CHECKPOINTS))
        for arch in ARCHITECTURES:
            if name == "recall" and arch != "mlp":
                keep = (tuple(recall_checkpoints),) * len(seeds)
            elif name in ENTROPY_TASKS and arch == "transformer":
                keep = (solve,) + ((),) * (len(seeds) - 1)
            else:
                keep = ((),) * len(seeds)
            jobs[f"{name}/{arch}"] = Job(architectures.configs[name][arch], name,
                                         training_config(chosen, name, arch), tuple(seeds),
                                         f"{name}, {arch}", keep)
    hmm, recall = tasks["hmm"], tasks["recall"]
    deep_seeds = tuple(seeds[:chosen["deep_mamba_seeds"]])
    for variant in MAMBA_VARIANTS:
        config, _ = matched_config("mamba", hmm.vocab_size, hmm.seq_len,
                                   int(architectures.parameters.loc["transformer", "hmm"]),
                                   high=chosen["width_limit"], variant=variant,
                                   **chosen["deep_mamba"])
        jobs[f"deep/{variant}"] = Job(config, "hmm", training_config(chosen, "hmm", "mamba"),
                                      deep_seeds, f"hmm, deep mamba ({variant})",
                                      ((),) * len(deep_seeds))
    d_state = chosen["capacity_d_state"]
    config, _ = matched_config("mamba", recall.vocab_size, recall.seq_len,
                               int(architectures.parameters.loc["transformer", "recall"]),
                               high=chosen["width_limit"],
                               **{**chosen["fixed"]["mamba"], "d_state": d_state})
    jobs["capacity"] = Job(config, "recall", training_config(chosen, "recall", "mamba"),
                           tuple(seeds), f"recall, mamba with {d_state} addresses",
                           ((),) * len(seeds))
    return jobs


def training_plan(chosen: dict, device: torch.device, seed: int) -> TrainingPlan:
    """The chapter's trainings at settings ``chosen`` from base seed ``seed`` on ``device``:
    the tasks, the matched architectures, the seeds (:func:`~.settings.chapter_seeds`), the held-out sets
    (:func:`held_out_sets`) and every job."""
    tasks = build_tasks(chosen)
    architectures = matched_architectures(chosen, tasks)
    seeds = chapter_seeds(chosen, seed)
    recall_checkpoints = geometric_checkpoints(chosen["steps"]["recall"],
                                               chosen["recall_checkpoints"])
    return TrainingPlan(tasks, architectures, seeds, held_out_sets(chosen, tasks, seed, device),
                        recall_checkpoints,
                        _jobs(chosen, tasks, architectures, seeds, recall_checkpoints), device)


def units(chosen: dict) -> list[Unit]:
    """Every training of a run at settings ``chosen`` (the units of a run in parts)."""
    return training_plan(chosen, torch.device("cpu"), 0).units()


def unit_trainer(chosen: dict, device: torch.device, seed: int) -> Callable[[Unit], object]:
    """What trains one unit of a run at settings ``chosen`` from base seed ``seed``, on
    ``device``: the function the run itself calls for it."""
    return training_plan(chosen, device, seed).train


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


def train_architectures(results: Results, plan: TrainingPlan, units: Units | None = None
                        ) -> Training:
    """Train every architecture of ``plan`` on every task and seed (each taken from ``units``
    where given); record the training seconds (timings: ``training_seconds`` and
    ``training_seconds_<arch>``)."""
    runs, first_models = {}, {}
    for name in TASKS:
        for arch in ARCHITECTURES:
            trained = plan.trained(f"{name}/{arch}", units)
            for r, (_, run) in enumerate(trained):
                runs[arch, name, r] = run
            first_models[arch, name] = trained[0][0]
    results.record("training_seconds", sum(run.seconds for run in runs.values()), timing=True)
    for arch in ARCHITECTURES:
        results.record(f"training_seconds_{arch}",
                       sum(run.seconds for (a, _, _), run in runs.items() if a == arch),
                       timing=True)
    return Training(plan.seeds, plan.eval_sets, plan.recall_checkpoints, runs, first_models)
