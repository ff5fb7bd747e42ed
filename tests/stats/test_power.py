"""plan_sample_size and minimum_detectable_effect; each reference number names its R call, paper or independent computation."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
from statistics import NormalDist

import numpy as np
import pytest

from cogeval.errors import InputError
from cogeval.stats import minimum_detectable_effect, plan_sample_size

Z = NormalDist().inv_cdf

# --- plan_sample_size, continuous (paired t-test) -------------------------------------------


@pytest.mark.parametrize(
    ("effect", "kwargs", "expected"),
    [
        # R: power.t.test(delta = 0.5, sd = 1, sig.level = 0.05, power = 0.8, type = "paired", strict = TRUE)
        #    -> n = 33.36712895
        (0.5, {"sd": 1.0}, 34),
        # R: power.t.test(delta = 0.05, sd = 0.3, sig.level = 0.05, power = 0.8, type = "paired", strict = TRUE)
        #    -> n = 284.4856825
        (0.05, {"sd": 0.3}, 285),
        # R: power.t.test(delta = 0.05, sd = 0.3, sig.level = 0.05/3, power = 0.8, type = "paired", strict = TRUE)
        #    -> n = 379.7584069
        (0.05, {"sd": 0.3, "family_size": 3}, 380),
        # R: power.t.test(delta = 0.1, sd = 1, sig.level = 0.05, power = 0.8, type = "paired", strict = TRUE)
        #    -> n = 786.8089403
        (0.1, {"sd": 1.0}, 787),
        # R: power.t.test(delta = 2, sd = 1, sig.level = 0.05, power = 0.9, type = "paired", strict = TRUE)
        #    -> n = 4.912417179
        (2.0, {"sd": 1.0, "power": 0.9}, 5),
        # R: power.t.test(delta = 0.001, sd = 1, power = 0.8, type = "paired", strict = TRUE, tol = 1e-12)
        #    -> n = 7848862.43006
        (0.001, {"sd": 1.0}, 7848863),
    ],
)
def test_continuous_matches_r_power_t_test(effect, kwargs, expected):
    n = plan_sample_size(effect, **kwargs)
    assert n == expected
    assert type(n) is int


@pytest.mark.parametrize(
    ("effect", "kwargs", "expected"),
    [
        # R: power.t.test(delta = 0.3, sd = 1, sig.level = 0.001, power = 0.999, type = "paired", strict = TRUE)
        #    -> n = 457.8058091. statsmodels 0.15 with scipy 1.17 solves to 387.5: scipy's nct.cdf is NaN
        #    in the far lower tail there (scipy gh-25470), which misleads its root finder.
        (0.3, {"sd": 1.0, "alpha": 0.001, "power": 0.999}, 458),
        # R: power.t.test(delta = 10, sd = 1, sig.level = 0.05, power = 0.8, type = "paired", strict = TRUE)
        #    -> n = 2.059393714. statsmodels returns its lower bound 2.0 (power at n = 2 is 0.733).
        (10.0, {"sd": 1.0}, 3),
        # R: power.t.test(delta = 1.5, sd = 1, sig.level = 0.001, power = 0.95, type = "paired", strict = TRUE)
        #    -> n = 16.22618154; R: power.t.test(n = 16, ...)$power = 0.9446632. statsmodels: 15.81.
        (1.5, {"sd": 1.0, "alpha": 0.01, "power": 0.95, "family_size": 10}, 17),
    ],
)
def test_continuous_matches_r_where_statsmodels_root_finder_is_misled(effect, kwargs, expected):
    assert plan_sample_size(effect, **kwargs) == expected


GRID = list(itertools.product([0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.0], [0.01, 0.05, 0.1], [0.8, 0.9], [1, 3]))


@pytest.mark.parametrize(("effect_size", "alpha", "power", "family_size"), GRID)
def test_continuous_equals_statsmodels_ttestpower(effect_size, alpha, power, family_size):
    # independent: statsmodels.stats.power.TTestPower().solve_power, called here with the Bonferroni level
    from statsmodels.stats.power import TTestPower

    sd = 0.25
    solved = TTestPower().solve_power(
        effect_size=effect_size, alpha=alpha / family_size, power=power, alternative="two-sided"
    )
    expected = math.ceil(solved)
    assert plan_sample_size(effect_size * sd, sd=sd, alpha=alpha, power=power, family_size=family_size) == expected


def test_continuous_answer_is_the_smallest_n_reaching_the_power():
    # independent check with statsmodels' own power function: reached at n, not at n - 1
    from statsmodels.stats.power import TTestPower

    for effect_size in (0.2, 0.5, 0.9):
        n = plan_sample_size(effect_size, sd=1.0)
        assert TTestPower().power(effect_size, n, 0.05) >= 0.8 > TTestPower().power(effect_size, n - 1, 0.05)


def test_continuous_sign_scale_and_family_size():
    assert plan_sample_size(-0.05, sd=0.3) == plan_sample_size(0.05, sd=0.3) == 285
    assert plan_sample_size(5.0, sd=30.0) == 285  # only |effect| / sd matters
    sizes = [plan_sample_size(0.05, sd=0.3, family_size=k) for k in (1, 2, 3, 5, 10)]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]
    # family_size = k is exactly alpha / k
    assert plan_sample_size(0.05, sd=0.3, family_size=4) == plan_sample_size(0.05, sd=0.3, alpha=0.0125)


def test_continuous_huge_effect_needs_two_pairs():
    assert plan_sample_size(1e300, sd=1.0) == 2
    assert plan_sample_size(1e300, sd=1e-300) == 2  # |effect| / sd overflows to inf


# --- plan_sample_size, binary (McNemar, Connor 1987) ----------------------------------------


def test_binary_connor_worked_example():
    # Connor RJ (1987) "Sample size for testing differences in proportions for the paired-sample
    # design", Biometrics 43:207-211:  n = [z(1 - a/2)·sqrt(p_d) + z(power)·sqrt(p_d - d^2)]^2 / d^2
    # p_d = 0.2, d = 0.1, alpha = 0.05, power = 0.8, by hand:
    #   z(0.975) = 1.959964, z(0.8) = 0.841621, sqrt(0.2) = 0.447214, sqrt(0.2 - 0.01) = sqrt(0.19) = 0.435890
    #   1.959964 · 0.447214 = 0.876523;  0.841621 · 0.435890 = 0.366854;  sum = 1.243378
    #   1.243378^2 = 1.545989;  / 0.01 = 154.60  ->  rounded up, 155 cases
    # (R: ((qnorm(0.975) * sqrt(0.2) + qnorm(0.8) * sqrt(0.19)) / 0.1)^2 -> 154.5985696)
    assert plan_sample_size(0.1, discordance=0.2) == 155
    by_hand = (Z(0.975) * math.sqrt(0.2) + Z(0.8) * math.sqrt(0.19)) ** 2 / 0.01
    assert by_hand == pytest.approx(154.5985696, abs=5e-7)


@pytest.mark.parametrize(
    ("effect", "kwargs", "expected"),
    [
        # powerandsamplesize.com, "Compare Paired Proportions: McNemar's Z-test, 2-Sided Equality"
        # (citing Connor 1987, p. 209): p01 = 0.45, p10 = 0.05, alpha = 0.05, beta = 0.20 -> ceiling(n) = 23
        # i.e. p_d = 0.5, d = 0.4; R: ((qnorm(0.975) * sqrt(0.5) + qnorm(0.8) * sqrt(0.34)) / 0.4)^2 -> 22.01132443
        (-0.4, {"discordance": 0.5}, 23),
        # R: ((qnorm(1 - 0.0125/2) * sqrt(0.2) + qnorm(0.8) * sqrt(0.19)) / 0.1)^2 -> 220.1846543 (family of 4)
        (0.1, {"discordance": 0.2, "family_size": 4}, 221),
        # R: ((qnorm(0.975) * sqrt(0.1) + qnorm(0.9) * sqrt(0.0975)) / 0.05)^2 -> 416.1268551
        (0.05, {"discordance": 0.1, "power": 0.9}, 417),
        # every pair discordant, all one way: R: (qnorm(0.975) * sqrt(1) / 1)^2 -> 3.841458821
        (1.0, {"discordance": 1.0}, 4),
    ],
)
def test_binary_matches_connor_formula(effect, kwargs, expected):
    assert plan_sample_size(effect, **kwargs) == expected


def test_binary_effect_above_discordance_by_rounding_only_is_allowed():
    # 3 of 7 pairs discordant, all one way: |effect| and discordance are both 3/7, computed two ways
    assert plan_sample_size(3 / 7 * (1 + 1e-15), discordance=3 / 7) == plan_sample_size(3 / 7, discordance=3 / 7)


def test_binary_effect_equal_to_discordance_is_allowed():
    # all discordant pairs go one way (p01 = 0): d = p_d = 0.3; sqrt(p_d - d^2) = sqrt(0.21)
    # R: ((qnorm(0.975) * sqrt(0.3) + qnorm(0.8) * sqrt(0.21)) / 0.3)^2 -> 23.65835939
    expected = math.ceil((Z(0.975) * math.sqrt(0.3) + Z(0.8) * math.sqrt(0.21)) ** 2 / 0.09)
    assert plan_sample_size(0.3, discordance=0.3) == expected == 24


# --- plan_sample_size, bad input ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((0.1,), {}, "give exactly one of sd (continuous metric: the standard deviation of the paired differences) "
                     "or discordance (binary metric: the probability that a pair is discordant); got neither"),
        ((0.1,), {"sd": 1.0, "discordance": 0.2},
         "give exactly one of sd (continuous metric: the standard deviation of the paired differences) "
         "or discordance (binary metric: the probability that a pair is discordant); got both"),
        ((0,), {"sd": 1.0}, "effect must not be 0: no number of cases detects a difference of 0"),
        ((0.0,), {"discordance": 0.2}, "effect must not be 0: no number of cases detects a difference of 0"),
        ((float("nan"),), {"sd": 1.0}, "effect must be a finite number (the difference to detect, in metric units); got nan"),
        (("0.1",), {"sd": 1.0}, "effect must be a finite number (the difference to detect, in metric units); got '0.1'"),
        ((0.1,), {"sd": 0.0}, "sd must be a finite number > 0; got 0.0"),
        ((0.1,), {"sd": -1.0}, "sd must be a finite number > 0; got -1.0"),
        ((0.1,), {"discordance": 0.0},
         "discordance must be a number in (0, 1], the probability that A and B disagree on a case; got 0.0"),
        ((0.1,), {"discordance": 1.5},
         "discordance must be a number in (0, 1], the probability that A and B disagree on a case; got 1.5"),
        ((0.3,), {"discordance": 0.2},
         "effect must not exceed discordance: a difference of 0.3 in pass rates needs at least that share of "
         "discordant pairs (effect = p10 - p01, discordance = p10 + p01, so |effect| <= discordance); "
         "got |effect|=0.3 and discordance=0.2"),
        ((0.1,), {"sd": 1.0, "alpha": 0.0}, "alpha must be a number in (0, 1); got 0.0"),
        ((0.1,), {"sd": 1.0, "alpha": 1}, "alpha must be a number in (0, 1); got 1"),
        ((0.1,), {"sd": 1.0, "power": 1.0}, "power must be a number in (0, 1); got 1.0"),
        ((0.1,), {"sd": 1.0, "family_size": 0}, "family_size must be an integer >= 1; got 0"),
        ((0.1,), {"sd": 1.0, "family_size": 2.0}, "family_size must be an integer >= 1; got 2.0"),
        ((0.1,), {"sd": 1.0, "alpha": 0.8, "power": 0.05},
         "power must be greater than the test's level alpha / family_size = 0.8: a test rejects that often "
         "with no difference at all (were alpha and power swapped?); got power=0.05"),
    ],
)
def test_plan_bad_input_names_the_argument(args, kwargs, message):
    with pytest.raises(InputError) as info:
        plan_sample_size(*args, **kwargs)
    assert str(info.value) == message


def test_plan_arguments_after_effect_are_keyword_only():
    with pytest.raises(TypeError):
        plan_sample_size(0.1, 1.0)  # type: ignore[misc]


# --- minimum_detectable_effect ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sd", "n", "kwargs", "expected"),
    [
        (0.3, 100, {}, 0.08404755654),  # R: (qnorm(0.975) + qnorm(0.8)) * 0.3 / sqrt(100) -> 0.08404755654
        (1.0, 50, {"alpha": 0.01, "power": 0.9}, 0.545516034),  # R: (qnorm(0.995) + qnorm(0.9)) / sqrt(50) -> 0.545516034
    ],
)
def test_mde_matches_the_formula_in_r(sd, n, kwargs, expected):
    # Miller (2024), "Adding Error Bars to Evals" (arXiv:2411.00640): MDE = (z_{alpha/2} + z_beta) · sd(d) / sqrt(n)
    assert minimum_detectable_effect(sd, n, **kwargs) == pytest.approx(expected, abs=5e-11)


def test_mde_degenerate_cases():
    assert math.isnan(minimum_detectable_effect(0.3, 0))
    assert math.isnan(minimum_detectable_effect(0.3, 1))
    assert math.isnan(minimum_detectable_effect(float("nan"), 100))
    assert math.isnan(minimum_detectable_effect(0.0, 1))  # too few cases wins over sd = 0
    assert minimum_detectable_effect(0.0, 10) == 0.0
    assert type(minimum_detectable_effect(np.float64(0.3), np.int64(100))) is float


def test_mde_scales_with_one_over_sqrt_n():
    assert minimum_detectable_effect(0.3, 400) == pytest.approx(minimum_detectable_effect(0.3, 100) / 2)


@pytest.mark.parametrize(("effect_size", "power"), list(itertools.product([0.05, 0.2, 0.5, 1.0], [0.8, 0.9])))
def test_mde_at_the_planned_size_is_within_the_effect(effect_size, power):
    # the t-test needs a few more cases than the normal approximation, so at the planned n
    # the normal-approximation MDE is no larger than the effect, and close to it
    n = plan_sample_size(effect_size, sd=1.0, power=power)
    assert minimum_detectable_effect(1.0, n, power=power) <= effect_size
    assert minimum_detectable_effect(1.0, n, power=power) == pytest.approx(effect_size, rel=0.15)


@pytest.mark.parametrize(
    ("sd", "n", "kwargs", "message"),
    [
        (-0.1, 10, {}, "sd must be a finite number >= 0 or NaN; got -0.1"),
        (float("inf"), 10, {}, "sd must be a finite number >= 0 or NaN; got inf"),
        ("0.3", 10, {}, "sd must be a finite number >= 0 or NaN; got '0.3'"),
        (0.3, -1, {}, "n must be an integer >= 0 (the number of paired cases); got -1"),
        (0.3, 10.0, {}, "n must be an integer >= 0 (the number of paired cases); got 10.0"),
        (0.3, True, {}, "n must be an integer >= 0 (the number of paired cases); got True"),
        (0.3, 10, {"alpha": 0}, "alpha must be a number in (0, 1); got 0"),
        (0.3, 10, {"power": 1.2}, "power must be a number in (0, 1); got 1.2"),
    ],
)
def test_mde_bad_input_names_the_argument(sd, n, kwargs, message):
    with pytest.raises(InputError) as info:
        minimum_detectable_effect(sd, n, **kwargs)
    assert str(info.value) == message


def test_importing_power_does_not_load_scipy_stats_or_statsmodels():
    code = (
        "import sys, cogeval.stats.power, cogeval.stats.equivalence; "
        "cogeval.stats.power.minimum_detectable_effect(0.3, 100); "
        "cogeval.stats.power.plan_sample_size(0.1, discordance=0.2); "
        "print(sorted(m for m in ('scipy.stats', 'statsmodels') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
