"""Text for people: one line, cut to a width, any value as text, made inert. The one home of these rules.

- a value that is not text is shown as its JSON (non-ASCII kept, other objects as their string form);
  an object whose ``str()`` and ``repr()`` raise shows as ``<unprintable Foo>`` (:func:`safe_str`);
- :func:`one_line` joins every run of whitespace (newlines, tabs) into one space;
- :func:`cut` keeps at most ``limit`` characters, the last one ``…`` when something was cut;
- a missing value stays ``None`` (:func:`short_input`), or shows as ``–`` (:func:`shorten`).

Text from a run (names, inputs, messages) is inert wherever it reaches people
(docs/reports.md, "Case text is never trusted"):

- :func:`printable`: control characters (C0, DEL, C1: ESC, CSI, OSC...), line and paragraph
  separators, bidirectional overrides and lone surrogates are shown as escapes (``\\x1b``,
  ``\\n``, ``\\u202e``, ``\\ud83d``), so no escape sequence reaches a terminal;
- :func:`without_workflow_commands`: in console and CLI output, a line that would start (after
  spaces) with ``::`` gets a ``\\`` before it and ``##[`` gets one too, so no text can emit a GitHub
  Actions workflow command; :func:`terminal_text` applies both to a whole output;
- :func:`workflow_data` / :func:`workflow_property`: text inside the ``::error`` annotations cogeval
  writes itself, escaped by GitHub's rules;
- :func:`unlinked`: GitHub ``@mentions``, ``#123`` and ``GH-123`` references in Markdown get an
  invisible U+2060 WORD JOINER after ``@``, ``#`` or ``GH``: the text looks the same, but pings
  nobody and links no issue.

>>> short_input("What  is\\n 2+2?"), short_input({"q": "x" * 100}, width=12), shorten(float("nan"))
('What is 2+2?', '{"q": "xxxx…', '–')
>>> print(printable("x\\x1b[31m red\\n"))
x\\x1b[31m red\\n
>>> print(without_workflow_commands("ok\\n  ::error::pwned"))
ok
  \\::error::pwned
"""

from __future__ import annotations

import html
import json
import math
import re
from typing import Any

_INPUT_WIDTH = 80
"""Characters of a case input shown in tables of changes and in charts."""


def safe_str(value: Any) -> str:
    """``str(value)``; its ``repr`` when ``str`` raises; ``<unprintable Foo>`` when both raise.

    >>> class Broken:
    ...     def __str__(self): raise RuntimeError
    ...     __repr__ = __str__
    >>> safe_str(Broken()), safe_str(b"x")
    ('<unprintable Broken>', "b'x'")
    """
    if isinstance(value, str):
        return value
    for show in (str, repr):
        try:
            return show(value)
        except Exception:  # noqa: BLE001 - any value has a text form, whatever its methods do
            continue
    return f"<unprintable {type(value).__name__}>"


def as_text(value: Any) -> str:
    """``value`` itself when it is text, else its JSON (non-ASCII kept; objects JSON cannot hold as their string form).

    A value JSON cannot write at all (a non-string key, nesting too deep) is shown as its :func:`safe_str`.
    """
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=safe_str)
    except (TypeError, ValueError, RecursionError):
        return safe_str(value)


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


_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
"""Characters a terminal or reader would act on, or not show: C0 and C1 controls (ESC starts every
escape sequence; U+009B is CSI, U+009D OSC), line and paragraph separators, bidirectional
overrides and isolates, lone surrogates (which UTF-8 cannot encode)."""
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def printable(text: str, *, keep: str = "") -> str:
    """``text`` with every control character, separator, bidi override and lone surrogate shown as an escape.

    ``keep`` lists characters left as they are (``"\\n"`` for multi-line text). Backslashes are
    not doubled: this is text for people, not a lossless encoding.

    >>> printable("a\\tb\\x9b\\u202e\\ud83d"), printable("a\\nb", keep="\\n")
    ('a\\\\tb\\\\x9b\\\\u202e\\\\ud83d', 'a\\nb')
    """
    return _INVISIBLE.sub(lambda m: m.group() if m.group() in keep else _escape(m.group()), text)


