"""The built book in a real browser (headless Debian Chromium) and a static link check."""

import contextlib
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
    """Every page of the book's text (chapters, notebooks, reference), as paths relative to the
    HTML root."""
    html = built_book / "html"
    return sorted(str(p.relative_to(html)) for folder in ("book", "notebooks")
                  for p in (html / folder).glob("*.html"))


def _all_pages(built_book) -> list[str]:
    """Every HTML page of the built book, Sphinx's too (the indexes, search), as paths relative
    to the HTML root; not the root's ``index.html``, which only redirects to the first page."""
    html = built_book / "html"
    pages = sorted(str(p.relative_to(html)) for p in html.rglob("*.html")
                   if not {"_static", "_sources", "_images"} & set(p.relative_to(html).parts)
                   and not re.search(r'http-equiv="refresh"', p.read_text(errors="replace"), re.I))
    assert {"genindex.html", "py-modindex.html", "search.html", "book/api.html"} <= set(pages)
    return pages


@contextlib.contextmanager
def _browser_page(width: int, **context_options):
    """A page of headless Chromium in a window ``width`` px wide (900 high)."""
    _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": width, "height": 900}, **context_options)
        yield context.new_page()
        browser.close()


def _typeset(page) -> None:
    """Wait until MathJax has typeset the page (if it has any math)."""
    if page.evaluate("document.querySelectorAll('div.math, span.math').length"):
        page.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise",
                               timeout=20000)
        page.evaluate("MathJax.startup.promise")


def _screenshot_name(relative: str, width: int) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", relative.removesuffix(".html")) + f"_{width}px.png"


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


# display equations whose typeset width exceeds their column, how the widest box around them
# handles it (MathJax's container scrolls sideways by itself), and whether that box shows that
# it scrolls: its right side fades out (reading_aids.py), and once scrolled to the end its left one
_OVERFLOWING_MATH = """async () => {
  const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const fades = (box) => ({left: box.classList.contains('fade-left'),
                           right: box.classList.contains('fade-right'),
                           masked: getComputedStyle(box).maskImage.includes('gradient')});
  const found = [];
  for (const d of document.querySelectorAll('div.math')) {
    const c = d.querySelector('mjx-container');
    if (!c || c.scrollWidth <= d.clientWidth + 1) continue;
    const box = ['auto', 'scroll'].includes(getComputedStyle(c).overflowX) ? c : d;
    const start = fades(box);
    box.scrollLeft = box.scrollWidth;
    await frame();
    const end = fades(box);
    box.scrollLeft = 0;
    found.push({id: d.id, scrolls: getComputedStyle(box).overflowX,
                fits: box.clientWidth <= d.clientWidth + 1,
                cue: start.right && !start.left && start.masked && end.left && !end.right
                     && end.masked});
  }
  return found;
}"""


@pytest.mark.parametrize("width", [390, 1400])
def test_equations_fit_their_column_or_scroll_visibly(built_book, served_book, width):
    """At desktop width every display equation fits its column; on a phone the wide ones
    scroll sideways instead of being clipped, and fade out on the side that has more."""
    problems, overflowing = [], 0
    with _browser_page(width) as page:
        for relative in _chapter_pages(built_book):
            page.goto(f"{served_book}/{relative}", wait_until="load")
            if not page.evaluate("document.querySelectorAll('div.math').length"):
                continue
            _typeset(page)
            for equation in page.evaluate(_OVERFLOWING_MATH):
                overflowing += 1
                if width >= 1000 or equation["scrolls"] not in ("auto", "scroll") \
                        or not equation["fits"] or not equation["cue"]:
                    problems.append(f"{relative} at {width}px: {equation}")
    assert not problems, "\n".join(problems)
    if width < 1000:  # the chapters have equations wider than a phone: the check checked some
        assert overflowing > 0


_INLINE_MATH_PAST_ITS_COLUMN = """() => {
  const out = [];
  for (const math of document.querySelectorAll(".bd-article mjx-container:not([display='true'])")) {
    if (!math.checkVisibility()) continue;
    const article = math.closest("article").getBoundingClientRect();
    const box = math.getBoundingClientRect();
    if (box.right > article.right + 1) out.push(math.textContent.slice(0, 40));
  }
  return out;
}"""


