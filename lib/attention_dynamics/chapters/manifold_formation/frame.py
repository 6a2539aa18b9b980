"""Part (g), frame and precision over training, what settles when on constant-rate runs.

The separate-layout model is trained again on every seed at a constant rate after the warm-up,
with checkpoints spaced geometrically early and evenly over the second half. At each checkpoint:
the ratio of the routing to the value gradients, the distances of the key frame, of the
attention of the heads that matter and of the entropy direction to the end state (the mean over
the last tenth of training), and the precision (the entropy MAE, bits, by the absolute log of
its ratio to the end window's). Two numbers per seed carry 95 % intervals over disjoint parts of
held-out data: the fall of the gradient ratio and the gain in precision after the attention
settled.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from attention_dynamics.book.results import Results
from attention_dynamics.book.statistics import t_interval
from attention_dynamics.chapters.manifold_formation.ablation import ablate_heads
from attention_dynamics.chapters.manifold_formation.calibration import BijectionRun
from attention_dynamics.chapters.manifold_formation.keys import hypothesis_keys
from attention_dynamics.chapters.manifold_formation.probes import (
    CheckpointProbe,
    probe_part,
    probe_sequences,
)
from attention_dynamics.chapters.manifold_formation.settings import FRAME_RANK, PROBE_PARTS
from attention_dynamics.chapters.manifold_formation.training import (
    key_position_mae,
    replicate_seed,
    score,
    solve_step,
    train,
)
from attention_dynamics.measures.frame_precision import (
    direction_stability,
    probe_direction,
    routing_value_gradient_norms,
)
from attention_dynamics.measures.geometry import attention_drift, subspace_similarity
from attention_dynamics.measures.settling import jitter_aware_settling_step
from attention_dynamics.measures.trajectories import relative_fall
from attention_dynamics.models import Transformer
from attention_dynamics.sequence_training import geometric_checkpoints
from attention_dynamics.tasks.base import TaskBatch, sequences_of

SETTLING = {
    "key frame": "key frame: 1 - similarity",
    "attention": "attention of the heads that matter: TV",
    "entropy direction": "entropy direction: 1 - |cos|",
}
"""Each measure whose settling is followed, by name, with its column in the dynamics table."""

PRECISION = "entropy MAE: |log of its ratio to the end|"
"""The precision's column in the dynamics table."""


