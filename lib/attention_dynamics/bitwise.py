"""The reference digest: does this machine compute the book's bits?

Each of three small models (a transformer, a Mamba and an LSTM, :data:`REFERENCE_MODELS`) is
trained for :data:`REFERENCE_STEPS` AdamW steps by the library's own loop
(:func:`~attention_dynamics.sequence_training.train_sequence_model`) on bijection elimination,
from fixed seeds, on one CPU thread; :func:`training_digest` is the SHA-256 of its parameters'
bytes afterwards. :data:`REFERENCE_DIGESTS` holds the digests the book's machines compute with
the CPU dispatch pinned (:mod:`attention_dynamics.dispatch`): the same torch on any x86-64 CPU
with AVX2, Intel or AMD, gives these bits; another torch, thread count, architecture (ARM) or a
GPU need not. ``python -m attention_dynamics bits`` prints this machine's digests beside them.
"""

from __future__ import annotations

import hashlib
import time

import torch

from attention_dynamics.models.registry import architecture_config, build_model
from attention_dynamics.sequence_training import SequenceTrainingConfig, train_sequence_model
from attention_dynamics.tasks.bijection import BijectionTask
from attention_dynamics.validation import check_choice

REFERENCE_MODELS = {
    "transformer": dict(n_layers=2, n_heads=4, d_model=32, init_std=0.1),
    "mamba": dict(n_layers=1, d_model=32, d_state=8),
    "lstm": dict(n_layers=2, d_model=32),
}
"""The three architectures and their sizes, by registry name."""

REFERENCE_STEPS = 300
"""Training steps per model (batch 32, learning rate 0.01, bijection elimination on 8 symbols)."""

REFERENCE_DIGESTS = {
    "transformer": "5f9bcac45d4425af97d6fd18ca454f3afaa272945f48332dfde18094aaad157f",
    "mamba": "0dfa3ce999647b861a95c10702d83e44a9ab361d588d79cdf5fcf9e1e2b4a422",
    "lstm": "ed2be29fcc1ba3239c0b7fad1fa406893ea64cc13cc08c5d3d78a9dc8e677405",
}
"""SHA-256 (hex) of each model's parameters after training, as the book's machines compute it
(torch 2.13.0, one thread, the CPU dispatch pinned to AVX2)."""


def parameter_digest(model: torch.nn.Module) -> str:
    """SHA-256 (hex) of ``model``'s parameters: each one's name, shape and float bytes, in the
    order of ``named_parameters``."""
    digest = hashlib.sha256()
    for name, parameter in model.named_parameters():
        tensor = parameter.detach().cpu().contiguous()
        digest.update(f"{name}{tuple(tensor.shape)}{tensor.dtype}".encode())
        digest.update(tensor.numpy().tobytes())
    return digest.hexdigest()


def _trained(arch: str, steps: int) -> torch.nn.Module:
    """The reference model ``arch`` after ``steps`` training steps on one CPU thread (the
    process's thread count is restored afterwards)."""
    check_choice("arch", arch, tuple(REFERENCE_MODELS))
    if not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be a non-negative int; got {steps!r}")
    task = BijectionTask(n_symbols=8)
    config = architecture_config(arch, task.vocab_size, task.seq_len, **REFERENCE_MODELS[arch])
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = build_model(config, torch.Generator().manual_seed(1))
        training = SequenceTrainingConfig(steps=steps, batch_size=32, lr=1e-2, warmup_steps=20)
        train_sequence_model(model, task, training, torch.Generator().manual_seed(2))
    finally:
        torch.set_num_threads(threads)
    return model


def training_digest(arch: str, steps: int = REFERENCE_STEPS) -> str:
    """:func:`parameter_digest` of the reference model ``arch`` (one of
    :data:`REFERENCE_MODELS`) after ``steps`` training steps on the CPU, with one thread."""
    return parameter_digest(_trained(arch, steps))


def seconds_per_step(arch: str, steps: int = 100) -> float:
    """Wall seconds per training step of the reference model ``arch`` (sampling, forward,
    backward, update; one thread), over ``steps`` steps after a warm-up of 10. The CPU
    dispatch is the process's: compare pinned and unpinned in two processes."""
    _trained(arch, 10)
    start = time.perf_counter()
    _trained(arch, steps)
    return (time.perf_counter() - start) / max(steps, 1)


def machine_digests(steps: int = REFERENCE_STEPS) -> dict[str, str]:
    """:func:`training_digest` of every reference model, by name."""
    return {arch: training_digest(arch, steps) for arch in REFERENCE_MODELS}
