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


def _chapter_pages(built_book) -> list[str]:
    """Every page of the book, as paths relative to the HTML root."""
    html = built_book / "html"
    return sorted(str(p.relative_to(html)) for folder in ("book", "notebooks")
                  for p in (html / folder).glob("*.html"))


def test_every_page_renders_in_chromium(built_book, served_book):
    if CHROMIUM is None:
        if os.environ.get("REQUIRE_BROWSER"):
            pytest.fail("REQUIRE_BROWSER is set but no chromium is on the PATH")
        pytest.skip("Chromium is not installed (make test installs it with apt where it can)")
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
