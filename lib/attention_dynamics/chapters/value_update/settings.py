"""Chapter 2's settings per profile, and the constants its experiment shares across profiles."""

from __future__ import annotations

import copy

from attention_dynamics.runtime import PROFILES, check_profile, select
from attention_dynamics.toy_routing import ToyConfig

SETTINGS = {
    profile: {
        "n_seeds": select(profile, quick=8, decide=32, paper=32),
        "steps": select(profile, quick=400, paper=1500),
        "record_every": select(profile, quick=5, paper=10),
        "sweep_seeds": select(profile, quick=5, paper=16),
    }
    for profile in PROFILES
}
"""Each profile's ``n_seeds`` seeds of the toy head (seeds ``seed, ..., seed + n_seeds - 1``),
``steps`` full-batch training steps, a snapshot every ``record_every`` steps, and the first
``sweep_seeds`` seeds in the sweep over initial scales. The decide profile is the quick run on
the 32 seeds registered to decide the loop's two rows."""

LR_CHECK = 0.5
"""The step size of the one-step checks of the value-update identity."""

SLOT_INPUT_DIM = 2
"""The dimension of the fixed slot embeddings ``Z`` of the ``W_V`` form (fewer than the slots,
so that ``Z Z^T`` is far from the identity)."""

SYMMETRIC_SCALE = 1e-6
"""The scale of the initial values at the symmetric state (``W_Q = 0``)."""

SWEEP_SCALES = (0.3, 1.0, 3.0)
"""The initial routing and value scales of the sweep (each pair of them)."""

ETAS = (1e-1, 1e-2, 1e-3, 1e-4)
"""The value step sizes of the first-order check of the advantage change."""

RESPONSIBILITY_STEPS = (20, 80)
"""The steps (besides the first and the last snapshot) at which the responsibility figure shows
the responsibility matrix."""


def settings(profile: str, n_seeds: int | None = None) -> dict:
    """A copy of ``profile``'s settings (one of ``quick``, ``decide``, ``paper``).

    ``n_seeds`` replaces the profile's number of seeds; the sweep over initial scales then takes
    at most that many. The chapter reports spreads over seeds, so it needs at least 2.
    """
    chosen = copy.deepcopy(SETTINGS[check_profile(profile)])
    if n_seeds is not None:
        if not isinstance(n_seeds, int) or isinstance(n_seeds, bool) or n_seeds < 2:
            raise ValueError(f"n_seeds must be an int of at least 2 (the chapter reports spreads "
                             f"over seeds), or None; got {n_seeds!r}")
        chosen["n_seeds"] = n_seeds
    return chosen


def toy_config(chosen: dict) -> ToyConfig:
    """The :class:`~attention_dynamics.toy_routing.ToyConfig` of ``chosen`` settings (the toy's
    sizes at their defaults); a ValueError where the half-way step is not a snapshot (the
    sequential controls switch there)."""
    config = ToyConfig(steps=chosen["steps"], record_every=chosen["record_every"])
    if (config.steps // 2) % config.record_every:
        raise ValueError(f"record_every must divide steps // 2 (the sequential controls' switch);"
                         f" got steps={config.steps}, record_every={config.record_every}")
    return config
