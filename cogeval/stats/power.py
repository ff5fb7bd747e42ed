"""Power: how many cases an eval needs, and how small a difference a given eval can see.

- :func:`plan_sample_size` — cases needed to detect a paired mean difference
  ``effect`` with the paired t-test (continuous metric, statsmodels'
  ``TTestPower``) or McNemar's test (binary metric, Connor 1987).
- :func:`minimum_detectable_effect` — the smallest true mean difference that
  ``n`` paired cases detect with the given power (Miller 2024, normal
  approximation).

Both are two-sided at level ``alpha``; :func:`plan_sample_size` divides
``alpha`` by ``family_size`` (Bonferroni) when several metrics are compared.
statsmodels and ``scipy.stats`` are imported only when a continuous sample
size is planned.

>>> plan_sample_size(0.5, sd=1.0)  # R: power.t.test(delta = .5, power = .8, type = "paired", strict = TRUE): n = 33.37
34
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from numbers import Integral, Real
from statistics import NormalDist
from typing import Any

import numpy as np

from cogeval._check import check_positive_int, check_positive_number, check_probability, describe, is_real
from cogeval.errors import InputError

_NORMAL = NormalDist()


def _check_effect(effect: Any) -> float:
    if not isinstance(effect, Real) or isinstance(effect, bool) or not math.isfinite(effect):
        raise InputError(f"effect must be a finite number (the difference to detect, in metric units); got {describe(effect)}")
    if effect == 0:
        raise InputError("effect must not be 0: no number of cases detects a difference of 0")
    return abs(float(effect))


def _check_discordance(discordance: Any) -> float:
    if not is_real(discordance) or not 0 < discordance <= 1:
        raise InputError(
            "discordance must be a number in (0, 1], the probability that A and B disagree on a case; "
            f"got {describe(discordance)}"
        )
    return float(discordance)


def plan_sample_size(
    effect: float,
    *,
    sd: float | None = None,
    discordance: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    family_size: int = 1,
) -> int:
    """Paired cases needed to detect a mean difference ``effect`` with probability ``power``.

    ``effect`` is the absolute difference in metric units (its sign is
    ignored). The test is two-sided at level ``alpha / family_size``
    (Bonferroni over ``family_size`` compared metrics). Give exactly one of:

    - ``sd`` — continuous metric: the standard deviation of the paired
      differences. The answer is the paired t-test's sample size, statsmodels'
      ``ceil(TTestPower().solve_power(effect_size=|effect| / sd, alpha=level,
      power=power, alternative="two-sided"))``, as R's ``power.t.test(...,
      type = "paired", strict = TRUE)``. statsmodels' answer is checked (the
      power at ``n`` reaches ``power``, at ``n - 1`` it does not) and, when its
      root finder was misled (scipy's noncentral t returns NaN far in the lower
      tail), replaced by an integer search over the same power function.
    - ``discordance`` — binary metric (pass/fail): ``p_d``, the probability
      that a case is discordant (one side right, the other wrong), in (0, 1].
      Connor's (1987) formula for McNemar's test,
      ``n = ceil([z(1 - level/2)·√p_d + z(power)·√(p_d - δ²)]² / δ²)``,
      ``δ = |effect|``. As ``δ = p10 - p01`` and ``p_d = p10 + p01``,
      ``δ <= p_d`` is required.

    The answer is at least 2 for ``sd`` (the t-test needs two pairs).

    R: ``power.t.test(delta = 0.05, sd = 0.3, sig.level = 0.05/3, power = 0.8,
    type = "paired", strict = TRUE)`` gives n = 379.76; Connor's example on
    powerandsamplesize.com (McNemar 2-sided, p01 = 0.45, p10 = 0.05) gives 23:

    >>> plan_sample_size(0.05, sd=0.3, family_size=3)
    380
    >>> plan_sample_size(0.4, discordance=0.5)
    23
    """
    effect = _check_effect(effect)
    if (sd is None) == (discordance is None):
        given = "both" if sd is not None else "neither"
        raise InputError(
            "give exactly one of sd (continuous metric: the standard deviation of the paired differences) "
            f"or discordance (binary metric: the probability that a pair is discordant); got {given}"
        )
    alpha = check_probability("alpha", alpha, open_interval=True)
    power = check_probability("power", power, open_interval=True)
    family_size = check_positive_int("family_size", family_size)
    level = alpha / family_size
    if power <= level:
        raise InputError(
            f"power must be greater than the test's level alpha / family_size = {level:g}: a test rejects that "
            f"often with no difference at all (were alpha and power swapped?); got power={power:g}"
        )
    if discordance is not None:
        return _connor(effect, _check_discordance(discordance), level, power)
    sd = check_positive_number("sd", sd)
    return _paired_t(effect / sd, level, power)


def _connor(delta: float, discordance: float, level: float, power: float) -> int:
    """Connor (1987), Biometrics 43:207-211: the normal-approximation sample size of McNemar's test."""
    if delta > discordance * (1 + 1e-12):
        raise InputError(
            f"effect must not exceed discordance: a difference of {delta:g} in pass rates needs at least that "
            "share of discordant pairs (effect = p10 - p01, discordance = p10 + p01, so |effect| <= discordance); "
            f"got |effect|={delta:g} and discordance={discordance:g}"
        )
    delta = min(delta, discordance)  # forgive rounding: |effect| computed as b/n - c/n may pass (b + c)/n by an ulp
    z_level = _NORMAL.inv_cdf(1 - level / 2)
    z_power = _NORMAL.inv_cdf(power)
    n = (z_level * math.sqrt(discordance) + z_power * math.sqrt(discordance - delta**2)) ** 2 / delta**2
    return max(1, math.ceil(n))


