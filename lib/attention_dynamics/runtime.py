"""Run-time choices every notebook makes: profile, device, seed.

The three are the papermill parameters of each notebook. Each is validated here so that a
wrong value stops the notebook at once with a message that names the allowed values.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch

from attention_dynamics.validation import check_choice

PROFILES = ("quick", "decide", "paper")
"""The named parameter sets. ``quick`` runs the whole book on a laptop CPU in minutes;
``decide`` runs, on the same CPU within two hours, the experiments whose claims ``quick`` leaves
undecided for budget (longer training, more seeds; every setting it does not name is
``quick``'s); ``paper`` uses the papers' sizes and is meant for a GPU."""

DEVICES = ("auto", "cpu", "cuda")


def check_profile(profile: str) -> str:
    """Validate a profile name (one of :data:`PROFILES`)."""
    return check_choice("profile", profile, PROFILES)


def select(profile: str, **by_profile):
    """Pick the value for ``profile`` among keyword arguments named after the profiles.

    ``quick`` and ``paper`` must be given; ``decide`` may be, and where it is not, the
    ``decide`` profile takes ``quick``'s value (it changes only what it names).

    >>> select("quick", quick=100, paper=10_000)
    100
    >>> select("decide", quick=100, paper=10_000)
    100
    >>> select("decide", quick=100, decide=1_000, paper=10_000)
    1000
    """
    check_profile(profile)
    missing = [p for p in ("quick", "paper") if p not in by_profile]
    extra = [p for p in by_profile if p not in PROFILES]
    if missing or extra:
        raise ValueError(f"select() needs the profiles quick and paper (and may take decide); "
                         f"missing {missing}, unknown {extra}")
    if profile == "decide" and "decide" not in by_profile:
        return by_profile["quick"]
    return by_profile[profile]


def resolve_device(device: str = "auto") -> torch.device:
    """Turn ``auto`` | ``cpu`` | ``cuda`` into a :class:`torch.device`.

    ``auto`` picks CUDA when it is available. Asking for ``cuda`` on a machine without it is
    an error rather than a silent fallback, so a results file never claims the wrong device.
    """
    check_choice("device", device, DEVICES)
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' was requested but torch.cuda.is_available() is False; "
                         "use device='cpu' or 'auto'")
    return torch.device(device)


def seed_everything(seed: int, device: torch.device | str = "cpu") -> torch.Generator:
    """Seed Python, NumPy and torch; return a fresh generator on ``device`` seeded with ``seed``.

    Library samplers take the returned generator explicitly, so results never depend on how
    much randomness other code consumed before.
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int; got {seed!r}")
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 (the legacy global state users may still call)
    torch.manual_seed(seed)
    generator = torch.Generator(device=torch.device(device))
    generator.manual_seed(seed)
    return generator


@contextmanager
def evaluation_mode(model) -> Iterator[object]:
    """Within the ``with`` block, ``model`` is in eval mode (no dropout); a ``torch.nn.Module``
    that was training is put back in training mode on exit, even after an exception. Any other
    callable passes through unchanged."""
    was_training = getattr(model, "training", False)
    if was_training:
        model.eval()
    try:
        yield model
    finally:
        if was_training:
            model.train()
