"""Markdown tables whose cells no case text can break, and text that pings nobody.

Every piece of text from a run goes through :func:`markdown_cell`: one line, control
characters shown as escapes (:func:`~cogeval._text.printable`), GitHub's ``@mentions`` and
``#123`` references made inert (:func:`~cogeval._text.unlinked`), Markdown and HTML escaped.

>>> markdown_table([{"a": "x|y\\nz"}], ["a"])
'| a |\\n| --- |\\n| x\\\\|y z |'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from cogeval._html import format_value
from cogeval._text import cut, one_line, printable, unlinked

_SPECIAL = str.maketrans({"|": "\\|", "\\": "\\\\", "`": "\\`", "<": "&lt;", ">": "&gt;", "*": "\\*", "_": "\\_", "[": "\\[", "]": "\\]"})


def markdown_cell(value: Any, limit: int = 120) -> str:
    """One table cell: one line, cut at ``limit`` characters, controls visible, mentions and
    references inert, Markdown and HTML neutralised."""
    return unlinked(printable(cut(one_line(format_value(value)), limit))).translate(_SPECIAL)


def markdown_table(rows: Iterable[Mapping[str, Any]], columns: list[str], *,
                   limits: Mapping[str, int] | None = None) -> str:
    """A GitHub-flavoured Markdown table of ``rows`` over ``columns``; ``limits`` maps a column to the length its
    cells are cut at (default 120 characters, :func:`markdown_cell`)."""
    limit = {c: 120 for c in columns} | dict(limits or {})
    lines = ["| " + " | ".join(markdown_cell(c) for c in columns) + " |", "| " + " | ".join("---" for _ in columns) + " |"]
    lines += ["| " + " | ".join(markdown_cell(row.get(c), limit[c]) for c in columns) + " |" for row in rows]
    return "\n".join(lines)
