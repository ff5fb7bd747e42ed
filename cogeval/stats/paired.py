"""Paired tests: did B change the scores of the same cases A was run on?

Each function follows one R function exactly (DESIGN §4), so its answers can
be checked against R:

- :func:`paired_t_test` — ``t.test(a, b, paired = TRUE)``
- :func:`mcnemars_test` — ``mcnemar.test`` (Edwards' correction) or
  ``binom.test(b, b + c)`` for few discordant pairs; p-values from statsmodels'
  ``mcnemar``
- :func:`wilcoxon_test` — ``wilcox.test(a, b, paired = TRUE)``

Differences are always ``a - b``. ``significant`` is ``p_value < alpha`` and is
False when the p-value is NaN. ``scipy.stats`` and statsmodels are imported
only when needed.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar, Literal, overload

import numpy as np

from cogeval._check import as_float_array, check_probability, check_same_length, describe
from cogeval.errors import InputError
from cogeval.stats.result import Interval, StatResult


@dataclasses.dataclass(frozen=True)
class TTestResult(StatResult):
    """Paired t-test. ``to_frame()`` columns: ``t_statistic``, ``degrees_of_freedom``,
    ``p_value``, ``significant``, ``ci_low``, ``ci_high``, ``mean_difference``."""

    t_statistic: float
    """t = mean(a - b) / (sd(a - b) / sqrt(n)); 0 when every difference is 0, NaN when the rest are constant."""
    degrees_of_freedom: float
    """n - 1."""
    p_value: float
    """Two-sided p-value; 1 when every difference is 0, NaN when the differences are a nonzero constant."""
    significant: bool
    """``p_value < alpha`` (False when NaN)."""
    confidence_interval: Interval
    """t-interval of the mean difference at level ``confidence``."""
    mean_difference: float
    """mean(a - b)."""
    n: int = dataclasses.field(default=0, kw_only=True)
    """Pairs."""

    test: ClassVar[str] = "t"

    @property
    def statistic(self) -> float:
        """``t_statistic``, under the name every test's row uses."""
        return self.t_statistic


@dataclasses.dataclass(frozen=True)
class McNemarResult(StatResult):
    """McNemar's test. ``to_frame()`` columns: ``chi_square``, ``p_value``, ``significant``, ``exact``."""

    chi_square: float
    """Chi-square statistic (Edwards-corrected when ``correction``), whichever p-value was used."""
    p_value: float
    """Two-sided p-value: exact binomial when ``exact`` is True, else chi-square with 1 df."""
    significant: bool
    """``p_value < alpha``."""
    exact: bool
    """True when the p-value comes from the exact binomial test."""
    n: int = dataclasses.field(default=0, kw_only=True)
    """Discordant pairs, b + c."""

    @property
    def test(self) -> str:
        """``mcnemar-exact`` or ``mcnemar``, as a comparison's ``test`` column names them."""
        return "mcnemar-exact" if self.exact else "mcnemar"

    @property
    def statistic(self) -> float:
        """``chi_square``, under the name every test's row uses."""
        return self.chi_square


@dataclasses.dataclass(frozen=True)
class WilcoxonResult(StatResult):
    """Wilcoxon signed-rank test. ``to_frame()`` columns: ``statistic``, ``p_value``, ``significant``, ``exact``."""

    statistic: float
    """V: the sum of the ranks of the positive differences ``a - b`` (zeros dropped)."""
    p_value: float
    """Two-sided p-value."""
    significant: bool
    """``p_value < alpha`` (False when NaN)."""
    exact: bool
    """True when the p-value comes from the exact null distribution of V."""
    n: int = dataclasses.field(default=0, kw_only=True)
    """Pairs with a non-zero difference (the ones ranked)."""

    test: ClassVar[str] = "wilcoxon"


def _paired_differences(a: Any, b: Any, minimum: int) -> np.ndarray:
    x = as_float_array("a", a)
    y = as_float_array("b", b)
    check_same_length("a", x, "b", y)
    if len(x) < minimum:
        pairs = "pair" if minimum == 1 else "pairs"
        raise InputError(f"a and b must hold at least {minimum} {pairs}; got {len(x)}")
    return x - y


