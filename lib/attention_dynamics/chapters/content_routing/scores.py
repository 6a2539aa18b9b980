"""The chapter's table of scores (entropy MAE in bits, recall accuracy; mean and extremes over
seeds, beside Paper I's numbers), the nulls it is judged against, and the comparisons the page
words from them."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import torch

from attention_dynamics.book.paper_numbers import ENTROPY_MAE_BITS, RECALL_ACCURACY
from attention_dynamics.book.results import Results
from attention_dynamics.chapters.content_routing.settings import TASKS, recall_solve_bar
from attention_dynamics.chapters.content_routing.training import Training
from attention_dynamics.measures.metrics import blind_predictor_maes
from attention_dynamics.measures.trajectories import relative_fall
from attention_dynamics.models.registry import ARCHITECTURES
from attention_dynamics.tasks.base import Task
from attention_dynamics.tasks.bijection import mean_entropy_gap_of_marginal

DISPLAY_NAMES = {"transformer": "transformer", "mamba": "Mamba", "lstm": "LSTM", "mlp": "MLP"}
"""Each architecture's name in the table."""

ENTROPY_COLUMNS = (("bijection", "bijection", "mean curve"), ("hmm", "HMM", "per sample"))
"""The entropy tasks of the table, each as (task, label, the kind of MAE shown, the authors')."""


@dataclass
class Scores:
    """The chapter's table and the nulls of its judgement.

    Attributes:
        table: one row per architecture: the shown MAE (bits) per entropy task and the recall
            accuracy, each ``mean [lowest, highest]`` over seeds, beside Paper I's numbers.
        blind: the per-sample MAE (bits) on HMM filtering of the predictors blind to the
            observations, ``"uniform"`` (the plateau) and ``"average_curve"``.
        uniform_mae: ``blind["uniform"]`` as recorded (bits).
        recall_bar: the accuracy at which a seed solves recall (the report's rule).
    """

    table: pd.DataFrame
    blind: dict[str, float]
    uniform_mae: float
    recall_bar: float



def _spread_text(spread: tuple[float, float, float]) -> str:
    """``mean [lowest, highest]`` to three decimals."""
    return "{:.3f} [{:.3f}, {:.3f}]".format(*spread)


def score_table(results: Results, tasks: dict[str, Task], training: Training) -> Scores:
    """Record every architecture's scores over seeds (``mae_bits_*``, ``mae_per_sample_bits_*``,
    ``recall_accuracy_*``, each with its extremes and seeds) and the HMM nulls
    (``hmm_uniform_predictor_mae_bits``, ``hmm_average_curve_predictor_mae_bits``); the table."""
    rows = []
    for arch in ARCHITECTURES:
        row = {}
        for name, label, kind in ENTROPY_COLUMNS:
            runs = training.seed_runs(arch, name)
            mean_curve = results.record_spread(f"mae_bits_{arch}_{name}",
                                               [run.report.mae_mean_curve for run in runs])
            per_sample = results.record_spread(f"mae_per_sample_bits_{arch}_{name}",
                                               [run.report.mae_per_sample for run in runs])
            shown = mean_curve if kind == "mean curve" else per_sample
            row[f"{label} MAE, {kind} (bits)"] = _spread_text(shown)
            paper = ENTROPY_MAE_BITS[arch, name]
            row[f"Paper I: {label}"] = paper.text + (f" ({paper.kind})" if paper.kind else "")
        accuracy = results.record_spread(
            f"recall_accuracy_{arch}", [run.accuracy for run in training.seed_runs(arch, "recall")])
        row["recall accuracy"] = _spread_text(accuracy)
        row["Paper I: recall"] = RECALL_ACCURACY[arch].text
        rows.append(row)
    table = pd.DataFrame(rows, index=[DISPLAY_NAMES[arch] for arch in ARCHITECTURES])
    hmm = tasks["hmm"]
    hmm_bayes = torch.cat([b.bayes_entropy_bits[:, hmm.query_positions]
                           for b in training.eval_sets["hmm"]])
    blind = blind_predictor_maes(hmm_bayes, hmm.n_states)
    uniform_mae = results.record("hmm_uniform_predictor_mae_bits", blind["uniform"])
    results.record("hmm_average_curve_predictor_mae_bits", blind["average_curve"])
    recall_bar = recall_solve_bar(tasks["recall"].chance_accuracy)
    return Scores(table, blind, uniform_mae, recall_bar)


def record_references(results: Results, tasks: dict[str, Task], training: Training) -> None:
    """Record whether training stopped while the loss still fell (the least settled seed's
    relative fall over the last tenth, ``loss_fall_last_tenth_<arch>_<task>``) and the floors
    and chance levels worked out from the tasks' sizes."""
    for arch in ARCHITECTURES:
        for name in TASKS:
            results.record(f"loss_fall_last_tenth_{arch}_{name}",
                           max(relative_fall(run.history.loss)
                               for run in training.seed_runs(arch, name)))
    results.record("bijection_marginal_gap_bits",
                   mean_entropy_gap_of_marginal(tasks["bijection"].n_symbols))
    results.record("recall_chance_accuracy", tasks["recall"].chance_accuracy)
    results.record("recall_unbound_accuracy", tasks["recall"].unbound_accuracy)


@dataclass
class Comparisons:
    """Who solves recall, seed by seed.

    Attributes:
        solved: the recall seeds each architecture solves (accuracy at the recall bar).
    """

    solved: dict[str, int]


def compare_architectures(results: Results, training: Training, scores: Scores) -> Comparisons:
    """Count the recall seeds each architecture solves; record the transformer's and the
    Mamba's (``recall_solved_seeds_transformer``, ``recall_mamba_solved_seeds``)."""
    solved = {arch: sum(run.accuracy >= scores.recall_bar
                        for run in training.seed_runs(arch, "recall"))
              for arch in ARCHITECTURES}
    results.record("recall_solved_seeds_transformer", solved["transformer"])
    results.record("recall_mamba_solved_seeds", solved["mamba"])
    return Comparisons(solved)
