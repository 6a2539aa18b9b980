"""Chapter 4's tables, each from results to a pandas DataFrame (entropies, MAEs and KLs in bits)."""

from __future__ import annotations

import pandas as pd
import torch

from attention_dynamics.chapters.manifold_formation.ablation import HeadAblation
from attention_dynamics.chapters.manifold_formation.alignment import Alignment
from attention_dynamics.chapters.manifold_formation.beyond_position import BeyondPosition
from attention_dynamics.chapters.manifold_formation.calibration import BijectionRun, HmmRun, MlpControls
from attention_dynamics.chapters.manifold_formation.frame import Frame
from attention_dynamics.chapters.manifold_formation.keys import MEAN_ABS, SIGNED, Keys
from attention_dynamics.chapters.manifold_formation.seeds import EverySeed
from attention_dynamics.chapters.manifold_formation.training import key_position_mae
from attention_dynamics.measures.trajectories import relative_fall
from attention_dynamics.models import count_parameters


def bijection_table(runs: dict[str, BijectionRun]) -> pd.DataFrame:
    """The entropy MAEs (mean curve, at the key positions, per sample), the KL to Bayes, the mass
    outside the answer slice and the loss's fall over the last tenth of training, a column per
    layout (4 decimals)."""
    return pd.DataFrame({
        layout: {
            "entropy MAE, mean curve (bits)": run.report.mae_mean_curve,
            "entropy MAE, mean curve, key positions (bits)": key_position_mae(run.report, run.task),
            "entropy MAE, per sample (bits)": run.report.mae_per_sample,
            "KL to Bayes (bits)": run.report.kl_bits,
            "mass outside the answer slice": run.report.leaked_mass,
            "loss fall over the last tenth": relative_fall(run.history.loss).item(),
        }
        for layout, run in runs.items()
    }).round(4)


def hmm_length_table(hmm: HmmRun) -> pd.DataFrame:
    """The HMM model's entropy MAEs, the observation-blind predictor's per-sample MAE and the KL to
    Bayes, a column per number of observations (4 decimals)."""
    return pd.DataFrame({
        K: {
            "entropy MAE, mean curve (bits)": report.mae_mean_curve,
            "entropy MAE, per sample (bits)": report.mae_per_sample,
            "observation-blind predictor, per sample (bits)": hmm.blind[K]["average_curve"],
            "KL to Bayes (bits)": report.kl_bits,
        }
        for K, report in hmm.reports.items()
    }).round(4)


def mlp_table(runs: dict[str, BijectionRun], mlps: MlpControls) -> pd.DataFrame:
    """Both models' parameters, the MLP's MAE against its floor and the transformer's MAE, a column
    per layout (4 decimals)."""
    return pd.DataFrame({
        layout: {
            "transformer parameters": count_parameters(run.model),
            "MLP parameters": count_parameters(mlps.runs[layout].model),
            "MLP entropy MAE, mean curve (bits)": mlps.runs[layout].report.mae_mean_curve,
            "floor: the marginal's gap (bits)": mlps.runs[layout].floor,
            "transformer entropy MAE, mean curve (bits)": run.report.mae_mean_curve,
        }
        for layout, run in runs.items()
    }).round(4)


KEY_STATISTIC_WORDS = {
    MEAN_ABS: "mean |cos|, normed, layer 0 (the authors' analysis suite)",
    SIGNED: "signed cos, raw, layer 0 (the authors' figure script)",
}
"""The key table's names of the authors' two statistics, which name their code, in words."""


def key_table(keys: Keys) -> pd.DataFrame:
    """Every key statistic (columns, the authors' two named in words) of every (layout, model)
    row (the index's two levels so named), 3 decimals, a dash where a row does not have it
    (the authors' checkpoint)."""
    table = pd.DataFrame(keys.rows).T.round(3).astype(object).fillna("–")
    return table.rename(columns=KEY_STATISTIC_WORDS).rename_axis(["layout", "model"])


def alignment_table(alignment: Alignment) -> pd.DataFrame:
    """The mean query–key cosine of the trained model and its initialisation (columns), a row
    per layout, the earlier positions the keys are taken at, and layer (3 decimals)."""
    return alignment.table.round(3).rename_axis(["layout", "keys at", "layer"])


def ablation_table(ablation: HeadAblation) -> pd.DataFrame:
    """The entropy MAE (bits) with each head masked and each layer bypassed, a row each, by
    layer and head ("bypassed" for the whole layer) (4 decimals)."""
    return ablation.maes.round(4).rename_axis(["layer", "head"]).to_frame()


def beyond_table(found: BeyondPosition) -> pd.DataFrame:
    """The trained model and its initialisation (columns) under the protocol beyond position,
    against the 99th percentile of their shuffles (3 decimals)."""
    return pd.DataFrame({
        label: {
            "|r| beyond position, chosen PC": value,
            "shuffled within position: 99th percentile": torch.quantile(draws, 0.99).item(),
        }
        for label, value, draws in (("trained", found.observed, found.draws),
                                    ("random init", found.random_init, found.init_draws))
    }).round(3)


def frame_table(frame: Frame) -> pd.DataFrame:
    """The judged numbers of the constant-rate runs, a row per seed (4 decimals)."""
    return pd.DataFrame(frame.per_seed).rename_axis("seed").round(4)


def seeds_table(frame: Frame, every: EverySeed) -> pd.DataFrame:
    """The bijections' key-position MAEs (the separate layout's from (g)) and the HMM numbers, a
    row per seed (4 decimals)."""
    maes = {"separate bijection, constant rate (g): MAE at the keys (bits)":
            frame.per_seed["bijection_entropy_mae_keys_bits"],
            "shared bijection: MAE at the keys (bits)": every.shared_maes}
    return pd.DataFrame(maes).join(every.hmm).rename_axis("seed").round(4)

