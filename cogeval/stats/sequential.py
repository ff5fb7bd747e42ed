"""Anytime-valid confidence sequences for the mean of bounded values (Waudby-Smith & Ramdas 2023).

A confidence interval holds at one sample size fixed in advance; looking at it
after every batch and stopping when it excludes 0 inflates the error rate. A
confidence sequence holds at every sample size at once: with probability at
least ``1 - alpha`` the true mean lies in *every* interval of the sequence, so
it may be checked after each observation and the evaluation stopped whenever
the answer is clear.

The rules:

- the values are bounded, ``lower <= value <= upper`` (paired differences of
  two scores in [0, 1] lie in [-1, 1], the default), and independent with a
  common mean (more exactly: each has conditional mean ``mu`` given the ones
  before it); they are rescaled to [0, 1] inside;
- the sequence is the running intersection of the method's intervals, so it
  only narrows; should the intersection ever be empty (the data contradict
  every mean, probability at most ``alpha``), the last non-empty interval is kept;
- ``estimate`` is the running sample mean, moved to the nearest bound in the
  rare case the running intersection excludes it;
- several metrics: give each ``split_alpha(alpha, k)`` (Bonferroni), and the
  chance that *any* of the ``k`` sequences ever misses its mean stays at most ``alpha``.

>>> cs = confidence_sequence([0.5, 1.0, 0.0, 1.0, 0.5, 1.0] * 10)
>>> [round(limit, 3) for limit in cs.interval]
[0.458, 0.796]
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from cogeval._check import as_float_array, check_choice, check_positive_int, check_probability, describe, is_real
from cogeval.errors import InputError
from cogeval.stats.result import Interval, StatResult

_Array = npt.NDArray[np.float64]

_GRID = 1000
"""The betting sequence tests the candidate means 0, 1/1000, ..., 1 (in [0, 1] units), as confseq's default."""
_TRUNCATION = 0.5
"""c in the paper: bets are at most c (plug-in) or c/m, c/(1 - m) (hedged capital), confseq's default 1/2."""
_PLANNED_TRUNCATION = 0.75
"""c for ``method="planned"``: its bets are at most c/m and c/(1 - m), so every factor is at least 1 - c = 1/4.
Larger than 1/2 because a planned bet on data with a small spread (graded scores) is large; chosen on the benchmark
(benchmarks/bench_sequential.py: 1/2 and 9/10 were each worse on one of its two kinds of data)."""
_METHODS = ("betting", "eb", "planned")


@dataclasses.dataclass(frozen=True, eq=False)
class ConfidenceSequence(StatResult):
    """A confidence sequence after every observation. ``to_frame()`` has one row per observation
    with columns ``n``, ``estimate``, ``ci_low``, ``ci_high``; ``interval`` is the latest."""

    n: npt.NDArray[np.int64]
    """Observations so far: 1, 2, ..., len(values)."""
    estimate: _Array
    """The running sample mean (moved into [ci_low, ci_high] when the running intersection excludes it)."""
    ci_low: _Array
    """Lower bounds; they never decrease."""
    ci_high: _Array
    """Upper bounds; they never increase."""
    alpha: float
    """With probability at least 1 - alpha the mean lies in every interval at once."""
    method: str
    """``"betting"`` (hedged capital), ``"planned"`` (hedged capital with bets tuned to a planned difference)
    or ``"eb"`` (predictable plug-in empirical Bernstein)."""
    lower: float
    """The bound below every value (the interval before any observation is [lower, upper])."""
    upper: float
    """The bound above every value."""

    @property
    def interval(self) -> Interval:
        """The latest interval, ``Interval(lower, upper)`` before any observation."""
        if len(self.n) == 0:
            return Interval(self.lower, self.upper)
        return Interval(float(self.ci_low[-1]), float(self.ci_high[-1]))

    def to_dict(self) -> dict[str, Any]:
        """The latest row with ``alpha`` and ``method`` (the notebook view)."""
        low, high = self.interval
        estimate = float(self.estimate[-1]) if len(self.n) else math.nan
        return {"n": len(self.n), "estimate": estimate, "ci_low": low, "ci_high": high,
                "alpha": self.alpha, "method": self.method}

    def to_frame(self) -> pd.DataFrame:
        """One row per observation: ``n``, ``estimate``, ``ci_low``, ``ci_high``."""
        return pd.DataFrame({"n": self.n, "estimate": self.estimate, "ci_low": self.ci_low, "ci_high": self.ci_high})


