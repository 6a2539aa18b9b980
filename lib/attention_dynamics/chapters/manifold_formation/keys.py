"""Part (d), the keys by the authors' two definitions of key orthogonality, each step of their
pipelines varied in turn, on both layouts, against the spread of independent initialisations.

Every statistic is a cosine (dimensionless): the mean absolute or the signed mean off-diagonal
cosine between the keys of the ``V`` hypothesis tokens, per head, averaged over heads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from attention_dynamics.book.paper_numbers import AUTHORS_CHECKPOINT_KEY_ORTHOGONALITY
from attention_dynamics.book.results import Results
from attention_dynamics.chapters.manifold_formation.calibration import BijectionRun
from attention_dynamics.chapters.manifold_formation.probes import CheckpointProbe, probe_sequences
from attention_dynamics.chapters.manifold_formation.settings import N_INITS
from attention_dynamics.measures.geometry import contextual_keys, key_orthogonality
from attention_dynamics.models import Transformer
from attention_dynamics.tasks.base import TaskBatch
from attention_dynamics.tasks.bijection import BijectionTask

MEAN_ABS = "mean |cos|, normed, layer 0 (identify_frame_head)"
"""The statistic of the authors' analysis suite, the mean absolute cosine of the normed layer-0 keys."""

SIGNED = "signed cos, raw, layer 0 (qkv_analysis)"
"""The statistic of the authors' figure script, the signed mean cosine of the raw embeddings through
W_K."""

AUTHORS_ROW = "authors' checkpoint (separate, V = 20)"
"""The row of the key table that holds the authors' released checkpoint."""


def hypothesis_keys(model: Transformer, task: BijectionTask) -> torch.Tensor:
    """The hypothesis tokens' layer-0 keys after the first norm, ``(H, V, d_head)``."""
    with torch.no_grad():
        return model.token_keys(task.hypothesis_tokens.to(model.embed.weight.device))


def key_statistics(model: Transformer, task: BijectionTask, probe: TaskBatch) -> dict[str, float]:
    """Each step of the two key pipelines varied in turn, for one model (dimensionless).

    The authors' two definitions first (:data:`MEAN_ABS`, :data:`SIGNED`); then the raw keys of
    layer 1 (their figure script loops over every layer), the token set their figure script takes
    (``0..V-1``: the hypotheses in the shared layout, the *key* tokens in the separate one), and
    the keys the hypotheses have in context (layer 0, at the value positions of ``probe``, with
    positions, averaged per value symbol).
    """
    device = model.embed.weight.device
    with torch.no_grad():
        first_tokens = torch.arange(task.n_symbols, device=device)
        raw = [model.embed(task.hypothesis_tokens.to(device)) @ block.attn.w_k for block in model.blocks]
        _, record = model(probe.tokens, return_record=True)
    values = task.value_positions.to(device)
    in_context = contextual_keys(record.attention[0].k, values,
                                 probe.tokens[:, values] - task.value_offset, task.n_symbols)
    return {
        MEAN_ABS: key_orthogonality(hypothesis_keys(model, task)).mean().item(),
        SIGNED: key_orthogonality(raw[0], signed=True).mean().item(),
        "signed cos, raw, layer 1": key_orthogonality(raw[1], signed=True).mean().item(),
        "signed cos, raw, layer 0, tokens 0..V-1": key_orthogonality(
            model.embed(first_tokens) @ model.blocks[0].attn.w_k, signed=True).mean().item(),
        "mean |cos|, keys in context, layer 0": key_orthogonality(in_context).mean().item(),
        "signed cos, keys in context, layer 0": key_orthogonality(in_context, signed=True).mean().item(),
    }


def position_against_inits(value: float, low: float, high: float) -> str:
    """Where ``value`` sits against the random-init draws' 95 % range ``[low, high]``:
    ``"below"``, ``"above"`` or ``"within"``.

    >>> position_against_inits(0.1, 0.2, 0.3), position_against_inits(0.2, 0.2, 0.3)
    ('below', 'within')
    """
    return "below" if value < low else "above" if value > high else "within"


