"""Sphinx extension: inline math keeps its punctuation on its line.

MathJax draws inline math as an inline block, and a browser may break a line on either side of
one: a comma after ``$B$`` or an opening bracket before ``$\\partial L/\\partial s$`` then lands
alone at the start or the end of a line, which happens often on a phone. This wraps each inline
math node, with the closing punctuation right after it and the opening bracket right before it,
in a ``span.math-nowrap`` that does not break inside (``static/reading_aids.css``).
"""

from __future__ import annotations

import re

from docutils import nodes

CLOSING = re.compile(r"^[,.;:!?)\]’”%]+")
"""Punctuation that must stay after the math it follows."""

OPENING = re.compile(r"[(\[‘“]+$")
"""Brackets and quotes that must stay before the math they open."""


def bind_punctuation(math: nodes.math) -> bool:
    """Wrap ``math`` with the punctuation that touches it in a ``math-nowrap`` inline; return
    whether there was any."""
    parent = math.parent
    if parent is None:
        return False
    index = parent.index(math)
    before = parent[index - 1] if index > 0 else None
    after = parent[index + 1] if index + 1 < len(parent) else None
    opening = OPENING.search(before.astext()) if isinstance(before, nodes.Text) else None
    closing = CLOSING.match(after.astext()) if isinstance(after, nodes.Text) else None
    if not (opening or closing):
        return False
    wrapper = nodes.inline(classes=["math-nowrap"])
    if opening:
        wrapper += nodes.Text(opening.group())
    wrapper += math.deepcopy()
    if closing:
        wrapper += nodes.Text(closing.group())
    parts = []
    if opening and opening.start() > 0:
        parts.append(nodes.Text(before.astext()[:opening.start()]))
    parts.append(wrapper)
    if closing and closing.end() < len(after.astext()):
        parts.append(nodes.Text(after.astext()[closing.end():]))
    start = index - 1 if opening else index
    stop = index + 2 if closing else index + 1
    parent[start:stop] = parts
    return True


def _bind_all(app, doctree: nodes.document) -> None:
    for math in list(doctree.findall(nodes.math)):
        bind_punctuation(math)


def setup(app):
    app.connect("doctree-read", _bind_all)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
