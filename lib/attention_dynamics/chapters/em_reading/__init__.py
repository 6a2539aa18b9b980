"""Chapter 3's sticky Markov chain, EM-like against SGD, reproduced and extended.

Paper II's experiment at the authors' settings (:mod:`.reproduction`: the chain and its exact
predictor, the runs, the held-out scores, the value vectors' paths, the order of settling, the
EM checks, the values solved exactly) and what it does not show (:mod:`.extensions`: fresh
sequences, the value-multiplier sweep, the long horizon, Adam, the deep variant); figures in
:mod:`.figures`, tables in :mod:`.tables`, the seed counts in words in :mod:`.words`.
"""

from attention_dynamics.chapters.em_reading.experiment import EmReadingRun, run
from attention_dynamics.chapters.em_reading.settings import SETTINGS, settings

__all__ = ["SETTINGS", "EmReadingRun", "run", "settings"]
