"""Chapter 4's experiment, manifold formation in the Bayesian wind tunnels.

A small transformer trained on Paper I's wind tunnels, bijection elimination (in both token
layouts of the authors' code) and HMM filtering, whose exact posteriors are known: how well its
predictive entropy follows the Bayes entropy, whether its keys form a frame, how queries align
with keys, whether its representations lie on a low-dimensional manifold ordered by the
entropy, and whether routing settles before precision does; every geometric number beside its
nulls (initialisation, a capacity-matched MLP, the position alone).

- :mod:`.settings`: ``SETTINGS`` per profile, :func:`.settings.settings`, the shared constants;
- :mod:`.training`: training and scoring every run, the seeds of the repeated runs;
- :mod:`.probes`: a run's checkpoints loaded on demand, probe sequences and their parts;
- :mod:`.calibration`: (a) bijections, (b) HMM filtering and length, (c) the MLPs;
- :mod:`.keys`: (d) key orthogonality by both definitions, against initialisations;
- :mod:`.alignment`: (d) query-key alignment;
- :mod:`.ablation`: (e) the heads that carry the computation;
- :mod:`.value_manifold`: (f) every manifold protocol against three nulls;
- :mod:`.beyond_position`: (f) an entropy axis beyond the position (HMM, keys with replacement);
- :mod:`.frame`: (g) frame and precision over constant-rate training;
- :mod:`.seeds`: (h) the judged numbers on every seed;
- :mod:`.figures` and :mod:`.tables`: the page's figures and tables;
- :mod:`.experiment`: :func:`.experiment.run`, every part in the notebook's order.
"""

from attention_dynamics.chapters.manifold_formation.experiment import ManifoldFormationRun, run
from attention_dynamics.chapters.manifold_formation.settings import SETTINGS, settings

__all__ = ["SETTINGS", "ManifoldFormationRun", "run", "settings"]
