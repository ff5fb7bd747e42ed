"""Intervals that invert their tests: R's values, and "excludes the null exactly when the test rejects"."""

from __future__ import annotations

import itertools
import math
from statistics import NormalDist

import numpy as np
import pytest

from cogeval.errors import InputError
from cogeval.stats import mcnemars_test, wilcoxon_test
from cogeval.stats.inversion import holm_levels, mcnemar_interval, paired_proportion_interval, wilcoxon_interval

# R ?wilcox.test (Hollander & Wolfe): x = depression scores before, y after
X = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
Y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]


def test_holm_levels_by_hand():
    # sorted p: 0.001 (step 1 of 4: 0.05/4 = 0.0125, rejected), 0.01 (0.05/3 = 0.01667, rejected),
    # 0.03 (0.05/2 = 0.025: not rejected, Holm stops), 0.04 keeps 0.025; NaN is no test
    levels = holm_levels([0.03, 0.001, float("nan"), 0.04, 0.01], 0.05)
    assert levels[[0, 1, 3, 4]].tolist() == pytest.approx([0.025, 0.0125, 0.025, 0.05 / 3])
    assert math.isnan(levels[2])


def test_mcnemar_interval_exact_is_clopper_pearson_scaled():
    # R: binom.test(3, 15)$conf.int = 0.04331200511 0.48089113381 (c = 3 of b + c = 15 discordant), n = 60
    low, high = mcnemar_interval(12, 3, 60)
    assert (low, high) == pytest.approx((0.25 * (2 * 0.04331200511 - 1), 0.25 * (2 * 0.48089113381 - 1)), abs=1e-10)


def test_mcnemar_interval_chi_square_is_continuity_corrected_wilson_scaled():
    # R: prop.test(30, 40, correct = TRUE)$conf.int = 0.5847957611 0.8675491449 (c = 30 of 40 discordant)
    low, high = mcnemar_interval(10, 30, 140)
    assert (low, high) == pytest.approx(((40 / 140) * (2 * 0.5847957611 - 1), (40 / 140) * (2 * 0.8675491449 - 1)),
                                        abs=1e-9)
    # R: prop.test(12, 40, correct = TRUE, conf.level = 0.99)$conf.int = 0.1443611560 0.5160324738
    low, high = mcnemar_interval(28, 12, 40, confidence=0.99)
    assert (low, high) == pytest.approx((2 * 0.1443611560 - 1, 2 * 0.5160324738 - 1), abs=1e-9)


@pytest.mark.parametrize("confidence", [0.95, 0.99, 0.975, 0.9875, 0.8])
def test_mcnemar_interval_excludes_zero_exactly_when_the_test_rejects(confidence):
    for b, c in itertools.product(range(41), range(41)):
        for exact in (True, False):
            low, high = mcnemar_interval(b, c, b + c + 5, confidence=confidence, exact=exact)
            rejects = mcnemars_test(b, c, exact=exact).p_value < 1 - confidence
            assert (low > 0 or high < 0) == rejects, (b, c, exact)


def test_wilcoxon_interval_matches_r():
    # R: wilcox.test(x, y, paired = TRUE, conf.int = TRUE)$conf.int = 0.010 0.786 (exact)
    assert tuple(wilcoxon_interval(X, Y)) == pytest.approx((0.010, 0.786), abs=1e-12)
    # R: wilcox.test(d, conf.int = TRUE) with a zero and ties (normal approximation):
    #   1.476547e-05 6.250257e-01 -- R's uniroot stops near the true ends 0 and 0.625 (Walsh averages)
    d = [0.5, 0.5, 0.25, -0.25, 0, 0.75, 0.5, 1, 0.25, 0.5, -0.5, 0.75]
    assert tuple(wilcoxon_interval(d, np.zeros(12))) == pytest.approx((1.476547e-05, 6.250257e-01), abs=3e-5)


def test_wilcoxon_interval_with_too_few_pairs_is_unbounded():
    # n = 3: the exact test cannot go below p = 0.25, so no shift is rejected at 95%
    assert tuple(wilcoxon_interval([1.0, 2.0, 3.0], [0.0, 0.0, 0.0])) == (-math.inf, math.inf)


