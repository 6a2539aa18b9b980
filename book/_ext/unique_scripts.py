"""Sphinx extension: drop repeated inline scripts from each page.

Jupyter Book 1 registers the inline configuration scripts of sphinx-thebe and
sphinx-togglebutton twice (once with the application, once with the builder, with different
priorities and an empty filename given as ``None`` or ``""``), so every page declares
``const THEBE_JS_URL`` twice and the browser reports a SyntaxError. This keeps the first of
each script with the same source and attributes.
"""


def _drop_repeats(app, pagename, templatename, context, doctree):
    seen, unique = set(), []
    for script in context.get("script_files", []):
        # the two registrations differ in priority and in filename (None against "")
        key = (getattr(script, "filename", script) or "",
               tuple(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def setup(app):
    app.connect("html-page-context", _drop_repeats, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
