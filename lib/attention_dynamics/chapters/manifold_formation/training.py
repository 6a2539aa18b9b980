"""Training and scoring the chapter's models, each run on fresh batches from a generator of its own.

Every training batch is drawn fresh from the task (online training, no sequence seen twice) from
a generator seeded for that run alone, so that no run's data depend on how long another ran
before it; held-out batches come from generators of their own. Entropies are in bits, over the
task's answer slice.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from attention_dynamics.book.claims import SOLVED_KEYS_BITS
from attention_dynamics.chapters.progress import training_run
from attention_dynamics.measures.metrics import EntropyReport, blind_predictor_maes, evaluate
from attention_dynamics.measures.stability import first_stable_step
from attention_dynamics.sequence_training import (
    SequenceTrainingConfig,
    SequenceTrainingHistory,
    geometric_checkpoints,
    held_out_batches,
    train_sequence_model,
)
from attention_dynamics.tasks.base import Task, TaskBatch


def replicate_seed(seed: int, replicate: int, offset: int) -> int:
    """The seed of one generator of seed ``replicate`` (0: the runs of parts (a) to (f)) from the
    base ``seed``: ``seed + 1000 replicate + offset``.

    >>> replicate_seed(0, 2, 50)
    2050
    """
    return seed + 1000 * replicate + offset


def train(model: nn.Module, task: Task, chosen: dict, training: str, data_seed: int,
          device: torch.device, label: str, checkpoints: list[int] | None = None
          ) -> SequenceTrainingHistory:
    """Train ``model`` (moved to ``device``) in place with the settings ``chosen[training]``.

    Args:
        model: tokens ``(B, T)`` -> logits ``(B, T, vocab)``.
        task: draws the training batches.
        chosen: the chapter's settings
            (:func:`~attention_dynamics.chapters.manifold_formation.settings.settings`).
        training: the name of the run's settings in ``chosen`` (e.g. ``"bijection_training"``).
        data_seed: seeds the generator, on ``device``, that draws every training batch.
        device: where the model trains.
        label: the run's name on its progress bar.
        checkpoints: the steps after which the weights are kept (default: step 0 and about
            ``chosen["n_checkpoints"]`` steps spaced geometrically).
    """
    config = SequenceTrainingConfig(**chosen[training])
    if checkpoints is None:
        checkpoints = geometric_checkpoints(config.steps, chosen["n_checkpoints"])
    data = torch.Generator(device=device).manual_seed(data_seed)
    with training_run(label, config.steps) as advance:
        return train_sequence_model(model.to(device), task, config, data, checkpoint_steps=checkpoints,
                                    on_checkpoint=advance)


def evaluation_batches(task: Task, chosen: dict, seed: int, device: torch.device) -> list[TaskBatch]:
    """``chosen["eval_batches"]`` held-out batches of ``chosen["eval_batch_size"]`` sequences of
    ``task`` on ``device``, from a generator seeded with ``seed``."""
    return held_out_batches(task, n_batches=chosen["eval_batches"],
                            batch_size=chosen["eval_batch_size"], seed=seed, device=device)


def score(model: nn.Module, task: Task, batches: list[TaskBatch]) -> EntropyReport:
    """``model``'s entropies against Bayes on ``batches``, over ``task``'s answer slice (bits)."""
    return evaluate(model, batches, answer_tokens=task.answer_tokens.to(batches[0].tokens.device))


def key_position_mae(report: EntropyReport, task) -> float:
    """The mean-curve entropy MAE (bits) of ``report`` over ``task``'s key positions only, where
    the authors measure."""
    at_keys = torch.isin(report.positions, task.key_positions)
    return (report.model_entropy - report.bayes_entropy)[at_keys].abs().mean().item()


def blind_maes(task: Task, batches: list[TaskBatch], n_outcomes: int) -> dict[str, float]:
    """The per-sample entropy MAEs (bits) on ``batches`` of the two predictors blind to the
    sequence (:func:`~attention_dynamics.measures.metrics.blind_predictor_maes`) over
    ``n_outcomes`` outcomes, at ``task``'s scored positions."""
    bayes = torch.cat([batch.bayes_entropy_bits[:, task.query_positions] for batch in batches])
    return blind_predictor_maes(bayes, n_outcomes)


def solve_step(model: nn.Module, history: SequenceTrainingHistory, task,
               batches: list[TaskBatch]) -> int:
    """The first checkpoint of ``history`` from which the model (``model``'s architecture with
    each checkpoint's weights, in a copy) stays solved on ``batches``: its entropy MAE at
    ``task``'s key positions at most ``SOLVED_KEYS_BITS`` (bits), as the ledger's solved bar.
    A run not solved at its last checkpoint gets that checkpoint's step (it needed at least
    its whole run; the solved bar's own check refuses its claims anyway)."""
    scratch = copy.deepcopy(model)
    meets = {step: key_position_mae(score(history.load_checkpoint(scratch, step), task, batches),
                                    task) <= SOLVED_KEYS_BITS
             for step in sorted(history.checkpoints)}
    stable = first_stable_step(meets)
    return stable if stable is not None else max(meets)