def _check_bounds(lower: Any, upper: Any) -> tuple[float, float]:
    for name, value in (("lower", lower), ("upper", upper)):
        if not is_real(value) or not math.isfinite(value):
            raise InputError(f"{name} must be a finite number; got {describe(value)}")
    if not lower < upper:
        raise InputError(f"lower must be less than upper; got lower={lower!r} and upper={upper!r}")
    return float(lower), float(upper)


def _rescaled(values: Any, lower: float, upper: float) -> _Array:
    x = as_float_array("values", values)
    outside = np.flatnonzero((x < lower) | (x > upper))
    if len(outside):
        i = int(outside[0])
        raise InputError(f"values must lie in [lower, upper] = [{lower:g}, {upper:g}]; "
                         f"value {x[i]:g} at position {i} does not")
    rescaled: _Array = np.clip((x - lower) / (upper - lower), 0.0, 1.0)
    return rescaled


def _running(x: _Array) -> tuple[_Array, _Array]:
    """The paper's regularised running mean and variance of the values before each one, μ̂_{t-1} and σ̂²_{t-1}
    (eq. 15: μ̂_t = (1/2 + Σ X_i)/(t + 1), σ̂²_t = (1/4 + Σ (X_i - μ̂_i)²)/(t + 1), μ̂_0 = 1/2, σ̂²_0 = 1/4).
    Works along the last axis."""
    t = np.arange(1, x.shape[-1] + 1)
    mean = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)
    variance = (0.25 + np.cumsum((x - mean) ** 2, axis=-1)) / (t + 1)
    mean_before = np.concatenate([np.full((*x.shape[:-1], 1), 0.5), mean[..., :-1]], axis=-1)
    variance_before = np.concatenate([np.full((*x.shape[:-1], 1), 0.25), variance[..., :-1]], axis=-1)
    return mean_before, variance_before


def _plug_in(x: _Array, alpha: float) -> tuple[_Array, _Array]:
    """μ̂_{t-1} of :func:`_running` and the plug-in bet λ̇_t = sqrt(2 log(2/α) / (σ̂²_{t-1} t log(1 + t)))."""
    mean_before, variance_before = _running(x)
    t = np.arange(1, x.shape[-1] + 1)
    bet = np.sqrt(2 * math.log(2 / alpha) / (variance_before * t * np.log1p(t)))
    return mean_before, bet


def _eb_bounds(x: _Array, alpha: float) -> tuple[_Array, _Array]:
    """PrPl-EB (Theorem 2): Σλ_i X_i / Σλ_i ± (log(2/α) + Σ v_i ψ_E(λ_i)) / Σλ_i, clipped to [0, 1],
    with λ_t = min(λ̇_t, c), v_i = 4 (X_i - μ̂_{i-1})², ψ_E(λ) = (-log(1 - λ) - λ) / 4. Along the last axis."""
    mean_before, bet = _plug_in(x, alpha)
    bet = np.minimum(bet, _TRUNCATION)
    weight = np.cumsum(bet, axis=-1)
    centre = np.cumsum(bet * x, axis=-1) / weight
    penalty = (x - mean_before) ** 2 * (-np.log1p(-bet) - bet)  # v_i ψ_E(λ_i): the 4 and the 1/4 cancel
    margin = (math.log(2 / alpha) + np.cumsum(penalty, axis=-1)) / weight
    return np.maximum(centre - margin, 0.0), np.minimum(centre + margin, 1.0)


