"""The chapter's words for its results (glued into the page), made from the run's numbers so
that a sentence says what the run shows whatever it shows; no part of the run imports them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_dynamics.book.claims import SHARPENED_AT_MOST
from attention_dynamics.book.results import Results
from attention_dynamics.book.statistics import clopper_pearson
from attention_dynamics.book.verdicts import DIRECTIONAL_LEVEL
from attention_dynamics.chapters.em_reading.tables import schedule_table

if TYPE_CHECKING:
    from attention_dynamics.chapters.em_reading.experiment import EmReadingRun

SHORT = {"sgd": "SGD", "em": "EM-like"}
"""The schedules' short names, by key."""


def on_seeds(k: int, n: int) -> str:
    """``k`` of ``n`` seeds in a claim's direction, in words, with the one-sided 95 % bounds
    of the share (the two-sided 90 % Clopper-Pearson interval): decided when they exclude one
    half.

    >>> on_seeds(5, 5)
    'on every seed (one-sided 95 % bounds 0.55-1.00)'
    """
    low, high = clopper_pearson(k, n, DIRECTIONAL_LEVEL)
    count = "every seed" if k == n else "no seed" if k == 0 else f"{k} of {n} seeds"
    undecided = "" if low > 0.5 or high < 0.5 else ", too few to decide"
    bounds = f"one-sided 95 % bounds {low:.2f}-{high:.2f}{undecided}"
    return f"on {count} ({bounds})"


def authors_attention_phrase(sgd_uniformity: float, em_uniformity: float) -> str:
    """Whether the attention left uniform at the authors' setting, from each schedule's final
    attention entropy as a share of the uniform row's, against the ledger's bar
    (the claims' ``SHARPENED_AT_MOST``).

    >>> authors_attention_phrase(0.95, 0.97)
    'the attention stays close to uniform, so the E-step of the reading barely moves'
    >>> authors_attention_phrase(0.95, 0.5)
    'the attention stays close to uniform under SGD and leaves it under EM-like'
    """
    near = {name: value > SHARPENED_AT_MOST
            for name, value in (("SGD", sgd_uniformity), ("EM-like", em_uniformity))}
    if all(near.values()):
        return "the attention stays close to uniform, so the E-step of the reading barely moves"
    if not any(near.values()):
        return "the attention leaves uniform, so the E-step of the reading has work to do"
    stays = next(name for name, value in near.items() if value)
    leaves = next(name for name, value in near.items() if not value)
    return f"the attention stays close to uniform under {stays} and leaves it under {leaves}"


def page_phrases(experiment: EmReadingRun, results: Results, settings: dict) -> dict[str, object]:
    """Everything the page glues beside the recorded metrics, by glue name: the words for the
    reproduction's quality, its value paths, its settling and its EM checks, and the schedules'
    table with the words read off it.

    Args:
        experiment: what :func:`~attention_dynamics.chapters.em_reading.experiment.run`
            returned.
        results: the metrics it recorded.
        settings: the settings it ran with.
    """
    m = results.metrics
    paired = experiment.reproduction.paired
    n_seeds = len(experiment.chain.seeds)
    quality = {
        "lower final entropy": int((paired["em_minus_sgd_final_entropy"] < 0).sum()),
        "higher accuracy": int((paired["em_minus_sgd_final_accuracy"] > 0).sum()),
        "smaller gap to the exact predictor": int((paired["em_minus_sgd_gap_to_bayes"] < 0).sum()),
    }
    paths = experiment.paths
    ratio, rate, straighter = paths.length_ratio, paths.rate_adjusted_ratio, paths.straighter
    straighter_words = on_seeds(int((straighter > 0).sum()), n_seeds)
    straighter_mean = m["em_minus_sgd_path_straightness_matched"]
    table = schedule_table(results, settings["steps"], settings["exact_steps"])
    overfits = m["exact_heldout_gap_to_bayes"] > m["em_heldout_gap_to_bayes"]
    raised = m["sgd_final_value_step_raises_q"] + m["em_final_value_step_raises_q"]
    return {
        "authors_attention_phrase": authors_attention_phrase(
            m["sgd_attention_uniformity"], m["em_attention_uniformity"]),
        "em_quality_phrase": "ends with a " + ", a ".join(
            f"{what} {on_seeds(k, n_seeds)}" for what, k in quality.items()),
        "longer_phrase": f"longer than SGD's whole paths {on_seeds(int((ratio > 1).sum()), n_seeds)}"
                         f", EM-like / SGD from {ratio.min():.2f} to {ratio.max():.2f}",
        "rate_phrase": f"{m['em_path_length_rate_adjusted_ratio']:.2f} times what the rate and the "
                       f"steps alone give (from {rate.min():.2f} to {rate.max():.2f}), longer "
                       f"than that {on_seeds(int((rate > 1).sum()), n_seeds)}",
        "coherent_phrase": f"at equal loss the EM-like paths are straighter than SGD's "
                           f"{straighter_words}, by {straighter_mean:.3f} on average",
        "coherence_conclusion": f"at equal loss straighter than SGD's {straighter_words}, by "
                                f"{straighter_mean:.3f} on average",
        "em_attention_moves": ("more" if m["em_attention_total_change"]
                               > m["sgd_attention_total_change"] else "less"),
        "value_step_q_phrase": (
            "here the two objectives still point the same way, although nothing makes them"
            if raised == 0 else "so here the two objectives already pull apart"),
        "schedule_table": table.round(3),
        "closest_schedule": table["best held-out gap (nats)"].idxmin(),
        "exact_heldout_relation": "further from" if overfits else "closer to",
        "exact_heldout_lesson": (
            "values fitted exactly to one sequence fit its noise, and a faster optimiser of "
            "the training loss is not a better estimator of the chain" if overfits
            else "solving for the values helps on a fresh sequence too"),
    }
