"""Assertions: pass/fail checks on a run's aggregated metrics, for CI gates.

Each assertion's ``check(aggregated, directions)`` takes ``aggregated`` (metric
name → :class:`~cogeval.stats.Aggregate`) and ``directions`` (metric name →
``higher_is_better``) and returns an :class:`AssertionResult`. A check never
raises and never passes on missing data: a missing metric, a NaN value or an
unreadable baseline fails with a message saying so.

>>> from cogeval.stats import aggregate
>>> aggregated = {"exact_match": aggregate([1, 1, 0, 1]), "latency": aggregate([0.5, 1.5, 2.5])}
>>> directions = {"exact_match": True, "latency": False}
>>> threshold("exact_match", 0.7).check(aggregated, directions).message
'exact_match mean 0.75 >= 0.7'
>>> threshold("latency.p95", 2.0).check(aggregated, directions).message
'latency p95 2.4 > 2 (must be <= 2; lower is better)'
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import tempfile
from collections.abc import Callable, Mapping
from numbers import Real
from pathlib import Path
from typing import Any

import numpy as np

from cogeval._check import check_path, is_real
from cogeval._check import describe as _short
from cogeval._html import key_value_table, safe_html
from cogeval._numbers import number
from cogeval.data.json_limits import loads
from cogeval.errors import InputError
from cogeval.scoring.metric import check_metric_name
from cogeval.stats import Aggregate

_BASELINE_FORMAT = "cogeval.baseline"
_BASELINE_VERSION = 1
_AGGREGATE_FIELDS = tuple(field.name for field in dataclasses.fields(Aggregate))
# Fields compared the same way whatever the metric's direction.
_FIXED_SENSE = {"std_dev": False, "missing": False, "count": True}


@dataclasses.dataclass(frozen=True)
class AssertionResult:
    """The outcome of one assertion.

    ``actual`` and ``expected`` are the compared values: numbers for
    :func:`threshold`, ``{metric: value}`` mappings for :func:`no_regression`
    (current means and the worst allowed values), ``None`` for :func:`assertion`.
    """

    name: str
    passed: bool
    message: str
    actual: Any = None
    expected: Any = None

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict (for the run file)."""
        return dataclasses.asdict(self)

    @safe_html
    def _repr_html_(self) -> str:
        return key_value_table("AssertionResult", self.to_dict())


def _number(value: Any) -> float:
    """``value`` as a float; NaN when it is not a real number."""
    if isinstance(value, (Real, np.number)) and not isinstance(value, bool):
        return float(value)
    return math.nan


def _field(summary: Any, field: str) -> Any:
    """A field of an Aggregate (or of a mapping read from a run file)."""
    if isinstance(summary, Mapping):
        return summary[field]
    return getattr(summary, field)


def _fmt(value: float) -> str:
    return number(value)


