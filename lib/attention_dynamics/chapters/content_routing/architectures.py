"""The chapter's three tasks and its four architectures, matched in parameters per task, and the
sizes that the page quotes.

The transformer of each task is the reference; the Mamba and the LSTM get the width (``d_model``)
and the MLP the hidden width (``d_ff``) that brings their parameter count nearest the
transformer's, the other sizes fixed by the settings.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import torch

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.content_routing.settings import TASKS
from attention_dynamics.models.registry import (
    ARCHITECTURES,
    architecture_config,
    build_model,
    matched_config,
    varied_size,
)
from attention_dynamics.models.sizing import SizeMatch, count_parameters
from attention_dynamics.tasks.associative_recall import AssociativeRecallTask
from attention_dynamics.tasks.base import Task
from attention_dynamics.tasks.bijection import BijectionTask
from attention_dynamics.tasks.hmm_filtering import HMMFilteringTask


def build_tasks(chosen: dict) -> dict[str, Task]:
    """The bijection, HMM-filtering and recall tasks at ``chosen["tasks"]``'s sizes, by name."""
    sizes = chosen["tasks"]
    return {
        "bijection": BijectionTask(**sizes["bijection"]),
        "hmm": HMMFilteringTask(**sizes["hmm"]),
        "recall": AssociativeRecallTask(**sizes["recall"]),
    }


@dataclass
class Architectures:
    """The matched configs of every architecture on every task.

    Attributes:
        configs: ``configs[task][arch]``, a registered config of each architecture per task.
        matches: ``matches[task, arch]``, the size match of each architecture but the
            transformer (the reference).
        parameters: trainable scalars, one row per architecture, one column per task.
        widths: the varied width (``d_model``; the MLP's ``d_ff``), laid out as ``parameters``.
    """

    configs: dict[str, dict[str, object]]
    matches: dict[tuple[str, str], SizeMatch]
    parameters: pd.DataFrame
    widths: pd.DataFrame

    def table(self) -> pd.DataFrame:
        """The parameters and the varied width side by side (architectures by tasks)."""
        return pd.concat({"parameters": self.parameters, "width varied": self.widths}, axis=1)


def matched_architectures(chosen: dict, tasks: dict[str, Task]) -> Architectures:
    """Every architecture matched to the reference transformer of each task in ``tasks``."""
    configs, matches = {}, {}
    for name, task in tasks.items():
        reference = architecture_config("transformer", task.vocab_size, task.seq_len,
                                        **chosen["reference"])
        configs[name] = {"transformer": reference}
        target = count_parameters(build_model(reference, torch.Generator()))
        for arch in ARCHITECTURES[1:]:
            configs[name][arch], matches[name, arch] = matched_config(
                arch, task.vocab_size, task.seq_len, target, high=chosen["width_limit"],
                **chosen["fixed"][arch])
    parameters = pd.DataFrame({
        name: {arch: count_parameters(build_model(configs[name][arch], torch.Generator()))
               for arch in ARCHITECTURES}
        for name in TASKS
    })
    widths = pd.DataFrame({
        name: {arch: varied_size(configs[name][arch]) for arch in ARCHITECTURES}
        for name in TASKS
    })
    return Architectures(configs, matches, parameters, widths)


def record_architectures(results: Results, architectures: Architectures) -> None:
    """Record each parameter count of ``architectures`` (``n_parameters_<arch>_<task>``) and
    the largest relative mismatch (``parameter_mismatch_max``)."""
    for name in TASKS:
        for arch in ARCHITECTURES:
            results.record(f"n_parameters_{arch}_{name}", architectures.parameters.loc[arch, name])
    results.record("parameter_mismatch_max",
                   max(abs(m.relative_error) for m in architectures.matches.values()))


def record_sizes(results: Results, chosen: dict, tasks: dict[str, Task], n_seeds: int) -> None:
    """Record the sizes the page quotes: the number of seeds, the steps and training sequences
    per task, the tasks' sizes and the Mamba's depth and state."""
    results.record("n_seeds", n_seeds)
    results.record_all(chosen["steps"], prefix="steps_")
    results.record_all(
        {task: chosen["steps"][task] * chosen["batch_size"][task] for task in TASKS},
        prefix="training_sequences_",
    )
    results.record_all({
        "bijection_n_symbols": tasks["bijection"].n_symbols,
        "hmm_n_states": tasks["hmm"].n_states,
        "hmm_length": tasks["hmm"].n_observations,
        "hmm_sequence_length": tasks["hmm"].seq_len,
        "recall_n_pairs": tasks["recall"].n_pairs,
        "recall_n_values": tasks["recall"].n_values,
        "recall_n_queries": tasks["recall"].n_queries,
        "mamba_layers": chosen["fixed"]["mamba"]["n_layers"],
        "mamba_d_state": chosen["fixed"]["mamba"]["d_state"],
    })
