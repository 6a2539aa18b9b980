"""Part (d), how the query at each key position lines up with the earlier keys (query-key alignment).

The cosine between the query at the ``k``-th key position and the keys at earlier positions,
averaged over heads and probe sequences, per layer; with the keys at the earlier *value*
positions (the hypotheses already revealed) and at the earlier *key* positions (the authors'
``qk-align``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.manifold_formation.calibration import BijectionRun
from attention_dynamics.chapters.manifold_formation.probes import CheckpointProbe
from attention_dynamics.measures.geometry import query_key_alignment
from attention_dynamics.tasks.bijection import BijectionTask


def alignment_maps(probe: CheckpointProbe, task: BijectionTask, step: int, key_positions: torch.Tensor
                   ) -> torch.Tensor:
    """``(layers, L, P)`` on the CPU: the mean ``cos(q at key k, k at earlier position j)`` of the
    checkpoint ``step`` on the probe, for ``L`` key positions and ``P`` ``key_positions``; ``nan``
    where ``j`` is later."""
    model = probe.at_step(step)
    device = probe.batch.tokens.device
    with torch.no_grad():
        _, record = model(probe.batch.tokens, return_record=True)
    queries = task.key_positions.to(device)
    maps = [query_key_alignment(layer.q, layer.k, queries, key_positions.to(device)).mean(0)
            for layer in record.attention]
    return torch.stack(maps).cpu()


@dataclass
class Alignment:
    """Query-key alignment on both layouts, trained and at initialisation.

    Attributes:
        table: mean cosine, one row per (layout, ``"value positions"`` | ``"key positions"``,
            layer), one column per model (``"random init"``, ``"trained"``).
        maps: the separate layout's trained maps, by the positions of the keys (``"value"``,
            ``"key"``): ``(layers, L, P)`` cosines as :func:`alignment_maps` returns them.
    """

    table: pd.DataFrame
    maps: dict[str, torch.Tensor]


def query_key_alignments(results: Results, runs: dict[str, BijectionRun],
                         probes: dict[str, CheckpointProbe]) -> Alignment:
    """Measure the alignment per layout, against value and key positions, at initialisation and
    trained, per layer; record the trained and initial means."""
    rows, shown = {}, {}
    for layout, run in runs.items():
        probe = probes[layout]
        for against in ("value", "key"):
            positions = getattr(run.task, f"{against}_positions")
            for label, step in (("random init", 0), ("trained", probe.final_step)):
                maps = alignment_maps(probe, run.task, step, positions)
                for layer in range(maps.shape[0]):
                    rows[layout, f"{against} positions", label, layer] = np.nanmean(maps[layer].numpy())
                if layout == "separate" and label == "trained":
                    shown[against] = maps
    table = pd.Series(rows, name="mean cos").unstack(2)
    for (layout, against, layer), row in table.iterrows():
        name = f"{layout}_qk_alignment_{against.split()[0]}_layer_{layer}"
        results.record(name, row["trained"])
        results.record(f"{name}_random_init", row["random init"])
    return Alignment(table, shown)
