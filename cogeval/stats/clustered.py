"""Clustered paired data: the standard error of a mean, and the t-test, when cases come in clusters.

Cases that share a passage, a conversation or a prompt template are not
independent: their differences ``d = a - b`` move together, and a test that
counts every case as one piece of evidence is too sure. The rules of every
clustered test here (DESIGN §4, "Clustered cases"):

- ``clusters`` gives one label per unit (any hashable labels: str, int...); a
  missing label (None or NaN) is an error naming its position. ``codes=True``
  says they are already integer codes 0..G-1 (every code used), and skips
  factorising them.
- ``G`` clusters of sizes ``n_k``, ``n = Σ n_k``, and ``D_k`` the sum of the
  centred differences ``d_i - mean(d)`` of cluster ``k``.
- CR1 = √(G/(G−1)·Σ D_k²)/n with G − 1 degrees of freedom (statsmodels'
  ``cov_type="cluster"``, Stata, Inspect AI's ``stderr(cluster=)``; R's
  ``sandwich::vcovCL(lm(d ~ 1), cluster = ~g, type = "HC1")``, whose (n−1)/(n−k)
  is 1 here); CR2 = √(Σ D_k²/(1 − n_k/n))/n with the Bell–McCaffrey
  (Satterthwaite) degrees of freedom (R's ``clubSandwich`` and ``estimatr``).
- With one unit per cluster both are the ordinary paired t-test.
- Values are taken as given: a caller that wants tiny differences counted as 0
  (the comparison engine's noise floor) rounds them first.

:func:`cluster_se` and :func:`clustered_t_test` live here; the clustered
McNemar test is in :mod:`cogeval.stats.clustered_binary`, the clustered
Wilcoxon test in :mod:`cogeval.stats.clustered_rank`.

>>> d = [-1.2, -2.4, -1.3, -1.3, 0.0, -1.0, -1.8, -0.8, -4.6, -1.4]  # R: with(sleep, extra[1:10] - extra[11:20])
>>> g = [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
>>> round(cluster_se(d, g, kind="CR1"), 6)  # R: sqrt(sandwich::vcovCL(lm(d ~ 1), cluster = ~g, type = "HC1"))
0.411582
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
import pandas as pd

from cogeval._check import as_float_array, check_probability, check_same_length, describe
from cogeval.errors import InputError
from cogeval.stats.result import Interval, StatResult

_KINDS = ("CR1", "CR2")


@dataclasses.dataclass(frozen=True)
class _Clusters:
    """Integer cluster codes 0..G-1 per unit and the size of each cluster."""

    codes: npt.NDArray[np.intp]
    sizes: npt.NDArray[np.int64]

    @property
    def count(self) -> int:
        """G, the number of clusters."""
        return len(self.sizes)

    def sums(self, values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """The sum of ``values`` in each cluster."""
        return _summed(self.codes, values, self.count)


def _summed(codes: npt.NDArray[np.intp], values: npt.NDArray[np.float64], count: int) -> npt.NDArray[np.float64]:
    """The sum of ``values`` per code 0..count-1."""
    return np.asarray(np.bincount(codes, weights=values, minlength=count), dtype=np.float64)


def _cluster_codes(clusters: Any, n: int, *, codes: bool = False) -> _Clusters:
    """``clusters`` as integer codes 0..G-1, checked: one label per unit, none missing.

    >>> c = _cluster_codes(["x", "y", "x"], 3)
    >>> c.codes.tolist(), c.sizes.tolist()
    ([0, 1, 0], [2, 1])
    >>> _cluster_codes(["x", None], 2)
    Traceback (most recent call last):
    ...
    cogeval.errors.InputError: clusters must give every unit a label; position 1 has None
    """
    if codes:
        array = np.asarray(clusters)
        if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
            raise InputError(f"clusters must be a one-dimensional integer array of codes when codes=True; got {describe(clusters)}")
        _check_label_count(len(array), n)
        if n and (array.min() < 0):
            raise InputError(f"clusters must hold codes 0..G-1 when codes=True; got {int(array.min())}")
        sizes = np.bincount(array) if n else np.zeros(0, dtype=np.int64)
        if (sizes == 0).any():
            raise InputError(f"clusters must use every code 0..G-1 when codes=True; code {int(np.flatnonzero(sizes == 0)[0])} has no unit")
        return _Clusters(array.astype(np.intp, copy=False), sizes.astype(np.int64))
    if isinstance(clusters, (str, bytes)) or not hasattr(clusters, "__len__"):
        raise InputError(f"clusters must be a sequence of labels, one per unit; got {describe(clusters)}")
    _check_label_count(len(clusters), n)
    labels = clusters if isinstance(clusters, (np.ndarray, pd.Series, pd.Index, pd.Categorical)) else pd.Series(
        list(clusters), dtype=object)
    if np.ndim(labels) != 1:
        raise InputError(f"clusters must be one-dimensional; got shape {np.shape(labels)}")
    try:
        found, _ = pd.factorize(labels)
    except TypeError as error:
        raise InputError(f"clusters must hold hashable labels (str, int...); {error}") from None
    missing = np.flatnonzero(found < 0)
    if len(missing):
        position = int(missing[0])
        raise InputError(f"clusters must give every unit a label; position {position} has "
                         f"{describe(pd.Series(labels, dtype=object).iloc[position])}")
    codes_array = np.asarray(found, dtype=np.intp)
    return _Clusters(codes_array, np.bincount(codes_array).astype(np.int64))


def _check_label_count(labels: int, n: int) -> None:
    if labels != n:
        raise InputError(f"clusters must give one label per unit; got {labels} labels for {n} units")


def _differences(a: Any, b: Any) -> npt.NDArray[np.float64]:
    x = as_float_array("a", a)
    y = as_float_array("b", b)
    check_same_length("a", x, "b", y)
    return x - y


def _check_kind(kind: Any) -> str:
    if isinstance(kind, str) and kind.upper() in _KINDS:
        return kind.upper()
    listed = ", ".join(repr(k) for k in _KINDS)
    raise InputError(f"kind must be one of {listed} (case-insensitive); got {describe(kind)}")


def _too_few_clusters(what: str, count: int) -> None:
    warnings.warn(f"{what} needs at least 2 clusters; got {count}: the result is NaN", UserWarning, stacklevel=3)


def _se(d: npt.NDArray[np.float64], groups: _Clusters, kind: str) -> float:
    """The clustered SE of ``mean(d)`` (G >= 2)."""
    n = len(d)
    g = groups.count
    centred = groups.sums(d - d.mean())
    if kind == "CR1":
        total = g / (g - 1) * float(np.dot(centred, centred))
    else:
        total = float(np.sum(centred**2 / (1 - groups.sizes / n)))
    return math.sqrt(total) / n


def _bell_mccaffrey_df(sizes: npt.NDArray[np.int64]) -> float:
    """The Satterthwaite degrees of freedom of the CR2 variance of a mean (Bell & McCaffrey 2002).

    For ``lm(d ~ 1)`` with working model ``σ²I`` the CR2 variance is ``e'ΩΩ'e / n²``-shaped with
    ``Ω_kl = u_k u_l (n_k [k = l] - n_k n_l / n)``, ``u_k = (1 - n_k/n)^(-1/2)``, so
    ``df = tr(Ω)² / tr(Ω²) = n² / (Σ n_k² + (Σ a_k)² - Σ a_k²)`` with ``a_k = n_k² / (n - n_k)``.
    G equal clusters give G - 1; singletons give n - 1.

    >>> round(_bell_mccaffrey_df(np.array([3, 2, 1, 4])), 6)  # R: clubSandwich::coef_test(..., "CR2", test = "Satterthwaite")$df_Satt
    2.392405
    """
    n = float(sizes.sum())
    m = sizes.astype(float)
    a = m**2 / (n - m)
    return n**2 / (float(np.sum(m**2)) + float(a.sum()) ** 2 - float(np.sum(a**2)))


def cluster_se(values: Any, clusters: Any, *, kind: str = "CR2", codes: bool = False) -> float:
    """The clustered standard error of ``mean(values)``.

    ``kind="CR1"``: √(G/(G−1)·Σ D_k²)/n, as statsmodels'
    ``OLS(values, ones).fit(cov_type="cluster", cov_kwds={"groups": clusters}).bse``,
    Stata's ``vce(cluster)``, Inspect AI's ``stderr(cluster=)`` and R's
    ``sandwich::vcovCL(lm(values ~ 1), cluster = ~g, type = "HC1")``.
    ``kind="CR2"`` (the default): √(Σ D_k²/(1 − n_k/n))/n, the bias-reduced
    linearisation of Bell & McCaffrey (2002), as R's
    ``clubSandwich::vcovCR(lm(values ~ 1), cluster = g, type = "CR2")`` and
    ``estimatr::lm_robust(values ~ 1, clusters = g, se_type = "CR2")``.
    ``D_k`` is the sum of ``values - mean(values)`` over cluster ``k``. With
    one unit per cluster both are ``sd(values) / sqrt(n)``. Fewer than 2
    clusters: NaN, with a warning. ``codes=True``: ``clusters`` is already a
    numpy integer array of codes 0..G-1 (every code used), taken without
    factorising.

    >>> d = [-1.2, -2.4, -1.3, -1.3, 0.0, -1.0, -1.8, -0.8, -4.6, -1.4]  # R: with(sleep, extra[1:10] - extra[11:20])
    >>> g = [1, 1, 1, 2, 2, 3, 4, 4, 4, 4]
    >>> round(cluster_se(d, g), 6)  # R: estimatr::lm_robust(d ~ 1, clusters = g, se_type = "CR2")$std.error
    0.366044
    """
    kind = _check_kind(kind)
    x = as_float_array("values", values)
    groups = _cluster_codes(clusters, len(x), codes=codes)
    if groups.count < 2:
        _too_few_clusters("cluster_se", groups.count)
        return math.nan
    return _se(x, groups, kind)


@dataclasses.dataclass(frozen=True)
class ClusteredTTestResult(StatResult):
    """Clustered paired t-test. ``to_frame()`` columns: ``test``, ``n``, ``statistic``, ``p_value``, ``df``,
    ``se``, ``ci_low``, ``ci_high``, ``clusters``, ``significant``, ``mean_difference``, ``kind``."""

    statistic: float
    """t = mean(a - b) / se; 0 when every difference is 0, NaN when the test is undefined."""
    df: float
    """Degrees of freedom: G - 1 (CR1) or Bell–McCaffrey (CR2)."""
    p_value: float
    """Two-sided p-value from t with ``df`` degrees of freedom; NaN when undefined, never 0 for a zero SE."""
    se: float
    """The clustered standard error of the mean difference (:func:`cluster_se`)."""
    ci: Interval
    """mean ± t(df, 1 - (1 - confidence)/2)·se: the shifts the test does not reject."""
    clusters: int
    """G, the number of clusters."""
    significant: bool
    """``p_value < alpha`` (False when NaN)."""
    mean_difference: float
    """mean(a - b) over units."""
    n: int
    """Units (pairs)."""
    kind: str
    """``"CR1"`` or ``"CR2"``."""

    test: ClassVar[str] = "clustered-t"


def clustered_t_test(
    a: Any,
    b: Any,
    clusters: Any,
    *,
    kind: str = "CR2",
    alpha: float = 0.05,
    confidence: float = 0.95,
    codes: bool = False,
) -> ClusteredTTestResult:
    """Two-sided t-test of ``mean(a - b) = 0`` with a clustered standard error.

    t = mean(d)/se with ``se = cluster_se(d, clusters, kind=kind)``. ``kind="CR2"``
    (the default) uses the Bell–McCaffrey Satterthwaite degrees of freedom,
    as R's ``clubSandwich::coef_test(lm(d ~ 1), vcov = "CR2", cluster = g,
    test = "Satterthwaite")`` and ``estimatr::lm_robust(d ~ 1, clusters = g,
    se_type = "CR2")``; for this intercept-only model they are
    ``n² / (Σ n_k² + (Σ a_k)² − Σ a_k²)`` with ``a_k = n_k²/(n − n_k)`` (G − 1
    for equal clusters). ``kind="CR1"`` uses G − 1, as
    ``estimatr::lm_robust(d ~ 1, clusters = g, se_type = "stata")``. The
    interval is mean ± t quantile · se, so it excludes 0 exactly when
    p < 1 − confidence.

    With one unit per cluster this is :func:`~cogeval.stats.paired_t_test`
    (t, df = n − 1, p and interval), for both kinds. Every difference 0: t = 0,
    p = 1, interval (0, 0). SE 0 with a nonzero mean (R's rule: se <
    10·eps·|mean|): t and p are NaN with a warning, never p = 0. Fewer than 2
    clusters: NaN with a warning. ``codes=True``: as :func:`cluster_se`.

    >>> a = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]  # R datasets::sleep
    >>> b = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]
    >>> r = clustered_t_test(a, b, [1, 1, 1, 2, 2, 3, 4, 4, 4, 4])
    >>> round(r.statistic, 6), round(r.df, 6), round(r.p_value, 6)  # R clubSandwich::coef_test: -4.316416 2.392405 0.035750
    (-4.316416, 2.392405, 0.03575)
    """
    kind = _check_kind(kind)
    alpha = check_probability("alpha", alpha)
    confidence = check_probability("confidence", confidence, open_interval=True)
    d = _differences(a, b)
    groups = _cluster_codes(clusters, len(d), codes=codes)
    n, g = len(d), groups.count
    if g < 2:
        _too_few_clusters("clustered_t_test", g)
        mean = float(d.mean()) if n else math.nan
        return ClusteredTTestResult(math.nan, math.nan, math.nan, math.nan, Interval(math.nan, math.nan), g, False,
                                    mean, n, kind)
    df = float(g - 1) if kind == "CR1" else _bell_mccaffrey_df(groups.sizes)
    if not d.any():
        return ClusteredTTestResult(0.0, df, 1.0, 0.0, Interval(0.0, 0.0), g, False, 0.0, n, kind)
    mean = float(d.mean())
    se = _se(d, groups, kind)

    from scipy import stats

    q = float(stats.t.ppf(0.5 + confidence / 2, df))
    ci = Interval(mean - q * se, mean + q * se)
    if se < 10 * np.finfo(float).eps * abs(mean):
        warnings.warn("clustered_t_test: the differences are constant within and across clusters (standard error 0 "
                      "with a nonzero mean): the test is undefined, t and p are NaN", UserWarning, stacklevel=2)
        return ClusteredTTestResult(math.nan, df, math.nan, se, ci, g, False, mean, n, kind)
    t = mean / se
    p = float(2 * stats.t.sf(abs(t), df))
    return ClusteredTTestResult(t, df, p, se, ci, g, bool(p < alpha), mean, n, kind)


def _inverted(excess: Callable[[float], float], zero_accepted: bool, centre: float, low: float, high: float,
              *, tolerance: float, smooth: bool = True, step: float = math.inf) -> tuple[float, float]:
    """The shifts around ``centre`` that a test accepts, its ends found by root-finding, its decision at 0 given.

    ``excess(delta)`` is <= 0 exactly when the test of the shifted data at
    ``delta`` accepts (e.g. its statistic minus the critical value, or the
    level minus its p-value); ``zero_accepted`` is the test's own decision on
    the data, so the interval excludes 0 exactly when the test rejects,
    whatever rounding or Monte Carlo noise does to ``excess`` near 0. ``low``
    and ``high`` are the ends of the search; an end that is accepted is
    returned as it is. The side of ``centre`` that holds 0 is searched from 0
    outwards when 0 is accepted, else between ``centre`` and 0. When neither
    ``centre`` nor 0 is accepted the interval is the point ``centre``.
    ``smooth``: ``excess`` is close to continuous (regula falsi), else a step
    function (bisection). ``step``: a guess of the half-width, tried first.
    """

    def value(delta: float) -> float:
        if delta != 0:
            return excess(delta)
        found = excess(0.0)
        return min(found, 0.0) if zero_accepted else max(found, 1e-300)

    inside = centre
    inside_value = value(centre)
    if inside_value > 0:
        if not zero_accepted:
            return centre, centre
        inside, inside_value = 0.0, value(0.0)
    lower = (0.0, value(0.0)) if zero_accepted and inside > 0 else (inside, inside_value)
    upper = (0.0, value(0.0)) if zero_accepted and inside < 0 else (inside, inside_value)
    lower_end = 0.0 if not zero_accepted and inside > 0 else low
    upper_end = 0.0 if not zero_accepted and inside < 0 else high
    return (_boundary(value, *lower, lower_end, tolerance, smooth, step),
            _boundary(value, *upper, upper_end, tolerance, smooth, step))


def _boundary(value: Callable[[float], float], inside: float, inside_value: float, end: float,
              tolerance: float, smooth: bool = True, step: float = math.inf) -> float:
    """The last accepted point (``value <= 0``) from ``inside`` towards ``end`` (``end`` when it is accepted).

    When ``smooth``, regula falsi with the Illinois modification, which keeps a
    bracket [accepted, rejected] and converges in a few steps when ``value`` is
    close to continuous (the normal and chi-square tests); else bisection (the
    p-values of exact tests are step functions). A first point ``step`` away
    from ``inside`` narrows the bracket when it lies before ``end``.
    """
    if inside == end:
        return end
    if abs(step) < abs(end - inside):
        guess = inside + math.copysign(step, end - inside)
        guess_value = value(guess)
        if guess_value > 0:
            end, end_value = guess, guess_value
        else:
            inside, inside_value = guess, guess_value
            end_value = value(end)
    else:
        end_value = value(end)
    if end_value <= 0:
        return end
    a, fa, b, fb = inside, inside_value, end, end_value
    kept = 0  # +1 when the accepted end moved last, -1 when the rejected one did
    while abs(b - a) > tolerance:
        x = b - fb * (b - a) / (fb - fa) if smooth and fb != fa else (a + b) / 2
        if not min(a, b) < x < max(a, b):
            x = (a + b) / 2
        step = math.copysign(tolerance / 2, b - a)  # a step that lands on an end moves in by tolerance / 2
        x = min(max(x, min(a + step, b - step)), max(a + step, b - step))
        if x in (a, b):
            break
        fx = value(x)
        if fx <= 0:
            a, fa = x, fx
            if kept == 1:
                fb /= 2
            kept = 1
        else:
            b, fb = x, fx
            if kept == -1:
                fa /= 2
            kept = -1
    return a
