"""The limits every JSON reader of cogeval applies, so that a hostile file is an error, never a crash.

The rules (run files, pairwise files, datasets, label files and judge answers alike):

- **nesting**: a document nests at most :data:`MAX_DEPTH` (100) levels of
  arrays and objects, the outermost being level 1; a :class:`~cogeval.Case`
  field at most :data:`MAX_CASE_DEPTH` (80), so a run or pairwise file that
  holds the case stays within 100 and the writer (:mod:`cogeval.data.jsonable`,
  which cuts deeper values inside a run file) always writes it whole;
- **integers**: at most :data:`MAX_INT_DIGITS` (4300) digits, Python's own
  default limit for reading an integer from text;
- **finite numbers only**: ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON,
  and a number beyond the range of a float (``1e999``) is refused; a missing
  number is ``null``.

Depth is checked on the text before it is parsed, without recursion, so no
parser or validator beneath ever recurses deeper than the limit. An error
names the place as a field path (``results[0].scores[0].score``), and for
nesting the line and column too:

>>> loads('{"a": [1, 2.5, null]}', "example")
{'a': [1, 2.5, None]}
>>> loads('{"a": [1, NaN]}', "example")
Traceback (most recent call last):
...
cogeval.errors.InputError: example: a[1]: NaN is not a JSON number; write null for a missing number
>>> loads("[" * 101 + "]" * 101, "example")
Traceback (most recent call last):
...
cogeval.errors.InputError: example: [0][0][0][0][0][0]…: nested deeper than 100 levels (column 101)
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any, Final

import numpy as np

from cogeval.errors import InputError

MAX_DEPTH: Final = 100
"""The deepest nesting of arrays and objects a JSON document may have (the outermost is level 1)."""
MAX_CASE_DEPTH: Final = 80
"""The deepest nesting of a case field's value, leaving room for the levels of a run file around it
(and kept below ``jsonable.VALUE_DEPTH``, so a case is always written whole)."""
MAX_INT_DIGITS: Final = 4300
"""The most digits an integer may have (Python's default ``sys.get_int_max_str_digits()``)."""

_ErrorType = Callable[[str], Exception]
"""The error a reader raises: an exception class taking the message (``RunFileError``, ``DatasetError``...)."""

_PATH_SHOWN = 6  # parts of a long path shown before "…"
_KEY_SHOWN = 40  # characters of a key shown in a path
_KEEP = b'"[]{}'
_DROP = bytes(sorted(set(range(256)) - set(_KEEP)))
_QUOTE = ord('"')
_STEP = np.zeros(256, dtype=np.int8)
_STEP[[ord("["), ord("{")]] = 1
_STEP[[ord("]"), ord("}")]] = -1
_SURROGATE = re.compile("[\ud800-\udfff]")
_SCALARS = frozenset({str, int, float, bool, type(None)})
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},:]', re.S)

_Link = tuple[Any, "str | int", int] | None
"""A place in a value: (the place of its container, its key or index there, the container's id), or None at the top."""


def loads(text: str, where: str, *, error: _ErrorType = InputError, allow_nan: bool = False) -> Any:
    """Parse JSON ``text`` within the limits; a breach raises ``error("<where>: <field>: <what>")``.

    Text that is not JSON raises :class:`json.JSONDecodeError` as :func:`json.loads`
    does, so each reader keeps its own message for it. ``allow_nan`` reads ``NaN``
    and ``±Infinity`` as floats, for text that is no file format (a judge's answer),
    whose reader checks its numbers itself.
    """
    _check_text_depth(text, where, error)
    bad: list[_Bad] = []
    hooks: dict[str, Any] = {
        "parse_float": lambda digits: _float(digits, bad),
        "parse_constant": float if allow_nan else (
            lambda name: _flag(f"{name} is not a JSON number; write null for a missing number", bad)),
    }
    value = _parse(text, hooks, bad)
    if bad:
        _raise_first(value, where, error, finite=not allow_nan)
    return value


def _parse(text: str, hooks: dict[str, Any], bad: list[_Bad]) -> Any:
    if 0 < sys.get_int_max_str_digits() <= MAX_INT_DIGITS:  # json's own parser then refuses longer integers
        try:
            return json.loads(text, **hooks)
        except json.JSONDecodeError:
            raise
        except ValueError:  # an integer too long: parsed again, every integer checked, to name it
            bad.clear()
    return json.loads(text, parse_int=lambda digits: _int(digits, bad), **hooks)


