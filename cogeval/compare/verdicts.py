"""Verdicts: roles, margins, the verdict of a metric and of a run, equivalence and power.

A metric is ``better`` or ``worse`` when its interval lies beyond its margin
(0 when none is set), ``equivalent`` when a TOST shows it within the margin,
else ``inconclusive``; a run is ``mixed`` when some deciding metrics are
better and some worse. See ``docs/comparing.md``.

>>> verdict(Interval(0.02, 0.09), True, 0.01, False), verdict(Interval(0.02, 0.09), True, 0.05, False)
('better', 'inconclusive')
>>> overall(["better", "inconclusive"]), overall(["better", "worse"]), overall([])
('better', 'mixed', 'inconclusive')
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from numbers import Real
from typing import Any

import numpy as np

from cogeval._check import describe
from cogeval.compare.paired import is_binary, noise_floor
from cogeval.compare.result import RunVerdict, Side, Verdict
from cogeval.errors import InputError
from cogeval.stats import Interval
from cogeval.stats.equivalence import equivalence_test
from cogeval.stats.inversion import paired_proportion_interval
from cogeval.stats.power import minimum_detectable_effect, plan_sample_size

ROLES = ("decides", "informs")
"""A compared metric either decides the verdict (and its Holm family) or informs (its own Holm family)."""

VERDICTS = ("better", "worse", "equivalent", "inconclusive")
"""A metric's verdict; a run's verdict may also be ``mixed`` (some deciding metrics better, some worse)."""

_POWER = 0.8
"""The power behind ``mde`` and ``n_needed``."""


def verdict(interval: Interval, higher_is_better: bool, margin: float, equivalent: bool) -> Verdict:
    """``better``/``worse`` when the interval lies beyond the margin on one side, else ``equivalent`` or ``inconclusive``."""
    low, high = interval if higher_is_better else (-interval.high, -interval.low)
    if low > margin:
        return "better"
    if high < -margin:
        return "worse"
    return "equivalent" if equivalent else "inconclusive"


def equivalent(b: np.ndarray, h: np.ndarray, margin: float, alpha: float) -> bool:
    """The paired mean difference is shown within ``(-margin, margin)`` at level ``alpha`` (TOST)."""
    if margin <= 0 or len(b) < 2:
        return False
    if is_binary(b, h):
        low, high = paired_proportion_interval(h, b, confidence=1 - 2 * alpha)
        return bool(-margin < low and high < margin)
    d = noise_floor(h - b)
    return bool(equivalence_test(d, np.zeros(len(d)), margin, alpha=alpha).equivalent)


def power(b: np.ndarray, h: np.ndarray, difference: float, level: float, margin: float,
           alpha: float, family_size: int) -> tuple[float, int | None]:
    """(mde, n_needed) of one metric; NaN / None when undefined."""
    n = len(b)
    if n < 2 or math.isnan(level):
        return math.nan, None
    d = noise_floor(h - b)
    sd = float(d.std(ddof=1))
    mde = minimum_detectable_effect(sd, n, alpha=level, power=_POWER) if sd > 0 else math.nan
    effect = margin if margin > 0 else abs(difference)
    binary = is_binary(b, h)
    if effect == 0 or (sd == 0 and not binary):
        return mde, None
    try:
        if binary:
            needed = plan_sample_size(effect, discordance=float(np.count_nonzero(d)) / n, alpha=alpha,
                                      power=_POWER, family_size=family_size)
        else:
            needed = plan_sample_size(effect, sd=sd, alpha=alpha, power=_POWER, family_size=family_size)
    except InputError:  # an effect larger than the discordance can allow
        return mde, None
    return mde, needed


def check_decide_on(decide_on: Any, names: Sequence[str], default: list[str]) -> list[str]:
    if decide_on is None:
        return default
    if isinstance(decide_on, str) or not isinstance(decide_on, Iterable):
        raise InputError(f"decide_on must be None or a list of metric names; got {describe(decide_on)}")
    chosen = list(dict.fromkeys(decide_on))
    for m in chosen:
        if m not in names:
            raise InputError(f"decide_on names {describe(m)}, which is not compared; "
                             f"the compared metrics are: {', '.join(names) or 'none'}")
    return chosen


def check_margins(margins: Any, names: Sequence[str]) -> dict[str, float]:
    if margins is None:
        return {}
    if not isinstance(margins, Mapping):
        raise InputError(f"margins must map metric names to the smallest difference that matters; got {describe(margins)}")
    out = {}
    for m, value in margins.items():
        if m not in names:
            raise InputError(f"margins names {describe(m)}, which is not compared; "
                             f"the compared metrics are: {', '.join(names) or 'none'}")
        if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value) or value < 0:
            raise InputError(f"margins[{m!r}] must be a finite number >= 0 in the metric's units; got {describe(value)}")
        out[m] = float(value)
    return out


def overall(verdicts: Sequence[str]) -> RunVerdict:
    """The run's verdict from its deciding metrics' verdicts."""
    better, worse = "better" in verdicts, "worse" in verdicts
    if better and worse:
        return "mixed"
    if worse:
        return "worse"
    if better:
        return "better"
    if verdicts and all(v == "equivalent" for v in verdicts):
        return "equivalent"
    return "inconclusive"


def winner(significant: bool, interval: Interval, higher_is_better: bool) -> Side:
    if not significant:
        return "tie"
    return "head" if (interval.low > 0) == higher_is_better else "base"