def _planned_bets(x: _Array, m: _Array, effect: float) -> tuple[_Array, _Array]:
    """The plan's bets λ⁺_t(m), λ⁻_t(m) before truncation, shape ``x.shape[:-1] + (len(m), n)``: the growth-optimal
    (Kelly) bet against a mean ``d`` away from ``m``, ``d / (σ̂²_{t-1} + d²)``, with ``d`` the planned ``effect``
    or the distance the running mean already shows when larger, ``d⁺ = max(effect, μ̂_{t-1} - m)``,
    ``d⁻ = max(effect, m - μ̂_{t-1})`` (μ̂, σ̂² of :func:`_running`: known before X_t, so the bets are predictable)."""
    mean_before, variance_before = _running(x)
    mean_before, variance_before = mean_before[..., None, :], variance_before[..., None, :]
    m = m[:, None]
    d_up = np.maximum(effect, mean_before - m)
    d_down = np.maximum(effect, m - mean_before)
    return d_up / (variance_before + d_up**2), d_down / (variance_before + d_down**2)


def _log_capital(x: _Array, m: _Array, alpha: float, effect: float | None = None) -> _Array:
    """log max(K⁺_t(m), K⁻_t(m)) of the hedged capital process (Theorem 3), shape ``x.shape[:-1] + (len(m), n)``.

    K⁺_t(m) = Π (1 + λ⁺_i(m)(X_i - m)), λ⁺_i(m) = min(λ̇_i, c/m); K⁻_t(m) = Π (1 - λ⁻_i(m)(X_i - m)),
    λ⁻_i(m) = min(λ̇_i, c/(1 - m)), with λ̇ the plug-in bet at level α/2 each side (θ = 1/2). The hedged
    capital max(K⁺/2, K⁻/2) reaches 1/α exactly when this reaches log(2/α). Every factor is at least 1 - c.
    With ``effect`` (the planned difference on the [0, 1] scale, ``method="planned"``) the bets before
    truncation are those of :func:`_planned_bets` instead of λ̇, and c = 3/4 (every factor at least 1/4).
    """
    m = m.astype(float)
    if effect is None:
        bet = _plug_in(x, alpha)[1][..., None, :]
        bet_up, bet_down, c = bet, bet, _TRUNCATION
    else:
        (bet_up, bet_down), c = _planned_bets(x, m, effect), _PLANNED_TRUNCATION
    m = m[:, None]
    with np.errstate(divide="ignore"):
        up = np.minimum(bet_up, c / m)
        down = np.minimum(bet_down, c / (1 - m))
    gap = x[..., None, :] - m
    capital: _Array = np.maximum(np.cumsum(np.log1p(up * gap), axis=-1), np.cumsum(np.log1p(-down * gap), axis=-1))
    return capital


def _betting_bounds(x: _Array, alpha: float, effect: float | None = None) -> tuple[_Array, _Array]:
    """The hedged-capital confidence sequence on the grid: the candidate means not rejected, widened by one step."""
    grid = np.linspace(0.0, 1.0, _GRID + 1)
    accepted = np.concatenate([_log_capital(x, grid[i : i + 64], alpha, effect) <= math.log(2 / alpha)
                               for i in range(0, len(grid), 64)])
    first = np.argmax(accepted, axis=0)
    last = len(grid) - 1 - np.argmax(accepted[::-1], axis=0)
    none = ~accepted.any(axis=0)  # every candidate rejected: [0, 1], as confseq (the intersection takes care of it)
    low = np.where(none, 0.0, np.maximum(grid[first] - 1 / _GRID, 0.0))
    high = np.where(none, 1.0, np.minimum(grid[last] + 1 / _GRID, 1.0))
    return low, high


def _intersected(low: _Array, high: _Array) -> tuple[_Array, _Array]:
    """Running intersection; from the first empty one on, the last non-empty interval is kept."""
    low, high = np.maximum.accumulate(low), np.minimum.accumulate(high)
    empty = np.flatnonzero(low > high)
    if len(empty):
        k = int(empty[0])  # k >= 1: a single interval is never empty
        low[k:], high[k:] = low[k - 1], high[k - 1]
    return low, high


