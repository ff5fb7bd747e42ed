"""Cluster sign flips: the exact null distribution of a sum of cluster scores whose signs are fair coins.

Under "the differences are symmetric about 0, independently across clusters",
flipping every sign inside a cluster leaves the data as likely as before; a
statistic that is a sum of cluster scores ``v_k`` that flip with their
cluster's signs has the null distribution of ``T* = Σ ε_k v_k`` with
independent fair signs ``ε_k = ±1``. The rules of every exact clustered test
(:func:`~cogeval.stats.clustered_mcnemar_test`, :func:`~cogeval.stats.clustered_wilcoxon_test`):

- two-sided p = P(|T*| >= |T|), ties counted (inclusive tails); clusters with
  score 0 do not matter. When every cluster has one unit and scores ±1 this is
  R's ``binom.test(b, b + c)`` (a symmetric null: the two tails beyond ``|T|``).
- Exact by enumeration: clusters with the same ``|v_k|`` are pooled (``c``
  copies of ``±u`` sum to ``u·(2X − c)``, X binomial), then the pooled groups
  are enumerated whole (up to 2^12 patterns) or in two halves met in the
  middle, up to :data:`_EXACT_LIMIT` sign patterns (2^40); integer scores beyond that are
  convolved while the work stays under :data:`_CONVOLUTION_LIMIT`.
- Otherwise a seeded Monte Carlo: :data:`_DRAWS` sign vectors from
  ``numpy.random.default_rng(seed)``, p = (1 + #{|T*| >= |T|}) / (1 + draws).

>>> float(_exact_p_value(np.array([1.0] * 4 + [-1.0] * 10)))  # R: binom.test(4, 14)$p.value
0.1795654296875
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

_EXACT_LIMIT = 2.0**40
"""The most sign patterns (after pooling equal scores) the exact p-value enumerates, in two halves of 2^20."""

_WHOLE_LIMIT = 2.0**12
"""Up to this many sign patterns are enumerated in one piece; beyond, in two halves met in the middle (cheaper)."""

_CONVOLUTION_LIMIT = 4e7
"""The most array cells an exact convolution of integer scores may touch (about 0.05 s)."""

_INTERVAL_LIMIT = 2.0**24
"""The most sign patterns enumerated for each shift of an interval search (two halves of 2^12); beyond, Monte Carlo."""

_INTERVAL_CONVOLUTION = 1e6
"""The most array cells an exact convolution may touch for each shift of an interval search."""

_LINEAR_LIMIT = 2.0**18
"""The most pooled patterns of ``(s_k, m_k)`` enumerated for the interval of a clustered McNemar test."""

_DRAWS = 10_000
"""Monte Carlo sign vectors when no exact enumeration is feasible."""

_Floats = npt.NDArray[np.float64]


def _tolerance(values: _Floats) -> float:
    """Sums this close to ``|T|`` count as ties (rounding only: scores are rounded to 1e-9 of their total)."""
    return 1e-9 * max(1.0, float(np.abs(values).sum()))


def _pooled(values: _Floats) -> tuple[_Floats, npt.NDArray[np.int64]]:
    """The distinct nonzero ``|v|`` and how many clusters have each."""
    magnitudes = np.abs(values[values != 0])
    unique, counts = np.unique(magnitudes, return_counts=True)
    return unique, counts.astype(np.int64)


def _patterns(counts: npt.NDArray[np.int64]) -> float:
    """How many pooled sign patterns the groups have: Π (c + 1)."""
    return float(np.exp(np.sum(np.log1p(counts.astype(float))))) if len(counts) else 1.0


def _binomial_half(count: int) -> _Floats:
    """P(X = k) for X ~ Binomial(count, 1/2), k = 0..count: exact dyadic numbers up to 56 (so sums of them are
    exact), scipy's beyond."""
    if count <= 56:
        return np.array([math.comb(count, k) for k in range(count + 1)], dtype=float) * 2.0**-count
    from scipy import stats

    return np.asarray(stats.binom.pmf(np.arange(count + 1), count, 0.5), dtype=float)


def _enumerate(unique: _Floats, counts: npt.NDArray[np.int64]) -> tuple[_Floats, _Floats]:
    """Every pooled value of Σ ε_k v_k with its probability (loops over the pooled groups, at most ~40)."""
    sums = np.zeros(1)
    weights = np.ones(1)
    for u, c in zip(unique.tolist(), counts.tolist()):
        k = np.arange(c + 1)
        sums = (sums[:, None] + u * (2 * k - c)[None, :]).ravel()
        weights = (weights[:, None] * _binomial_half(c)[None, :]).ravel()
    return sums, weights


