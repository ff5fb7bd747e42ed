"""Escape-safe HTML primitives behind every ``_repr_html_``.

Case text is arbitrary LLM output, so every cell goes through :func:`escape`: the text
of any value (:func:`~cogeval._text.safe_str`, so an object whose ``str()`` raises shows as
``<unprintable Foo>``), HTML-escaped, control characters and lone surrogates shown as escapes
(:func:`~cogeval._text.printable`, newlines and tabs kept). Display never raises:
:func:`safe_html` turns a failure into a short message.

>>> escape("<script>")
'&lt;script&gt;'
"""

from __future__ import annotations

import functools
import html
from collections.abc import Callable, Iterable, Mapping
from numbers import Real
from typing import Any

from cogeval._columns import ADJUSTED_P_VALUE, DELTA, DIFFERENCE, P_VALUE
from cogeval._numbers import MISSING, number, p_value, signed
from cogeval._text import printable, safe_str

_STYLE = (
    "<style>.cogeval{font-family:system-ui,sans-serif;font-size:12px;line-height:1.4;white-space:normal;overflow-x:auto}"
    ".cogeval table{border-collapse:collapse}"
    ".widget-html-content>.cogeval{width:0;min-width:100%}"  # in an ipywidgets HTML: as wide as the cell, scroll the rest
    ".cogeval th,.cogeval td{padding:2px 6px;text-align:right;border-bottom:1px solid #8884;vertical-align:top;"
    "white-space:nowrap}"
    ".cogeval th{font-weight:600;white-space:normal}"  # a heading wraps between words, a value never
    ".cogeval td.s{text-align:left}"
    ".cogeval td.t{text-align:left;max-width:40em;white-space:pre-wrap;overflow-wrap:break-word}"
    # What a row is (its metric, its field) and its verdict (a badge cell) stay in sight when a table wider than
    # its cell scrolls sideways: the first column at the left edge, a badge at the right edge.
    ".cogeval tr>:first-child,.cogeval td:has(>.b){position:sticky;left:0;z-index:1;"
    "background:var(--jp-layout-color0,var(--vscode-editor-background,Canvas))}"
    ".cogeval td:has(>.b){left:auto;right:0}"
    ".cogeval .b{border-radius:3px;padding:0 5px;font-weight:600}"
    ".cogeval .good{background:#1a7f3733;color:#1a7f37}.cogeval .bad{background:#cf222e33;color:#cf222e}"
    ".cogeval .neutral{background:#8882}.cogeval caption{text-align:left;font-weight:600;padding:4px 0}</style>"
)
"""The one style sheet of every ``_repr_html_``: compact (12 px, JupyterLab's size for tables), headings that wrap
between words, values that never wrap, and the first column kept in sight when a wide table scrolls sideways."""

_P_COLUMNS = frozenset({P_VALUE, ADJUSTED_P_VALUE, "p", "adjusted p"})
"""Columns (and fields) that hold a p-value: shown to 2 significant digits (:func:`cogeval._numbers.p_value`)."""
_SIGNED_COLUMNS = frozenset({DIFFERENCE, DELTA})
"""Columns that hold a difference: shown with its sign, as every report shows one (:func:`cogeval._numbers.signed`)."""

_SHORT = 40
"""Text cells up to this long stay on one line (names, intervals); longer text (case inputs, outputs) wraps."""


def escape(value: Any) -> str:
    """HTML-escape the string form of any value (quotes included), control characters and lone surrogates shown as escapes."""
    return html.escape(printable(safe_str(value), keep="\n\t"), quote=True)


def format_value(value: Any, digits: int = 4) -> str:
    """Render a cell value for display: floats as :func:`cogeval._numbers.number` writes them, NaN as ``–``."""
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return number(value, digits)
    if hasattr(value, "dtype") and getattr(value, "ndim", 1) == 0:
        return format_value(value.item(), digits)
    return safe_str(value)


def badge(text: str, kind: str = "neutral") -> str:
    """A small coloured label; ``kind`` is ``good``, ``bad`` or ``neutral``."""
    return f'<span class="b {escape(kind)}">{escape(text)}</span>'


def _cell(value: Any, raw: bool, column: str = "") -> str:
    if raw:
        return f"<td>{value}</td>"
    shown = p_value if column in _P_COLUMNS else signed if column in _SIGNED_COLUMNS else None
    text = escape(shown(value) if shown and isinstance(value, Real) and not isinstance(value, bool) else format_value(value))
    if not isinstance(value, str):
        return f"<td>{text}</td>"
    kind = "s" if len(value) <= _SHORT and "\n" not in value else "t"
    return f'<td class="{kind}">{text}</td>'


def html_table(
    rows: Iterable[Mapping[Any, Any]],  # Any keys: DataFrame.to_dict("records") is typed dict[Hashable, Any]
    columns: Iterable[str],
    *,
    caption: str | None = None,
    raw_columns: Iterable[str] = (),
    max_rows: int = 50,
) -> str:
    """An escaped HTML table of ``rows`` (mappings) over ``columns``.

    Cells of ``raw_columns`` are trusted HTML (built with :func:`badge`); all
    others are escaped. Rows past ``max_rows`` are counted, not shown. A float in a column of
    ``p``, ``adjusted p``, ``p_value`` or ``adjusted_p_value`` is a p-value (2 significant digits), one in
    ``difference`` or ``delta`` a signed difference, any other has 4.

    >>> html_table([{"p": 0.012345, "mean": 0.012345, "difference": 0.5}], ["p", "mean", "difference"]).split("<tbody>")[1]
    '<tr><td>0.012</td><td>0.01235</td><td>+0.5</td></tr></tbody></table></div>'
    """
    columns = list(columns)
    raw = set(raw_columns)
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    body, total = [], 0
    for row in rows:
        total += 1
        if total <= max_rows:
            body.append("<tr>" + "".join(_cell(row.get(c), c in raw, c) for c in columns) + "</tr>")
    if total > max_rows:
        body.append(f'<tr><td class="t" colspan="{len(columns)}">… {total - max_rows} more rows</td></tr>')
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    return f'{_STYLE}<div class="cogeval"><table>{cap}<thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def key_value_table(title: str, fields: Mapping[str, Any], *, raw_keys: Iterable[str] = ()) -> str:
    """A two-column table of ``fields`` under ``title``, for one result object (a p-value field as :func:`html_table`'s)."""
    rows = [{"field": k, "value": v} for k, v in fields.items()]
    raw = set(raw_keys)
    body = "".join(
        f"<tr><th>{escape(r['field'])}</th>"
        + (f"<td>{r['value']}</td>" if r["field"] in raw else _cell(r["value"], False, r["field"]))
        + "</tr>"
        for r in rows
    )
    return f'{_STYLE}<div class="cogeval"><table><caption>{escape(title)}</caption><tbody>{body}</tbody></table></div>'


def safe_html(method: Callable[..., str]) -> Callable[..., str]:
    """Decorate a ``_repr_html_`` so that a failure shows a short message instead of raising."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> str:
        try:
            return method(self, *args, **kwargs)
        except Exception as error:  # noqa: BLE001 - display must never raise
            name = type(self).__name__
            return f"<pre>{escape(name)}: could not display ({escape(type(error).__name__)}: {escape(error)})</pre>"

    return wrapper
