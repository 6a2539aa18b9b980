"""Beyond the reproduction (fresh sequences, the value multiplier, Adam, depth).

Each part records its metrics into a :class:`~attention_dynamics.book.results.Results` and
returns what the figures and tables need. Losses are in nats.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.em_reading.reproduction import Chain
from attention_dynamics.chapters.progress import training_run
from attention_dynamics.measures.settling import jitter_aware_settling_step
from attention_dynamics.measures.trajectories import relative_fall, settling_step
from attention_dynamics.sticky.analysis import (
    FramePrecision,
    evaluate_snapshots,
    frame_precision,
    value_curvature,
)
from attention_dynamics.sticky.deep import DeepConfig, DeepStickyTransformer, train_deep
from attention_dynamics.sticky.fresh import (
    FreshHistory,
    FreshProbe,
    ProbeSettling,
    end_window_settling,
    make_probe,
    probe_settling,
    smoothed_probe_settling,
    train_fresh,
)
from attention_dynamics.sticky.model import init_params
from attention_dynamics.sticky.training import (
    BASE_LR,
    TrainingHistory,
    scaled_schedule,
    steps_to_reach,
    sticky_chain_data,
    sticky_chain_heldout,
    train,
)
from attention_dynamics.tasks.sticky_chain import bayes_reference, memoryless_log_predictive

FRESH_DATA_SEED_OFFSET = 20_000
"""Added to a seed to seed its stream of fresh training sequences (apart from the probe's seed,
``seed + 10000``, and the weights' seeds)."""


@dataclass
class Fresh:
    """SGD and EM-like trained online on fresh sequences, at thirty times the paper's rates.

    Attributes:
        history: the training history of the ``2 n`` runs (run ``2 i`` seed ``i`` under SGD,
            ``2 i + 1`` under EM-like; a seed's two runs share weights and data).
        probe: the fixed held-out sequences everything is measured on.
        settling: the attention's and the values' distances to their final state per record.
        smoothed: the same on trajectories averaged over ``window`` records.
        window: the records averaged over (a tenth of the run).
        runs: each schedule's runs, as a slice of the run axis.
    """

    history: FreshHistory
    probe: FreshProbe
    settling: ProbeSettling
    smoothed: ProbeSettling
    window: int
    runs: dict[str, slice]


def half_way_steps(settling: ProbeSettling, runs: slice) -> tuple[torch.Tensor, torch.Tensor]:
    """``(R,)`` each, the steps at which the attention and the values of ``runs`` are half-way
    to their end state on ``settling``."""
    return tuple(settling_step(settling.steps, remaining[:, runs], 0.5)
                 for remaining in (settling.attention_remaining, settling.value_remaining))


def settled_steps(settling: ProbeSettling, runs: slice, window: int
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """``(R,)`` each, the steps at which the attention and the values of ``runs`` settle on
    ``settling`` (:func:`~attention_dynamics.sticky.fresh.end_window_settling`): from which
    record on they stay within the larger of a tenth of their initial distance and the
    jitter of the last ``window`` records."""
    in_end = torch.arange(len(settling.steps)) >= len(settling.steps) - window
    return tuple(jitter_aware_settling_step(settling.steps, remaining[:, runs], in_end)
                 for remaining in (settling.attention_remaining, settling.value_remaining))


def record_order(results: Results, prefix: str, steps: tuple[torch.Tensor, torch.Tensor],
                 when: str = "half") -> None:
    """Record, under ``prefix``, the steps (``when``: ``half`` for half-way, ``settle`` for
    settled) of the attention and of the values, ``steps`` ``(R,)`` each, as their mean,
    extremes and per-seed values, and the seeds (and their share) on which the attention's
    comes first."""
    att, val = steps
    for part, values in (("attention", att), ("values", val)):
        results.record_spread(f"{prefix}_{part}_{when}_step", values.double())
    results.record(f"{prefix}_attention_first_seeds", (att < val).sum())
    results.record(f"{prefix}_values_first_seeds", (val < att).sum())
    results.record(f"{prefix}_attention_first_share", (att < val).double().mean())
    results.record_seeds(f"{prefix}_attention_first_share", att < val)


def fresh_sequences(results: Results, settings: dict, seed: int) -> Fresh:
    """Train SGD and EM-like on a fresh sequence every step (seeds ``seed``, ``seed + 1``, ...,
    on the CPU) and record, per schedule, when the attention and the values are half-way to
    their final state (raw and averaged over a tenth of the run), how uniform and how
    symbol-bound the attention is, the held-out gap to the exact predictor and the ratio of the
    score and value gradients."""
    chosen = settings["fresh"]
    scale = chosen["lr_scale"]
    schedules = {"sgd": scaled_schedule(scale=scale), "em": scaled_schedule(value=10, scale=scale)}
    results.record_all({"steps": chosen["steps"], "sequence_length": chosen["sequence_length"],
                        "n_seeds": chosen["n_seeds"], "base_lr": BASE_LR * scale},
                       prefix="fresh_")
    seeds = [seed + s for s in range(chosen["n_seeds"])]
    names = list(schedules)
    probe = make_probe(chosen["sequence_length"], chosen["probe"],
                       torch.Generator().manual_seed(seed + 10_000))
    with training_run("fresh sequences: SGD and EM-like", chosen["steps"]):
        fresh = train_fresh(
            init_params([s for s in seeds for _ in names]),
            [schedules[n] for _ in seeds for n in names],
            chosen["steps"],
            chosen["sequence_length"],
            [FRESH_DATA_SEED_OFFSET + s for s in seeds],  # each seed its own data stream
            probe,
            record_every=chosen["record_every"],
            streams=[i for i in range(len(seeds)) for _ in names],
        )
    raw = probe_settling(fresh, probe)
    # the same on trajectories averaged over the last tenth of the records (the share of the
    # run the loss-flattening check averages over), fixed before the run: at a value rate of
    # 3.0 the values jitter from record to record, which alone delays their raw half-way point
    window = max(1, round(0.1 * (len(fresh.steps) - 1)))  # records
    smoothed = smoothed_probe_settling(fresh, probe, window)
    results.record("fresh_settling_window_steps", window * chosen["record_every"])
    runs = {name: slice(k, None, len(names)) for k, name in enumerate(names)}
    # the best predictor from the current input alone (no history)
    memoryless = -memoryless_log_predictive(probe.data.inputs, probe.data.transition,
                                            probe.data.means, probe.data.noise_std
                                            ).gather(-1, probe.data.targets[..., None])
    results.record("fresh_memoryless_gap_to_bayes", memoryless.mean() - fresh.bayes_cross_entropy)
    early = int((fresh.steps <= 0.1 * chosen["steps"]).nonzero().max())  # record at 10 %
    late = int((fresh.steps <= 0.8 * chosen["steps"]).nonzero().max())  # record at 80 %
    # settled, as chapter 4 times it: each record against the end window's mean state, settled
    # once within the larger of a tenth of the start's distance and the end window's jitter
    against_end = end_window_settling(fresh, probe, window)
    for name, r in runs.items():
        record_order(results, f"fresh_{name}", half_way_steps(raw, r))
        record_order(results, f"fresh_{name}_smoothed", half_way_steps(smoothed, r))
        record_order(results, f"fresh_{name}_settled", settled_steps(against_end, r, window),
                     "settle")
        for when, k in [("init", 0), ("final", -1)]:
            results.record(f"fresh_{name}_attention_uniformity_{when}",
                           fresh.attention_uniformity[k, r].mean())
            results.record(f"fresh_{name}_symbol_routing_{when}", fresh.symbol_routing[k, r].mean())
            results.record(f"fresh_{name}_heldout_gap_to_bayes_{when}",
                           fresh.heldout_gap[k, r].mean())
            results.record(f"fresh_{name}_score_value_gradient_ratio_{when}",
                           fresh.score_value_gradient_ratio[k, r].mean())
        results.record(f"fresh_{name}_score_value_gradient_ratio_max",
                       fresh.score_value_gradient_ratio[:, r].mean(1).max())
        results.record(f"fresh_{name}_heldout_gap_min", fresh.heldout_gap[:, r].mean(1).min())
        results.record(f"fresh_{name}_loss_fall_last_tenth",
                       relative_fall(fresh.probe_loss[:, r].mean(1).double()))
        for when, k in [("early", early), ("late", late), ("penultimate", -2)]:
            for part, series in [("attention", raw.attention_remaining),
                                 ("values", raw.value_remaining)]:
                results.record(f"fresh_{name}_{part}_remaining_{when}", series[k, r].mean())
    return Fresh(fresh, probe, raw, smoothed, window, runs)


def sweep_configs(multipliers: list[float]) -> dict[str, dict[str, float]]:
    """The sweep's schedules by name: ``value x{m}`` for each multiplier, then routing
    (W_Q, W_K), readout (W_O), every group, and EM-like on every group, at ten times the rate."""
    configs = {f"value x{m}": scaled_schedule(value=m) for m in multipliers}
    configs |= {
        "routing x10": scaled_schedule(routing=10),
        "readout x10": scaled_schedule(readout=10),
        "all x10": scaled_schedule(scale=10),
        "EM-like, all x10": scaled_schedule(value=10, scale=10),
    }
    return configs


def smooth_and_spike(multipliers: list[float], spiked: list[bool]) -> tuple[float, float]:
    """The largest multiplier whose loss never rose above its start, and the smallest whose loss
    did (0 where none did)."""
    return (max(m for m, s in zip(multipliers, spiked, strict=True) if not s),
            min((m for m, s in zip(multipliers, spiked, strict=True) if s), default=0))


@dataclass
class Sweep:
    """The value-multiplier sweep and its controls (``S'`` seeds per schedule).

    Attributes:
        history: the training history of all runs (schedule-major: ``blocks[name]`` holds a
            schedule's runs).
        loss: ``(K, R)`` training cross-entropy on the CPU; ``heldout_loss``: ``(M, R)`` on the
            held-out sequences, per snapshot.
        blocks: each schedule's run indices.
        x: ``(R, T', d_x)`` the runs' inputs on the device.
        edge: ``(S',)`` the first-order stability edge of W_V, as a multiplier of the paper's
            rate 0.01, per seed.
        table: per schedule: steps to SGD's final loss, speed-up, final training and held-out
            losses, best held-out loss, peak loss over the initial.
        multipliers: the value multipliers.
        bayes_heldout_loss: the exact predictor's mean held-out cross-entropy.
        sequence_length: ``T'``.
    """

    history: TrainingHistory
    loss: torch.Tensor
    heldout_loss: torch.Tensor
    blocks: dict[str, list[int]]
    x: torch.Tensor
    edge: torch.Tensor
    table: pd.DataFrame
    multipliers: list[float]
    bayes_heldout_loss: float
    sequence_length: int

    @property
    def value_rows(self) -> pd.DataFrame:
        """The table's rows of the value multipliers, in their order."""
        return self.table.loc[[f"value x{m}" for m in self.multipliers]]


def multiplier_sweep(results: Results, settings: dict, seeds: list[int],
                     device: torch.device) -> Sweep:
    """Train every schedule of :func:`sweep_configs` on the first ``sweep_seeds`` of ``seeds``,
    score it on training and held-out sequences, and record the speed-ups to SGD's final loss,
    where the loss spikes, the best held-out multiplier and the stability edge of W_V."""
    sweep_seeds = seeds[: settings["sweep_seeds"]]
    sweep_T, sweep_steps = settings["sweep_T"], settings["sweep_steps"]
    multipliers = settings["multipliers"]
    configs = sweep_configs(multipliers)
    names = list(configs)
    sweep_data = sticky_chain_data(sweep_seeds, sweep_T)
    sweep_heldout = sticky_chain_heldout(sweep_seeds, sweep_T)
    n_s = len(sweep_seeds)
    sweep_index = torch.arange(n_s).repeat(len(names))
    sweep_x = sweep_data.inputs[sweep_index].to(device)
    sweep_y = sweep_data.targets[sweep_index].to(device)
    curvature = value_curvature(init_params(sweep_seeds, device=device),
                                sweep_data.inputs.to(device)).cpu()
    edge = 2 / curvature / BASE_LR
    results.record_spread("value_edge_multiplier", edge)
    results.record("value_edge_lr", (2 / curvature).mean())

    with training_run("value-multiplier sweep", sweep_steps):
        start = time.perf_counter()
        sweep = train(init_params([sweep_seeds[i] for i in sweep_index.tolist()], device=device),
                      sweep_x, sweep_y, [configs[n] for n in names for _ in sweep_seeds],
                      sweep_steps, snapshot_every=sweep_steps // 20, record_params=True)
        results.record("sweep_seconds", time.perf_counter() - start, timing=True)
    sweep_loss = sweep.loss.cpu()
    sweep_held = evaluate_snapshots(sweep.param_snapshots,
                                    sweep_heldout.inputs[sweep_index].to(device),
                                    sweep_heldout.targets[sweep_index].to(device)).loss.cpu()
    block = {n: list(range(k * n_s, (k + 1) * n_s)) for k, n in enumerate(names)}
    reference = sweep_loss[-1, block["value x1"]].repeat(len(names))
    reached = steps_to_reach(sweep, reference, never=sweep_steps)
    rows = []
    for n in names:
        counts = [reached[r] for r in block[n]]
        rows.append({
            "config": n,
            "steps to SGD's final": np.mean(counts),
            "speed-up": sweep_steps / np.mean(counts) if n != "value x1" else 1.0,
            "final training loss": sweep_loss[-1, block[n]].mean().item(),
            "final held-out loss": sweep_held[-1, block[n]].mean().item(),
            "best held-out loss": sweep_held[:, block[n]].min(0).values.mean().item(),
            "peak loss / initial": (sweep_loss[1:, block[n]].max(0).values
                                    / sweep_loss[0, block[n]]).max().item(),
        })
    table = pd.DataFrame(rows).set_index("config")
    value_rows = table.loc[[f"value x{m}" for m in multipliers]]
    spiked = value_rows["peak loss / initial"] > 1
    best = value_rows["final held-out loss"].idxmin()
    for control in ("value", "routing", "readout", "all"):
        results.record(f"sweep_speedup_{control}_x10", table.loc[f"{control} x10", "speed-up"])
    results.record("sweep_max_multiplier", multipliers[-1])
    fastest = value_rows["speed-up"].idxmax()
    results.record("sweep_fastest_multiplier", int(fastest.removeprefix("value x")))
    results.record("sweep_fastest_speedup", value_rows.loc[fastest, "speed-up"])
    results.record("sweep_speedup_max_multiplier", value_rows["speed-up"].iloc[-1])
    smooth, spike = smooth_and_spike(multipliers, list(spiked))
    results.record("sweep_largest_smooth_multiplier", smooth)
    results.record("sweep_first_spike_multiplier", spike)
    results.record("sweep_peak_ratio_max_multiplier", value_rows["peak loss / initial"].iloc[-1])
    results.record("sweep_best_heldout_multiplier", int(best.removeprefix("value x")))
    results.record("sweep_best_heldout_loss", value_rows.loc[best, "final held-out loss"])
    results.record("sweep_sgd_heldout_loss", table.loc["value x1", "final held-out loss"])
    results.record("sweep_heldout_loss_max_multiplier",
                   value_rows["final held-out loss"].iloc[-1])
    results.record("sweep_training_loss_max_multiplier",
                   value_rows["final training loss"].iloc[-1])
    bayes_loss = results.record("sweep_bayes_heldout_loss",
                                bayes_reference(sweep_heldout).cross_entropy.mean())
    return Sweep(sweep, sweep_loss, sweep_held, block, sweep_x, edge, table, multipliers,
                 bayes_loss, sweep_T)


@dataclass
class LongHorizon:
    """The settling analysis on the sweep's runs at ten times the rate on every group.

    Attributes:
        frames: the attention rows' (every 8th query) and the values' distances to their final
            state per snapshot, over all the sweep's runs.
        runs: the runs of SGD and EM-like at ten times the rate, by schedule.
    """

    frames: FramePrecision
    runs: dict[str, list[int]]


def long_horizon(results: Results, sweep: Sweep) -> LongHorizon:
    """Record when the attention and the values of the ``all x10`` runs are half-way to their
    final state, in steps of the paper's rate (one step at ten times the rate stands for ten),
    and their final training and held-out losses."""
    long_runs = {"sgd": sweep.blocks["all x10"], "em": sweep.blocks["EM-like, all x10"]}
    frames = frame_precision(sweep.history.param_snapshots, sweep.history.snapshot_steps, sweep.x,
                             torch.arange(15, sweep.sequence_length - 1, 8))
    for name, runs in long_runs.items():
        att = settling_step(frames.steps, frames.attention_remaining[:, runs].cpu(), 0.5)
        val = settling_step(frames.steps, frames.value_remaining[:, runs].cpu(), 0.5)
        results.record(f"long_{name}_attention_half_step", 10 * att.double().mean())
        results.record(f"long_{name}_values_half_step", 10 * val.double().mean())
        results.record(f"long_{name}_attention_first_seeds", (att < val).sum())
        results.record(f"long_{name}_training_loss", sweep.loss[-1, runs].mean())
        results.record(f"long_{name}_heldout_loss", sweep.heldout_loss[-1, runs].mean())
    return LongHorizon(frames, long_runs)


@dataclass
class Adam:
    """Adam on every group, with and without ten times its rate on W_V.

    Attributes:
        history: the training history (runs ``0..S''-1`` plain, the next ``S''`` with W_V x10).
        loss: ``(K, 2 S'')`` training cross-entropy; ``heldout_loss``: ``(M, 2 S'')`` held out.
        runs: ``{"adam": [...], "adam_em": [...]}`` the runs of each.
        bayes_heldout_loss: the exact predictor's mean held-out cross-entropy.
    """

    history: TrainingHistory
    loss: torch.Tensor
    heldout_loss: torch.Tensor
    runs: dict[str, list[int]]
    bayes_heldout_loss: float


def adam_comparison(results: Results, settings: dict, seeds: list[int],
                    device: torch.device) -> Adam:
    """Train both with Adam on the first ``adam_seeds`` of ``seeds`` and record the speed-up of
    the value rate x10 to plain Adam's final loss, the final and the best held-out losses."""
    adam_seeds = seeds[: settings["adam_seeds"]]
    adam_T, adam_steps, adam_lr = settings["adam_T"], settings["adam_steps"], settings["adam_lr"]
    adam_data = sticky_chain_data(adam_seeds, adam_T)
    adam_heldout = sticky_chain_heldout(adam_seeds, adam_T)
    adam_index = torch.arange(len(adam_seeds)).repeat(2)
    schedules = ([scaled_schedule(scale=adam_lr / BASE_LR)] * len(adam_seeds)
                 + [scaled_schedule(value=10, scale=adam_lr / BASE_LR)] * len(adam_seeds))
    with training_run("Adam, with and without value lr x10", adam_steps):
        start = time.perf_counter()
        adam = train(init_params([adam_seeds[i] for i in adam_index.tolist()], device=device),
                     adam_data.inputs[adam_index].to(device),
                     adam_data.targets[adam_index].to(device), schedules, adam_steps,
                     optimizer="adam", snapshot_every=adam_steps // 50, record_params=True)
        results.record("adam_seconds", time.perf_counter() - start, timing=True)
    adam_loss = adam.loss.cpu()
    adam_held = evaluate_snapshots(adam.param_snapshots,
                                   adam_heldout.inputs[adam_index].to(device),
                                   adam_heldout.targets[adam_index].to(device)).loss.cpu()
    plain = list(range(len(adam_seeds)))
    split = list(range(len(adam_seeds), 2 * len(adam_seeds)))
    steps_em = np.array(steps_to_reach(adam, adam_loss[-1, plain].repeat(2),
                                       never=adam_steps))[split]
    results.record("adam_em_steps_to_adam_final", steps_em.mean())
    results.record("adam_em_speedup", adam_steps / steps_em.mean())
    for name, runs in (("adam", plain), ("adam_em", split)):
        results.record(f"{name}_final_loss", adam_loss[-1, runs].mean())
        results.record(f"{name}_heldout_loss", adam_held[-1, runs].mean())
        best_idx = adam_held[:, runs].argmin(dim=0)
        results.record(f"{name}_best_heldout_loss", adam_held[:, runs].min(dim=0).values.mean())
        results.record(f"{name}_best_heldout_step",
                       adam.snapshot_steps[best_idx].double().mean())
    bayes_loss = results.record("adam_bayes_heldout_loss",
                                bayes_reference(adam_heldout).cross_entropy.mean())
    return Adam(adam, adam_loss, adam_held, {"adam": plain, "adam_em": split}, bayes_loss)


def deep_variant(results: Results, settings: dict, chain: Chain, device: torch.device
                 ) -> pd.DataFrame:
    """The authors' deep model (AdamW, cosine decay, dropout) on the first ``deep_seeds``
    training sequences, with and without ten times the rate on every value projection; records
    the means over seeds and returns them as a table (a row per multiplier; losses and
    entropies in nats, 4 decimals), or, with no seeds, a table saying where it runs."""
    deep_seeds = chain.seeds[: settings["deep_seeds"]]
    results.record("deep_variant_seeds", len(deep_seeds))
    data, heldout = chain.data, chain.heldout
    rows = []
    for i, s in enumerate(deep_seeds):
        for multiplier in (1.0, 10.0):
            model = DeepStickyTransformer(DeepConfig(), torch.Generator().manual_seed(s))
            model = model.to(device)
            with training_run(f"deep variant, seed {s}, value lr x{multiplier:g}",
                              settings["deep_steps"]):
                run = train_deep(model, data.inputs[i : i + 1].to(device),
                                 data.targets[i : i + 1].to(device),
                                 heldout.inputs[i : i + 1].to(device),
                                 heldout.targets[i : i + 1].to(device), settings["deep_steps"],
                                 value_lr_multiplier=multiplier)
            rows.append({
                "seed": s,
                "value lr multiplier": multiplier,
                "training loss": run.final_train.loss,
                "held-out loss": run.final_heldout.loss,
                "held-out entropy": run.final_heldout.entropy,
                "held-out accuracy": run.final_heldout.accuracy,
                "held-out Bayes CE": chain.bayes_heldout.cross_entropy[i].item(),
            })
    if not rows:
        return pd.DataFrame({"status": [f"not run in the '{results.profile}' profile"],
                             "where it runs": ["the 'paper' profile, five seeds"]},
                            index=["deep variant"])
    means = pd.DataFrame(rows).groupby("value lr multiplier").mean(numeric_only=True)
    for multiplier, tag in ((1.0, "deep"), (10.0, "deep_em")):
        for column, key in (("training loss", "train_loss"), ("held-out loss", "heldout_loss"),
                            ("held-out entropy", "heldout_entropy"),
                            ("held-out accuracy", "heldout_accuracy")):
            results.record(f"{tag}_{key}", means.loc[multiplier, column])
    return means.drop(columns="seed").round(4)
