"""Parts (a) to (c), how well the trained models' predictive entropy follows the Bayes entropy.

(a) the transformer on bijection elimination in both token layouts; (b) on HMM filtering,
trained at one length and tested at longer ones; (c) the capacity-matched MLPs, which cannot see
their context, on the bijections. Each part records its metrics into a
:class:`~attention_dynamics.book.results.Results`; entropies, MAEs and KLs are in bits.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import torch

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.manifold_formation.training import (
    blind_maes,
    evaluation_batches,
    key_position_mae,
    score,
    solve_step,
    train,
)
from attention_dynamics.measures.metrics import EntropyReport
from attention_dynamics.measures.trajectories import relative_fall
from attention_dynamics.models import MLP, MLPConfig, Transformer, TransformerConfig, count_parameters
from attention_dynamics.sequence_training import SequenceTrainingHistory
from attention_dynamics.tasks.base import TaskBatch
from attention_dynamics.tasks.bijection import LAYOUTS, BijectionTask, mean_entropy_gap_of_marginal
from attention_dynamics.tasks.hmm_filtering import HMMFilteringTask


@dataclass
class BijectionRun:
    """A transformer trained on bijection elimination in one layout (seed 0).

    Attributes:
        task: the task (``V`` symbols, one layout).
        config: the transformer's sizes.
        model: the trained transformer, on the device.
        history: its training history (losses in nats, checkpoints spaced geometrically).
        batches: the held-out batches every model of this layout is scored on.
        report: the trained model against Bayes on ``batches``.
    """

    task: BijectionTask
    config: TransformerConfig
    model: Transformer
    history: SequenceTrainingHistory
    batches: list[TaskBatch]
    report: EntropyReport


def bijections(results: Results, chosen: dict, device: torch.device, seed: int) -> dict[str, BijectionRun]:
    """Train the transformer on each layout of :data:`~attention_dynamics.tasks.bijection.LAYOUTS`
    (the ``i``-th initialised with seed ``seed + 10 i``, trained on data of seed ``seed + 100 + i``,
    scored on held-out batches of seed ``seed + 1``); record its calibration, by layout."""
    runs = {}
    for index, layout in enumerate(LAYOUTS):
        task = BijectionTask(chosen["n_symbols"], layout=layout)
        config = TransformerConfig(vocab_size=task.vocab_size, max_len=task.seq_len,
                                   **chosen["bijection_model"])
        model = Transformer(config, torch.Generator().manual_seed(seed + 10 * index))
        history = train(model, task, chosen, "bijection_training", seed + 100 + index, device,
                        f"bijection elimination, {layout} layout")
        batches = evaluation_batches(task, chosen, seed + 1, device)
        runs[layout] = BijectionRun(task, config, model, history, batches,
                                    score(model, task, batches))
    training = chosen["bijection_training"]
    results.record("n_symbols", chosen["n_symbols"])
    results.record("bijection_steps", training["steps"])
    results.record("bijection_training_sequences", training["steps"] * training["batch_size"])
    for layout, run in runs.items():
        report, task = run.report, run.task
        results.record(f"{layout}_bijection_entropy_mae_keys_bits", key_position_mae(report, task))
        if task.final_query_position is not None:
            final_query = report.positions == task.final_query_position
            results.record(f"{layout}_bijection_final_query_entropy_bits",
                           report.model_entropy[final_query].item())
            results.record("bijection_context_free_entropy_bits", np.log2(task.n_symbols))
        results.record(f"{layout}_bijection_parameters", count_parameters(run.model))
        results.record(f"{layout}_bijection_train_seconds", run.history.seconds, timing=True)
        results.record(f"{layout}_bijection_entropy_mae_bits", report.mae_mean_curve)
        results.record(f"{layout}_bijection_entropy_mae_per_sample_bits", report.mae_per_sample)
        results.record(f"{layout}_bijection_kl_bits", report.kl_bits)
        results.record(f"{layout}_bijection_leaked_mass", report.leaked_mass)
        results.record(f"{layout}_bijection_loss_fall_last_tenth", relative_fall(run.history.loss))
        results.record(f"{layout}_bijection_solve_step",
                       solve_step(run.model, run.history, task, run.batches))
    return runs


@dataclass
class HmmRun:
    """The transformer trained on HMM filtering at one length, tested at longer ones (seed 0).

    Attributes:
        task: the training task (``K`` observations per sequence).
        tests: the same task at each test length, by its number of observations.
        config: the transformer's sizes (positions up to the longest test sequence).
        model: the trained transformer, on the device.
        history: its training history.
        batches: held-out batches by number of observations (``K`` first, then the test lengths).
        reports: the trained model against Bayes on each length's batches.
        blind: per length, the per-sample MAEs of the observation-blind (``average_curve``) and
            uniform (``uniform``) predictors.
    """

    task: HMMFilteringTask
    tests: dict[int, HMMFilteringTask]
    config: TransformerConfig
    model: Transformer
    history: SequenceTrainingHistory
    batches: dict[int, list[TaskBatch]]
    reports: dict[int, EntropyReport]
    blind: dict[int, dict[str, float]]

    @property
    def train_length(self) -> int:
        """``K``, the observations per training sequence."""
        return self.task.n_observations

    @property
    def longest(self) -> int:
        """The longest test length (observations)."""
        return max(self.tests)


def error_steps(errors: torch.Tensor, K: int) -> tuple[float, float]:
    """The error step at the training length ``K`` (bits): the mean of ``errors`` (one per
    observation) over the five observations after it minus the five before; and the largest such
    step inside the second half of the training length, where nothing changes: the null a step
    at ``K`` must exceed to be a jump."""

    def step_at(t):
        return (errors[t : t + 5].mean() - errors[t - 5 : t].mean()).item()

    return step_at(K), max(step_at(t) for t in range(max(K // 2, 5), K - 4))


def length_kl_ratio(reports: dict[int, EntropyReport], K: int) -> float:
    """The authors' length-generalisation ratio (``eval_length_gen.py``, ``main``): the mean KL
    to the Bayes posterior over the test lengths longer than ``K``, over the KL at ``K`` (below
    2: "strong length generalization")."""
    longer = [report.kl_bits for length, report in reports.items() if length > K]
    return float(np.mean(longer)) / reports[K].kl_bits


def hmm_filtering(results: Results, chosen: dict, device: torch.device, seed: int) -> HmmRun:
    """Train the transformer on HMM filtering (initialised with seed ``seed + 1``, data of seed
    ``seed + 200``), score it at the training length (held-out seed ``seed + 2``) and at each
    test length ``L`` (seed ``seed + 2 + L``); record its calibration, the blind predictors, the
    error step at the training length and the authors' KL ratio."""
    hmm = HMMFilteringTask(**chosen["hmm_task"])
    tests = {K: dataclasses.replace(hmm, n_observations=K) for K in chosen["hmm_test_lengths"]}
    config = TransformerConfig(vocab_size=hmm.vocab_size,
                               max_len=max(t.seq_len for t in tests.values()), **chosen["hmm_model"])
    model = Transformer(config, torch.Generator().manual_seed(seed + 1))
    history = train(model, hmm, chosen, "hmm_training", seed + 200, device, "HMM filtering")
    batches = {hmm.n_observations: evaluation_batches(hmm, chosen, seed + 2, device)}
    batches |= {K: evaluation_batches(task, chosen, seed + 2 + K, device) for K, task in tests.items()}
    reports = {K: score(model, hmm, length_batches) for K, length_batches in batches.items()}
    blind = {K: blind_maes(hmm if K == hmm.n_observations else tests[K], length_batches, hmm.n_states)
             for K, length_batches in batches.items()}
    run = HmmRun(hmm, tests, config, model, history, batches, reports, blind)
    K, report, training = run.train_length, reports[run.train_length], chosen["hmm_training"]
    results.record("hmm_parameters", count_parameters(model))
    results.record("hmm_steps", training["steps"])
    results.record("hmm_training_sequences", training["steps"] * training["batch_size"])
    results.record("hmm_train_seconds", history.seconds, timing=True)
    results.record("hmm_train_length", K)
    results.record("hmm_entropy_mae_bits", report.mae_mean_curve)
    results.record("hmm_entropy_mae_per_sample_bits", report.mae_per_sample)
    results.record("hmm_kl_bits", report.kl_bits)
    results.record("hmm_leaked_mass", report.leaked_mass)
    results.record("hmm_average_curve_predictor_mae_bits", blind[K]["average_curve"])
    results.record("hmm_uniform_predictor_mae_bits", blind[K]["uniform"])
    results.record("hmm_loss_fall_last_tenth", relative_fall(history.loss))
    at_boundary, inside_max = error_steps(reports[run.longest].abs_error, K)
    results.record("hmm_error_step_at_train_length_bits", at_boundary)
    results.record("hmm_error_step_within_train_max_bits", inside_max)
    results.record("hmm_length_kl_ratio", length_kl_ratio(reports, K))
    for length in chosen["hmm_test_lengths"]:
        results.record(f"hmm_entropy_mae_per_sample_bits_length_{length}",
                       reports[length].mae_per_sample)
        results.record(f"hmm_entropy_mae_bits_length_{length}", reports[length].mae_mean_curve)
        results.record(f"hmm_kl_bits_length_{length}", reports[length].kl_bits)
        results.record(f"hmm_average_curve_predictor_mae_bits_length_{length}",
                       blind[length]["average_curve"])
    return run


