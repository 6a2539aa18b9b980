"""The library reference (book/api.md) documents every module of the package."""

import pkgutil
import re
from pathlib import Path

import attention_dynamics

ROOT = Path(__file__).resolve().parents[1]


def test_every_module_has_a_section_in_the_reference():
    documented = set(re.findall(r"\.\. automodule:: (\S+)", (ROOT / "book" / "api.md").read_text()))
    modules = {info.name for info in pkgutil.walk_packages(attention_dynamics.__path__,
                                                           "attention_dynamics.")}
    skipped = {"attention_dynamics.__main__"}  # running it starts the command line
    assert sorted(modules - documented - skipped) == []
    assert sorted(documented - modules - {"attention_dynamics"}) == []
