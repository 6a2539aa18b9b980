"""The gradient at the Mamba's implicit attention, its closed form checked against autograd,
and how much of each routing gradient re-routes (rows summing to zero) rather than rescales,
against the transformer's score gradient."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import nn

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.content_routing.deep_mamba import DeepMamba
from attention_dynamics.chapters.content_routing.probes import ReadingOffsets, RecallProbe
from attention_dynamics.measures.scan_gradients import (
    log_weight_gradient,
    mamba_routing_gradients,
    pooled_readers,
    pooled_zero_sum_fraction,
    scan_routing_gradients,
    transformer_score_gradients,
    zero_sum_fraction,
)
from attention_dynamics.models.mamba import selective_scan_sequential
from attention_dynamics.tasks.base import Task

RECALL_MEASURES = (
    "transformer_score_gradient_net_fraction",
    "mamba_attention_gradient_net_fraction",
    "mamba_log_delta_forget_share",
    "mamba_log_weight_gradient_net_fraction",
    "mamba_log_weight_gradient_pooled_net_fraction",
)
"""The recall models' measures of ``net_fractions``, in the order its table shows them."""


@dataclass
class ScanGradientCheck:
    """The closed-form scan gradients against autograd, on the trained recall Mamba.

    Attributes:
        errors: the largest relative error (float64) of the gradient with respect to ``C``,
            ``B`` and ``log_delta``, by name.
        mamba: the recall Mamba of the shown seed at the end of training (a copy).
        implicit: ``(B, D, M, T)`` its first layer's implicit attention at the ``M`` query rows
            of the ``B`` sequences of the check batch (``D`` channels, ``T`` positions).
    """

    errors: dict[str, float]
    mamba: nn.Module
    implicit: torch.Tensor

    def table(self) -> pd.DataFrame:
        """The errors as a one-column table."""
        return pd.DataFrame({"max relative error": self.errors})


def scan_gradient_check(results: Results, chosen: dict, probe: RecallProbe,
                        offsets: ReadingOffsets, device: torch.device,
                        seed: int) -> ScanGradientCheck:
    """Check the closed form on the recall Mamba's own scan inputs for ``gradient_check_size``
    sequences (a generator on ``device`` seeded ``seed + 9``) under a random upstream gradient
    (a CPU generator seeded ``seed``), in float64; record ``scan_gradient_max_rel_error``."""
    mamba = copy.deepcopy(probe.load("mamba", probe.final_step, offsets.shown["mamba"]))
    batch = probe.task.sample(chosen["gradient_check_size"],
                              torch.Generator(device=device).manual_seed(seed + 9))
    with torch.no_grad():
        _, record = mamba(batch.tokens, return_record=True)
    layer = record.layers[0]
    x_in, delta_in, A_in, B_in, C_in = (t.detach().double() for t in (
        layer.scan_input, layer.delta, layer.A, layer.B, layer.C))
    upstream = torch.randn(x_in.shape, generator=torch.Generator().manual_seed(seed),
                           dtype=torch.float64).to(device)
    log_delta = delta_in.log().requires_grad_()
    B_leaf, C_leaf = B_in.clone().requires_grad_(), C_in.clone().requires_grad_()
    scan = selective_scan_sequential(x_in, log_delta.exp(), A_in, B_leaf, C_leaf)
    autograd = torch.autograd.grad((upstream * scan).sum(), [C_leaf, B_leaf, log_delta])
    closed = scan_routing_gradients(x_in, delta_in, A_in, B_in, C_in, upstream)
    errors = {name: ((mine - ref).abs().max() / ref.abs().max()).item()
              for name, mine, ref in zip(("C", "B", "log_delta"),
                                         (closed.C, closed.B, closed.log_delta), autograd,
                                         strict=True)}
    results.record("scan_gradient_max_rel_error", max(errors.values()))
    with torch.no_grad():
        implicit = layer.attention[:, :, probe.task.query_positions.to(device)]
    return ScanGradientCheck(errors, mamba, implicit)


@dataclass
class NetFractions:
    """What separates the two kinds of routing, by metric name (``nan``: not measured, where no
    layer of a deep Mamba had an unclamped reader)."""

    values: dict[str, float]

    def table(self) -> pd.DataFrame:
        """The measures as a one-column table."""
        return pd.DataFrame({"value": self.values})


