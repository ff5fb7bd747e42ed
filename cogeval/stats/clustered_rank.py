"""The clustered Wilcoxon signed-rank test: paired differences whose cases come in clusters.

Two statistics, as R's ``clusrank::clusWilcox.test(d, cluster = g, paired = TRUE, method = ...)``
computes their large-sample (normal) forms:

- ``rgl`` (Rosner, Glynn & Lee 2006): zero differences dropped, signed ranks
  of ``|d|`` over all units (mid-ranks for ties) summed per cluster, ``R_k``.
  Equal cluster sizes: Z = Σ R_k / √(Σ R_k²). Unequal: the cluster means of the
  signed ranks weighted by ``m_k / (1 + (m_k − 1)·ρ)``, with ρ the intraclass
  correlation of the signed ranks (one-way ANOVA, small-sample corrected, in
  [0, 1]), as clusrank does.
- ``ds`` (Datta & Satten 2008): every cluster counts once, whatever its size:
  cluster scores ``s_i = (1/n_i) Σ_j sign(d_ij)·(1 + Σ_{k≠i} F_k(|d_ij|))``
  with ``F_k`` cluster ``k``'s mid-distribution function of ``|d|`` (zeros
  kept), Z = Σ s_i / √V with Datta & Satten's variance.

The exact test flips the signs of whole clusters (:mod:`cogeval.stats.clustered_flips`).
With one unit per cluster and no ties or zeros, ``rgl`` is R's ``wilcox.test(a, b,
paired = TRUE, exact = FALSE, correct = FALSE)`` (its variance Σ rank² is the
tie-corrected one), ``ds`` the same signed ranks over the variance
Σ (1 + (n − 1)(2·rank − 1)/(2n))², asymptotically the same, and the exact path
of either is :func:`~cogeval.stats.wilcoxon_test`'s exact p-value.

>>> d = [1.41, 6.15, 1.04, -1.39, -1.13, 0.72, -0.63, 2.02]
>>> r = clustered_wilcoxon_test(d, [0] * 8, [1, 1, 2, 2, 3, 3, 4, 4], exact=False)
>>> round(r.statistic, 6), round(r.p_value, 6)  # R: clusWilcox.test(d, cluster = g, paired = TRUE, method = "rgl")
(1.032796, 0.3017)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from cogeval._check import check_choice, check_probability, check_seed
from cogeval.stats.clustered import _cluster_codes, _Clusters, _differences, _inverted, _summed, _too_few_clusters
from cogeval.stats.clustered_flips import _INTERVAL_CONVOLUTION, _INTERVAL_LIMIT, _Flips, _studentized
from cogeval.stats.paired import _check_flag
from cogeval.stats.result import Interval, StatResult

_METHODS = ("rgl", "ds")

_EXACT_BELOW = 25
"""``exact=None`` uses the exact test when fewer clusters than this have a nonzero score (rank sum)."""

_Floats = npt.NDArray[np.float64]


@dataclasses.dataclass(frozen=True)
class ClusteredWilcoxonResult(StatResult):
    """Clustered Wilcoxon signed-rank test. ``to_frame()`` columns: ``test``, ``n``, ``statistic``, ``p_value``,
    ``ci_low``, ``ci_high``, ``method``, ``exact``, ``clusters``, ``significant``."""

    statistic: float
    """Z: the method's normal statistic; for the exact test Σ scores / √(Σ scores²), its sign-flip standardisation."""
    p_value: float
    """Two-sided p-value: the exact cluster sign-flip test when ``exact``, else the normal approximation."""
    ci: Interval
    """The shifts δ whose test of ``d - δ`` is not rejected at ``1 - confidence`` (±inf when no end is)."""
    method: str
    """``"rgl"`` or ``"ds"``."""
    exact: bool
    """True when the p-value comes from the cluster sign-flip test."""
    clusters: int
    """G, the number of clusters."""
    significant: bool
    """``p_value < alpha`` (False when NaN)."""
    n: int
    """Units (pairs), zero differences included."""

    @property
    def test(self) -> str:
        """``clustered-wilcoxon-exact`` or ``clustered-wilcoxon``, as a comparison's ``test`` column names them."""
        return "clustered-wilcoxon-exact" if self.exact else "clustered-wilcoxon"


