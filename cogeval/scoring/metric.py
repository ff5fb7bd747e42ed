"""Per-case metrics: configured callables that remember how they were made.

A metric has a ``name`` (the key of its scores everywhere), a direction
(``higher_is_better``, never guessed from the name) and ``params``, the
arguments it was made with, so a run file can say exactly what scored it.
:func:`metric` turns a function ``fn(output, case)`` into a :class:`Metric`::

    >>> @metric("short", max_chars=5)
    ... def short(output, case):
    ...     return len(output) <= 5
    >>> short
    Metric('short', max_chars=5)
    >>> short.score("hello", None)
    Score(value=1.0, details=None, error=None)
    >>> short.score(None, None).error
    "metric 'short' raised TypeError: object of type 'NoneType' has no len()"

Scoring never raises: an exception, a non-number or a non-finite value gives
a :class:`Score` whose value is NaN and whose ``error`` says what went wrong,
never a silent 0.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping
from numbers import Real
from typing import Any

import numpy as np

from cogeval._check import describe as _short
from cogeval.errors import InputError
from cogeval.execution import run_sync

_NAN = float("nan")


@dataclasses.dataclass(frozen=True)
class Score:
    """One metric's verdict on one output.

    ``value`` is a finite float, or NaN when ``error`` says why no score could
    be given; ``details`` is an optional mapping (a judge's reasoning, the
    number found, precision and recall...).

    >>> Score(0.5, {"reason": "half right"}).ok
    True
    """

    value: float
    details: Mapping[str, Any] | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """True when the score is a number rather than an error."""
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """``{"value", "details", "error"}`` with NaN kept as NaN."""
        details = dict(self.details) if self.details is not None else None
        return {"value": self.value, "details": details, "error": self.error}


def check_metric_name(name: Any, what: str = "metric name") -> str:
    """Return ``name`` if it is a usable metric name, else raise :class:`InputError`.

    Names are keys in tables and run files and the first part of assertion
    paths such as ``"latency.p95"``, so they are non-empty strings without
    ``.`` and without surrounding whitespace.

    >>> check_metric_name("answer.quality")
    Traceback (most recent call last):
    ...
    cogeval.errors.InputError: metric name must not contain '.' (names start assertion paths such as 'latency.p95'); got 'answer.quality', try 'answer_quality'
    """
    if not isinstance(name, str) or not name.strip():
        hint = " (use @metric(\"name\"), not bare @metric)" if callable(name) else ""
        raise InputError(f"{what} must be a non-empty string{hint}; got {_short(name)}")
    if name != name.strip():
        raise InputError(f"{what} must not start or end with whitespace; got {name!r}")
    if "." in name:
        raise InputError(
            f"{what} must not contain '.' (names start assertion paths such as 'latency.p95'); "
            f"got {name!r}, try {name.replace('.', '_')!r}"
        )
    return name


def check_params(owner: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``params`` as a dict after checking it can be written to JSON."""
    for key, value in params.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            raise InputError(
                f"{owner}: parameter {key}={_short(value)} cannot be written to a run file; "
                "params must be JSON values (str, number, bool, None, list, dict)"
            ) from None
    return dict(params)


def _check_direction(higher_is_better: Any) -> bool:
    if not isinstance(higher_is_better, (bool, np.bool_)):
        raise InputError(f"higher_is_better must be True or False; got {_short(higher_is_better)}")
    return bool(higher_is_better)


class Described:
    """What every metric shares: ``name``, ``higher_is_better``, ``params``, ``kind``, how it describes itself."""

    name: str
    higher_is_better: bool
    params: dict[str, Any]
    kind: str
    default_direction = True  # the direction ``repr`` leaves unsaid

    def describe(self) -> dict[str, Any]:
        """What made this metric, as JSON for the run file: name, direction, params, kind."""
        return {
            "name": self.name,
            "higher_is_better": self.higher_is_better,
            "params": dict(self.params),
            "kind": self.kind,
        }

    def __repr__(self) -> str:
        params = "".join(f", {k}={v!r}" for k, v in self.params.items())
        direction = "" if self.higher_is_better == self.default_direction else f", higher_is_better={self.higher_is_better}"
        return f"{type(self).__name__}({self.name!r}{params}{direction})"


