"""Sphinx extension: the library reference shows a module constant's value only when it is short.

Autodoc writes every documented module constant with its value. For a number or a short tuple
that is the useful part (``FRAME_RANK = 3``); for a chapter's settings per profile it is a
dictionary of several hundred characters on one line, which the reader cannot take in and which
the constant's docstring and its module's source describe better. Values whose text is longer
than :data:`MAX_VALUE_CHARS` are left out; their name, type and docstring stay.
"""

from sphinx.ext.autodoc import DataDocumenter
from sphinx.util.inspect import object_description

MAX_VALUE_CHARS = 60
"""The longest value text (in characters) that the reference still shows."""


def shows_value(value: object) -> bool:
    """Whether the reference shows ``value``: its text fits in :data:`MAX_VALUE_CHARS`."""
    try:
        text = object_description(value)
    except ValueError:  # autodoc leaves out what it cannot describe
        return False
    return len(text) <= MAX_VALUE_CHARS and "\n" not in text


class ShortValueDataDocumenter(DataDocumenter):
    """Autodoc's documenter of module constants, leaving out values too long to read."""

    def should_suppress_value_header(self) -> bool:
        return super().should_suppress_value_header() or not shows_value(self.object)


def setup(app):
    app.setup_extension("sphinx.ext.autodoc")
    app.add_autodocumenter(ShortValueDataDocumenter, override=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
