"""One way to write a number for a reader: integers whole, the rest to 3 significant figures.

Used by the report pages' tables; glued numbers in the prose choose their format in the page.
"""

from __future__ import annotations

import math
import re


def format_number(value: float | int | None, digits: int = 3) -> str:
    """``value`` as a reader should see it.

    Integers (and floats that are whole, below 10^15 in magnitude) are written whole with
    thousands separators (``24,290``); other numbers with ``digits`` significant figures,
    as a power of ten only when they are very small or very large (``0.0364``,
    ``2.60 × 10⁻¹⁵``: a reader's notation, not a programmer's ``2.6e-15``); ``None`` and
    ``nan`` as an em dash.
    """
    if not isinstance(digits, int) or isinstance(digits, bool) or digits < 1:
        raise ValueError(f"digits must be a positive int; got {digits!r}")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"value must be a number or None; got {type(value).__name__}")
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    magnitude = abs(value)
    if magnitude < 1e-3 or magnitude >= 1e6:
        mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
        return f"{mantissa.replace('-', '−')} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"
    written = f"{value:#.{digits}g}".rstrip(".")
    # more whole digits than significant ones (1,143.5 at 3): whole, not 1.14e+03
    return f"{value:,.0f}" if "e" in written else written


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
"""Digits and the minus sign as superscripts, for the exponent of a power of ten."""


_E_NOTATION = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?)e([+-]?\d+)(?!\w)")


def without_e_notation(text: str) -> str:
    """``text`` with every number in e-notation written as a power of ten, as
    :func:`format_number` writes it (``"above 1.6e+03"`` becomes ``"above 1.6 × 10³"``);
    identifiers that hold such a pattern (``seed1e3``) are left alone.

    >>> without_e_notation("error 4.4e-16, bound 1e-10")
    'error 4.4 × 10⁻¹⁶, bound 1 × 10⁻¹⁰'
    """
    return _E_NOTATION.sub(lambda found: f"{found[1].replace('-', '−')} × 10"
                           f"{str(int(found[2])).translate(_SUPERSCRIPT)}", text)


def written(value: float) -> str:
    """A number in a sentence: a count or any number from 1,000 up whole, with thousands
    separators (``1,800``, not ``1.8e+03``); the rest to 3 significant figures, as ``:.3g``
    writes them (``0.954``, ``0.8``).

    >>> written(1800.0), written(0.8), written(0.95412), written(12345.6)
    ('1,800', '0.8', '0.954', '12,346')
    """
    if math.isfinite(value) and (float(value).is_integer() or abs(value) >= 1000):
        return f"{value:,.0f}"
    return f"{value:.3g}"


def capitalised(text: str) -> str:
    """``text`` without the spaces around it and with a capital first letter, the rest as it
    is (a claim's short name at the head of a line, a sentence from its parts).

    >>> capitalised(" row 3 (the EM speed-up), reproduced")
    'Row 3 (the EM speed-up), reproduced'
    """
    text = text.strip()
    return text[:1].upper() + text[1:]


def numbers(values, digits: int = 3) -> str:
    """A sequence of numbers, each by :func:`format_number`, in brackets: ``[0.136, 1.36 ×
    10⁻³]``."""
    return "[" + ", ".join(format_number(float(value), digits) for value in values) + "]"


def use_reader_number_format() -> None:
    """Make pandas print every float of a table with :func:`format_number` (text and HTML).

    Whole floats then read as integers with thousands separators (``704``, ``24,290``) instead
    of ``704.000000``, and the rest to three significant figures; ``nan`` stays pandas' own.
    """
    import pandas as pd

    pd.set_option("display.float_format", lambda value: format_number(float(value)))
