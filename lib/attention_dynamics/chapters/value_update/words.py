"""The chapter's words for its results (glued into the page), made from the run's numbers so
that a sentence says what the run shows whatever it shows; no part of the run imports them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_dynamics.toy_routing import CONDITIONS

if TYPE_CHECKING:
    from attention_dynamics.chapters.value_update.experiment import ValueUpdateRun

EM_WORDS = {"toy_em_early_phrase": ("loss_early", "ahead of the coupled run", "behind"),
            "toy_em_final_phrase": ("final_loss", "ends below it", "ends above it"),
            "toy_em_bound_phrase": ("final_bound", "lower", "higher")}
"""EM against the coupled run, by glue name, as the measure, the words where EM's is lower, the
words where it is not."""


def seeds_phrase(ahead: int, total: int) -> str:
    """The words for where the coupled run stands against the better sequential order, when it
    is ahead on ``ahead`` of ``total`` seeds."""
    if ahead == total:
        return "ahead of the better sequential order on every seed"
    if ahead == 0:
        return "behind the better sequential order on every seed"
    return f"ahead of the better sequential order on {ahead} of {total} seeds"


def between_phrase(value: float, low: float, high: float) -> str:
    """Where ``value`` lies against two ablations' values ``low <= high``, in words."""
    if value < low:
        return "below both ablations"
    if value > high:
        return "above both ablations"
    return "between the two ablations"


def symmetric_leaving_phrase(leaving: int, n_seeds: int, largest_control: float) -> str:
    """The words for which runs leave the symmetric state, given that the coupled run leaves it
    on ``leaving`` of ``n_seeds`` seeds (a control leaves it where ``largest_control``, its
    largest final specialization, reaches 0.1)."""
    if leaving == n_seeds and largest_control < 0.1:
        return "only the coupled run leaves it, on every seed"
    return f"the coupled run leaves it on {leaving} of {n_seeds} seeds" + (
        ", and a control leaves it too" if largest_control >= 0.1 else ", and no control does")


def page_phrases(experiment: ValueUpdateRun) -> dict[str, str]:
    """Everything the page glues beside the recorded metrics, by glue name: uniform attention,
    the capacity controls, the symmetric state, the sweep over initial scales and EM.

    Args:
        experiment: what :func:`~attention_dynamics.chapters.value_update.experiment.run`
            returned.
    """
    capacity, symmetric, sweep = experiment.capacity, experiment.symmetric, experiment.sweep
    n_seeds = len(experiment.conditions.run.seeds)
    ablations = [capacity.means[name] for name in CONDITIONS[1:]]
    phrases = {
        "values_alone_phrase": (
            "the values alone break the symmetry of uniform attention, on every seed"
            if experiment.uniform.lowest > 0.1
            else "the values alone leave the routing close to uniform on some seed"),
        "recombined_vs_ablations_phrase": between_phrase(
            float(capacity.recombined[-1].mean()), min(ablations), max(ablations)),
        "capacity_share_word": "most" if capacity.share > 0.5 else "less than half",
    }
    phrases |= {f"coupling_vs_sequential{suffix}_phrase": seeds_phrase(ahead, n_seeds)
                for suffix, ahead in capacity.ahead.items()}
    coupled = symmetric.proto[-1, :, symmetric.run.condition("coupled")]
    phrases["symmetric_leaving_phrase"] = symmetric_leaving_phrase(
        int((coupled > 0.5).sum()), len(coupled), symmetric.largest_control)
    widest = sweep.scales[int(sweep.coupling.mean(axis=0).argmax())]  # value scale, rows averaged
    phrases["sweep_coupling_margin_where_phrase"] = (
        "it is largest where the values start smallest, closest to the symmetric state"
        if widest == min(sweep.scales)
        else f"it is largest at value scale {widest}, not where the values start smallest")
    measures = experiment.em.measures
    return phrases | {key: lower if measures["em"][measure] < measures["coupled"][measure] else higher
                      for key, (measure, lower, higher) in EM_WORDS.items()}
