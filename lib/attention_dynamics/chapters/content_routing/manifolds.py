"""The value manifolds, a PCA of each architecture's final representations at the scored positions
of a probe batch, against the Bayes entropy (first seed, on the entropy tasks)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import torch

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.content_routing.settings import ENTROPY_TASKS
from attention_dynamics.chapters.content_routing.training import Training
from attention_dynamics.measures.geometry import ManifoldSummary, manifold_summary
from attention_dynamics.measures.routing_probes import final_representations
from attention_dynamics.models.registry import ARCHITECTURES
from attention_dynamics.tasks.base import Task


@dataclass
class Manifolds:
    """Each architecture's manifold on each entropy task.

    Attributes:
        summaries: ``summaries[arch, task]``, the PCA of the ``N Q`` representations at the
            scored positions (``N`` probe sequences, ``Q`` positions) and its fit to the entropy.
        entropy: each task's ``(N Q,)`` Bayes entropy (bits) at those points, in their order.
    """

    summaries: dict[tuple[str, str], ManifoldSummary]
    entropy: dict[str, torch.Tensor]

    def table(self) -> pd.DataFrame:
        """PC1's share of the variance, ``|Spearman(PC1, H)|`` and the ``R2`` of the entropy on
        PC1 and PC2, one row per architecture and task."""
        return pd.DataFrame({
            key: {"PC1 share": m.pc1_share, "|Spearman(PC1, H)|": abs(m.pc1_spearman),
                  "R2 of H on PC1, PC2": m.pc12_r2}
            for key, m in self.summaries.items()
        }).T.round(3)


def value_manifolds(results: Results, chosen: dict, tasks: dict[str, Task], training: Training,
                    device: torch.device, seed: int) -> Manifolds:
    """Draw a probe batch of ``probe_size`` sequences per entropy task (bijection, then HMM, from
    one generator on ``device`` seeded ``seed + 7``) and summarise every first-seed model's
    representations; record ``pc1_share_*``, ``pc1_entropy_spearman_*`` (absolute) and
    ``pc12_entropy_r2_*`` per architecture and task."""
    generator = torch.Generator(device=device).manual_seed(seed + 7)
    probes = {name: tasks[name].sample(chosen["probe_size"], generator) for name in ENTROPY_TASKS}
    summaries, entropies = {}, {}
    for name, batch in probes.items():
        scored = tasks[name].query_positions.to(device)
        entropies[name] = batch.bayes_entropy_bits[:, scored].flatten()
        for arch in ARCHITECTURES:
            points = final_representations(training.first_models[arch, name],
                                           batch.tokens)[:, scored]
            summary = manifold_summary(points.flatten(0, 1), entropies[name])
            summaries[arch, name] = summary
            results.record(f"pc1_share_{arch}_{name}", summary.pc1_share)
            results.record(f"pc1_entropy_spearman_{arch}_{name}", abs(summary.pc1_spearman))
            results.record(f"pc12_entropy_r2_{arch}_{name}", summary.pc12_r2)
    return Manifolds(summaries, entropies)
