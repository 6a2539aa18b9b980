"""Settling against an end window that jitters: constructed trajectories with known answers."""

import pytest
import torch

from attention_dynamics.measures.settling import has_settled, jitter_aware_settling_step

F64 = torch.float64


def _remaining(states: torch.Tensor, in_end: torch.Tensor) -> torch.Tensor:
    """``(M, R)`` each record's distance to the end window's mean over the start's distance."""
    end = states[in_end].mean(dim=0)
    return (states - end).abs() / (states[0] - end).abs()


def _runs(last: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Records every 10 steps up to ``last``, the end window its last tenth, and three runs:
    one that settles at step 30 and stays still; one that drifts linearly from 1 to 0 up to its
    last record; one that comes to rest at step 20 and jitters there by 0.3 of its start's
    distance (0.3, 0, -0.3, repeating, whose mean over the window is 0)."""
    steps = torch.arange(0, last + 1, 10)
    early = torch.tensor([1.0, 0.5, 0.2] + [0.0] * (len(steps) - 3), dtype=F64)
    drift = 1 - steps.to(F64) / last
    pattern = torch.tensor([0.3, 0.0, -0.3], dtype=F64)
    jitter = torch.cat([torch.tensor([1.0, 0.8], dtype=F64),
                        pattern.repeat(len(steps))[: len(steps) - 2]])
    # the window's records start on the pattern's 0 so that their mean is the resting state
    in_end = steps >= 0.9 * last
    return steps, torch.stack([early, drift, jitter], dim=1), in_end


def test_a_run_settles_early_drifts_to_the_end_or_jitters_inside_the_band():
    steps, states, in_end = _runs(200)
    assert steps[in_end].tolist() == [180, 190, 200]
    remaining = _remaining(states, in_end)
    settled = jitter_aware_settling_step(steps, remaining, in_end)
    # the first settles where it stops (30); the jittering one where it enters its jitter (20);
    # the drifting one enters the band only at the window, so it has not settled (last step)
    assert settled.tolist() == [30, 200, 20]
    assert has_settled(settled, steps, in_end).tolist() == [True, False, True]


def test_training_longer_moves_no_settled_run_and_settles_no_drifting_one():
    short_steps, short_states, short_end = _runs(200)
    long_steps, long_states, long_end = _runs(400)
    short = jitter_aware_settling_step(short_steps, _remaining(short_states, short_end), short_end)
    long = jitter_aware_settling_step(long_steps, _remaining(long_states, long_end), long_end)
    assert short[[0, 2]].tolist() == long[[0, 2]].tolist() == [30, 20]
    assert not has_settled(short, short_steps, short_end)[1]
    assert not has_settled(long, long_steps, long_end)[1]


def test_in_order_a_part_that_has_not_settled_comes_after_every_settled_one():
    steps, states, in_end = _runs(200)
    settled = jitter_aware_settling_step(steps, _remaining(states, in_end), in_end)
    early, drift, jitter = settled.tolist()
    assert early < drift and jitter < drift          # settled before a part that never settles
    assert not drift < drift                          # two unsettled parts: neither first


def test_the_end_window_must_be_given():
    steps, states, in_end = _runs(200)
    with pytest.raises(ValueError, match="in_end"):
        jitter_aware_settling_step(steps, _remaining(states, in_end), torch.zeros_like(in_end))
    with pytest.raises(ValueError, match="in_end"):
        has_settled(steps, steps, torch.zeros_like(in_end))
