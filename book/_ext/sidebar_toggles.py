"""Sphinx extension: make every sidebar toggle button of the page work.

pydata-sphinx-theme 0.17 (which sphinx-book-theme 1.3 pins) renders a primary and a secondary
toggle in its header, and sphinx-book-theme renders its own in the article header; both themes
bind their handlers with ``document.querySelector``, i.e. to the *first* button of each kind,
which is the header's, hidden at every width. The visible buttons (☰ and "on this page") then
do nothing (pydata-sphinx-theme issue 2451). This script forwards a click on any other button
of a kind to the first one, so the themes' own handlers run: on a narrow screen the sidebar
opens as a dialog, on a wide one ☰ collapses the primary sidebar.
"""

FORWARD_CLICKS = """
document.addEventListener("DOMContentLoaded", () => {
  for (const kind of ["primary-toggle", "secondary-toggle"]) {
    const [bound, ...others] = document.querySelectorAll("." + kind);
    for (const button of others) {
      button.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopPropagation();
        button.blur();
        bound.click();
      });
    }
  }
});
"""


def setup(app):
    app.add_js_file(None, body=FORWARD_CLICKS)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