class Assertion:
    """Base of assertions: a ``name``, :meth:`describe` for the run file, and :meth:`check`."""

    kind = "assertion"

    def __init__(self, name: str, params: Mapping[str, Any]) -> None:
        if not isinstance(name, str) or not name.strip():
            raise InputError(f"assertion name must be a non-empty string; got {_short(name)}")
        self.name = name
        self.params = dict(params)

    def check(self, aggregated: Mapping[str, Any], directions: Mapping[str, bool]) -> AssertionResult:
        """Pass or fail on ``aggregated`` (metric → Aggregate) given ``directions`` (metric → higher_is_better)."""
        raise NotImplementedError

    def _result(self, passed: bool, message: str, actual: Any = None, expected: Any = None) -> AssertionResult:
        return AssertionResult(self.name, bool(passed), message, actual, expected)

    def describe(self) -> dict[str, Any]:
        """JSON description for the run file: ``{"kind", "name", "params"}``."""
        return {"kind": self.kind, "name": self.name, "params": dict(self.params)}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class _Threshold(Assertion):
    kind = "threshold"

    def __init__(self, path: Any, value: Any, name: str | None) -> None:
        if not isinstance(path, str):
            raise InputError(f"threshold path must be a string such as 'exact_match' or 'latency.p95'; got {_short(path)}")
        metric, _, field = path.partition(".")
        check_metric_name(metric, "threshold path's metric name")
        field = field or "mean"
        if field not in _AGGREGATE_FIELDS:
            raise InputError(
                f"threshold path {path!r}: unknown field {field!r}; valid fields are {', '.join(_AGGREGATE_FIELDS)}"
            )
        if not isinstance(value, Real) or isinstance(value, bool) or not math.isfinite(value):
            raise InputError(f"threshold value must be a finite number; got {_short(value)}")
        self.metric, self.field, self.value = metric, field, float(value)
        super().__init__(name or f"threshold({path}, {value:g})", {"path": path, "value": self.value})

    def check(self, aggregated: Mapping[str, Any], directions: Mapping[str, bool]) -> AssertionResult:
        label = f"{self.metric} {self.field}"
        if self.metric not in aggregated:
            names = ", ".join(sorted(aggregated)) or "none"
            return self._result(False, f"no metric {self.metric!r} in this run (metrics: {names})", None, self.value)
        if self.field in _FIXED_SENSE:
            higher = _FIXED_SENSE[self.field]
        elif self.metric in directions:
            higher = bool(directions[self.metric])
        else:
            return self._result(False, f"the direction of metric {self.metric!r} is unknown", None, self.value)
        try:
            actual = _number(_field(aggregated[self.metric], self.field))
        except (KeyError, AttributeError):
            valid = ", ".join(_AGGREGATE_FIELDS)
            return self._result(False, f"{label} is not available; valid fields are {valid}", None, self.value)
        if math.isnan(actual):
            why = " (no values: every case errored or was unknown?)" if self.field != "std_dev" else ""
            return self._result(False, f"{label} is NaN{why}; a threshold never passes on NaN", actual, self.value)
        sense = "higher is better" if higher else "lower is better"
        passed = actual >= self.value if higher else actual <= self.value
        if passed:
            message = f"{label} {_fmt(actual)} {'>=' if higher else '<='} {_fmt(self.value)}"
        else:
            need = f"must be {'>=' if higher else '<='} {_fmt(self.value)}"
            message = f"{label} {_fmt(actual)} {'<' if higher else '>'} {_fmt(self.value)} ({need}; {sense})"
        return self._result(passed, message, actual, self.value)


def threshold(path: str, value: float, *, name: str | None = None) -> Assertion:
    """Require a metric's aggregate to reach ``value``, in the metric's direction.

    ``path`` is a metric name (its mean is compared) or ``"metric.field"``
    for any :class:`~cogeval.stats.Aggregate` field (``"latency.p95"``).
    Passes when the value is ``>= value`` for higher-is-better metrics and
    ``<= value`` for lower-is-better ones; ``std_dev`` and ``missing`` are
    always "at most", ``count`` always "at least". Missing or NaN fails.

    >>> threshold("latency.p95", 2.0).describe()
    {'kind': 'threshold', 'name': 'threshold(latency.p95, 2)', 'params': {'path': 'latency.p95', 'value': 2.0}}
    """
    return _Threshold(path, value, name)


def _baseline_mean(value: Any) -> float:
    """A baseline or current mean: a number, ``None`` (NaN), an Aggregate or ``{"mean": ...}``."""
    if value is None or isinstance(value, (Real, np.number)):
        return _number(value)
    return _number(_field(value, "mean"))


