"""Attribute docstrings that the library reference can render.

Sphinx's napoleon reads the first line of an attribute's docstring as ``type: description`` when
it holds a colon: the library reference then shows the words before the colon as the attribute's
type, and the book's nitpicky build fails where they read as an unknown class. So no attribute
docstring of the library may open that way; napoleon itself is asked.
"""

import ast
from pathlib import Path

import pytest
from sphinx.ext.napoleon import Config
from sphinx.ext.napoleon.docstring import GoogleDocstring

LIBRARY = Path(__file__).resolve().parents[1] / "lib" / "attention_dynamics"
# the whole library (docstrings are not part of the code fingerprint that dates results, so
# rewording one never stales a results file)
FILES = sorted(LIBRARY.rglob("*.py"))


def attribute_docstrings(tree: ast.Module):
    """``(line, docstring)`` of every string that follows an assignment at module or class
    level, and of every property (the attribute docstrings autodoc renders)."""
    bodies = [tree.body] + [node.body for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    for body in bodies:
        for before, node in zip(body, body[1:], strict=False):
            if (isinstance(before, ast.Assign | ast.AnnAssign) and isinstance(node, ast.Expr)
                    and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                yield node.lineno, node.value.value
        for node in body:  # a property's docstring is rendered as an attribute's
            if (isinstance(node, ast.FunctionDef) and ast.get_docstring(node)
                    and any(isinstance(d, ast.Name) and d.id == "property"
                            for d in node.decorator_list)):
                yield node.lineno, ast.get_docstring(node)


def opens_like_a_type(docstring: str) -> bool:
    """Whether napoleon (with the book's settings) takes words of the first line for a type: a
    literal there (a shape such as ````(B, N)`` int64``) is a type on purpose."""
    parsed = str(GoogleDocstring(docstring, Config(napoleon_google_docstring=True),
                                 what="attribute", name="attribute"))
    types = [line.split(":type:", 1)[1].strip() for line in parsed.splitlines()
             if ":type:" in line]
    return any(not kind.startswith("``") for kind in types)


def test_the_check_sees_the_pattern():
    assert opens_like_a_type("Too few seeds: more would decide.")
    assert not opens_like_a_type("The basis of an undecided share (too few seeds).")
    assert not opens_like_a_type("The share's level (its ends are one-sided bounds).")
    assert not opens_like_a_type("``(B, N)`` int64: the target of each input.")


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(LIBRARY)))
def test_no_attribute_docstring_opens_like_a_type(path):
    tree = ast.parse(path.read_text())
    bad = [f"line {line}: {text.strip().splitlines()[0]}"
           for line, text in attribute_docstrings(tree) if opens_like_a_type(text)]
    assert not bad, "\n".join(bad)