def _split(counts: npt.NDArray[np.int64]) -> int:
    """Where to cut the pooled groups so each half has about the same number of patterns."""
    logs = np.cumsum(np.log1p(counts.astype(float)))
    return int(np.searchsorted(logs, logs[-1] / 2)) + 1 if len(logs) else 0


def _tail_probability(unique: _Floats, counts: npt.NDArray[np.int64], threshold: float) -> float:
    """P(|Σ ε_k v_k| >= threshold) by enumerating two halves and meeting in the middle (threshold > 0)."""
    cut = _split(counts)
    left, left_w = _enumerate(unique[:cut], counts[:cut])
    right, right_w = _enumerate(unique[cut:], counts[cut:])
    order = np.argsort(right, kind="stable")
    right, right_w = right[order], right_w[order]
    below = np.concatenate([[0.0], np.cumsum(right_w)])  # below[i] = P(right < right[i]) for sorted right
    total = below[-1]
    # |x + y| >= threshold: y >= threshold - x, or y <= -threshold - x (disjoint since threshold > 0)
    upper = total - below[np.searchsorted(right, threshold - left, side="left")]
    lower = below[np.searchsorted(right, -threshold - left, side="right")]
    return float(np.dot(left_w, upper + lower))


def _convolved_p_value(values: _Floats, observed: float) -> float:
    """P(|T*| >= observed) for integer scores, by convolving the two-point laws of the clusters."""
    magnitudes = np.sort(np.abs(values[values != 0])).astype(np.int64)
    total = int(magnitudes.sum())
    pmf = np.zeros(2 * total + 1)
    pmf[total] = 1.0
    reach = 0
    for m in magnitudes.tolist():  # the support grows from the middle: cells total - reach .. total + reach
        old = pmf[total - reach:total + reach + 1] / 2
        low, high = total - reach - m, total + reach + m + 1
        pmf[low:high] = 0.0
        pmf[low:low + len(old)] += old
        pmf[low + 2 * m:high] += old
        reach += m
    support = np.arange(-total, total + 1)
    return float(pmf[np.abs(support) >= observed - 0.5].sum())


def _exact_p_value(values: _Floats, *, limit: float | None = None, convolution: float | None = None) -> float | None:
    """The exact two-sided sign-flip p-value P(|Σ ε_k v_k| >= |Σ v_k|), or None when it is not feasible.

    ``limit`` and ``convolution`` default to :data:`_EXACT_LIMIT` and :data:`_CONVOLUTION_LIMIT`.
    """
    limit = _EXACT_LIMIT if limit is None else limit
    convolution = _CONVOLUTION_LIMIT if convolution is None else convolution
    observed = abs(float(values.sum()))
    tolerance = _tolerance(values)
    if observed <= tolerance:
        return 1.0
    unique, counts = _pooled(values)
    patterns = _patterns(counts)
    if patterns <= limit:
        if patterns <= _WHOLE_LIMIT:
            sums, weights = _enumerate(unique, counts)
            return min(1.0, float(weights[np.abs(sums) >= observed - tolerance].sum()))
        return min(1.0, _tail_probability(unique, counts, observed - tolerance))
    nonzero = values[values != 0]
    integral = bool(np.all(nonzero == np.round(nonzero)))
    if integral and len(nonzero) * (2 * np.abs(nonzero).sum() + 1) <= convolution:
        return min(1.0, _convolved_p_value(values, round(observed)))
    return None


