"""Where each model reads on associative recall. The routing probes of the recall checkpoints of
the transformer, the Mamba and the LSTM (mixing weights, the share on the queried pair, input
attributions), over training and at its end."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import nn

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.content_routing.architectures import Architectures
from attention_dynamics.chapters.content_routing.settings import RECALL_OFFSETS
from attention_dynamics.chapters.content_routing.training import Training
from attention_dynamics.measures.routing_probes import (
    attribution_share,
    input_attributions,
    mixing_weights,
    offset_profile,
    pair_read_delay,
    queried_pair_positions,
    queried_pair_share,
    reading_layer,
)
from attention_dynamics.models.registry import build_model
from attention_dynamics.sequence_training import ArchitectureRun
from attention_dynamics.tasks.associative_recall import AssociativeRecallTask, recall_accuracy
from attention_dynamics.tasks.base import Task, TaskBatch

PROBED = ("transformer", "mamba", "lstm")
"""The architectures whose recall runs kept checkpoints (the MLP reads no context)."""


@dataclass
class RecallProbe:
    """The recall checkpoints and the probe batch they are measured on.

    Attributes:
        task: the recall task.
        batch: the probe batch of ``B`` sequences.
        steps: the checkpoint steps, the last being the end of training.
        seeds: the ``S`` seeds.
        runs: each probed architecture's runs, one per seed.
        models: one model per probed architecture that checkpoints are loaded into.
        delay: where the transformer and the Mamba read a pair whole, in positions after it
            (:func:`~attention_dynamics.measures.routing_probes.pair_read_delay`).
    """

    task: AssociativeRecallTask
    batch: TaskBatch
    steps: list[int]
    seeds: list[int]
    runs: dict[str, list[ArchitectureRun]]
    models: dict[str, nn.Module]
    delay: dict[str, int]

    @property
    def final_step(self) -> int:
        """The last checkpoint (the end of training)."""
        return self.steps[-1]

    def load(self, arch: str, step: int, replicate: int = 0) -> nn.Module:
        """The recall model of ``arch`` and seed ``replicate`` after ``step`` updates (eval
        mode); the same object for every call with ``arch``."""
        return self.runs[arch][replicate].history.load_checkpoint(self.models[arch], step)

    def reading_weights(self, arch: str, step: int, replicate: int) -> torch.Tensor:
        """``(B, T, T)`` mixing weights of the layer with most mass on the queried pair."""
        layers = mixing_weights(self.load(arch, step, replicate), self.batch.tokens)
        return layers[reading_layer(layers, self.task, self.batch, delay=self.delay[arch])]

    def accuracy(self, arch: str, step: int, replicate: int) -> float:
        """The probe batch's recall accuracy of the model of :meth:`load`."""
        with torch.no_grad():
            return recall_accuracy(self.load(arch, step, replicate)(self.batch.tokens), self.batch)


def recall_probe(chosen: dict, tasks: dict[str, Task], architectures: Architectures,
                 training: Training, device: torch.device, seed: int) -> RecallProbe:
    """The recall checkpoints of the probed architectures, and a probe batch of ``probe_size``
    sequences drawn from a generator on ``device`` seeded ``seed + 8``."""
    recall = tasks["recall"]
    batch = recall.sample(chosen["probe_size"], torch.Generator(device=device).manual_seed(seed + 8))
    configs = architectures.configs["recall"]
    models = {arch: build_model(configs[arch], torch.Generator()).to(device) for arch in PROBED}
    delay = {arch: pair_read_delay(configs[arch]) for arch in ("transformer", "mamba")}
    return RecallProbe(recall, batch, training.recall_checkpoints, training.seeds,
                       {arch: training.seed_runs(arch, "recall") for arch in PROBED}, models,
                       delay)


@dataclass
class ReadingOffsets:
    """Where the trained transformer and Mamba put their mixing weights, relative to the queried
    key.

    Attributes:
        shown: per probed architecture, the seed (index) shown: the first whose model answers
            recall at the end, else the first.
        offsets: the positions relative to the queried key.
        profiles: the transformer's and the Mamba's ``(len(offsets),)`` share of a query row's
            mass at each offset (end of training, shown seed).
    """

    shown: dict[str, int]
    offsets: list[int]
    profiles: dict[str, torch.Tensor]

    def table(self) -> pd.DataFrame:
        """The profiles, one row per architecture, one column per offset (three decimals)."""
        return pd.DataFrame({arch: p.cpu().numpy() for arch, p in self.profiles.items()},
                            index=pd.Index(self.offsets, name="offset from the queried key")).T.round(3)


