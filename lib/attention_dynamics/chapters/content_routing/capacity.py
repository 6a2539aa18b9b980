"""The capacity question, asked of the recall Mamba with fewer state addresses than stored
pairs (width matched to the transformer again), trained alike on every seed."""

from __future__ import annotations

from dataclasses import dataclass

from attention_dynamics.book.formatting import numbers
from attention_dynamics.book.results import Results
from attention_dynamics.chapters.content_routing.scores import Scores
from attention_dynamics.chapters.content_routing.training import TrainingPlan
from attention_dynamics.parts import Units


@dataclass
class Capacity:
    """The smaller-state Mamba on recall.

    Attributes:
        d_state: its state size ``N`` (addresses), fewer than the pairs.
        accuracy: its held-out recall accuracy per seed, in seed order.
        solved: how many of those seeds solve recall (accuracy at the recall bar).
    """

    d_state: int
    accuracy: list[float]
    solved: int

    def summary(self) -> str:
        """The accuracy per seed, in a line."""
        return f"Mamba, N = {self.d_state}: accuracy by seed {numbers(self.accuracy)}"


def capacity_question(results: Results, chosen: dict, plan: TrainingPlan, scores: Scores,
                      units: Units | None = None) -> Capacity:
    """Train the Mamba with ``capacity_d_state`` addresses on recall on every seed (the table's
    Mamba's training settings; ``plan``'s job ``capacity``, taken from ``units`` where given);
    record its state size, the pairs per address, its accuracy over seeds
    (``recall_accuracy_mamba_capacity``) and its solved seeds."""
    recall, d_state = plan.tasks["recall"], chosen["capacity_d_state"]
    trained = plan.trained("capacity", units)
    accuracy = [run.accuracy for _, run in trained]
    results.record("capacity_d_state", d_state)
    results.record("capacity_pairs_per_address", recall.n_pairs / d_state)
    results.record_spread("recall_accuracy_mamba_capacity", accuracy)
    solved = sum(a >= scores.recall_bar for a in accuracy)
    results.record("recall_mamba_capacity_solved_seeds", solved)
    return Capacity(d_state, accuracy, solved)
