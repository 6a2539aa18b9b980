"""Full-batch training of the batched one-head model, with per-run, per-group learning rates.

A learning-rate *schedule* gives one learning rate per parameter group
(:data:`~attention_dynamics.sticky.model.PARAM_NAMES`). Paper II compares two, applied to the
same gradient with plain gradient descent:

- ``"sgd"``: 0.01 on every weight;
- ``"em"`` (the "EM-like" schedule): 0.1 on ``W_V`` (the value "M-step") and 0.01 on ``W_Q``,
  ``W_K`` and ``W_O``.

Any other schedule can be given as a mapping, or built from the base rate with a multiplier
per group (:func:`scaled_schedule`).

Each of the ``R`` runs of a batch has its own schedule, so SGD and EM-like runs of several
seeds train together in one tensor program (:func:`train`); :func:`sticky_chain_experiment`
sets up the paper's grid of seeds x schedules on the sticky chain, and
:func:`sticky_chain_heldout` draws a fresh sequence per seed to score it on. Adam (PyTorch's update
rule, per run) is available as ``optimizer="adam"``; its schedules are learning rates too. A
block-coordinate baseline, ``optimizer="exact-values"``, takes the schedule's gradient step on
``W_Q``, ``W_K`` and ``W_O`` and then solves for ``W_V`` exactly
(:mod:`~attention_dynamics.sticky.exact_values`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch

from attention_dynamics.measures.trajectories import first_step_below
from attention_dynamics.sticky.exact_values import solve_values
from attention_dynamics.sticky.model import (
    PARAM_NAMES,
    HeadParams,
    check_batch,
    forward_record,
    init_params,
    loss_and_grads,
)
from attention_dynamics.tasks.sticky_chain import (
    PAPER_SEEDS,
    SEQUENCE_LENGTH,
    BayesReference,
    StickyChainData,
    bayes_reference,
    sample_sticky_chain,
)
from attention_dynamics.validation import check_choice

SCHEDULES: dict[str, dict[str, float]] = {
    "sgd": {"w_q": 0.01, "w_k": 0.01, "w_v": 0.01, "w_o": 0.01},
    "em": {"w_q": 0.01, "w_k": 0.01, "w_v": 0.1, "w_o": 0.01},
}
"""Paper II's two learning-rate schedules, by name."""
OPTIMIZERS = ("sgd", "adam", "exact-values")
"""The update rules :func:`train` accepts, which are plain gradient descent per group, Adam, and the
block-coordinate baseline that solves for ``W_V`` after each step."""
BASE_LR = SCHEDULES["sgd"]["w_q"]
"""Paper II's base learning rate (0.01), the rate of every group but ``W_V`` in both schedules."""
HELDOUT_SEED_OFFSET = 10_000
"""The held-out sequence of seed ``s`` is drawn with seed ``s + 10000``, as the authors' script
draws the test sequence of its deep variant."""

Schedule = str | Mapping[str, float]


def scaled_schedule(routing: float = 1.0, value: float = 1.0, readout: float = 1.0,
                    scale: float = 1.0) -> dict[str, float]:
    """A schedule: :data:`BASE_LR` times ``scale``, times a multiplier per parameter group.

    ``routing`` multiplies the rate of ``W_Q`` and ``W_K``, ``value`` that of ``W_V`` and
    ``readout`` that of ``W_O``: ``scaled_schedule(value=10)`` is Paper II's EM-like schedule,
    ``scaled_schedule()`` its SGD. Returns a mapping group -> learning rate.
    """
    lr = BASE_LR * scale
    return {"w_q": lr * routing, "w_k": lr * routing, "w_v": lr * value, "w_o": lr * readout}


def learning_rates(schedule: Schedule) -> dict[str, float]:
    """The learning rate of each parameter group for a schedule name or mapping.

    A mapping must give a non-negative rate for every name in ``PARAM_NAMES`` and nothing else.
    """
    if isinstance(schedule, str):
        return dict(SCHEDULES[check_choice("schedule", schedule, tuple(SCHEDULES))])
    if not isinstance(schedule, Mapping) or set(schedule) != set(PARAM_NAMES):
        raise ValueError(f"schedule must be one of {', '.join(map(repr, SCHEDULES))} or a "
                         f"mapping with exactly the keys {PARAM_NAMES}; got {schedule!r}")
    rates = {name: float(schedule[name]) for name in PARAM_NAMES}
    if any(not rate >= 0 for rate in rates.values()):
        raise ValueError(f"learning rates must be non-negative; got {rates}")
    return rates


