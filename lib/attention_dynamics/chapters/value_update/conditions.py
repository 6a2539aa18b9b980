"""The first half of chapter 2's toy, the value-update identity, the three conditions, uniform
attention, and the feedback and curvature parts of a value step.

Each function records its metrics into the chapter's
:class:`~attention_dynamics.book.results.Results` and returns what the figures and the later
parts need. Specializations are in ``[0, 1]``, losses in nats; ``S`` snapshots, ``K`` seeds,
``C`` conditions, ``N`` queries, ``M`` values (slots), ``G`` groups (= classes).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from attention_dynamics import toy_routing as toy
from attention_dynamics.book.formatting import format_number, numbers
from attention_dynamics.book.results import Results
from attention_dynamics.chapters.progress import training_run
from attention_dynamics.chapters.value_update.settings import ETAS, LR_CHECK, SLOT_INPUT_DIM
from attention_dynamics.gradients import cross_entropy_upstream
from attention_dynamics.measures import specialization as spec
from attention_dynamics.measures.trajectories import first_step_staying, first_step_where
from attention_dynamics.toy_routing import CONDITIONS, SEQUENTIAL_CONDITIONS, AblationRun, ToyConfig

LABELS = {"coupled": "coupled", "frozen_routing": "routing frozen", "frozen_values": "values frozen"}
"""The three conditions' names in the figures."""


def record_sizes(results: Results, chosen: dict, config: ToyConfig) -> None:
    """Record the chapter's sizes (seeds, training steps, queries and values per head)."""
    results.record_all({"n_seeds": chosen["n_seeds"], "train_steps": config.steps,
                        "n_queries": config.n_groups * config.n_per_group,
                        "n_values": config.n_values})


@dataclass(frozen=True)
class IdentityCheck:
    """One SGD step on the values against the closed form of the value update.

    Attributes:
        free_error: largest ``|SGD step - (-eta alpha^T U)|`` over seeds and entries (logits),
            free values.
        projected_error: the same in the ``W_V`` form, against ``-eta Z Z^T alpha^T U``.
        filter_cosine: mean over seeds of the cosine between the ``W_V`` form's step of the
            values ``(M, G)`` and the free-value step.
    """

    free_error: float
    projected_error: float
    filter_cosine: float

    def summary(self) -> str:
        """The three numbers in words."""
        return (f"free values:  max |SGD step - (-eta alpha^T U)| = {format_number(self.free_error)}\n"
                f"W_V form:     max |SGD step - (-eta Z Z^T alpha^T U)| = "
                f"{format_number(self.projected_error)}\n"
                f"cosine between the W_V-form step of the values and the free step: "
                f"{self.filter_cosine:.3f}")


