"""Summaries of one sample: mean, median, spread and percentiles, NaN-skipping.

Missing values (NaN, ``None``) are left out; a sample with no values gives NaN,
never 0.0. Percentiles interpolate linearly (numpy ``linear``, R type 7).

>>> aggregate([1, 2, 3, None]).to_frame()[["mean", "p95", "count", "missing"]]
   mean  p95  count  missing
0   2.0  2.9      3        1
"""

from __future__ import annotations

import dataclasses
import math
from numbers import Real
from typing import Any

import numpy as np

from cogeval._check import as_float_array, describe
from cogeval.errors import InputError
from cogeval.stats.result import StatResult


@dataclasses.dataclass(frozen=True)
class Aggregate(StatResult):
    """Summary of a sample; every statistic is over the values present.

    Fields: ``mean``, ``median``, ``min``, ``max``, ``std_dev`` (ddof=1, NaN
    for fewer than 2 values), ``p50``, ``p95``, ``p99`` (linear percentiles),
    ``count`` (values present) and ``missing`` (NaN values left out).
    """

    mean: float
    median: float
    min: float
    max: float
    std_dev: float
    p50: float
    p95: float
    p99: float
    count: int
    missing: int


def _present(values: Any) -> np.ndarray:
    array = as_float_array("values", values, allow_nan=True)
    return array[~np.isnan(array)]


def _percentile(present: np.ndarray, p: float) -> float:
    return float(np.quantile(present, p)) if len(present) else math.nan


def _std_dev(present: np.ndarray) -> float:
    return float(present.std(ddof=1)) if len(present) > 1 else math.nan


def mean(values: Any) -> float:
    """Mean of the values present (NaN skipped); NaN when there are none.

    >>> mean([1, 2, float("nan")])
    1.5
    """
    present = _present(values)
    return float(present.mean()) if len(present) else math.nan


def median(values: Any) -> float:
    """Median of the values present (NaN skipped); NaN when there are none.

    >>> median([3, 1, 2, 10])
    2.5
    """
    return _percentile(_present(values), 0.5)


def std_dev(values: Any) -> float:
    """Sample standard deviation (ddof=1) of the values present; NaN for fewer than 2.

    R: ``sd(1:10)`` is 3.02765.

    >>> round(std_dev(range(1, 11)), 5)
    3.02765
    """
    return _std_dev(_present(values))


def percentile(values: Any, p: float) -> float:
    """The ``p`` quantile (``p`` in [0, 1]) of the values present, by linear interpolation (R type 7).

    R: ``quantile(1:10, 0.95)`` is 9.55.

    >>> round(percentile(range(1, 11), 0.95), 2)
    9.55
    """
    if not isinstance(p, Real) or isinstance(p, bool) or not 0 <= p <= 1:
        hint = f" (p is a fraction: for {p:g}% pass {p / 100:g})" if isinstance(p, Real) and 1 < p <= 100 else ""
        raise InputError(f"p must be a number in [0, 1]; got {describe(p)}{hint}")
    return _percentile(_present(values), float(p))


def aggregate(values: Any) -> Aggregate:
    """Summarise ``values``: :class:`Aggregate` with mean, median, min, max, std_dev, p50, p95, p99, count, missing.

    >>> aggregate([]).count, aggregate([]).mean
    (0, nan)
    """
    array = as_float_array("values", values, allow_nan=True)
    present = array[~np.isnan(array)]
    empty = len(present) == 0
    p50, p95, p99 = (math.nan,) * 3 if empty else (float(q) for q in np.quantile(present, [0.5, 0.95, 0.99]))
    return Aggregate(
        mean=math.nan if empty else float(present.mean()),
        median=p50,
        min=math.nan if empty else float(present.min()),
        max=math.nan if empty else float(present.max()),
        std_dev=_std_dev(present),
        p50=p50,
        p95=p95,
        p99=p99,
        count=len(present),
        missing=len(array) - len(present),
    )
