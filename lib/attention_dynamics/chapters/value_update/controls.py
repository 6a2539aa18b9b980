"""The second half of chapter 2's toy, coupling or capacity (the recombined halves, the
sequential orders, the symmetric state), the sweep over initial scales, and EM with the values
solved.

Shapes as in :mod:`~attention_dynamics.chapters.value_update.conditions`: ``S`` snapshots,
``K`` seeds, ``C`` conditions; specializations in ``[0, 1]``, losses in nats.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from attention_dynamics import toy_routing as toy
from attention_dynamics.book.formatting import format_number, numbers
from attention_dynamics.book.results import Results
from attention_dynamics.chapters.progress import training_run
from attention_dynamics.chapters.value_update.conditions import Conditions
from attention_dynamics.chapters.value_update.settings import SWEEP_SCALES, SYMMETRIC_SCALE
from attention_dynamics.measures import specialization as spec
from attention_dynamics.measures.trajectories import first_step_where
from attention_dynamics.score_mixture import m_step_objective
from attention_dynamics.toy_routing import CONDITIONS, SEQUENTIAL_CONDITIONS, AblationRun, ToyConfig


def switch_snapshot(run: AblationRun) -> int:
    """The index of the snapshot at ``steps // 2``, where the sequential controls switch."""
    return int((run.steps == run.config.steps // 2).nonzero())


@dataclass(frozen=True)
class CapacityControls:
    """The coupled run against the controls that train every parameter without the loop.

    Attributes:
        recombined: ``(S, K)`` prototype specialization of the recombined halves (the routing
            of the values-frozen run with the values of the routing-frozen run).
        recombined_loss: ``(S, K)`` their loss (nats).
        margin: ``(K,)`` coupled minus the better sequential order at the end (equal steps).
        share: the share of the coupled run's lead over the better ablation that the better
            sequential order recovers (seed means).
        means: each condition's final prototype specialization, seed mean.
        ahead: the seeds on which the coupled run beats the better sequential order, at equal
            steps (``""``) and at equal updates (``"_equal_updates"``).
    """

    recombined: torch.Tensor
    recombined_loss: torch.Tensor
    margin: torch.Tensor
    share: float
    means: dict[str, float]
    ahead: dict[str, int]

    def summary(self, conditions: Conditions) -> str:
        """The controls' final specializations and the coupled run's margins, in words."""
        at_switch = conditions.proto[switch_snapshot(conditions.run), :,
                                     conditions.index["coupled"]].mean()
        shown = ", ".join(f"{name.replace('_', ' ')} {self.means[name]:.3f}"
                          for name in ("coupled", *SEQUENTIAL_CONDITIONS))
        return (f"recombined halves: prototype {self.recombined[-1].mean():.3f}, loss "
                f"{self.recombined_loss[-1].mean():.3f}\n"
                f"final prototype: {shown}\ncoupled at the switch {at_switch:.3f}\n"
                f"coupled - better sequential order per seed:\n  "
                f"{numbers(self.margin.numpy())}\nshare of the lead "
                f"recovered by the sequential pass: {self.share:.2f}")


def capacity_controls(results: Results, conditions: Conditions) -> CapacityControls:
    """Record the recombined halves and the sequential orders of ``conditions``' runs against
    the coupled run, at equal steps (the end) and at equal updates (the coupled run at the
    switch)."""
    run, proto, idx = conditions.run, conditions.proto, conditions.index
    groups, n_groups = run.queries.groups, run.config.n_groups
    c, final_proto = idx["coupled"], proto[-1]
    at_switch = switch_snapshot(run)
    means = {name: float(final_proto[:, idx[name]].mean()) for name in run.conditions}
    recombined_w, recombined_v, recombined_loss = toy.recombine_halves(run)
    recombined = spec.prototype_specialization(recombined_w, groups, n_groups,
                                               spec.value_predictions(recombined_v))  # (S, K)
    results.record("specialization_recombined", recombined[-1].mean())
    results.record("specialization_recombined_std", recombined[-1].std())
    results.record("final_loss_recombined", recombined_loss[-1].mean())
    results.record("seeds_coupled_beats_recombined", (final_proto[:, c] > recombined[-1]).sum())
    ablations = [means[name] for name in CONDITIONS[1:]]
    for name in SEQUENTIAL_CONDITIONS:
        results.record(f"specialization_{name}", means[name])
        results.record(f"specialization_{name}_std", final_proto[:, idx[name]].std())
        results.record(f"final_loss_{name}", run.loss[-1, :, idx[name]].mean())
    results.record("specialization_coupled_at_switch", proto[at_switch, :, c].mean())

    # equal steps: coupled and sequential at the end; equal updates: coupled at the switch
    margin_equal_steps = toy.coupled_margin(final_proto, run.conditions, SEQUENTIAL_CONDITIONS)
    best_sequential = final_proto[:, c] - margin_equal_steps  # (K,), seed by seed
    margin_equal_updates = proto[at_switch, :, c] - best_sequential
    for suffix, margin in [("", margin_equal_steps), ("_equal_updates", margin_equal_updates)]:
        results.record_spread(f"coupling_margin{suffix}", margin)
    ahead = {}
    for suffix, margin in [("", margin_equal_steps), ("_equal_updates", margin_equal_updates)]:
        ahead[suffix] = int((margin > 0).sum())
        results.record(f"seeds_coupled_beats_sequential{suffix}", ahead[suffix])
    share = ((max(means[name] for name in SEQUENTIAL_CONDITIONS) - max(ablations))
             / (means["coupled"] - max(ablations)))
    results.record("sequential_share_of_coupled_lead", share)
    return CapacityControls(recombined=recombined, recombined_loss=recombined_loss,
                            margin=margin_equal_steps, share=share, means=means, ahead=ahead)


def departure_from_symmetry(run: AblationRun) -> tuple[torch.Tensor, torch.Tensor]:
    """How far each run of ``run`` is from the symmetric state (equal values, uniform
    attention), per snapshot, seed and condition.

    Returns:
        ``spread`` ``(S, K, C)``: the largest distance of a value from the values' mean
        (logits), and ``tilt`` ``(S, K, C)``: the largest departure of an attention weight from
        ``1 / M``.
    """
    centred = run.values - run.values.mean(dim=-2, keepdim=True)
    spread = centred.norm(dim=-1).amax(dim=-1)
    tilt = (run.weights - 1 / run.weights.shape[-1]).abs().amax(dim=(-2, -1))
    return spread, tilt


@dataclass(frozen=True)
class SymmetricStart:
    """Every condition and control from the symmetric state (``W_Q = 0``, values at scale
    ``SYMMETRIC_SCALE``).

    Attributes:
        run: the recorded history (CPU), conditions as in
            :class:`~attention_dynamics.chapters.value_update.conditions.Conditions`.
        proto: ``(S, K, C)`` prototype specialization.
        recombined: ``(S, K)`` prototype specialization of the recombined halves.
        spread: ``(S, K, C)`` the largest distance of a value from the values' mean (logits).
        tilt: ``(S, K, C)`` the largest departure of an attention weight from ``1 / M``.
        largest_control: the largest final ``|specialization|`` of any control.
        tilt_ratio: values frozen, seed mean of the tilt at the end over the tilt at the switch.
        efold_steps: steps per e-fold of the coupled run's seed-mean spread while it is small.
    """

    run: AblationRun
    proto: torch.Tensor
    recombined: torch.Tensor
    spread: torch.Tensor
    tilt: torch.Tensor
    largest_control: float
    tilt_ratio: float
    efold_steps: float

    def summary(self) -> str:
        """The coupled run against the controls, in words."""
        coupled = self.proto[-1, :, self.run.condition("coupled")].mean()
        return (f"symmetric state: coupled {coupled:.3f}, controls at most "
                f"{format_number(self.largest_control, 2)}\nvalues frozen: tilt(end) / tilt(switch) = "
                f"{self.tilt_ratio:.3f}\ncoupled spread e-fold every {self.efold_steps:.1f} steps")


def symmetric_start(results: Results, config: ToyConfig, seeds: list[int], device: torch.device,
                    conditions: Conditions) -> SymmetricStart:
    """Train every condition from the symmetric state and record how each departs from it:
    the coupled run's specialization, the controls', the values' spread and the attention's
    tilt, and the coupled run's geometric growth rate."""
    with training_run("from the symmetric state", config.steps):
        symmetric = toy.run_ablation(
            replace(config, routing_scale=0.0, value_scale=SYMMETRIC_SCALE), seeds,
            CONDITIONS + SEQUENTIAL_CONDITIONS, device=device).to("cpu")
    idx, c = conditions.index, conditions.index["coupled"]
    groups, n_groups = conditions.run.queries.groups, config.n_groups
    proto = spec.prototype_specialization(symmetric.weights, groups, n_groups,
                                          spec.value_predictions(symmetric.values))  # (S, K, C)
    symmetric_w, symmetric_v, _ = toy.recombine_halves(symmetric)
    recombined = spec.prototype_specialization(symmetric_w, groups, n_groups,
                                               spec.value_predictions(symmetric_v))  # (S, K)
    controls = torch.cat([proto[-1, :, [idx[name] for name in symmetric.conditions[1:]]],
                          recombined[-1, :, None]], dim=1)
    # (K, 5): the ablations, the sequential orders, the recombined halves
    spread, tilt = departure_from_symmetry(symmetric)  # each (S, K, C)
    order_one = (spread[:, :, c].mean(dim=1) >= 1).unsqueeze(1)  # (S, 1)
    fr, fv = idx["frozen_routing"], idx["frozen_values"]
    at_switch = switch_snapshot(conditions.run)
    results.record("symmetric_value_scale", SYMMETRIC_SCALE)
    results.record("specialization_symmetric_coupled", proto[-1, :, c].mean())
    results.record("specialization_symmetric_coupled_min", proto[-1, :, c].min())
    largest_control = results.record("symmetric_controls_max_abs", controls.abs().max())
    results.record("steps_symmetric_spread_order_one",
                   first_step_where(symmetric.steps, order_one, never=config.steps)[0])
    results.record("symmetric_frozen_routing_spread_drift_rel",
                   (spread[:, :, fr] / spread[:1, :, fr] - 1).abs().max())
    tilt_ratio = results.record("symmetric_frozen_values_tilt_ratio",
                                (tilt[-1, :, fv] / tilt[at_switch, :, fv]).mean())
    # coupled: the geometric growth rate, fitted while the seed-mean spread is small
    mean_spread = spread[:, :, c].mean(dim=1).numpy()
    growing = (mean_spread > 100 * SYMMETRIC_SCALE) & (mean_spread < 0.1)
    if growing.sum() < 2:
        raise ValueError(f"the coupled spread passes between {100 * SYMMETRIC_SCALE:g} and 0.1 "
                         f"at {int(growing.sum())} snapshots, too few to fit its growth rate: "
                         f"train longer (steps={config.steps}) or record more often "
                         f"(record_every={config.record_every})")
    rate = np.polyfit(conditions.step_axis[growing], np.log(mean_spread[growing]), 1)[0]
    efold_steps = results.record("symmetric_coupled_efold_steps", 1 / rate)
    return SymmetricStart(run=symmetric, proto=proto, recombined=recombined, spread=spread,
                          tilt=tilt, largest_control=largest_control, tilt_ratio=tilt_ratio,
                          efold_steps=efold_steps)


@dataclass(frozen=True)
class InitSweep:
    """The coupled run's margins over a grid of initial scales (rows: routing scale, columns:
    value scale, both ``SWEEP_SCALES``), each a mean over the sweep's seeds.

    Attributes:
        scales: the initial scales.
        proto: ``(A, A)`` final prototype specialization, coupled minus the better ablation.
        routing: ``(A, A)`` the same for routing specialization.
        coupling: ``(A, A)`` prototype specialization, coupled minus the better sequential order.
    """

    scales: tuple[float, ...]
    proto: np.ndarray
    routing: np.ndarray
    coupling: np.ndarray


def initialisation_sweep(results: Results, config: ToyConfig, seeds: list[int],
                         device: torch.device) -> InitSweep:
    """Train every condition at each pair of initial routing and value scales for ``seeds``
    (recording only the end) and record the coupled run's margins: their extremes and the
    number of scale pairs at which it leads on every seed."""
    scales = list(SWEEP_SCALES)
    sweep_proto = np.zeros((len(scales), len(scales)))
    sweep_routing = np.zeros_like(sweep_proto)
    sweep_coupling = np.zeros_like(sweep_proto)
    all_seeds_proto = all_seeds_routing = all_seeds_coupling = 0
    with training_run("sweep over initial scales", len(scales) ** 2 * config.steps) as advance:
        for a, routing_scale in enumerate(scales):
            for b, value_scale in enumerate(scales):
                cfg = replace(config, record_every=config.steps, routing_scale=routing_scale,
                              value_scale=value_scale)
                sweep = toy.run_ablation(cfg, seeds, CONDITIONS + SEQUENTIAL_CONDITIONS,
                                         device=device).to("cpu")
                groups = sweep.queries.groups
                p = spec.prototype_specialization(sweep.weights[-1], groups, config.n_groups,
                                                  spec.value_predictions(sweep.values[-1]))
                r = spec.routing_specialization(sweep.weights[-1], groups, config.n_groups)
                m_p = toy.coupled_margin(p, sweep.conditions)  # (K,)
                m_r = toy.coupled_margin(r, sweep.conditions)
                m_c = toy.coupled_margin(p, sweep.conditions, SEQUENTIAL_CONDITIONS)
                sweep_proto[a, b], sweep_routing[a, b] = float(m_p.mean()), float(m_r.mean())
                sweep_coupling[a, b] = float(m_c.mean())
                all_seeds_proto += int((m_p > 0).all())
                all_seeds_routing += int((m_r > 0).all())
                all_seeds_coupling += int((m_c > 0).all())
                advance((a * len(scales) + b + 1) * config.steps)
    results.record("sweep_configs", len(scales) ** 2)
    results.record("sweep_seeds", len(seeds))
    results.record("sweep_prototype_margin_min", sweep_proto.min())
    results.record("sweep_configs_prototype_all_seeds", all_seeds_proto)
    results.record("sweep_routing_margin_min", sweep_routing.min())
    results.record("sweep_routing_margin_max", sweep_routing.max())
    results.record("sweep_configs_routing_all_seeds", all_seeds_routing)
    results.record("sweep_coupling_margin_min", sweep_coupling.min())
    results.record("sweep_coupling_margin_max", sweep_coupling.max())
    results.record("sweep_configs_coupling_all_seeds", all_seeds_coupling)
    return InitSweep(scales=tuple(scales), proto=sweep_proto, routing=sweep_routing,
                     coupling=sweep_coupling)


EM_MEASURES = {"loss_early": "loss early (nats)", "specialization_early": "specialization early",
               "final_loss": "final loss (nats)", "final_specialization": "final specialization",
               "steps_to_half_loss": "steps to half the loss", "final_bound": "final bound Q / N"}
"""The measures of EM against the coupled run (metrics ``toy_<run>_<measure>``), by column
title."""


@dataclass(frozen=True)
class EmComparison:
    """EM (a routing step, then the values solved) against the coupled run, same heads and data.

    Attributes:
        loss: ``(S, K)`` EM's loss (nats).
        proto: ``(S, K)`` EM's prototype specialization.
        early: the index of the snapshot at 1/16 of training.
        measures: by run (``"em"``, ``"coupled"``), the :data:`EM_MEASURES` (seed means).
    """

    loss: torch.Tensor
    proto: torch.Tensor
    early: int
    measures: dict[str, dict[str, float]]


def _bound_per_query(weights: torch.Tensor, values: torch.Tensor,
                     targets: torch.Tensor) -> torch.Tensor:
    """The mixture's bound Q / N (nats) per seed, ``(K,)``, at one snapshot of ``weights``
    ``(K, N, M)`` and ``values`` ``(K, M, C)``, with ``targets`` ``(N,)``."""
    return torch.stack([m_step_objective(w, v, targets) / len(targets)
                        for w, v in zip(weights, values, strict=True)])


def em_comparison(results: Results, config: ToyConfig, seeds: list[int], device: torch.device,
                  conditions: Conditions) -> EmComparison:
    """Train the coupled condition with the values solved in closed form after each routing
    step (EM on the score mixture) and record it beside the gradient-trained coupled run:
    early and final loss and specialization, steps to half the loss, the mixture's bound."""
    with training_run("EM, values solved", config.steps):
        em_run = toy.run_ablation(config, seeds, ("coupled",), device=device,
                                  value_update="closed-form").to("cpu")
    run, proto, c = conditions.run, conditions.proto, conditions.index["coupled"]
    groups, n_groups, targets = run.queries.groups, config.n_groups, run.queries.targets
    em_loss = em_run.loss[:, :, 0]  # (S, K)
    em_proto = spec.prototype_specialization(em_run.weights[:, :, 0], groups, n_groups,
                                             spec.value_predictions(em_run.values[:, :, 0]))
    coupled_loss = run.loss[:, :, c]
    early = int((run.steps <= config.steps // 16).nonzero().max())  # the record at 1/16
    half_loss = (coupled_loss[0] + coupled_loss[-1]) / 2  # per seed: half-way to coupled's end
    results.record("toy_early_step", run.steps[early])
    measures = {}
    for name, loss, series, weights, values in [
            ("em", em_loss, em_proto, em_run.weights[-1, :, 0], em_run.values[-1, :, 0]),
            ("coupled", coupled_loss, proto[:, :, c], run.weights[-1, :, c],
             run.values[-1, :, c])]:
        steps_to_half = np.mean(first_step_where(run.steps, loss <= half_loss,
                                                 never=config.steps))
        values_of = {"loss_early": loss[early].mean(),
                     "specialization_early": series[early].mean(),
                     "final_loss": loss[-1].mean(), "final_specialization": series[-1].mean(),
                     "steps_to_half_loss": steps_to_half,
                     "final_bound": _bound_per_query(weights, values, targets).mean()}
        measures[name] = {measure: results.record(f"toy_{name}_{measure}", value)
                          for measure, value in values_of.items()}
    results.record("toy_em_seeds_ahead_early", (em_loss[early] < coupled_loss[early]).sum())
    results.record("toy_em_seeds_final_loss_above", (em_loss[-1] > coupled_loss[-1]).sum())
    results.record("toy_em_seeds_final_specialization_below",
                   (em_proto[-1] < proto[-1, :, c]).sum())
    return EmComparison(loss=em_loss, proto=em_proto, early=early, measures=measures)
