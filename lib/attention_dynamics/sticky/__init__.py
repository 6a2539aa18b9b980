"""Paper II's sticky Markov chain experiment: its one-head model, deep variant, trainer, measures.

- :mod:`~attention_dynamics.sticky.model` — the batched one-head model with its closed-form
  gradients;
- :mod:`~attention_dynamics.sticky.deep` — the multi-layer transformer of the authors' script;
- :mod:`~attention_dynamics.sticky.training` — full-batch SGD, EM-like and Adam schedules, and
  the experiment at the authors' settings;
- :mod:`~attention_dynamics.sticky.exact_values` — the values solved exactly (a block-coordinate
  baseline);
- :mod:`~attention_dynamics.sticky.fresh` — online training on a fresh sequence every step;
- :mod:`~attention_dynamics.sticky.analysis` — chapter 3's measures on the trained heads.

The chain itself, and its exact Bayes predictive, are a task:
:mod:`~attention_dynamics.tasks.sticky_chain`.
"""
