"""Canonical JSON: what JavaScript's ``JSON.stringify`` writes with sorted keys.

Case keys and dataset fingerprints hash this text, so they match the ones any
other implementation of the Cogitator run-file format computes (DESIGN §5).

>>> canonical_json({"input": "What is 2+2?", "expected": "4", "n": [1.0, 0.1, 1e21, -0.0]})
'{"expected":"4","input":"What is 2+2?","n":[1,0.1,1e+21,0]}'

The rules, each the one JavaScript follows:

- no whitespace; non-ASCII text kept as is; ``"`` and ``\\`` escaped; control
  characters as ``\\b \\f \\n \\r \\t`` or ``\\u00xx``; a lone surrogate as ``\\udxxx``.
- numbers as JavaScript prints a double: ``1.0`` → ``1``, ``1e21`` → ``1e+21``,
  ``1e-7`` → ``1e-7``, ``-0.0`` → ``0``; NaN and ±inf → ``null``.
- a Python ``int`` becomes the double JavaScript's ``JSON.parse`` would read from
  its digits: exact below 2**53, rounded above (``10**21 + 1`` → ``1e+21``),
  ``null`` past the largest double — the same text a JavaScript implementation
  writes after reading the value from a file.
- object keys: canonical array indices (``"0"`` … ``"4294967294"``, no leading
  zeros) first in numeric order, then the others by UTF-16 code units (so
  ``"\\uffff"`` sorts after ``"😀"``, unlike Python's code-point order).
  ``int``, ``float``, ``bool`` and ``None`` keys become the strings JavaScript gives them.
- ``dict`` (any mapping) → object; ``list``, ``tuple`` and numpy arrays → array;
  numpy scalars as their Python values. Anything else (bytes, sets, dates,
  objects, a container that contains itself) raises :class:`~cogeval.errors.InputError`
  naming where it is; the run-file writer stringifies such values itself.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any

import numpy as np

from cogeval._check import describe
from cogeval.errors import InputError

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f\ud800-\udfff]')
_SURROGATE = re.compile("[\ud800-\udfff]")
_ARRAY_INDEX = re.compile("0|[1-9][0-9]*")
_MAX_ARRAY_INDEX = 2**32 - 2
_EXACT_INT = 2**53


def canonical_json(value: Any, *, name: str = "value") -> str:
    """The canonical JSON text of ``value``; errors name the place as ``name[...]``.

    >>> canonical_json({"b": [True, None], "a": "é\\n", "10": 1, "2": 2})
    '{"2":2,"10":1,"a":"é\\\\n","b":[true,null]}'
    """
    parts: list[str] = []
    try:
        _write(value, parts, set())
    except _Unwritable as error:
        place = name + "".join(reversed(error.where))
        raise InputError(f"cannot write {place} as JSON: {error.reason}") from None
    return "".join(parts)


class _Unwritable(Exception):
    """Raised deep inside a value; each container on the way out adds its ``[index]`` to ``where``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.where: list[str] = []


def _write(value: Any, parts: list[str], open_ids: set[int]) -> None:
    kind = type(value)
    if kind is str or isinstance(value, str):
        parts.append(_string(value))
    elif value is None:
        parts.append("null")
    elif kind is bool or isinstance(value, np.bool_):
        parts.append("true" if value else "false")
    elif kind is int or kind is float or isinstance(value, (Integral, Real)):
        parts.append(_number(value))
    elif isinstance(value, (dict, list, tuple, Mapping, np.ndarray)):
        if id(value) in open_ids:
            raise _Unwritable("it contains itself")
        open_ids.add(id(value))
        if isinstance(value, Mapping):
            _object(value, parts, open_ids)
        else:
            _array(value.tolist() if isinstance(value, np.ndarray) else value, parts, open_ids)
        open_ids.discard(id(value))
    else:
        raise _Unwritable(
            f"{kind.__name__} is not a JSON value (use str, number, bool, None, list or dict); got {describe(value)}"
        )


def _array(items: Any, parts: list[str], open_ids: set[int]) -> None:
    parts.append("[")
    for index, item in enumerate(items):
        if index:
            parts.append(",")
        try:
            _write(item, parts, open_ids)
        except _Unwritable as error:
            error.where.append(f"[{index}]")
            raise
    parts.append("]")


def _object(mapping: Mapping[Any, Any], parts: list[str], open_ids: set[int]) -> None:
    entries: dict[str, Any] = {}
    for key, item in mapping.items():
        text = _key(key)
        if text in entries:
            raise _Unwritable(f"keys {text!r} collide once written as strings")
        entries[text] = item
    parts.append("{")
    for index, text in enumerate(sorted(entries, key=_key_order)):
        if index:
            parts.append(",")
        parts.append(_string(text))
        parts.append(":")
        try:
            _write(entries[text], parts, open_ids)
        except _Unwritable as error:
            error.where.append(f"[{text!r}]")
            raise
    parts.append("}")


def _key(key: Any) -> str:
    if isinstance(key, str):
        return _utf16_normal(key)
    if key is None:
        return "null"
    if isinstance(key, (bool, np.bool_)):
        return "true" if key else "false"
    if isinstance(key, (Integral, Real)):
        if not isinstance(key, Integral) and not math.isfinite(key):
            return "NaN" if math.isnan(key) else ("Infinity" if float(key) > 0 else "-Infinity")
        return _number(key)
    raise _Unwritable(f"key {describe(key)} is a {type(key).__name__}; use str keys")


def _key_order(key: str) -> tuple[int, int, bytes]:
    if _ARRAY_INDEX.fullmatch(key) and int(key) <= _MAX_ARRAY_INDEX:
        return (0, int(key), b"")
    return (1, 0, key.encode("utf-16-be", "surrogatepass"))


def _utf16_normal(text: str) -> str:
    """Join surrogate pairs written as two code points, as JavaScript sees them."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-be", "surrogatepass").decode("utf-16-be", "surrogatepass")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _ESCAPES.get(char) or f"\\u{ord(char):04x}"


def _string(text: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape, _utf16_normal(text)) + '"'


def _number(value: Any) -> str:
    if isinstance(value, Integral) and abs(int(value)) < _EXACT_INT:
        return str(int(value))
    try:
        number = float(value)
    except OverflowError:  # an int past the largest double: JavaScript reads Infinity
        return "null"
    if not math.isfinite(number):
        return "null"
    if number == 0:
        return "0"
    return ("-" if number < 0 else "") + _positive_number(abs(number))


def _positive_number(number: float) -> str:
    """ECMAScript Number::toString from Python's shortest round-trip digits."""
    mantissa, _, exponent = repr(number).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + int(exponent or 0)  # value = 0.digits × 10**point
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= point <= 21:
        return digits + "0" * (point - k)
    if 0 < point <= 21:
        return digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return "0." + "0" * -point + digits
    exp = point - 1
    sign = "+" if exp >= 0 else "-"
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{head}e{sign}{abs(exp)}"
