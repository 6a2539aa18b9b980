"""Chapter 1's whole experiment, part by part in the notebook's order."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.score_gradient.checks import (
    DiagnosticsCost,
    GradientCheck,
    HeadMatrices,
    ScoreStep,
    TrainedHeads,
    WeightStep,
    check_closed_form,
    diagnostics_cost,
    head_matrices,
    score_step,
    trained_heads,
    weight_step,
)


@dataclass(frozen=True)
class ScoreGradientRun:
    """Every part of chapter 1's experiment (each part's class documents its shapes)."""

    closed_form: GradientCheck
    matrices: HeadMatrices
    score_step: ScoreStep
    weight_step: WeightStep
    trained: TrainedHeads
    cost: DiagnosticsCost


def run(results: Results, chosen: dict, device: torch.device, seed: int) -> ScoreGradientRun:
    """Run every part with ``chosen`` settings on ``device`` and record its metrics into
    ``results``; ``chosen`` is what
    :func:`~attention_dynamics.chapters.score_gradient.settings.settings` returns.

    The random problems of parts (a) and (b) come, in that order, from one generator on
    ``device`` seeded with ``seed`` (the one ``setup_notebook`` returns); the later parts seed
    their own generators from ``seed``.
    """
    generator = torch.Generator(device=device).manual_seed(seed)
    closed_form = check_closed_form(results, chosen, generator, device)
    matrices = head_matrices(generator, device)
    return ScoreGradientRun(closed_form=closed_form, matrices=matrices,
                      score_step=score_step(results, chosen, seed, device),
                      weight_step=weight_step(results, chosen, seed, device),
                      trained=trained_heads(results, chosen),
                      cost=diagnostics_cost(results, chosen, seed, device))
