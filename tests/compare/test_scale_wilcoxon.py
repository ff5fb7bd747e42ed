"""Wilcoxon's Hodges–Lehmann interval beyond WALSH_LIMIT pairs: the presorted signed-rank test gives the
p-values of ``wilcoxon_test`` itself, and the bisection finds the interval the Walsh averages give."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cogeval.stats import inversion, wilcoxon_test
from cogeval.stats.inversion import wilcoxon_interval


def differences(n: int, seed: int) -> np.ndarray:
    """Differences in steps of 1/8 (many ties and zeros), plus a continuous part."""
    rng = np.random.default_rng(seed)
    d = np.round(rng.normal(0.1, 1.0, n) * 8) / 8
    d[: n // 3] = rng.normal(0.1, 1.0, n // 3)
    return d


@pytest.mark.parametrize("correction", [True, False])
def test_presorted_p_values_are_wilcoxon_tests(correction):
    d = differences(3001, 0)
    ordered = np.sort(d)
    shifts = [*d[:40], *(d[:40] + 1 / 16), -0.5, 0.0, 0.125, 0.3, 10.0, -10.0]
    assert inversion._signed_ranks(np.full(5, 0.5), 0.5)[:2] == (0.0, 0)  # no pair left: p = 1, as wilcoxon_test
    for mu in shifts:
        expected = wilcoxon_test(d - mu, np.zeros_like(d), exact=False, correction=correction).p_value
        got = inversion._normal_p_value(*inversion._signed_ranks(ordered, float(mu)), correction)
        assert got == expected, mu


def test_bisection_finds_the_walsh_interval(monkeypatch):
    d = differences(2500, 1)
    fast = wilcoxon_interval(d, np.zeros_like(d))
    monkeypatch.setattr(inversion, "WALSH_LIMIT", 10_000)
    walsh = wilcoxon_interval(d, np.zeros_like(d))  # ends among the Walsh averages, as R's conf.int
    assert fast.low == pytest.approx(walsh.low, abs=1e-9) and fast.high == pytest.approx(walsh.high, abs=1e-9)
    assert not math.isinf(fast.low) and fast.low < fast.high
