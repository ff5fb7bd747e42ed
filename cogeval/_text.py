"""Text for people: one line, cut to a width, any value as text. The one home of these rules.

- a value that is not text is shown as its JSON (non-ASCII kept, other objects as their string form);
- :func:`one_line` joins every run of whitespace (newlines, tabs) into one space;
- :func:`cut` keeps at most ``limit`` characters, the last one ``…`` when something was cut;
- a missing value stays ``None`` (:func:`short_input`), or shows as ``–`` (:func:`shorten`).

>>> short_input("What  is\\n 2+2?"), short_input({"q": "x" * 100}, width=12), shorten(float("nan"))
('What is 2+2?', '{"q": "xxxx…', '–')
"""

from __future__ import annotations

import html
import json
import math
from typing import Any

_INPUT_WIDTH = 80
"""Characters of a case input shown in tables of changes and in charts."""


def as_text(value: Any) -> str:
    """``value`` itself when it is text, else its JSON (non-ASCII kept; objects JSON cannot hold as their string form)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) made one space, and none at either end."""
    return " ".join(text.split())


def cut(text: str, limit: int) -> str:
    """``text`` when it has at most ``limit`` characters, else its first ``limit - 1`` and ``…``.

    >>> cut("abcdef", 4), cut("abc", 4)
    ('abc…', 'abc')
    """
    return text if len(text) <= limit else text[: limit - 1] + "…"


def short_input(value: Any, width: int = _INPUT_WIDTH) -> str | None:
    """One line of at most ``width`` characters for a case input (non-text as JSON); None stays None."""
    if value is None:
        return None
    return cut(one_line(as_text(value)), width)


def shorten(value: Any, limit: int = _INPUT_WIDTH) -> str:
    """One line of at most ``limit`` characters (see :func:`short_input`); missing (None or NaN) as ``–``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return cut(one_line(as_text(value)), limit)


def escaped_line(value: Any, width: int = _INPUT_WIDTH) -> str:
    """One HTML-escaped line of at most ``width`` characters, safe inside plotly labels and hover text.

    ``<``, ``>`` and ``&`` are escaped; quotes are not: plotly.js decodes only a few named entities
    (``&lt;``, ``&gt;``, ``&amp;``...), so ``&quot;`` would show literally, and a quote cannot start
    anything once ``<`` is escaped.

    >>> escaped_line('<b>"2" & 3</b>')
    '&lt;b&gt;"2" &amp; 3&lt;/b&gt;'
    """
    return html.escape(short_input(value, width) or "", quote=False)