def reading_offsets(results: Results, probe: RecallProbe, recall_bar: float) -> ReadingOffsets:
    """Choose each architecture's shown seed (the first at ``recall_bar`` on the probe batch)
    and measure the offset profiles; record each profile's peak offset and the shown seed
    (``recall_offset_peak_<arch>``, ``recall_shown_seed_<arch>``)."""
    shown = {arch: next((r for r in range(len(probe.seeds))
                         if probe.accuracy(arch, probe.final_step, r) >= recall_bar), 0)
             for arch in PROBED}
    offsets = list(RECALL_OFFSETS)
    profiles = {arch: offset_profile(probe.reading_weights(arch, probe.final_step, shown[arch]),
                                     probe.task, probe.batch, offsets)
                for arch in probe.delay}
    for arch, mass in profiles.items():
        results.record(f"recall_offset_peak_{arch}", offsets[int(mass.argmax())])
        results.record(f"recall_shown_seed_{arch}", probe.seeds[shown[arch]])
    return ReadingOffsets(shown, offsets, profiles)


@dataclass
class RoutingOverTraining:
    """The routing probes at every checkpoint of every seed.

    Attributes:
        table: indexed by architecture, seed and step: the probe batch's ``accuracy``, the
            ``attribution`` share and (transformer, Mamba) the ``pair share`` of the mixing
            weights, each a mean over queries and sequences.
        by_step: the same averaged over seeds, indexed by architecture and step.
    """

    table: pd.DataFrame
    by_step: pd.DataFrame


def routing_over_training(results: Results, probe: RecallProbe,
                          offsets: ReadingOffsets) -> RoutingOverTraining:
    """Probe every checkpoint; record each share's mean over seeds at the start and the end
    (``recall_pair_share_<arch>_init``/``_final``, ``recall_attribution_share_<arch>_...``) and
    the Mamba's pair share on its shown seed at the end."""
    task, batch, final_step = probe.task, probe.batch, probe.final_step
    rows = []
    for arch in PROBED:
        for r, run_seed in enumerate(probe.seeds):
            for step in probe.steps:
                model = probe.load(arch, step, r)
                with torch.no_grad():
                    accuracy = recall_accuracy(model(batch.tokens), batch)
                row = dict(arch=arch, seed=run_seed, step=step, accuracy=accuracy,
                           attribution=attribution_share(model, task, batch).nanmean().item())
                if arch in probe.delay:
                    row["pair share"] = queried_pair_share(
                        probe.reading_weights(arch, step, r), task, batch,
                        delay=probe.delay[arch]).mean().item()
                rows.append(row)
    table = pd.DataFrame(rows).set_index(["arch", "seed", "step"])
    by_step = table.groupby(level=["arch", "step"]).mean()
    for arch in probe.delay:
        results.record(f"recall_pair_share_{arch}_init", by_step.loc[(arch, 0), "pair share"])
        results.record(f"recall_pair_share_{arch}_final",
                       by_step.loc[(arch, final_step), "pair share"])
    for arch in PROBED:
        results.record(f"recall_attribution_share_{arch}_init",
                       by_step.loc[(arch, 0), "attribution"])
        results.record(f"recall_attribution_share_{arch}_final",
                       by_step.loc[(arch, final_step), "attribution"])
    final = table.xs(final_step, level="step")
    results.record("recall_pair_share_mamba_final_shown",
                   final.loc[("mamba", probe.seeds[offsets.shown["mamba"]]), "pair share"])
    return RoutingOverTraining(table, by_step)


@dataclass
class RecallMaps:
    """Each probed model's rows on the first probe sequence, at the start and the end (shown
    seed).

    Attributes:
        maps: ``maps[arch, step]``, ``(M, T)`` rows of the ``M`` query positions over the ``T``
            positions, each summing to one: the reading layer's mixing weights (transformer,
            Mamba) or the input attributions (LSTM).
        steps: the two steps shown (0 and the end).
        pair_positions: ``(M, 2)`` the positions of each query's pair (key, value).
        delay: where the transformer and the Mamba read a pair whole (positions after it).
        labels: each position's kind: ``k``/``v`` a stored pair, ``-`` filler, ``Q`` the query
            marker, ``q`` a query.
    """

    maps: dict[tuple[str, int], np.ndarray]
    steps: tuple[int, int]
    pair_positions: torch.Tensor
    delay: dict[str, int]
    labels: list[str]


def recall_maps(probe: RecallProbe, offsets: ReadingOffsets) -> RecallMaps:
    """The maps of each probed architecture's shown seed at the start and the end."""
    task = probe.task
    steps = (0, probe.final_step)
    maps = {}
    for arch in PROBED:
        replicate = offsets.shown[arch]
        for step in steps:
            if arch == "lstm":
                weights = input_attributions(probe.load(arch, step, replicate), task,
                                             probe.batch)[0]
            else:
                weights = probe.reading_weights(arch, step, replicate)[0, task.query_positions]
            maps[arch, step] = (weights / weights.sum(-1, keepdim=True)).cpu().numpy()
    labels = (["k", "v"] * task.n_pairs + ["-"] * task.n_filler + ["Q"] + ["q"] * task.n_queries)
    return RecallMaps(maps, steps, queried_pair_positions(task, probe.batch)[0].cpu(),
                      probe.delay, labels)
