"""The clustered McNemar test: paired 0/1 outcomes whose cases come in clusters.

With ``d = a − b`` per unit, ``S_k`` the sum of ``d`` in cluster ``k`` (its
``b_k − c_k``: units where only ``a`` is 1 minus units where only ``b`` is 1),
``n_k`` its size, ``G`` clusters, ``S = Σ S_k`` and ``n = Σ n_k``, the three
chi-square statistics (1 df) of R's ``clust.bin.pair`` are

- ``obuchowski`` (Obuchowski 1998, in Yang et al.'s simplification):
  ``(G−1)/G · S² / Σ S_k²``;
- ``durkalski`` (Durkalski et al. 2003): ``(Σ S_k/n_k)² / Σ (S_k/n_k)²``;
- ``yang`` (Yang, Sun & Hardin 2010, the modified Obuchowski):
  ``(G−1)/G · S² / (½ Σ [(S_k − n_k·S/n)² + S_k²])``, which averages the
  variance about 0 and about the observed difference.

With one unit per cluster (``b`` and ``c`` discordant units of ``n``) they are
``(n−1)/n · (b−c)²/(b+c)``, McNemar's uncorrected ``(b−c)²/(b+c)`` and
``(n−1)/n · (b−c)² / ((b+c) − (b−c)²/(2n))``. The exact test is the cluster
sign-flip test of ``S`` (:mod:`cogeval.stats.clustered_flips`).

>>> a = [1] * 6 + [0] * 2 + [1] * 2 + [0] * 4  # four clusters of paired 0/1 outcomes
>>> b = [0] * 3 + [1] * 3 + [1] * 2 + [0] * 2 + [0] * 4
>>> r = clustered_mcnemar_test(a, b, [1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 5, 5, 5, 5], exact=False)
>>> round(r.statistic, 6), round(r.p_value, 6), r.discordant  # R clust.bin.pair(method = "yang"): 0.448998 0.502811
(0.448998, 0.502811, (5, 2))
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from cogeval._check import as_float_array, check_choice, check_probability, check_same_length, check_seed
from cogeval.errors import InputError
from cogeval.stats.clustered import _cluster_codes, _inverted, _too_few_clusters
from cogeval.stats.clustered_flips import _Flips, _LinearFlips
from cogeval.stats.paired import _check_flag
from cogeval.stats.result import Interval, StatResult

_METHODS = ("yang", "obuchowski", "durkalski")

_EXACT_BELOW = 25
"""``exact=None`` uses the exact test when fewer clusters than this have a nonzero sum (McNemar's b + c < 25)."""


@dataclasses.dataclass(frozen=True)
class ClusteredMcNemarResult(StatResult):
    """Clustered McNemar test. ``to_frame()`` columns: ``test``, ``n``, ``statistic``, ``p_value``, ``ci_low``,
    ``ci_high``, ``method``, ``exact``, ``clusters``, ``significant``, ``mean_difference``, ``discordant``."""

    statistic: float
    """The method's chi-square statistic (1 df), whichever p-value was used; NaN with fewer than 2 clusters."""
    p_value: float
    """Two-sided p-value: the exact cluster sign-flip test when ``exact``, else chi-square with 1 df."""
    ci: Interval
    """Interval of ``mean(a - b)`` (``durkalski``: of the mean of the cluster means) inverting the test, in [-1, 1]."""
    method: str
    """``"yang"``, ``"obuchowski"`` or ``"durkalski"``."""
    exact: bool
    """True when the p-value comes from the cluster sign-flip test."""
    clusters: int
    """G, the number of clusters."""
    significant: bool
    """``p_value < alpha`` (False when NaN)."""
    mean_difference: float
    """mean(a - b): the difference in proportions."""
    n: int
    """Units (pairs)."""
    discordant: tuple[int, int]
    """(units with a = 1 and b = 0, units with a = 0 and b = 1): McNemar's (b, c)."""

    @property
    def test(self) -> str:
        """``clustered-mcnemar-exact`` or ``clustered-mcnemar``, as a comparison's ``test`` column names them."""
        return "clustered-mcnemar-exact" if self.exact else "clustered-mcnemar"


def _binary(name: str, values: Any) -> npt.NDArray[np.float64]:
    x = as_float_array(name, values)
    bad = np.flatnonzero((x != 0) & (x != 1))
    if len(bad):
        raise InputError(f"{name} must hold only 0 and 1; got {float(x[bad[0]])!r} at position {int(bad[0])}")
    return x


class _ChiSquare:
    """A method's chi-square statistic of the shifted cluster sums ``S_k − n_k·δ`` (O(1) per shift).

    Each is ``factor·N(δ)² / V(δ)`` with ``N`` linear and ``V`` quadratic in δ:
    obuchowski ``Σ w_k`` over ``Σ w_k²``; yang the same numerator over
    ``½(Σ (S_k − n_k·S/n)² + Σ w_k²)``; durkalski ``Σ u_k`` over ``Σ u_k²`` with
    ``u_k = S_k/n_k − δ``.
    """

    def __init__(self, method: str, sums: npt.NDArray[np.float64], sizes: npt.NDArray[np.float64]) -> None:
        g = len(sums)
        n = float(sizes.sum())
        if method == "durkalski":
            u = sums / sizes
            self.centre = float(u.mean())
            self.factor, self.linear = 1.0, (float(u.sum()), float(g))
            self.quadratic = (float(np.dot(u, u)), float(u.sum()), float(g))
            self.fixed = 0.0
        else:
            self.centre = float(sums.sum()) / n
            self.factor, self.linear = (g - 1) / g, (float(sums.sum()), n)
            self.quadratic = (float(np.dot(sums, sums)), float(np.dot(sums, sizes)), float(np.dot(sizes, sizes)))
            self.fixed = 0.0
            if method == "yang":
                centred = sums - sizes * self.centre
                self.factor *= 2
                self.fixed = float(np.dot(centred, centred))

    def __call__(self, delta: float) -> float:
        numerator = self.linear[0] - self.linear[1] * delta
        s2, s1, s0 = self.quadratic
        variance = self.fixed + s2 - 2 * s1 * delta + s0 * delta**2
        if numerator == 0 or variance <= 0:
            return 0.0
        return self.factor * numerator**2 / variance


def clustered_mcnemar_test(
    a: Any,
    b: Any,
    clusters: Any,
    *,
    method: str = "yang",
    exact: bool | None = None,
    alpha: float = 0.05,
    confidence: float | None = 0.95,
    seed: Any = 0,
    codes: bool = False,
) -> ClusteredMcNemarResult:
    """McNemar's test for paired 0/1 outcomes ``a`` and ``b`` whose units come in ``clusters``.

    ``method`` is the chi-square statistic (1 df) of R's
    ``clust.bin.pair(ak, bk, ck, dk, method = ...)``: ``"yang"`` (the default;
    Yang, Sun & Hardin 2010's modified Obuchowski, whose variance averages the
    estimates under the null and at the observed difference, which keeps its
    size close to nominal with few or unequal clusters), ``"obuchowski"``
    (Obuchowski 1998) or ``"durkalski"`` (Durkalski et al. 2003, which weights
    every cluster equally). With one unit per cluster ``durkalski`` is
    McNemar's uncorrected ``(b − c)²/(b + c)``, ``obuchowski`` that times
    ``(n − 1)/n`` and ``yang`` ``(n − 1)/n · (b − c)²/((b + c) − (b − c)²/(2n))``.

    ``exact=None`` uses the exact cluster sign-flip test of ``S = Σ_k S_k``
    (``S_k`` the sum of ``a − b`` in cluster ``k``) when fewer than 25 clusters
    have ``S_k ≠ 0``, as :func:`~cogeval.stats.mcnemars_test` does for
    ``b + c < 25``; ``True`` forces it, ``False`` forbids it. Its two-sided
    p-value is P(|T*| >= |S|) for ``T* = Σ ε_k S_k`` with fair signs, ties
    included: with one unit per cluster it is ``mcnemars_test(b, c, exact=True)``'s
    (R's ``binom.test(b, b + c)``). It is exact by enumeration or convolution
    (sums are integers); only when the clusters with nonzero sums are both
    very many and very unequal (over 2^40 pooled sign patterns and a
    convolution beyond 4·10^7 cells) is it a Monte Carlo of 10,000 sign
    vectors from ``numpy.random.default_rng(seed)``.

    ``ci`` is the set of shifts δ whose test of the cluster sums ``S_k − n_k·δ``
    (the units' ``d − δ``) is not rejected at ``1 − confidence``, clipped to
    [−1, 1]: for the chi-square methods the same statistic at δ (a score-type
    interval, like Wilson's; ``durkalski``'s is centred on the mean of the
    cluster means, the quantity it tests), for the exact test the sign-flip
    test of ``w_k = S_k − n_k·δ`` (enumerated when the pooled ``(S_k, n_k)``
    patterns number at most 2^18, else one seeded Monte Carlo draw reused for
    every δ). The ends are found by bisection from the estimate outwards and
    the test's own decision is taken at 0, so the interval excludes 0 exactly
    when p < 1 − confidence. With very few clusters the accepted shifts can
    reach ±1.
    ``confidence=None`` gives the test alone (``ci`` NaN), for callers that
    need only its p-value.

    No unit discordant (every ``S_k = 0``): statistic 0, p = 1. Fewer than 2
    clusters: the chi-square path is undefined (NaN, with a warning); the
    exact path gives p = 1. Values are taken as given. ``codes=True``: as
    :func:`~cogeval.stats.cluster_se`.

    >>> thyroids = [(0, 0, 2, 1), (2, 0, 1, 0), (3, 0, 0, 0), (1, 0, 0, 0), (2, 0, 1, 0), (4, 0, 0, 0), (3, 0, 0, 0),
    ...             (2, 0, 0, 0), (1, 1, 0, 0), (1, 0, 0, 0), (2, 0, 0, 1), (2, 0, 0, 0), (3, 0, 0, 0), (2, 0, 0, 0),
    ...             (0, 0, 2, 0), (2, 0, 0, 1), (2, 0, 0, 1), (2, 0, 1, 0), (2, 0, 0, 0), (1, 0, 0, 0), (2, 0, 0, 0)]
    >>> a, b, g = [], [], []  # R: clust.bin.pair::nested.to.contingency(thyroids$x.pet, thyroids$x.spect): ak bk ck dk
    >>> for patient, counts in enumerate(thyroids):
    ...     for (pet, spect), count in zip([(1, 1), (1, 0), (0, 1), (0, 0)], counts):
    ...         a, b, g = a + [pet] * count, b + [spect] * count, g + [patient] * count
    >>> r = clustered_mcnemar_test(a, b, g, exact=False)  # R: clust.bin.pair(ak, bk, ck, dk, method = "yang")
    >>> round(r.statistic, 4), round(r.p_value, 4), r.discordant  # R: 3.13166 0.07679; Yang et al. (2010): 3.13
    (3.1317, 0.0768, (1, 7))
    """
    method = check_choice("method", method, _METHODS)
    exact = _check_flag("exact", exact, allow_none=True)
    alpha = check_probability("alpha", alpha)
    confidence = None if confidence is None else check_probability("confidence", confidence, open_interval=True)
    seed = check_seed("seed", seed)
    x = _binary("a", a)
    y = _binary("b", b)
    check_same_length("a", x, "b", y)
    groups = _cluster_codes(clusters, len(x), codes=codes)
    d = x - y
    n, g = len(d), groups.count
    discordant = (int(np.count_nonzero(d > 0)), int(np.count_nonzero(d < 0)))
    mean = float(d.mean()) if n else math.nan
    sums = np.round(groups.sums(d))
    nonzero = int(np.count_nonzero(sums))
    use_exact = nonzero < _EXACT_BELOW if exact is None else exact
    level = math.nan if confidence is None else 1 - confidence
    if g < 2 and not use_exact:
        _too_few_clusters("clustered_mcnemar_test", g)
        return ClusteredMcNemarResult(math.nan, math.nan, Interval(math.nan, math.nan), method, False, g, False, mean,
                                      n, discordant)
    sizes = groups.sizes.astype(float)
    chi_square = _ChiSquare(method, sums, sizes) if g >= 2 else _ChiSquare(method, np.zeros(2), np.ones(2))
    statistic = chi_square(0.0) if g >= 2 else math.nan

    from scipy import stats

    p = _Flips(g, seed).p_value(sums) if use_exact else float(stats.chi2.sf(statistic, 1)) if statistic > 0 else 1.0
    if confidence is None:  # the test alone
        return ClusteredMcNemarResult(statistic, p, Interval(math.nan, math.nan), method, use_exact, g,
                                      bool(p < alpha), mean, n, discordant)
    if use_exact:
        null = _LinearFlips(sums, sizes, seed)
        centre = mean

        def excess(delta: float) -> float:
            return level - null.p_value(delta)
    else:
        critical = float(stats.chi2.isf(level, 1))
        centre = chi_square.centre

        def excess(delta: float) -> float:
            return chi_square(delta) - critical

    low, high = _inverted(excess, p >= level, min(max(centre, -1.0), 1.0), -1.0, 1.0, tolerance=1e-12,
                          smooth=not use_exact)
    return ClusteredMcNemarResult(statistic, p, Interval(low, high), method, use_exact, g, bool(p < alpha), mean, n,
                                  discordant)

