"""Equivalence: is the paired mean difference shown to lie within ``(-margin, margin)``?

A paired test that is not significant does not show that A and B are the same;
the two one-sided tests (TOST, Schuirmann 1987) do. Each rejects one side of
the null "the mean difference is at least ``margin`` away from 0":

- lower: H0 mean(a - b) <= -margin, as R's
  ``t.test(a, b, paired = TRUE, mu = -margin, alternative = "greater")``;
- upper: H0 mean(a - b) >= +margin, as R's
  ``t.test(a, b, paired = TRUE, mu = margin, alternative = "less")``.

The TOST p-value is the larger of the two; ``equivalent`` is ``p_value < alpha``.
The p-values come from statsmodels' ``ttost_paired(a, b, -margin, margin)``,
imported only when needed.

>>> sleep_1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]  # R datasets::sleep
>>> sleep_2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]
>>> r = equivalence_test(sleep_1, sleep_2, 2.0)  # R: max of the two t.test p-values = 0.1541572
>>> round(r.p_value, 7), r.equivalent
(0.1541572, False)
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import numpy as np

from cogeval._check import as_float_array, check_positive_number, check_probability, check_same_length
from cogeval.stats.result import StatResult


@dataclasses.dataclass(frozen=True)
class EquivalenceResult(StatResult):
    """Paired equivalence test (TOST). ``to_frame()`` columns: ``mean_difference``, ``margin``,
    ``lower_p_value``, ``upper_p_value``, ``p_value``, ``equivalent``."""

    mean_difference: float
    """mean(a - b); NaN when there are no pairs."""
    margin: float
    """The equivalence margin: equivalence means -margin < mean(a - b) < margin."""
    lower_p_value: float
    """One-sided p-value against H0 mean(a - b) <= -margin."""
    upper_p_value: float
    """One-sided p-value against H0 mean(a - b) >= margin."""
    p_value: float
    """TOST p-value: the larger of ``lower_p_value`` and ``upper_p_value``."""
    equivalent: bool
    """``p_value < alpha``: the mean difference is shown to lie within the margin."""
    n: int = dataclasses.field(default=0, kw_only=True)
    """Pairs."""
    statistic: float = dataclasses.field(default=math.nan, kw_only=True)
    """The t statistic of the one-sided test that gave ``p_value`` (NaN in the degenerate cases)."""

    test: ClassVar[str] = "tost"


def equivalence_test(a: Any, b: Any, margin: float, *, alpha: float = 0.05) -> EquivalenceResult:
    """Paired two one-sided t-tests (TOST) of the mean difference ``a - b`` against ``(-margin, margin)``.

    ``equivalent`` is ``p_value < alpha``, which is the same as the
    ``1 - 2·alpha`` t-interval of the mean difference lying inside the margin.
    Degenerate cases, where the t-test is undefined, are decided without it:

    - fewer than 2 pairs: p = 1 (all three p-values), not equivalent
      (``mean_difference`` is NaN with no pairs);
    - every difference the same (sd 0, or below R's "essentially constant"
      rule: standard error < 10·eps·|mean difference|): p = 1, not
      equivalent. The t-test is undefined, and differences without spread
      say nothing about how far other cases could differ: two cases scored
      the same twice do not show equivalence. (statsmodels would return
      NaN or ±inf statistics, and p = 0 for identical runs.)

    >>> r = equivalence_test([0.8, 0.7, 0.9], [0.8, 0.7, 0.9], 0.05)  # identical runs: no spread, no evidence
    >>> r.p_value, r.equivalent
    (1.0, False)
    """
    x = as_float_array("a", a)
    y = as_float_array("b", b)
    check_same_length("a", x, "b", y)
    margin = check_positive_number("margin", margin)
    alpha = check_probability("alpha", alpha)
    d = x - y
    n = len(d)
    mean = float(d.mean()) if n else math.nan
    if n < 2:
        return EquivalenceResult(mean, margin, 1.0, 1.0, 1.0, False, n=n)
    se = float(d.std(ddof=1)) / math.sqrt(n)
    if se == 0 or se < 10 * np.finfo(float).eps * abs(mean):
        return EquivalenceResult(mean, margin, 1.0, 1.0, 1.0, False, n=n)

    from statsmodels.stats.weightstats import ttost_paired

    p, (t_lower, lower, _), (t_upper, upper, _) = ttost_paired(x, y, -margin, margin)
    p = float(p)
    statistic = float(t_lower if lower >= upper else t_upper)
    return EquivalenceResult(mean, margin, float(lower), float(upper), p, bool(p < alpha), n=n, statistic=statistic)
