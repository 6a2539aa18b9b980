"""The MyST of a notebook's markdown cells as plain Markdown, for the copy readers download.

The book's notebooks write cross-references as MyST roles (``{doc}`...```, ``{prf:ref}`...```,
``{eq}`...```, ``{glue:text}`...```) and may hold directive fences (``:::{note}``) and targets
(``(label)=``); a plain Jupyter shows them raw. :func:`plain_markdown` replaces each by what the
rendered page shows there: a reference by its text on the page (``Proposition 2.1``, ``(2.8)``,
a chapter's title), as a link to the published page when the book's address is known; a glued
number by its value, formatted as the page formats it; a directive by a bold title over its
content as a quotation; a target by nothing.
"""

from __future__ import annotations

import html
import posixpath
import re
from dataclasses import dataclass

from book_build import BuildError

ROLE = re.compile(r"\{(?P<kind>[A-Za-z][\w:+-]*)\}`(?P<content>[^`]+)`")
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<marker>:{3,}|`{3,})\{(?P<name>[\w:-]+)\}[ \t]*"
                   r"(?P<argument>.*)$")
TARGET = re.compile(r"^[ \t]*\([\w:.-]+\)=[ \t]*$")
OPTION = re.compile(r"^[ \t]*:[\w-]+:")
ANCHOR = re.compile(r'<a class="reference internal" href="(?P<href>[^"]*)"[^>]*>(?P<inner>.*?)</a>',
                    re.S)
ARTICLE = re.compile(r"<article\b.*?</article>", re.S)
TAG = re.compile(r"<[^>]+>")
EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)

LABEL_ROLES = {"ref": "", "numref": "", "prf:ref": "", "eq": "equation-"}
"""Roles that name a label, and the prefix Sphinx gives the label's HTML id."""
PYTHON_ROLES = {"mod", "func", "class", "meth", "attr", "obj", "data", "exc", "const"}
GLUE_ROLES = {"glue": "text/plain", "glue:any": "text/plain", "glue:text": "text/plain",
              "glue:md": "text/markdown"}
"""Roles that paste a glued value, and the mime type of the value they paste."""
UNTITLED_DIRECTIVES = {"admonition", "dropdown"}


@dataclass(frozen=True)
class Reference:
    """A cross-reference as the rendered page shows it."""

    text: str
    """The text of its link, as Markdown (code in backticks, math in dollars)."""
    path: str
    """The page it points to, from the site's root, with its fragment (``book/x.html#label``)."""


def anchor_text(inner: str) -> str:
    """The Markdown of a link's inner HTML: its text, code in backticks, MathJax as dollars."""
    text = html.unescape(TAG.sub("", inner)).strip()
    text = text.replace("\\(", "$").replace("\\)", "$")
    return f"`{text}`" if "<code" in inner else text


def page_references(page_html: str, page_path: str) -> dict[str, Reference]:
    """The internal links of a rendered page's article (not its navigation), by the page they
    point to (``book/x.html``), or by their fragment (``#prop-x``) for links into a page.

    ``page_path`` is the page's own path from the site's root (``notebooks/x.html``).
    """
    article = ARTICLE.search(page_html)
    if article is None:
        raise BuildError(f"the rendered page {page_path} has no <article> element")
    references = {}
    folder = posixpath.dirname(page_path)
    for match in ANCHOR.finditer(article[0]):
        href = html.unescape(match["href"])
        target, _, fragment = href.partition("#")
        path = posixpath.normpath(posixpath.join(folder, target)) if target else page_path
        reference = Reference(anchor_text(match["inner"]), path + (f"#{fragment}" if fragment else ""))
        references.setdefault(f"#{fragment}" if fragment else path, reference)
    return references


def html_id(label: str) -> str:
    """The HTML id Sphinx gives a label (docutils' ``make_id``, for ASCII labels)."""
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")


@dataclass(frozen=True)
class NotebookContext:
    """What converting one notebook's markdown needs to know."""

    name: str
    """The notebook's name, for error messages."""
    page_path: str
    """Its page's path from the site's root (``notebooks/x.html``)."""
    references: dict[str, Reference]
    """The links of its rendered page (:func:`page_references`)."""
    glued: dict[str, dict[str, str]]
    """The values it glues: name -> mime type -> data (:func:`glued_values`)."""
    site_url: str | None
    """The published book's address, ending in ``/``; references become links to it."""

    def link(self, text: str, path: str) -> str:
        """``text`` as a link to the page ``path`` of the published book, if its address is
        known; else ``text`` alone (a relative link would not resolve in a downloaded copy)."""
        return f"[{text}]({self.site_url}{path})" if self.site_url else text

    def reference(self, key: str, role: str) -> Reference:
        """The link of the rendered page under ``key``; an error naming ``role`` without one."""
        if key not in self.references:
            raise BuildError(f"notebooks/{self.name}: {role} has no link on its rendered page "
                             f"{self.page_path}, so its downloaded copy cannot say what it shows")
        return self.references[key]


def glued_values(notebook) -> dict[str, dict[str, str]]:
    """The values an executed notebook glues (myst-nb), by name: each a dict of mime type to
    data, as the glue output stores them."""
    glued = {}
    for cell in notebook.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            scrap = output.get("metadata", {}).get("scrapbook")
            if scrap:
                prefix = scrap.get("mime_prefix", "")
                glued[scrap["name"]] = {mime.removeprefix(prefix): data
                                        for mime, data in output.get("data", {}).items()}
    return glued


def convert_glue(kind: str, content: str, context: NotebookContext) -> str:
    """A glue role as the text the page pastes: the glued value, and for ``glue:text`` formatted
    by its format spec as myst-nb formats it (``name:.2f``; ``s`` without one)."""
    from myst_nb.core.variables import format_plain_text

    role = f"{{{kind}}}`{content}`"
    name, spec = (*content.rsplit(":", 1), "s")[:2] if kind == "glue:text" else (content, None)
    if name not in context.glued:
        raise BuildError(f"notebooks/{context.name}: {role} pastes a value the notebook does "
                         "not glue")
    data, mime = context.glued[name], GLUE_ROLES[kind]
    if mime not in data:
        raise BuildError(f"notebooks/{context.name}: {role} needs {mime}, which its glued "
                         f"value lacks (it has {sorted(data)})")
    if spec is None:
        return data[mime]
    try:
        return format_plain_text(data[mime], spec)
    except ValueError as err:
        raise BuildError(f"notebooks/{context.name}: {role} cannot format "
                         f"{data[mime]!r}: {err}") from err


def convert_role(match: re.Match, context: NotebookContext) -> str:
    """One MyST role as plain Markdown (see the module's docstring)."""
    kind, content = match["kind"], match["content"]
    explicit = EXPLICIT.match(content)
    text, target = (explicit["text"], explicit["target"]) if explicit else (None, content)
    if kind == "doc":
        docname = target.removeprefix("/") if target.startswith("/") else posixpath.normpath(
            posixpath.join(posixpath.dirname(context.page_path), target))
        found = context.reference(posixpath.splitext(docname)[0] + ".html", match[0])
        return context.link(text or f"*{found.text}*", found.path)
    if kind in LABEL_ROLES:
        found = context.reference(f"#{LABEL_ROLES[kind]}{html_id(target)}", match[0])
        return context.link(text or found.text, found.path)
    if kind.removeprefix("py:") in PYTHON_ROLES:
        name = target.removeprefix("~")
        shown = text or f"`{name.rsplit('.', 1)[-1] if target.startswith('~') else name}`"
        prefix = "module-" if kind.removeprefix("py:") == "mod" else ""
        found = context.references.get(f"#{prefix}{name}")
        return context.link(shown, found.path) if found else shown
    if kind in GLUE_ROLES:
        return convert_glue(kind, content, context)
    if kind == "math":
        return f"${content}$"
    if kind.startswith("cite"):
        return f"[{content}]"
    return text or target.removeprefix("~")


def directive_title(name: str, argument: str) -> str:
    """The bold line that stands for a directive: its kind and its argument (``**Note**``,
    ``**Proposition: The advantage law**``); an admonition or dropdown shows its argument."""
    kind = name.rsplit(":", 1)[-1].replace("-", " ").capitalize()
    if name in UNTITLED_DIRECTIVES:
        return f"**{argument}**" if argument else ""
    return f"**{kind}: {argument}**" if argument else f"**{kind}**"


def convert_directive(name: str, argument: str, body: list[str], indent: str) -> list[str]:
    """A directive's lines as plain Markdown: ``math`` as display math, a code directive as a
    code block, any other as its title over its content quoted (options dropped)."""
    while body and OPTION.match(body[0]):
        body = body[1:]
    if name == "math":
        return [f"{indent}$$", *body, f"{indent}$$"]
    if name in ("code", "code-block", "code-cell"):
        return [f"{indent}```{argument}", *body, f"{indent}```"]
    title = directive_title(name, argument)
    quoted = [f"{indent}> {line.removeprefix(indent)}".rstrip() for line in body]
    return [f"{indent}> {title}", f"{indent}>", *quoted] if title else quoted


def convert_fences(lines: list[str]) -> list[str]:
    """The lines with every directive fence converted (:func:`convert_directive`), nested ones
    too, and MyST target lines (``(label)=``) removed."""
    converted = []
    index = 0
    while index < len(lines):
        line = lines[index]
        opening = FENCE.match(line)
        if TARGET.match(line):
            index += 1
            continue
        if opening is None:
            converted.append(line)
            index += 1
            continue
        closing = next((end for end in range(index + 1, len(lines))
                        if lines[end].strip() == opening["marker"]), None)
        if closing is None:
            raise BuildError(f"a {opening['marker']}{{{opening['name']}}} fence is never closed: "
                             f"{line.strip()!r}")
        body = convert_fences(lines[index + 1:closing])
        converted += convert_directive(opening["name"], opening["argument"].strip(), body,
                                       opening["indent"])
        index = closing + 1
    return converted


def plain_markdown(source: str, context: NotebookContext) -> str:
    """The markdown cell ``source`` with its MyST as plain Markdown (see the module's docstring)."""
    text = "\n".join(convert_fences(source.split("\n")))
    return ROLE.sub(lambda match: convert_role(match, context), text)
