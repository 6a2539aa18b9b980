"""The built book in a real browser (headless Debian Chromium) and a static link check."""

import functools
import http.server
import os
import re
import shutil
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SCREENSHOTS = ROOT / "_build" / "screenshots"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class _Links(HTMLParser):
    """Collects the ids of a page and the targets of its links and images."""

    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.targets: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.targets.append(attrs["href"])
        if tag == "img" and attrs.get("src"):
            self.targets.append(attrs["src"])


def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(errors="replace"))
    return parser


def test_internal_links_and_anchors_resolve(built_book):
    html = built_book / "html"
    pages = {p: _parse(p) for p in html.rglob("*.html") if "_static" not in p.parts}
    broken = []
    for page, links in pages.items():
        for target in links.targets:
            url = urlparse(target)
            if url.scheme or target.startswith(("mailto:", "javascript:")):
                continue
            path = (page.parent / unquote(url.path)).resolve() if url.path else page
            if not path.exists():
                broken.append(f"{page.relative_to(html)} -> {target} (no file)")
            elif url.fragment and path.suffix == ".html":
                ids = pages[path].ids if path in pages else _parse(path).ids
                if unquote(url.fragment) not in ids:
                    broken.append(f"{page.relative_to(html)} -> {target} (no anchor)")
    assert not broken, "\n".join(broken[:20])


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def served_book(built_book):
    handler = functools.partial(_QuietHandler, directory=str(built_book / "html"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _require_chromium():
    if CHROMIUM is None:
        if os.environ.get("REQUIRE_BROWSER"):
            pytest.fail("REQUIRE_BROWSER is set but no chromium is on the PATH")
        pytest.skip("Chromium is not installed (make test installs it with apt where it can)")


def _chapter_pages(built_book) -> list[str]:
    """Every page of the book, as paths relative to the HTML root."""
    html = built_book / "html"
    return sorted(str(p.relative_to(html)) for folder in ("book", "notebooks")
                  for p in (html / folder).glob("*.html"))


def test_every_page_renders_in_chromium(built_book, served_book):
    _require_chromium()
    from playwright.sync_api import sync_playwright

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    problems = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("requestfailed", lambda req: errors.append(f"request failed: {req.url}"))
        page.on("response", lambda r: errors.append(f"HTTP {r.status}: {r.url}")
                if r.status >= 400 else None)
        for relative in _chapter_pages(built_book):
            errors.clear()
            response = page.goto(f"{served_book}/{relative}", wait_until="load")
            if response is None or response.status != 200:
                problems.append(f"{relative}: HTTP {response and response.status}")
                continue
            has_math = page.evaluate("document.querySelectorAll('div.math, span.math').length")
            if has_math:
                page.wait_for_function("document.querySelectorAll('mjx-container').length > 0",
                                       timeout=20000)
                raw = page.evaluate("[...document.querySelectorAll('div.math, span.math')]"
                                    ".filter(e => !e.querySelector('mjx-container')).length")
                if raw:
                    problems.append(f"{relative}: {raw} equations not typeset")
            broken = page.evaluate("[...document.images].filter(i => !i.complete || "
                                   "i.naturalWidth === 0).map(i => i.src)")
            if broken:
                problems.append(f"{relative}: images not loaded {broken}")
            if errors:
                problems.append(f"{relative}: console errors {errors}")
            name = re.sub(r"[^A-Za-z0-9_-]", "_", relative.removesuffix(".html"))
            page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=False)
        browser.close()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("width", [390, 800, 1400])
def test_navigation_works_at_every_width(served_book, width):
    """Tap ☰ and "on this page", search, and follow "next", as a reader on that screen would."""
    _require_chromium()
    from playwright.sync_api import expect, sync_playwright

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto(f"{served_book}/book/score_gradient.html", wait_until="load")
        menu = page.locator(".primary-toggle:visible").first
        menu.click()
        if width < 992:  # narrow: the table of contents opens as a dialog
            expect(page.locator("#pst-primary-sidebar-modal")).to_have_attribute("open", "")
            expect(page.locator("#pst-primary-sidebar-modal a.reference").first).to_be_visible()
            page.screenshot(path=str(SCREENSHOTS / f"menu_open_{width}px.png"))
            page.keyboard.press("Escape")
            expect(page.locator("#pst-primary-sidebar-modal")).not_to_have_attribute("open", "")
            page.locator(".secondary-toggle:visible").first.click()
            expect(page.locator("#pst-secondary-sidebar-modal")).to_have_attribute("open", "")
            expect(page.locator("#pst-secondary-sidebar-modal nav a").first).to_be_visible()
            page.keyboard.press("Escape")
        else:  # wide: ☰ collapses the sidebar and brings it back
            sidebar = page.locator("#pst-primary-sidebar")
            expect(sidebar).to_have_class(re.compile(r"\bpst-sidebar-hidden\b"))
            menu.click()
            expect(sidebar).not_to_have_class(re.compile(r"\bpst-sidebar-hidden\b"))
        page.locator(".search-button:visible, .search-button-field:visible").first.click()
        search = page.locator("#pst-search-dialog")
        expect(search).to_have_attribute("open", "")
        search.locator("input").fill("advantage")
        search.locator("input").press("Enter")
        page.wait_for_url(re.compile(r"search\.html"))
        expect(page.locator("#search-results a").first).to_be_visible(timeout=15000)
        page.goto(f"{served_book}/book/score_gradient.html", wait_until="load")
        page.locator("a.right-next").click()
        page.wait_for_load_state("load")
        assert not page.url.endswith("book/score_gradient.html")
        browser.close()


# display equations whose typeset width exceeds their column, and how the widest box around
# them handles it (MathJax's container scrolls sideways by itself)
_OVERFLOWING_MATH = """() => [...document.querySelectorAll('div.math')].filter(d => {
  const c = d.querySelector('mjx-container');
  return c && c.scrollWidth > d.clientWidth + 1;
}).map(d => {
  const c = d.querySelector('mjx-container');
  const box = ['auto', 'scroll'].includes(getComputedStyle(c).overflowX) ? c : d;
  return {id: d.id, scrolls: getComputedStyle(box).overflowX,
          fits: box.clientWidth <= d.clientWidth + 1};
})"""


@pytest.mark.parametrize("width", [390, 1400])
def test_equations_fit_their_column_or_scroll(built_book, served_book, width):
    """At desktop width every display equation fits its column; on a phone the wide ones
    scroll sideways instead of being clipped."""
    _require_chromium()
    from playwright.sync_api import sync_playwright

    problems = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": 900})
        for relative in _chapter_pages(built_book):
            if not relative.startswith("book/"):
                continue
            page.goto(f"{served_book}/{relative}", wait_until="load")
            if not page.evaluate("document.querySelectorAll('div.math').length"):
                continue
            page.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise",
                                   timeout=20000)
            page.evaluate("MathJax.startup.promise")
            for equation in page.evaluate(_OVERFLOWING_MATH):
                if width >= 1000 or equation["scrolls"] not in ("auto", "scroll") \
                        or not equation["fits"]:
                    problems.append(f"{relative} at {width}px: {equation}")
        browser.close()
    assert not problems, "\n".join(problems)


def test_figures_open_at_full_size_on_a_click(served_book):
    _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        for relative in ("book/score_gradient.html", "notebooks/score_gradient.html"):
            page.goto(f"{served_book}/{relative}", wait_until="load")
            # an image is wrapped in a link to itself (ours, or Sphinx's for a scaled figure)
            images = page.evaluate("[...document.querySelectorAll('article img')].map(i => "
                                   "[(i.closest('a[href]') || {}).href === i.src, i.src])")
            assert images and all(linked for linked, _ in images), (relative, images)
        browser.close()
