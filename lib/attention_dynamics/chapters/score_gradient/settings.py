"""Chapter 1's settings per profile, and the constants its experiment shares across profiles."""

from __future__ import annotations

import copy

from attention_dynamics.runtime import PROFILES, check_profile, select

SETTINGS = {
    profile: select(
        profile,
        quick=dict(n_problems=300, max_length=40, n_step_problems=200, n_kernel_heads=200,
                   kernel_steps=(1e-3, 1e-1), sticky_T=500, sticky_steps=300, sticky_window=64,
                   timing_length=64, repeats=5),
        paper=dict(n_problems=3000, max_length=128, n_step_problems=2000, n_kernel_heads=2000,
                   kernel_steps=(1e-3, 1e-1), sticky_T=2000, sticky_steps=1000,
                   sticky_window=64, timing_length=128, repeats=9),
    )
    for profile in PROFILES
}
"""The sizes of each profile. ``n_problems`` random problems of length at most ``max_length`` for
the closed form against autograd; ``n_step_problems`` problems per step size of the score step;
``n_kernel_heads`` random heads per step size in ``kernel_steps`` (score units) for the weight
step; the sticky-chain heads trained ``sticky_steps`` steps on ``sticky_T`` symbols and measured
on ``sticky_window`` positions; the diagnostics timed at length ``timing_length``, ``repeats``
times."""

SATURATED_SCALE = 30.0
"""The score scale of every fifth random problem (large enough to saturate the softmax)."""

MASS_SHIFT_STEPS = (1e-3, 1e-2, 1e-1)
"""The score steps of part (c), in score units (the largest score moves by this much)."""

EXAMPLE_STEP = 1e-2
"""The score step of the example problem of the mass-shift figure."""

RESOLVABLE = 1e-12
"""The smallest predicted change of a row's mass on the better keys that float64 resolves; rows
below it are left out of the measures."""

EXAMPLE_HEAD = (1, 1, 12, 8, 4, 6)
"""Batch, heads, length, ``d_x``, ``d_k``, ``d_v`` of the one head whose matrices are drawn."""

EXAMPLE_PROBLEM = (4, 2, 32, 8, 4, 6)
"""Batch, heads, length, ``d_x``, ``d_k``, ``d_v`` of the example problem of the mass-shift
figure."""

KERNEL_HEAD = (1, 1, 16, 32, 8, 8)
"""Batch, heads, length, ``d_x``, ``d_k``, ``d_v`` of the random heads of the weight step (one
sequence, ``T <= d_x`` so that the inputs can be made orthonormal)."""


def settings(profile: str, n_seeds: int | None = None) -> dict:
    """A copy of ``profile``'s settings (one of ``quick``, ``decide``, ``paper``).

    The chapter has no number of seeds to override: its random problems are drawn from the one
    ``seed``, and its trained heads are Paper II's five seeds
    (:data:`~attention_dynamics.tasks.sticky_chain.PAPER_SEEDS`). So ``n_seeds`` must be
    ``None``; any number is refused with a ValueError.
    """
    chosen = copy.deepcopy(SETTINGS[check_profile(profile)])
    if n_seeds is not None:
        raise ValueError(f"n_seeds must be None: the chapter score_gradient has no seeds setting "
                         f"(its trained heads are Paper II's five seeds); got {n_seeds!r}")
    return chosen