def write_baseline(path: str | os.PathLike[str], aggregated: Mapping[str, Any], directions: Mapping[str, bool]) -> Path:
    """Write the means of ``aggregated`` to a baseline file for :func:`no_regression`; return its path.

    The file is ``{"format": "cogeval.baseline", "version": 1, "metrics":
    {name: {"mean": x, "higher_is_better": bool}}}`` (a NaN mean is ``null``),
    written atomically (temporary file in the same folder, then ``os.replace``).
    Every metric needs a direction in ``directions``.
    """
    target = check_path("path", path)
    metrics = {}
    for name in sorted(aggregated):
        if name not in directions:
            raise InputError(f"write_baseline: no direction for metric {name!r}; give it in directions")
        mean = _baseline_mean(aggregated[name])
        metrics[name] = {"mean": None if math.isnan(mean) else mean, "higher_is_better": bool(directions[name])}
    document = {"format": _BASELINE_FORMAT, "version": _BASELINE_VERSION, "metrics": metrics}
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(document, stream, indent=2, sort_keys=True, allow_nan=False)
            stream.write("\n")
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def read_baseline(path: str | os.PathLike[str]) -> dict[str, tuple[float, bool]]:
    """Read a baseline file: metric name → ``(mean, higher_is_better)``; a ``null`` mean is NaN.

    Raises :class:`~cogeval.errors.InputError` naming the file (and the field) when it
    cannot be read or is not a baseline.
    """
    where = f"baseline file {os.fspath(check_path('path', path))!r}"
    try:
        document = loads(Path(path).read_text(encoding="utf-8"), where)
    except OSError as error:
        raise InputError(f"cannot read {where}: {error.strerror or error}") from None
    except ValueError as error:
        raise InputError(f"{where} is not valid JSON: {error}") from None
    if not isinstance(document, Mapping) or document.get("format") != _BASELINE_FORMAT:
        raise InputError(f"{where} is not a cogeval baseline: 'format' must be {_BASELINE_FORMAT!r}")
    if document.get("version") != _BASELINE_VERSION:
        raise InputError(f"{where}: unsupported 'version' {_short(document.get('version'))}; expected {_BASELINE_VERSION}")
    metrics = document.get("metrics")
    if not isinstance(metrics, Mapping):
        raise InputError(f"{where}: 'metrics' must be an object of metric name → {{mean, higher_is_better}}")
    result = {}
    for name, entry in metrics.items():
        field = f"{where}: metrics.{name}"
        if not isinstance(entry, Mapping):
            raise InputError(f"{field} must be an object with 'mean' and 'higher_is_better'")
        mean, higher = entry.get("mean"), entry.get("higher_is_better")
        if mean is not None and (not isinstance(mean, Real) or isinstance(mean, bool)):
            raise InputError(f"{field}.mean must be a number or null; got {_short(mean)}")
        if not isinstance(higher, bool):
            raise InputError(f"{field}.higher_is_better must be true or false; got {_short(higher)}")
        result[name] = (_number(mean), higher)
    return result