class _Shifted:
    """The magnitudes ``|d − δ|`` of every unit in ascending order for any shift δ, from ``d`` sorted once.

    ``|d − δ|`` is two sorted runs (``δ − d`` below δ reversed, ``d − δ`` above),
    which a stable sort merges in one pass; units with ``d == δ`` come first
    with magnitude 0.
    """

    def __init__(self, d: _Floats, groups: _Clusters) -> None:
        order = np.argsort(d, kind="stable")
        self.d = d[order]
        self.codes = groups.codes[order]
        self.groups = groups

    def at(self, delta: float, *, zeros: bool = True) -> tuple[_Floats, _Floats, npt.NDArray[np.intp]]:
        """(magnitudes ascending, signs, cluster codes) of ``d − delta``; the zeros first, or left out."""
        low = int(np.searchsorted(self.d, delta, "left"))
        high = int(np.searchsorted(self.d, delta, "right"))
        below = delta - self.d[:low][::-1]
        above = self.d[high:] - delta
        size = np.concatenate([below, above])
        order = np.argsort(size, kind="stable")
        signs = np.where(order < len(below), -1.0, 1.0)
        codes = np.concatenate([self.codes[:low][::-1], self.codes[high:]])[order]
        if not zeros or low == high:
            return size[order], signs, codes
        return (np.concatenate([np.zeros(high - low), size[order]]), np.concatenate([np.zeros(high - low), signs]),
                np.concatenate([self.codes[low:high], codes]))


def _tie_runs(sorted_values: _Floats) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """For each element of a sorted array, the index where its run of equal values starts and ends (exclusive)."""
    new = np.r_[True, sorted_values[1:] != sorted_values[:-1]] if len(sorted_values) else np.zeros(0, dtype=bool)
    if new.all():  # no ties: every value is its own run
        index = np.arange(len(sorted_values))
        return index, index + 1
    starts = np.r_[np.flatnonzero(new), len(sorted_values)]
    run = np.cumsum(new) - 1
    return starts[run], starts[run + 1]


def _rgl(shifted: _Shifted, delta: float) -> tuple[_Floats, float]:
    """Rosner–Glynn–Lee at shift ``delta``: (the cluster sums of the signed ranks, Z), as clusrank."""
    size, signs, codes = shifted.at(delta, zeros=False)
    g = shifted.groups.count
    if len(size) == 0:
        return np.zeros(g), 0.0
    start, end = _tie_runs(size)
    signed = signs * (start + end + 1) / 2  # mid-ranks
    sums = _summed(codes, signed, g)
    counts = np.bincount(codes, minlength=g)
    present = counts > 0
    m_k, r_k = counts[present].astype(float), sums[present]
    if np.all(m_k == m_k[0]):
        return sums, _studentized(r_k)
    n, m = float(len(signed)), len(m_k)
    total_ss = float(np.sum((signed - signed.mean()) ** 2))
    error_ss = float(np.dot(signed, signed)) - float(np.sum(r_k**2 / m_k))
    within = error_ss / (n - m)
    between = (total_ss - error_ss) / (m - 1)
    m0 = (n - float(np.dot(m_k, m_k)) / n) / (m - 1)
    s2b = (between - within) / m0
    rho = s2b / (s2b + within) if s2b + within != 0 else 0.0
    rho = max(rho, 0.0)
    rho = min(rho * (1 + (1 - rho**2) / (m - 2.5)), 1.0)
    weights = m_k / (1 + (m_k - 1) * rho)  # clusrank divides them all by the variance of the signed ranks, which cancels
    means = r_k / m_k
    square = float(np.sum(weights**2 * means**2))
    return sums, float(np.dot(means, weights)) / math.sqrt(square) if square > 0 else 0.0