def rate_tensors(schedules: Schedule | Sequence[Schedule], params: HeadParams
                 ) -> dict[str, torch.Tensor]:
    """Per-group ``(R, 1, 1)`` learning rates, from one schedule or one per run."""
    n_runs = params.n_runs
    if isinstance(schedules, str | Mapping):
        schedules = [schedules] * n_runs
    if len(schedules) != n_runs:
        raise ValueError(f"schedules must be one schedule or one per run ({n_runs}); got "
                         f"{len(schedules)}")
    rates = [learning_rates(s) for s in schedules]
    like = params.w_q
    return {name: torch.tensor([r[name] for r in rates], dtype=like.dtype,
                               device=like.device).view(-1, 1, 1) for name in PARAM_NAMES}


def sgd_update(params: HeadParams, grads: HeadParams, rates: dict[str, torch.Tensor]) -> None:
    """Plain gradient descent, in place: ``W -= lr * dL/dW`` with each run's rate."""
    for name, grad in grads.tensors().items():
        getattr(params, name).sub_(rates[name] * grad)


class _ExactValues:
    """Block coordinate descent: the schedule's gradient step on every group but ``W_V``, then
    ``W_V`` set to the minimiser of each run's loss given the others (:func:`solve_values`)."""

    def __init__(self, x: torch.Tensor, targets: torch.Tensor, iterations: int):
        self.x, self.targets, self.iterations = x, targets, iterations

    def update(self, params: HeadParams, grads: HeadParams,
               rates: dict[str, torch.Tensor]) -> None:
        """One routing-and-readout step and one exact value solve, in place."""
        for name, grad in grads.tensors().items():
            if name != "w_v":
                getattr(params, name).sub_(rates[name] * grad)
        params.w_v.copy_(solve_values(params, self.x, self.targets, self.iterations))


class AdamUpdate:
    """Adam with PyTorch's update rule (no weight decay, no amsgrad), each run its own rates;
    its state (the moment estimates) lives between calls of ``update``."""

    def __init__(self, params: HeadParams, betas: tuple[float, float], eps: float):
        self.betas, self.eps, self.step_count = betas, eps, 0
        self.first = params.map(torch.zeros_like)
        self.second = params.map(torch.zeros_like)

    def update(self, params: HeadParams, grads: HeadParams,
               rates: dict[str, torch.Tensor]) -> None:
        """One Adam step on every weight, in place."""
        (beta1, beta2), self.step_count = self.betas, self.step_count + 1
        t = self.step_count
        for name, grad in grads.tensors().items():
            first, second = getattr(self.first, name), getattr(self.second, name)
            first.lerp_(grad, 1 - beta1)
            second.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            denom = (second.sqrt() / (1 - beta2**t) ** 0.5).add_(self.eps)
            getattr(params, name).sub_(rates[name] / (1 - beta1**t) * first / denom)


@dataclass
class TrainingHistory:
    """What :func:`train` recorded (``K`` metric records, ``M`` snapshots, ``R`` runs).

    A record at step ``s`` describes the weights after ``s`` updates (step 0 is the
    initialisation); the last record is always the final weights.

    Attributes:
        steps: ``(K,)`` int64 step numbers of the metric records.
        loss: ``(K, R)`` mean cross-entropy (nats).
        entropy: ``(K, R)`` mean predictive entropy (nats).
        accuracy: ``(K, R)`` fraction of positions predicted right (argmax).
        snapshot_steps: ``(M,)`` int64 step numbers of the snapshots (empty if none).
        values: ``(M, R, N, d_v)`` value vectors ``x W_V``, or ``None``.
        weights: ``(M, R, N, N)`` attention weights, or ``None``.
        final_params: the weights after the last update.
        param_snapshots: the ``M`` snapshots of all the weights (one
            :class:`~attention_dynamics.sticky.model.HeadParams` of ``R`` runs each), or ``None``.
    """

    steps: torch.Tensor
    loss: torch.Tensor
    entropy: torch.Tensor
    accuracy: torch.Tensor
    snapshot_steps: torch.Tensor
    values: torch.Tensor | None
    weights: torch.Tensor | None
    final_params: HeadParams
    param_snapshots: list[HeadParams] | None = None


def check_every(name: str, value: int | None, allow_none: bool) -> None:
    """Require a recording interval ``value`` (argument ``name``) to be a positive int, or
    ``None`` where ``allow_none``; raise a ``ValueError`` naming it otherwise."""
    if value is None and allow_none:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive int{' or None' if allow_none else ''}; "
                         f"got {value!r}")


