"""Chapter 2's experiment, in which values become prototypes on a toy routing problem.

One attention head routes queries of ``G`` latent groups over ``M`` slots with free values
(logit vectors read out by the identity). The chapter checks the value-update identity, trains
the head coupled, with routing frozen and with values frozen, follows the feedback and
curvature parts of a value step, and asks whether the coupled run's lead is the loop or only
capacity (recombined halves, sequential orders, the symmetric state, a sweep over initial
scales, EM with the values solved).

- :mod:`.settings`: ``SETTINGS`` per profile, :func:`.settings.settings`, the shared constants;
- :mod:`.conditions`: the identity check, the conditions, uniform attention, feedback;
- :mod:`.controls`: the capacity controls, the symmetric state, the sweep, EM;
- :mod:`.figures`: the figures and the EM table;
- :mod:`.experiment`: :func:`.experiment.run`, every part in the notebook's order.
"""

from attention_dynamics.chapters.value_update.experiment import ValueUpdateRun, chapter_seeds, run
from attention_dynamics.chapters.value_update.settings import SETTINGS, settings, toy_config

__all__ = ["SETTINGS", "ValueUpdateRun", "chapter_seeds", "run", "settings", "toy_config"]
