"""What the book's notebooks and pages need beyond the science.

- :mod:`~attention_dynamics.book.notebook` — one set-up call at the top of every notebook;
- :mod:`~attention_dynamics.book.results` — each notebook's results file, and glue;
- :mod:`~attention_dynamics.book.plotting` — one figure style, figures handed to the pages;
- :mod:`~attention_dynamics.book.paper_numbers` — the numbers the papers report, with sources;
- :mod:`~attention_dynamics.book.formatting` — one way to write a number in a table;
- :mod:`~attention_dynamics.book.verdicts` — the reproduction report's rules;
- :mod:`~attention_dynamics.book.report` — the report's ledger, texts, tables and figure;
- :mod:`~attention_dynamics.book.benchmarking` — side-by-side speed measurements.
"""