def check_value_update(results: Results, config: ToyConfig, n_seeds: int, device: torch.device,
                       generator: torch.Generator) -> IdentityCheck:
    """Step the values of ``n_seeds`` initial heads once (``torch.optim.SGD``, step size
    ``LR_CHECK``) and compare with the closed form, free values and ``W_V`` form.

    ``generator`` (on ``device``) draws the queries, the heads and the slot embeddings ``Z``
    ``(M, 2)``, in that order.
    """
    queries = toy.sample_grouped_queries(generator, n_seeds, config.n_groups, config.n_per_group,
                              config.d_x, config.separation, config.noise, device=device)
    head = toy.init_toy_routing(generator, n_seeds, config.d_x, config.d_k, config.n_values,
                      config.n_groups, device=device)
    fwd = toy.toy_forward(head, queries)
    u = cross_entropy_upstream(fwd.logits.detach(), queries.targets, head.readout)
    before = head.values.detach().clone()
    optimizer = torch.optim.SGD(head.value_parameters(), lr=LR_CHECK)
    fwd.loss.sum().backward()
    optimizer.step()
    predicted = spec.predicted_value_step(fwd.weights.detach(), u, LR_CHECK)
    free_error = (head.values.detach() - before - predicted).abs().max()

    slot_inputs = torch.randn(config.n_values, SLOT_INPUT_DIM, dtype=torch.float64,
                              generator=generator, device=device)
    projected = toy.init_toy_routing(generator, n_seeds, config.d_x, config.d_k, config.n_values,
                           config.n_groups, slot_inputs=slot_inputs, device=device)
    fwd_p = toy.toy_forward(projected, queries)
    u_p = cross_entropy_upstream(fwd_p.logits.detach(), queries.targets, projected.readout)
    v_before = projected.value_vectors().detach()
    stepped = toy.train_toy_routing(projected, queries, 1, lr_routing=0.0, lr_values=LR_CHECK)
    projected_step = stepped.value_vectors().detach() - v_before
    predicted_p = spec.predicted_value_step(fwd_p.weights.detach(), u_p, LR_CHECK,
                                            inputs=slot_inputs, w_v_shape=projected.w_v.shape)
    projected_error = (projected_step - predicted_p).abs().max()
    free_like = spec.predicted_value_step(fwd_p.weights.detach(), u_p, LR_CHECK)
    filter_cosine = torch.nn.functional.cosine_similarity(
        projected_step.flatten(1), free_like.flatten(1), dim=1).mean()
    return IdentityCheck(
        free_error=results.record("value_update_max_abs_error", free_error),
        projected_error=results.record("value_update_projected_max_abs_error", projected_error),
        filter_cosine=results.record("projected_step_cosine_to_free_step", filter_cosine))


@dataclass(frozen=True)
class Conditions:
    """The three conditions and the two sequential controls, trained from the same heads.

    Attributes:
        run: the recorded history (on the CPU), conditions in the order
            ``CONDITIONS + SEQUENTIAL_CONDITIONS``.
        proto: ``(S, K, C)`` prototype specialization.
        routing: ``(S, K, C)`` routing specialization (normalised mutual information).
        margin: ``(K,)`` the coupled run's final prototype specialization minus the better
            ablation's.
        passes: the first step from which the coupled seed mean stays above both ablations'
            final means (``steps`` if it never does).
    """

    run: AblationRun
    proto: torch.Tensor
    routing: torch.Tensor
    margin: torch.Tensor
    passes: int

    @property
    def index(self) -> dict[str, int]:
        """Each condition's index along the ``C`` axis."""
        return {name: self.run.condition(name) for name in self.run.conditions}

    @property
    def step_axis(self) -> np.ndarray:
        """``(S,)`` the step of each snapshot."""
        return self.run.steps.numpy()

    def summary(self) -> str:
        """Each condition's final specializations and loss (mean ± std over seeds)."""
        final_proto, final_routing = self.proto[-1], self.routing[-1]
        lines = []
        for name in CONDITIONS:
            c = self.index[name]
            lines.append(f"{name:15s} prototype {final_proto[:, c].mean():.3f} ± "
                         f"{final_proto[:, c].std():.3f}   routing "
                         f"{final_routing[:, c].mean():.3f} ± {final_routing[:, c].std():.3f}   "
                         f"loss {self.run.loss[-1, :, c].mean():.3f}")
        lines.append(f"coupled beats both ablations in {int((self.margin > 0).sum())} of "
                     f"{len(self.run.seeds)} seeds\ncoupled passes the ablations' final level at "
                     f"step {self.passes}")
        return "\n".join(lines)