def _ds(shifted: _Shifted, delta: float) -> tuple[_Floats, float]:
    """Datta–Satten at shift ``delta``: (the cluster scores s_i, Z), as clusrank."""
    size, signs, codes = shifted.at(delta)
    groups = shifted.groups
    g, n = groups.count, len(size)
    n_i = groups.sizes.astype(float)
    start, end = _tie_runs(size)
    # Σ_k F_k(|x_j|): the mid-ECDF of the magnitudes with weight 1/n_k per unit, summed over clusters
    cumulative = np.r_[0.0, np.cumsum(1 / n_i[codes])]
    f_total = (cumulative[start] + cumulative[end]) / 2
    f_common = (start + end) / (2 * n)  # (#{< x} + #{<= x}) / (2n) over all units
    within = np.argsort(codes, kind="stable")  # cluster by cluster, magnitudes still ascending
    w_codes, w_size = codes[within], size[within]
    first = np.r_[0, np.flatnonzero(w_codes[1:] != w_codes[:-1]) + 1]
    cluster_start = np.repeat(first, np.diff(np.r_[first, n]))
    new = np.r_[True, (w_codes[1:] != w_codes[:-1]) | (w_size[1:] != w_size[:-1])]
    run_starts = np.r_[np.flatnonzero(new), n]
    run = np.cumsum(new) - 1
    own = np.empty(n)
    own[within] = ((run_starts[run] - cluster_start) + (run_starts[run + 1] - cluster_start)) / (2 * n_i[w_codes])
    scores = _summed(codes, signs * (1 + f_total - own), g) / n_i
    variance_terms = _summed(codes, signs * (1 + (g - 1) * f_common), g) / n_i
    square = float(np.dot(variance_terms, variance_terms))
    total = float(scores.sum())
    return scores, total / math.sqrt(square) if square > 0 else 0.0