@dataclass
class MlpRun:
    """A capacity-matched MLP trained on one layout's bijections.

    Attributes:
        model: the trained MLP, on the device.
        history: its training history.
        report: the MLP against Bayes on the layout's held-out batches.
        floor: the entropy gap (bits) of the context-free marginal to the Bayes curve, the floor
            of the MLP's mean-curve MAE.
    """

    model: MLP
    history: SequenceTrainingHistory
    report: EntropyReport
    floor: float


@dataclass
class MlpControls:
    """The MLPs of both layouts, by layout."""

    runs: dict[str, MlpRun]


def mlp_controls(results: Results, chosen: dict, runs: dict[str, BijectionRun], device: torch.device,
                 seed: int) -> MlpControls:
    """Train the capacity-matched MLP of each layout's transformer (the ``i``-th initialised with
    seed ``seed + 2 + i``, data of seed ``seed + 300 + i``), score it on the layout's held-out
    batches; record its MAE and its floor."""
    mlps = {}
    for index, (layout, run) in enumerate(runs.items()):
        mlp = MLP(MLPConfig.matching(run.config), torch.Generator().manual_seed(seed + 2 + index))
        history = train(mlp, run.task, chosen, "mlp_training", seed + 300 + index, device,
                        f"MLP, {layout} layout")
        floor = mean_entropy_gap_of_marginal(chosen["n_symbols"], layout=layout)
        mlps[layout] = MlpRun(mlp, history, score(mlp, run.task, run.batches), floor)
        results.record(f"{layout}_mlp_parameters", count_parameters(mlp))
        results.record(f"{layout}_mlp_bijection_entropy_mae_bits", mlps[layout].report.mae_mean_curve)
        results.record(f"{layout}_mlp_bijection_loss_fall_last_tenth", relative_fall(history.loss))
        results.record(f"{layout}_bijection_marginal_gap_bits", floor)
    return MlpControls(mlps)
