"""Part (h), the trained models on every seed, each number the ledger judges about a trained
model measured seed by seed against the same held-out data and the same probe sequences.

Seed 0 is the runs of (a) and (b); seed ``r > 0`` has its own initialisation and its own data
(:func:`~attention_dynamics.chapters.manifold_formation.training.replicate_seed`). Each
bijection layout's model is trained again on every seed with (a)'s settings (the separate
layout's constant-rate runs of (g) are other runs); its keys are measured as (d) measures them
and its value manifold as (f) does. MAEs are in bits, steps in training steps, cosines and
shares dimensionless.
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
from attention_dynamics.chapters.manifold_formation.keys import MEAN_ABS, SIGNED, key_statistics
from attention_dynamics.chapters.manifold_formation.training import (
    key_position_mae,
    replicate_seed,
    score,
    solve_step,
    train,
)
from attention_dynamics.chapters.manifold_formation.value_manifold import ProtocolInputs, standardised_share
from attention_dynamics.measures.trajectories import relative_fall
from attention_dynamics.models import Transformer
from attention_dynamics.sequence_training import SequenceTrainingHistory
from attention_dynamics.tasks.bijection import LAYOUTS


def bijection_model(chosen: dict, run: BijectionRun, replicate: int, device: torch.device, seed: int
                    ) -> tuple[Transformer, SequenceTrainingHistory]:
    """The bijection model of seed ``replicate`` in ``run``'s layout, on ``device``, and its
    training history: ``run``'s own for seed 0, else a model trained afresh with (a)'s settings
    (the ``i``-th layout of :data:`~attention_dynamics.tasks.bijection.LAYOUTS` initialised with
    seed ``replicate_seed(seed, replicate, 10 i)``, trained on data of seed
    ``replicate_seed(seed, replicate, 100 + i)``)."""
    if replicate == 0:
        return run.model, run.history
    index = LAYOUTS.index(run.task.layout)
    init = torch.Generator().manual_seed(replicate_seed(seed, replicate, 10 * index))
    model = Transformer(run.config, init)
    history = train(model, run.task, chosen, "bijection_training",
                    replicate_seed(seed, replicate, 100 + index), device,
                    f"bijection elimination, {run.task.layout} layout, seed {replicate}")
    return model, history


def bijection_seed(chosen: dict, run: BijectionRun, inputs: ProtocolInputs, replicate: int,
                   device: torch.device, seed: int) -> dict[str, float]:
    """The numbers the ledger judges about the bijection model of seed ``replicate`` in
    ``run``'s layout (:func:`bijection_model`; 0: ``run`` itself), by name.

    On the layout's held-out batches: the key-position MAE (bits) and the solve step (training
    steps, :func:`~attention_dynamics.chapters.manifold_formation.training.solve_step`); the
    training loss's fall over the last tenth (a ratio); on the layout's probe sequences
    (``inputs``): the key statistics :data:`~attention_dynamics.chapters.manifold_formation.keys.MEAN_ABS`
    and :data:`~attention_dynamics.chapters.manifold_formation.keys.SIGNED` (cosines) and the
    value manifold's standardised PC1 share with its 95 % interval over the probe's parts
    (:func:`~attention_dynamics.chapters.manifold_formation.value_manifold.standardised_share`).
    Seed 0's keys and manifold are measured on its last checkpoint loaded into the probe's
    scratch model, as (d) and (f) measure them, so they are (d)'s and (f)'s numbers.
    """
    model, history = bijection_model(chosen, run, replicate, device, seed)
    report = score(model, run.task, run.batches)
    measured = inputs.probe.at_step(inputs.probe.final_step) if replicate == 0 else model
    keys = key_statistics(measured, run.task, inputs.probe.batch)
    share, low, high = standardised_share(inputs, measured)
    return {
        "bijection_entropy_mae_keys_bits": key_position_mae(report, run.task),
        "bijection_loss_fall_last_tenth": relative_fall(history.loss).item(),
        "bijection_solve_step": solve_step(model, history, run.task, run.batches),
        "key_orthogonality": keys[MEAN_ABS],
        "key_signed_cosine": keys[SIGNED],
        "manifold_value_standardised_share": share,
        "manifold_value_standardised_share_low": low,
        "manifold_value_standardised_share_high": high,
    }


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


PER_SEED = ("bijection_entropy_mae_keys_bits", "key_orthogonality", "key_signed_cosine",
            "manifold_value_standardised_share", "manifold_value_standardised_share_low",
            "manifold_value_standardised_share_high")
"""The numbers of :func:`bijection_seed` that (h) records seed by seed, as ``<layout>_<name>``."""


@dataclass
class EverySeed:
    """The trained models' judged numbers on every seed.

    Attributes:
        bijections: per layout, :func:`bijection_seed`'s numbers, a row per seed (seed 0 first).
        hmm: :func:`hmm_seed`'s numbers, a row per seed.
    """

    bijections: dict[str, pd.DataFrame]
    hmm: pd.DataFrame

    @property
    def shared_maes(self) -> list[float]:
        """The shared layout's key-position MAE (bits), per seed."""
        return self.bijections["shared"]["bijection_entropy_mae_keys_bits"].tolist()


def every_seed(results: Results, chosen: dict, runs: dict[str, BijectionRun], hmm: HmmRun,
               inputs: dict[str, ProtocolInputs], found: BeyondPosition, device: torch.device,
               seed: int) -> EverySeed:
    """Repeat each layout's bijection and the HMM runs on ``chosen["n_seeds"]`` seeds; record
    each judged number seed by seed (with the means and extremes of the margins), the largest
    losses' falls and solve steps and the weakest seed's component.

    ``inputs`` holds where (f)'s protocols look, by task (each layout, whose probe is (d)'s, and
    ``"hmm"``); ``found`` is seed 0's protocol beyond position on HMM filtering.
    """
    n_seeds = chosen["n_seeds"]
    bijection_seeds = {
        layout: pd.DataFrame([bijection_seed(chosen, runs[layout], inputs[layout], r, device, seed)
                              for r in range(n_seeds)])
        for layout in LAYOUTS}
    for layout, rows in bijection_seeds.items():
        for name in PER_SEED:
            results.record_seeds(f"{layout}_{name}", rows[name])
        for name in ("bijection_loss_fall_last_tenth", "bijection_solve_step",
                     "bijection_entropy_mae_keys_bits"):
            results.record(f"{layout}_{name}_seeds_max", rows[name].max())
    hmm_seeds = pd.DataFrame([hmm_seed(chosen, hmm, inputs["hmm"], found, r, device, seed)
                              for r in range(n_seeds)])
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
    return EverySeed(bijection_seeds, hmm_seeds)
