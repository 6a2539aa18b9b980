"""Chapter 4's settings per profile, and the constants its experiment shares across profiles."""

from __future__ import annotations

import copy

from attention_dynamics.runtime import check_profile

_QUICK = dict(
    n_symbols=10,  # V, the symbols of a bijection
    bijection_model=dict(n_layers=2, n_heads=4, d_model=64, init_std=0.1),
    bijection_training=dict(
        steps=1500, batch_size=128, lr=3e-3, warmup_steps=75, final_lr_fraction=0.0
    ),
    mlp_training=dict(steps=300, batch_size=128, lr=3e-3, warmup_steps=30),
    hmm_task=dict(n_states=5, n_observations=20, resolution=0.05),
    hmm_test_lengths=(30, 50),  # observations per test sequence
    hmm_model=dict(n_layers=2, n_heads=8, d_model=64, init_std=0.1),
    hmm_training=dict(steps=1200, batch_size=32, lr=3e-3, warmup_steps=100, loss="bayes"),
    n_checkpoints=12,  # geometrically spaced checkpoints of a run
    eval_batches=4,
    eval_batch_size=500,
    probe_size=256,  # sequences of a probe batch
    n_seeds=2,
    # (g): the separate layout at a constant rate after the warm-up
    frame_training=dict(
        steps=800, batch_size=128, lr=3e-3, warmup_steps=75, final_lr_fraction=1.0
    ),
    late_checkpoints=11,  # evenly spaced checkpoints over the second half of (g)'s runs
)

SETTINGS: dict[str, dict] = copy.deepcopy({
    "quick": _QUICK,
    # HMM filtering trained 4000 steps: 25.6 % of the authors' 500,000 sequences, so that the
    # length-generalisation claim is decided; six seeds; longer constant-rate runs; the
    # bijections trained 3000 steps, so that a late phase of three times the solve step (about
    # 600 steps on the quick run's shared layout) fits the run
    "decide": {
        **_QUICK,
        "bijection_training": dict(
            steps=3000, batch_size=128, lr=3e-3, warmup_steps=75, final_lr_fraction=0.0
        ),
        "hmm_training": dict(
            steps=4000, batch_size=32, lr=3e-3, warmup_steps=100, loss="bayes"
        ),
        "n_seeds": 6,
        "frame_training": dict(
            steps=1500, batch_size=128, lr=3e-3, warmup_steps=75, final_lr_fraction=1.0
        ),
        "late_checkpoints": 21,
    },
    # the papers' sizes, for a GPU
    "paper": dict(
        n_symbols=20,
        bijection_model=dict(n_layers=6, n_heads=6, d_model=192, d_ff=768, init_std=0.05),
        bijection_training=dict(steps=50_000, batch_size=256, lr=3e-4, warmup_steps=2000),
        mlp_training=dict(steps=10_000, batch_size=256, lr=3e-4, warmup_steps=500),
        hmm_task=dict(n_states=5, n_observations=20, resolution=0.01),
        hmm_test_lengths=(30, 50),
        hmm_model=dict(n_layers=9, n_heads=8, d_model=256, init_std=0.05),
        hmm_training=dict(
            steps=50_000, batch_size=64, lr=3e-4, warmup_steps=2000, loss="bayes"
        ),
        n_checkpoints=24,
        eval_batches=20,
        eval_batch_size=500,
        probe_size=1000,
        n_seeds=6,
        frame_training=dict(
            steps=50_000, batch_size=256, lr=3e-4, warmup_steps=2000, final_lr_fraction=1.0
        ),
        late_checkpoints=21,
    ),
})
"""The settings of the profiles ``quick``, ``decide`` and ``paper``, by name. Each holds the
bijections' ``n_symbols`` (V), the transformers' sizes (``bijection_model``, ``hmm_model``: the
keyword arguments of :class:`~attention_dynamics.models.transformer.TransformerConfig` beyond the task's
vocabulary and length), the HMM task (``hmm_task``) and its test lengths ``hmm_test_lengths``
(observations), the training runs (``bijection_training``, ``mlp_training``, ``hmm_training``,
``frame_training``: the keyword arguments of
:class:`~attention_dynamics.sequence_training.SequenceTrainingConfig`, steps and sequences),
``n_checkpoints`` geometrically spaced checkpoints per run and ``late_checkpoints`` evenly spaced
ones over the second half of the constant-rate runs, the held-out data (``eval_batches`` batches
of ``eval_batch_size`` sequences), ``probe_size`` sequences per probe batch, and ``n_seeds``
seeds of the trained models."""

N_INITS = 100
"""How many independent initialisations are drawn per layout, the null distribution of each key
statistic."""

PROBE_PARTS = 8
"""Disjoint parts of a probe or of the evaluation batches, for the chapter's 95 % intervals."""

N_PERMUTATIONS = 200
"""How many times the entropies are shuffled within positions, the null of the protocol beyond
position."""

FRAME_RANK = 3
"""The leading directions of the hypothesis keys compared between checkpoints in (g)."""


def settings(profile: str, n_seeds: int | None = None) -> dict:
    """A copy of ``profile``'s settings (one of ``quick``, ``decide``, ``paper``).

    ``n_seeds`` replaces the profile's number of seeds: those of the constant-rate runs of (g)
    and of the trained models repeated in (h) (seed 0 is the runs of (a) to (f)).
    """
    chosen = copy.deepcopy(SETTINGS[check_profile(profile)])
    if n_seeds is not None:
        if isinstance(n_seeds, bool) or not isinstance(n_seeds, int) or n_seeds < 1:
            raise ValueError(f"n_seeds (the seeds of the trained models) must be an integer of "
                             f"at least 1, or None; got {n_seeds!r}")
        chosen["n_seeds"] = n_seeds
    return chosen
