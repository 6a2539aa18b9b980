"""Chapter 2's whole experiment, part by part in the notebook's order."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.value_update.conditions import (
    Conditions,
    FeedbackAlignment,
    FirstOrderCheck,
    IdentityCheck,
    UniformStart,
    check_value_update,
    feedback_alignment,
    first_order_check,
    record_sizes,
    train_conditions,
    uniform_start,
)
from attention_dynamics.chapters.value_update.controls import (
    CapacityControls,
    EmComparison,
    InitSweep,
    SymmetricStart,
    capacity_controls,
    em_comparison,
    initialisation_sweep,
    symmetric_start,
)
from attention_dynamics.chapters.value_update.settings import toy_config


def chapter_seeds(chosen: dict, seed: int) -> tuple[list[int], list[int]]:
    """The seeds of the trained heads (``seed, seed + 1, ...``, ``n_seeds`` of them) and the
    first ``sweep_seeds`` of them, which the sweep over initial scales trains."""
    seeds = [seed + k for k in range(chosen["n_seeds"])]
    return seeds, seeds[:chosen["sweep_seeds"]]


@dataclass(frozen=True)
class ValueUpdateRun:
    """Every part of chapter 2's experiment (each part's class documents its shapes)."""

    identity: IdentityCheck
    conditions: Conditions
    uniform: UniformStart
    first_order: FirstOrderCheck
    alignment: FeedbackAlignment
    capacity: CapacityControls
    symmetric: SymmetricStart
    sweep: InitSweep
    em: EmComparison


def run(results: Results, chosen: dict, device: torch.device, seed: int) -> ValueUpdateRun:
    """Run chapter 2's experiment with ``chosen`` settings on ``device`` from base seed
    ``seed``, recording every metric into ``results``; ``chosen`` is what
    :func:`~attention_dynamics.chapters.value_update.settings.settings` returns.

    The one-step identity check draws from a generator on ``device`` seeded with ``seed`` (the
    one :func:`~attention_dynamics.book.notebook.setup_notebook` returns); the trainings seed
    a generator per seed.
    """
    config = toy_config(chosen)
    seeds, sweep_seeds = chapter_seeds(chosen, seed)
    record_sizes(results, chosen, config)
    generator = torch.Generator(device=device).manual_seed(seed)
    identity = check_value_update(results, config, chosen["n_seeds"], device, generator)
    conditions = train_conditions(results, config, seeds, device)
    uniform = uniform_start(results, config, seeds, device, conditions)
    first_order = first_order_check(results, conditions)
    alignment = feedback_alignment(results, conditions)
    capacity = capacity_controls(results, conditions)
    symmetric = symmetric_start(results, config, seeds, device, conditions)
    sweep = initialisation_sweep(results, config, sweep_seeds, device)
    em = em_comparison(results, config, seeds, device, conditions)
    return ValueUpdateRun(identity=identity, conditions=conditions, uniform=uniform,
                      first_order=first_order, alignment=alignment, capacity=capacity,
                      symmetric=symmetric, sweep=sweep, em=em)
