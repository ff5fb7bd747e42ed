"""Intervals that agree with a test: each excludes the null value exactly when its test rejects it.

A comparison shows an interval beside a p-value; a reader takes "the interval
excludes 0" and "significant" as the same claim, so the interval must be the
inversion of the test that gave the p-value, at the same level:

- :func:`mcnemar_interval` — the paired difference in proportions ``(c - b) / n``
  from McNemar's test: Clopper–Pearson (exact test) or continuity-corrected
  Wilson (Edwards-corrected chi-square) for the share ``c / (b + c)`` of the
  discordant pairs, scaled by the observed discordance;
- :func:`wilcoxon_interval` — the Hodges–Lehmann shift interval of the
  signed-rank test: every shift ``mu`` that ``wilcoxon_test(d - mu)`` does not reject;
- :func:`paired_proportion_interval` — Tango's (1998) score interval for the
  paired difference in proportions, used for equivalence, where the
  discordance itself is uncertain;
- :func:`holm_levels` — the level at which each metric of a Holm family must
  be tested, so that an interval at ``1 - level`` excludes 0 exactly when the
  Holm-adjusted p-value is below ``alpha``.

(The paired t-test's own interval, ``paired_t_test(...).confidence_interval``,
is already the inversion of the t-test.)

>>> low, high = mcnemar_interval(0, 4, 6)  # R binom.test(4, 4)$conf.int: 0.3976354 1; (4/6)·(2·limit - 1)
>>> round(low, 4), high
(-0.1365, 0.6666666666666666)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from statistics import NormalDist
from typing import Any

import numpy as np

from cogeval._check import as_float_array, check_probability, check_same_length
from cogeval.errors import InputError
from cogeval.stats.intervals import wilson_interval
from cogeval.stats.paired import _check_count, wilcoxon_test
from cogeval.stats.result import Interval


def holm_levels(p: Any, alpha: float) -> np.ndarray:
    """Per-hypothesis test levels of Holm's step-down procedure at family-wise level ``alpha``.

    Sorting the p-values, step ``j`` (1-based, of ``m``) is tested at
    ``alpha / (m - j + 1)``; Holm stops at the first step not rejected, and
    every later hypothesis keeps that step's level. So ``p[i] < levels[i]``
    exactly when the Holm-adjusted p-value of ``i`` is below ``alpha``, and an
    interval at ``1 - levels[i]`` that inverts the test of ``i`` excludes the
    null exactly when ``i`` is significant. NaN p-values (no test) get NaN.

    >>> holm_levels([0.001, 0.03, 0.04], 0.05).tolist()  # 0.001 < 0.05/3, then 0.03 >= 0.05/2: stop
    [0.016666666666666666, 0.025, 0.025]
    """
    alpha = check_probability("alpha", alpha, open_interval=True)
    values = as_float_array("p", p, allow_nan=True)
    levels = np.full(values.shape, math.nan)
    present = np.flatnonzero(~np.isnan(values))
    m = len(present)
    order = present[np.argsort(values[present], kind="stable")]
    stopped: float | None = None
    for step, index in enumerate(order):
        level = alpha / (m - step)
        if stopped is None and not values[index] * (m - step) < alpha:
            stopped = level
        levels[index] = level if stopped is None else stopped
    return levels


def _scaled(share: Interval, discordant: int, n: int) -> Interval:
    """Map an interval of ``c / (b + c)`` to one of ``(c - b) / n = (b + c) / n · (2·share - 1)``."""
    scale = discordant / n
    return Interval(scale * (2 * share.low - 1), scale * (2 * share.high - 1))


def mcnemar_interval(b: int, c: int, n: int, *, confidence: float = 0.95, exact: bool | None = None) -> Interval:
    """Interval of the paired difference in proportions ``(c - b) / n`` that inverts McNemar's test.

    ``b`` and ``c`` are the discordant counts of :func:`~cogeval.stats.mcnemars_test`
    (``b`` = A right and B wrong), ``n`` all pairs. Given the ``b + c``
    discordant pairs, the test asks whether ``c / (b + c)`` is ½; its inversion
    is an interval for that share: Clopper–Pearson for the exact binomial test
    (R's ``binom.test(c, b + c)$conf.int``), the continuity-corrected Wilson
    interval (Newcombe 1998, method 4) for the Edwards-corrected chi-square.
    Scaled by the observed discordance ``(b + c) / n`` it is an interval for
    the difference that excludes 0 exactly when ``mcnemars_test(b, c, exact=exact)``
    gives p < ``1 - confidence``. ``exact=None`` picks as that test does
    (exact when ``b + c < 25``). No discordant pair gives ``(0, 0)``.

    >>> [round(x, 4) for x in mcnemar_interval(5, 15, 100)]  # R binom.test(15, 20)$conf.int: 0.5089541 0.9134285
    [0.0036, 0.1654]
    """
    b, c = _check_count("b", b), _check_count("c", c)
    n = _check_count("n", n)
    if n < b + c or n == 0:
        raise InputError(f"n must count every pair, at least b + c = {b + c} and at least 1; got {n}")
    confidence = check_probability("confidence", confidence, open_interval=True)
    discordant = b + c
    if discordant == 0:
        return Interval(0.0, 0.0)
    use_exact = discordant < 25 if exact is None else bool(exact)
    if not use_exact:
        return _scaled(wilson_interval(c, discordant, confidence=confidence, correction=True), discordant, n)
    from scipy import stats

    tail = (1 - confidence) / 2
    low = 0.0 if c == 0 else float(stats.beta.ppf(tail, c, discordant - c + 1))
    high = 1.0 if c == discordant else float(stats.beta.ppf(1 - tail, c + 1, discordant - c))
    return _scaled(Interval(low, high), discordant, n)


def paired_proportion_interval(a: Any, b: Any, *, confidence: float = 0.95) -> Interval:
    """Tango's (1998) score interval of ``mean(a) - mean(b)`` for paired 0/1 values.

    The shifts ``delta`` whose score test is not rejected: with ``x`` pairs
    where only ``a`` is 1, ``y`` where only ``b`` is 1 and ``n`` pairs,
    ``Z(delta) = (x - y - n·delta) / sqrt(n·(2·q + delta·(1 - delta)))`` with
    ``q`` the maximum-likelihood share of ``y``-pairs when the difference is
    ``delta``; the interval is ``|Z| <= z``, found by bisection. Unlike an
    interval conditional on the discordant pairs it stays honest when few or
    none are discordant: with none it is ``±z²/(n + z²)``. Tango T (1998),
    "Equivalence test and confidence interval for the difference in
    proportions for the paired-sample design", Stat Med 17:891–908.

    >>> [round(x, 4) for x in paired_proportion_interval([0] * 5, [0] * 5)]  # ±1.96²/(5 + 1.96²)
    [-0.4345, 0.4345]
    """
    x = as_float_array("a", a)
    y = as_float_array("b", b)
    check_same_length("a", x, "b", y)
    for name, values in (("a", x), ("b", y)):
        if not np.isin(values, (0.0, 1.0)).all():
            raise InputError(f"{name} must hold only 0 and 1; got {float(values[~np.isin(values, (0.0, 1.0))][0])!r}")
    confidence = check_probability("confidence", confidence, open_interval=True)
    n = len(x)
    if n == 0:
        return Interval(math.nan, math.nan)
    only_a = int(np.sum((x == 1) & (y == 0)))
    only_b = int(np.sum((x == 0) & (y == 1)))
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)

    def score(delta: float) -> float:
        slope = -only_a - only_b + (2 * n - only_a + only_b) * delta
        q = (-slope + math.sqrt(slope**2 + 8 * n * only_b * delta * (1 - delta))) / (4 * n)
        variance = n * (2 * q + delta * (1 - delta))
        return (only_a - only_b - n * delta) / math.sqrt(variance) if variance > 0 else math.copysign(
            math.inf, only_a - only_b - n * delta) if only_a - only_b != n * delta else 0.0

    estimate = (only_a - only_b) / n
    return Interval(_root(lambda d: score(d) <= z, -1.0, estimate), _root(lambda d: score(d) >= -z, 1.0, estimate))


def _root(accepted: Callable[[float], bool], end: float, inside: float) -> float:
    """The boundary between ``inside`` (accepted) and ``end``, by bisection; ``end`` itself when it is accepted."""
    if accepted(end):
        return end
    outside = end
    for _ in range(200):
        middle = (inside + outside) / 2
        if middle in (inside, outside):
            break
        if accepted(middle):
            inside = middle
        else:
            outside = middle
    return inside


def wilcoxon_interval(
    a: Any, b: Any, *, confidence: float = 0.95, exact: bool | None = None, correction: bool = True
) -> Interval:
    """The shifts ``mu`` that the signed-rank test of ``a - b - mu`` does not reject (Hodges–Lehmann).

    The interval of the location shift (pseudo-median of the differences) that
    inverts :func:`~cogeval.stats.wilcoxon_test` at level ``1 - confidence``
    over all pairs; R's ``wilcox.test(a, b, paired = TRUE, conf.int = TRUE)``
    when no difference ``a - b`` is 0 (R drops zero differences before its
    interval; here a zero drops out only at the shift 0, as the test does);
    searched among the Walsh averages (bisection on the shift beyond
    ``WALSH_LIMIT`` pairs) with the test's own p-value, using the exact or the
    normal null distribution as ``exact`` says (``None``: as the test at 0
    chooses, so both use the same distribution). A shift that makes a
    difference exactly 0 is a single point where the test drops that pair; the
    interval is that of the shifts around it. With so few pairs that no shift
    can be rejected the interval is infinite; when no shift at all is
    accepted (a sample far from any location shift) it is the point at the
    Hodges–Lehmann estimate.

    >>> x = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
    >>> y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]
    >>> [round(v, 6) for v in wilcoxon_interval(x, y)]  # R wilcox.test(x, y, paired = TRUE, conf.int = TRUE): 0.010 0.786
    [0.01, 0.786]
    """
    x = as_float_array("a", a)
    y = as_float_array("b", b)
    check_same_length("a", x, "b", y)
    confidence = check_probability("confidence", confidence, open_interval=True)
    d = x - y
    if len(d) == 0:
        raise InputError("a and b must hold at least 1 pair; got 0")
    level = 1 - confidence
    if exact is None:
        exact = wilcoxon_test(d, np.zeros_like(d)).exact
    zeros = np.zeros_like(d)
    ordered = np.sort(d)
    large = len(d) > WALSH_LIMIT

    def p_value(mu: float) -> float:
        if large and not exact:
            return _normal_p_value(*_signed_ranks(ordered, mu), correction)
        return wilcoxon_test(d - mu, zeros, exact=exact, correction=correction).p_value

    def accepted(mu: float) -> bool:
        # A shift equal to a difference is a single point where the test drops that pair: look beside it.
        if ordered[min(int(np.searchsorted(ordered, mu)), len(ordered) - 1)] == mu:
            mu = math.nextafter(mu, math.inf)
        return p_value(mu) >= level

    if not large:
        return _walsh_interval(d, accepted)
    centre = _shift_centre(ordered)
    if not accepted(centre):
        return Interval(centre, centre)
    spread = float(np.ptp(d)) or abs(centre) or 1.0
    return Interval(_edge(accepted, centre, -spread), _edge(accepted, centre, spread))


def _shift_centre(ordered: np.ndarray) -> float:
    """The shift at which the signed-rank statistic of ``d - shift`` crosses its null mean (Hodges–Lehmann), by
    bisection; ``ordered`` is ``d`` sorted."""
    def leans_up(mu: float) -> bool:
        v, n, _ = _signed_ranks(ordered, mu)
        return v > n * (n + 1) / 4

    low, high = float(ordered[0]), float(ordered[-1])
    while high - low > 1e-12 * max(1.0, abs(low), abs(high)):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        if leans_up(middle):
            low = middle
        else:
            high = middle
    return (low + high) / 2


def _signed_ranks(ordered: np.ndarray, mu: float) -> tuple[float, int, np.ndarray]:
    """What :func:`~cogeval.stats.wilcoxon_test` of ``d - mu`` ranks, from ``ordered`` (``d`` sorted once): the
    statistic V, the number n of nonzero differences and the sizes of the groups of tied ``|d - mu|``.

    The same numbers bit for bit, in linear time: ``|d - mu|`` is two sorted runs (``mu - d`` below ``mu``
    reversed, ``d - mu`` above), which a stable sort merges in one pass; ranks are averaged over ties as
    ``scipy.stats.rankdata`` does, and their sum (multiples of ½) is exact in any order.
    """
    low, high = np.searchsorted(ordered, mu, "left"), np.searchsorted(ordered, mu, "right")
    below = mu - ordered[:low][::-1]
    size = np.concatenate([below, ordered[high:] - mu])
    if len(size) == 0:  # every difference is mu: the test's statistic 0 with no pair
        return 0.0, 0, np.zeros(0, dtype=np.int64)
    order = np.argsort(size, kind="stable")
    sorted_size = size[order]
    new = np.r_[True, sorted_size[1:] != sorted_size[:-1]]
    starts = np.r_[np.flatnonzero(new), len(size)]
    group = np.cumsum(new) - 1
    ranks = (starts[group] + starts[group + 1] + 1) / 2
    return float(ranks[order >= len(below)].sum()), len(size), np.diff(starts)


def _normal_p_value(v: float, n: int, ties: np.ndarray, correction: bool) -> float:
    """The p-value of :func:`~cogeval.stats.wilcoxon_test`'s normal approximation (tie and continuity corrected)."""
    if n == 0:
        return 1.0
    from scipy import stats

    z = v - n * (n + 1) / 4
    variance = n * (n + 1) * (2 * n + 1) / 24 - float((ties**3 - ties).sum()) / 48
    z = (z - (0.5 * np.sign(z) if correction else 0.0)) / math.sqrt(variance)
    return float(2 * stats.norm.sf(abs(z)))


