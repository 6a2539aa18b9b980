"""The whole chapter, every part in the notebook's order."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.manifold_formation.ablation import HeadAblation, head_ablation
from attention_dynamics.chapters.manifold_formation.alignment import Alignment, query_key_alignments
from attention_dynamics.chapters.manifold_formation.beyond_position import (
    BeyondPosition,
    Replacement,
    hmm_beyond_position,
    replacement_bijection,
)
from attention_dynamics.chapters.manifold_formation.calibration import (
    BijectionRun,
    HmmRun,
    MlpControls,
    bijections,
    hmm_filtering,
    mlp_controls,
)
from attention_dynamics.chapters.manifold_formation.frame import Frame, frame_and_precision
from attention_dynamics.chapters.manifold_formation.keys import Keys, key_frames
from attention_dynamics.chapters.manifold_formation.seeds import EverySeed, every_seed
from attention_dynamics.chapters.manifold_formation.value_manifold import (
    ValueManifold,
    bayes_predictive_share,
    value_manifolds,
)


@dataclass
class ManifoldFormationRun:
    """Every part of chapter 4's experiment, as its part function returned it (each part's class
    documents its shapes and units)."""

    bijections: dict[str, BijectionRun]
    hmm: HmmRun
    mlps: MlpControls
    keys: Keys
    alignment: Alignment
    ablation: HeadAblation
    manifold: ValueManifold
    hmm_beyond: BeyondPosition
    replacement: Replacement
    frame: Frame
    seeds: EverySeed


def run(results: Results, chosen: dict, device: torch.device, seed: int) -> ManifoldFormationRun:
    """Run chapter 4's experiment with ``chosen`` settings on ``device`` from base seed ``seed``,
    part by part in the notebook's order, recording every metric into ``results``; ``chosen`` is
    what :func:`~attention_dynamics.chapters.manifold_formation.settings.settings` returns.

    Every model, data stream, probe and shuffle draws from a generator of its own, seeded from
    ``seed`` (the initialisations of the key statistics' null excepted: seeds 10000 to 10099).
    """
    runs = bijections(results, chosen, device, seed)
    hmm = hmm_filtering(results, chosen, device, seed)
    mlps = mlp_controls(results, chosen, runs, device, seed)
    keys = key_frames(results, chosen, runs, device, seed)
    alignment = query_key_alignments(results, runs, keys.probes)
    separate = runs["separate"]
    probe = keys.probes["separate"]
    ablation = head_ablation(results, separate, probe)
    manifold = value_manifolds(results, chosen, runs, mlps, keys.probes, hmm, device, seed)
    hmm_beyond = hmm_beyond_position(results, manifold.inputs["hmm"], seed)
    replacement = replacement_bijection(results, chosen, device, seed)
    bayes_predictive_share(results, probe.batch, separate.task)
    frame = frame_and_precision(results, chosen, separate, probe, device, seed)
    seeds = every_seed(results, chosen, runs, hmm, manifold.inputs, hmm_beyond, device, seed)
    return ManifoldFormationRun(runs, hmm, mlps, keys, alignment, ablation, manifold, hmm_beyond,
                                replacement, frame, seeds)
