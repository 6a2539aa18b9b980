"""Part (e), which heads carry the computation, found by masking each head and bypassing each layer.

A head *matters* when masking it (its output set to zero) at least doubles the entropy MAE (mean
curve, bits) of the trained model on its held-out batches.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.manifold_formation.calibration import BijectionRun
from attention_dynamics.chapters.manifold_formation.probes import CheckpointProbe
from attention_dynamics.chapters.manifold_formation.training import score
from attention_dynamics.models import Transformer
from attention_dynamics.tasks.base import TaskBatch
from attention_dynamics.tasks.bijection import BijectionTask


@dataclass
class HeadAblation:
    """The entropy MAE of one model with each head masked and each layer bypassed.

    Attributes:
        maes: MAE (bits) by ``(layer, head)`` for a masked head and by ``(layer, "bypassed")``
            for a bypassed layer.
        baseline: the MAE (bits) of the intact model.
    """

    maes: pd.Series
    baseline: float

    @property
    def single_heads(self) -> pd.Series:
        """The MAEs (bits) with one head masked, by ``(layer, head)``."""
        return self.maes[[key for key in self.maes.index if key[1] != "bypassed"]]

    @property
    def important(self) -> list[tuple[int, int]]:
        """The ``(layer, head)`` pairs whose masking at least doubles the MAE."""
        return [key for key, mae in self.single_heads.items() if mae >= 2 * self.baseline]


def ablate_heads(model: Transformer, task: BijectionTask, batches: list[TaskBatch]) -> HeadAblation:
    """The mean-curve entropy MAE (bits) of ``model`` on ``batches`` with each head masked and
    each layer bypassed, and the heads that matter (masking one at least doubles the MAE)."""
    baseline = score(model, task, batches).mae_mean_curve
    found = {}
    for layer in range(model.config.n_layers):
        for head in range(model.config.n_heads):
            with model.ablated(heads={layer: [head]}):
                found[layer, head] = score(model, task, batches).mae_mean_curve
        with model.ablated(bypass=[layer]):
            found[layer, "bypassed"] = score(model, task, batches).mae_mean_curve
    return HeadAblation(pd.Series(found, name="entropy MAE, mean curve (bits)"), baseline)


def head_ablation(results: Results, run: BijectionRun, probe: CheckpointProbe) -> HeadAblation:
    """Ablate the heads of ``run``'s trained model (loaded into ``probe``'s scratch model) on its
    held-out batches; record the largest and the smallest MAE with one head masked and the number
    of heads that matter."""
    ablation = ablate_heads(probe.at_step(probe.final_step), run.task, run.batches)
    results.record("largest_single_head_ablation_mae_bits", ablation.single_heads.max())
    results.record("smallest_single_head_ablation_mae_bits", ablation.single_heads.min())
    results.record("n_important_heads", len(ablation.important))
    return ablation