class Metric(Described):
    """A named, directed per-case metric; call :meth:`score` or ``await`` :meth:`ascore`.

    ``fn(output, case)`` may return a number (bools become 1.0/0.0), a
    ``(number, details)`` tuple, a mapping ``{"score": number, ...}`` whose
    other keys become the details, or a :class:`Score`. It may be ``async``:
    :meth:`ascore` awaits it and :meth:`score` runs it to completion (in a
    helper thread when an event loop is already running), so prefer
    :meth:`ascore` in async code.

    Subclasses (such as LLM judges) override :meth:`compute`, sync or
    ``async def``, and set ``requires_judge``; everything else is shared.
    Keyword options given to :meth:`score`/:meth:`ascore` (``judge=...``)
    are passed on to :meth:`compute`.

    >>> m = Metric("length", lambda output, case: {"score": len(output), "unit": "chars"})
    >>> m.score("four", None)
    Score(value=4.0, details={'unit': 'chars'}, error=None)
    >>> m.describe()
    {'name': 'length', 'higher_is_better': True, 'params': {}, 'kind': 'case'}
    """

    kind = "case"
    requires_judge = False

    def __init__(
        self,
        name: str,
        fn: Callable[[Any, Any], Any] | None = None,
        *,
        higher_is_better: bool = True,
        params: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = check_metric_name(name)
        if fn is not None and not callable(fn):
            raise InputError(f"metric {name!r}: fn must be a callable fn(output, case); got {_short(fn)}")
        self.fn = fn
        self.higher_is_better = _check_direction(higher_is_better)
        self.params = check_params(f"metric {name!r}", params or {})

    def compute(self, output: Any, case: Any) -> Any:
        """The raw result for one output (anything :meth:`score` accepts); may return an awaitable."""
        if self.fn is None:
            raise NotImplementedError(f"{type(self).__name__} must define compute() or be given fn")
        return self.fn(output, case)

    def score(self, output: Any, case: Any, **options: Any) -> Score:
        """Score one output; never raises (errors become ``Score(nan, error=...)``).

        Keyword ``options`` (such as ``judge=`` for LLM judges) go to :meth:`compute`.
        """
        try:
            raw = self.compute(output, case, **options)
            if hasattr(raw, "__await__"):
                raw = run_sync(raw)
        except Exception as error:  # noqa: BLE001 - a scoring failure is data, not a crash
            return self._error(f"raised {type(error).__name__}: {error}")
        return self.to_score(raw)

    async def ascore(self, output: Any, case: Any, **options: Any) -> Score:
        """Score one output, awaiting an async ``fn``/``compute``; never raises."""
        try:
            raw = self.compute(output, case, **options)
            if hasattr(raw, "__await__"):
                raw = await raw
        except Exception as error:  # noqa: BLE001 - a scoring failure is data, not a crash
            return self._error(f"raised {type(error).__name__}: {error}")
        return self.to_score(raw)

    def __call__(self, output: Any, case: Any, **options: Any) -> Score:
        """Same as :meth:`score`."""
        return self.score(output, case, **options)

    def to_score(self, raw: Any) -> Score:
        """Normalise what a metric function returned into a :class:`Score`."""
        details: Any = None
        if isinstance(raw, Score):
            if raw.error is not None:
                return Score(_NAN, raw.details, raw.error)
            raw, details = raw.value, raw.details
        elif isinstance(raw, tuple):
            if len(raw) != 2:
                return self._error(f"returned a tuple of {len(raw)} items; expected (score, details)")
            raw, details = raw
        elif isinstance(raw, Mapping):
            if "score" not in raw:
                return self._error(f"returned a mapping without a 'score' key: {_short(raw)}")
            details = {k: v for k, v in raw.items() if k != "score"} or None
            raw = raw["score"]
        if details is not None and not isinstance(details, Mapping):
            return self._error(f"returned details of type {type(details).__name__}; expected a mapping or None")
        if isinstance(raw, (bool, np.bool_)):
            return Score(float(raw), details)
        if not isinstance(raw, Real):
            return self._error(
                f"returned {type(raw).__name__} {_short(raw)}; expected a number, a (number, details) "
                "tuple, a mapping with 'score', or a Score"
            )
        try:
            value = float(raw)
        except OverflowError:  # an int or Fraction past the float range
            return self._error(f"returned {_short(raw)}, beyond the range of a float; a score must be a finite number",
                               details)
        if not math.isfinite(value):
            return self._error(f"returned {value}; a score must be a finite number", details)
        return Score(value, details)

    def _error(self, problem: str, details: Mapping[str, Any] | None = None) -> Score:
        return Score(_NAN, details, f"metric {self.name!r} {problem}")

    def renamed(self, name: str) -> Metric:
        """A copy under another name, e.g. to use two ``regex`` metrics in one suite.

        >>> metric("quality")(lambda output, case: 1.0).renamed("tone").name
        'tone'
        """
        check_metric_name(name)
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__, name=name, params=dict(self.params))
        return copy


def metric(name: str, higher_is_better: bool = True, **params: Any) -> Callable[[Callable[..., Any]], Metric]:
    """Make ``fn(output, case)`` into a :class:`Metric` called ``name``.

    Use it as a decorator (``@metric("quality")``) or call it on a function
    (``metric("quality")(fn)``). ``params`` are recorded in the run file as
    the arguments the metric was made with; they are *not* passed to ``fn``
    (close over them instead, as in a factory function).

    >>> quality = metric("quality")(lambda output, case: (0.75, {"reason": "mostly right"}))
    >>> quality.score("...", None).value
    0.75
    """
    check_metric_name(name)
    direction = _check_direction(higher_is_better)
    checked = check_params(f"metric {name!r}", params)

    def make(fn: Callable[..., Any]) -> Metric:
        return Metric(name, fn, higher_is_better=direction, params=checked)

    return make
