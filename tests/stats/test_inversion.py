"""Intervals that invert their tests: R's values, and "excludes the null exactly when the test rejects"."""

from __future__ import annotations

import itertools
import math

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


def test_wilcoxon_interval_long_samples_use_bisection_and_agree_with_walsh():
    rng = np.random.default_rng(4)
    d = rng.normal(0.3, 1, 2500)
    low, high = wilcoxon_interval(d, np.zeros(2500))
    # the normal approximation of the Hodges–Lehmann interval: mean shift 0.3, se about 1.25/sqrt(2500)·... wide
    assert 0.15 < low < 0.3 < high < 0.45 and high - low == pytest.approx(2 * 1.96 * 1.02 / 50, rel=0.15)


def test_paired_proportion_interval_matches_newcombes_formula_in_r():
    # R, Newcombe (1998) method 10 from R's Wilson limits:
    #   w1 <- prop.test(17, 20, correct = FALSE)$conf.int; w2 <- prop.test(14, 20, correct = FALSE)$conf.int
    #   phi <- (12 * 1 - 5 * 2) / sqrt(17 * 3 * 14 * 6); combined as in the paper -> -0.1072281363 0.3870114810
    a = [1] * 12 + [1] * 5 + [0] * 2 + [0] * 1
    b = [1] * 12 + [0] * 5 + [1] * 2 + [0] * 1
    assert tuple(paired_proportion_interval(a, b)) == pytest.approx((-0.1072281363, 0.3870114810), abs=1e-9)
    # 5 pairs that all agree (phi = 0: an empty margin): -0.4344824648 0.4344824648
    assert tuple(paired_proportion_interval([0] * 5, [0] * 5)) == pytest.approx((-0.4344824648, 0.4344824648),
                                                                               abs=1e-9)


def test_bad_input_names_the_argument():
    with pytest.raises(InputError, match=r"n must count every pair, at least b \+ c = 5 and at least 1; got 3"):
        mcnemar_interval(2, 3, 3)
    with pytest.raises(InputError, match="a must hold only 0 and 1; got 0.5"):
        paired_proportion_interval([0.5], [1])
    with pytest.raises(InputError, match="confidence"):
        wilcoxon_interval([1.0, 2.0], [0.0, 0.0], confidence=1.0)
