"""Attention dynamics: the library behind the book *Gradient Dynamics of Attention*.

Modules, lowest layer first (a module imports only from layers above it in this list):

- tools: :mod:`~attention_dynamics.runtime` (profile, device, seed),
  :mod:`~attention_dynamics.validation` (argument checks), :mod:`~attention_dynamics.timing`.
- exact inference and tasks: :mod:`~attention_dynamics.bayes` (log-space forward filter,
  entropies) and :mod:`~attention_dynamics.tasks` (sticky Markov chain, bijection elimination,
  HMM filtering, associative recall, each with its exact answer).
- attention and its gradients: :mod:`~attention_dynamics.attention`,
  :mod:`~attention_dynamics.gradients`, :mod:`~attention_dynamics.problems`.
- models: :mod:`~attention_dynamics.sticky_model` (Paper II's one-head model),
  :mod:`~attention_dynamics.deep_sticky` (its deep variant),
  :mod:`~attention_dynamics.toy_routing` (chapter 2's toy) and :mod:`~attention_dynamics.models`
  (transformer, Mamba, LSTM, MLP).
- training and measurement: :mod:`~attention_dynamics.training`,
  :mod:`~attention_dynamics.sequence_training`, :mod:`~attention_dynamics.architectures`
  (chapter 5's comparison), :mod:`~attention_dynamics.em_dynamics` (chapter 3's measures),
  :mod:`~attention_dynamics.metrics`,
  :mod:`~attention_dynamics.specialization`, :mod:`~attention_dynamics.geometry`,
  :mod:`~attention_dynamics.benchmarking`.
- the book: :mod:`~attention_dynamics.plotting`, :mod:`~attention_dynamics.results`,
  :mod:`~attention_dynamics.verdicts`.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("attention-dynamics")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"
