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

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from numbers import Real
from typing import Any

import numpy as np

from cogeval._check import describe
from cogeval.compare.paired import PairedSample, constant_shift, is_binary
from cogeval.compare.result import RunVerdict, Side, Verdict
from cogeval.errors import InputError
from cogeval.stats import Interval, clustered_mcnemar_test, clustered_t_test
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


def equivalent(sample: PairedSample, margin: float, alpha: float) -> bool:
    """The paired mean difference is shown within ``(-margin, margin)`` at level ``alpha`` (TOST): the
    ``1 - 2·alpha`` interval lies inside the margin. 0/1 values: Tango's score interval; other values: the
    t-interval. Clustered: the interval of the clustered McNemar or t-test. Every difference the same: the two
    one-sided sign tests."""
    if margin <= 0 or sample.n < 2:
        return False
    b, h, d = sample.base, sample.head, sample.d
    shift = None if is_binary(b, h) else constant_shift(sample)
    if shift is not None:  # both one-sided sign tests see every unit (cluster) agree: p = 2^-G each
        return bool(abs(shift) < margin and math.ldexp(1.0, -sample.groups) < alpha)
    confidence = 1 - 2 * alpha
    if sample.clustered:
        test = clustered_mcnemar_test(h, b, sample.clusters, codes=True, confidence=confidence) if is_binary(b, h) else \
            clustered_t_test(d, np.zeros(sample.n), sample.clusters, codes=True, confidence=confidence)
        low, high = test.ci
        return bool(-margin < low and high < margin)
    if is_binary(b, h):
        low, high = paired_proportion_interval(h, b, confidence=confidence)
        return bool(-margin < low and high < margin)
    return bool(equivalence_test(d, np.zeros(len(d)), margin, alpha=alpha).equivalent)


@dataclasses.dataclass(frozen=True)
class Power:
    """What a comparison of one metric could detect, and what it would need (NaN / None when undefined)."""

    mde: float
    """The smallest true difference detected with power 0.8 at the metric's level."""
    n_needed: int | None
    """Cases needed to detect the margin (or the observed difference without one)."""
    clusters_needed: int | None = None
    """For clustered cases: the clusters of the mean size seen that hold ``n_needed`` cases."""


def power(sample: PairedSample, difference: float, level: float, margin: float,
          alpha: float, family_size: int) -> Power:
    """The :class:`Power` of one metric. Clustered cases inflate the variance by the sample's design effect
    (clustered over unclustered variance, at least 1 here): ``mde`` by its square root, ``n_needed`` by itself."""
    n = sample.n
    if n < 2 or math.isnan(level):
        return Power(math.nan, None)
    b, h, d = sample.base, sample.head, sample.d
    sd = float(d.std(ddof=1))
    inflation = max(1.0, sample.design_effect) if sample.clustered and not math.isnan(sample.design_effect) else 1.0
    mde = minimum_detectable_effect(sd * math.sqrt(inflation), n, alpha=level, power=_POWER) if sd > 0 else math.nan
    effect = margin if margin > 0 else abs(difference)
    binary = is_binary(b, h)
    if effect == 0 or (sd == 0 and not binary):
        return Power(mde, None)
    try:
        if binary:
            needed = plan_sample_size(effect, discordance=float(np.count_nonzero(d)) / n, alpha=alpha,
                                      power=_POWER, family_size=family_size)
        else:
            needed = plan_sample_size(effect, sd=sd, alpha=alpha, power=_POWER, family_size=family_size)
    except InputError:  # an effect larger than the discordance can allow
        return Power(mde, None)
    if not sample.clustered:
        return Power(mde, needed)
    needed = math.ceil(needed * inflation)
    return Power(mde, needed, math.ceil(needed / (n / sample.groups)))


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
