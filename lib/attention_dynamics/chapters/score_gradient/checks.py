"""Chapter 1's parts: the advantage law against autograd, one head's matrices, a descent
step on the scores and on the weights, trained sticky-chain heads, and the diagnostics' cost.

Each part function records its metrics into the chapter's
:class:`~attention_dynamics.book.results.Results` and returns what the figures and tables need.
Problems are :class:`~attention_dynamics.heads.HeadProblem` s in float64: ``B`` sequences,
``H`` heads, ``T`` positions; gradient errors are absolute (loss in nats), masses and fractions
in ``[0, 1]``, steps in score units (the largest score moves by the step).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from attention_dynamics.book.benchmarking import diagnostics_benchmark
from attention_dynamics.book.results import Results
from attention_dynamics.chapters.progress import training_run
from attention_dynamics.chapters.score_gradient.settings import (
    EXAMPLE_HEAD,
    EXAMPLE_PROBLEM,
    EXAMPLE_STEP,
    KERNEL_HEAD,
    MASS_SHIFT_STEPS,
    RESOLVABLE,
    SATURATED_SCALE,
)
from attention_dynamics.heads import HeadProblem, gradient_errors, sample_head_problem
from attention_dynamics.parameter_step import (
    better_key_mass_change,
    first_order_score_change,
    weight_step_score_change,
)
from attention_dynamics.sticky.analysis import head_problem
from attention_dynamics.sticky.model import init_params
from attention_dynamics.sticky.training import sticky_chain_data, sticky_chain_heldout, train
from attention_dynamics.tasks.sticky_chain import PAPER_SEEDS

SHAPE_NAMES = ("batch", "heads", "T", "d_x", "d_k", "d_v")
"""The sizes of a random problem, in the order :func:`random_shape` draws them."""

QUANTITIES = ("compatibility", "scores", "q", "k", "v", "w_q", "w_k", "w_v", "row_sum")
"""The closed-form gradients compared with autograd (:func:`~attention_dynamics.heads.gradient_errors`),
and the largest row sum of the score gradient last."""

CONDITIONS = (("score step", "scores"), ("weight step", "weights"),
              ("weight step, orthonormal inputs", "weights"))
"""The conditions of the weight step (part d), each with what the step moves."""


def random_shape(generator: torch.Generator, max_length: int, device=None
                 ) -> tuple[int, int, int, int, int, int]:
    """Batch and heads in ``1..4``, length in ``1..max_length``, ``d_x``, ``d_k``, ``d_v`` in
    ``1..16``, each drawn uniformly from ``generator`` (on ``device``), in that order."""

    def draw(low: int, high: int) -> int:
        return int(torch.randint(low, high + 1, (1,), generator=generator, device=device))

    return (draw(1, 4), draw(1, 4), draw(1, max_length), draw(1, 16), draw(1, 16), draw(1, 16))


@dataclass(frozen=True)
class GradientCheck:
    """The closed-form gradients against autograd on random problems.

    Attributes:
        errors: one row per problem: its sizes (:data:`SHAPE_NAMES`), ``saturated`` and
            ``causal`` (bool), and per quantity of :data:`QUANTITIES` the largest absolute
            difference from autograd (``row_sum``: the largest ``|sum_j dL/ds_ij|``).
    """

    errors: pd.DataFrame


def check_closed_form(results: Results, chosen: dict, generator: torch.Generator,
                      device=None) -> GradientCheck:
    """Compare every closed-form gradient with autograd on ``chosen["n_problems"]`` problems.

    Problem ``i`` has a shape from :func:`random_shape`, the score scale
    :data:`~.settings.SATURATED_SCALE` where ``i % 5 == 0`` (else 1) and the causal mask
    where ``i % 4 != 0`` (else full attention), all drawn from ``generator`` on ``device``.
    """
    rows = []
    for index in range(chosen["n_problems"]):
        shape = random_shape(generator, chosen["max_length"], device)
        saturated = index % 5 == 0
        problem = sample_head_problem(generator, *shape,
                                      score_scale=SATURATED_SCALE if saturated else 1.0,
                                      mask="causal" if index % 4 else None, device=device)
        rows.append(dict(zip(SHAPE_NAMES, shape, strict=True), saturated=saturated,
                         causal=bool(index % 4), **gradient_errors(problem)))
    errors = pd.DataFrame(rows)
    results.record("routing_law_max_abs_error", errors["scores"].max())
    results.record("closed_form_max_abs_error", errors[list(QUANTITIES[:-1])].to_numpy().max())
    results.record("row_sum_max_abs", errors["row_sum"].max())
    results.record("n_random_problems", len(errors))
    results.record("max_problem_length", errors["T"].max())
    return GradientCheck(errors)


@dataclass(frozen=True)
class HeadMatrices:
    """The matrices of one causal head on one sequence, ``(T, T)`` arrays, NaN where masked.

    Attributes:
        compatibility: ``B = u v^T`` (nats per unit of weight).
        advantage: ``A`` (nats per unit of weight).
        scores: ``dL/ds = alpha * A`` (nats per score unit).
    """

    compatibility: np.ndarray
    advantage: np.ndarray
    scores: np.ndarray


def head_matrices(generator: torch.Generator, device=None) -> HeadMatrices:
    """Draw one head (:data:`~.settings.EXAMPLE_HEAD`) from ``generator`` and return its
    closed-form ``B``, ``A`` and ``dL/ds``."""
    example = sample_head_problem(generator, *EXAMPLE_HEAD, device=device)
    record, _ = example.forward_backward()
    grads = example.closed_form(record)
    allowed = record.mask.cpu().numpy()

    def shown(matrix: torch.Tensor) -> np.ndarray:
        array = matrix[0, 0].cpu().numpy().copy()
        array[~allowed] = np.nan
        return array

    return HeadMatrices(shown(grads.compatibility), shown(grads.advantage), shown(grads.scores))


@dataclass(frozen=True)
class MassShift:
    """The change of the attention mass on the better keys after one exact step on the scores.

    Attributes:
        shift: ``(R,)`` measured change of ``sum_{j in N_i} alpha_ij`` per resolvable row
            (rows of every sequence and head, flattened).
        predicted: ``(R,)`` its first-order prediction.
        loss_drop: the loss before minus after (nats), ``None`` where no row is resolvable.
    """

    shift: torch.Tensor
    predicted: torch.Tensor
    loss_drop: float | None


def mass_shift(problem: HeadProblem, step: float) -> MassShift:
    """Step ``problem``'s scores to ``s - eta dL/ds`` with ``eta`` such that the largest score
    moves by ``step``, everything else fixed, and measure the mass on ``N_i = {j : A_ij < 0}``.

    Rows whose predicted change is at most :data:`~.settings.RESOLVABLE` (one key, or an
    advantage lost in float64 rounding) are left out.
    """
    record, loss = problem.forward_backward()
    grads = problem.closed_form(record)
    scores, values = record.scores.detach(), record.v.detach()
    eta = step / grads.scores.abs().max().clamp_min(1e-300)
    with torch.no_grad():
        new_scores = scores - eta * grads.scores
        new_weights = torch.softmax(new_scores, dim=-1)
        new_loss = problem.loss_from_scores(new_scores, values)
    alpha = record.weights.detach()
    better = grads.advantage < 0
    before = (alpha * better).sum(-1)
    after = (new_weights * better).sum(-1)
    # first order: d alpha = alpha (ds - <alpha, ds>) with ds = -eta alpha A
    ds = -eta * grads.scores
    predicted = (alpha * (ds - (alpha * ds).sum(-1, keepdim=True)) * better).sum(-1)
    resolvable = predicted.abs() > RESOLVABLE
    return MassShift(shift=(after - before)[resolvable], predicted=predicted[resolvable],
                     loss_drop=(loss - new_loss).item() if resolvable.any() else None)


@dataclass(frozen=True)
class ScoreStep:
    """One descent step on the scores, on random problems at each step of
    :data:`~.settings.MASS_SHIFT_STEPS`.

    Attributes:
        table: indexed by ``step``: ``rows`` (resolvable rows), ``fraction_rows_mass_up``,
            ``median_shift_over_prediction`` (measured over first-order change) and
            ``fraction_loss_down`` (of the problems).
        example: the step :data:`~.settings.EXAMPLE_STEP` on one problem of shape
            :data:`~.settings.EXAMPLE_PROBLEM`, for the figure.
    """

    table: pd.DataFrame
    example: MassShift


def score_step(results: Results, chosen: dict, seed: int, device=None) -> ScoreStep:
    """Measure :func:`mass_shift` on ``chosen["n_step_problems"]`` random problems per step.

    The same problems at every step: a generator seeded with ``seed + 1`` draws them; the
    figure's example comes from one seeded with ``seed + 2``.
    """
    rows = []
    for step in MASS_SHIFT_STEPS:
        generator = torch.Generator(device=device).manual_seed(seed + 1)
        shifts, predicted, drops = [], [], []
        for _ in range(chosen["n_step_problems"]):
            shape = random_shape(generator, chosen["max_length"], device)
            out = mass_shift(sample_head_problem(generator, *shape, device=device), step)
            shifts.append(out.shift)
            predicted.append(out.predicted)
            if out.loss_drop is not None:
                drops.append(out.loss_drop)
        shift, pred = torch.cat(shifts), torch.cat(predicted)
        rows.append(dict(step=step, rows=len(shift),
                         fraction_rows_mass_up=(shift > 0).float().mean().item(),
                         median_shift_over_prediction=(shift / pred).median().item(),
                         fraction_loss_down=float(np.mean(np.array(drops) > 0))))
    table = pd.DataFrame(rows).set_index("step")
    smallest = table.iloc[0]
    results.record("mass_shift_rows", smallest["rows"])
    results.record("mass_shift_fraction_up", smallest["fraction_rows_mass_up"])
    results.record("mass_shift_ratio_to_first_order", smallest["median_shift_over_prediction"])
    results.record("loss_decrease_fraction", smallest["fraction_loss_down"])
    results.record("mass_shift_fraction_up_large_step", table.iloc[-1]["fraction_rows_mass_up"])
    example = sample_head_problem(torch.Generator(device=device).manual_seed(seed + 2),
                                  *EXAMPLE_PROBLEM, device=device)
    return ScoreStep(table, mass_shift(example, EXAMPLE_STEP))


def orthonormal_inputs(problem: HeadProblem) -> HeadProblem:
    """The same head of one sequence, its inputs ``(T, d_x)`` replaced by orthonormal rows of
    the same span (``T <= d_x``)."""
    rows = torch.linalg.qr(problem.x[0, 0].T)[0].T
    return dataclasses.replace(problem, x=rows[None, None].contiguous())


def rows_gaining(problem: HeadProblem, step: float, on: str) -> float:
    """The fraction of the problem's resolvable rows whose mass on ``N_i`` rises after one
    exact step, ``on="scores"`` (``s - eta dL/ds``) or ``on="weights"`` (``W_Q``, ``W_K``
    stepped, the exact new scores), ``eta`` such that the largest score moves by ``step`` (to
    first order, for the weights)."""
    if on not in ("scores", "weights"):
        raise ValueError(f"on must be one of 'scores', 'weights'; got {on!r}")
    record, _ = problem.forward_backward()
    grads = problem.closed_form(record)
    if on == "scores":
        change = -grads.scores * (step / grads.scores.abs().max())
    else:
        direction = first_order_score_change(record, grads.w_q, grads.w_k, 1.0)
        eta = step / direction.abs().max()
        change = weight_step_score_change(record, grads.w_q, grads.w_k, eta)
    exact, predicted = better_key_mass_change(record.weights.detach(), grads.advantage, change)
    resolvable = predicted.abs() > RESOLVABLE
    return (exact[resolvable] > 0).double().mean().item()


@dataclass(frozen=True)
class WeightStep:
    """A step on the weights of random single heads, against a step on their scores.

    Attributes:
        fractions: one row per (step, head, condition of ``CONDITIONS``): ``fraction``,
            the share of the head's resolvable rows whose mass on ``N_i`` rises.
        smallest_step: the smallest step (score units), the one the figure shows.
    """

    fractions: pd.DataFrame
    smallest_step: float

    @property
    def at_smallest_step(self) -> pd.DataFrame:
        """The rows of :attr:`fractions` at the smallest step."""
        return self.fractions[self.fractions.step == self.smallest_step]


def weight_step(results: Results, chosen: dict, seed: int, device=None) -> WeightStep:
    """:func:`rows_gaining` on ``chosen["n_kernel_heads"]`` heads of shape
    :data:`~.settings.KERNEL_HEAD` at each step of ``chosen["kernel_steps"]``: a score step,
    a weight step, and a weight step with :func:`orthonormal_inputs`. The same heads at every
    step, drawn from a generator seeded with ``seed + 3``."""
    rows = []
    for step in chosen["kernel_steps"]:
        generator = torch.Generator(device=device).manual_seed(seed + 3)
        for index in range(chosen["n_kernel_heads"]):
            head = sample_head_problem(generator, *KERNEL_HEAD, device=device)
            problems = (head, head, orthonormal_inputs(head))
            rows += [dict(step=step, head=index, condition=condition,
                          fraction=rows_gaining(problem, step, on))
                     for (condition, on), problem in zip(CONDITIONS, problems, strict=True)]
    kernel = WeightStep(pd.DataFrame(rows), min(chosen["kernel_steps"]))
    small = kernel.at_smallest_step
    for condition, key in zip((c for c, _ in CONDITIONS), ("score", "weight", "orthonormal"),
                              strict=True):
        fractions = small[small.condition == condition].fraction
        results.record(f"kernel_fraction_up_{key}_mean", fractions.mean())
        results.record(f"kernel_fraction_up_{key}_worst", fractions.min())
        results.record(f"kernel_heads_all_rows_up_{key}", (fractions == 1).mean())
    results.record("kernel_heads", chosen["n_kernel_heads"])
    results.record("kernel_step", kernel.smallest_step)
    large = kernel.fractions[(kernel.fractions.step == max(chosen["kernel_steps"]))
                             & (kernel.fractions.condition == "weight step")]
    results.record("kernel_fraction_up_weight_mean_large_step", large.fraction.mean())
    return kernel


@dataclass(frozen=True)
class TrainedHeads:
    """The score step and the weight step on the one-head sticky-chain models, at
    initialisation and trained.

    Attributes:
        fractions: one row per (``when`` in ``init``, ``trained``; ``seed`` of
            :data:`~attention_dynamics.tasks.sticky_chain.PAPER_SEEDS`; ``condition``,
            ``score step`` or ``weight step``): ``fraction``, the share of the head's
            resolvable rows whose mass on ``N_i`` rises.
    """

    fractions: pd.DataFrame


def trained_heads(results: Results, chosen: dict) -> TrainedHeads:
    """Train one head per Paper II seed (on the CPU, float32) for ``chosen["sticky_steps"]``
    full-batch steps of the EM-like schedule on ``chosen["sticky_T"]`` symbols, and measure
    :func:`rows_gaining` at the smallest of ``chosen["kernel_steps"]`` on the first
    ``chosen["sticky_window"]`` positions of a fresh sequence of each seed's chain."""
    seeds = list(PAPER_SEEDS)
    data = sticky_chain_data(seeds, chosen["sticky_T"])
    fresh = sticky_chain_heldout(seeds, chosen["sticky_window"])
    initial = init_params(seeds)
    with training_run("sticky-chain heads, EM-like", chosen["sticky_steps"]):
        trained = train(initial, data.inputs, data.targets, "em",
                        chosen["sticky_steps"]).final_params
    step = min(chosen["kernel_steps"])
    fractions = pd.DataFrame([
        dict(when=when, seed=head_seed, condition=condition,
             fraction=rows_gaining(head_problem(params, fresh.inputs, fresh.targets, run),
                                   step, on))
        for when, params in (("init", initial), ("trained", trained))
        for run, head_seed in enumerate(seeds)
        for condition, on in CONDITIONS[:2]
    ])
    for (when, condition), values in fractions.groupby(["when", "condition"])["fraction"]:
        key = condition.split()[0]
        results.record(f"sticky_fraction_up_{key}_{when}_mean", values.mean())
        results.record(f"sticky_fraction_up_{key}_{when}_worst", values.min())
    results.record("sticky_heads", len(seeds))
    results.record_all({"steps": chosen["sticky_steps"], "sequence_length": chosen["sticky_T"],
                        "window": chosen["sticky_window"]}, prefix="sticky_")
    return TrainedHeads(fractions)