def check_json(value: Any, where: str, *, error: _ErrorType = InputError) -> None:
    """Check parsed JSON data (from :func:`json.loads`, which accepts NaN and deep nesting) against the limits."""
    _raise_first(value, where, error, finite=True)


def _raise_first(value: Any, where: str, error: _ErrorType, *, finite: bool) -> None:
    problem = _first_problem(value, MAX_DEPTH, finite=finite)
    if problem is not None:
        raise error(f"{where}: {_place(problem[0])}{problem[1]}")


def check_depth(value: Any, name: str, *, limit: int = MAX_CASE_DEPTH, label: str | None = None) -> None:
    """Refuse a Python value nested deeper than ``limit``: :class:`InputError` naming it (``label``, else
    ``name``) and the place, a path from ``name``. A container that contains itself is left for the caller to report.

    >>> check_depth({"a": [[[1]]]}, "metadata", limit=3)
    Traceback (most recent call last):
    ...
    cogeval.errors.InputError: metadata is nested deeper than 3 levels (at metadata.a[0][0])
    """
    problem = _first_problem(value, limit, finite=False)
    if problem is not None:
        raise InputError(f"{label or name} is nested deeper than {limit} levels (at {_path([name, *problem[0]])})")


def is_plain_json(value: Any, limit: int) -> bool:
    """Whether ``value`` is plain JSON data nested at most ``limit`` levels: only ``str``, ``int``, ``float``,
    ``bool``, ``None``, and ``list`` and ``dict`` (exact types; keys text without surrogates), as
    :func:`json.loads` gives. Such a value passes :func:`check_depth` and ``canonical_json``, so a caller can
    skip them; anything else (a subclass, a tuple, a container that contains itself) gives ``False``.

    >>> is_plain_json({"a": [1, 2.5, None]}, 2), is_plain_json({"a": [1]}, 1), is_plain_json((1,), 1)
    (True, False, False)
    """
    kind = type(value)
    if kind is dict:
        return limit > 0 and all(
            type(key) is str and (key.isascii() or not _SURROGATE.search(key)) and is_plain_json(item, limit - 1)
            for key, item in value.items()
        )
    if kind is list:
        return limit > 0 and all(is_plain_json(item, limit - 1) for item in value)
    return kind in _SCALARS


# -- numbers ----------------------------------------------------------------------------------