def train_conditions(results: Results, config: ToyConfig, seeds: list[int],
                     device: torch.device) -> Conditions:
    """Train every condition of ``CONDITIONS`` and ``SEQUENTIAL_CONDITIONS`` for each
    of ``seeds`` (on ``device``; analysed on the CPU) and record the three conditions' final
    specializations, their seed spread and losses, and how far and how soon the coupled run
    leads."""
    with training_run("coupled, ablations, sequential controls", config.steps):
        run = toy.run_ablation(config, seeds, CONDITIONS + SEQUENTIAL_CONDITIONS,
                            device=device).to("cpu")
    groups, n_groups = run.queries.groups, config.n_groups
    proto = spec.prototype_specialization(run.weights, groups, n_groups,
                                          spec.value_predictions(run.values))
    routing = spec.routing_specialization(run.weights, groups, n_groups)  # (S, K, C)
    idx = {name: run.condition(name) for name in run.conditions}
    final_proto, final_routing = proto[-1], routing[-1]  # (K, C)
    for name in CONDITIONS:
        c = idx[name]
        results.record(f"specialization_{name}", final_proto[:, c].mean())
        results.record(f"specialization_{name}_std", final_proto[:, c].std())
        results.record(f"specialization_auc_{name}", proto[:, :, c].mean(dim=0).mean())
        results.record(f"routing_specialization_{name}", final_routing[:, c].mean())
        results.record(f"routing_specialization_{name}_std", final_routing[:, c].std())
        results.record(f"final_loss_{name}", run.loss[-1, :, c].mean())
    margin = toy.coupled_margin(final_proto, run.conditions)  # (K,)
    results.record("specialization_margin_min", margin.min())
    results.record("seeds_coupled_beats_both", (margin > 0).sum())
    routing_margin = final_routing[:, idx["coupled"]] - final_routing[:, idx["frozen_values"]]
    results.record("routing_margin_vs_frozen_values_mean", routing_margin.mean())
    results.record("seeds_coupled_routing_ahead", (routing_margin > 0).sum())

    # "faster": the first snapshot from which the coupled mean stays above both ablations'
    # final means (it stays above iff it ends above)
    coupled_mean = proto[:, :, idx["coupled"]].mean(dim=1)
    target = max(final_proto[:, idx[name]].mean() for name in ("frozen_routing", "frozen_values"))
    above = (coupled_mean > target).unsqueeze(1)  # (S, 1)
    passes = first_step_staying(run.steps, above, never=config.steps)[0]
    results.record("coupled_passes_ablation_finals", above[-1, 0])
    results.record("steps_coupled_passes_ablation_finals", passes)
    results.record("steps_fraction_coupled_passes_ablation_finals", passes / config.steps)
    return Conditions(run=run, proto=proto, routing=routing, margin=margin, passes=passes)


@dataclass(frozen=True)
class UniformStart:
    """The same seeds trained from uniform attention (``W_Q = 0``), with routing frozen there
    or trained against frozen values.

    Attributes:
        run: the recorded history (CPU), conditions ``("frozen_routing", "frozen_values")``.
        proto: ``(S, K, 2)`` prototype specialization of both conditions.
        routing: ``(S, K, 2)`` routing specialization of both conditions.
        smallest_change: the smallest ``|dA| / |A|`` over seeds after one value step at uniform
            attention (a fraction).
        non_curvature: largest ``|dA - curvature part|`` of that step (advantage units).
        query_spread: largest difference of ``dA`` between queries of one seed.
        drift: largest drift of the value differences with routing frozen uniform (logits).
        loss: final loss with routing frozen uniform, seed mean (nats).
        lowest: the lowest seed's final routing specialization, routing trained against
            frozen values.
    """

    run: AblationRun
    proto: torch.Tensor
    routing: torch.Tensor
    smallest_change: float
    non_curvature: float
    query_spread: float
    drift: float
    loss: float
    lowest: float

    def summary(self) -> str:
        """The numbers in words."""
        return "\n".join([
            f"one value step at uniform attention: |dA| / |A| >= {format_number(self.smallest_change)}",
            f"  dA - curvature part: {format_number(self.non_curvature, 2)}, spread over queries: "
            f"{format_number(self.query_spread, 2)}",
            f"routing frozen uniform: value differences drift by {format_number(self.drift, 2)}, final loss "
            f"{self.loss:.4f} nats",
            f"routing trained from uniform, values frozen: routing specialization "
            f"{self.routing[-1, :, self.run.condition('frozen_values')].mean():.3f} "
            f"(lowest seed {self.lowest:.3f})"])


