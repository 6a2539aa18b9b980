"""Chapter 1's experiment, in which the score gradient's closed form is checked.

The advantage law ``dL/ds_ij = alpha_ij A_ij`` and its corollaries against autograd on random
problems; the matrices ``B``, ``A`` and ``dL/ds`` of one head; what one descent step on the
scores, and one on the weights ``W_Q``, ``W_K``, does to the attention mass on the better keys,
on random heads and on trained sticky-chain heads; and the cost of the closed-form diagnostics.

- :mod:`.settings`: ``SETTINGS`` per profile, :func:`.settings.settings`, the shared constants;
- :mod:`.checks`: the parts, each recording its metrics;
- :mod:`.figures` and :mod:`.tables`: results in, a figure or a table out;
- :mod:`.experiment`: :func:`.experiment.run`, every part in the notebook's order.
"""

from attention_dynamics.chapters.score_gradient.experiment import ScoreGradientRun, run
from attention_dynamics.chapters.score_gradient.settings import SETTINGS, settings

__all__ = ["SETTINGS", "ScoreGradientRun", "run", "settings"]