WALSH_LIMIT = 2000
"""Up to this many pairs the interval is found among the Walsh averages (exact ends); beyond, by bisection."""


def _walsh_interval(d: np.ndarray, accepted: Callable[[float], bool]) -> Interval:
    """The accepted shifts, searched gap by gap between the sorted Walsh averages.

    Between two consecutive Walsh averages (d_i + d_j) / 2 the signed-rank
    statistic of ``d - mu`` is constant, so the test accepts a whole gap or
    none of it, and the accepted gaps are consecutive around the
    Hodges–Lehmann estimate: a binary search on each side finds the ends,
    which are Walsh averages, as R's ``conf.int`` gives them.
    """
    i, j = np.triu_indices(len(d))
    walsh = np.unique((d[i] + d[j]) / 2)
    m = len(walsh)

    def gap_accepted(k: int) -> bool:  # gap k lies between walsh[k - 1] and walsh[k] (0 and m are unbounded)
        point = walsh[0] - 1 if k == 0 else walsh[-1] + 1 if k == m else (walsh[k - 1] + walsh[k]) / 2
        return accepted(float(point))

    estimate = float(np.median((d[i] + d[j]) / 2))
    centre = int(np.searchsorted(walsh, estimate, side="right"))
    if not gap_accepted(centre):
        centre -= 1
        if centre < 0 or not gap_accepted(centre):
            return Interval(estimate, estimate)
    first = _farthest(gap_accepted, centre, 0)
    last = _farthest(gap_accepted, centre, m)
    low = -math.inf if first == 0 else float(walsh[first - 1])
    high = math.inf if last == m else float(walsh[last])
    return Interval(low, high)


def _farthest(accepted: Callable[[int], bool], inside: int, end: int) -> int:
    """The accepted index farthest from ``inside`` towards ``end`` (both included), ``accepted(inside)`` being True."""
    if accepted(end):
        return end
    outside = end
    while abs(outside - inside) > 1:
        middle = (inside + outside) // 2
        if accepted(middle):
            inside = middle
        else:
            outside = middle
    return inside


def _edge(accepted: Callable[[float], bool], inside: float, step: float) -> float:
    """The boundary of the accepted shifts beyond ``inside`` in the direction of ``step`` (±inf if none)."""
    outside = inside + step
    for _ in range(64):
        if not accepted(outside):
            break
        step *= 2
        outside = inside + step
    else:
        return math.copysign(math.inf, step)
    while abs(outside - inside) > 1e-12 * max(1.0, abs(inside)):
        middle = (inside + outside) / 2
        if accepted(middle):
            inside = middle
        else:
            outside = middle
    return inside