@overload
def _check_flag(name: str, value: Any) -> bool: ...


@overload
def _check_flag(name: str, value: Any, *, allow_none: Literal[True]) -> bool | None: ...


def _check_flag(name: str, value: Any, *, allow_none: bool = False) -> bool | None:
    if value is None and allow_none:
        return None
    if not isinstance(value, (bool, np.bool_)):
        expected = "True, False or None" if allow_none else "True or False"
        raise InputError(f"{name} must be {expected}; got {describe(value)}")
    return bool(value)


def _check_count(name: str, value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise InputError(f"{name} must be a count (an integer >= 0); got {describe(value)}")
    return int(value)


def paired_t_test(a: Any, b: Any, *, alpha: float = 0.05, confidence: float = 0.95) -> TTestResult:
    """Two-sided paired t-test of ``a - b``, as R's ``t.test(a, b, paired = TRUE)``.

    When the differences are essentially constant (R's rule: standard error
    < 10·eps·|mean difference|, where R stops with an error) the test is
    undefined: t and p are NaN. When every difference is 0, t = 0, p = 1 and
    the interval is (0, 0).

    >>> a = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]  # R datasets::sleep
    >>> b = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]
    >>> r = paired_t_test(a, b)  # R: t = -4.0621, df = 9, p-value = 0.002833
    >>> round(r.t_statistic, 4), r.degrees_of_freedom, round(r.p_value, 6)
    (-4.0621, 9.0, 0.002833)
    """
    alpha = check_probability("alpha", alpha)
    confidence = check_probability("confidence", confidence, open_interval=True)
    d = _paired_differences(a, b, minimum=2)
    n = len(d)
    mean = float(d.mean())
    se = float(d.std(ddof=1)) / math.sqrt(n)
    df = float(n - 1)
    if not d.any():
        return TTestResult(0.0, df, 1.0, False, Interval(0.0, 0.0), 0.0, n=n)

    from scipy import stats

    q = float(stats.t.ppf(0.5 + confidence / 2, df))
    ci = Interval(mean - q * se, mean + q * se)
    if se < 10 * np.finfo(float).eps * abs(mean):
        return TTestResult(math.nan, df, math.nan, False, ci, mean, n=n)
    t = mean / se
    p = float(2 * stats.t.sf(abs(t), df))
    return TTestResult(t, df, p, bool(p < alpha), ci, mean, n=n)


def mcnemars_test(
    b: int, c: int, *, exact: bool | None = None, correction: bool = True, alpha: float = 0.05
) -> McNemarResult:
    """McNemar's test from the two discordant counts of a paired 2×2 table.

    ``b`` = cases A got right and B wrong, ``c`` = A wrong and B right.
    ``exact=None`` uses the exact two-sided binomial test (R's
    ``binom.test(b, b + c)``) when ``b + c < 25``, else chi-square with 1 df.
    The statistic is ``max(|b - c| - 1, 0)² / (b + c)`` when ``correction``,
    else ``(b - c)² / (b + c)``; ``b == c`` gives 0 and p = 1, as R's
    ``mcnemar.test``, which applies the correction only to an asymmetric table.
    ``b + c == 0`` gives chi_square 0 and p = 1.

    The p-value is statsmodels' ``mcnemar([[0, b], [c, 0]], exact=...,
    correction=...)``, except for a chi-square p-value when the statistic is
    0: it is 1 then, as in R, where statsmodels would correct ``b == c`` to
    ``1 / (b + c)`` and give a p-value just below 1.

    >>> r = mcnemars_test(86, 150)  # R ?mcnemar.test: chi-squared = 16.818, p-value = 4.115e-05
    >>> round(r.chi_square, 3), f"{r.p_value:.4g}", r.exact
    (16.818, '4.115e-05', False)
    >>> r = mcnemars_test(5, 5, exact=False)  # R: mcnemar.test(matrix(c(10, 5, 5, 10), 2)) -> 0, p-value = 1
    >>> r.chi_square, r.p_value
    (0.0, 1.0)
    """
    b = _check_count("b", b)
    c = _check_count("c", c)
    exact = _check_flag("exact", exact, allow_none=True)
    correction = _check_flag("correction", correction)
    alpha = check_probability("alpha", alpha)
    n = b + c
    use_exact = n < 25 if exact is None else exact
    if n == 0:
        return McNemarResult(0.0, 1.0, False, use_exact, n=n)
    excess = max(abs(b - c) - 1, 0) if correction else abs(b - c)
    chi_square = excess**2 / n
    if excess == 0 and not use_exact:
        # b == c (or |b - c| == 1 with correction): p = 1. Not statsmodels, whose
        # corrected statistic for b == c is (0 - 1)² / n, with p just below 1.
        return McNemarResult(0.0, 1.0, False, False, n=n)

    from statsmodels.stats.contingency_tables import mcnemar

    # exact: two-sided binomial test of min(b, c) out of b + c at 1/2, as R's binom.test(b, b + c)
    p = float(mcnemar([[0, b], [c, 0]], exact=use_exact, correction=correction).pvalue)
    return McNemarResult(float(chi_square), min(p, 1.0), bool(p < alpha), use_exact, n=n)


def _signrank_cdf(n: int) -> np.ndarray:
    """P(V <= v) for v = 0 .. n(n+1)/2 under the null, for n untied nonzero differences."""
    pmf = np.ones(1)
    for k in range(1, n + 1):
        pmf = (np.concatenate([pmf, np.zeros(k)]) + np.concatenate([np.zeros(k), pmf])) / 2
    return np.cumsum(pmf)


def wilcoxon_test(
    a: Any, b: Any, *, correction: bool = True, exact: bool | None = None, alpha: float = 0.05
) -> WilcoxonResult:
    """Two-sided Wilcoxon signed-rank test of ``a - b``, as R's ``wilcox.test(a, b, paired = TRUE)``.

    Zero differences are dropped; V is the sum of the ranks of the positive
    differences. The exact p-value (``min(1, 2·min(P(V <= v), P(V >= v)))``)
    is used when ``exact`` is True, or None and n < 50, and there are no ties
    or zeros; otherwise the normal approximation with tie correction and,
    when ``correction``, continuity correction. Every difference zero gives
    V = 0 and p = 1.

    >>> x = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
    >>> y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]
    >>> r = wilcoxon_test(x, y)  # R ?wilcox.test: V = 40, p-value = 0.03906
    >>> r.statistic, round(r.p_value, 5), r.exact
    (40.0, 0.03906, True)
    """
    correction = _check_flag("correction", correction)
    exact = _check_flag("exact", exact, allow_none=True)
    alpha = check_probability("alpha", alpha)
    d = _paired_differences(a, b, minimum=1)
    zeros = not d.all()
    d = d[d != 0]
    n = len(d)
    if n == 0:
        return WilcoxonResult(0.0, 1.0, False, False, n=0)

    from scipy import stats

    ranks = stats.rankdata(np.abs(d))
    v = float(ranks[d > 0].sum())
    _, tie_counts = np.unique(ranks, return_counts=True)
    ties = bool((tie_counts > 1).any())
    use_exact = (n < 50 if exact is None else exact) and not ties and not zeros
    if use_exact:
        cdf = _signrank_cdf(n)  # symmetric, so P(V >= v) = P(V <= n(n+1)/2 - v)
        k = int(v)
        p = min(1.0, 2 * min(cdf[k], cdf[len(cdf) - 1 - k]))
    else:
        z = v - n * (n + 1) / 4
        variance = n * (n + 1) * (2 * n + 1) / 24 - float((tie_counts**3 - tie_counts).sum()) / 48
        z = (z - (0.5 * np.sign(z) if correction else 0.0)) / math.sqrt(variance)
        p = float(2 * stats.norm.sf(abs(z)))
    return WilcoxonResult(v, float(p), bool(p < alpha), use_exact, n=n)