def frame_checkpoints(chosen: dict) -> list[int]:
    """The constant-rate runs' checkpoints, geometric ones (``n_checkpoints``) and
    ``late_checkpoints`` evenly spaced over the second half of the run, sorted, without
    repeats."""
    steps = chosen["frame_training"]["steps"]
    late = np.linspace(steps // 2, steps, chosen["late_checkpoints"]).round().astype(int).tolist()
    return sorted(set(geometric_checkpoints(steps, chosen["n_checkpoints"])) | set(late))


def end_window(steps: list[int]) -> list[int]:
    """The checkpoints of the last tenth of training, whose mean state is the end state: at a
    constant rate every state jitters, and one checkpoint is one draw.

    >>> end_window([0, 10, 80, 90, 95, 100])
    [90, 95, 100]
    """
    return [step for step in steps if step >= 0.9 * steps[-1]]


def key_subspace(keys: torch.Tensor) -> torch.Tensor:
    """``(d_head, FRAME_RANK)`` orthonormal basis (float64) of the leading directions of one
    head's keys ``(V, d_head)``."""
    return torch.linalg.svd(keys.double(), full_matrices=False).Vh[:FRAME_RANK].T


def settle_steps(table: pd.DataFrame) -> tuple[dict[str, int], torch.Tensor]:
    """The settling step of each measure of :data:`SETTLING` and of the precision (by name, the
    precision as ``"precision"``): the first checkpoint from which its distance to the end state
    stays within the larger of a tenth of its distance at step 0 and the end window's own jitter
    (the largest distance of an end-window checkpoint); and ``(checkpoints, 4)`` each distance
    over that threshold, times 0.1 (0.1 at the threshold).

    ``table``: one row per checkpoint (indexed by step) with the columns of :data:`SETTLING` and
    :data:`PRECISION`.
    """
    columns = [*SETTLING.values(), PRECISION]
    distances = torch.tensor(table[columns].to_numpy())
    in_end = torch.tensor([step in end_window(list(table.index)) for step in table.index])
    threshold = torch.maximum(0.1 * distances[0], distances[in_end].max(dim=0).values)
    relative = 0.1 * distances / threshold.clamp_min(1e-12)  # 0.1 at the threshold
    settled = jitter_aware_settling_step(torch.tensor(table.index.to_numpy()),
                                         distances / distances[0].clamp_min(1e-12), in_end)
    return dict(zip((*SETTLING, "precision"), settled.tolist(), strict=True)), relative


@dataclass
class FrameData:
    """What every constant-rate run is measured on (the separate layout's).

    Attributes:
        run: (a)'s separate-layout run: its task, sizes and held-out batches.
        probe: its probe sequences and scratch model (the runs' checkpoints load into it).
        scored: ``(P,)`` the scored key positions, on the device.
        held_out_parts: ``PROBE_PARTS`` disjoint parts of a second probe batch (seed
            ``seed + 13``), on which the gradient ratio's fall is measured.
        eval_parts: ``PROBE_PARTS`` parts, each a slice of every held-out batch, on which the
            gain in precision is measured.
    """

    run: BijectionRun
    probe: CheckpointProbe
    scored: torch.Tensor
    held_out_parts: list[TaskBatch]
    eval_parts: list[list[TaskBatch]]


def frame_data(chosen: dict, run: BijectionRun, probe: CheckpointProbe, device: torch.device,
               seed: int) -> FrameData:
    """The separate layout's probe, a second probe batch (seed ``seed + 13``) in parts, and the
    held-out batches in parts."""
    held_out = probe_sequences(run.task, chosen, seed + 13, device)
    eval_parts = [[] for _ in range(PROBE_PARTS)]
    for batch in run.batches:
        slices = torch.arange(batch.tokens.shape[0]).chunk(PROBE_PARTS)
        for part, rows in zip(eval_parts, slices, strict=True):
            part.append(sequences_of(batch, rows))
    return FrameData(run, probe, run.task.key_positions.to(device),
                     [probe_part(held_out, i) for i in range(PROBE_PARTS)], eval_parts)


@dataclass
class FrameRun:
    """One seed's constant-rate run.

    Attributes:
        probe: its checkpoints, loaded into the separate layout's scratch model, and the probe.
        heads: the ``(layer, head)`` pairs followed: those that matter on its final model, or
            the one whose masking hurts most where none doubles the MAE.
    """

    probe: CheckpointProbe
    heads: list[tuple[int, int]]


def frame_run(chosen: dict, data: FrameData, checkpoints: list[int], replicate: int,
              device: torch.device, seed: int) -> FrameRun:
    """Train the separate-layout model of seed ``replicate`` at a constant rate (initialised
    with seed ``replicate_seed(seed, replicate, 50)``, data of ``replicate_seed(seed, replicate,
    500)``), keeping ``checkpoints``; find the heads that matter on its final model."""
    model = Transformer(data.run.config, torch.Generator().manual_seed(replicate_seed(seed, replicate, 50)))
    history = train(model, data.run.task, chosen, "frame_training", replicate_seed(seed, replicate, 500),
                    device, f"constant rate, seed {replicate}", checkpoints)
    probe = dataclasses.replace(data.probe, history=history)
    ablation = ablate_heads(probe.at_step(probe.final_step), data.run.task, data.run.batches)
    return FrameRun(probe, ablation.important or [ablation.single_heads.idxmax()])


@dataclass
class Snapshot:
    """The measures of one checkpoint.

    Attributes:
        ratio: ``(layers,)`` the routing over the value gradient norm on the probe.
        weights: ``(heads, B, T, T)`` the attention of the heads followed on the probe.
        keys: ``(H, V, d_head)`` the hypothesis keys of layer 0.
        direction: ``(d_model,)`` the unit direction of the linear probe reading the Bayes
            entropy from the normed stream at the scored positions.
        mae: the mean-curve entropy MAE (bits) on the held-out batches.
    """

    ratio: torch.Tensor
    weights: torch.Tensor
    keys: torch.Tensor
    direction: torch.Tensor
    mae: float


def snapshot(run: FrameRun, data: FrameData, step: int) -> Snapshot:
    """The measures of ``run``'s checkpoint ``step``."""
    model = run.probe.at_step(step)
    batch, scored, task = data.probe.batch, data.scored, data.run.task
    with torch.no_grad():
        _, record = model(batch.tokens, return_record=True)
    points = record.final[:, scored].flatten(0, 1)
    return Snapshot(
        ratio=routing_value_gradient_norms(model, batch.tokens, batch).ratio,
        weights=torch.stack([record.attention[layer].weights[:, head] for layer, head in run.heads]),
        keys=hypothesis_keys(model, task),
        direction=probe_direction(points, batch.bayes_entropy_bits[:, scored].flatten()),
        mae=score(model, task, data.run.batches).mae_mean_curve,
    )


def frame_dynamics(run: FrameRun, data: FrameData) -> pd.DataFrame:
    """A run's dynamics, one row per checkpoint (indexed by step) with the gradient ratio (mean of
    layers, and per layer), the distances of key frame, attention and entropy direction to the
    end state (their mean over :func:`end_window`), the entropy MAE (bits) and its distance to
    the end (the absolute log of its ratio to the end window's mean MAE)."""
    steps = sorted(run.probe.history.checkpoints)
    snapshots = {step: snapshot(run, data, step) for step in steps}
    end = [snapshots[step] for step in end_window(steps)]
    end_weights = torch.stack([e.weights for e in end]).mean(0)
    end_keys = torch.stack([e.keys for e in end]).mean(0)
    last = end[-1].direction  # directions have no sign: align them before averaging
    end_direction = torch.stack([e.direction * torch.sign(e.direction @ last) for e in end]).mean(0)
    end_mae = np.mean([e.mae for e in end])

    def frame_distance(keys):
        return 1 - np.mean([subspace_similarity(key_subspace(k), key_subspace(f))
                            for k, f in zip(keys, end_keys, strict=True)])

    directions = torch.stack([snapshots[s].direction for s in steps] + [end_direction])
    table = pd.DataFrame({
        "step": steps,
        "routing / value gradient": [snapshots[s].ratio.mean().item() for s in steps],
        SETTLING["key frame"]: [frame_distance(snapshots[s].keys) for s in steps],
        SETTLING["attention"]: [attention_drift(snapshots[s].weights, end_weights, data.scored)
                                for s in steps],
        SETTLING["entropy direction"]: (1 - direction_stability(directions))[:-1].tolist(),
        "entropy MAE (bits)": [snapshots[s].mae for s in steps],
        PRECISION: [abs(np.log(snapshots[s].mae / end_mae)) for s in steps],
    }).set_index("step")
    for layer in range(data.run.config.n_layers):
        table[f"routing / value gradient, layer {layer}"] = [snapshots[s].ratio[layer].item()
                                                            for s in steps]
    return table


def part_ratios(run: FrameRun, data: FrameData, step: int) -> torch.Tensor:
    """``(PROBE_PARTS, n_layers)`` the gradient ratio of each layer of checkpoint ``step`` per
    part of the second probe batch."""
    model = run.probe.at_step(step)
    return torch.stack([routing_value_gradient_norms(model, part.tokens, part).ratio.double().cpu()
                        for part in data.held_out_parts])


def part_maes(run: FrameRun, data: FrameData, step: int) -> torch.Tensor:
    """``(PROBE_PARTS,)`` the mean-curve entropy MAE (bits) of checkpoint ``step`` per part of
    the held-out batches."""
    model = run.probe.at_step(step)
    return torch.tensor([score(model, data.run.task, part).mae_mean_curve for part in data.eval_parts])


@dataclass
class FrameSeed:
    """One seed's frame and precision.

    Attributes:
        table: the dynamics (:func:`frame_dynamics`).
        settle: the settling step of each measure and of the precision, by name.
        relative: ``(checkpoints, 4)`` the distances over their settling thresholds, times 0.1.
        fall: the gradient ratio's end window over its peak (mean of layers, mean over parts;
            1: constant).
        fall_interval: its 95 % t interval over the parts.
        beyond_jitter: per layer, the largest ratio of the end window over the ratio's peak
            before it (mean over parts; below 1: a fall that the end's jitter does not reach).
        beyond_jitter_high: per layer, the upper end of its 95 % t interval over the parts.
        gain: the MAE at the attention's settling step over the end window's largest (per part,
            then the mean over parts; 1 or less: no gain beyond the end's jitter, as for an
            attention that never settled, whose settling step lies in the end window).
        gain_interval: its 95 % t interval over the parts.
        keys_mae: the last checkpoint's mean-curve MAE (bits) at the key positions.
        loss_fall: the training loss's fall over the last tenth of training.
        solve_step: the first checkpoint from which it stays solved at the key positions.
    """

    table: pd.DataFrame
    settle: dict[str, int]
    relative: torch.Tensor
    fall: float
    fall_interval: tuple[float, float]
    beyond_jitter: list[float]
    beyond_jitter_high: list[float]
    gain: float
    gain_interval: tuple[float, float]
    keys_mae: float
    loss_fall: float
    solve_step: int


def frame_measures(run: FrameRun, data: FrameData) -> FrameSeed:
    """The dynamics of one seed, its settling steps, the fall of the gradient ratio (peaks
    chosen on the probe, the fall measured on the second probe batch: the mean of layers' end
    window over its peak, and each layer's end-window largest over its peak before the end
    window) and the gain in precision after the attention settled (on parts of the held-out
    batches, over the end window's worst checkpoint)."""
    table = frame_dynamics(run, data)
    settle, relative = settle_steps(table)
    end = end_window(list(table.index))
    before_end = table.loc[[step for step in table.index if step not in end]]
    end_parts = torch.stack([part_ratios(run, data, step) for step in end])  # (E, parts, L)
    peak = table["routing / value gradient"].idxmax()  # chosen on the probe batch
    falls = end_parts.mean(2).mean(0) / part_ratios(run, data, peak).mean(1)  # the other batch
    beyond = []  # per layer, (parts,): the end's largest ratio over the peak before the end
    for layer in range(end_parts.shape[2]):
        layer_peak = before_end[f"routing / value gradient, layer {layer}"].idxmax()
        beyond.append(end_parts[:, :, layer].max(0).values
                      / part_ratios(run, data, layer_peak)[:, layer])
    # per part, the gain over the end window's worst checkpoint, a gain beyond the end's own
    # jitter; an attention that never settled has its settling step in the end window, so it
    # gains at most 1 by construction
    end_maes = torch.stack([part_maes(run, data, step) for step in end]).max(0).values
    gains = part_maes(run, data, settle["attention"]) / end_maes
    task = data.run.task
    return FrameSeed(
        table=table, settle=settle, relative=relative,
        fall=falls.mean().item(), fall_interval=t_interval(falls),
        beyond_jitter=[b.mean().item() for b in beyond],
        beyond_jitter_high=[t_interval(b)[1] for b in beyond],
        gain=gains.mean().item(), gain_interval=t_interval(gains),
        keys_mae=key_position_mae(score(run.probe.at_step(end[-1]), task, data.run.batches), task),
        loss_fall=relative_fall(run.probe.history.loss).item(),
        solve_step=solve_step(data.run.model, run.probe.history, task, data.run.batches),
    )


@dataclass
class Frame:
    """Frame and precision on every seed.

    Attributes:
        seeds: each seed's :class:`FrameSeed`, in seed order.
        per_seed: the numbers the ledger judges, one list (a value per seed) per name.
        checkpoints: the runs' checkpoints (steps).
    """

    seeds: list[FrameSeed]
    per_seed: dict[str, list[float]]
    checkpoints: list[int]


def frame_and_precision(results: Results, chosen: dict, run: BijectionRun, probe: CheckpointProbe,
                        device: torch.device, seed: int) -> Frame:
    """Train and measure the constant-rate runs of ``chosen["n_seeds"]`` seeds; record their
    sizes, each judged number seed by seed with its mean and extremes, the share of seeds on
    which the attention settles before the precision, seed 0's settling steps and the key
    subspaces' similarity for random subspaces."""
    checkpoints = frame_checkpoints(chosen)
    data = frame_data(chosen, run, probe, device, seed)
    seeds = [frame_measures(frame_run(chosen, data, checkpoints, replicate, device, seed), data)
             for replicate in range(chosen["n_seeds"])]
    steps = chosen["frame_training"]["steps"]
    results.record("frame_steps", steps)
    results.record("frame_training_sequences", steps * chosen["frame_training"]["batch_size"])
    results.record("frame_n_checkpoints", len(checkpoints))
    per_seed = {
        "routing_value_gradient_ratio_fall": [f.fall for f in seeds],
        "routing_value_gradient_ratio_fall_high": [f.fall_interval[1] for f in seeds],
        "routing_value_gradient_fall_beyond_jitter": [max(f.beyond_jitter) for f in seeds],
        "routing_value_gradient_fall_beyond_jitter_high": [max(f.beyond_jitter_high)
                                                           for f in seeds],
        "mae_gain_after_attention_settle": [f.gain for f in seeds],
        "mae_gain_after_attention_settle_low": [f.gain_interval[0] for f in seeds],
        "attention_settle_step": [f.settle["attention"] for f in seeds],
        "precision_settle_step": [f.settle["precision"] for f in seeds],
        "bijection_entropy_mae_keys_bits": [f.keys_mae for f in seeds],
        "bijection_loss_fall_last_tenth": [f.loss_fall for f in seeds],
        "bijection_solve_step": [f.solve_step for f in seeds],
    }
    for name, values in per_seed.items():
        results.record_spread(f"frame_{name}", values)
    results.record("frame_attention_first_share",
                   np.mean([f.settle["attention"] < f.settle["precision"] for f in seeds]))
    for name, step in seeds[0].settle.items():
        results.record(f"{name.replace(' ', '_')}_settle_step", step)
    results.record("key_subspace_similarity_random", FRAME_RANK / run.config.d_head)
    return Frame(seeds, per_seed, checkpoints)