def uniform_start(results: Results, config: ToyConfig, seeds: list[int], device: torch.device,
                  conditions: Conditions) -> UniformStart:
    """Train from ``W_Q = 0`` (keys, values and data of ``conditions``' runs) with routing
    frozen, and with values frozen; record what one value step changes there and what each
    training reaches."""
    with training_run("from uniform attention", config.steps):
        uniform = toy.run_ablation(replace(config, routing_scale=0.0), seeds,
                                   ("frozen_routing", "frozen_values"), device=device).to("cpu")
    run = conditions.run
    groups, n_groups = run.queries.groups, config.n_groups
    targets, readout = run.queries.targets, run.readout
    u_fr, u_fv = uniform.condition("frozen_routing"), uniform.condition("frozen_values")
    w0, v0 = uniform.weights[0, :, u_fr], uniform.values[0, :, u_fr]  # (K, N, M), (K, M, C)
    u0 = cross_entropy_upstream(w0 @ v0 @ readout, targets, readout)
    value_step = spec.predicted_value_step(w0, u0, config.lr_values)
    change = spec.exact_advantage_change(w0, v0, value_step, targets, readout)
    size = (change.total.norm(dim=(-2, -1))
            / spec.head_advantage(w0, v0, targets, readout).norm(dim=(-2, -1)))
    smallest_change = results.record("uniform_step_advantage_change_rel_min", size.min())
    non_curvature = results.record("uniform_step_non_curvature_max_abs",
                                   (change.total - change.curvature).abs().max())
    query_spread = results.record("uniform_step_query_spread_max_abs",
                                  (change.total - change.total[:, :1]).abs().max())

    values_u = uniform.values[:, :, u_fr]  # (S, K, M, C)
    centred = values_u - values_u.mean(dim=-2, keepdim=True)
    drift = results.record("uniform_routing_value_difference_drift",
                           (centred - centred[:1]).abs().max())
    results.record("uniform_routing_value_displacement_min",
                   (values_u[-1] - values_u[0]).norm(dim=-1).amax(dim=-1).min())
    loss = results.record("final_loss_uniform_routing", uniform.loss[-1, :, u_fr].mean())
    routing_from_uniform = spec.routing_specialization(uniform.weights[:, :, u_fv], groups,
                                                       n_groups)  # (S, K)
    results.record("routing_specialization_uniform_start_max_abs",
                   routing_from_uniform[0].abs().max())
    results.record("routing_specialization_from_uniform_frozen_values",
                   routing_from_uniform[-1].mean())
    lowest = results.record("routing_specialization_from_uniform_frozen_values_min",
                            routing_from_uniform[-1].min())
    proto = spec.prototype_specialization(uniform.weights, groups, n_groups,
                                          spec.value_predictions(uniform.values))
    return UniformStart(
        run=uniform, proto=proto, routing=spec.routing_specialization(uniform.weights, groups,
                                                                      n_groups),
        smallest_change=smallest_change, non_curvature=non_curvature, query_spread=query_spread,
        drift=drift, loss=loss, lowest=lowest)


@dataclass(frozen=True)
class FirstOrderCheck:
    """The first-order advantage change after a real value step, at several step sizes.

    Attributes:
        etas: ``(E,)`` the step sizes (``ETAS``).
        errors: by snapshot (``"start"``, ``"end"`` of the first seed's coupled run), the
            relative errors ``(E,)`` of the prediction by feedback + curvature and by feedback
            alone.
    """

    etas: np.ndarray
    errors: dict[str, tuple[np.ndarray, np.ndarray]]

    def summary(self) -> str:
        """The relative errors, step size by step size."""
        return "\n".join(f"{label} relative error, feedback + curvature: "
                         f"{numbers(total)}\n  feedback only: {numbers(feedback)}"
                         for label, (total, feedback) in self.errors.items())


