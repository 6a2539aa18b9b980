"""Chapter 5's experiment, in which four architectures matched in parameters meet the wind tunnels.

A transformer, a Mamba, an LSTM and a per-position MLP trained on bijection elimination, HMM
filtering and associative recall, scored against the exact answers, then looked inside.

- :mod:`.settings`: ``SETTINGS`` per profile, :func:`.settings.settings`, the shared constants;
- :mod:`.architectures`: the tasks, the architectures matched in parameters, the sizes;
- :mod:`.training`: every training planned from the settings, and every architecture trained
  on every task and seed (the units of a run in parts: :func:`.training.units`,
  :func:`.training.unit_trainer`);
- :mod:`.scores`: the table, its nulls and the comparisons the page words;
- :mod:`.solving`: the step from which the transformer solves each task;
- :mod:`.words`: the page's words for the results (no part imports it);
- :mod:`.capacity`: the capacity question (fewer state addresses than pairs);
- :mod:`.deep_mamba`: the authors' Mamba and the standard one, deeper, on HMM filtering;
- :mod:`.hmm_reading`: who reads the HMM's matrices (model against Bayes entropy);
- :mod:`.manifolds`: the value manifolds against the Bayes entropy;
- :mod:`.probes`: where each model reads on associative recall, over training;
- :mod:`.gradients`: the gradient at the Mamba's implicit attention against the softmax's;
- :mod:`.figures`: the figures;
- :mod:`.experiment`: :func:`.experiment.run`, every part in the notebook's order.
"""

from attention_dynamics.chapters.content_routing.experiment import ContentRoutingRun, run
from attention_dynamics.chapters.content_routing.settings import SETTINGS, chapter_seeds, settings
from attention_dynamics.chapters.content_routing.training import unit_trainer, units

__all__ = ["SETTINGS", "ContentRoutingRun", "chapter_seeds", "run", "settings", "unit_trainer",
           "units"]