def is_due(step: int, every: int | None, steps: int) -> bool:
    """Whether a run of ``steps`` steps records at ``step``: every ``every`` steps and at the
    end (never when ``every`` is ``None``)."""
    return every is not None and (step % every == 0 or step == steps)


def _snapshot(params: HeadParams, x: torch.Tensor, record_values: bool, record_weights: bool,
              record_params: bool
              ) -> tuple[torch.Tensor | None, torch.Tensor | None, HeadParams | None]:
    """The value vectors ``(R, N, d_v)``, attention weights ``(R, N, N)`` and weights asked for."""
    values = (x @ params.w_v) if record_values else None
    weights = forward_record(params, x)[0].weights if record_weights else None
    return values, weights, params.map(torch.clone) if record_params else None


def train(params: HeadParams, x: torch.Tensor, targets: torch.Tensor,
          schedules: Schedule | Sequence[Schedule], steps: int, optimizer: str = "sgd",
          record_every: int = 1, snapshot_every: int | None = None, record_values: bool = False,
          record_weights: bool = False, record_params: bool = False,
          adam_betas: tuple[float, float] = (0.9, 0.999), adam_eps: float = 1e-8,
          value_iterations: int = 20, block_size: int = 64, progress: bool = False
          ) -> TrainingHistory:
    """Train ``R`` runs full-batch for ``steps`` updates; ``params`` is left unchanged.

    Every step computes each run's loss on all its ``N`` positions and the exact gradient
    (:func:`~attention_dynamics.sticky.model.loss_and_grads`), then updates each weight with
    its run's learning rate for that group: ``W -= lr * dL/dW`` (``"sgd"``, plain gradient
    descent, as the paper's SGD and EM-like runs) or Adam's step; or, with
    ``"exact-values"``, that step on every group but ``W_V``, which is then solved for.

    Args:
        params: initial weights of ``R`` runs (:func:`~attention_dynamics.sticky.model.init_params`).
        x: ``(R, N, d_x)`` inputs; ``targets``: ``(R, N)`` int64.
        schedules: one schedule (name in :data:`SCHEDULES` or a mapping group -> rate) for all
            runs, or a sequence of one per run.
        steps: number of updates.
        optimizer: one of :data:`OPTIMIZERS`.
        record_every: record loss, entropy and accuracy every so many steps (and at the end).
        snapshot_every: take snapshots every so many steps (and at the end), or ``None``.
        record_values: snapshots include the value vectors (``R N d_v`` numbers each).
        record_weights: snapshots include the attention weights (``R N^2`` numbers each:
            160 MB in float32 at the paper's size, so take few).
        record_params: snapshots include a copy of all the weights (a few thousand numbers
            per run), from which any of the above can be recomputed later.
        adam_betas, adam_eps: Adam's constants.
        value_iterations: L-BFGS iterations of each value solve (``"exact-values"``).
        block_size: queries per block in the fused forward/backward pass.
        progress: show a tqdm progress bar.

    Returns:
        A :class:`TrainingHistory`.
    """
    check_choice("optimizer", optimizer, OPTIMIZERS)
    check_batch(params, x, targets)
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
        raise ValueError(f"steps must be a non-negative int; got {steps!r}")
    check_every("record_every", record_every, allow_none=False)
    check_every("snapshot_every", snapshot_every, allow_none=True)
    if (record_values or record_weights or record_params) and snapshot_every is None:
        raise ValueError("record_values / record_weights / record_params need snapshot_every "
                         "to be set")
    rates = rate_tensors(schedules, params)
    params = params.map(torch.clone)
    update = (AdamUpdate(params, adam_betas, adam_eps).update if optimizer == "adam"
              else _ExactValues(x, targets, value_iterations).update
              if optimizer == "exact-values" else sgd_update)
    records, snapshots = [], []
    iterator = range(steps + 1)
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, desc="training", unit="step")
    for step in iterator:
        result = loss_and_grads(params, x, targets, with_grads=step < steps,
                                block_size=block_size)
        if is_due(step, record_every, steps):
            records.append((step, result.loss, result.entropy, result.accuracy))
        if is_due(step, snapshot_every, steps):
            snapshots.append((step, *_snapshot(params, x, record_values, record_weights,
                                               record_params)))
        if step < steps:
            update(params, result.grads, rates)
    return _history(records, snapshots, params)


def _stack_or_none(tensors: list[torch.Tensor | None]) -> torch.Tensor | None:
    return torch.stack(tensors) if tensors and tensors[0] is not None else None


