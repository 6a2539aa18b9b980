"""Sphinx extension: keep wide content readable in a narrow column.

- A display equation wider than its column scrolls sideways instead of being clipped (phones).
- Every figure image (chapter figures and notebook outputs) opens at full size on a click, in a
  new tab, so that a multi-panel figure shown at column width can be read at its natural size.
"""

from pathlib import Path

ENLARGE_ON_CLICK = """
document.addEventListener("DOMContentLoaded", () => {
  const images = document.querySelectorAll(
    "article figure img, article .cell_output img, article .output img");
  for (const image of images) {
    if (image.closest("a")) continue;
    const link = document.createElement("a");
    link.href = image.currentSrc || image.src;
    link.target = "_blank";
    link.rel = "noopener";
    link.title = "Open the figure at full size";
    link.className = "enlarge-figure";
    image.replaceWith(link);
    link.appendChild(image);
  }
});
"""


def _add_static_path(app):
    app.config.html_static_path.append(str(Path(__file__).parent / "static"))


def setup(app):
    app.connect("builder-inited", _add_static_path)
    app.add_css_file("column_fit.css")
    app.add_js_file(None, body=ENLARGE_ON_CLICK)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
