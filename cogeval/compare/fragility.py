"""Fragility: how many of its most supporting cases a significant metric can lose and stay significant.

The Fragility Index of Walsh et al. (1990, J Clin Epidemiol 43:201–209), for a paired comparison:

- ``d = noise_floor(head - base)`` per case, and ``s`` the side the metric's test leans to
  (:attr:`~cogeval.compare.paired.PairedTest.side`: +1 when head's values are higher, -1 lower);
- **most support** is the order of ``s·d``, largest first: the largest differences in the effect's
  direction first, then the cases that did not move, then those that moved against it, the largest
  against last. For McNemar (0/1 values) that is the discordant pairs in the winning direction first,
  then the concordant pairs, then the discordant pairs the other way. Cases of equal ``s·d`` are
  interchangeable: whichever is removed, the cases left are the same values;
- **fragility** is the smallest number ``r ≥ 1`` of cases removed in that order that leaves the metric
  not significant at its own Holm level ``level`` (its interval's ``1 - ci_level``): the metric's own
  test on the ``n - r`` cases left — McNemar (exact when fewer than 25 discordant pairs, else the
  Edwards-corrected chi-square, as ``exact=None``), the paired t-test or Wilcoxon's signed-rank test,
  as the comparison ran it, or the sign test when every difference is the same — gives ``p >= level``, or
  no p-value (NaN, fewer than 2 cases).

Every ``r`` is tested (a linear scan: removing a supporting case can make a t-test *more* significant,
when it also removes spread), with the p-values of all ``r`` computed at once from sorted prefix sums;
the answer is then checked against :mod:`cogeval.stats`' own test at ``r`` and ``r - 1``.

>>> b, h = np.zeros(40), np.r_[np.ones(12), np.zeros(28)]   # 12 cases moved to 1, none the other way
>>> fragility(b, h, "mcnemar-exact", 1.0, 0.05)             # R: binom.test(6, 6)$p.value = 0.03125, (5, 5): 0.0625
7
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np

from cogeval.compare.paired import PairedSample, noise_floor, paired_test
from cogeval.stats import mcnemars_test, paired_t_test, wilcoxon_test

_EXACT_BELOW = 25
"""McNemar's test is exact below this many discordant pairs (``exact=None``)."""
_WILCOXON_EXACT_BELOW = 50
"""Wilcoxon's test is exact below this many nonzero differences, when none are tied and none is zero."""


def fragility(b: np.ndarray, h: np.ndarray, test: str, side: float, level: float) -> int | None:
    """The fewest most-supporting cases whose removal leaves the difference not significant (module docstring).

    ``b`` and ``h`` are the paired values, ``test`` the metric's test (``mcnemar``, ``mcnemar-exact``, ``t`` or
    ``wilcoxon``), ``side`` the direction it leans to, ``level`` its Holm level. None when the metric is not
    significant at ``level`` to begin with, or has no test.
    """
    d = noise_floor(np.asarray(h, dtype=float) - np.asarray(b, dtype=float))
    n = len(d)
    if n < 2 or test == "none" or math.isnan(level):
        return None
    if test == "sign":
        return _sign_fragility(n, level)
    x = np.sort(np.sign(side or 1.0) * d)  # ascending: the cases left after removing r are x[: n - r]
    p_of, p_all = _TESTS["mcnemar" if test.startswith("mcnemar") else test]
    if not p_of(x) < level:
        return None
    p = p_all(x)  # p[r - 1]: after removing r = 1 .. len(p) cases
    failing = np.flatnonzero(~(p < level))
    r = int(failing[0]) + 1 if len(failing) else min(len(p) + 1, n - 1)
    while r < n - 1 and p_of(x[: n - r]) < level:  # checked against the test itself, and scanned on past p
        r += 1
    while r > 1 and not p_of(x[: n - r + 1]) < level:
        r -= 1
    return r


