"""The chapter's tables, each from results to a pandas DataFrame (losses in nats)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import pandas as pd

from attention_dynamics.book.results import Results
from attention_dynamics.chapters.em_reading.reproduction import PATH_MEASURES

if TYPE_CHECKING:
    from attention_dynamics.chapters.em_reading.reproduction import (
        Chain,
        EmChecks,
        Reproduction,
        ValuePaths,
    )

PER_SEED = re.compile(r"_seed\d+$|_n_seeds$")
"""The names of the per-seed values a spread is recorded with (``Results.record_seeds``)."""


def metrics_by_schedule(results: Results, prefix: str, names: Iterable[str],
                        wanted: Sequence[str] = ("",)) -> pd.DataFrame:
    """The recorded metrics ``{prefix}{name}_...`` whose name holds one of ``wanted``, a column
    per schedule ``name`` (a row per metric, named without ``{prefix}{name}_``); each seed's
    own values are left out (their mean and extremes stay)."""
    return pd.DataFrame({
        name: {key.removeprefix(f"{prefix}{name}_"): value
               for key, value in results.metrics.items()
               if key.startswith(f"{prefix}{name}_") and any(w in key for w in wanted)
               and not PER_SEED.search(key)}
        for name in names
    })


def settling_table(results: Results) -> pd.DataFrame:
    """The settling metrics of the reproduction, a column per schedule."""
    return metrics_by_schedule(results, "", ("sgd", "em"),
                               ("attention", "value_", "routing", "linear"))


def fresh_table(results: Results) -> pd.DataFrame:
    """The metrics on fresh sequences, a column per schedule."""
    return metrics_by_schedule(results, "fresh_", ("sgd", "em"))


def em_checks_table(em: EmChecks) -> pd.DataFrame:
    """The mean of each EM check, a column per (heads, schedule), rounded to 3 decimals."""
    return pd.concat({(when, name): table.iloc[runs].mean()
                      for when, table in em.tables.items() for name, runs in em.runs.items()},
                     axis=1).round(3)


def chain_table(chain: Chain) -> pd.DataFrame:
    """The exact predictor's cross-entropy, entropy and accuracy, the memoryless predictor's
    cross-entropy, and the exact predictor's cross-entropy on the held-out sequence, a row per
    seed (the index named so; 4 decimals)."""
    return pd.DataFrame({
        "Bayes CE": chain.bayes.cross_entropy.numpy(),
        "Bayes entropy": chain.bayes.predictive_entropy.numpy(),
        "Bayes accuracy": chain.bayes.accuracy.numpy(),
        "memoryless CE": chain.memoryless.numpy(),
        "held-out Bayes CE": chain.bayes_heldout.cross_entropy.numpy(),
    }, index=pd.Index(chain.seeds, name="seed")).round(4)


def per_seed_table(chain: Chain, rep: Reproduction) -> pd.DataFrame:
    """Both schedules' final losses and accuracies, EM-like's steps to SGD's final loss (its
    seed's, and the authors' pooled one) and the exact predictor's, a row per seed (the index
    named so; 4 decimals)."""
    sgd_runs, em_runs = rep.runs["sgd"], rep.runs["em"]
    return pd.DataFrame({
        "SGD final loss": rep.loss[-1, sgd_runs].numpy(),
        "EM final loss": rep.loss[-1, em_runs].numpy(),
        "EM steps (own SGD final)": rep.em_steps,
        "EM steps (pooled, authors')": rep.pooled_steps,
        "SGD accuracy": rep.accuracy[-1, sgd_runs].numpy(),
        "EM accuracy": rep.accuracy[-1, em_runs].numpy(),
        "Bayes CE": chain.bayes.cross_entropy.numpy(),
        "Bayes accuracy": chain.bayes.accuracy.numpy(),
    }, index=pd.Index(chain.seeds, name="seed")).round(4)


def path_table(paths: ValuePaths, runs: dict[str, list[int]]) -> pd.DataFrame:
    """The prototypes' mean path measures, a column per schedule (4 decimals)."""
    return pd.DataFrame({
        name: {m: getattr(paths.paths, m)[r].mean().item() for m in PATH_MEASURES}
        for name, r in runs.items()
    }).round(4)


def schedule_table(results: Results, steps: int, exact_steps: int) -> pd.DataFrame:
    """SGD, EM-like and the values solved side by side: steps trained, final training loss,
    last and best held-out gaps to the exact predictor, steps to SGD's final loss and the time
    to it (SGD's = 1), from the recorded metrics; ``steps`` is the reproduction's."""
    m = results.metrics
    return pd.DataFrame({
        "SGD": {
            "steps": steps,
            "training loss": m["sgd_final_loss"],
            "held-out gap to Bayes (nats)": m["sgd_heldout_gap_to_bayes"],
            "best held-out gap (nats)": m["sgd_best_heldout_gap_to_bayes"],
            "steps to SGD's final loss": steps,
            "time to SGD's final loss (SGD's = 1)": 1.0,
        },
        "EM-like": {
            "steps": steps,
            "training loss": m["em_final_loss"],
            "held-out gap to Bayes (nats)": m["em_heldout_gap_to_bayes"],
            "best held-out gap (nats)": m["em_best_heldout_gap_to_bayes"],
            "steps to SGD's final loss": m["em_steps_to_sgd_final"],
            "time to SGD's final loss (SGD's = 1)": m["em_steps_to_sgd_final"] / steps,
        },
        "values solved": {
            "steps": exact_steps,
            "training loss": m["exact_final_loss"],
            "held-out gap to Bayes (nats)": m["exact_heldout_gap_to_bayes"],
            "best held-out gap (nats)": m["exact_best_heldout_gap_to_bayes"],
            "steps to SGD's final loss": m["exact_steps_to_sgd_final"],
            "time to SGD's final loss (SGD's = 1)": m["exact_time_to_sgd_final_ratio"],
        },
    }).T
