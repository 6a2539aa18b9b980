"""The chapter's words for its results, computed from the numbers so that the page says what
the run shows whatever it shows (glued into the page)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from attention_dynamics.book.paper_numbers import (
    AUTHORS_TRAINING_SEQUENCES,
    ENTROPY_MAE_BITS,
    RECALL_ACCURACY,
)
from attention_dynamics.book.tables import reader_table
from attention_dynamics.chapters.content_routing.settings import FAILURE_MULTIPLE, SETTINGS, TASKS
from attention_dynamics.chapters.content_routing.tables import results_table

if TYPE_CHECKING:
    from attention_dynamics.chapters.content_routing.experiment import ContentRoutingRun

TASK_WORDS = {"bijection": "bijections", "hmm": "HMM filtering", "recall": "recall"}

MANIFOLD_COLUMNS = {"|Spearman(PC1, H)|": "rank correlation of PC1 with H (absolute)"}
"""The value-manifold table's column names that read as code, in words."""
"""Each task's name in a sentence."""


def seeds_phrase(solved: int, total: int) -> str:
    """'on every seed', 'on no seed' or 'on 2 of 3 seeds'.

    >>> seeds_phrase(2, 3)
    'on 2 of 3 seeds'
    """
    if solved == total:
        return "on every seed"
    return "on no seed" if solved == 0 else f"on {solved} of {total} seeds"


def decide_length_phrase(profiles: Mapping[str, dict] = SETTINGS) -> str:
    """How much longer the ``decide`` profile of ``profiles`` trains than the ``quick`` one,
    task by task, and on how many seeds.

    >>> decide_length_phrase({"quick": {"steps": {"bijection": 1, "hmm": 2, "recall": 1}},
    ...                       "decide": {"steps": {"bijection": 4, "hmm": 2, "recall": 1},
    ...                                  "n_seeds": 6}}).split(", ")
    ['4 times the quick steps on bijections', 'the quick steps on HMM filtering', \
'the quick steps on recall', 'on 6 seeds']
    """
    quick, decide = profiles["quick"], profiles["decide"]
    return ", ".join(
        f"{decide['steps'][task] / quick['steps'][task]:.0f} times the quick steps on "
        f"{TASK_WORDS[task]}" for task in TASKS
    ).replace("1 times the quick steps", "the quick steps") + f", on {decide['n_seeds']} seeds"


def solve_phrase(solve_step: int | None, steps: int) -> str:
    """From which step the transformer meets the report's bar (``None``: not within its
    ``steps``), and so from which step another architecture's failure counts."""
    if solve_step is None:
        return (f"does not meet it within its {steps:,} steps, so no failure of another "
                "architecture counts in this run")
    return (f"meets it from step {solve_step:,} on, so a failure counts from "
            f"{FAILURE_MULTIPLE * solve_step:,} steps")


def lstm_bijection_words(lstm_mae: float, routing_mae: float, floor_mae: float) -> dict[str, str]:
    """The relation of the LSTM on bijections: it is "well behind" when its MAE (bits) is
    more than twice ``routing_mae`` (the worse of the transformer and the Mamba), and sits "far
    below" the MLP's floor ``floor_mae`` when under half of it."""
    lags = lstm_mae > 2 * routing_mae
    relation = ("it is well behind the transformer and the Mamba" if lags
                else "it is level with the transformer and the Mamba")
    relation += (", though far below the MLP's floor" if lstm_mae < floor_mae / 2
                 else ", and not far below the MLP's floor")
    return {"lstm_bijection_relation": relation}


def recall_words(solved: dict[str, int], n_seeds: int, n_pairs: int,
                 d_state: int) -> dict[str, str]:
    """The transformer's and the Mamba's solved recall seeds (of ``n_seeds``) in words, and
    whether the task asks the capacity question (more pairs ``n_pairs`` than the Mamba's
    ``d_state`` addresses)."""
    mamba = solved["mamba"]
    return {
        "recall_transformer_seeds_phrase": seeds_phrase(solved["transformer"], n_seeds),
        "recall_mamba_heading": "the Mamba binds " + (
            "on some seeds" if 0 < mamba < n_seeds else seeds_phrase(mamba, n_seeds)),
        "recall_capacity_phrase": (
            "no more pairs than addresses, so it does not ask the capacity question"
            if n_pairs <= d_state
            else "more pairs than addresses, so it asks the capacity question"),
    }


def capacity_words(accuracy: list[float], solved: int, mamba_solved: int,
                   d_state: int) -> dict[str, str]:
    """The capacity question's reading: the smaller-state Mamba's ``solved`` seeds (of
    ``len(accuracy)``) against the table's Mamba's ``mamba_solved`` with ``d_state`` addresses,
    and the range of its recall ``accuracy`` per seed."""
    n = len(accuracy)
    if solved == n:
        reading = (f"It solves recall {seeds_phrase(solved, n)}: one channel's bound does not "
                   "limit the layer, whose channels share the pairs, so the size of the state is "
                   "not what keeps a Mamba from binding")
    else:
        reading = (f"It solves recall {seeds_phrase(solved, n)}, against "
                   f"{seeds_phrase(mamba_solved, n)} with {d_state:.0f} addresses")
    low, high = min(accuracy), max(accuracy)
    spread = (f"accuracy {low:.3f} on every seed" if f"{low:.3f}" == f"{high:.3f}"
              else f"accuracy {low:.3f} to {high:.3f} over the seeds")
    return {"capacity_reading": reading, "capacity_accuracy_phrase": spread}


def page_phrases(experiment: ContentRoutingRun, chosen: dict,
                 metrics: Mapping[str, float]) -> dict[str, object]:
    """Everything the page glues beside the recorded metrics, by glue name: the table (as the
    notebook shows it, a row per task and architecture), the papers' numbers it quotes, and the
    words for the run's results.

    Args:
        experiment: what :func:`~attention_dynamics.chapters.content_routing.experiment.run`
            returned.
        chosen: the settings it ran with.
        metrics: the metrics it recorded, by name.
    """
    glued: dict[str, object] = {"decide_length_phrase": decide_length_phrase(),
                                "results_table": reader_table(
                                    results_table(experiment.scores.table), wrap=True),
                                "authors_budget_mamba_hmm":
                                    AUTHORS_TRAINING_SEQUENCES["mamba", "hmm"].text}
    glued |= {f"paper_mae_bits_{arch}_{name}": number.text
              for (arch, name), number in ENTROPY_MAE_BITS.items()}
    glued |= {f"paper_recall_accuracy_{arch}": number.text
              for arch, number in RECALL_ACCURACY.items()}
    glued |= {f"transformer_solve_phrase_{name}": solve_phrase(step, chosen["steps"][name])
              for name, step in experiment.solve_steps.steps.items()}
    routing_mae = max(metrics[f"mae_bits_{arch}_bijection"] for arch in ("transformer", "mamba"))
    glued |= lstm_bijection_words(metrics["mae_bits_lstm_bijection"], routing_mae,
                                  metrics["bijection_marginal_gap_bits"])
    d_state = chosen["fixed"]["mamba"]["d_state"]
    solved = experiment.comparisons.solved
    glued |= recall_words(solved, len(experiment.training.seeds),
                          experiment.tasks["recall"].n_pairs, d_state)
    capacity = experiment.capacity
    return glued | capacity_words(capacity.accuracy, capacity.solved, solved["mamba"], d_state)
