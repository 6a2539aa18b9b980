"""Who reads the matrices on HMM filtering. Each model's predictive entropy against the Bayes
entropy, sequence by sequence, on held-out sequences (first seed)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.content_routing.training import Training
from attention_dynamics.measures.metrics import entropy_bits
from attention_dynamics.models.registry import ARCHITECTURES
from attention_dynamics.tasks.base import Task


@dataclass
class EntropyTracking:
    """The entropies (bits) at the scored positions of the first held-out HMM batch, on the CPU.

    Attributes:
        bayes: ``(N, Q)`` the Bayes entropy of ``N`` sequences at ``Q`` scored positions.
        models: each architecture's ``(N, Q)`` predictive entropy (its first seed).
        n_states: the hidden states (the uniform posterior's entropy is ``log2 n_states``).
    """

    bayes: torch.Tensor
    models: dict[str, torch.Tensor]
    n_states: int


def entropy_tracking(results: Results, tasks: dict[str, Task], training: Training,
                     device: torch.device) -> EntropyTracking:
    """Each architecture's entropy against the Bayes entropy; record their correlation
    (``hmm_entropy_correlation_<arch>``, 0 for a constant entropy), the model's and the Bayes
    entropy's spread across sequences at a position (``hmm_model_entropy_sd_<arch>``,
    ``hmm_bayes_entropy_sd``, bits)."""
    hmm = tasks["hmm"]
    batch = training.eval_sets["hmm"][0]
    positions = hmm.query_positions.to(device)
    bayes = batch.bayes_entropy_bits[:, positions].cpu()
    models = {}
    for arch in ARCHITECTURES:
        with torch.no_grad():
            model_h = entropy_bits(training.first_models[arch, "hmm"](batch.tokens))[
                :, positions].cpu()
        tracked = np.corrcoef(bayes.flatten(), model_h.flatten())[0, 1]
        results.record(f"hmm_entropy_correlation_{arch}", 0.0 if np.isnan(tracked) else tracked)
        results.record(f"hmm_model_entropy_sd_{arch}", (model_h - model_h.mean(0)).std())
        models[arch] = model_h
    results.record("hmm_bayes_entropy_sd", (bayes - bayes.mean(0)).std())
    return EntropyTracking(bayes, models, hmm.n_states)