def _history(records: list, snapshots: list, params: HeadParams) -> TrainingHistory:
    """Stack the per-step records and snapshots into a :class:`TrainingHistory`."""
    record_steps, losses, entropies, accuracies = zip(*records, strict=True)
    snapshot_steps, values, weights, weight_copies = (zip(*snapshots, strict=True) if snapshots
                                                      else ((), [], [], []))
    return TrainingHistory(steps=torch.tensor(record_steps, dtype=torch.int64),
                           loss=torch.stack(losses), entropy=torch.stack(entropies),
                           accuracy=torch.stack(accuracies),
                           snapshot_steps=torch.tensor(snapshot_steps, dtype=torch.int64),
                           values=_stack_or_none(list(values)),
                           weights=_stack_or_none(list(weights)), final_params=params,
                           param_snapshots=(list(weight_copies) if weight_copies
                                            and weight_copies[0] is not None else None))


def steps_to_reach(history: TrainingHistory, threshold: float | torch.Tensor,
                   never: int | None = None) -> list[int | None]:
    """Per run, the first recorded step whose loss is below ``threshold``.

    ``threshold`` is a number or an ``(R,)`` tensor (one per run). A run that never gets below
    it gets ``never``: ``None`` by default, or e.g. the number of steps trained, which counts it
    as reaching the threshold only at the end (as an average of step counts needs). With
    ``record_every=1`` this is the authors' "steps to reach SGD's final loss" count (their
    script takes the threshold to be the mean of the SGD runs' final losses over seeds).
    """
    return first_step_below(history.steps, history.loss, threshold, never)


@dataclass
class StickyExperiment:
    """A grid of runs on the sticky chain: every seed with every schedule.

    Attributes:
        seeds, schedules: per run (``R`` of each), run ``r`` = seed ``r // n_schedules``'s data.
        data: the sequences, one per distinct seed (batch dim = seed).
        bayes: the Bayes-optimal reference of each seed's sequence.
        history: the training history of all ``R`` runs.
    """

    seeds: list[int]
    schedules: list[Schedule]
    data: StickyChainData
    bayes: BayesReference
    history: TrainingHistory


def sticky_chain_data(seeds: Sequence[int], T: int = SEQUENCE_LENGTH,
                      dtype: torch.dtype = torch.float32) -> StickyChainData:
    """One sequence per seed, each from its own generator seeded with that seed (the authors'
    draws), stacked along a leading seed dimension."""
    per_seed = [sample_sticky_chain(T, torch.Generator().manual_seed(seed), dtype=dtype)
                for seed in seeds]
    first = per_seed[0]
    return StickyChainData(symbols=torch.stack([d.symbols for d in per_seed]),
                           inputs=torch.stack([d.inputs for d in per_seed]),
                           transition=first.transition, means=first.means,
                           noise_std=first.noise_std)


def sticky_chain_heldout(seeds: Sequence[int], T: int = SEQUENCE_LENGTH,
                         dtype: torch.dtype = torch.float32) -> StickyChainData:
    """A fresh sequence of the same chain per seed, never trained on: that of seed
    ``s + HELDOUT_SEED_OFFSET`` (:func:`sticky_chain_data`), for each ``s`` of ``seeds``."""
    return sticky_chain_data([seed + HELDOUT_SEED_OFFSET for seed in seeds], T, dtype)


def sticky_chain_experiment(seeds: Sequence[int] = PAPER_SEEDS,
                            schedules: Sequence[Schedule] = ("sgd", "em"),
                            T: int = SEQUENCE_LENGTH, steps: int = 1000,
                            dtype: torch.dtype = torch.float32,
                            device: torch.device | str = "cpu", **train_kwargs
                            ) -> StickyExperiment:
    """Paper II's comparison: train every (seed, schedule) pair together, as the authors set it.

    Seed ``s`` fixes both its sequence (:func:`sticky_chain_data`) and its initial weights
    (:func:`~attention_dynamics.sticky.model.init_params`), so the runs of one seed differ only
    in their schedule. Sampling and the Bayes reference run on the CPU; training runs on
    ``device``. ``train_kwargs`` go to :func:`train` (``record_every``, ``optimizer``...).
    """
    seeds, schedules = list(seeds), list(schedules)
    data = sticky_chain_data(seeds, T, dtype)
    run_seeds = [seed for seed in seeds for _ in schedules]
    run_schedules = [schedule for _ in seeds for schedule in schedules]
    index = torch.arange(len(seeds)).repeat_interleave(len(schedules))
    history = train(init_params(run_seeds, dtype=dtype, device=device),
                    data.inputs[index].to(device), data.targets[index].to(device), run_schedules,
                    steps, **train_kwargs)
    return StickyExperiment(seeds=run_seeds, schedules=run_schedules, data=data,
                            bayes=bayes_reference(data), history=history)