@dataclass
class Keys:
    """The key statistics of both layouts, trained and at initialisation.

    Attributes:
        probes: per layout, (a)'s run with its probe sequences (``probe_size``, seed
            ``seed + 7``), which the later parts measure too.
        rows: the key table's rows: ``(layout, model)`` -> statistic -> cosine, the models being
            ``"random init"``, ``"trained"`` and the 2.5 % and 97.5 % quantiles of the
            ``N_INITS`` independent initialisations (and the authors' checkpoint's row).
        matrices: ``(layout, "random init" | "trained")`` -> ``(H, V, d_head)`` hypothesis keys.
        init_spread: per layout, the 2.5 % and 97.5 % quantiles (rows) of each statistic
            (columns) over the independent initialisations.
    """

    probes: dict[str, CheckpointProbe]
    rows: dict[tuple[str, str], dict[str, float]]
    matrices: dict[tuple[str, str], torch.Tensor]
    init_spread: dict[str, pd.DataFrame]

    def position(self, layout: str, statistic: str) -> str:
        """Where the trained value of ``statistic`` sits against ``layout``'s initialisations
        (:func:`position_against_inits`)."""
        low, high = self.init_spread[layout][statistic]
        return position_against_inits(self.rows[layout, "trained"][statistic], low, high)


def key_frames(results: Results, chosen: dict, runs: dict[str, BijectionRun], device: torch.device,
               seed: int) -> Keys:
    """Measure every key statistic on each layout's run at initialisation and trained, and on
    ``N_INITS`` independent initialisations (seeds 10000, 10001, ...); record the authors' two
    definitions against the 95 % of the initialisations, the varied steps, the authors'
    checkpoint and the references of random directions and of a simplex."""
    probes = {}
    for layout, run in runs.items():
        batch = probe_sequences(run.task, chosen, seed + 7, device)
        probes[layout] = CheckpointProbe(run.history, Transformer(run.config, torch.Generator()).to(device),
                                         batch)
    rows, matrices, init_spread = {}, {}, {}
    for layout, run in runs.items():
        probe = probes[layout]
        for label, step in (("random init", 0), ("trained", probe.final_step)):
            model = probe.at_step(step)
            matrices[layout, label] = hypothesis_keys(model, run.task)
            rows[layout, label] = key_statistics(model, run.task, probe.batch)
        draws = pd.DataFrame([
            key_statistics(Transformer(run.config, torch.Generator().manual_seed(10_000 + i)).to(device),
                           run.task, probe.batch)
            for i in range(N_INITS)])
        init_spread[layout] = draws.quantile([0.025, 0.975])
        for quantile, row in init_spread[layout].iterrows():
            rows[layout, f"random init, {quantile:.1%} of {N_INITS} draws"] = dict(row)
        for ending, statistic in (("key_orthogonality", MEAN_ABS), ("key_signed_cosine", SIGNED)):
            low, high = init_spread[layout][statistic]
            results.record(f"{layout}_{ending}", rows[layout, "trained"][statistic])
            results.record(f"{layout}_{ending}_random_init", rows[layout, "random init"][statistic])
            results.record(f"{layout}_{ending}_init_low", low)
            results.record(f"{layout}_{ending}_init_high", high)
        trained = rows[layout, "trained"]
        results.record(f"{layout}_key_signed_cosine_layer_1", trained["signed cos, raw, layer 1"])
        results.record(f"{layout}_key_signed_cosine_first_tokens",
                       trained["signed cos, raw, layer 0, tokens 0..V-1"])
        results.record(f"{layout}_key_orthogonality_in_context",
                       trained["mean |cos|, keys in context, layer 0"])
        results.record(f"{layout}_key_signed_cosine_in_context",
                       trained["signed cos, keys in context, layer 0"])
    results.record("key_orthogonality_n_inits", N_INITS)
    for label, number in AUTHORS_CHECKPOINT_KEY_ORTHOGONALITY.items():
        rows[AUTHORS_ROW, label] = {MEAN_ABS: number.value}
        name = label.replace(" ", "_")
        results.record(f"authors_checkpoint_key_orthogonality_{name}", number.value)
    results.record("key_orthogonality_random_directions",
                   np.sqrt(2 / (np.pi * runs["separate"].config.d_head)))
    results.record("key_orthogonality_simplex", 1 / (chosen["n_symbols"] - 1))
    return Keys(probes, rows, matrices, init_spread)
