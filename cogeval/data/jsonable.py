"""Turn any value into plain JSON data without ever failing (DESIGN §5).

NaN and ±inf become ``None``; values JSON cannot hold (bytes, sets, objects)
become their string form; a container that contains itself becomes
``"[Circular]"``; dataclasses become dicts.

>>> jsonable({"x": float("nan"), "b": b"hi", "s": {1}})
{'x': None, 'b': "b'hi'", 's': '{1}'}
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any


def jsonable(value: Any) -> Any:
    """A JSON-safe copy of ``value``."""
    return _convert(value, set())


def _convert(value: Any, active: set[int]) -> Any:
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        number = float(value)
        return number if math.isfinite(number) else None
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # numpy scalar
        return _convert(value.item(), active)
    container = isinstance(value, (Mapping, list, tuple)) or dataclasses.is_dataclass(value)
    if not container:
        if hasattr(value, "tolist"):  # numpy array
            return _convert(value.tolist(), active)
        return str(value)
    marker = id(value)
    if marker in active:
        return "[Circular]"
    active.add(marker)
    try:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        if isinstance(value, Mapping):
            return {str(k): _convert(v, active) for k, v in value.items()}
        return [_convert(v, active) for v in value]
    finally:
        active.discard(marker)
