"""Validators for the edges of the public API.

Each names the argument, says what it expected and what it received, and
raises :class:`~cogeval.errors.InputError` (a ``ValueError``)::

    >>> check_probability("alpha", 1.5)
    Traceback (most recent call last):
    ...
    cogeval.errors.InputError: alpha must be a number in [0, 1]; got 1.5
"""

from __future__ import annotations

import hashlib
import math
import os
import pathlib
from collections.abc import Iterable, Sized
from numbers import Integral, Real
from typing import Any, TypeGuard

import numpy as np
import numpy.typing as npt

from cogeval.errors import InputError

MAX_RETRIES = 10
"""The most extra attempts any ``retries=`` argument allows (targets, judges, suites, comparisons)."""

MIN_TIMEOUT_S = 0.001
"""The shortest ``timeout=`` a run takes, in seconds (1 ms): a shorter deadline fails every call."""


def describe(value: Any, limit: int = 60) -> str:
    """A short ``repr`` of ``value`` for an error message, cut at ``limit`` characters (``<unprintable Foo>``
    when its ``repr`` raises: a message about a bad value must not fail on it)."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - any object may define a repr that raises
        text = f"<unprintable {type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_real(value: Any) -> TypeGuard[float]:
    """True for a real number that is not a bool (int, float, numpy scalars, Fraction).

    Typed as a guard for ``float`` so that the comparisons after it check: the
    ``numbers.Real`` stubs define no ``>=`` or ``>``.
    """
    return isinstance(value, Real) and not isinstance(value, bool)


def check_probability(name: str, value: Any, *, open_interval: bool = False) -> float:
    """Return ``value`` as a float in [0, 1] (or (0, 1) when ``open_interval``)."""
    ok = is_real(value) and (0 < value < 1 if open_interval else 0 <= value <= 1)
    if not ok:
        bounds = "(0, 1)" if open_interval else "[0, 1]"
        raise InputError(f"{name} must be a number in {bounds}; got {describe(value)}")
    return float(value)


def check_positive_int(name: str, value: Any, *, minimum: int = 1) -> int:
    """Return ``value`` as an int >= ``minimum``; bools and floats are refused."""
    if not isinstance(value, Integral) or isinstance(value, bool) or value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}; got {describe(value)}")
    return int(value)


def check_positive_number(name: str, value: Any) -> float:
    """Return ``value`` as a finite float > 0."""
    if not is_real(value) or not math.isfinite(value) or value <= 0:
        raise InputError(f"{name} must be a finite number > 0; got {describe(value)}")
    return float(value)


def check_timeout(name: str, value: Any) -> float:
    """Return a timeout in seconds: a finite number >= :data:`MIN_TIMEOUT_S`.

    >>> check_timeout("timeout", 0.0001)
    Traceback (most recent call last):
    ...
    cogeval.errors.InputError: timeout must be at least 0.001 seconds (a shorter deadline fails every call); got 0.0001
    """
    seconds = check_positive_number(name, value)
    if seconds < MIN_TIMEOUT_S:
        raise InputError(f"{name} must be at least {MIN_TIMEOUT_S:g} seconds (a shorter deadline fails every call); "
                         f"got {describe(value)}")
    return seconds


def check_path(name: str, value: Any) -> pathlib.Path:
    """Return ``value`` (a ``str`` or ``os.PathLike``) as a :class:`pathlib.Path`.

    >>> check_path("path", 42)
    Traceback (most recent call last):
    ...
    cogeval.errors.InputError: path must be a file or folder path (str or os.PathLike); got 42
    """
    if not isinstance(value, (str, os.PathLike)) or value == "":
        raise InputError(f"{name} must be a file or folder path (str or os.PathLike); got {describe(value)}")
    return pathlib.Path(value)


def check_seed(name: str, value: Any) -> int | np.random.Generator | None:
    """Return a seed: ``None`` (fresh randomness), an integer >= 0, a string or a numpy Generator.

    The one seed rule of cogeval. Integers (numpy ones too, but not bools)
    come back as ``int``; a string comes back as the integer of the first 8
    bytes (big-endian) of the SHA-256 of its UTF-8 text, the same on every
    machine and Python version (unlike ``hash``); a ``numpy.random.Generator``
    comes back as itself, so ``numpy.random.default_rng(check_seed("seed", seed))``
    always works::

        >>> check_seed("seed", np.int64(3))
        3
        >>> check_seed("seed", "nightly")
        3043134503785307926
        >>> check_seed("seed", -1)
        Traceback (most recent call last):
        ...
        cogeval.errors.InputError: seed must be None, an integer >= 0, a string or a numpy Generator; got -1
    """
    if value is None or isinstance(value, np.random.Generator):
        return value
    if isinstance(value, Integral) and not isinstance(value, bool) and int(value) >= 0:
        return int(value)
    if isinstance(value, str):
        return int.from_bytes(hashlib.sha256(value.encode("utf-8", "surrogatepass")).digest()[:8], "big")
    raise InputError(f"{name} must be None, an integer >= 0, a string or a numpy Generator; got {describe(value)}")


def check_retries(name: str, value: Any) -> int:
    """Return a number of extra attempts: an integer from 0 to :data:`MAX_RETRIES`.

    The one retry limit of cogeval, with one message::

        >>> check_retries("retries", 11)
        Traceback (most recent call last):
        ...
        cogeval.errors.InputError: retries must be an integer from 0 to 10; got 11
    """
    if isinstance(value, Integral) and not isinstance(value, bool) and 0 <= int(value) <= MAX_RETRIES:
        return int(value)
    raise InputError(f"{name} must be an integer from 0 to {MAX_RETRIES}; got {describe(value)}")


def check_choice(name: str, value: Any, choices: Iterable[str]) -> str:
    """Return ``value`` lower-cased if it is one of ``choices`` (case-insensitive)."""
    options = tuple(choices)
    if isinstance(value, str) and value.lower() in options:
        return value.lower()
    listed = ", ".join(repr(c) for c in options)
    raise InputError(f"{name} must be one of {listed}; got {describe(value)}")


def as_float_array(name: str, values: Any, *, allow_nan: bool = False) -> npt.NDArray[np.float64]:
    """Return ``values`` as a 1-D float array, refusing text, nesting, inf and (unless allowed) NaN."""
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a sequence of numbers; got {describe(values)}") from None
    if array.ndim == 0:
        raise InputError(f"{name} must be a sequence of numbers, not a single value; got {describe(values)}")
    if array.ndim != 1:
        raise InputError(f"{name} must be one-dimensional; got shape {array.shape}")
    if np.isinf(array).any():
        raise InputError(f"{name} must not contain infinite values; found one at position {int(np.flatnonzero(np.isinf(array))[0])}")
    if not allow_nan and np.isnan(array).any():
        position = int(np.flatnonzero(np.isnan(array))[0])
        raise InputError(f"{name} must not contain NaN; found one at position {position}")
    return array


def check_same_length(name_a: str, a: Sized, name_b: str, b: Sized) -> None:
    """Raise when two paired samples differ in length, naming both."""
    if len(a) != len(b):
        raise InputError(
            f"{name_a} and {name_b} must be paired (the same length); got {len(a)} and {len(b)} values"
        )


def check_json_metadata(name: str, value: Any) -> dict[str, Any]:
    """Return ``value`` as JSON-able metadata: keys holding ``None`` are dropped.

    A function, a datetime, bytes, a non-finite number or any other non-JSON
    value raises an error naming its key path::

        >>> check_json_metadata("metadata", {"model": "gpt", "seed": None})
        {'model': 'gpt'}
    """
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"{name} must be a dict of JSON values; got {describe(value)}")
    return _json_value(name, value)


def _json_value(path: str, value: Any) -> Any:
    if isinstance(value, dict):
        cleaned = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise InputError(f"{path} keys must be strings; got {describe(key)}")
            if item is not None:
                cleaned[key] = _json_value(f"{path}[{key!r}]", item)
        return cleaned
    if isinstance(value, (list, tuple)):
        return [_json_value(f"{path}[{i}]", item) for i, item in enumerate(value)]
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        if not math.isfinite(value):
            raise InputError(f"{path} must be a finite number (JSON has no NaN or infinity); got {describe(value)}")
        return float(value)
    raise InputError(
        f"{path} must be a JSON value (str, number, bool, list, dict); got {type(value).__name__} {describe(value)}"
    )
