"""Sphinx extension: no thebe machinery where the book runs no code in the page.

Jupyter Book 1 always loads sphinx-thebe, which puts on every page a configuration that points
at a Binder example repository (``binder-examples/jupyter-stacks-datascience``), a script that
names thebe's CDN address, and thebe's script and style sheet, even when thebe is off (as in
this book's ``_config.yml``, and with the launch buttons of a book built with a repository,
which are plain links). Unless ``launch_buttons`` turns thebe on, this drops all of it: the
pages keep only what they use.
"""


def launches(theme_options: dict) -> bool:
    """Whether the theme's options turn thebe (live code in the page) on."""
    buttons = theme_options.get("launch_buttons") or {}
    return str(buttons.get("thebe")).lower() == "true"


def _is_thebe(asset) -> bool:
    filename = str(getattr(asset, "filename", asset) or "")
    body = str(getattr(asset, "attributes", {}).get("body", ""))
    return "sphinx-thebe" in filename or "THEBE_JS_URL" in body


def _stop_thebe_config(app):
    if launches(app.config.html_theme_options):
        return
    for listener in list(app.events.listeners.get("doctree-resolved", [])):
        if getattr(listener.handler, "__module__", "") == "sphinx_thebe":
            app.disconnect(listener.id)


def _drop_thebe_assets(app, pagename, templatename, context, doctree):
    if launches(app.config.html_theme_options):
        return
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [asset for asset in context[key] if not _is_thebe(asset)]


def setup(app):
    app.connect("builder-inited", _stop_thebe_config)
    app.connect("html-page-context", _drop_thebe_assets, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
