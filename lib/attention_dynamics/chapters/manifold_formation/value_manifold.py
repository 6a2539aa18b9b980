"""Part (f), the value manifold under every protocol of
:mod:`~attention_dynamics.measures.value_manifold`, against three nulls.

Each protocol is computed for the trained model and for three nulls: the same model at
initialisation, the MLP that cannot see its context (bijections only), and a coordinate that
knows only the position. Shares are fractions of the variance; correlations are absolute;
entropies are in bits.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import nn

from attention_dynamics.book.results import Results
from attention_dynamics.book.statistics import t_interval
from attention_dynamics.chapters.manifold_formation.calibration import BijectionRun, HmmRun, MlpControls
from attention_dynamics.chapters.manifold_formation.probes import (
    CheckpointProbe,
    probe_part,
    probe_sequences,
)
from attention_dynamics.chapters.manifold_formation.settings import PROBE_PARTS
from attention_dynamics.measures.geometry import pca
from attention_dynamics.measures.representations import final_streams
from attention_dynamics.measures.value_manifold import PROTOCOLS, ProtocolResult, manifold_protocols
from attention_dynamics.models import Transformer
from attention_dynamics.tasks.base import TaskBatch
from attention_dynamics.tasks.bijection import LAYOUTS, BijectionTask

PROTOCOL_KEYS = dict(zip(PROTOCOLS, ("scored_final", "value_prenorm", "value_standardised",
                                     "value_best_pc", "per_sequence"), strict=True))
"""Each protocol's part of its metrics' names, by protocol."""


@dataclass
class ProtocolInputs:
    """Where one task's protocols look, on its probe sequences.

    Attributes:
        probe: the run's checkpoints and probe sequences (``B`` of them).
        scored: ``(P,)`` the scored positions, on the device.
        values: ``(P',)`` the positions whose representation carries an entropy: a bijection's
            value positions, HMM's scored positions.
        lead: how many positions after a value position its entropy is read: 1 in a bijection (a
            value position carries the next key's posterior, once its pair is revealed), 0 in HMM.
    """

    probe: CheckpointProbe
    scored: torch.Tensor
    values: torch.Tensor
    lead: int

    def value_entropy(self, batch: TaskBatch) -> torch.Tensor:
        """``(B', P')`` the Bayes entropy (bits) each value position of ``batch`` carries."""
        return batch.bayes_entropy_bits[:, self.values + self.lead]

    def protocols(self, model: nn.Module, batch: TaskBatch | None = None) -> dict[str, ProtocolResult]:
        """Every protocol of ``model`` on ``batch`` (default: the probe sequences), by name."""
        batch = self.probe.batch if batch is None else batch
        before, after = final_streams(model, batch.tokens)
        return manifold_protocols(before, after, self.scored, batch.bayes_entropy_bits[:, self.scored],
                                  self.values, self.value_entropy(batch))


@dataclass
class ValueManifold:
    """The protocols on both bijection layouts and on HMM filtering.

    Attributes:
        inputs: where each task's protocols look, by task (the layouts, then ``"hmm"``, whose
            probe is ``probe_size`` sequences of seed ``seed + 8``).
        table: one row per (task, protocol, model) with the fields of
            :class:`~attention_dynamics.measures.value_manifold.ProtocolResult`, the models being
            ``"trained"``, ``"random init"`` and (bijections) ``"MLP"``.
    """

    inputs: dict[str, ProtocolInputs]
    table: pd.DataFrame


def protocol_table(rows: dict[tuple[str, str], dict[str, ProtocolResult]]) -> pd.DataFrame:
    """The protocols' results ``(task, model) -> protocol -> result`` as a table indexed by
    (task, protocol, model), sorted."""
    table = pd.DataFrame([
        dict(task=task, model=label, protocol=protocol, **dataclasses.asdict(result))
        for (task, label), found in rows.items() for protocol, result in found.items()])
    return table.set_index(["task", "protocol", "model"]).sort_index()


def record_protocols(results: Results, table: pd.DataFrame) -> None:
    """Record each task's (both layouts' and ``"hmm"``) and protocol's verdict numbers: the
    trained model's share and correlation, the strongest null of each (the position's among the
    correlations), what the position alone explains, the correlation beyond position (0 where
    undefined) and each null's correlation."""
    for task_name in (*LAYOUTS, "hmm"):
        for protocol, key in PROTOCOL_KEYS.items():
            rows = table.loc[(task_name, protocol)]
            trained = rows.loc["trained"]
            nulls = rows.drop(index="trained")
            prefix = f"{task_name}_manifold_{key}"
            results.record(f"{prefix}_share", trained["share"])
            results.record(f"{prefix}_entropy_corr", trained["correlation"])
            results.record(f"{prefix}_share_strongest_null", nulls["share"].max())
            results.record(f"{prefix}_position_alone", trained["position_alone"])
            results.record(f"{prefix}_entropy_corr_strongest_null",
                           max(nulls["correlation"].max(), trained["position_alone"]))
            results.record(f"{prefix}_entropy_corr_beyond_position",
                           np.nan_to_num(trained["beyond_position"], nan=0.0))
            for label, row in nulls.iterrows():
                results.record(f"{prefix}_entropy_corr_{label.lower().replace(' ', '_')}",
                               row["correlation"])


