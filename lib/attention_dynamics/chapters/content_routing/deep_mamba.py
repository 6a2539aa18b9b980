"""The authors' HMM Mamba and the standard one, deeper than the table's, trained on HMM filtering
matched in parameters to the transformer, and who leaves the plateau of the uniform predictor."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from torch import nn

from attention_dynamics.book.paper_numbers import AUTHORS_TRAINING_SEQUENCES
from attention_dynamics.book.results import Results
from attention_dynamics.chapters.content_routing.scores import Scores
from attention_dynamics.chapters.content_routing.settings import PLATEAU_MARGIN_BITS
from attention_dynamics.chapters.content_routing.training import Training, TrainingPlan
from attention_dynamics.measures.trajectories import relative_fall
from attention_dynamics.models.mamba import VARIANTS as MAMBA_VARIANTS
from attention_dynamics.models.registry import ARCHITECTURES
from attention_dynamics.parts import Units
from attention_dynamics.sequence_training import ArchitectureRun


def seeds_off_plateau(per_sample_maes, plateau: float) -> int:
    """How many of the per-sample MAEs (bits, one per seed) lie more than
    ``PLATEAU_MARGIN_BITS`` below the ``plateau`` (bits).

    >>> seeds_off_plateau([0.5, 0.56, 0.58, 0.7], plateau=0.6)
    1
    """
    return sum(mae < plateau - PLATEAU_MARGIN_BITS for mae in per_sample_maes)


@dataclass
class DeepMamba:
    """Both Mamba variants, ``n_layers`` deep, on HMM filtering.

    Attributes:
        n_layers: their depth.
        runs: each variant's runs (``"standard"``, ``"authors"``), one per seed.
        first_models: each variant's trained model of the first seed (eval mode).
        lstm: the table's LSTM runs on HMM filtering (their same-budget control).
    """

    n_layers: int
    runs: dict[str, list[ArchitectureRun]]
    first_models: dict[str, nn.Module]
    lstm: list[ArchitectureRun]

    def table(self) -> pd.DataFrame:
        """Parameters, per-sample MAE (bits, mean of seeds) and the least settled seed's loss
        fall over the last tenth, per variant and for the LSTM (columns)."""
        columns = {f"Mamba, {variant}, {self.n_layers} layers": runs
                   for variant, runs in self.runs.items()}
        columns["LSTM (the table's)"] = self.lstm
        return pd.DataFrame({
            label: {
                "parameters": runs[0].n_parameters,
                "per-sample MAE (bits), mean of seeds": np.mean(
                    [r.report.mae_per_sample for r in runs]),
                "loss fall over the last tenth (least settled seed)": max(
                    float(relative_fall(r.history.loss)) for r in runs),
            }
            for label, runs in columns.items()
        }).round(4)


def deep_mamba(results: Results, chosen: dict, plan: TrainingPlan, training: Training,
               scores: Scores, units: Units | None = None) -> DeepMamba:
    """Train each Mamba variant at the ``deep_mamba`` sizes on HMM filtering on the first
    ``deep_mamba_seeds`` seeds (the table's Mamba's training settings; ``plan``'s jobs
    ``deep/<variant>``, each taken from ``units`` where given); record their parameters,
    per-sample MAE over seeds and loss fall, every model's seeds off the plateau
    (``hmm_seeds_off_plateau_*``) and the run's share of the authors' training budgets."""
    runs, first_models = {}, {}
    for variant in MAMBA_VARIANTS:
        trained = plan.trained(f"deep/{variant}", units)
        runs[variant] = [run for _, run in trained]
        first_models[variant] = trained[0][0]
        results.record(f"n_parameters_mamba_{variant}_deep_hmm", runs[variant][0].n_parameters)
        results.record_spread(f"mae_per_sample_bits_mamba_{variant}_deep_hmm",
                              [run.report.mae_per_sample for run in runs[variant]])
        results.record(f"loss_fall_last_tenth_mamba_{variant}_deep_hmm",
                       max(relative_fall(run.history.loss) for run in runs[variant]))
    results.record("deep_mamba_layers", chosen["deep_mamba"]["n_layers"])
    off_plateau = {f"mamba_{variant}_deep": seeds_off_plateau(
                       [run.report.mae_per_sample for run in variant_runs], scores.uniform_mae)
                   for variant, variant_runs in runs.items()}
    off_plateau |= {arch: seeds_off_plateau(
                        [run.report.mae_per_sample for run in training.seed_runs(arch, "hmm")],
                        scores.uniform_mae)
                    for arch in ARCHITECTURES}
    results.record_all(off_plateau, prefix="hmm_seeds_off_plateau_")
    results.record("deep_mamba_seeds", chosen["deep_mamba_seeds"])
    for arch, task in (("mamba", "hmm"), ("lstm", "bijection")):
        results.record(f"budget_share_{arch}_{task}",
                       results.metrics[f"training_sequences_{task}"]
                       / AUTHORS_TRAINING_SEQUENCES[arch, task].value)
    return DeepMamba(chosen["deep_mamba"]["n_layers"], runs, first_models,
                     training.seed_runs("lstm", "hmm"))
