"""Sphinx extension: the search ranks the chapters before the library reference.

The reference (``book/api``) documents every function, and its objects score high in Sphinx's
search (an object's name matches before a page's words do), so a word that a chapter explains
and a docstring mentions listed the docstrings first. ``static/search_scorer.js``, set as
``html_search_scorer``, keeps Sphinx's weights and moves every result of the reference after
the others.
"""

from pathlib import Path

SCORER = Path(__file__).parent / "static" / "search_scorer.js"


def _set_scorer(app, config):
    if not config.html_search_scorer:
        config.html_search_scorer = str(SCORER)  # an absolute path: joined to confdir as is


def setup(app):
    app.connect("config-inited", _set_scorer)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
