"""Part (h), the trained models on every seed, each number the ledger judges about a trained
model measured seed by seed against the same held-out data.

Seed 0 is the runs of (a) and (b); seed ``r > 0`` has its own initialisation and its own data
(:func:`~attention_dynamics.chapters.manifold_formation.training.replicate_seed`). The
separate layout's seeds are the constant-rate runs of (g). MAEs and steps are in bits.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pandas as pd
import torch

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.manifold_formation.beyond_position import BeyondPosition, beyond_position
from attention_dynamics.chapters.manifold_formation.calibration import (
    BijectionRun,
    HmmRun,
    error_steps,
    length_kl_ratio,
)
from attention_dynamics.chapters.manifold_formation.training import (
    key_position_mae,
    replicate_seed,
    score,
    train,
)
from attention_dynamics.chapters.manifold_formation.value_manifold import ProtocolInputs
from attention_dynamics.measures.trajectories import relative_fall
from attention_dynamics.models import Transformer
from attention_dynamics.tasks.bijection import LAYOUTS


def bijection_seed(chosen: dict, run: BijectionRun, replicate: int, device: torch.device, seed: int
                   ) -> tuple[float, float]:
    """The key-position MAE (bits) on the layout's held-out batches and the training loss's fall
    over the last tenth of the bijection model of seed ``replicate`` in ``run``'s layout (0:
    ``run`` itself)."""
    model, history = run.model, run.history
    if replicate > 0:
        index = LAYOUTS.index(run.task.layout)
        init = torch.Generator().manual_seed(replicate_seed(seed, replicate, 10 * index))
        model = Transformer(run.config, init)
        history = train(model, run.task, chosen, "bijection_training",
                        replicate_seed(seed, replicate, 100 + index), device,
                        f"bijection elimination, {run.task.layout} layout, seed {replicate}")
    report = score(model, run.task, run.batches)
    return key_position_mae(report, run.task), relative_fall(history.loss).item()


def hmm_seed(chosen: dict, hmm: HmmRun, inputs: ProtocolInputs, found: BeyondPosition, replicate: int,
             device: torch.device, seed: int) -> dict[str, float]:
    """The HMM numbers the ledger judges for the model of seed ``replicate`` (0: ``hmm`` itself,
    with its protocol beyond position ``found``; the others judged on the same probe and
    shuffles, seed ``seed + 9``)."""
    model, history = hmm.model, hmm.history
    if replicate > 0:
        model = Transformer(hmm.config, torch.Generator().manual_seed(replicate_seed(seed, replicate, 1)))
        history = train(model, hmm.task, chosen, "hmm_training", replicate_seed(seed, replicate, 200), device,
                        f"HMM filtering, seed {replicate}")
        found = beyond_position(dataclasses.replace(inputs, probe=dataclasses.replace(inputs.probe,
                                                                                      history=history)),
                                seed + 9)
    reports = {K: score(model, hmm.task, batches) for K, batches in hmm.batches.items()}
    at_boundary, inside_max = error_steps(reports[hmm.longest].abs_error, hmm.train_length)
    return {
        "entropy_mae_bits": reports[hmm.train_length].mae_mean_curve,
        "entropy_mae_per_sample_bits": reports[hmm.train_length].mae_per_sample,
        "length_kl_ratio": length_kl_ratio(reports, hmm.train_length),
        "error_step_over_within_train_max_bits": at_boundary - inside_max,
        "loss_fall_last_tenth": relative_fall(history.loss).item(),
        "beyond_position_over_strongest_null": found.observed - found.strongest_null,
        "beyond_position_component": found.component,
        "beyond_position_variance_share": found.variance_share,
    }


def weakest_seed(hmm_seeds: pd.DataFrame) -> pd.Series:
    """The row of the seed whose effect beyond position sits on the weakest component: the
    largest rank, then the smallest share of the variance."""
    return hmm_seeds.sort_values(["beyond_position_component", "beyond_position_variance_share"],
                                 ascending=[False, True]).iloc[0]


@dataclass
class EverySeed:
    """The trained models' judged numbers on every seed.

    Attributes:
        shared_maes: the shared layout's key-position MAE (bits), per seed.
        hmm: :func:`hmm_seed`'s numbers, a row per seed.
    """

    shared_maes: list[float]
    hmm: pd.DataFrame


def every_seed(results: Results, chosen: dict, runs: dict[str, BijectionRun], hmm: HmmRun,
               inputs: ProtocolInputs, found: BeyondPosition, device: torch.device, seed: int) -> EverySeed:
    """Repeat the shared layout's bijection and the HMM runs on ``chosen["n_seeds"]`` seeds;
    record each judged number seed by seed (with the means and extremes of the margins), the
    largest losses' falls and the weakest seed's component."""
    n_seeds = chosen["n_seeds"]
    maes, falls = zip(*(bijection_seed(chosen, runs["shared"], r, device, seed) for r in range(n_seeds)),
                      strict=True)
    results.record_seeds("shared_bijection_entropy_mae_keys_bits", maes)
    results.record("shared_bijection_loss_fall_last_tenth_seeds_max", max(falls))
    hmm_seeds = pd.DataFrame([hmm_seed(chosen, hmm, inputs, found, r, device, seed) for r in range(n_seeds)])
    results.record_seeds("hmm_entropy_mae_per_sample_bits", hmm_seeds["entropy_mae_per_sample_bits"])
    results.record_seeds("hmm_entropy_mae_bits", hmm_seeds["entropy_mae_bits"])
    results.record("hmm_entropy_mae_per_sample_bits_seeds_max",
                   hmm_seeds["entropy_mae_per_sample_bits"].max())
    results.record_seeds("hmm_length_kl_ratio", hmm_seeds["length_kl_ratio"])
    for name in ("error_step_over_within_train_max_bits", "beyond_position_over_strongest_null"):
        results.record_spread(f"hmm_{name}", hmm_seeds[name])
    results.record("hmm_loss_fall_last_tenth_seeds_max", hmm_seeds["loss_fall_last_tenth"].max())
    worst = weakest_seed(hmm_seeds)
    results.record("hmm_beyond_position_component_worst_seed", worst["beyond_position_component"])
    results.record("hmm_beyond_position_variance_share_worst_seed", worst["beyond_position_variance_share"])
    return EverySeed(list(maes), hmm_seeds)