def _paired_t(effect_size: float, level: float, power: float) -> int:
    """Smallest n (>= 2) at which the two-sided paired t-test at ``level`` has power >= ``power``."""
    from scipy import stats
    from statsmodels.stats.power import TTestPower
    from statsmodels.tools.sm_exceptions import ConvergenceWarning

    if math.isinf(effect_size):  # |effect| / sd overflowed: two pairs show it
        return 2

    def reaches(n: int) -> bool:
        # TTestPower.power, with the lower tail P(T < -q) written as P(T' > q) for the
        # noncentral t of noncentrality -nc: scipy's nct.cdf far in the lower tail can be NaN.
        df = float(n - 1)  # a float: n can exceed int64 for a tiny effect
        q = stats.t.isf(level / 2, df)
        nc = effect_size * math.sqrt(n)
        reached = float(stats.nct.sf(q, df, nc) + stats.nct.sf(q, df, -nc))
        if math.isnan(reached):  # numerical failure, never seen but not excluded: the normal limit
            reached = float(stats.norm.sf(q - nc) + stats.norm.cdf(-q - nc))
        return reached >= power

    # statsmodels' answer is checked below, so its convergence and overflow warnings are noise here.
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", ConvergenceWarning)
        solved = float(TTestPower().solve_power(effect_size=effect_size, alpha=level, power=power,
                                                alternative="two-sided"))
        start = max(2, math.ceil(solved)) if math.isfinite(solved) else _normal_start(effect_size, level, power)
        return _smallest(reaches, start)


def _normal_start(effect_size: float, level: float, power: float) -> int:
    """The z-test sample size, a lower bound of the t-test's: where a search starts when statsmodels fails."""
    z = _NORMAL.inv_cdf(1 - level / 2) + _NORMAL.inv_cdf(power)
    try:
        return max(2, math.ceil((z / effect_size) ** 2))
    except OverflowError:
        raise InputError(
            f"effect must be a larger share of sd: |effect| / sd = {effect_size:g} would need more than 1e308 cases"
        ) from None


def _smallest(reaches: Callable[[int], bool], start: int) -> int:
    """Smallest n >= 2 with ``reaches(n)``, for ``reaches`` monotone in n; ``start`` is a guess."""
    if reaches(start):
        if start == 2 or not reaches(start - 1):
            return start
        low, high = 1, start  # invariant: not reaches(low) (n = 1 never does), reaches(high)
    else:
        low, high = start, 2 * start
        while not reaches(high):
            low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        if reaches(middle):
            high = middle
        else:
            low = middle
    return high


def minimum_detectable_effect(sd: float, n: int, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest true mean difference ``n`` paired cases detect with probability ``power``.

    ``(z(1 - alpha/2) + z(power)) · sd / √n``, the minimum-detectable-effect
    formula of Miller (2024), "Adding Error Bars to Evals", for a two-sided
    test at level ``alpha`` with ``sd`` the standard deviation of the paired
    differences. A normal approximation: with few cases the t-test needs a
    little more (see :func:`plan_sample_size`). NaN when ``n < 2`` or ``sd``
    is NaN (no estimate of the spread); 0 when ``sd`` is 0. For a family of
    ``k`` compared metrics, pass ``alpha / k``.

    >>> round(minimum_detectable_effect(0.3, 100), 6)  # R: (qnorm(0.975) + qnorm(0.8)) * 0.3 / sqrt(100) -> 0.08404756
    0.084048
    """
    if not isinstance(sd, Real) or isinstance(sd, bool) or math.isinf(sd) or sd < 0:
        raise InputError(f"sd must be a finite number >= 0 or NaN; got {describe(sd)}")
    if not isinstance(n, Integral) or isinstance(n, bool) or n < 0:
        raise InputError(f"n must be an integer >= 0 (the number of paired cases); got {describe(n)}")
    alpha = check_probability("alpha", alpha, open_interval=True)
    power = check_probability("power", power, open_interval=True)
    if n < 2 or math.isnan(sd):
        return math.nan
    z = _NORMAL.inv_cdf(1 - alpha / 2) + _NORMAL.inv_cdf(power)
    return z * float(sd) / math.sqrt(n)