class _NoRegression(Assertion):
    kind = "no_regression"

    def __init__(self, baseline_path: Any, tolerance: Any, name: str | None) -> None:
        if not isinstance(baseline_path, (str, os.PathLike)):
            raise InputError(f"baseline_path must be a str or Path; got {_short(baseline_path)}")
        if not is_real(tolerance) or not 0 <= tolerance < math.inf:
            raise InputError(f"tolerance must be a finite number >= 0 (a fraction, 0.05 = 5%); got {_short(tolerance)}")
        self.baseline_path, self.tolerance = os.fspath(baseline_path), float(tolerance)
        params = {"baseline_path": self.baseline_path, "tolerance": self.tolerance}
        super().__init__(name or f"no_regression({self.baseline_path})", params)

    def check(self, aggregated: Mapping[str, Any], directions: Mapping[str, bool]) -> AssertionResult:
        try:
            baseline = read_baseline(self.baseline_path)
        except InputError as error:
            return self._result(False, str(error))
        failures, notes, actual, expected = [], [], {}, {}
        for name, (base, higher) in sorted(baseline.items()):
            if name not in aggregated:
                failures.append(f"{name} is in the baseline but not in this run")
                continue
            if name in directions and bool(directions[name]) != higher:
                failures.append(f"{name} changed direction since the baseline (higher_is_better={higher} there)")
                continue
            try:
                current = _baseline_mean(aggregated[name])
            except (KeyError, AttributeError):
                current = math.nan
            actual[name] = current
            if math.isnan(base):
                notes.append(f"{name} has no baseline mean")
                continue
            slack = self.tolerance * abs(base)
            allowed = base - slack if higher else base + slack
            expected[name] = allowed
            sense = "higher" if higher else "lower"
            if math.isnan(current):
                failures.append(f"{name} mean is NaN (baseline {_fmt(base)})")
            elif (current < allowed if higher else current > allowed) and not math.isclose(current, allowed, rel_tol=1e-9, abs_tol=1e-12):
                failures.append(
                    f"{name} regressed: mean {_fmt(current)} vs baseline {_fmt(base)}, "
                    f"allowed {'>=' if higher else '<='} {_fmt(allowed)} ({sense} is better)"
                )
        new = sorted(set(aggregated) - set(baseline))
        if new:
            notes.append(f"not in baseline: {', '.join(new)}")
        rule = f"tolerance {self.tolerance:.4g} × |baseline mean|, from {self.baseline_path!r}"
        message = "; ".join(failures) + f" ({rule})" if failures else f"no metric regressed beyond {rule}"
        if notes:
            message += "; " + "; ".join(notes)
        return self._result(not failures, message, actual, expected)


def no_regression(baseline_path: str | os.PathLike[str], tolerance: float = 0.05, *, name: str | None = None) -> Assertion:
    """Fail any metric whose mean got worse than the baseline by more than ``tolerance`` × |baseline mean|.

    The rule is relative, so it reads the same in any unit (seconds or
    milliseconds, dollars or cents): with the default 0.05, an accuracy of
    0.80 may drop to 0.76 and a latency of 2.0 s may rise to 2.1 s. A
    baseline of 0 allows no worsening. The baseline comes from
    :func:`write_baseline`; a missing or malformed file fails the check with
    a message naming the file, as does a baseline metric missing from the run.

    >>> no_regression("baseline.json").describe()["params"]
    {'baseline_path': 'baseline.json', 'tolerance': 0.05}
    """
    return _NoRegression(baseline_path, tolerance, name)


class _Custom(Assertion):
    kind = "assertion"

    def __init__(self, name: Any, check: Any, message: Any) -> None:
        if not callable(check):
            raise InputError(f"assertion {name!r}: check must be a callable check(aggregated) -> bool; got {_short(check)}")
        if message is not None and not isinstance(message, str):
            raise InputError(f"assertion {name!r}: message must be a string or None; got {_short(message)}")
        super().__init__(name, {})
        self.fn, self.message = check, message

    def check(self, aggregated: Mapping[str, Any], directions: Mapping[str, bool]) -> AssertionResult:
        try:
            verdict = self.fn(aggregated)
        except Exception as error:  # noqa: BLE001 - a failing check is a failed assertion, not a crash
            return self._result(False, f"{self.name}: check raised {type(error).__name__}: {error}")
        if not isinstance(verdict, (bool, np.bool_)):
            return self._result(False, f"{self.name}: check returned {_short(verdict)}; expected True or False")
        if verdict:
            return self._result(True, self.message or f"{self.name} passed")
        return self._result(False, self.message or f"{self.name} failed")


def assertion(name: str, check: Callable[[Mapping[str, Any]], bool], message: str | None = None) -> Assertion:
    """A custom assertion: ``check(aggregated)`` returns True to pass.

    An exception or a non-bool result fails the assertion with that in the message.

    >>> from cogeval.stats import aggregate
    >>> fast = assertion("fast", lambda agg: agg["latency"].max < 5)
    >>> fast.check({"latency": aggregate([1.0, 2.0])}, {"latency": False}).passed
    True
    """
    return _Custom(name, check, message)
