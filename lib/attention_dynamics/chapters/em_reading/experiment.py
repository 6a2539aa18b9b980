"""The whole chapter, every part in the notebook's order."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import torch

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.em_reading.extensions import (
    Adam,
    Fresh,
    LongHorizon,
    Sweep,
    adam_comparison,
    deep_variant,
    fresh_sequences,
    long_horizon,
    multiplier_sweep,
)
from attention_dynamics.chapters.em_reading.reproduction import (
    Chain,
    EmChecks,
    ExactValues,
    Heldout,
    Reproduction,
    Settling,
    ValuePaths,
    chain_references,
    em_reading_checks,
    exact_values,
    heldout_scores,
    record_settings,
    reproduction,
    settling,
    value_paths,
)


@dataclass
class EmReadingRun:
    """Every part of the chapter's experiment, as its part function returned it."""

    chain: Chain
    reproduction: Reproduction
    heldout: Heldout
    paths: ValuePaths
    settling: Settling
    fresh: Fresh
    em: EmChecks
    exact: ExactValues
    sweep: Sweep
    long: LongHorizon
    adam: Adam
    deep: pd.DataFrame


def run(results: Results, settings: dict, device: torch.device, seed: int) -> EmReadingRun:
    """The chapter's experiment, part by part in the notebook's order, recorded into ``results``.

    Args:
        results: where every metric goes (the notebook's results file).
        settings: :func:`~attention_dynamics.chapters.em_reading.settings.settings`'s.
        device: where the reproduction, the sweep, Adam and the deep variant train (the runs on
            fresh sequences stay on the CPU).
        seed: the base seed of the runs on fresh sequences and of the bootstrap.
    """
    record_settings(results, settings)
    chain = chain_references(results, settings)
    rep = reproduction(results, settings, chain, device, seed)
    held = heldout_scores(results, settings, chain, rep, device)
    paths = value_paths(results, settings, chain, rep)
    settled = settling(results, settings, chain, rep, device)
    fresh = fresh_sequences(results, settings, seed)
    em = em_reading_checks(results, settings, chain, rep, device)
    exact = exact_values(results, settings, chain, rep, held, device)
    sweep = multiplier_sweep(results, settings, chain.seeds, device)
    long = long_horizon(results, sweep)
    adam = adam_comparison(results, settings, chain.seeds, device)
    deep = deep_variant(results, settings, chain, device)
    return EmReadingRun(chain, rep, held, paths, settled, fresh, em, exact, sweep, long, adam, deep)
