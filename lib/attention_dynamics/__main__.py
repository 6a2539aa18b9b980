"""``python -m attention_dynamics``: the command line (:mod:`attention_dynamics.cli`)."""

import sys

from attention_dynamics.cli import main

sys.exit(main())
