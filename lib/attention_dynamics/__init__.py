"""Attention dynamics: the library behind the book *Gradient Dynamics of Attention*.

The package follows the book's pipeline, one layer per step; a module imports only from the
layers above it in this list (the map, with a picture, is ``lib/attention_dynamics/README.md``):

1. **tools**: :mod:`~attention_dynamics.dispatch` (the CPU dispatch pin, applied on import),
   :mod:`~attention_dynamics.validation` (argument checks),
   :mod:`~attention_dynamics.runtime` (profile, device, seed, eval mode),
   :mod:`~attention_dynamics.timing`.
2. **tasks with exact answers**: :mod:`~attention_dynamics.bayes` (log-space forward filter,
   entropies) and :mod:`~attention_dynamics.tasks` (the contract in ``tasks.base``; the sticky
   Markov chain, bijection elimination, HMM filtering, associative recall).
3. **attention and its gradients**: :mod:`~attention_dynamics.attention` (the causal head and
   its record), :mod:`~attention_dynamics.gradients` (closed forms of chapter 1 and the
   cross-entropy upstream), :mod:`~attention_dynamics.parameter_step` (what a step on
   ``W_Q`` and ``W_K`` does to the scores), :mod:`~attention_dynamics.score_mixture` (the EM
   reading of a head: free energy, evidence, M-step), :mod:`~attention_dynamics.heads` (random
   heads for checking them).
4. **models**: :mod:`~attention_dynamics.models` (transformer, Mamba, LSTM, MLP; the registry
   and capacity matching).
5. **measures**: :mod:`~attention_dynamics.measures` (scores against the Bayes answer,
   geometry, trajectories, specialization, routing probes, scan gradients).
6. **training**: :mod:`~attention_dynamics.sequence_training` (any model on any task),
   :mod:`~attention_dynamics.bitwise` (does this machine compute the book's bits?);
   chapter studies with their own model and trainer: :mod:`~attention_dynamics.toy_routing`
   (chapter 2) and :mod:`~attention_dynamics.sticky` (Paper II's sticky chain, chapter 3).
7. **book support**: :mod:`~attention_dynamics.book` (notebook set-up, results files, figure
   style, the papers' numbers, verdicts, benchmarks).
"""

from importlib.metadata import PackageNotFoundError, version

from attention_dynamics.dispatch import pin_cpu_dispatch

pin_cpu_dispatch()  # before torch computes anything: the same bits on every x86-64 with AVX2

try:
    __version__ = version("attention-dynamics")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"