def _times(signs: npt.NDArray[np.int8], values: _Floats) -> _Floats:
    """``signs @ values`` in float64, a block of rows at a time (about 16 MB of signs as floats)."""
    rows = max(1, 2_000_000 // max(1, signs.shape[1]))
    return np.concatenate([signs[start:start + rows] @ values for start in range(0, len(signs), rows)])


class _MonteCarloSigns:
    """One fixed matrix of random cluster signs, drawn once from ``default_rng(seed)`` and reused for every shift."""

    def __init__(self, clusters: int, seed: int | np.random.Generator | None, draws: int = _DRAWS) -> None:
        rng = np.random.default_rng(seed)
        self.signs = 2 * rng.integers(0, 2, size=(draws, clusters), dtype=np.int8) - 1

    def p_value(self, values: _Floats) -> float:
        """(1 + #{|T*| >= |T|}) / (1 + draws) for the cluster scores ``values`` (all G of them, in code order)."""
        observed = abs(float(values.sum()))
        tolerance = _tolerance(values)
        if observed <= tolerance:
            return 1.0
        hits = int(np.count_nonzero(np.abs(_times(self.signs, values)) >= observed - tolerance))
        return (1 + hits) / (1 + len(self.signs))


class _Flips:
    """The sign-flip p-value of a sum of G cluster scores: exact when feasible, else one seeded Monte Carlo matrix.

    ``limit`` bounds the exact enumeration (pooled sign patterns) and
    ``convolution`` the work of an exact convolution; the interval searches pass
    :data:`_INTERVAL_LIMIT` and :data:`_INTERVAL_CONVOLUTION`, which keep each shift cheap.
    """

    def __init__(self, clusters: int, seed: int | np.random.Generator | None, *, limit: float | None = None,
                 convolution: float | None = None) -> None:
        self.clusters = clusters
        self.seed = seed
        self.limit = limit
        self.convolution = convolution
        self.monte_carlo = False
        self._signs: _MonteCarloSigns | None = None

    def p_value(self, values: _Floats) -> float:
        """The two-sided p-value of ``values`` (one score per cluster)."""
        exact = _exact_p_value(values, limit=self.limit, convolution=self.convolution)
        if exact is not None:
            return exact
        self.monte_carlo = True
        if self._signs is None:
            self._signs = _MonteCarloSigns(self.clusters, self.seed)
        return self._signs.p_value(values)


class _LinearFlips:
    """The sign-flip p-values of ``w_k(δ) = s_k − m_k·δ`` for every shift δ, from one enumeration or one draw.

    Clusters with the same ``(s_k, m_k)`` are pooled; the pooled patterns are
    enumerated when there are at most :data:`_LINEAR_LIMIT` of them
    (each shift then costs one pass over them), else :data:`_DRAWS` seeded
    Monte Carlo sign vectors of the G clusters are used for every δ. Each
    pattern gives ``T*(δ) = A − B·δ``; p(δ) = P(|A − B·δ| >= |Σ w_k(δ)|).
    """

    def __init__(self, s: _Floats, m: _Floats, seed: int | np.random.Generator | None) -> None:
        pairs, counts = np.unique(np.column_stack([s, m]), axis=0, return_counts=True)
        self.total = (float(s.sum()), float(m.sum()))
        self.scale = float(np.abs(s).sum() + m.sum())
        self.monte_carlo = _patterns(counts) > _LINEAR_LIMIT
        if not self.monte_carlo:
            a, b, weights = np.zeros(1), np.zeros(1), np.ones(1)
            for (sv, mv), c in zip(pairs.tolist(), counts.tolist()):
                k = 2 * np.arange(c + 1) - c
                a = (a[:, None] + sv * k[None, :]).ravel()
                b = (b[:, None] + mv * k[None, :]).ravel()
                weights = (weights[:, None] * _binomial_half(c)[None, :]).ravel()
            self.a, self.b, self.weights = a, b, weights
        else:
            signs = _MonteCarloSigns(len(s), seed).signs
            self.a, self.b = _times(signs, s), _times(signs, m)
            self.weights = np.full(_DRAWS, 1.0)

    def p_value(self, delta: float) -> float:
        """The two-sided p-value of the shifted cluster sums at ``delta``."""
        observed = abs(self.total[0] - self.total[1] * delta)
        tolerance = 1e-9 * max(1.0, self.scale * max(1.0, abs(delta)))
        if observed <= tolerance:
            return 1.0
        hits = float(self.weights[np.abs(self.a - self.b * delta) >= observed - tolerance].sum())
        return (1 + hits) / (1 + len(self.weights)) if self.monte_carlo else min(1.0, hits)


def _studentized(values: _Floats) -> float:
    """Σ v_k / √(Σ v_k²): the sum standardised by its sign-flip standard deviation (0 when every score is 0).

    >>> _studentized(np.array([3.0, -1.0, 2.0]))  # 4 / sqrt(14)
    1.0690449676496976
    """
    square = float(np.dot(values, values))
    return float(values.sum()) / math.sqrt(square) if square > 0 else 0.0
