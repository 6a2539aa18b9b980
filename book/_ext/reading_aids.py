"""Sphinx extension: aids to reading a page: folded proofs, figures that open full size, and
every page fitting its screen, down to a 390 px phone.

- Every proof (a ``prf:proof`` with ``:class: fold``) is folded under a "Proof" line that
  opens it, so that a page reads as its statements first.
- Every image of the article (chapter figures, notebook outputs) opens at full size on a click
  or a tap, in a new tab, so that a multi-panel figure shown at column width (tiny on a phone)
  can be read at its natural size.
- ``static/page_fit.css``: the theme's extra top bar (a second search field) is hidden, the
  build banner is short on a phone, long identifiers (file paths, dotted names, signatures) and
  index entries break inside their box.
- A script wraps every table of the article that is in no scrolling box yet (the tables a
  notebook prints with pandas; the theme wraps only the tables of the text) in a ``.scroll-box``
  that scrolls sideways, so that a wide table scrolls inside the column instead of widening the
  page. The indexes' tables are left alone: their entries break instead.
- A script marks each box that scrolls sideways (a wide equation, a table) on the side that has
  more to see (``fade-left``, ``fade-right``), as it scrolls and as the window changes; the CSS
  fades that side out, so that a reader sees that there is more.
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
  for (const image of document.querySelectorAll(".bd-article img:not(.toggler)")) {
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


WRAP_TABLES = """
document.addEventListener("DOMContentLoaded", () => {
  for (const table of document.querySelectorAll(".bd-article table")) {
    if (table.closest(".pst-scrollable-table-container, .scroll-box, .indextable")
        || table.parentElement.closest("table")) continue;
    const box = document.createElement("div");
    box.className = "scroll-box";
    table.replaceWith(box);
    box.appendChild(table);
  }
});
"""


MARK_SCROLLING = """
(() => {
  const BOXES = ".bd-article div.math mjx-container[display='true'], "
    + ".bd-article .pst-scrollable-table-container, .bd-article .scroll-box";
  const mark = (box) => {
    const more = box.scrollWidth - box.clientWidth;  // a few px are a glyph's overhang, not more
    box.classList.toggle("fade-left", more > 3 && box.scrollLeft > 1);
    box.classList.toggle("fade-right", more > 3 && box.scrollLeft < more - 1);
  };
  const watch = () => {
    const resized = new ResizeObserver((entries) => entries.forEach((e) => mark(e.target)));
    for (const box of document.querySelectorAll(BOXES)) {
      mark(box);  // again after MathJax: an equation's box keeps its size as its content grows
      if (box.dataset.fadeWatched) continue;
      box.dataset.fadeWatched = "1";
      box.addEventListener("scroll", () => mark(box), {passive: true});
      resized.observe(box);
    }
  };
  window.addEventListener("load", () => {
    watch();
    const typeset = window.MathJax && MathJax.startup && MathJax.startup.promise;
    if (typeset) typeset.then(watch);  // the equations' boxes exist once MathJax has run
  });
})();
"""


SCROLL_WIDE_INLINE_MATH = """
(() => {
  // an inline formula wider than its column (on a phone) scrolls in its own box instead of
  // running past the column's edge, where it would be clipped
  const fit = () => {
    for (const math of document.querySelectorAll(
        ".bd-article mjx-container:not([display='true'])")) {
      const column = math.closest("p, li, dd, td, th, div");
      if (!column) continue;
      math.classList.remove("wide-inline-math");
      if (math.getBoundingClientRect().width > column.clientWidth) {
        math.classList.add("wide-inline-math");
      }
    }
  };
  window.addEventListener("load", () => {
    const typeset = window.MathJax && MathJax.startup && MathJax.startup.promise;
    if (typeset) typeset.then(fit); else fit();
  });
  window.addEventListener("resize", fit);
  document.addEventListener("toggle", fit, true);  // a folded proof's formulas, once opened
})();
"""


def _add_static_path(app):
    app.config.html_static_path.append(str(Path(__file__).parent / "static"))


def setup(app):
    app.connect("builder-inited", _add_static_path)
    app.add_css_file("reading_aids.css")
    app.add_css_file("page_fit.css")
    app.add_js_file(None, body=FOLD_PROOFS)
    app.add_js_file(None, body=ENLARGE_ON_CLICK)
    app.add_js_file(None, body=WRAP_TABLES)
    app.add_js_file(None, body=MARK_SCROLLING)
    app.add_js_file(None, body=SCROLL_WIDE_INLINE_MATH)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
