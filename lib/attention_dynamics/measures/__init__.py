"""What the book measures of a model, each module one kind of measurement.

- :mod:`~attention_dynamics.measures.metrics` — a model's predictive against the exact Bayes
  predictive (entropy MAE, KL, in bits) and the training losses on a task batch;
- :mod:`~attention_dynamics.measures.geometry` — PCA, key frames, query-key alignment,
  manifold-entropy correlation, attention and representation drift, position-controlled
  correlations, principal angles between subspaces;
- :mod:`~attention_dynamics.measures.value_manifold` — the value manifold under each of the
  authors' protocols, with the references a position alone gives;
- :mod:`~attention_dynamics.measures.representations` — the last residual stream of a model,
  before and after its final norm;
- :mod:`~attention_dynamics.measures.frame_precision` — frame against precision: the loss
  gradient at attention scores against values, per layer, and the stability of a linear
  probe's direction over training;
- :mod:`~attention_dynamics.measures.trajectories` — snapshots over training, first crossing,
  settling, path shape;
- :mod:`~attention_dynamics.measures.specialization` — chapter 2's value update, its feedback
  on routing, routing and prototype specialization;
- :mod:`~attention_dynamics.measures.routing_probes` — which stored pair a query reads
  (mixing weights, input attributions), the last layer's representations;
- :mod:`~attention_dynamics.measures.scan_gradients` — the routing gradients of a selective
  scan and of softmax scores.
"""
