"""Attention dynamics: the library behind the book *Gradient Dynamics of Attention*.

Modules, lowest first (a module imports only those above it in this list):

- :mod:`~attention_dynamics.runtime` — device choice, seeding, profile names.
- :mod:`~attention_dynamics.attention` — causal attention heads that expose their internals.
- :mod:`~attention_dynamics.gradients` — closed-form gradients of an attention head.
- :mod:`~attention_dynamics.plotting` — the figure style of the book.
- :mod:`~attention_dynamics.results` — the per-notebook results file.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("attention-dynamics")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"