_LINE_COMMAND = re.compile(r"(?:^|(?<=[\r\n]))([^\S\r\n]*)(?=::)")


def without_workflow_commands(text: str) -> str:
    """``text`` with a ``\\`` before any ``::`` that starts a line (after spaces) and before every ``##[``.

    The GitHub Actions runner reads a stdout line as a workflow command (``::error::``,
    ``::add-mask::``...) when it starts with ``::`` once leading whitespace is trimmed, and
    (the older syntax) when it holds ``##[command]``; with the backslash it prints the line as it is.
    """
    return _LINE_COMMAND.sub(lambda m: m.group(1) + "\\", text).replace("##[", "\\##[")


def terminal_text(text: str) -> str:
    """A whole console or CLI output made inert: ``\\r\\n`` made ``\\n``, :func:`printable` keeping
    newlines and tabs, then :func:`without_workflow_commands`. Idempotent."""
    return without_workflow_commands(printable(text.replace("\r\n", "\n"), keep="\n\t"))


def workflow_data(text: str) -> str:
    """Text for the message of a GitHub Actions workflow command, by GitHub's rules: ``%`` → ``%25``,
    ``\\r`` → ``%0D``, ``\\n`` → ``%0A`` (so it stays on its line); other control characters shown by :func:`printable`.

    >>> workflow_data("100%\\nsure\\x1b")
    '100%25%0Asure\\\\x1b'
    """
    return printable(text, keep="\r\n").replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def workflow_property(text: str) -> str:
    """Text for a property (``title=``) of a workflow command: :func:`workflow_data`, and ``:`` → ``%3A``, ``,`` → ``%2C``."""
    return workflow_data(text).replace(":", "%3A").replace(",", "%2C")


WORD_JOINER = "\u2060"
"""U+2060 WORD JOINER: invisible, zero width, no line break; put after ``@``/``#`` it stops GitHub's autolinks."""
_REFERENCE = re.compile(r"(?<![0-9A-Za-z_])@(?=[0-9A-Za-z])|#(?=[0-9])|(?<![0-9A-Za-z_])GH(?=-[0-9])", re.IGNORECASE)


def unlinked(text: str) -> str:
    """``text`` with GitHub's autolinked references made inert for Markdown.

    GitHub turns ``@name`` (after a non-word character) into a mention that notifies the user or
    team, and ``#123``, ``owner/repo#123`` and ``GH-123`` into issue links. Its matcher needs ``@``,
    ``#`` or ``GH`` directly before the name or number, so a :data:`WORD_JOINER` there renders the
    same text and pings or links nothing. (A backslash or an HTML entity does not help: GitHub
    finds mentions in the rendered text, where both are gone.) E-mail addresses are left alone.

    >>> unlinked("@alice, fixes #1, GH-2, bob@example.com") == "@\u2060alice, fixes #\u20601, GH\u2060-2, bob@example.com"
    True
    """
    return _REFERENCE.sub(lambda m: m.group() + WORD_JOINER, text)


_UNITS = {"latency": "s", "cost": "USD", "token_usage": "tokens"}
_SUFFIX_UNITS = (("_s", "s"), ("_usd", "USD"), ("_tokens", "tokens"))


def _unit(metric: str) -> str | None:
    """The unit of a metric when known: latency in s, cost in USD, token usage in tokens.

    >>> _unit("latency"), _unit("judge_cost_usd"), _unit("exact_match")
    ('s', 'USD', None)
    """
    if metric in _UNITS:
        return _UNITS[metric]
    return next((u for suffix, u in _SUFFIX_UNITS if metric.endswith(suffix)), None)


def with_unit(label: str, metric: str) -> str:
    """``label`` followed by the unit of ``metric`` in parentheses, when it has one: ``latency (s)``."""
    u = _unit(metric)
    return f"{label} ({u})" if u else label