STANDARDISED = PROTOCOLS[2]
"""The protocol whose PC1 share carries an interval over the probe's parts and is judged on every
seed: the value positions, each coordinate standardised."""


def part_shares(inputs: ProtocolInputs, model: nn.Module) -> torch.Tensor:
    """``(PROBE_PARTS,)`` ``model``'s PC1 share (a fraction of the variance, standardised value
    positions) on each disjoint part of the probe
    (:func:`~attention_dynamics.chapters.manifold_formation.probes.probe_part`)."""
    return torch.tensor([inputs.protocols(model, probe_part(inputs.probe.batch, i))[STANDARDISED].share
                         for i in range(PROBE_PARTS)])


def standardised_share(inputs: ProtocolInputs, model: nn.Module) -> tuple[float, float, float]:
    """``model``'s PC1 share (a fraction of the variance) at the standardised value positions of
    the probe sequences, and the 95 % t interval ``(low, high)`` of that share over the probe's
    disjoint parts (:func:`part_shares`): the numbers (f) records for one trained model."""
    return (inputs.protocols(model)[STANDARDISED].share,
            *t_interval(part_shares(inputs, model)))


def value_manifolds(results: Results, chosen: dict, runs: dict[str, BijectionRun], mlps: MlpControls,
                    probes: dict[str, CheckpointProbe], hmm: HmmRun, device: torch.device,
                    seed: int) -> ValueManifold:
    """Every protocol on each layout (trained, MLP, random init) and on HMM filtering (trained,
    random init); record each protocol's verdict numbers, and the 95 % interval of the
    bijections' PC1 share over the parts of the probe."""
    hmm_scratch = Transformer(hmm.config, torch.Generator()).to(device)
    hmm_probe = probe_sequences(hmm.task, chosen, seed + 8, device)
    hmm_positions = hmm.task.query_positions.to(device)
    inputs, rows = {}, {}
    for layout, run in runs.items():
        probe = probes[layout]
        inputs[layout] = ProtocolInputs(probe, run.task.key_positions.to(device),
                                        run.task.value_positions.to(device), lead=1)
        for label, model in (("trained", probe.at_step(probe.final_step)), ("MLP", mlps.runs[layout].model)):
            rows[layout, label] = inputs[layout].protocols(model)
        rows[layout, "random init"] = inputs[layout].protocols(probe.at_step(0))
    inputs["hmm"] = ProtocolInputs(CheckpointProbe(hmm.history, hmm_scratch, hmm_probe), hmm_positions,
                                   hmm_positions, lead=0)
    for label, step in (("trained", inputs["hmm"].probe.final_step), ("random init", 0)):
        rows["hmm", label] = inputs["hmm"].protocols(inputs["hmm"].probe.at_step(step))
    table = protocol_table(rows)
    record_protocols(results, table)
    for layout in runs:
        trained = inputs[layout].probe.at_step(inputs[layout].probe.final_step)
        results.record_all(dict(zip(("low", "high"), t_interval(part_shares(inputs[layout], trained)),
                                    strict=True)),
                           prefix=f"{layout}_manifold_value_standardised_share_")
    return ValueManifold(inputs, table)


def bayes_predictive_share(results: Results, probe: TaskBatch, task: BijectionTask) -> None:
    """Record the share of the variance on PC1 of the Bayes predictive vectors at ``task``'s key
    positions of ``probe``."""
    with torch.no_grad():
        vectors = probe.bayes_predictive[:, task.key_positions]
    results.record("bayes_predictive_pc1_share",
                   pca(vectors.flatten(0, 1)).explained_variance_ratio[0])

