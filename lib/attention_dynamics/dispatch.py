"""The CPU dispatch pin: one seed, the same bits on every x86-64 machine with AVX2.

torch picks its CPU kernels by the processor's instruction set (AVX2 or AVX-512), MKL its BLAS
path, oneDNN its JIT kernels; each choice sums floating-point numbers in another order, and a
chaotic training run then ends elsewhere on another machine. :func:`pin_cpu_dispatch` sets all
three to AVX2 (:data:`PINNED_DISPATCH`; MKL in its strict mode) in the process's environment.
torch reads its variable at its first operation, not at import, so the pin holds when the
package is imported before any tensor is computed; importing :mod:`attention_dynamics` pins
(its ``__init__``).

The promise: same torch, same thread count, any x86-64 CPU with AVX2 (Intel or AMD) gives the
same bits. Not ARM, not GPUs. A variable set already is left as it is (a deliberate choice, which
:func:`dispatch_state` records and a results file then reports as not pinned), and
``ATTENTION_DYNAMICS_UNPINNED=1`` leaves all three unset (the benchmarks page times the pin's
cost that way). This module imports nothing heavy: it must run before torch computes anything.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

PINNED_DISPATCH = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_CBWR": "AVX2,STRICT",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
}
"""The pin's environment variables and their values (torch's kernel choice, MKL's conditional
numerical reproducibility mode, oneDNN's largest instruction set). MKL's mode is strict: without
``STRICT`` MKL promises the same bits only for aligned memory, and a least-squares fit of
chapter 5 moved in its last digit with the size of the process's environment."""

PINNED_CAPABILITY = "AVX2"
"""What ``torch.backends.cpu.get_cpu_capability()`` reports when the pin holds."""

UNPIN_VARIABLE = "ATTENTION_DYNAMICS_UNPINNED"
"""Set to ``1`` to leave the dispatch to torch, MKL and oneDNN (the machine's fastest path)."""


def pin_cpu_dispatch(environ: MutableMapping[str, str] | None = None) -> dict[str, str]:
    """Set each variable of :data:`PINNED_DISPATCH` that is not set in ``environ`` (default
    ``os.environ``), unless ``environ[UNPIN_VARIABLE]`` is ``1``; return the variables it set.
    Child processes (notebook kernels, workers) inherit the pin through the environment."""
    environ = os.environ if environ is None else environ
    if environ.get(UNPIN_VARIABLE) == "1":
        return {}
    missing = {name: value for name, value in PINNED_DISPATCH.items() if name not in environ}
    environ.update(missing)
    return missing


def child_environment(pinned: bool, environ: MutableMapping[str, str] | None = None
                      ) -> dict[str, str]:
    """A copy of ``environ`` (default ``os.environ``) for a child process that makes its own
    choice: without the pin's variables and :data:`UNPIN_VARIABLE`, so that the child pins when
    ``pinned`` (importing the package does) and leaves the dispatch to the machine otherwise."""
    environ = os.environ if environ is None else environ
    environment = {name: value for name, value in environ.items()
                   if name not in PINNED_DISPATCH and name != UNPIN_VARIABLE}
    if not pinned:
        environment[UNPIN_VARIABLE] = "1"
    return environment


def dispatch_state() -> dict[str, str]:
    """What this process's CPU kernels are: torch's capability (``AVX2``, ``AVX512``,
    ``DEFAULT``...), the three variables as set (``unset`` where not), and ``pinned``:
    ``yes`` when torch runs at :data:`PINNED_CAPABILITY` and every variable has its pinned
    value, else ``no``."""
    import torch

    state = {"cpu_capability": torch.backends.cpu.get_cpu_capability()}
    state.update({name.lower(): os.environ.get(name, "unset") for name in PINNED_DISPATCH})
    pinned = state["cpu_capability"] == PINNED_CAPABILITY and all(
        os.environ.get(name, "").upper() == value.upper() for name, value in PINNED_DISPATCH.items())
    state["pinned"] = "yes" if pinned else "no"
    return state


def unpinned_warning(state: dict[str, str]) -> str | None:
    """A warning for a run whose dispatch (``state``, from :func:`dispatch_state`) is not the
    pin's, naming what differs; ``None`` when pinned."""
    if state["pinned"] == "yes":
        return None
    found = ", ".join(f"{name}={value}" for name, value in state.items() if name != "pinned")
    return (f"CPU dispatch NOT pinned ({found}): this run's numbers may differ in their last bits "
            f"from a pinned run's, and a chaotic run's outcome may differ by more; pinned is "
            f"cpu_capability={PINNED_CAPABILITY} with "
            + ", ".join(f"{name}={value}" for name, value in PINNED_DISPATCH.items()))