def first_order_check(results: Results, conditions: Conditions) -> FirstOrderCheck:
    """Step the values of the first seed's coupled head by ``eta`` times the unit value step
    (at its first and last snapshot) and record the relative error of the predicted advantage
    change, feedback + curvature and feedback alone."""
    run, c = conditions.run, conditions.index["coupled"]
    etas = np.array(ETAS)
    targets, readout = run.queries.targets, run.readout
    errors = {}
    for label, s in {"start": 0, "end": len(run.steps) - 1}.items():
        w, v = run.weights[s, 0, c], run.values[s, 0, c]
        unit = spec.value_step_feedback(w, v, targets, readout, lr=1.0)
        errs_total, errs_feedback = [], []
        for eta in etas:
            actual = spec.head_advantage(w, v + eta * unit.step, targets, readout) - unit.advantage
            errs_total.append(((actual - eta * unit.total).norm() / actual.norm()).item())
            errs_feedback.append(((actual - eta * unit.feedback).norm() / actual.norm()).item())
        errors[label] = (np.array(errs_total), np.array(errs_feedback))
    results.record("advantage_first_order_rel_error", max(e[0][-1] for e in errors.values()))
    results.record("advantage_feedback_only_rel_error_start", errors["start"][1][-1])
    results.record("advantage_feedback_only_rel_error_end", errors["end"][1][-1])
    return FirstOrderCheck(etas=etas, errors=errors)


@dataclass(frozen=True)
class FeedbackAlignment:
    """The reinforcement index of each part of a value step along the coupled runs.

    Attributes:
        alignment: by part (``"feedback"``, ``"curvature"``, ``"total"``), ``(S, K)`` the cosine
            of ``alpha * dA`` (that part) with the routing gradient ``G``.
        first_positive: the first step at which the seed-mean feedback alignment is positive
            (``steps`` if never).
        peak_step: the step at which the seed-mean total alignment peaks.
    """

    alignment: dict[str, torch.Tensor]
    first_positive: int
    peak_step: int

    def summary(self) -> str:
        """Each part's seed-mean alignment at the start, at its maximum and at the end."""
        means = {part: series.mean(dim=1) for part, series in self.alignment.items()}
        parts = "\n".join(f"{part}: start {m[0]:.3f}, max {m.max():.3f}, end {m[-1]:.3f}"
                          for part, m in means.items())
        return (f"{parts}\nfeedback alignment first positive at step {self.first_positive}\n"
                f"net alignment peaks at step {self.peak_step}")


def feedback_alignment(results: Results, conditions: Conditions) -> FeedbackAlignment:
    """Record how the feedback, curvature and total parts of a value step align with the
    routing push along every seed's coupled run."""
    run, proto, c = conditions.run, conditions.proto, conditions.index["coupled"]
    weights = run.weights[:, :, c]
    terms = spec.value_step_feedback(weights, run.values[:, :, c], run.queries.targets,
                                     run.readout)
    alignment = {part: spec.reinforcement_index(weights, getattr(terms, part), terms.advantage)
                 for part in ("feedback", "curvature", "total")}  # each (S, K)
    mean = {part: series.mean(dim=1) for part, series in alignment.items()}
    results.record("feedback_alignment_start", mean["feedback"][0])
    results.record("feedback_alignment_max", mean["feedback"].max())
    positive = (mean["feedback"] > 0).unsqueeze(1)  # (S, 1)
    first_positive = first_step_where(run.steps, positive, never=run.config.steps)[0]
    results.record("feedback_alignment_first_positive_step", first_positive)
    results.record("curvature_alignment_max", mean["curvature"].max())
    results.record("total_alignment_start", mean["total"][0])
    results.record("total_alignment_max", mean["total"].max())
    peak = int(mean["total"].argmax())
    peak_step = int(conditions.step_axis[peak])
    results.record("total_alignment_peak_step", peak_step)
    results.record("total_alignment_end", mean["total"][-1])
    results.record("prototype_specialization_at_peak", proto[peak, :, c].mean())
    return FeedbackAlignment(alignment=alignment, first_positive=first_positive,
                             peak_step=peak_step)
