"""Part (f), an entropy axis told from a position axis by the authors' best-of-PC1-5 protocol,
taken within positions, against shuffles of the entropies within positions.

Where the entropy varies between sequences at a position (HMM filtering, and bijections whose
keys are drawn with replacement) an axis can be ordered by the entropy beyond what the position
explains. Correlations are absolute; entropies are in bits.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.manifold_formation.probes import CheckpointProbe, probe_sequences
from attention_dynamics.chapters.manifold_formation.settings import N_PERMUTATIONS
from attention_dynamics.chapters.manifold_formation.training import (
    blind_maes,
    evaluation_batches,
    score,
    train,
)
from attention_dynamics.chapters.manifold_formation.value_manifold import ProtocolInputs
from attention_dynamics.measures.geometry import best_pc_pearson, pca
from attention_dynamics.measures.metrics import EntropyReport
from attention_dynamics.measures.representations import final_streams
from attention_dynamics.measures.trajectories import relative_fall
from attention_dynamics.measures.value_manifold import best_pc_beyond_position
from attention_dynamics.models import Transformer, TransformerConfig
from attention_dynamics.sequence_training import SequenceTrainingHistory
from attention_dynamics.tasks.base import TaskBatch
from attention_dynamics.tasks.bijection import BijectionTask


@dataclass
class BeyondPosition:
    """The best-of-PC1-5 protocol beyond position for one trained run, with its nulls.

    Attributes:
        observed: the trained model's ``|r|`` within positions.
        null_q99: the 99th percentile of ``draws``.
        random_init: the same protocol at initialisation.
        strongest_null: the larger of ``null_q99`` and ``random_init``.
        component: the trained model's chosen component (1 for PC1).
        variance_share: the share of the variance that component carries.
        draws: ``(N_PERMUTATIONS,)`` the trained model's ``|r|`` on each within-position shuffle.
        init_draws: ``(N_PERMUTATIONS,)`` the same at initialisation.
    """

    observed: float
    null_q99: float
    random_init: float
    strongest_null: float
    component: int
    variance_share: float
    draws: torch.Tensor
    init_draws: torch.Tensor


def beyond_position(inputs: ProtocolInputs, shuffle_seed: int) -> BeyondPosition:
    """The protocol on the representations before the final norm at ``inputs``' value positions
    of its probe, trained and at initialisation, each against ``N_PERMUTATIONS`` shuffles drawn
    from a generator seeded with ``shuffle_seed``."""
    probe, positions = inputs.probe, inputs.values
    entropy = inputs.value_entropy(probe.batch)
    found = {}
    for label, step in (("trained", probe.final_step), ("random init", 0)):
        before, _ = final_streams(probe.at_step(step), probe.batch.tokens)
        found[label] = best_pc_beyond_position(before[:, positions], entropy, N_PERMUTATIONS,
                                               torch.Generator().manual_seed(shuffle_seed))
        if label == "trained":
            points = before[:, positions].flatten(0, 1)
            component, _ = best_pc_pearson(points, entropy.flatten())
            share = pca(points).explained_variance_ratio[component - 1].item()
    observed, draws = found["trained"]
    q99 = torch.quantile(draws, 0.99).item()
    random_init, init_draws = found["random init"]
    return BeyondPosition(observed, q99, random_init, max(q99, random_init), component, share, draws,
                          init_draws)


def record_beyond(results: Results, found: BeyondPosition, prefix: str) -> None:
    """Record ``found``'s numbers under ``prefix`` (the observed ``|r|``) and ``prefix_<field>``."""
    names = ("null_q99", "random_init", "strongest_null", "component", "variance_share")
    results.record(prefix, found.observed)
    results.record_all({f"_{name}": getattr(found, name) for name in names}, prefix=prefix)


def hmm_beyond_position(results: Results, inputs: ProtocolInputs, seed: int) -> BeyondPosition:
    """The protocol on the HMM run (shuffles of seed ``seed + 9``); recorded with the number of
    shuffles."""
    found = beyond_position(inputs, seed + 9)
    record_beyond(results, found, "hmm_manifold_best_pc_beyond_position")
    results.record("manifold_n_permutations", N_PERMUTATIONS)
    return found


@dataclass
class Replacement:
    """The transformer trained on bijections whose keys are drawn with replacement (separate
    layout), judged by the protocol beyond position at the scored key positions.

    Attributes:
        task: the task.
        model: the trained transformer, on the device.
        history: its training history.
        batches: its held-out batches (seed ``seed + 4``).
        report: the trained model against Bayes on them.
        inputs: where the protocol looks (``probe_size`` probe sequences of seed ``seed + 10``).
        beyond: the protocol's numbers.
    """

    task: BijectionTask
    model: Transformer
    history: SequenceTrainingHistory
    batches: list[TaskBatch]
    report: EntropyReport
    inputs: ProtocolInputs
    beyond: BeyondPosition


def replacement_bijection(results: Results, chosen: dict, device: torch.device, seed: int) -> Replacement:
    """Train the transformer on bijections with keys drawn with replacement (initialised with
    seed ``seed + 30``, data of seed ``seed + 400``); record its per-sample MAE against the
    observation-blind predictor's, its loss's fall, and the protocol beyond position (shuffles of
    seed ``seed + 11``)."""
    task = BijectionTask(chosen["n_symbols"], with_replacement=True)
    config = TransformerConfig(vocab_size=task.vocab_size, max_len=task.seq_len,
                               **chosen["bijection_model"])
    model = Transformer(config, torch.Generator().manual_seed(seed + 30))
    history = train(model, task, chosen, "bijection_training", seed + 400, device,
                    "bijection elimination, keys drawn with replacement")
    batches = evaluation_batches(task, chosen, seed + 4, device)
    report = score(model, task, batches)
    blind = blind_maes(task, batches, task.n_symbols)
    results.record_all({"entropy_mae_per_sample_bits": report.mae_per_sample,
                        "average_curve_predictor_mae_bits": blind["average_curve"],
                        "loss_fall_last_tenth": relative_fall(history.loss)},
                       prefix="replacement_bijection_")
    probe = probe_sequences(task, chosen, seed + 10, device)
    positions = task.query_positions.to(device)
    scratch = Transformer(model.config, torch.Generator()).to(device)
    inputs = ProtocolInputs(CheckpointProbe(history, scratch, probe), positions, positions, lead=0)
    found = beyond_position(inputs, seed + 11)
    record_beyond(results, found, "replacement_manifold_best_pc_beyond_position")
    return Replacement(task, model, history, batches, report, inputs, found)
