"""The book's chapters as library modules: each chapter's experiment, run from code.

One module per chapter notebook, named after it. Each holds

- ``SETTINGS``: the chapter's settings per profile (``quick``, ``decide``, ``paper``) and
  ``settings(profile, n_seeds=None)``, which returns a copy (``n_seeds`` overrides the
  number of seeds where the chapter trains on several);
- experiment functions that take their inputs as arguments (settings, device, seed) and return
  typed results (dataclasses), recording each metric into a
  :class:`~attention_dynamics.book.results.Results`;
- figure functions: results in, a matplotlib figure out;
- ``run(results, settings, device, seed)``: the whole experiment, part by part; it returns a
  dataclass of every part's result.

A notebook and the command line (``python -m attention_dynamics run CHAPTER``) both take the
settings from :func:`~attention_dynamics.book.notebook.chapter_settings` (a profile's, or a JSON
file's) and call ``run`` once, so that they run one experiment and write the same results file
(``tests/test_chapter_paths.py`` checks it at a tiny size for every chapter). The notebook then
shows the parts' figures and tables from what ``run`` returned, and narrates.
"""

CHAPTERS = ("score_gradient", "value_update", "em_reading", "manifold_formation", "content_routing")
"""The five chapter modules, in the book's order, each named after its notebook."""
