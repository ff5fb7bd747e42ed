"""Turn any value into plain JSON data, and write JSON text, without ever failing (DESIGN §5).

The rules (docs/run-files.md, "Writing never fails"):

- NaN and ±inf become ``None``; dataclasses become dicts;
- values JSON cannot hold (bytes, sets, objects) become their string form; an object whose
  ``str()`` and ``repr()`` raise becomes ``"<unprintable Foo>"``; an integer of more than 4300
  digits (more than readers take) becomes its hex string ``"0x…"``;
- keys that are not strings (tuples, ``None``, numbers, bytes) become their string form
  (``"(1, 2)"``, ``"None"``, ``"3"``, ``"b'k'"``); when two keys get the same form, the later one is kept;
- a container that contains itself becomes ``"[Circular]"``;
- containers nested deeper than :data:`MAX_DEPTH` (100) levels (a top-level list or dict is
  level 1) are cut: the container at level 101 becomes ``"[Too deep] "`` and its ``repr``, so
  everything cogeval writes stays within the 100 levels its readers accept
  (:mod:`cogeval.data.json_limits`, whose limit this is);
- text is kept as it is, lone surrogates (``"\\ud83d"``, half an emoji) included;
  :func:`json_text` writes them as the JSON escape ``\\ud83d``, which reads back to the same string.

>>> jsonable({"x": float("nan"), "b": b"hi", "s": {1}, (1, 2): None})
{'x': None, 'b': "b'hi'", 's': '{1}', '(1, 2)': None}
>>> jsonable([[["deep"]]], max_depth=2)
[["[Too deep] ['deep']"]]
>>> print(json_text({"output": "cut \\ud83d"}))
{"output": "cut \\ud83d"}
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any

from cogeval._text import safe_str
from cogeval.data.json_limits import MAX_DEPTH, MAX_INT_DIGITS

VALUE_DEPTH = MAX_DEPTH - 5
"""Levels a *value inside a run file* can keep and still be written whole: it sits at most 5 levels
down (``results[i].scores[j].details``). :func:`jsonable` keeps :data:`MAX_DEPTH` levels (the readers'
limit) for whole documents; a value cut to ``VALUE_DEPTH`` when a run is built loads back equal."""

_CIRCULAR = "[Circular]"
"""What a container that contains itself is written as."""

_TOO_DEEP = "[Too deep] "
"""The start of what a container nested deeper than :data:`MAX_DEPTH` is written as (then its ``repr``)."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def jsonable(value: Any, *, max_depth: int = MAX_DEPTH) -> Any:
    """A JSON-safe copy of ``value``; never raises (see the module's rules)."""
    return _convert(value, set(), max_depth)


def json_text(value: Any, *, indent: int | None = None) -> str:
    """JSON text of :func:`jsonable` ``(value)`` that any UTF-8 writer or terminal takes.

    Non-ASCII text is kept as it is, except lone surrogates, which UTF-8 cannot encode: they are
    written as JSON escapes (``\\ud83d``), so the text reads back to the same string.
    """
    text = json.dumps(jsonable(value), ensure_ascii=False, allow_nan=False, indent=indent)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _convert(value: Any, active: set[int], room: int) -> Any:
    kind = type(value)
    if kind is str or kind is bool or value is None:  # the common types first, by identity: the rest is slower
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is int:
        return _integer(value)
    if isinstance(value, (str, bool)):
        return value
    try:
        if isinstance(value, Integral):
            return _integer(int(value))
        if isinstance(value, Real):
            number = float(value)
            return number if math.isfinite(number) else None
        if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # numpy scalar
            return _convert(value.item(), active, room)
        container = kind is dict or kind is list or isinstance(value, (Mapping, list, tuple))
        if not container and not dataclasses.is_dataclass(value):
            if hasattr(value, "tolist"):  # numpy array
                return _convert(value.tolist(), active, room)
            return safe_str(value)
    except Exception:  # noqa: BLE001 - a value whose methods raise is written as its text
        return safe_str(value)
    if room <= 0:
        return _TOO_DEEP + safe_str(value)
    marker = id(value)
    if marker in active:
        return _CIRCULAR
    active.add(marker)
    try:
        if kind is list:
            return [_convert(v, active, room - 1) for v in value]
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        if isinstance(value, Mapping):
            return {_key(k): _convert(v, active, room - 1) for k, v in value.items()}
        return [_convert(v, active, room - 1) for v in value]
    except Exception:  # noqa: BLE001 - a container that cannot be read is written as its text
        return safe_str(value)
    finally:
        active.discard(marker)


def _key(key: Any) -> str:
    return key if isinstance(key, str) else safe_str(key)


def _integer(number: int) -> int | str:
    """``number``, or its hex string when it has more digits than readers take (:data:`MAX_INT_DIGITS`, 4300)."""
    if number.bit_length() <= 14_000:  # at most 4,215 decimal digits
        return number
    try:
        digits = len(str(abs(number)))
    except ValueError:  # more digits than Python prints
        return hex(number)
    return number if digits <= MAX_INT_DIGITS else hex(number)
