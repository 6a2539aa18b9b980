"""Inline math keeps the punctuation that touches it (book/_ext/math_punctuation.py)."""

import importlib.util
from pathlib import Path

from docutils import nodes

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("math_punctuation",
                                              ROOT / "book" / "_ext" / "math_punctuation.py")
math_punctuation = importlib.util.module_from_spec(spec)
spec.loader.exec_module(math_punctuation)


def _paragraph(*children):
    paragraph = nodes.paragraph()
    paragraph.extend(children)
    return paragraph


def _shape(node):
    if isinstance(node, nodes.Text):
        return str(node)
    if isinstance(node, nodes.math):
        return ("math", node.astext())
    return (node["classes"], [_shape(child) for child in node.children])


def test_the_bracket_before_and_the_punctuation_after_go_with_the_math():
    math = nodes.math("", "x")
    paragraph = _paragraph(nodes.Text("see ("), math, nodes.Text("), and"))
    assert math_punctuation.bind_punctuation(math)
    assert [_shape(child) for child in paragraph.children] == [
        "see ", (["math-nowrap"], ["(", ("math", "x"), "),"]), " and"]


def test_math_with_nothing_touching_it_is_left_alone_and_neighbours_are_bound_one_by_one():
    lone = nodes.math("", "y")
    paragraph = _paragraph(nodes.Text("with "), lone, nodes.Text(" and more"))
    assert not math_punctuation.bind_punctuation(lone)
    assert [_shape(child) for child in paragraph.children] == ["with ", ("math", "y"),
                                                               " and more"]
    first, second = nodes.math("", "a"), nodes.math("", "b")
    pair = _paragraph(first, nodes.Text(", "), second, nodes.Text("."))
    for math in (first, second):
        assert math_punctuation.bind_punctuation(math)
    assert [_shape(child) for child in pair.children] == [
        (["math-nowrap"], [("math", "a"), ","]), " ", (["math-nowrap"], [("math", "b"), "."])]