def _sign_fragility(n: int, level: float) -> int | None:
    """Fragility under the sign test of ``n`` equal differences: the ``m`` left are all one sign, p = 2^(1 − m),
    so it is ``n`` less the most cases whose p is at least ``level`` (at least 1: fewer than 2 cases have no test).

    >>> _sign_fragility(10, 0.05), _sign_fragility(5, 0.05)   # 2^(1 - 5) = 0.0625 >= 0.05 > 2^(1 - 6)
    (5, None)
    """
    most = 1
    while math.ldexp(1.0, -most) >= level:  # 2^(1 - (most + 1)) still not significant
        most += 1
    return n - most if n > most else None


def _mcnemar_p(x: np.ndarray) -> float:
    if len(x) < 2:
        return math.nan
    return mcnemars_test(int(np.sum(x < 0)), int(np.sum(x > 0))).p_value


def _mcnemar_all(x: np.ndarray) -> np.ndarray:
    """McNemar's p-value after removing r = 1 .. n - 1 of the largest ``x``, as :func:`mcnemars_test` computes it."""
    from scipy import stats

    n = len(x)
    worse, better, still = int(np.sum(x < 0)), int(np.sum(x > 0)), int(np.sum(x == 0))
    r = np.arange(1, n)
    c = np.maximum(better - r, 0)  # the winning discordant pairs go first, then the concordant, then the others
    b = worse - np.clip(r - better - still, 0, worse)
    total = b + c
    excess = np.maximum(np.abs(b - c) - 1, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        chi = np.where(total > 0, excess.astype(float) ** 2 / total, 0.0)
    chi_p = np.where(excess > 0, stats.chi2.sf(chi, 1), 1.0)
    exact_p = np.minimum(2 * stats.binom.cdf(np.minimum(b, c), total, 0.5), 1.0)
    p = np.where(total < _EXACT_BELOW, exact_p, chi_p)
    p[total == 0] = 1.0
    p[n - r < 2] = math.nan
    return np.asarray(p, dtype=float)


def _t_p(x: np.ndarray) -> float:
    if len(x) < 2:
        return math.nan
    return paired_t_test(x, np.zeros(len(x))).p_value


def _t_all(x: np.ndarray) -> np.ndarray:
    """The paired t-test's p-value of ``x[:m]`` for m = n - 1 .. 1, from prefix sums (shifted by the mean)."""
    from scipy import stats

    n = len(x)
    centre = float(x.mean())
    y = x - centre
    m = np.arange(n - 1, 0, -1)
    s1, s2 = np.cumsum(y)[m - 1], np.cumsum(y * y)[m - 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = s1 / m + centre
        variance = np.maximum(s2 - s1 * s1 / m, 0.0) / (m - 1)
        se = np.sqrt(variance / m)
        t = mean / se
        p = 2 * stats.t.sf(np.abs(t), m - 1)
    constant = x[m - 1] == x[0]  # sorted: the cases left are all equal
    p = np.where(constant | (se < 10 * np.finfo(float).eps * np.abs(mean)), math.nan, p)
    p[np.cumsum(x != 0)[m - 1] == 0] = 1.0  # every difference left is 0
    p[m < 2] = math.nan
    return np.asarray(p, dtype=float)


def _wilcoxon_p(x: np.ndarray) -> float:
    if len(x) < 2:
        return math.nan
    return wilcoxon_test(x, np.zeros(len(x))).p_value


def _wilcoxon_all(x: np.ndarray) -> np.ndarray:
    """Wilcoxon's p-value after removing the r = 1 .. J largest of ``x`` (ascending; J its positive values), as
    :func:`wilcoxon_test` computes it.

    While only positive values are removed, the cases left are every negative (absolute values ``a``), the
    zeros, and the ``j`` smallest positives ``q``: the sum of their midranks is ``j(j+1)/2 + Σ w_i``, with
    ``w_i = #{a < q_i} + #{a = q_i}/2``, and each ``q_i`` joins a tie group of ``t_i`` values, adding
    ``3t_i² + 3t_i`` to the tie correction's ``Σ(t³ - t)``. Past J, :func:`fragility` runs the test itself.
    """
    from scipy import stats

    n = len(x)
    a = np.sort(-x[x < 0])
    q = x[x > 0]
    zeros = int(np.sum(x == 0))
    j = np.arange(len(q) + 1)
    less, upto = np.searchsorted(a, q, "left"), np.searchsorted(a, q, "right")
    w = np.r_[0.0, np.cumsum(less + 0.5 * (upto - less))]
    v = j * (j + 1) / 2 + w
    _, counts = np.unique(a, return_counts=True)
    t = (upto - less) + (np.arange(len(q)) - np.searchsorted(q, q, "left"))
    ties = float((counts**3 - counts).sum()) + np.r_[0.0, np.cumsum(3.0 * t * t + 3.0 * t)]
    tied = (counts > 1).any() | np.r_[False, np.cumsum(t > 0) > 0]
    nonzero = len(a) + j
    z = v - nonzero * (nonzero + 1) / 4
    variance = nonzero * (nonzero + 1) * (2 * nonzero + 1) / 24 - ties / 48
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (z - 0.5 * np.sign(z)) / np.sqrt(variance)
        p = 2 * stats.norm.sf(np.abs(z))
    p = np.where(nonzero == 0, 1.0, p)
    for k in np.flatnonzero((nonzero < _WILCOXON_EXACT_BELOW) & ~tied & (zeros == 0)):
        p[k] = _wilcoxon_p(x[: len(a) + int(k)])  # exact: few values, the test itself
    out = p[::-1][1:]  # removing r = 1 .. J positives leaves j = J - r of them
    out[n - np.arange(1, len(out) + 1) < 2] = math.nan
    return np.asarray(out, dtype=float)


_TESTS: dict[str, tuple[Callable[[np.ndarray], float], Callable[[np.ndarray], np.ndarray]]] = {
    "mcnemar": (_mcnemar_p, _mcnemar_all),
    "t": (_t_p, _t_all),
    "wilcoxon": (_wilcoxon_p, _wilcoxon_all),
}
"""Per test: its p-value of the values left, and its p-values after removing r = 1, 2 ... of the largest (all r up to
n - 1, or as far as they are computed at once)."""


def cluster_fragility(sample: PairedSample, test: str, side: float, level: float) -> int | None:
    """Fragility counted in clusters: the fewest whole clusters whose removal, those that most support the
    difference first (the largest cluster sums of ``side·d``), leaves the metric not significant at ``level``
    by its own clustered test (:func:`~cogeval.compare.paired.paired_test` of the clusters left).

    The removal counts are searched by one step up to 8, then by doubling and bisection (a clustered test has
    no prefix-sum form), and the answer ``r`` is checked: significant after ``r - 1`` removals, not after ``r``.
    ``test`` is the metric's test (a ``clustered-`` name, or the unclustered one's); None as :func:`fragility`.
    """
    groups = sample.groups
    if sample.n < 2 or test == "none" or math.isnan(level) or sample.clusters is None:
        return None
    rank_test = "wilcoxon" if "wilcoxon" in test else "t"
    sums = np.bincount(sample.clusters, weights=np.sign(side or 1.0) * sample.d, minlength=groups)
    order = np.argsort(-sums, kind="stable")  # most supporting cluster first
    removed_at = np.empty(groups, dtype=np.int64)
    removed_at[order] = np.arange(groups)

    def significant(r: int) -> bool:
        left = sample.take(removed_at[sample.clusters] >= r)
        with warnings.catch_warnings():  # a test left undefined (one cluster) is simply not significant
            warnings.simplefilter("ignore")
            return left.n >= 2 and bool(paired_test(left, rank_test).p_value < level)

    if not significant(0):
        return None
    low = 0  # significant after `low` removals; `high` is not
    high = next((r for r in range(1, min(8, groups - 1) + 1) if not significant(r)), None)
    if high is None:
        low, step = min(8, groups - 1), 16
        high = groups - 1
        while low + step < groups - 1:
            if not significant(low + step):
                high = low + step
                break
            low, step = low + step, step * 2
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if significant(middle) else (low, middle)
    while high > 1 and not significant(high - 1):
        high -= 1
    return high
