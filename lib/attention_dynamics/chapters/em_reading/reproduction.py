"""The faithful reproduction of Paper II's sticky-chain experiment and its analyses.

Each part records its metrics into a :class:`~attention_dynamics.book.results.Results` and
returns what the later parts, figures and tables need. The runs of the reproduction are
``R = 2 S`` (``S`` seeds, SGD and EM-like side by side: run ``2 i`` is seed ``i`` under SGD, run
``2 i + 1`` under EM-like); losses and entropies are in nats.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from attention_dynamics.attention import causal_mask
from attention_dynamics.book.results import Results
from attention_dynamics.book.statistics import bootstrap_interval, sign_test_p
from attention_dynamics.chapters.progress import training_run
from attention_dynamics.measures.geometry import class_means, pca
from attention_dynamics.measures.trajectories import (
    PathSummary,
    first_step_below,
    path_summary,
    relative_fall,
    settling_step,
)
from attention_dynamics.score_mixture import (
    descend_values,
    head_loss,
    log_evidence,
    m_step_floor,
    m_step_objective,
)
from attention_dynamics.sticky.analysis import (
    FramePrecision,
    attention_rows,
    attention_uniformity,
    evaluate_snapshots,
    frame_precision,
    linear_response_error,
    symbol_routing,
)
from attention_dynamics.sticky.model import HeadParams, init_params
from attention_dynamics.sticky.training import (
    SCHEDULES,
    TrainingHistory,
    steps_to_reach,
    sticky_chain_data,
    sticky_chain_experiment,
    sticky_chain_heldout,
    train,
)
from attention_dynamics.tasks.sticky_chain import (
    N_SYMBOLS,
    BayesReference,
    StickyChainData,
    bayes_reference,
    conditional_entropy,
    memoryless_log_predictive,
    transition_matrix,
)

EM_CHECKS = ("rows whose evidence falls", "value step raises Q", "L below min Q")
"""The columns of :func:`em_checks`."""


def record_settings(results: Results, settings: dict) -> None:
    """Record the sizes the page quotes (the reproduction's, the sweep's and Adam's)."""
    results.record_all({"sequence_length": settings["sequence_length"],
                        "train_steps": settings["steps"], "n_seeds": len(settings["seeds"])})
    results.record_all({"sequence_length": settings["sweep_T"],
                        "n_seeds": settings["sweep_seeds"], "steps": settings["sweep_steps"]},
                       prefix="sweep_")
    results.record_all({"sequence_length": settings["adam_T"], "n_seeds": settings["adam_seeds"],
                        "lr": settings["adam_lr"]}, prefix="adam_")


@dataclass
class Chain:
    """The chain, its training and held-out sequences and their exact predictors.

    Attributes:
        seeds: the ``S`` seeds; seed ``s`` draws its training sequence, its held-out one is
            drawn with seed ``s + 10000``.
        transition_script, transition_text: ``(8, 8)`` transition matrices, by the authors'
            script and by the paper's text.
        data, heldout: ``S`` sequences of ``T`` symbols each.
        bayes, bayes_heldout: the exact Bayes predictor (forward filter) on each.
        memoryless: ``(S,)`` mean cross-entropy (nats) of the best predictor from the current
            input alone, on the training sequences.
    """

    seeds: list[int]
    transition_script: torch.Tensor
    transition_text: torch.Tensor
    data: StickyChainData
    heldout: StickyChainData
    bayes: BayesReference
    bayes_heldout: BayesReference
    memoryless: torch.Tensor


def chain_references(results: Results, settings: dict) -> Chain:
    """Both transition matrices, their bound ``H(Y_t | Y_{t-1})`` and the exact predictors on
    the training and held-out sequences; records them."""
    seeds, T = list(settings["seeds"]), settings["sequence_length"]
    P_script = transition_matrix(construction="script")
    P_text = transition_matrix(construction="text")
    results.record("self_transition_script", P_script[0, 0])
    results.record("self_transition_text", P_text[0, 0])
    results.record("markov_lower_bound", conditional_entropy(P_script))
    results.record("markov_lower_bound_text", conditional_entropy(P_text))
    results.record("uniform_loss", math.log(N_SYMBOLS))

    data = sticky_chain_data(seeds, T)
    heldout = sticky_chain_heldout(seeds, T)  # seed s + 10000, as the authors' deep run
    bayes, bayes_heldout = bayes_reference(data), bayes_reference(heldout)
    memoryless_log_pred = memoryless_log_predictive(data.inputs, data.transition, data.means)
    memoryless = -memoryless_log_pred.gather(-1, data.targets.unsqueeze(-1)).squeeze(-1).mean(dim=-1)
    results.record("bayes_optimal_loss", bayes.cross_entropy.mean())
    results.record("bayes_optimal_entropy", bayes.predictive_entropy.mean())
    results.record("bayes_optimal_accuracy", bayes.accuracy.mean())
    results.record("bayes_loss_min", bayes.cross_entropy.min())
    results.record("bayes_loss_max", bayes.cross_entropy.max())
    results.record("bayes_seeds_below_bound", (bayes.cross_entropy < bayes.lower_bound).sum())
    results.record("bayes_entropy_gap_to_bound",
                   bayes.predictive_entropy.mean() - bayes.lower_bound)
    results.record("bayes_heldout_loss", bayes_heldout.cross_entropy.mean())
    results.record("bayes_heldout_accuracy", bayes_heldout.accuracy.mean())
    results.record("memoryless_loss", memoryless.mean())
    results.record("history_value", (memoryless - bayes.cross_entropy).mean())
    return Chain(seeds, P_script, P_text, data, heldout, bayes, bayes_heldout, memoryless)


@dataclass
class Reproduction:
    """The ten runs of the faithful reproduction, and the steps EM-like needs.

    Attributes:
        history: the training history of the ``R = 2 S`` runs (snapshots every
            ``snapshot_every`` steps, with their weights).
        runs: the run indices of each schedule, ``{"sgd": [...], "em": [...]}``.
        run_index: ``(R,)`` int64, the seed position of each run.
        loss, entropy, accuracy: ``(K, R)`` float32 on the CPU, per metric record (nats,
            nats, share of positions).
        em_steps: ``(S,)`` steps for each EM-like run to go below its own seed's SGD final
            loss (``steps`` where it never does).
        pooled_steps: ``(S,)`` the same below the mean over seeds of SGD's final losses (the
            authors' count).
        paired: per seed, EM-like minus SGD, ``(S,)`` each: final entropy (nats), final
            accuracy, gap to the exact predictor (nats).
    """

    history: TrainingHistory
    runs: dict[str, list[int]]
    run_index: torch.Tensor
    loss: torch.Tensor
    entropy: torch.Tensor
    accuracy: torch.Tensor
    em_steps: np.ndarray
    pooled_steps: np.ndarray
    paired: dict[str, torch.Tensor]


def reproduction(results: Results, settings: dict, chain: Chain, device: torch.device,
                 seed: int) -> Reproduction:
    """Train the SGD and EM-like runs of every seed together (Paper II's settings) and record
    their final metrics, the steps EM-like needs to reach SGD's final loss (with a sign test
    and a bootstrap interval over seeds, resampled from ``seed``) and the gaps to the
    references."""
    seeds, STEPS = chain.seeds, settings["steps"]
    bayes = chain.bayes
    with training_run("sticky chain: SGD and EM-like", STEPS):
        start = time.perf_counter()
        exp = sticky_chain_experiment(seeds, T=settings["sequence_length"], steps=STEPS,
                                      device=device, snapshot_every=settings["snapshot_every"],
                                      record_params=True)
        results.record("reproduction_seconds", time.perf_counter() - start, timing=True)
    history = exp.history
    sgd_runs = [r for r, s in enumerate(exp.schedules) if s == "sgd"]
    em_runs = [r for r, s in enumerate(exp.schedules) if s == "em"]
    run_index = torch.arange(len(seeds)).repeat_interleave(2)  # run -> seed position
    loss, ent, acc = (t.cpu() for t in (history.loss, history.entropy, history.accuracy))
    final = {"sgd": sgd_runs, "em": em_runs}
    for name, runs in final.items():
        for metric, series in (("loss", loss), ("entropy", ent), ("accuracy", acc)):
            values = series[-1, runs].double()
            results.record(f"{name}_final_{metric}", values.mean())
            results.record(f"{name}_final_{metric}_std", values.std(unbiased=False))  # as theirs
        # how much the loss still fell over the last tenth of training (least settled seed)
        results.record(f"{name}_loss_fall_last_tenth", relative_fall(loss[:, runs].double()).max())

    # steps for each EM-like run to go below its own seed's SGD final loss (never: STEPS)...
    em_steps = np.array(steps_to_reach(history, loss[-1, sgd_runs].repeat_interleave(2),
                                       never=STEPS))[em_runs]
    results.record("em_steps_to_sgd_final", em_steps.mean())
    results.record("em_speedup", STEPS / em_steps.mean())
    results.record("em_steps_min", em_steps.min())
    results.record("em_steps_max", em_steps.max())
    results.record("em_faster_seeds", (em_steps < STEPS).sum())
    results.record("em_faster_share", (em_steps < STEPS).mean())
    results.record_seeds("em_faster_share", em_steps < STEPS)
    # paired over seeds: the sign test's one-sided p-value for "EM-like is faster", and a
    # bootstrap interval of the speed-up (the seeds resampled with replacement)
    faster, n_paired = int((em_steps < STEPS).sum()), len(em_steps)
    results.record("em_faster_sign_test_p", sign_test_p(faster, n_paired))
    interval = bootstrap_interval(em_steps, lambda s: STEPS / s.mean(), seed=seed)
    results.record_all(dict(zip(("low", "high"), interval, strict=True)), prefix="em_speedup_ci_")
    # ...and, as the authors' script counts, below the mean over seeds of SGD's final losses
    pooled_steps = np.array(steps_to_reach(history, loss[-1, sgd_runs].mean(), never=STEPS))[em_runs]
    results.record("sgd_final_loss_pooled", loss[-1, sgd_runs].mean())
    results.record("em_steps_to_sgd_final_pooled", pooled_steps.mean())
    results.record("em_speedup_pooled", STEPS / pooled_steps.mean())
    results.record("em_steps_pooled_min", pooled_steps.min())
    results.record("em_steps_pooled_max", pooled_steps.max())
    # their 95 % intervals over the same seed resamples (the pooled threshold held fixed)
    boot_pooled = bootstrap_interval(pooled_steps, np.mean, seed=seed)
    results.record_all({"low": boot_pooled[0], "high": boot_pooled[1]},
                       prefix="em_steps_to_sgd_final_pooled_ci_")
    results.record_all({"low": STEPS / boot_pooled[1], "high": STEPS / boot_pooled[0]},
                       prefix="em_speedup_pooled_ci_")

    # distances to the references: the exact predictor of each run's own sequence, the bound
    bayes_per_run = bayes.cross_entropy[run_index].float()
    for name, runs in final.items():
        gap = (loss[-1, runs] - bayes_per_run[runs]).double()
        results.record(f"{name}_gap_to_bayes", gap.mean())
        results.record(f"{name}_gap_to_bound", loss[-1, runs].mean() - bayes.lower_bound)
        results.record(f"{name}_entropy_gap_to_bound", ent[-1, runs].mean() - bayes.lower_bound)
        # the share of the way from the uniform predictor (log 8) to Bayes that training covered
        progress = ((math.log(N_SYMBOLS) - loss[-1, runs])
                    / (math.log(N_SYMBOLS) - bayes_per_run[runs]))
        results.record(f"{name}_progress_to_bayes", progress.double().mean())
    results.record("em_gap_closed",
                   1 - results.metrics["em_gap_to_bayes"] / results.metrics["sgd_gap_to_bayes"])
    # paired by seed (a seed fixes the sequence and the initial weights of both runs):
    # EM-like minus SGD, each seed's difference judged by the ledger (share of seeds)
    paired = {
        "em_minus_sgd_final_entropy": ent[-1, em_runs] - ent[-1, sgd_runs],
        "em_minus_sgd_final_accuracy": acc[-1, em_runs] - acc[-1, sgd_runs],
        "em_minus_sgd_gap_to_bayes": (loss[-1, em_runs] - bayes_per_run[em_runs])
        - (loss[-1, sgd_runs] - bayes_per_run[sgd_runs]),
    }
    for name, difference in paired.items():
        results.record_spread(name, difference.double())
    return Reproduction(history, final, run_index, loss, ent, acc, em_steps, pooled_steps,
                        paired)


@dataclass
class Heldout:
    """Every weight snapshot of the reproduction scored on its seed's held-out sequence.

    Attributes:
        steps: ``(M,)`` int64 snapshot steps.
        loss: ``(M, R)`` held-out cross-entropy (nats) on the CPU.
        em_steps: ``(S,)`` the first snapshot step at which each EM-like run is below its
            seed's SGD final held-out loss (``steps`` where never).
    """

    steps: torch.Tensor
    loss: torch.Tensor
    em_steps: np.ndarray


def heldout_scores(results: Results, settings: dict, chain: Chain, rep: Reproduction,
                   device: torch.device) -> Heldout:
    """Score every snapshot on the held-out sequences (seed ``s + 10000``); records the final
    held-out metrics, the generalisation gaps and EM-like's steps to SGD's final held-out loss."""
    STEPS, run_index, loss = settings["steps"], rep.run_index, rep.loss
    heldout_x = chain.heldout.inputs[run_index].to(device)
    heldout_y = chain.heldout.targets[run_index].to(device)
    scored = evaluate_snapshots(rep.history.param_snapshots, heldout_x, heldout_y)
    heldout_loss = scored.loss.cpu()  # (M, R)
    for name, runs in rep.runs.items():
        results.record(f"{name}_heldout_loss", heldout_loss[-1, runs].mean())
        results.record(f"{name}_heldout_entropy", scored.entropy[-1, runs].mean())
        results.record(f"{name}_heldout_accuracy", scored.accuracy[-1, runs].mean())
        results.record(f"{name}_generalisation_gap", (heldout_loss[-1, runs] - loss[-1, runs]).mean())
        results.record(
            f"{name}_heldout_gap_to_bayes",
            (heldout_loss[-1, runs] - chain.bayes_heldout.cross_entropy[run_index][runs]).mean())
    sgd_runs, em_runs = rep.runs["sgd"], rep.runs["em"]
    held_steps = np.array(first_step_below(rep.history.snapshot_steps, heldout_loss,
                                           heldout_loss[-1, sgd_runs].repeat_interleave(2),
                                           never=STEPS))[em_runs]
    results.record("em_heldout_steps_to_sgd_final", held_steps.mean())
    results.record("em_heldout_speedup", STEPS / held_steps.mean())
    results.record("em_heldout_faster_seeds", sum(s < STEPS for s in held_steps))
    return Heldout(rep.history.snapshot_steps, heldout_loss, held_steps)


def matched_snapshots(step: float, snapshot_every: int) -> int:
    """The number of snapshots (taken at steps 0, ``snapshot_every``, ...) up to the first one
    at or after ``step``: ``ceil(step / snapshot_every) + 1``."""
    return int(math.ceil(step / snapshot_every)) + 1


PATH_MEASURES = ("length", "displacement", "straightness", "persistence")
"""The measures of the value prototypes' paths (``measures.trajectories.PathSummary``)."""


@dataclass
class ValuePaths:
    """The paths of the value prototypes (one per symbol: the mean value of its positions).

    Attributes:
        prototypes: ``(M, R, 8, d_v)`` float64, per snapshot, run and symbol.
        paths: their :class:`~attention_dynamics.measures.trajectories.PathSummary` over
            the whole runs (``(R, 8)`` per measure).
        coords: ``(M, 2, 8, 2)`` the first seed's SGD and EM-like prototypes on the two
            principal axes of all their positions.
        length_ratio: ``(S,)`` per seed, EM-like's mean path length up to the step at which it
            reaches SGD's final loss over SGD's over its whole run.
        rate_adjusted_ratio: ``(S,)`` that ratio over what the value rates and the steps
            alone give.
        straighter: ``(S,)`` per seed, EM-like's mean straightness at equal loss minus SGD's.
    """

    prototypes: torch.Tensor
    paths: PathSummary
    coords: np.ndarray
    length_ratio: torch.Tensor
    rate_adjusted_ratio: torch.Tensor
    straighter: torch.Tensor


def value_paths(results: Results, settings: dict, chain: Chain, rep: Reproduction) -> ValuePaths:
    """Lengths, displacements and straightness of the prototypes' paths in the full ``d_v``
    dimensions, EM-like's also up to the step at which it reaches its seed's SGD final loss;
    records them and the share of variance of the two principal axes of the picture."""
    data, run_index, final = chain.data, rep.run_index, rep.runs
    sgd_runs, em_runs = final["sgd"], final["em"]
    input_means = class_means(data.inputs.double(), data.symbols[:, :-1], N_SYMBOLS)  # (S, 8, d_x)
    prototypes = torch.stack([input_means[run_index] @ s.w_v.double().cpu()
                              for s in rep.history.param_snapshots])  # (M, R, 8, d_v)
    paths = path_summary(prototypes)
    for name, runs in final.items():
        for measure in PATH_MEASURES:
            results.record(f"{name}_path_{measure}", getattr(paths, measure)[runs].mean())
    results.record("em_path_length_ratio",
                   results.metrics["em_path_length"] / results.metrics["sgd_path_length"])
    # EM-like paths up to the step at which they reach their seed's SGD final loss (equal losses)
    matched = [path_summary(prototypes[: matched_snapshots(rep.em_steps[k],
                                                           settings["snapshot_every"]), r])
               for k, r in enumerate(em_runs)]
    # seed by seed, EM-like at equal loss against SGD's whole run, as the claims are judged
    # (over the whole runs the ten times larger value rate alone makes EM-like's paths longer)
    matched_length = torch.tensor([m.length.mean().item() for m in matched])  # (S,)
    matched_straightness = torch.tensor([m.straightness.mean().item() for m in matched])
    results.record("em_path_length_matched", matched_length.mean())
    results.record("em_path_straightness_matched", matched_straightness.mean())
    length_ratio = matched_length / paths.length[sgd_runs].mean(dim=-1)
    straighter = matched_straightness - paths.straightness[sgd_runs].mean(dim=-1)
    results.record_spread("em_path_length_matched_ratio", length_ratio)
    # what the schedule alone gives: each gradient step moves the values by their rate times
    # the gradient, so at equal gradients EM-like's path up to its matching step is longer
    # than SGD's whole path by (value rate ratio) x (its steps / SGD's steps)
    rate_ratio = SCHEDULES["em"]["w_v"] / SCHEDULES["sgd"]["w_v"]
    every = settings["snapshot_every"]
    path_steps = torch.tensor([(matched_snapshots(step, every) - 1) * every
                               for step in rep.em_steps], dtype=torch.float64)  # (S,)
    beyond_rate = length_ratio / (rate_ratio * path_steps / settings["steps"])
    results.record_spread("em_path_length_rate_adjusted_ratio", beyond_rate)
    results.record_spread("em_minus_sgd_path_straightness_matched", straighter)
    shown = prototypes[:, [sgd_runs[0], em_runs[0]]]  # (M, 2, 8, d_v)
    projection = pca(shown.reshape(-1, shown.shape[-1]))
    results.record("pca_top2_share", projection.explained_variance_ratio[:2].sum())
    coords = projection.scores[:, :2].reshape(*shown.shape[:3], 2).numpy()
    return ValuePaths(prototypes, paths, coords, length_ratio, beyond_rate, straighter)


@dataclass
class Settling:
    """How the attention and the values of the reproduction's runs approach their final state.

    Attributes:
        frames: the attention rows' and the values' distances to their final state per
            snapshot (:class:`~attention_dynamics.sticky.analysis.FramePrecision`, ``R`` runs).
        uniformity: ``(R,)`` final attention entropy over the uniform's.
        routing: ``(R,)`` final same-symbol attention mass over its share (1: uniform).
        linear_error: ``(R,)`` relative error of the first-order expansion of the logits.
    """

    frames: FramePrecision
    uniformity: torch.Tensor
    routing: torch.Tensor
    linear_error: torch.Tensor


def settling(results: Results, settings: dict, chain: Chain, rep: Reproduction,
             device: torch.device) -> Settling:
    """At every snapshot, the attention rows of every 16th query and the values against their
    final state; records when each is half-way, how much each moved, and what kind of routing
    the final heads do."""
    T, run_index, history = settings["sequence_length"], rep.run_index, rep.history
    rows = torch.arange(15, T - 1, 16)
    results.record("frame_rows", len(rows))
    grid_x = chain.data.inputs[run_index].to(device)
    frames = frame_precision(history.param_snapshots, history.snapshot_steps, grid_x, rows)
    hidden = chain.data.symbols[:, :-1][run_index].to(device)
    final_rows = attention_rows(history.final_params, grid_x, rows)
    uniformity = attention_uniformity(final_rows, rows).cpu()
    routing_ratio = symbol_routing(final_rows, rows.to(device), hidden).cpu()
    linear_error = linear_response_error(history.final_params, grid_x).cpu()
    for name, runs in rep.runs.items():
        att_settle = settling_step(frames.steps, frames.attention_remaining[:, runs].cpu(), 0.5)
        val_settle = settling_step(frames.steps, frames.value_remaining[:, runs].cpu(), 0.5)
        results.record(f"{name}_attention_half_step", att_settle.double().mean())
        results.record(f"{name}_values_half_step", val_settle.double().mean())
        results.record(f"{name}_attention_first_seeds", (att_settle < val_settle).sum())
        results.record(f"{name}_attention_first_share", (att_settle < val_settle).double().mean())
        results.record_seeds(f"{name}_attention_first_share", att_settle < val_settle)
        results.record(f"{name}_attention_total_change", frames.attention_total[runs].mean())
        results.record(f"{name}_value_total_change", frames.value_total[runs].mean())
        speed = frames.attention_change[:, runs].cpu()
        results.record(f"{name}_attention_speed_ratio", (speed[-1] / speed[0]).mean())
        vspeed = frames.value_change[:, runs].cpu()
        results.record(f"{name}_value_speed_ratio", (vspeed[-1] / vspeed[0]).mean())
        results.record(f"{name}_attention_uniformity", uniformity[runs].mean())
        results.record(f"{name}_symbol_routing", routing_ratio[runs].mean())
        results.record(f"{name}_linear_response_error", linear_error[runs].mean())
    return Settling(frames, uniformity, routing_ratio, linear_error)


def em_checks(params: HeadParams, data: StickyChainData, run_index: torch.Tensor, prefix: int,
              step: float, device: torch.device) -> pd.DataFrame:
    """Chapter 3's EM reading put to each run's head on the first ``prefix`` positions of its
    sequence, in float64.

    Args:
        params: ``R`` heads.
        data: the sequences; run ``r`` reads sequence ``run_index[r]``.
        run_index: ``(R,)`` int64.
        prefix: positions used (a causal head's prefix is a problem of its own).
        step: the small descent step on the scores and on the values.
        device: where to compute.

    Returns:
        A row per run, the columns :data:`EM_CHECKS`: the share of query rows (all but the
        first) whose log-evidence a descent step on the scores lowers; 1.0 if a descent step
        on the values, which lowers the head's loss ``L``, raises the M-step objective ``Q``
        (else 0.0); 1.0 if ``L`` lies below the smallest ``Q`` over free values.
    """
    params = params.map(lambda w: w.detach().double())
    x = data.inputs[run_index][:, :prefix].to(device).double()
    y = data.targets[run_index][:, :prefix].to(device)
    mask = causal_mask(prefix, device)
    checks = []
    for r in range(params.n_runs):
        q, k, v = (x[r] @ w[r] for w in (params.w_q, params.w_k, params.w_v))
        scores = (q @ k.T / math.sqrt(k.shape[-1])).requires_grad_()
        weights = torch.softmax(scores.masked_fill(~mask, -math.inf), -1)
        loss = head_loss(weights, v, params.w_o[r], y[r])
        (grad,) = torch.autograd.grad(loss, scores)
        evidence = (log_evidence(scores.detach() - step * grad, mask)
                    - log_evidence(scores.detach(), mask))
        weights = weights.detach()
        stepped = descend_values(weights, v, params.w_o[r], y[r], steps=1, lr=step)
        bound_change = (m_step_objective(weights, stepped @ params.w_o[r], y[r])
                        - m_step_objective(weights, v @ params.w_o[r], y[r]))
        floor = m_step_floor(weights, y[r], params.w_o.shape[-1])
        checks.append(dict(zip(EM_CHECKS, ((evidence[1:] < 0).double().mean().item(),
                                           float(bound_change > 0),
                                           float(loss.detach() < floor)), strict=True)))
    return pd.DataFrame(checks)


@dataclass
class EmChecks:
    """The EM checks (:func:`em_checks`) of the heads at initialisation and trained.

    Attributes:
        tables: ``{"init": ..., "final": ...}``, a row per run, the columns :data:`EM_CHECKS`.
        runs: the run indices of each schedule.
    """

    tables: dict[str, pd.DataFrame]
    runs: dict[str, list[int]]


def em_reading_checks(results: Results, settings: dict, chain: Chain, rep: Reproduction,
                      device: torch.device) -> EmChecks:
    """Put the EM reading to the heads at initialisation and at the end; records, per schedule,
    the mean share of rows whose evidence falls and the runs whose value step raises ``Q`` and
    whose loss is below the M-step's floor."""
    prefix, step = settings["em_prefix"], settings["em_step"]
    history = rep.history
    tables = {when: em_checks(params, chain.data, rep.run_index, prefix, step, device)
              for when, params in (("init", history.param_snapshots[0]),
                                   ("final", history.final_params))}
    for when, table in tables.items():
        for name, runs in rep.runs.items():
            chosen = table.iloc[runs]
            results.record(f"{name}_{when}_evidence_fall_share",
                           chosen["rows whose evidence falls"].mean())
            results.record(f"{name}_{when}_value_step_raises_q", chosen["value step raises Q"].sum())
            results.record(f"{name}_{when}_loss_below_m_step_floor", chosen["L below min Q"].sum())
    results.record("em_prefix", prefix)
    return EmChecks(tables, rep.runs)


@dataclass
class ExactValues:
    """The block-coordinate baseline, SGD's step on W_Q, W_K, W_O, then W_V solved exactly.

    Attributes:
        history: its training history (``S`` runs, one per seed).
        heldout_loss: ``(M, S)`` held-out cross-entropy (nats) per snapshot.
    """

    history: TrainingHistory
    heldout_loss: torch.Tensor


def exact_values(results: Results, settings: dict, chain: Chain, rep: Reproduction,
                 held: Heldout, device: torch.device) -> ExactValues:
    """Train the baseline from the reproduction's initial weights and sequences, and time it
    beside plain SGD steps of the same runs; records its losses, its steps (and time, in SGD
    steps) to the schedules' final losses, and the best held-out gaps."""
    exact_steps, STEPS, seeds = settings["exact_steps"], settings["steps"], chain.seeds
    x_seeds, y_seeds = chain.data.inputs.to(device), chain.data.targets.to(device)
    bayes_heldout = chain.bayes_heldout
    with training_run("values solved exactly", exact_steps):
        start = time.perf_counter()
        exact = train(init_params(seeds, device=device), x_seeds, y_seeds, "sgd", exact_steps,
                      optimizer="exact-values", snapshot_every=max(1, exact_steps // 10),
                      record_params=True)
        exact_seconds = time.perf_counter() - start
    with training_run("plain SGD steps, timed", exact_steps):
        start = time.perf_counter()
        train(init_params(seeds, device=device), x_seeds, y_seeds, "sgd", exact_steps)
        plain_seconds = time.perf_counter() - start
    cost_ratio = exact_seconds / plain_seconds
    exact_loss = exact.loss.cpu()
    exact_heldout = evaluate_snapshots(exact.param_snapshots, chain.heldout.inputs.to(device),
                                       chain.heldout.targets.to(device)).loss.cpu()
    reached = {name: steps_to_reach(exact, rep.loss[-1, runs].to(exact.loss.device), never=None)
               for name, runs in rep.runs.items()}
    results.record("exact_steps", exact_steps)
    results.record("exact_final_loss", exact_loss[-1].mean())
    results.record("exact_heldout_gap_to_bayes",
                   (exact_heldout[-1] - bayes_heldout.cross_entropy).mean())
    exact_gaps = (exact_heldout - bayes_heldout.cross_entropy).mean(-1)  # per snapshot
    results.record("exact_best_heldout_gap_to_bayes", exact_gaps.min())
    for name, runs in rep.runs.items():
        gaps = held.loss[:, runs] - bayes_heldout.cross_entropy[rep.run_index][runs]
        results.record(f"{name}_best_heldout_gap_to_bayes", gaps.mean(-1).min())
    results.record("exact_best_heldout_step", exact.snapshot_steps[exact_gaps.argmin()])
    results.record("exact_step_cost_ratio", cost_ratio, timing=True)
    for name, steps_needed in reached.items():
        hits = [s for s in steps_needed if s is not None]
        results.record(f"exact_seeds_reaching_{name}_final", len(hits))
        results.record(f"exact_steps_to_{name}_final",
                       np.mean(hits) if hits else float(exact_steps))
    # time to reach SGD's final loss, in units of SGD's own steps (same runs, same timing)
    results.record("exact_time_to_sgd_final_ratio",
                   results.metrics["exact_steps_to_sgd_final"] * cost_ratio / STEPS, timing=True)
    return ExactValues(exact, exact_heldout)
