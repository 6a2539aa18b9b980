"""Chapter 5's whole experiment, part by part in the notebook's order: numbers only (the
page's words come from :mod:`~attention_dynamics.chapters.content_routing.words`, which no
part imports)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.content_routing.architectures import (
    Architectures,
    record_architectures,
    record_sizes,
)
from attention_dynamics.chapters.content_routing.capacity import Capacity, capacity_question
from attention_dynamics.chapters.content_routing.deep_mamba import DeepMamba, deep_mamba
from attention_dynamics.chapters.content_routing.gradients import (
    NetFractions,
    ScanGradientCheck,
    net_fractions,
    scan_gradient_check,
)
from attention_dynamics.chapters.content_routing.hmm_reading import (
    EntropyTracking,
    entropy_tracking,
)
from attention_dynamics.chapters.content_routing.manifolds import Manifolds, value_manifolds
from attention_dynamics.chapters.content_routing.probes import (
    ReadingOffsets,
    RecallMaps,
    RecallProbe,
    RoutingOverTraining,
    reading_offsets,
    recall_maps,
    recall_probe,
    routing_over_training,
)
from attention_dynamics.chapters.content_routing.scores import (
    Comparisons,
    Scores,
    compare_architectures,
    record_references,
    score_table,
)
from attention_dynamics.chapters.content_routing.solving import SolveSteps, transformer_solve_steps
from attention_dynamics.chapters.content_routing.training import (
    Training,
    train_architectures,
    training_plan,
)
from attention_dynamics.parts import Units
from attention_dynamics.tasks.base import Task


@dataclass
class ContentRoutingRun:
    """Every part of chapter 5's experiment, as its part function returned it (each part's
    class documents its shapes and units)."""

    tasks: dict[str, Task]
    architectures: Architectures
    training: Training
    scores: Scores
    solve_steps: SolveSteps
    comparisons: Comparisons
    capacity: Capacity
    deep: DeepMamba
    tracking: EntropyTracking
    manifolds: Manifolds
    probe: RecallProbe
    offsets: ReadingOffsets
    routing: RoutingOverTraining
    maps: RecallMaps
    scan_check: ScanGradientCheck
    fractions: NetFractions


def run(results: Results, chosen: dict, device: torch.device, seed: int,
        units: Units | None = None) -> ContentRoutingRun:
    """Run chapter 5's experiment with ``chosen`` settings on ``device`` from base seed ``seed``,
    recording every metric into ``results``.

    Args:
        results: where every metric goes (the notebook's results file).
        chosen: what :func:`~attention_dynamics.chapters.content_routing.settings.settings`
            returns.
        device: where every model trains and is probed.
        seed: the base seed: the runs' seeds are ``seed + 11 (r + 1)``, the held-out and probe
            batches and the gradient checks draw from generators seeded from it.
        units: the trainings (:func:`~.training.units`) made by a run in parts
            (:mod:`attention_dynamics.parts`); without them every model trains here.
    """
    plan = training_plan(chosen, device, seed)
    tasks, architectures = plan.tasks, plan.architectures
    record_architectures(results, architectures)
    record_sizes(results, chosen, tasks, len(plan.seeds))
    training = train_architectures(results, plan, units)
    scores = score_table(results, tasks, training)
    solve_steps = transformer_solve_steps(results, chosen, tasks, architectures, training, scores,
                                          device)
    record_references(results, tasks, training)
    comparisons = compare_architectures(results, training, scores)
    capacity = capacity_question(results, chosen, plan, scores, units)
    deep = deep_mamba(results, chosen, plan, training, scores, units)
    tracking = entropy_tracking(results, tasks, training, device)
    manifolds = value_manifolds(results, chosen, tasks, training, device, seed)
    probe = recall_probe(chosen, tasks, architectures, training, device, seed)
    offsets = reading_offsets(results, probe, scores.recall_bar)
    routing = routing_over_training(results, probe, offsets)
    maps = recall_maps(probe, offsets)
    scan_check = scan_gradient_check(results, chosen, probe, offsets, device, seed)
    fractions = net_fractions(results, chosen, tasks, probe, offsets, scan_check, deep, device,
                              seed)
    return ContentRoutingRun(tasks=tasks, architectures=architectures, training=training,
                             scores=scores, solve_steps=solve_steps, comparisons=comparisons,
                             capacity=capacity, deep=deep, tracking=tracking,
                             manifolds=manifolds, probe=probe, offsets=offsets, routing=routing,
                             maps=maps, scan_check=scan_check, fractions=fractions)
