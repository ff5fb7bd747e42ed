"""The paired test of one metric as a comparison runs it, and the interval that inverts it.

The noise floor comes first: a paired difference within :data:`TOLERANCE` of
0 is exactly 0, and every other one is rounded to :data:`SIGNIFICANT_DIGITS`
significant digits, so differences equal but for float rounding (``1/3 - 0``
and ``1 - 2/3``) are equal and a rank test sees their tie. Then McNemar's test for 0/1 values, else the paired t-test or
Wilcoxon (the exact sign test when every paired difference is the same non-zero value, where the t-test
has no spread); the interval inverts that test at a given level
(:mod:`cogeval.stats.inversion`), and :func:`agreeing_interval` makes sure it
excludes 0 exactly when the metric is significant.

One :class:`PairedSample` carries a metric's unit of independence: the paired values of its units and,
when the cases are clustered (``cluster=``), each unit's cluster. Every test, interval, equivalence test,
power figure and fragility count reads it, so clustered and unclustered comparisons are one code path: a
sample whose clusters hold one unit each is tested exactly as an unclustered one; otherwise McNemar becomes
:func:`~cogeval.stats.clustered_mcnemar_test` (Yang's method), the t-test
:func:`~cogeval.stats.clustered_t_test` (CR2, Bell–McCaffrey df) and Wilcoxon
:func:`~cogeval.stats.clustered_wilcoxon_test` (Rosner–Glynn–Lee).

>>> tested = paired_test(PairedSample(np.array([0.0, 0, 0, 0, 1, 1]), np.array([1.0, 1, 1, 1, 1, 0])), "t")
>>> tested.name, tested.discordant, round(tested.p_value, 4)  # b = 1, c = 4: R binom.test(1, 5)
('mcnemar-exact', (1, 4), 0.375)
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings
from typing import cast

import numpy as np

from cogeval.compare.result import TestName
from cogeval.stats import (
    Interval,
    cluster_se,
    clustered_mcnemar_test,
    clustered_t_test,
    clustered_wilcoxon_test,
    mcnemars_test,
    paired_t_test,
    wilcoxon_test,
)
from cogeval.stats.inversion import mcnemar_interval, wilcoxon_interval

TOLERANCE = 1e-9
"""A paired difference at most this large (in absolute value) is no change: it is set to exactly 0
before every test, interval, effect size and count (the noise floor)."""

SIGNIFICANT_DIGITS = 12
"""Every other paired difference is rounded to this many significant digits (R's ``signif(d, 12)``) by the
noise floor. Per-case means of trials (``1/3``, ``2/3``) carry a rounding error in their last bits (about
1e-16 of their size), so ``1 - 2/3`` and ``1/3 - 0`` differ by one bit; 12 digits of the 15-16 a double holds
make such differences equal (ties that a rank test ranks as ties, as R's ``wilcox.test(..., digits.rank = 12)``
would) and change no difference by more than 5e-13 of itself."""


@dataclasses.dataclass(frozen=True)
class PairedTest:
    """The test of one metric's paired differences ``d = head - base`` (noise floor applied)."""

    name: TestName
    """``mcnemar``, ``mcnemar-exact``, ``t``, ``wilcoxon``, their ``clustered-`` forms, or ``none`` (fewer than
    2 pairs)."""
    p_value: float
    exact: bool
    """The exact null distribution was used (McNemar's binomial, Wilcoxon's signed-rank, a cluster sign flip)."""
    side: float
    """+1 when the differences lean positive (by the test's own statistic), -1 negative, 0 neither."""
    statistic: float = math.nan
    """The test statistic: t, McNemar's chi-square, Wilcoxon's V, or a clustered test's (t, chi-square, Z)."""
    discordant: tuple[int, int] = (0, 0)
    """McNemar's (b, c): base 1 & head 0, base 0 & head 1."""


@dataclasses.dataclass(frozen=True)
class PairedSample:
    """One metric's paired units: ``base`` and ``head`` values (trials averaged) and, for clustered cases, each
    unit's cluster code ``clusters`` (integers 0 .. G - 1, each used; None: every unit is a cluster of its own).

    >>> s = PairedSample(np.array([0.0, 1, 0, 1]), np.array([1.0, 1, 1, 0]), np.array([0, 0, 1, 1]))
    >>> s.n, s.groups, s.clustered, s.d.tolist(), s.take(np.array([True, False, False, True])).clusters.tolist()
    (4, 2, True, [1.0, 0.0, 1.0, -1.0], [0, 1])
    """

    base: np.ndarray
    head: np.ndarray
    clusters: np.ndarray | None = None

    @functools.cached_property
    def d(self) -> np.ndarray:
        """The paired differences ``head - base``, noise floor applied (:func:`noise_floor`)."""
        return noise_floor(self.head - self.base)

    @property
    def n(self) -> int:
        """Paired units."""
        return len(self.base)

    @functools.cached_property
    def groups(self) -> int:
        """G: the clusters the units fall in (``n`` without clusters)."""
        if self.clusters is None:
            return self.n
        return int(self.clusters.max()) + 1 if len(self.clusters) else 0

    @property
    def clustered(self) -> bool:
        """Some cluster holds more than one unit: the clustered tests apply."""
        return self.clusters is not None and self.groups < self.n

    def take(self, keep: np.ndarray) -> PairedSample:
        """The units where ``keep`` is True (a bool mask or positions), their clusters numbered again."""
        clusters = None
        if self.clusters is not None:
            kept = self.clusters[keep]
            used = np.zeros(self.groups, dtype=np.int64)
            used[kept] = 1
            clusters = (np.cumsum(used) - 1)[kept]
        taken = PairedSample(self.base[keep], self.head[keep], clusters)
        if "d" in self.__dict__:  # the differences once made are taken too, not made again
            taken.__dict__["d"] = self.d[keep]
        return taken

    @functools.cached_property
    def design_effect(self) -> float:
        """(clustered SE / unclustered SE)² of the mean difference: the clustered variance over the variance the
        cases would have were they independent (CR2); exactly 1 when every cluster holds one unit. NaN without
        clusters or without spread."""
        if self.clusters is None or self.n < 2:
            return math.nan
        sd = float(self.d.std(ddof=1))
        if sd == 0:
            return math.nan
        if not self.clustered:
            return 1.0
        se = cluster_se(self.d, self.clusters, kind="CR2", codes=True)
        return float((se / (sd / math.sqrt(self.n))) ** 2)


def noise_floor(d: np.ndarray) -> np.ndarray:
    """``d`` with every difference of at most :data:`TOLERANCE` in absolute value set to exactly 0, and every
    other one rounded to :data:`SIGNIFICANT_DIGITS` significant digits.

    >>> noise_floor(np.array([0.1 + 0.2 - 0.3, 0.5, -1e-12])).tolist()
    [0.0, 0.5, 0.0]
    >>> 1 - 2 / 3 == 1 / 3, noise_floor(np.array([1 - 2 / 3])) == noise_floor(np.array([1 / 3]))
    (False, array([ True]))
    """
    d = np.asarray(d, dtype=float)
    return np.where(np.abs(d) <= TOLERANCE, 0.0, _significant(d, SIGNIFICANT_DIGITS))


def _significant(x: np.ndarray, digits: int) -> np.ndarray:
    """``x`` rounded to ``digits`` significant digits, as R's ``signif``; 0, NaN and ±inf kept."""
    finite = np.isfinite(x) & (x != 0)
    magnitude = np.floor(np.log10(np.abs(np.where(finite, x, 1.0))))
    scale = 10.0 ** (digits - 1 - magnitude)  # a power of ten: the rounded value is an integer over it
    return np.where(finite, np.round(x * scale) / scale, x)


def is_binary(b: np.ndarray, h: np.ndarray) -> bool:
    """Every paired value on both sides is 0 or 1."""
    return bool(np.isin(b, (0.0, 1.0)).all() and np.isin(h, (0.0, 1.0)).all())


def paired_test(sample: PairedSample, test: str) -> PairedTest:
    """The paired test of ``sample`` as a comparison runs it (McNemar for 0/1 values, else ``test``), clustered
    when its clusters hold more than one unit.

    Differences within :data:`TOLERANCE` of 0 count as no change, so float
    noise cannot move a test; other differences are ranked as R ranks them.

    >>> paired_test(PairedSample(np.array([0.3] * 8), np.array([0.1 + 0.2] * 7 + [0.3])), "t").p_value
    1.0
    """
    n, d = sample.n, sample.d
    if n < 2:
        return PairedTest("none", 1.0, False, 0.0)
    b, h = sample.base, sample.head
    binary = is_binary(b, h)
    shift = None if binary else constant_shift(sample)
    if shift is not None:
        return _sign_test(sample, shift)
    if sample.clustered:
        return _clustered_test(sample, test)
    if binary:
        worse, better = int(np.sum(d < 0)), int(np.sum(d > 0))
        r = mcnemars_test(worse, better)
        # McNemar.test is typed str but is always "mcnemar-exact" or "mcnemar" (cogeval.stats.paired.McNemar.test)
        name = cast(TestName, r.test)
        return PairedTest(name, r.p_value, r.exact, float(np.sign(better - worse)), r.statistic, (worse, better))
    zeros = np.zeros(n)
    if test == "t":
        t = paired_t_test(d, zeros)
        return PairedTest("t", t.p_value, False, float(np.sign(d.mean())), t.statistic)
    w = wilcoxon_test(d, zeros)
    return PairedTest("wilcoxon", w.p_value, w.exact, float(np.sign(w.statistic - w.n * (w.n + 1) / 4)), w.statistic)


def constant_shift(sample: PairedSample) -> float | None:
    """The one non-zero value every unit's paired difference takes (with clusters: every cluster's mean
    difference), or None: then the t-test has no spread (it is undefined) and the exact sign test decides.

    >>> constant_shift(PairedSample(np.array([1.0, 2.0, 1.5]), np.array([1.17, 2.17, 1.67]))), constant_shift(
    ...     PairedSample(np.zeros(3), np.array([0.1, 0.3, 0.2]), np.array([0, 0, 1])))
    (0.17, 0.2)
    """
    d = sample.d
    if sample.clustered:
        assert sample.clusters is not None
        d = noise_floor(np.bincount(sample.clusters, weights=d) / np.bincount(sample.clusters))
    first = float(d[0]) if len(d) else 0.0
    return first if first != 0 and bool((d == first).all()) else None


def _sign_test(sample: PairedSample, shift: float) -> PairedTest:
    """The exact two-sided sign test of units (clusters) whose differences all equal ``shift``: every one of
    the G signs agrees, so p = 2^(1 − G) (R: ``binom.test(G, G)``); its statistic is the count of positive signs."""
    units = sample.groups
    d = sample.d
    name: TestName = "clustered-sign" if sample.clustered else "sign"
    return PairedTest(name, min(1.0, math.ldexp(1.0, 1 - units)), True, math.copysign(1.0, shift),
                      float(units if shift > 0 else 0), (int(np.sum(d < 0)), int(np.sum(d > 0))))


def _clustered_test(sample: PairedSample, test: str) -> PairedTest:
    """:func:`paired_test` of a clustered sample: the clustered form of the test the sample would get unclustered.
    An undefined test (fewer than 2 clusters, no spread) is NaN; the comparison's warnings say why, so the
    function's own warning is not raised again."""
    d, zeros = sample.d, np.zeros(sample.n)
    discordant = (int(np.sum(d < 0)), int(np.sum(d > 0)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _clustered(sample, test, d, zeros, discordant)


def _clustered(sample: PairedSample, test: str, d: np.ndarray, zeros: np.ndarray,
               discordant: tuple[int, int]) -> PairedTest:
    if is_binary(sample.base, sample.head):
        r = clustered_mcnemar_test(sample.head, sample.base, sample.clusters, codes=True, confidence=None)
        return PairedTest(cast(TestName, r.test), r.p_value, r.exact, _sign(r.mean_difference), r.statistic, discordant)
    if test == "t":
        t = clustered_t_test(d, zeros, sample.clusters, codes=True)
        return PairedTest("clustered-t", t.p_value, False, _sign(t.mean_difference), t.statistic, discordant)
    w = clustered_wilcoxon_test(d, zeros, sample.clusters, codes=True, confidence=None)
    return PairedTest(cast(TestName, w.test), w.p_value, w.exact, _sign(w.statistic), w.statistic, discordant)


def _sign(x: float) -> float:
    return 0.0 if math.isnan(x) else float(np.sign(x))


def inverted_interval(sample: PairedSample, tested: PairedTest, level: float) -> Interval:
    """The interval of the difference that inverts ``tested`` at level ``1 - level`` (NaN when there is no test).

    t: the t-interval of the mean difference; McNemar: the interval of the
    difference in proportions from the discordant pairs; Wilcoxon: the
    Hodges–Lehmann shift interval; the sign test (every difference the same): that difference alone when it
    rejects the others, else every shift; a clustered test: the interval its function gives at that level.
    See ``docs/statistics-intervals.md``.
    """
    n = sample.n
    if n == 0 or math.isnan(tested.p_value) or (tested.name != "none" and math.isnan(level)):
        return Interval(math.nan, math.nan)
    d = sample.d
    if tested.name == "none":
        return Interval(float(d[0]), float(d[0]))
    if tested.name.endswith("sign"):  # every shift but the one all differences take is rejected at the same p
        shift = constant_shift(sample)
        assert shift is not None
        return Interval(shift, shift) if tested.p_value < level else Interval(-math.inf, math.inf)
    confidence = 1 - level
    zeros = np.zeros(n)
    if tested.name.startswith("clustered"):
        with warnings.catch_warnings():  # said once, by the comparison's warnings
            warnings.simplefilter("ignore")
            return _clustered_interval(sample, tested, confidence)
    if tested.name.startswith("mcnemar"):
        worse, better = tested.discordant
        return mcnemar_interval(worse, better, n, confidence=confidence, exact=tested.exact)
    if tested.name == "t":
        return paired_t_test(d, zeros, confidence=confidence).confidence_interval
    return wilcoxon_interval(d, zeros, confidence=confidence, exact=tested.exact)


def _clustered_interval(sample: PairedSample, tested: PairedTest, confidence: float) -> Interval:
    d, zeros = sample.d, np.zeros(sample.n)
    if tested.name.startswith("clustered-mcnemar"):
        return clustered_mcnemar_test(sample.head, sample.base, sample.clusters, codes=True, exact=tested.exact,
                                      confidence=confidence).ci
    if tested.name == "clustered-t":
        return clustered_t_test(d, zeros, sample.clusters, codes=True, confidence=confidence).ci
    return clustered_wilcoxon_test(d, zeros, sample.clusters, codes=True, exact=tested.exact, confidence=confidence).ci


def agreeing_interval(interval: Interval, significant: bool, side: float) -> Interval:
    """``interval`` made to exclude 0 exactly when ``significant``.

    Test inversion gives this already, up to the last bit of rounding at the
    boundary and the discreteness of a rank test at exactly 0 (where it drops
    the zero differences). Not significant: the interval is widened to reach 0.
    Significant but touching 0: it keeps the side the test leans to, open at 0
    (its end there is the smallest positive float).
    """
    low, high = interval
    if math.isnan(low) or (low > 0 or high < 0) == significant:
        return interval
    if not significant:
        return Interval(min(low, 0.0), max(high, 0.0))
    tiny = math.ulp(0.0)
    if side >= 0:
        return Interval(tiny, max(high, tiny))
    return Interval(min(low, -tiny), -tiny)
