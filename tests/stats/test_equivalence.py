"""equivalence_test (paired TOST) against R's two one-sided t.test calls and statsmodels' ttost_paired."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cogeval.errors import InputError
from cogeval.stats import EquivalenceResult, equivalence_test, paired_t_test

# R datasets::sleep: extra[group == 1], extra[group == 2]
SLEEP_1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
SLEEP_2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]

# Hollander & Wolfe (1973), p. 29, the depression example of R's ?wilcox.test
HW_X = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
HW_Y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]

# In R, with m the margin:
#   lower <- t.test(a, b, paired = TRUE, mu = -m, alternative = "greater")$p.value
#   upper <- t.test(a, b, paired = TRUE, mu =  m, alternative = "less")$p.value
#   max(lower, upper)
R_TOST = [
    # (a, b, m): lower, upper, mean(a - b)
    (SLEEP_1, SLEEP_2, 2.0, 0.1541572357, 3.552344159e-06, -1.58),
    (SLEEP_1, SLEEP_2, 1.0, 0.9149441146, 4.778595696e-05, -1.58),
    (HW_X, HW_Y, 1.0, 4.048059475e-06, 0.001994939089, 0.4318888889),
    (HW_X, HW_Y, 0.5, 8.928910836e-05, 0.3224827857, 0.4318888889),
]


@pytest.mark.parametrize(("a", "b", "margin", "lower", "upper", "mean"), R_TOST)
def test_matches_two_one_sided_t_tests_in_r(a, b, margin, lower, upper, mean):
    r = equivalence_test(a, b, margin)
    assert r.lower_p_value == pytest.approx(lower, rel=1e-9)
    assert r.upper_p_value == pytest.approx(upper, rel=1e-9)
    assert r.p_value == pytest.approx(max(lower, upper), rel=1e-9)
    assert r.mean_difference == pytest.approx(mean, abs=5e-11)
    assert r.margin == margin
    assert r.equivalent is (max(lower, upper) < 0.05)


def test_hollander_wolfe_is_equivalent_within_one_but_not_half():
    # R values above: p = 0.001994939 (margin 1) and 0.3224828 (margin 0.5)
    assert equivalence_test(HW_X, HW_Y, 1.0).equivalent is True
    assert equivalence_test(HW_X, HW_Y, 0.5).equivalent is False
    assert equivalence_test(HW_X, HW_Y, 1.0, alpha=0.001).equivalent is False  # p = 0.001995 > 0.001


@pytest.mark.parametrize("seed", range(6))
def test_agrees_with_statsmodels_ttost_paired(seed):
    # independent: statsmodels.stats.weightstats.ttost_paired called here
    from statsmodels.stats.weightstats import ttost_paired

    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 60))
    a = rng.normal(0.6, 0.2, n)
    b = a + rng.normal(rng.uniform(-0.05, 0.05), 0.1, n)
    margin = float(rng.uniform(0.01, 0.2))
    p, (_, lower, _), (_, upper, _) = ttost_paired(a, b, -margin, margin)
    r = equivalence_test(a, b, margin)
    assert (r.p_value, r.lower_p_value, r.upper_p_value) == pytest.approx((p, lower, upper), rel=1e-12)
    assert r.mean_difference == pytest.approx(float(np.mean(a - b)))


@pytest.mark.parametrize("seed", range(20))
def test_equivalent_iff_the_1_minus_2alpha_t_interval_lies_inside_the_margin(seed):
    rng = np.random.default_rng(100 + seed)
    d = rng.normal(rng.uniform(-0.1, 0.1), 0.15, 40)
    margin = 0.08
    ci = paired_t_test(d, np.zeros(len(d)), confidence=0.90).confidence_interval
    assert equivalence_test(d, np.zeros(len(d)), margin).equivalent is (-margin < ci.low and ci.high < margin)


def test_swapping_sides_swaps_the_one_sided_p_values():
    r, s = equivalence_test(HW_X, HW_Y, 0.5), equivalence_test(HW_Y, HW_X, 0.5)
    assert s.lower_p_value == pytest.approx(r.upper_p_value)
    assert s.upper_p_value == pytest.approx(r.lower_p_value)
    assert s.p_value == pytest.approx(r.p_value)
    assert s.mean_difference == pytest.approx(-r.mean_difference)


# --- degenerate cases ------------------------------------------------------------------------


def test_fewer_than_two_pairs_is_never_equivalent():
    none = equivalence_test([], [], 0.1)
    assert math.isnan(none.mean_difference)
    assert (none.lower_p_value, none.upper_p_value, none.p_value, none.equivalent) == (1.0, 1.0, 1.0, False)
    one = equivalence_test([0.5], [0.5], 0.1)
    assert (one.mean_difference, one.p_value, one.equivalent) == (0.0, 1.0, False)


def test_identical_runs_are_not_shown_equivalent():
    # statsmodels: ttost_paired(x, x, -0.1, 0.1) gives t = +-inf, p = 0; without spread the t-test is undefined,
    # and identical scores on a few cases say nothing about how far other cases could differ
    r = equivalence_test([0.8, 0.7, 0.9, 1.0], [0.8, 0.7, 0.9, 1.0], 0.1)
    assert (r.mean_difference, r.lower_p_value, r.upper_p_value, r.p_value, r.equivalent) == (0.0, 1.0, 1.0, 1.0, False)


@pytest.mark.parametrize(("shift", "margin"), [(0.05, 0.1), (-0.05, 0.1), (0.25, 0.1), (-0.25, 0.1), (0.5, 0.5)])
def test_constant_differences_are_never_equivalent_and_leak_no_nan(shift, margin):
    a = np.array([1.0, 2.0, 3.0, 4.0])
    r = equivalence_test(a + shift, a, margin)
    assert (r.lower_p_value, r.upper_p_value, r.p_value, r.equivalent) == (1.0, 1.0, 1.0, False)


def test_constant_up_to_rounding_is_treated_as_constant():
    # differences 0.30000000000000004 and 0.3: sd ~ 4e-17, below R's 10 * eps * |mean| rule
    assert equivalence_test([0.1 + 0.2, 0.3], [0.0, 0.0], 0.31).p_value == 1.0


# --- bad input, result shape ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "margin", "kwargs", "message"),
    [
        ([1, 2], [1, 2], 0, {}, "margin must be a finite number > 0; got 0"),
        ([1, 2], [1, 2], -0.1, {}, "margin must be a finite number > 0; got -0.1"),
        ([1, 2], [1, 2], float("inf"), {}, "margin must be a finite number > 0; got inf"),
        ([1, 2], [1, 2], "0.1", {}, "margin must be a finite number > 0; got '0.1'"),
        ([1, 2, 3], [1, 2], 0.1, {}, "a and b must be paired (the same length); got 3 and 2 values"),
        ([1, float("nan")], [1, 2], 0.1, {}, "a must not contain NaN; found one at position 1"),
        ([1, 2], [1, 2], 0.1, {"alpha": 1.5}, "alpha must be a number in [0, 1]; got 1.5"),
    ],
)
def test_bad_input_names_the_argument(a, b, margin, kwargs, message):
    with pytest.raises(InputError) as info:
        equivalence_test(a, b, margin, **kwargs)
    assert str(info.value) == message


def test_frame_html_and_frozen():
    r = equivalence_test(HW_X, HW_Y, 1.0)
    assert isinstance(r, EquivalenceResult)
    frame = r.to_frame()
    assert list(frame.columns) == ["test", "n", "statistic", "p_value", "mean_difference", "margin", "lower_p_value",
                                   "upper_p_value", "equivalent"]
    assert frame.loc[0, ["test", "n"]].tolist() == ["tost", 9]
    assert len(frame) == 1
    assert "<caption>EquivalenceResult</caption>" in r._repr_html_()
    with pytest.raises(AttributeError):
        r.p_value = 0.5  # type: ignore[misc]
