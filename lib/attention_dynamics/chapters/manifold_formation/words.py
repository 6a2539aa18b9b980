"""The chapter's words for its results (glued into the page), made from the run's numbers so
that a sentence says what the run shows whatever it shows; no part of the run imports them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from attention_dynamics.book.paper_numbers import AUTHORS_CHECKPOINT_KEY_ORTHOGONALITY
from attention_dynamics.book.results import Results
from attention_dynamics.chapters.manifold_formation.keys import MEAN_ABS, SIGNED
from attention_dynamics.chapters.manifold_formation.seeds import weakest_seed
from attention_dynamics.tasks.bijection import LAYOUTS

if TYPE_CHECKING:
    from attention_dynamics.chapters.manifold_formation.experiment import ManifoldFormationRun

KEY_DIRECTION = {"below": "less", "above": "more", "within": "neither more nor less"}
"""How the trained keys' mean ``|cos|`` moved, by where it sits against the initialisations."""


def key_frame_phrase(below: dict[str, int], n_seeds: int) -> str:
    """The page's summary, from the number of seeds, by layout (``below``), whose trained keys
    are more orthogonal (lower mean ``|cos|``) than 95 % of the initialisations, of ``n_seeds``.

    >>> key_frame_phrase({"separate": 0, "shared": 2}, 6).split(" on ", 1)[1]
    '0 of 6 seeds in the separate layout and on 2 of 6 in the shared one'
    """
    separate, shared = below["separate"], below["shared"]
    return (f"the keys end more orthogonal than 95 % of initialisations on {separate} of "
            f"{n_seeds} seeds in the separate layout and on {shared} of {n_seeds} in the shared "
            "one")


def replacement_phrase(observed: float, strongest: float, component: int, share: float) -> str:
    """The page's phrase on the protocol beyond position, ``observed`` against ``strongest`` (the
    stronger null), on PC ``component``, which carries ``share`` of the variance.

    >>> replacement_phrase(0.5, 0.25, 2, 0.125)
    'above the stronger of its nulls (0.250), on PC2, which carries 12.5% of the variance'
    """
    return (f"{'above' if observed > strongest else 'not above'} the stronger of its nulls "
            f"({strongest:.3f}), on PC{component}, which carries {share:.1%} of the variance")


def hmm_phrases(hmm_seeds: pd.DataFrame) -> dict[str, str]:
    """The page's phrases on HMM filtering over seeds, from the table of
    :func:`~attention_dynamics.chapters.manifold_formation.seeds.hmm_seed`'s numbers (a row per
    seed): the margins beyond position, the component that carries them (the weakest seed's
    share of the variance where it is not PC1 on every seed), the authors' KL ratios and the
    error steps."""
    n_seeds = len(hmm_seeds)
    margins = hmm_seeds["beyond_position_over_strongest_null"]
    on_pc1 = int((hmm_seeds["beyond_position_component"] == 1).sum())
    worst = weakest_seed(hmm_seeds)
    ratios = hmm_seeds["length_kl_ratio"]
    steps_over = hmm_seeds["error_step_over_within_train_max_bits"]
    return {
        "hmm_beyond_phrase": f"{int((margins > 0).sum())} of {n_seeds} seeds (by {margins.min():.3f} to "
                             f"{margins.max():.3f})",
        "hmm_leading_component_phrase": f"PC1 carries it on {on_pc1} of {n_seeds} seeds" + (
            "" if on_pc1 == n_seeds
            else f"; on the others a later component does, carrying as little as "
                 f"{worst['beyond_position_variance_share']:.1%} of the variance"),
        "hmm_length_ratio_phrase": f"below 2 on {int((ratios < 2).sum())} of {n_seeds} seeds "
                                   f"({ratios.min():.2f} to {ratios.max():.2f})",
        "hmm_discontinuity_phrase": "larger than every step inside the training length on "
                                    f"{int((steps_over > 0).sum())} of {n_seeds} seeds",
    }


def page_phrases(experiment: ManifoldFormationRun, results: Results) -> dict[str, str]:
    """Everything the page glues beside the recorded metrics, by glue name: the key frame, the
    protocol beyond position on bijections drawn with replacement, the frame and precision over
    seeds, and HMM filtering over seeds.

    Args:
        experiment: what
            :func:`~attention_dynamics.chapters.manifold_formation.experiment.run` returned.
        results: the metrics it recorded.
    """
    keys, frame = experiment.keys, experiment.frame
    phrases = {f"authors_key_orthogonality_{label.replace(' ', '_')}": number.text
               for label, number in AUTHORS_CHECKPOINT_KEY_ORTHOGONALITY.items()}
    for layout in LAYOUTS:
        phrases[f"{layout}_key_direction"] = KEY_DIRECTION[keys.position(layout, MEAN_ABS)]
        phrases[f"{layout}_key_signed_position"] = keys.position(layout, SIGNED)
    below = {}
    for layout in LAYOUTS:
        seeds = experiment.seeds.bijections[layout]
        for name, statistic in (("key_orthogonality", MEAN_ABS), ("key_signed_cosine", SIGNED)):
            low = keys.init_spread[layout][statistic].iloc[0]
            count = int((seeds[name] < low).sum())
            phrases[f"{layout}_{name}_below_inits_phrase"] = f"{count} of {len(seeds)}"
            if name == "key_orthogonality":
                below[layout] = count
        shares = seeds["manifold_value_standardised_share"]
        phrases[f"{layout}_pc1_share_seeds_phrase"] = (
            f"{shares.min():.3f} to {shares.max():.3f} over the {len(seeds)} seeds")
    phrases["key_frame_summary"] = key_frame_phrase(below, len(experiment.seeds.bijections["separate"]))
    found = experiment.replacement.beyond
    strongest = results.metrics["replacement_manifold_best_pc_beyond_position_strongest_null"]
    phrases["replacement_manifold_phrase"] = replacement_phrase(
        found.observed, strongest, found.component, found.variance_share)
    per_seed, n_seeds = frame.per_seed, len(frame.seeds)
    counts = {
        "frame_faded_phrase": sum(high < 1 for high in per_seed["routing_value_gradient_ratio_fall_high"]),
        "frame_beyond_jitter_phrase": sum(
            high < 1 for high in per_seed["routing_value_gradient_fall_beyond_jitter_high"]),
        "frame_gained_phrase": sum(low > 1 for low in per_seed["mae_gain_after_attention_settle_low"]),
        "frame_attention_first_phrase": sum(
            attention < precision for attention, precision
            in zip(per_seed["attention_settle_step"], per_seed["precision_settle_step"], strict=True)),
    }
    phrases |= {name: f"{count} of {n_seeds}" for name, count in counts.items()}
    return phrases | hmm_phrases(experiment.seeds.hmm)