@dataclass(frozen=True)
class DiagnosticsCost:
    """The routing diagnostics timed against a plain step and per-pair autograd
    (:func:`~attention_dynamics.book.benchmarking.diagnostics_benchmark`).

    Attributes:
        timings: ``plain_step_s``, ``diagnosed_step_s``, ``per_pair_autograd_s`` (seconds),
            ``pairs`` (allowed score pairs), ``overhead_ratio`` and ``speedup_vs_per_pair``.
    """

    timings: dict[str, float]


def diagnostics_cost(results: Results, chosen: dict, seed: int, device=None) -> DiagnosticsCost:
    """Time the diagnostics at length ``chosen["timing_length"]`` (median of
    ``chosen["repeats"]``) on a problem drawn with seed ``seed + 3``; the two ratios are
    recorded as timings."""
    bench = diagnostics_benchmark(length=chosen["timing_length"], repeats=chosen["repeats"],
                                  seed=seed + 3, device=device)
    results.record("diagnostics_overhead_ratio", bench["overhead_ratio"], timing=True)
    results.record("diagnostics_speedup_vs_autograd", bench["speedup_vs_per_pair"], timing=True)
    results.record("timing_length", chosen["timing_length"])
    results.record("timing_pairs", bench["pairs"])
    return DiagnosticsCost(bench)
