"""Sphinx extension: the library is one click away from every page.

With ``library_wheel`` set (the path of the library's wheel; the book build sets it, see
``scripts/book_build/staging.py``), the wheel is copied into the HTML as ``wheel/<file>.whl``
and every page links it: a button in the article's header (on every page, the indexes and
the search page included) and an entry in the download menu (on pages that have one). Their
tooltip gives the one line that installs it with what a downloaded notebook needs,
``pip install "<file>.whl[notebooks]"``, after PyTorch's CPU build of torch on a machine without an
NVIDIA GPU. Without it (a plain ``jupyter-book build``) nothing changes.
"""

import shutil
from pathlib import Path

WHEEL_FOLDER = "wheel"
EXTRA = "notebooks"


def install_line(wheel_name: str) -> str:
    """The command that installs the library from its wheel with the notebooks' packages."""
    return f'pip install "{wheel_name}[{EXTRA}]"'


def _wheel(app) -> Path | None:
    return Path(app.config.library_wheel) if app.config.library_wheel else None


def _add_buttons(app, pagename, templatename, context, doctree):
    wheel = _wheel(app)
    if wheel is None or "header_buttons" not in context:
        return
    url = context["pathto"](f"{WHEEL_FOLDER}/{wheel.name}", 1)
    tooltip = (f"Install the library: download its wheel, then {install_line(wheel.name)} "
               "(without an NVIDIA GPU, PyTorch's CPU build of torch first: see the introduction)")
    for button in context["header_buttons"]:
        if button.get("label") == "download-buttons":
            button["buttons"].append({"type": "link", "url": url, "text": "library .whl",
                                      "tooltip": tooltip, "icon": "fas fa-box-open",
                                      "label": "download-library-button"})
    context["header_buttons"].insert(0, {
        "type": "link", "url": url, "tooltip": tooltip, "icon": "fas fa-box-open",
        "label": "install-library-button", "classes": "pst-navbar-icon"})


def _copy_wheel(app, exception):
    wheel = _wheel(app)
    if exception is None and wheel is not None and app.builder.format == "html":
        (Path(app.outdir) / WHEEL_FOLDER).mkdir(exist_ok=True)
        shutil.copy2(wheel, Path(app.outdir) / WHEEL_FOLDER / wheel.name)


def _check_wheel(app, config):
    wheel = _wheel(app)
    if wheel is not None and (wheel.suffix != ".whl" or not wheel.is_file()):
        from sphinx.errors import ConfigError

        raise ConfigError(f"library_wheel: {wheel} is not a wheel file")


def setup(app):
    app.add_config_value("library_wheel", "", "html", types=[str])
    app.connect("config-inited", _check_wheel)
    # after sphinx-book-theme has made its buttons (priority 501)
    app.connect("html-page-context", _add_buttons, priority=600)
    app.connect("build-finished", _copy_wheel)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
