"""Sphinx extension: aids to reading a page, folded proofs and figures that open full size.

- Every proof (a ``prf:proof`` with ``:class: fold``) is folded under a "Proof" line that
  opens it, so that a page reads as its statements first.
- Every figure image (chapter figures and notebook outputs) opens at full size on a click, in a
  new tab, so that a multi-panel figure shown at column width can be read at its natural size.
"""

from pathlib import Path

FOLD_PROOFS = """
document.addEventListener("DOMContentLoaded", () => {
  for (const proof of document.querySelectorAll("div.proof.fold")) {
    const details = document.createElement("details");
    details.className = "proof-fold";
    const summary = document.createElement("summary");
    summary.textContent = "Proof";
    details.appendChild(summary);
    proof.replaceWith(details);
    details.appendChild(proof);
  }
});
"""

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
    app.add_css_file("reading_aids.css")
    app.add_js_file(None, body=FOLD_PROOFS)
    app.add_js_file(None, body=ENLARGE_ON_CLICK)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