def net_fractions(results: Results, chosen: dict, tasks: dict[str, Task], probe: RecallProbe,
                  offsets: ReadingOffsets, check: ScanGradientCheck, deep: DeepMamba,
                  device: torch.device, seed: int) -> NetFractions:
    """Measure the net fraction ``|sum_s G_ts| / sum_s |G_ts|`` of each routing gradient at the
    query rows of the probe batch (0: pure re-routing, 1: pure rescaling): the transformer's
    score gradient (float64), the Mamba's compatibility and ``M * dL/dM`` per channel and
    pooled over channels, the share of the forgetting term of the ``log_delta`` gradient; then
    ``M * dL/dM`` of each deep Mamba variant on ``gradient_check_size`` HMM sequences (a
    generator on ``device`` seeded ``seed + 10``), pooled over the readers no clamp touched;
    and the sign and row sums of the recall Mamba's implicit attention. Records each."""
    query_rows = probe.task.query_positions.to(device)
    transformer = copy.deepcopy(probe.load("transformer", probe.final_step,
                                           offsets.shown["transformer"])).double()
    score_grads = transformer_score_gradients(transformer, probe.batch)
    scan_grads = mamba_routing_gradients(check.mamba, probe.batch)
    results.record("transformer_score_gradient_net_fraction",
                   max(zero_sum_fraction(g.double(), query_rows) for g in score_grads))
    results.record("mamba_attention_gradient_net_fraction",
                   np.mean([zero_sum_fraction(g.compatibility.double(), query_rows)
                            for g in scan_grads]))
    forget = np.mean([g.log_delta_forget.abs().sum().item() for g in scan_grads])
    write = np.mean([g.log_delta_write.abs().sum().item() for g in scan_grads])
    results.record("mamba_log_delta_forget_share", forget / (forget + write))
    # like with like: M * dL/dM against dL/ds, per channel and pooled over channels
    log_weight = [log_weight_gradient(g).double() for g in scan_grads]
    results.record("mamba_log_weight_gradient_net_fraction",
                   np.mean([zero_sum_fraction(g, query_rows) for g in log_weight]))
    results.record("mamba_log_weight_gradient_pooled_net_fraction",
                   np.mean([pooled_zero_sum_fraction(g, query_rows) for g in log_weight]))
    hmm_check = tasks["hmm"].sample(chosen["gradient_check_size"],
                                    torch.Generator(device=device).manual_seed(seed + 10))
    for variant, model in deep.first_models.items():
        record_deep_fractions(results, variant, model, hmm_check)
    results.record("mamba_attention_negative_fraction",
                   (check.implicit < 0).sum() / (check.implicit != 0).sum())
    results.record("mamba_attention_row_sum_mean", check.implicit.sum(-1).mean())
    names = (*RECALL_MEASURES,
             *(f"mamba_{variant}_hmm_log_weight_gradient_{kind}net_fraction"
               for variant in deep.first_models for kind in ("", "pooled_")),
             "mamba_attention_negative_fraction", "mamba_attention_row_sum_mean")
    return NetFractions({name: results.metrics.get(name, np.nan) for name in names})


def record_deep_fractions(results: Results, variant: str, model: nn.Module, batch) -> None:
    """Record the net fraction of ``M * dL/dM`` of a deep Mamba ``variant`` on the HMM ``batch``
    per channel and, over the layers with a reader whose scan no clamp touched in any channel,
    pooled over channels (``mamba_<variant>_hmm_...``); for the authors' variant also the share
    of readers clamped somewhere."""
    log_weight = [log_weight_gradient(g).double() for g in mamba_routing_gradients(model, batch)]
    with torch.no_grad():
        _, record = model(batch.tokens, return_record=True)
    # readers whose scan no clamp has touched in any channel (the authors' clamps)
    unclamped = [None if layer.exact is None else layer.exact.all(-1) for layer in record.layers]
    results.record(f"mamba_{variant}_hmm_log_weight_gradient_net_fraction",
                   np.mean([zero_sum_fraction(g) for g in log_weight]))
    # a layer whose every reader was clamped somewhere has nothing to measure
    measured = [(g, keep) for g, keep in zip(log_weight, unclamped, strict=True)
                if pooled_readers(g, keep).any()]
    results.record(f"mamba_{variant}_hmm_pooled_layers_measured", len(measured))
    if measured:  # with no unclamped reader in any layer there is no pooled fraction
        results.record(f"mamba_{variant}_hmm_log_weight_gradient_pooled_net_fraction",
                       np.mean([pooled_zero_sum_fraction(g, keep=keep) for g, keep in measured]))
    if variant == "authors":
        results.record("mamba_authors_hmm_clamped_reader_share",
                       1 - torch.cat([keep.flatten() for keep in unclamped]).double().mean())