def confidence_sequence(
    values: Any,
    *,
    alpha: float = 0.05,
    lower: float = -1.0,
    upper: float = 1.0,
    method: str = "betting",
    effect: float | None = None,
) -> ConfidenceSequence:
    """Anytime-valid ``1 - alpha`` confidence sequence for the mean of ``values``, after every observation.

    Waudby-Smith I, Ramdas A (2023), "Estimating means of bounded random
    variables by betting", JRSS-B 86(1):1-27, arXiv:2010.09686, for values in
    ``[lower, upper]`` rescaled to [0, 1]:

    - ``method="betting"`` (default; tighter on few values, about 0.6 times the
      ``"eb"`` width at 50, alike from about 1000 on): the hedged-capital sequence,
      their Theorem 3 with θ = 1/2 and c = 1/2: a candidate mean ``m`` is out
      once ``max(K⁺_t(m), K⁻_t(m)) / 2 > 1/alpha``, where ``K⁺`` bets that the
      mean is above ``m`` and ``K⁻`` that it is below, each with the plug-in
      bet ``min(sqrt(2 log(2/alpha) / (σ̂²_{t-1} t log(1 + t))), c/m)``
      (``c/(1 - m)`` for ``K⁻``). It is computed on the candidate means
      0, 0.001, ..., 1 of the [0, 1] scale, widened by one step each side,
      exactly as ``confseq.betting.hedged_cs(x, alpha, breaks=1000,
      running_intersection=True)``; its cost is about 1000 × len(values).
    - ``method="eb"``: the predictable plug-in empirical-Bernstein sequence
      (PrPl-EB), their Theorem 2 in closed form, ``Σλ_i X_i / Σλ_i ±
      (log(2/alpha) + Σ v_i ψ_E(λ_i)) / Σλ_i``, ``λ_t = min(sqrt(2 log(2/alpha)
      / (σ̂²_{t-1} t log(1 + t))), 1/2)``, ``v_i = 4 (X_i - μ̂_{i-1})²``,
      ``ψ_E(λ) = (-log(1 - λ) - λ) / 4``, μ̂ and σ̂² the regularised running
      mean and variance of their eq. 15. Wider, but cheap: linear in len(values).

    - ``method="planned"``: the hedged-capital sequence above with bets tuned
      to a planned difference ``effect`` (in the units of the values, > 0;
      required by this method and only by it). Instead of λ̇ it bets the
      growth-optimal (Kelly) fraction against a mean ``d`` away from ``m``,
      ``d / (σ̂²_{t-1} + d²)`` (the aGRAPA bet of their Section 5,
      ``(μ̂ - m) / (σ̂² + (μ̂ - m)²)``, with the distance from the data
      replaced by at least the plan): ``d = max(effect, μ̂_{t-1} - m)`` for
      ``K⁺``, ``max(effect, m - μ̂_{t-1})`` for ``K⁻``, truncated at ``c/m``
      and ``c/(1 - m)`` with c = 3/4. Every bet is known before the value it
      is placed on, so the capital is still a test martingale under ``m``
      and Ville's inequality keeps the sequence valid whatever ``effect`` is;
      the plan only decides where it is fast: it decides sooner than
      ``"betting"`` when the true difference is near ``effect`` (about 1.2
      against 1.5 times the fixed-n plan at the margin, see
      docs/sequential.md), a little slower when it is far larger.

    For a sequential comparison, call it with all the values so far after each
    batch: the earlier rows never change, and the latest ``interval`` may be
    acted on (stop once it excludes 0) at any time. No values give an empty
    sequence whose ``interval`` is ``(lower, upper)``.

    >>> cs = confidence_sequence([1.0] * 30, method="eb")
    >>> [round(float(low), 3) for low in cs.ci_low[[9, 29]]]  # after 10 and 30 values: it only narrows
    [-0.505, 0.498]
    """
    alpha = check_probability("alpha", alpha, open_interval=True)
    lower, upper = _check_bounds(lower, upper)
    method = check_choice("method", method, _METHODS)
    planned = _check_effect(effect, method, upper - lower)
    x = _rescaled(values, lower, upper)
    n = np.arange(1, len(x) + 1)
    if len(x) == 0:
        low = high = estimate = np.empty(0)
    else:
        low, high = _intersected(*(_eb_bounds(x, alpha) if method == "eb" else _betting_bounds(x, alpha, planned)))
        estimate = np.clip(np.cumsum(x) / n, low, high)
    scale = upper - lower
    return ConfidenceSequence(n, lower + scale * estimate, lower + scale * low, lower + scale * high,
                              alpha, method, lower, upper)