def clustered_wilcoxon_test(
    a: Any,
    b: Any,
    clusters: Any,
    *,
    method: str = "rgl",
    exact: bool | None = None,
    alpha: float = 0.05,
    confidence: float | None = 0.95,
    seed: Any = 0,
    codes: bool = False,
) -> ClusteredWilcoxonResult:
    """Two-sided signed-rank test of ``d = a − b`` symmetric about 0, with units in ``clusters``.

    ``method="rgl"`` (the default) is Rosner, Glynn & Lee (2006), which ranks
    every unit and lets larger clusters count for more, in both its balanced
    and unbalanced (intraclass-weighted) versions; ``method="ds"`` is Datta &
    Satten (2008), which gives every cluster the same weight (use it when the
    cluster size may depend on the outcome). Their normal (large-sample)
    p-values are R's ``clusrank::clusWilcox.test(d, cluster = g, paired = TRUE,
    method = "rgl" / "ds")`` (clusrank 1.0-4; its ``ds`` needs the units
    ordered by cluster, which this does not).

    ``exact=None`` uses the exact cluster sign-flip test when fewer than 25
    clusters have a nonzero score (for ``rgl`` the rank sum ``R_k``, for
    ``ds`` its cluster score ``s_i``; both flip sign with their cluster's
    differences); ``True`` forces it, ``False`` forbids it. Its p-value is
    P(|Σ ε_k v_k| >= |Σ v_k|) over fair signs ε_k, ties included, enumerated
    exactly (rank sums are multiples of ½) or, when that is not feasible,
    estimated from 10,000 sign vectors of ``numpy.random.default_rng(seed)``.
    (clusrank's own exact path is not used: it never counts a score of 1 and
    its upper tail is off by one.) The statistic of the exact test is
    Σ v_k/√(Σ v_k²), which for ``rgl`` with equal cluster sizes is the normal Z.

    ``ci`` is the Hodges–Lehmann-style interval of the shift: the δ whose test
    of ``d − δ`` (re-ranked, with the same exact or normal null as at 0, the
    exact one enumerated up to 24 clusters, else a seeded Monte Carlo) is not
    rejected at ``1 − confidence``, its ends found by bisection outward from
    an accepted centre (the median of ``d`` or the shift where the statistic
    changes sign). The test's own decision is taken at 0, so the interval
    excludes 0 exactly when p < 1 − confidence; an end beyond every
    difference that is still accepted is ±inf.
    ``confidence=None`` gives the test alone (``ci`` NaN), for callers that
    need only its p-value.

    Values are taken as given: zeros are zeros only when exactly 0 (the
    comparison engine applies its noise floor first). Every difference 0:
    Z = 0 and p = 1. Fewer than 2 clusters: the normal path is undefined (NaN,
    with a warning); the exact path gives p = 1. ``codes=True``: as
    :func:`~cogeval.stats.cluster_se`.

    >>> z = [1.41, 6.15, 1.04, -1.39, -1.13, 0.72, -0.63, 2.02, 0.26, 3.9, -2.15, 0.65, -1.05, -0.93]
    >>> g = [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 5, 6, 6, 6]
    >>> r = clustered_wilcoxon_test(z, [0] * 14, g, method="ds", exact=False)
    >>> round(r.statistic, 6), round(r.p_value, 6)  # R: clusWilcox.test(z, cluster = g, paired = TRUE, method = "ds")
    (0.959632, 0.33724)
    """
    method = check_choice("method", method, _METHODS)
    exact = _check_flag("exact", exact, allow_none=True)
    alpha = check_probability("alpha", alpha)
    confidence = None if confidence is None else check_probability("confidence", confidence, open_interval=True)
    seed = check_seed("seed", seed)
    d = _differences(a, b)
    groups = _cluster_codes(clusters, len(d), codes=codes)
    n, g = len(d), groups.count
    shifted = _Shifted(d, groups)
    statistic_at: Callable[[_Shifted, float], tuple[_Floats, float]] = _rgl if method == "rgl" else _ds
    scores, z = statistic_at(shifted, 0.0) if n else (np.zeros(0), 0.0)
    use_exact = int(np.count_nonzero(scores)) < _EXACT_BELOW if exact is None else exact
    if g < 2 and not use_exact:
        _too_few_clusters("clustered_wilcoxon_test", g)
        return ClusteredWilcoxonResult(math.nan, math.nan, Interval(math.nan, math.nan), method, False, g, False, n)

    from scipy import stats

    if use_exact:
        z = _studentized(scores)
    p = _Flips(g, seed).p_value(scores) if use_exact else float(2 * stats.norm.sf(abs(z)))
    if confidence is None or n == 0:  # the test alone
        return ClusteredWilcoxonResult(z, p, Interval(math.nan, math.nan), method, use_exact, g, bool(p < alpha), n)
    level = 1 - confidence
    if use_exact:
        null = _Flips(g, seed, limit=_INTERVAL_LIMIT, convolution=_INTERVAL_CONVOLUTION)

        def excess(delta: float) -> float:
            return level - null.p_value(statistic_at(shifted, delta)[0])
    else:
        critical = float(stats.norm.isf(level / 2))

        def excess(delta: float) -> float:
            return abs(statistic_at(shifted, delta)[1]) - critical

    spread = float(np.ptp(d)) or max(1.0, float(np.abs(d).max()))
    beyond = spread * 1e-9
    low_end, high_end = float(d.min()) - beyond, float(d.max()) + beyond
    centre = float(np.median(d))
    if excess(centre) > 0:
        centre = _sign_change(lambda delta: statistic_at(shifted, delta)[1], low_end, high_end, spread * 1e-10)
    # a first guess of the half-width: four clustered standard errors of the mean
    step = 4 * math.sqrt(float(np.sum(groups.sums(d - d.mean()) ** 2))) / n if g >= 2 else math.inf
    low, high = _inverted(excess, p >= level, centre, low_end, high_end, tolerance=spread * 1e-10,
                          smooth=not use_exact, step=step or math.inf)
    ci = Interval(-math.inf if low == low_end else low, math.inf if high == high_end else high)
    return ClusteredWilcoxonResult(z, p, ci, method, use_exact, g, bool(p < alpha), n)


def _sign_change(statistic: Callable[[float], float], low: float, high: float, tolerance: float) -> float:
    """The shift where a statistic that falls with the shift changes sign, by bisection (its Hodges–Lehmann point)."""
    while high - low > tolerance:
        middle = (low + high) / 2
        if middle in (low, high):
            break
        if statistic(middle) > 0:
            low = middle
        else:
            high = middle
    return (low + high) / 2