class _Bad:
    """Stands in the parsed data for a number that breaks a limit, until its place is found."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _flag(reason: str, bad: list[_Bad]) -> _Bad:
    found = _Bad(reason)
    bad.append(found)
    return found


def _int(digits: str, bad: list[_Bad]) -> int | _Bad:
    count = len(digits.lstrip("-"))
    if count <= MAX_INT_DIGITS:
        try:
            return int(digits)
        except ValueError:  # the interpreter's own limit is lower
            pass
    return _flag(f"an integer of {count} digits is too long (at most {MAX_INT_DIGITS})", bad)


def _float(digits: str, bad: list[_Bad]) -> float | _Bad:
    number = float(digits)
    if math.isinf(number):
        shown = digits if len(digits) <= 30 else digits[:27] + "..."
        return _flag(f"{shown} is beyond the range of a float (about ±1.8e308)", bad)
    return number


# -- nesting ----------------------------------------------------------------------------------


def _check_text_depth(text: str, where: str, error: _ErrorType) -> None:
    if text.count("[") + text.count("{") <= MAX_DEPTH or text_depth(text.encode("utf-8", "surrogatepass")) <= MAX_DEPTH:
        return  # few brackets (the common case, at no cost), or not nested that deep
    offset, parts = _deep_place(text)
    line = text.count("\n", 0, offset) + 1
    column = offset - text.rfind("\n", 0, offset)
    at = f"line {line} column {column}" if "\n" in text.rstrip() else f"column {column}"
    raise error(f"{where}: {_place(parts)}nested deeper than {MAX_DEPTH} levels ({at})")


def text_depth(text: bytes) -> int:
    """How deep the arrays and objects of JSON text nest (0 for a scalar), counting brackets outside strings.

    >>> text_depth(b'{"a": [1, {"b": "[[["}]}'), text_depth(b'"x"')
    (3, 0)
    """
    if b"\\" in text:  # escapes: an escaped backslash, then an escaped quote, do not delimit strings
        text = text.replace(b"\\\\", b"").replace(b'\\"', b"")
    # Brackets and quotes alone. Two quotes side by side close a string and open the next with nothing
    # but ",:" and spaces between, or enclose an empty one: dropping them leaves few strings to mask.
    skeleton = np.frombuffer(text.translate(None, _DROP).replace(b'""', b""), dtype=np.uint8)
    quote = skeleton == _QUOTE
    outside = (np.cumsum(quote, dtype=np.uint8) & 1) == 0
    outside &= ~quote
    steps = _STEP[skeleton] * outside
    return int(np.cumsum(steps, dtype=np.int32).max(initial=0))


def _deep_place(text: str) -> tuple[int, list[str | int]]:
    """Where the first array or object beyond the limit opens: its offset and its field path."""
    stack: list[list[Any]] = []  # per open container: [is an object, the current key or index]
    last = '""'
    for token in _TOKEN.finditer(text):
        char = token.group()[0]
        if char == '"':
            last = token.group()
        elif char in "[{":
            if len(stack) == MAX_DEPTH:
                return token.start(), [entry[1] for entry in stack]
            stack.append([char == "{", "?" if char == "{" else 0])
        elif char in "]}":
            if stack:
                stack.pop()
        elif stack and char == ":" and stack[-1][0]:
            stack[-1][1] = _key(last)
        elif stack and char == "," and not stack[-1][0]:
            stack[-1][1] += 1
    return 0, []  # not reached: the skeleton said the limit is broken


def _key(token: str) -> str:
    try:
        key = json.loads(token)
    except ValueError:
        key = token[1:-1]
    return str(key)


def _first_problem(value: Any, limit: int, *, finite: bool) -> tuple[list[str | int], str] | None:
    """The first place, in document order, holding a flagged or (when ``finite``) non-finite number, or a
    container deeper than ``limit``; iterative, so any depth is safe."""
    stack: list[tuple[Any, int, _Link]] = [(value, 0, None)]
    while stack:
        item, depth, link = stack.pop()
        if isinstance(item, _Bad):
            return _parts(link), item.reason
        if finite and isinstance(item, float) and not math.isfinite(item):
            name = "NaN" if math.isnan(item) else ("Infinity" if item > 0 else "-Infinity")
            return _parts(link), f"{name} is not a JSON number; write null for a missing number"
        if isinstance(item, Mapping):
            children: list[tuple[str | int, Any]] = [(str(k), v) for k, v in item.items()]
        elif isinstance(item, (list, tuple)):
            children = list(enumerate(item))
        elif getattr(item, "ndim", 0) and hasattr(item, "tolist"):  # a numpy array
            children = list(enumerate(item.tolist()))
        else:
            continue
        if depth >= limit:
            if _contains_itself(item, link):
                continue  # a cycle, not depth: the caller names it
            return _parts(link), f"nested deeper than {limit} levels"
        stack.extend((child, depth + 1, (link, key, id(item))) for key, child in reversed(children))
    return None


def _contains_itself(item: Any, link: _Link) -> bool:
    while link is not None:
        if link[2] == id(item):
            return True
        link = link[0]
    return False


def _parts(link: _Link) -> list[str | int]:
    parts: list[str | int] = []
    while link is not None:
        parts.append(link[1])
        link = link[0]
    return parts[::-1]


def _place(parts: list[str | int]) -> str:
    return f"{_path(parts)}: " if parts else ""


def _path(parts: list[str | int]) -> str:
    """``results[0].scores`` from ``["results", 0, "scores"]``, as run-file errors name fields; cut after a few parts."""
    text = ""
    for part in parts[:_PATH_SHOWN]:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            key = part if len(part) <= _KEY_SHOWN else part[: _KEY_SHOWN - 3] + "..."
            text += f".{key}" if text else key
    return text + ("…" if len(parts) > _PATH_SHOWN else "")