def _check_effect(effect: Any, method: str, scale: float) -> float | None:
    """The planned difference on the [0, 1] scale for ``method="planned"``, None for the other methods."""
    if method != "planned":
        if effect is not None:
            raise InputError(f"effect is the planned difference of method='planned'; method={method!r} takes none, "
                             f"got effect={effect!r}")
        return None
    if not is_real(effect) or not math.isfinite(effect) or not 0 < effect < scale:
        raise InputError("method='planned' needs effect, the planned difference in the units of the values, "
                         f"a number in (0, upper - lower) = (0, {scale:g}); got {describe(effect)}")
    return float(effect) / scale


def split_alpha(alpha: float, k: int) -> float:
    """The level for each of ``k`` confidence sequences watched together: ``alpha / k`` (Bonferroni).

    If each sequence misses its mean with probability at most ``alpha / k``,
    the chance that any of them ever misses is at most ``alpha`` (the union
    bound), at every time at once, whatever the dependence between the
    metrics. So a comparison may stop on whichever metric is decided first.

    >>> split_alpha(0.05, 4)
    0.0125
    """
    alpha = check_probability("alpha", alpha, open_interval=True)
    return alpha / check_positive_int("k", k)


def confidence_sequence_halfwidth(n: int, *, sd: float, alpha: float = 0.05, lower: float = -1.0,
                                  upper: float = 1.0) -> float:
    """Planning: about how narrow the ``method="eb"`` sequence is after ``n`` values whose standard deviation is ``sd``.

    The PrPl-EB half-width (see :func:`confidence_sequence`) with the running
    variance ``σ̂²_{t-1}`` and each ``(X_i - μ̂_{i-1})²`` replaced by ``sd²``
    (both in [0, 1] units, ``sd / (upper - lower)``):
    ``(log(2/alpha) + σ² Σ (-log(1 - λ_i) - λ_i)) / Σ λ_i``,
    ``λ_i = min(sqrt(2 log(2/alpha) / (σ² i log(1 + i))), 1/2)``, in the units
    of the values. A true mean difference larger than this is likely to be
    confirmed by ``n`` cases; the default ``"betting"`` sequence is usually
    narrower, so this is a cautious plan. For ``k`` metrics pass
    ``alpha=split_alpha(alpha, k)``.

    >>> round(confidence_sequence_halfwidth(1000, sd=0.5), 3)
    0.056
    """
    n = check_positive_int("n", n)
    alpha = check_probability("alpha", alpha, open_interval=True)
    lower, upper = _check_bounds(lower, upper)
    if not is_real(sd) or not math.isfinite(sd) or sd < 0:
        raise InputError(f"sd must be a finite number >= 0 (the standard deviation of the values); got {describe(sd)}")
    variance = (sd / (upper - lower)) ** 2
    i = np.arange(1, n + 1)
    with np.errstate(divide="ignore"):
        bet = np.minimum(np.sqrt(2 * math.log(2 / alpha) / (variance * i * np.log1p(i))), _TRUNCATION)
    half = (math.log(2 / alpha) + variance * np.sum(-np.log1p(-bet) - bet)) / np.sum(bet)
    return float(half * (upper - lower))
