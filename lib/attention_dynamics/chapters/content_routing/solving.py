"""The step from which the transformer (first seed) solves each task, the first checkpoint from
which it stays at the report's bar on the held-out set. Another architecture's failure on a task
counts only after it has trained several times as long, its loss flat."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.content_routing.architectures import Architectures
from attention_dynamics.chapters.content_routing.scores import Scores
from attention_dynamics.chapters.content_routing.settings import (
    BIJECTION_SOLVE_BAR_BITS,
    HMM_SOLVE_SHARE,
    TASKS,
)
from attention_dynamics.chapters.content_routing.training import Training
from attention_dynamics.measures.metrics import evaluate
from attention_dynamics.measures.stability import first_stable_step
from attention_dynamics.models.registry import build_model
from attention_dynamics.tasks.associative_recall import recall_accuracy
from attention_dynamics.tasks.base import Task, TaskBatch


def entropy_bars(scores: Scores) -> dict[str, tuple[str, float]]:
    """The report's bar on each entropy task: the measure of the held-out report and its largest
    value (bits); bijection: the mean-curve MAE, HMM: the per-sample MAE at most half the
    observation-blind predictor's."""
    return {"bijection": ("mae_mean_curve", BIJECTION_SOLVE_BAR_BITS),
            "hmm": ("mae_per_sample", HMM_SOLVE_SHARE * scores.blind["average_curve"])}


def meets_bar(task_name: str, task: Task, model: nn.Module, eval_batches: list[TaskBatch],
              scores: Scores) -> bool:
    """Whether ``model`` is at the report's bar on ``task`` (named ``task_name``) on the
    held-out ``eval_batches``: the recall bar of ``scores`` for the mean accuracy over batches,
    else :func:`entropy_bars`."""
    if task_name == "recall":
        with torch.no_grad():
            accuracy = np.mean([recall_accuracy(model(b.tokens), b) for b in eval_batches])
        return accuracy >= scores.recall_bar
    measure, bar = entropy_bars(scores)[task_name]
    report = evaluate(model, eval_batches, answer_tokens=getattr(task, "answer_tokens", None))
    return getattr(report, measure) <= bar


@dataclass
class SolveSteps:
    """The transformer's solve step per task.

    Attributes:
        steps: the first checkpoint from which the first seed stays at the bar, per task
            (``None``: it does not within its steps).
    """

    steps: dict[str, int | None]


def transformer_solve_steps(results: Results, chosen: dict, tasks: dict[str, Task],
                            architectures: Architectures, training: Training, scores: Scores,
                            device: torch.device) -> SolveSteps:
    """Find the transformer's solve step on each task from its first seed's checkpoints; record
    ``transformer_solved_<task>`` (0 or 1) and ``transformer_solve_step_<task>`` (its steps
    where it does not solve it)."""
    steps = {}
    for name in TASKS:
        history = training.runs["transformer", name, 0].history
        model = build_model(architectures.configs[name]["transformer"], torch.Generator()).to(device)
        meets = {step: meets_bar(name, tasks[name], history.load_checkpoint(model, step),
                                 training.eval_sets[name], scores)
                 for step in sorted(history.checkpoints)}
        steps[name] = first_stable_step(meets)
        results.record(f"transformer_solved_{name}", int(steps[name] is not None))
        results.record(f"transformer_solve_step_{name}",
                       chosen["steps"][name] if steps[name] is None else steps[name])
    return SolveSteps(steps)
