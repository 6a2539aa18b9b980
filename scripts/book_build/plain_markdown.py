"""The MyST of a notebook's markdown cells as plain Markdown, for the copy readers download.

The book's notebooks write cross-references as MyST roles (``{doc}`...```, ``{prf:ref}`...```,
``{eq}`...```, ``{glue:text}`...```) and may hold directive fences (``:::{note}``) and targets
(``(label)=``) and footnotes (``[^name]``, defined by a line ``[^name]: text`` at the end of
the cell); a plain Jupyter shows them raw. :func:`plain_markdown` replaces each by what the
rendered page shows there: a reference by its text on the page (``Proposition 2.1``, ``(2.8)``,
a chapter's title), as a link to the published page when the book's address is known; a glued
number by its value, formatted as the page formats it; a directive by a bold title over its
content as a quotation; a target by nothing; a footnote by its number in brackets (``[1]``,
numbered across the notebook in order of first reference, as the page numbers them), its text
a numbered note at the end of the cell that defines it, below a rule (:func:`convert_footnotes`).
"""

from __future__ import annotations

import html
import posixpath
import re
from dataclasses import dataclass, field

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
FOOTNOTE_DEFINITION = re.compile(r"^ {0,3}\[\^(?P<label>[^\]\s]+)\]:[ \t]*(?P<text>.*)$")
FOOTNOTE_REFERENCE = re.compile(r"(?P<code>(?P<ticks>`+).+?(?P=ticks))"
                                r"|\[\^(?P<label>[^\]\s]+)\](?P<next>[(\[]?)")
"""A footnote reference, or an inline code span (in which ``[^...]`` is code, not a reference)."""
CODE_FENCE = re.compile(r"^ {0,3}(?P<marker>`{3,}|~{3,})")

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
    footnotes: dict[str, int] = field(default_factory=dict)
    """The numbers of the footnotes met so far in the notebook's cells, by label: each the
    next number when first referenced (or defined, if its definition comes first)."""

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


def footnote_number(label: str, numbers: dict[str, int]) -> int:
    """The number of footnote ``label`` in ``numbers``, given the next one if it has none yet."""
    return numbers.setdefault(label, len(numbers) + 1)


def split_footnote_definitions(lines: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """The lines without their footnote definitions, and the definitions' text by label (the
    lines of each, dedented: its first line's text, the lines that continue its paragraph and
    the indented lines after it, blank lines between them kept). Code blocks are left alone."""
    kept, definitions = [], {}
    fence = None
    index = 0
    while index < len(lines):
        line = lines[index]
        opening = CODE_FENCE.match(line)
        if fence is not None or opening:
            if fence is None:
                fence = opening["marker"]
            elif line.strip().startswith(fence[0] * len(fence)) and not line.strip(fence[0]).strip():
                fence = None
            kept.append(line)
            index += 1
            continue
        definition = FOOTNOTE_DEFINITION.match(line)
        if definition is None:
            kept.append(line)
            index += 1
            continue
        if definition["label"] in definitions:
            raise BuildError(f"the footnote [^{definition['label']}] is defined twice")
        body = [definition["text"]]
        index += 1
        while index < len(lines):
            line = lines[index]
            following = next((later for later in lines[index:] if later.strip()), "")
            if (FOOTNOTE_DEFINITION.match(line)
                    or (not line.strip() and not following.startswith("    "))
                    or (not line.startswith("    ") and not body[-1].strip())):
                break
            body.append(line[4:] if line.startswith("    ") else line.lstrip())
            index += 1
        definitions[definition["label"]] = body
    while kept and not kept[-1].strip():
        kept.pop()
    return kept, definitions


def numbered_notes(definitions: dict[str, list[str]], numbers: dict[str, int]) -> list[str]:
    """The lines of ``definitions`` as numbered notes in the order of their numbers: one ordered
    list, or, where the numbers skip (a note defined in another cell), a new list for each run,
    its delimiter alternating between ``.`` and ``)`` so that Markdown does not renumber it."""
    notes, previous, delimiter = [], None, "."
    for number, label in sorted((numbers[label], label) for label in definitions):
        if previous is not None and number != previous + 1:
            delimiter = ")" if delimiter == "." else "."
            notes.append("")
        marker = f"{number}{delimiter} "
        first, *rest = definitions[label]
        notes.append(marker + first)
        notes += [" " * len(marker) + line if line.strip() else "" for line in rest]
        previous = number
    return notes


def convert_footnotes(text: str, numbers: dict[str, int]) -> str:
    """The markdown ``text`` with its footnotes as a plain Jupyter can show them: each reference
    ``[^name]`` as its number in brackets (``[1]``), each definition ``[^name]: ...`` moved to a
    numbered note (``1. ...``) at the end of the text, below a rule that ends any list before it.

    ``numbers`` holds the numbers of the notebook's footnotes, by label (updated: a footnote is
    numbered when first referenced, or when defined before any reference), so that a notebook's
    cells, converted in order, number their footnotes in order of first reference and a
    footnote referenced again in a later cell keeps its number.
    """
    lines, definitions = split_footnote_definitions(text.split("\n"))

    def reference(match: re.Match) -> str:
        if match["code"]:
            return match[0]
        number = footnote_number(match["label"], numbers)
        # brackets followed by a parenthesis or a bracket would read as a link
        return (f"\\[{number}\\]" if match["next"] else f"[{number}]") + match["next"]

    body = FOOTNOTE_REFERENCE.sub(reference, "\n".join(lines))
    if not definitions:
        return body
    for label in definitions:
        footnote_number(label, numbers)
    notes = FOOTNOTE_REFERENCE.sub(reference, "\n".join(numbered_notes(definitions, numbers)))
    return f"{body}\n\n---\n\n{notes}" if body.strip() else notes


def plain_markdown(source: str, context: NotebookContext) -> str:
    """The markdown cell ``source`` with its MyST as plain Markdown (see the module's docstring).

    Convert a notebook's cells in order with one ``context``: footnotes are numbered across them.
    """
    text = convert_footnotes("\n".join(convert_fences(source.split("\n"))), context.footnotes)
    return ROLE.sub(lambda match: convert_role(match, context), text)