@pytest.mark.parametrize("seed", range(20))
def test_wilcoxon_interval_excludes_zero_exactly_when_the_test_rejects_for_continuous_data(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 80))
    d = rng.normal(rng.normal(0, 0.5), 1, n)
    for confidence in (0.95, 0.99):
        low, high = wilcoxon_interval(d, np.zeros(n), confidence=confidence)
        assert (low > 0 or high < 0) == (wilcoxon_test(d, np.zeros(n)).p_value < 1 - confidence)


def test_wilcoxon_interval_of_a_long_skewed_sample_matches_r():
    # Beyond WALSH_LIMIT pairs the ends are found by bisection, from the Hodges–Lehmann centre (not the median,
    # which a skewed sample can put outside the interval). R 4.2:
    #   i <- 1:2500; u <- (i * 0.6180339887498949) %% 1; d <- -log(1 - u) - 0.5
    #   wilcox.test(d, conf.int = TRUE, tol.root = 1e-10)$conf.int  ->  0.3032446447 0.3755354502
    i = np.arange(1, 2501)
    d = -np.log(1 - (i * 0.6180339887498949) % 1) - 0.5
    assert tuple(wilcoxon_interval(d, np.zeros(2500))) == pytest.approx((0.3032446447, 0.3755354502), abs=1e-9)


def test_wilcoxon_interval_with_heavy_ties_inverts_the_test_exactly():
    # 101 distinct values: R's uniroot lands on the wrong step of the tied statistic (conf.int 0.7162 0.9042),
    # but R's own test accepts mu = 0.7013 (p = 0.05131797) and rejects mu = 0.895 (p = 0.03862787);
    # the interval is every shift the test accepts.
    i = np.arange(1, 1501)
    d = ((i * 37) % 101) ** 2 / 2000 - 0.8
    low, high = wilcoxon_interval(d, np.zeros(1500))
    assert low < 0.7013 < 0.8899 < high < 0.895
    for mu, accepted in ((low + 1e-9, True), (low - 1e-3, False), (high - 1e-9, True), (high + 1e-3, False)):
        assert (wilcoxon_test(d - mu, np.zeros(1500)).p_value >= 0.05) == accepted


def pairs(only_a, only_b, n):
    a = [1] * only_a + [0] * only_b + [0] * (n - only_a - only_b)
    b = [0] * only_a + [1] * only_b + [0] * (n - only_a - only_b)
    return a, b


@pytest.mark.parametrize(
    ("only_a", "only_b", "n", "confidence", "low", "high"),
    [  # R 4.2: uniroot on Tango's (1998) score statistic, written out independently (see the module docstring)
        (5, 2, 20, 0.95, -0.1225183134, 0.4048263897),
        (7, 3, 50, 0.90, -0.02658519412, 0.19183700331),
        (10, 0, 10, 0.95, 0.4449344003, 1.0),
    ],
)
def test_paired_proportion_interval_is_tangos_score_interval(only_a, only_b, n, confidence, low, high):
    interval = paired_proportion_interval(*pairs(only_a, only_b, n), confidence=confidence)
    assert tuple(interval) == pytest.approx((low, high), abs=1e-9)


def test_paired_proportion_interval_without_discordant_pairs_is_z_squared_over_n_plus_z_squared():
    # No discordant pair in n: Z(d) = -n·d / sqrt(n·d·(1 - d)), so |Z| <= z exactly for |d| <= z² / (n + z²)
    for n, confidence in ((5, 0.95), (100, 0.90), (2, 0.90)):
        z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
        bound = z**2 / (n + z**2)
        assert tuple(paired_proportion_interval([0] * n, [0] * n, confidence=confidence)) == pytest.approx(
            (-bound, bound), rel=1e-12)


def test_bad_input_names_the_argument():
    with pytest.raises(InputError, match=r"n must count every pair, at least b \+ c = 5 and at least 1; got 3"):
        mcnemar_interval(2, 3, 3)
    with pytest.raises(InputError, match=r"a must hold only 0 and 1; got 0\.5"):
        paired_proportion_interval([0.5], [1])
    with pytest.raises(InputError, match="confidence"):
        wilcoxon_interval([1.0, 2.0], [0.0, 0.0], confidence=1.0)
