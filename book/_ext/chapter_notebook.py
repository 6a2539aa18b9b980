"""Sphinx extension: a chapter's page links the download of its notebook.

A chapter is a derivation page ``book/<name>`` with its notebook ``notebooks/<name>`` beneath it
(``_toc.yml``). The notebook's page offers the notebook for download (the theme's ``.ipynb``
entry, ``_sources/notebooks/<name>.ipynb``, which the book build replaces by a copy that
installs what it needs and runs outside the book); the chapter's page offers the same file: an
entry in its download menu and a line under its title. Pages without such a notebook are left
as they are.
"""

import posixpath

from docutils import nodes

NOTEBOOKS = "notebooks"
TOOLTIP = "Download this chapter's notebook: it installs what it needs and runs on a CPU"


def chapter_notebook(docname: str, docnames) -> str | None:
    """The notebook of chapter page ``docname`` (``book/x`` -> ``notebooks/x``) if it is one of
    ``docnames``, else None."""
    folder, _, name = docname.rpartition("/")
    notebook = f"{NOTEBOOKS}/{name}"
    return notebook if folder != NOTEBOOKS and notebook in docnames else None


def download_path(notebook: str) -> str:
    """The notebook's download from the site's root (where Sphinx copies its source)."""
    return f"_sources/{notebook}.ipynb"


def _add_line(app, doctree, docname):
    notebook = chapter_notebook(docname, app.env.found_docs)
    if notebook is None or app.builder.name != "html":
        return
    section = doctree.next_node(nodes.section)
    if section is None or not section.children or not isinstance(section[0], nodes.title):
        return
    url = posixpath.relpath(download_path(notebook), posixpath.dirname(docname) or ".")
    link = nodes.reference("", "", nodes.literal("", f"{notebook.rpartition('/')[2]}.ipynb"),
                           refuri=url, reftitle=TOOLTIP)
    line = nodes.paragraph("", "", nodes.Text("Run this chapter yourself: download its notebook "),
                           link, nodes.Text(", which installs what it needs (see "),
                           nodes.emphasis("", "Running this code"),
                           nodes.Text(" at its top)."), classes=["chapter-notebook"])
    section.insert(1, line)


def _add_menu_entry(app, pagename, templatename, context, doctree):
    notebook = chapter_notebook(pagename, app.env.found_docs)
    if notebook is None or "header_buttons" not in context:
        return
    for button in context["header_buttons"]:
        if button.get("label") == "download-buttons":
            button["buttons"].insert(0, {
                "type": "link", "url": context["pathto"](download_path(notebook), 1),
                "text": "notebook .ipynb", "tooltip": TOOLTIP, "icon": "fas fa-code",
                "label": "download-notebook-button"})


def setup(app):
    app.connect("doctree-resolved", _add_line)
    # after sphinx-book-theme has made its buttons (priority 501)
    app.connect("html-page-context", _add_menu_entry, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
