"""Confidence intervals: the bootstrap of any statistic and the Wilson interval of a proportion.

Both return an :class:`~cogeval.stats.result.Interval` (``low, high = interval``).

>>> [round(limit, 4) for limit in wilson_interval(81, 263)]
[0.2553, 0.3662]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from numbers import Integral
from statistics import NormalDist
from typing import Any

import numpy as np

from cogeval._check import as_float_array, check_choice, check_positive_int, check_probability, check_seed, describe
from cogeval.errors import InputError
from cogeval.stats.result import Interval

#: Most array elements one chunk of resamples may hold: 512 KB of int64 indices
#: plus 512 KB of gathered values. Chunks this small stay in cache and malloc
#: reuses their memory; from 1 MB up, glibc returns it to the system after each
#: chunk and page faults double the run time (benchmarks/README.md).
#: The result does not depend on it.
CHUNK_ELEMENTS = 1 << 16

#: A mean's percentile interval resamples counts instead of indices when the values take at most
#: ``len(values) // COUNTS_RATIO`` distinct values (every 0/1 metric from 32 values on): one multinomial
#: draw of k counts per resample costs about as much as 16 index draws, so from k = n / 16 down counts
#: are faster. Both are the same bootstrap (docs/statistics-intervals.md).
COUNTS_RATIO = 16

_STATISTICS: dict[str, Callable[..., Any]] = {"mean": np.mean, "median": np.median}
_NORMAL = NormalDist()


def _z(probability: float) -> float:
    """Standard normal quantile, ±inf at 0 and 1."""
    if probability <= 0:
        return -math.inf
    if probability >= 1:
        return math.inf
    return _NORMAL.inv_cdf(probability)


def _statistic_function(statistic: object) -> Callable[..., Any]:
    if callable(statistic):
        return statistic
    return _STATISTICS[check_choice("statistic", statistic, _STATISTICS)]


def _apply(function: Callable[..., Any], sample: np.ndarray) -> np.ndarray:
    """Apply a reduction along the last axis and check it returns one value per row."""
    result = np.asarray(function(sample, axis=-1), dtype=float)
    if result.shape != sample.shape[:-1]:
        raise InputError(
            "statistic must reduce an array along axis=-1 (like numpy.mean) and return one value per row; "
            f"got shape {result.shape} for input shape {sample.shape}"
        )
    return result


def _resample(values: np.ndarray, function: Callable[..., Any], n_resamples: int, rng: np.random.Generator,
              chunk_elements: int) -> np.ndarray:
    """The bootstrap distribution: ``function`` over ``n_resamples`` resamples, drawn chunk by chunk.

    Chunks are drawn in order from the one generator, and ``Generator.integers``
    gives the same stream whether asked for k rows at once or in pieces, so the
    distribution does not depend on ``chunk_elements``.
    """
    n = len(values)
    rows = max(1, chunk_elements // n)
    out = np.empty(n_resamples)
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        # int64 indices: fancy indexing with intp is the fastest gather (int32 is converted first).
        out[start:stop] = _apply(function, values[rng.integers(0, n, size=(stop - start, n))])
    return out


def _resample_mean_counts(distinct: np.ndarray, counts: np.ndarray, n_resamples: int, rng: np.random.Generator,
                          chunk_elements: int) -> np.ndarray:
    """The bootstrap distribution of the mean from counts: how often a resample of n values holds each of the
    ``distinct`` values is one ``Multinomial(n, counts / n)`` draw, exactly as for n drawn indices."""
    n = int(counts.sum())
    rows = max(1, chunk_elements // len(distinct))
    out = np.empty(n_resamples)
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        out[start:stop] = rng.multinomial(n, counts / n, size=stop - start) @ distinct / n
    return out


def _jackknife(values: np.ndarray, function: Callable[..., Any], chunk_elements: int) -> np.ndarray:
    """Leave-one-out values of the statistic, built in chunks of rows."""
    n = len(values)
    if function is np.mean:
        means: np.ndarray = (values.sum() - values) / (n - 1)
        return means
    rows = max(1, chunk_elements // n)
    positions = np.arange(n - 1)
    out = np.empty(n)
    for start in range(0, n, rows):
        left_out = np.arange(start, min(n, start + rows))[:, None]
        out[start : start + len(left_out)] = _apply(function, values[positions + (positions >= left_out)])
    return out


def _bca_levels(values: np.ndarray, function: Callable[..., Any], distribution: np.ndarray,
                alpha: float, chunk_elements: int) -> tuple[float, float]:
    """Adjusted lower and upper levels of the BCa interval (Efron & Tibshirani 1993, §14.3), as scipy computes them."""
    observed = float(_apply(function, values[None, :])[0])
    # scipy's ties convention: the share of resamples below the observed value, ties counted half.
    below = (np.count_nonzero(distribution < observed) + np.count_nonzero(distribution <= observed)) / (
        2 * len(distribution)
    )
    z0 = _z(below)
    jack = _jackknife(values, function, chunk_elements)
    d = jack.mean() - jack
    denominator = 6 * np.sum(d**2) ** 1.5
    acceleration = float(np.sum(d**3) / denominator) if denominator > 0 else 0.0
    levels = []
    for z in (_z(alpha), _z(1 - alpha)):
        with np.errstate(all="ignore"):  # z0 = ±inf when every resample is on one side: numpy gives inf or nan
            shifted = np.float64(z0) + z
            adjusted = float(z0 + shifted / (1 - acceleration * shifted))
        if math.isnan(adjusted):
            levels.append(math.nan)
        else:
            levels.append(_NORMAL.cdf(adjusted) if math.isfinite(adjusted) else float(adjusted > 0))
    return levels[0], levels[1]


def bootstrap_ci(
    values: Any,
    *,
    statistic: str | Callable[..., Any] = "mean",
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    method: str = "percentile",
    seed: int | np.random.Generator | None = None,
) -> Interval:
    """Bootstrap confidence interval of ``statistic`` over ``values``.

    Resamples ``values`` with replacement ``n_resamples`` times (vectorised,
    in chunks of at most ``CHUNK_ELEMENTS`` array elements, drawn in sequence
    from a local ``numpy.random.default_rng(seed)`` so the result depends on
    the seed only) and reads the interval off the bootstrap distribution by
    linear interpolation (numpy's default). For paired data pass the per-case
    differences.

    - ``statistic``: ``"mean"``, ``"median"`` or a callable reducing an array
      along ``axis=`` like the numpy reductions (``numpy.std``, a trimmed mean...).
    - ``method``: ``"percentile"`` or ``"bca"`` (bias-corrected and accelerated,
      with a jackknife acceleration; it matches ``scipy.stats.bootstrap(method="BCa")``).
      When its levels are undefined (every resampled statistic on one side of
      the observed one) the interval is ``(nan, nan)``, as in scipy.
    - The mean's percentile interval of values with few distinct values (at most
      ``len(values) // COUNTS_RATIO``, e.g. 0/1 scores or paired differences in {-1, 0, 1}) draws each
      resample's counts of the distinct values with one multinomial draw instead of n indices: the same
      bootstrap distribution (exactly, not an approximation), O(k) per resample instead of O(n), but a
      different random stream, so a seed gives another (equally valid) interval than index resampling.
    - Constant data (one value included) gives ``(s, s)`` with ``s`` the
      statistic of the data, exactly. NaN or no values raise ``InputError``.

    >>> low, high = bootstrap_ci([1.0, 2.0, 3.0, 4.0, 10.0], seed=1)
    >>> round(low, 6), round(high, 6)
    (1.8, 7.0)
    >>> bootstrap_ci([0.5, 0.5, 0.5], method="bca")
    Interval(low=0.5, high=0.5)
    """
    data = as_float_array("values", values)
    function = _statistic_function(statistic)
    confidence = check_probability("confidence", confidence, open_interval=True)
    n_resamples = check_positive_int("n_resamples", n_resamples)
    method = check_choice("method", method, ("percentile", "bca"))
    rng = np.random.default_rng(check_seed("seed", seed))
    if len(data) == 0:
        raise InputError("values must hold at least one number; got none")
    if np.all(data == data[0]):
        # Every resample equals the data, so the bootstrap distribution is one point.
        point = data[0] if function in (np.mean, np.median) else float(_apply(function, data[None, :])[0])
        return Interval(float(point), float(point))

    distinct, counts = np.unique(data, return_counts=True)
    if function is np.mean and method == "percentile" and len(distinct) <= len(data) // COUNTS_RATIO:
        distribution = _resample_mean_counts(distinct, counts, n_resamples, rng, CHUNK_ELEMENTS)
    else:
        distribution = _resample(data, function, n_resamples, rng, CHUNK_ELEMENTS)
    alpha = (1 - confidence) / 2
    if method == "percentile":
        levels = (alpha, 1 - alpha)
    else:
        levels = _bca_levels(data, function, distribution, alpha, CHUNK_ELEMENTS)
        if any(math.isnan(level) for level in levels):
            return Interval(math.nan, math.nan)
    low, high = np.quantile(distribution, levels)
    return Interval(float(low), float(high))


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95, correction: bool = False) -> Interval:
    """Wilson score interval for the proportion ``successes / n``, clamped to [0, 1].

    With ``correction=True`` it is the continuity-corrected Wilson interval,
    Newcombe (1998) method 4, applied at every ``successes`` (unlike R's
    ``prop.test``, which drops the correction at ``successes = n / 2``); the
    lower limit is 0 at ``successes = 0`` and the upper limit 1 at ``successes = n``.
    ``n = 0`` gives ``Interval(nan, nan)``: there is no data, so no interval.

    >>> low, high = wilson_interval(0, 20)
    >>> low, round(high, 4)
    (0.0, 0.1611)
    >>> [round(limit, 4) for limit in wilson_interval(15, 148, correction=True)]
    [0.0598, 0.1644]
    """
    for name, value in (("successes", successes), ("n", n)):
        if not isinstance(value, Integral) or isinstance(value, bool) or value < 0:
            raise InputError(f"{name} must be an integer >= 0; got {describe(value)}")
    if successes > n:
        raise InputError(f"successes must be at most n; got successes={successes} and n={n}")
    confidence = check_probability("confidence", confidence, open_interval=True)
    if n == 0:
        return Interval(math.nan, math.nan)
    x, n = int(successes), int(n)
    z = _z(1 - (1 - confidence) / 2)
    z2 = z * z
    p = x / n
    if not correction:
        centre = (x + z2 / 2) / (n + z2)
        half = z * math.sqrt(x * (n - x) / n + z2 / 4) / (n + z2)
        low, high = centre - half, centre + half
    else:
        denominator = 2 * (n + z2)
        low = 0.0 if x == 0 else (2 * x + z2 - 1 - z * math.sqrt(z2 - 2 - 1 / n + 4 * p * (n * (1 - p) + 1))) / denominator
        high = 1.0 if x == n else (2 * x + z2 + 1 + z * math.sqrt(z2 + 2 - 1 / n + 4 * p * (n * (1 - p) - 1))) / denominator
    # Exact limits at the ends (rounding would otherwise give 0.9999999999999999).
    low = 0.0 if x == 0 else max(0.0, low)
    high = 1.0 if x == n else min(1.0, high)
    return Interval(low, high)