@pytest.mark.parametrize("width", [390, 1400])
def test_inline_math_stays_inside_the_column(built_book, served_book, width):
    """No inline formula runs past the article's edge: on a phone a wide one scrolls in its own
    box (its right edge is the column's)."""
    problems = []
    with _browser_page(width) as page:
        for relative in _chapter_pages(built_book):
            page.goto(f"{served_book}/{relative}", wait_until="load")
            _typeset(page)
            page.wait_for_timeout(200)  # the marking runs once MathJax has typeset
            problems += [f"{relative} at {width}px: {text}"
                         for text in page.evaluate(_INLINE_MATH_PAST_ITS_COLUMN)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("width", [390, 1400])
def test_no_page_is_wider_than_the_screen(built_book, served_book, width):
    """Every page, the indexes, search and the library reference included, fits the window:
    no sideways panning; what is wider (tables, code, equations) scrolls inside its own box.
    Saves a screenshot of each page at that width into _build/screenshots."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    problems = []
    with _browser_page(width) as page:
        for relative in _all_pages(built_book):
            page.goto(f"{served_book}/{relative}", wait_until="load")
            _typeset(page)
            scroll_width = page.evaluate("document.documentElement.scrollWidth")
            if scroll_width > width:
                problems.append(f"{relative}: {scroll_width} px wide at {width} px")
            page.screenshot(path=str(SCREENSHOTS / _screenshot_name(relative, width)))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("width", [390, 1400])
def test_one_search_box_and_a_short_banner(served_book, width):
    """One search box (the sidebar's field on a wide screen, the header's button on a narrow
    one, the search page's own form on that page), and the build banner within two lines on a
    phone."""
    with _browser_page(width) as page:
        for relative in ("search.html", "genindex.html", "book/score_gradient.html"):
            page.goto(f"{served_book}/{relative}", wait_until="load")
            searches = page.locator(".search-button-field:visible, .search-button:visible, "
                                    "form.bd-search:visible")
            assert searches.count() == 1, (relative, [
                searches.nth(i).evaluate("e => e.outerHTML.slice(0, 120)")
                for i in range(searches.count())])
        lines = page.evaluate("""() => {
          const banner = document.querySelector('.bd-header-announcement__content');
          const range = document.createRange();
          range.selectNodeContents(banner);
          return new Set([...range.getClientRects()].filter(r => r.width > 0)
                         .map(r => Math.round(r.bottom))).size;
        }""")
        assert 1 <= lines <= 2, lines


@pytest.mark.parametrize("width", [390, 1400])
def test_figures_open_at_full_size_on_a_click(built_book, served_book, width):
    """Every image of every page is a link to its own file (a tap opens it at full resolution),
    and a tap on a chapter's figure on a phone opens a page with more pixels than it shows."""
    problems, linked_images = [], 0
    with _browser_page(width, has_touch=width < 1000) as page:
        for relative in _all_pages(built_book):
            page.goto(f"{served_book}/{relative}", wait_until="load")
            # an image is wrapped in a link to itself (ours, or Sphinx's for a scaled figure);
            # not the module index's +/- togglers, which fold its groups
            images = page.evaluate("[...document.querySelectorAll('article img:not(.toggler)')]"
                                   ".map(i => [(i.closest('a[href]') || {}).href === i.src, "
                                   "i.src])")
            linked_images += len(images)
            problems += [f"{relative}: {src} is not a link to itself" for linked, src in images
                         if not linked]
        page.goto(f"{served_book}/book/score_gradient.html", wait_until="load")
        figure = page.locator("article figure img").first
        shown = figure.evaluate("i => [i.src, i.naturalWidth, i.getBoundingClientRect().width]")
        figure.scroll_into_view_if_needed()
        with page.context.expect_page() as opened:
            figure.tap() if width < 1000 else figure.click()
        full = opened.value
        full.wait_for_load_state("load")
        assert full.url == shown[0]
        natural = full.evaluate("document.images[0].naturalWidth")
        assert natural == shown[1] and natural > shown[2], (shown, natural)
    assert not problems, "\n".join(problems)
    assert linked_images >= 10  # the chapters' and notebooks' figures were there to check


@pytest.mark.parametrize("width", [390, 1400])
def test_the_library_is_one_click_from_every_page(built_book, served_book, width):
    """Every page shows a button that downloads the wheel the build ships, and the download
    menu of a page that has one lists it too."""
    (wheel,) = (built_book / "html" / "wheel").glob("*.whl")
    problems = []
    with _browser_page(width) as page:
        for relative in _all_pages(built_book):
            page.goto(f"{served_book}/{relative}", wait_until="load")
            button = page.locator("a.btn-install-library-button:visible")
            if button.count() != 1:
                problems.append(f"{relative}: {button.count()} visible install buttons")
                continue
            href = button.evaluate("a => a.href")
            if href != f"{served_book}/wheel/{wheel.name}":
                problems.append(f"{relative}: the install button links {href}")
            tooltip = button.evaluate("a => a.title || a.dataset.bsOriginalTitle || ''")
            if "install" not in tooltip.lower():  # Bootstrap moves the title to the tooltip
                problems.append(f"{relative}: the install button does not say what it does")
            menu = page.locator(".dropdown-download-buttons a.btn-download-library-button")
            if page.locator(".dropdown-download-buttons").count() and (
                    menu.count() != 1 or menu.evaluate("a => a.href") != href):
                problems.append(f"{relative}: the download menu does not list the wheel")
        assert page.request.get(f"{served_book}/wheel/{wheel.name}").ok
    assert not problems, "\n".join(problems)


def test_search_lists_the_chapters_before_the_library_reference(served_book):
    """A word that the chapters explain and the reference's docstrings mention: every result on
    a chapter's or a notebook's page comes before every result in the reference."""
    from playwright.sync_api import expect

    with _browser_page(1400) as page:
        for word in ("advantage", "responsibilities"):
            page.goto(f"{served_book}/search.html?q={word}", wait_until="load")
            # Sphinx fills the list in batches, then writes the count into the summary
            expect(page.locator("#search-results p.search-summary")).to_contain_text(
                re.compile(r"\d"), timeout=15000)
            links = page.eval_on_selector_all("#search-results li > a:first-child",
                                              "as => as.map(a => a.getAttribute('href'))")
            in_reference = ["book/api.html" in link for link in links]
            assert any(in_reference) and not all(in_reference), (word, links)
            assert in_reference == sorted(in_reference), (word, links)


def test_no_page_carries_launch_machinery(built_book):
    """No Binder, thebe or CDN leftovers of Jupyter Book's launch defaults on any page of a book
    built without a repository (the introduction may say in words what a published book
    offers; a Binder link is an address at mybinder.org)."""
    html = built_book / "html"
    for page in html.rglob("*.html"):
        if "_static" in page.parts:
            continue
        text = page.read_text(errors="replace").lower()
        for word in ("mybinder", "thebe", "unpkg.com", "executablebooks/jupyter-book"):
            assert word not in text, (page.relative_to(html), word)
