"""Paired tests against published R output; each reference number names its R call."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from cogeval.errors import InputError
from cogeval.stats import (
    Interval,
    McNemarResult,
    TTestResult,
    WilcoxonResult,
    mcnemars_test,
    paired_t_test,
    wilcoxon_test,
)

# R datasets::sleep: extra[group == 1], extra[group == 2]
SLEEP_1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
SLEEP_2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]

# Hollander & Wolfe (1973), p. 29, the depression example of R's ?wilcox.test
HW_X = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
HW_Y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]


# --- paired_t_test ----------------------------------------------------------


def test_t_test_sleep_matches_r():
    # R: t.test(extra ~ group, data = sleep, paired = TRUE)
    #    t = -4.0621, df = 9, p-value = 0.002833
    #    95 percent confidence interval: -2.4598858 -0.7001142; mean difference -1.58
    r = paired_t_test(SLEEP_1, SLEEP_2)
    assert r.t_statistic == pytest.approx(-4.0621, abs=5e-5)
    assert r.degrees_of_freedom == 9
    assert r.p_value == pytest.approx(0.002833, abs=5e-7)
    assert r.confidence_interval == pytest.approx((-2.4598858, -0.7001142), abs=5e-8)
    assert isinstance(r.confidence_interval, Interval)
    assert r.mean_difference == pytest.approx(-1.58)
    assert r.significant is True


def test_t_test_confidence_and_alpha():
    # independent check: scipy.stats.ttest_rel(...).confidence_interval(0.99)
    expected = stats.ttest_rel(SLEEP_1, SLEEP_2).confidence_interval(0.99)
    r = paired_t_test(SLEEP_1, SLEEP_2, confidence=0.99, alpha=0.001)
    assert r.confidence_interval == pytest.approx((expected.low, expected.high))
    assert r.significant is False  # p = 0.002833 > 0.001


def test_t_test_swapping_sides_flips_the_sign():
    r, s = paired_t_test(SLEEP_1, SLEEP_2), paired_t_test(SLEEP_2, SLEEP_1)
    assert s.t_statistic == pytest.approx(-r.t_statistic)
    assert s.p_value == pytest.approx(r.p_value)
    assert s.confidence_interval == pytest.approx((-r.confidence_interval.high, -r.confidence_interval.low))


def test_t_test_all_differences_zero_gives_p_one():
    r = paired_t_test([0.2, 0.5, 0.9], [0.2, 0.5, 0.9])
    assert (r.t_statistic, r.p_value, r.significant, r.mean_difference) == (0.0, 1.0, False, 0.0)
    assert r.confidence_interval == (0.0, 0.0)


def test_t_test_constant_nonzero_difference_is_undefined_never_p_zero():
    # R: t.test(c(2, 3, 4), c(1, 2, 3), paired = TRUE) -> Error: data are essentially constant
    r = paired_t_test([2, 3, 4], [1, 2, 3])
    assert math.isnan(r.t_statistic) and math.isnan(r.p_value)
    assert r.significant is False
    assert r.mean_difference == 1.0
    assert r.confidence_interval == (1.0, 1.0)


def test_t_test_essentially_constant_with_rounding_noise():
    # differences 0.30000000000000004 and 0.3: sd ~ 4e-17, below R's 10 * eps * |mean|
    r = paired_t_test([0.1 + 0.2, 0.3], [0.0, 0.0])
    assert math.isnan(r.p_value)
    assert r.significant is False


def test_t_test_accepts_series_and_integers():
    r = paired_t_test(pd.Series(SLEEP_1), np.array(SLEEP_2))
    assert r.p_value == pytest.approx(0.002833, abs=5e-7)
    assert paired_t_test([1, 2, 4], [0, 0, 0]).degrees_of_freedom == 2


def test_t_test_frame_and_html():
    frame = paired_t_test(SLEEP_1, SLEEP_2).to_frame()
    assert list(frame.columns) == [
        "test", "n", "statistic", "p_value",
        "t_statistic", "degrees_of_freedom", "significant", "ci_low", "ci_high", "mean_difference",
    ]
    assert frame.loc[0, ["test", "n"]].tolist() == ["t", 10]
    assert len(frame) == 1
    html = paired_t_test(SLEEP_1, SLEEP_2)._repr_html_()
    assert isinstance(html, str) and "TTestResult" in html


@pytest.mark.parametrize(
    ("a", "b", "kwargs", "message"),
    [
        ([1.0], [2.0], {}, "a and b must hold at least 2 pairs; got 1"),
        ([], [], {}, "a and b must hold at least 2 pairs; got 0"),
        ([1, 2, 3], [1, 2], {}, "a and b must be paired (the same length); got 3 and 2 values"),
        ([1, 2], [1, float("nan")], {}, "b must not contain NaN; found one at position 1"),
        (["x", "y"], [1, 2], {}, "a must be a sequence of numbers; got ['x', 'y']"),
        ([1, 2], [3, 4], {"alpha": 1.5}, "alpha must be a number in [0, 1]; got 1.5"),
        ([1, 2], [3, 4], {"confidence": 1}, "confidence must be a number in (0, 1); got 1"),
    ],
)
def test_t_test_bad_input_names_the_argument(a, b, kwargs, message):
    with pytest.raises(InputError) as info:
        paired_t_test(a, b, **kwargs)
    assert str(info.value) == message
    assert isinstance(info.value, ValueError)


# --- mcnemars_test ----------------------------------------------------------


def test_mcnemar_agresti_presidential_approval():
    # R ?mcnemar.test, Agresti (1990) p. 350: mcnemar.test(matrix(c(794, 86, 150, 570), nrow = 2))
    #   McNemar's chi-squared = 16.818, df = 1, p-value = 4.115e-05   [(|86 - 150| - 1)^2 / 236]
    # b = 86 (approve -> disapprove), c = 150; the statistic is symmetric in b and c.
    for b, c in [(86, 150), (150, 86)]:
        r = mcnemars_test(b, c)
        assert r.chi_square == pytest.approx(16.818, abs=5e-4)
        assert r.p_value == pytest.approx(4.115e-05, abs=5e-9)
        assert (r.exact, r.significant) == (False, True)


def test_mcnemar_without_correction():
    # R: mcnemar.test(matrix(c(794, 86, 150, 570), nrow = 2), correct = FALSE)
    #   McNemar's chi-squared = 17.356 (Agresti 2002, p. 411: z = (86 - 150) / sqrt(236) = -4.17)
    r = mcnemars_test(86, 150, correction=False)
    assert r.chi_square == pytest.approx(17.356, abs=5e-4)
    assert r.p_value == pytest.approx(stats.chi2.sf(64**2 / 236, 1))


@pytest.mark.parametrize(
    ("b", "c", "chi_square", "p_value"),
    [
        # R: mcnemar.test(matrix(c(6, 14, 2, 5), nrow = 2)) -> chi-squared = 7.5625, p-value = 0.00596
        (14, 2, 7.5625, 0.00596),
        # R: mcnemar.test(matrix(c(4, 10, 6, 10), nrow = 2)) -> chi-squared = 0.5625, p-value = 0.4533
        (10, 6, 0.5625, 0.4533),
    ],
)
def test_mcnemar_chi_square_small_tables_match_r(b, c, chi_square, p_value):
    r = mcnemars_test(b, c, exact=False)
    assert r.chi_square == pytest.approx(chi_square)
    assert r.p_value == pytest.approx(p_value, abs=5e-6 if p_value < 0.01 else 5e-5)
    assert r.exact is False


def _binom_two_sided(k: int, n: int) -> float:
    """Independent exact p for Binomial(n, 1/2): min(1, 2 * P(X <= min(k, n - k)))."""
    tail = sum(math.comb(n, i) for i in range(min(k, n - k) + 1)) / 2**n
    return min(1.0, 2 * tail)


@pytest.mark.parametrize(
    ("b", "c", "p_value"),
    [
        (2, 10, 0.03857),  # R: binom.test(2, 12) -> p-value = 0.03857
        (1, 9, 0.02148),  # R: binom.test(1, 10) -> p-value = 0.02148
        (9, 1, 0.02148),  # symmetric
    ],
)
def test_mcnemar_exact_binomial_matches_r(b, c, p_value):
    r = mcnemars_test(b, c)
    assert r.exact is True
    assert r.p_value == pytest.approx(p_value, abs=5e-6)
    assert r.p_value == pytest.approx(_binom_two_sided(b, b + c))
    assert r.chi_square == pytest.approx((abs(b - c) - 1) ** 2 / (b + c))  # still the chi-square statistic


def test_mcnemar_exact_forced_on_large_counts():
    r = mcnemars_test(86, 150, exact=True)
    assert r.exact is True
    assert r.p_value == pytest.approx(_binom_two_sided(86, 236))
    assert r.chi_square == pytest.approx(16.818, abs=5e-4)


@pytest.mark.parametrize(("b", "c", "exact"), [(5, 19, True), (5, 20, False), (12, 12, True), (13, 12, False)])
def test_mcnemar_switches_to_chi_square_at_25_discordant_pairs(b, c, exact):
    assert mcnemars_test(b, c).exact is exact


@pytest.mark.parametrize("exact", [None, True, False])
@pytest.mark.parametrize("n", [5, 20, 40])
def test_mcnemar_equal_counts_give_zero_and_p_one(exact, n):
    # Edwards: max(|b - c| - 1, 0)^2 = 0. R agrees: it corrects only an asymmetric table,
    # R: mcnemar.test(matrix(c(10, 5, 5, 10), 2)) -> McNemar's chi-squared = 0, df = 1, p-value = 1
    r = mcnemars_test(n, n, exact=exact)
    assert (r.chi_square, r.p_value, r.significant) == (0.0, 1.0, False)


@pytest.mark.parametrize("correction", [True, False])
def test_mcnemar_equal_counts_match_r_not_statsmodels_correction(correction):
    # R: mcnemar.test(matrix(c(10, 5, 5, 10), 2)) -> McNemar's chi-squared = 0, p-value = 1
    # R: mcnemar.test(matrix(c(10, 30, 30, 10), 2), correct = FALSE) -> McNemar's chi-squared = 0, p-value = 1
    from statsmodels.stats.contingency_tables import mcnemar

    for n in (5, 30):
        r = mcnemars_test(n, n, exact=False, correction=correction)
        assert (r.chi_square, r.p_value, r.exact) == (0.0, 1.0, False)
    # statsmodels corrects b == c to (0 - 1)^2 / (b + c) = 1/10, p = 0.7518296 (chi2.sf(0.1, 1)): not used here
    theirs = mcnemar([[0, 5], [5, 0]], exact=False, correction=True)
    assert theirs.statistic == pytest.approx(0.1)
    assert theirs.pvalue == pytest.approx(stats.chi2.sf(0.1, 1)) and theirs.pvalue < 1


def test_mcnemar_difference_of_one_is_zero_with_correction():
    # R: mcnemar.test(matrix(c(10, 20, 21, 10), 2)) -> McNemar's chi-squared = 0, df = 1, p-value = 1
    r = mcnemars_test(20, 21, exact=False)
    assert (r.chi_square, r.p_value) == (0.0, 1.0)
    # R: mcnemar.test(matrix(c(10, 20, 21, 10), 2), correct = FALSE)
    #    -> McNemar's chi-squared = 0.024390244, df = 1, p-value = 0.8758961
    uncorrected = mcnemars_test(20, 21, exact=False, correction=False)
    assert uncorrected.chi_square == pytest.approx(1 / 41)
    assert uncorrected.chi_square == pytest.approx(0.024390244, abs=5e-10)
    assert uncorrected.p_value == pytest.approx(0.8758961, abs=5e-8)


@pytest.mark.parametrize(
    ("b", "c", "p_value"),
    [
        (3, 12, 0.03515625),  # R: binom.test(3, 15)$p.value -> 0.03515625 (= 2 * 576 / 2^15)
        (7, 13, 0.2631759644),  # R: binom.test(7, 20)$p.value -> 0.2631759644
        (5, 0, 0.0625),  # R: binom.test(5, 5)$p.value -> 0.0625 (= 2 / 2^5)
        (12, 12, 1.0),  # R: binom.test(12, 24)$p.value -> 1
        (3, 4, 1.0),  # |b - c| == 1: 2 * P(X <= 3 | n = 7) = 1; chi_square 0 with the correction
    ],
)
def test_mcnemar_exact_p_equals_r_binom_test(b, c, p_value):
    r = mcnemars_test(b, c, exact=True)
    assert r.exact is True
    assert r.p_value == pytest.approx(p_value, rel=1e-9)
    assert r.p_value == pytest.approx(_binom_two_sided(b, b + c))
    assert r.chi_square == pytest.approx(max(abs(b - c) - 1, 0) ** 2 / (b + c))


@pytest.mark.parametrize("exact", [None, True, False])
def test_mcnemar_no_discordant_pairs(exact):
    r = mcnemars_test(0, 0, exact=exact)
    assert (r.chi_square, r.p_value, r.significant) == (0.0, 1.0, False)
    assert r.exact is (exact is not False)


def test_mcnemar_accepts_numpy_integers_and_alpha():
    r = mcnemars_test(np.int64(2), np.int32(10), alpha=0.01)
    assert r.p_value == pytest.approx(0.03857, abs=5e-6)
    assert r.significant is False


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((-1, 3), {}, "b must be a count (an integer >= 0); got -1"),
        ((1, 2.5), {}, "c must be a count (an integer >= 0); got 2.5"),
        ((True, 3), {}, "b must be a count (an integer >= 0); got True"),
        ((1, "3"), {}, "c must be a count (an integer >= 0); got '3'"),
        ((1, 3), {"exact": "yes"}, "exact must be True, False or None; got 'yes'"),
        ((1, 3), {"correction": None}, "correction must be True or False; got None"),
        ((1, 3), {"alpha": -0.1}, "alpha must be a number in [0, 1]; got -0.1"),
    ],
)
def test_mcnemar_bad_input_names_the_argument(args, kwargs, message):
    with pytest.raises(InputError) as info:
        mcnemars_test(*args, **kwargs)
    assert str(info.value) == message


def test_mcnemar_frame_and_html():
    r = mcnemars_test(86, 150)
    assert isinstance(r, McNemarResult)
    frame = r.to_frame()
    assert list(frame.columns) == ["test", "n", "statistic", "p_value", "chi_square", "significant", "exact"]
    # R ?mcnemar.test (Agresti 1990): chi-squared = 16.818, p-value = 4.115e-05; 63^2 / 236 exactly
    assert frame.iloc[0].tolist() == ["mcnemar", 236, pytest.approx(63**2 / 236), pytest.approx(4.115e-05, abs=5e-9),
                                      pytest.approx(63**2 / 236), True, False]
    html = r._repr_html_()
    assert "<caption>McNemarResult</caption>" in html
    assert "<tr><th>statistic</th><td>16.82</td></tr><tr><th>p_value</th><td>4.1e-05</td></tr>" in html  # p: 2 digits


# --- wilcoxon_test ----------------------------------------------------------


def test_wilcoxon_hollander_wolfe_exact():
    # R ?wilcox.test: wilcox.test(x, y, paired = TRUE) -> V = 40, p-value = 0.03906
    r = wilcoxon_test(HW_X, HW_Y)
    assert r.statistic == 40
    assert r.p_value == pytest.approx(0.03906, abs=5e-6)
    assert r.p_value == pytest.approx(2 * 10 / 2**9)  # P(V >= 40) = 10/512 for n = 9
    assert (r.exact, r.significant) == (True, True)


def test_wilcoxon_sleep_ties_and_zeros_use_normal_approximation():
    # R: wilcox.test(sleep$extra[1:10], sleep$extra[11:20], paired = TRUE)
    #    V = 0, p-value = 0.009091 (warnings: cannot compute exact p-value with ties / zeroes)
    for exact in (None, True):  # exact = TRUE falls back too, as in R
        r = wilcoxon_test(SLEEP_1, SLEEP_2, exact=exact)
        assert r.statistic == 0
        assert r.p_value == pytest.approx(0.009091, abs=5e-7)
        assert r.exact is False


def _normal_approximation(d, correction=True):
    """Independent R-style calculation: drop zeros, average ranks, tie and continuity corrections."""
    d = np.asarray([x for x in d if x != 0], dtype=float)
    n = len(d)
    ranks = stats.rankdata(np.abs(d))
    v = ranks[d > 0].sum()
    ties = np.array([np.sum(ranks == r) for r in np.unique(ranks)])
    sigma = math.sqrt(n * (n + 1) * (2 * n + 1) / 24 - np.sum(ties**3 - ties) / 48)
    z = v - n * (n + 1) / 4
    z = (z - (0.5 * np.sign(z) if correction else 0)) / sigma
    return v, 2 * min(stats.norm.cdf(z), stats.norm.sf(z))


@pytest.mark.parametrize("correction", [True, False])
def test_wilcoxon_ties_and_zeros_match_independent_calculations(correction):
    a = np.array([3.0, 5.0, 2.0, 4.0, 4.0, 6.0, 1.0, 7.0, 5.0, 8.0, 2.0, 6.0])
    b = np.array([1.0, 2.0, 2.0, 1.0, 5.0, 3.0, 1.0, 2.0, 3.0, 3.0, 4.0, 1.0])
    d = a - b  # two zeros, several ties
    r = wilcoxon_test(a, b, correction=correction)
    v, p = _normal_approximation(d, correction)
    assert r.statistic == v and r.exact is False
    assert r.p_value == pytest.approx(p)
    # scipy gives R's answer once zeros are removed first and the options are explicit
    reference = stats.wilcoxon(d[d != 0], zero_method="wilcox", correction=correction, method="approx")
    assert r.p_value == pytest.approx(reference.pvalue)


def test_wilcoxon_five_positive_differences():
    # R: wilcox.test(c(1, 2, 3, 4, 5)) -> V = 15, p-value = 0.0625
    r = wilcoxon_test([1, 2, 3, 4, 5], [0, 0, 0, 0, 0])
    assert (r.statistic, r.p_value, r.exact, r.significant) == (15.0, 0.0625, True, False)


@pytest.mark.parametrize("n", [1, 2, 7, 20, 49])
def test_wilcoxon_exact_matches_scipy_exact(n):
    rng = np.random.default_rng(n)
    a, b = rng.normal(0.3, 1, n), rng.normal(0, 1, n)
    r = wilcoxon_test(a, b)
    assert r.exact is True
    assert r.p_value == pytest.approx(stats.wilcoxon(a - b, method="exact").pvalue)


def test_wilcoxon_large_sample_switches_to_normal_unless_exact():
    rng = np.random.default_rng(50)
    a, b = rng.normal(0.3, 1, 50), rng.normal(0, 1, 50)
    d = a - b
    approx = wilcoxon_test(a, b)
    assert approx.exact is False
    assert approx.p_value == pytest.approx(_normal_approximation(d)[1])
    forced = wilcoxon_test(a, b, exact=True)
    assert forced.exact is True
    assert forced.p_value == pytest.approx(stats.wilcoxon(d, method="exact").pvalue)
    assert wilcoxon_test(a[:10], b[:10], exact=False).exact is False


def test_wilcoxon_one_pair():
    # R: wilcox.test(1, 0, paired = TRUE) -> V = 1, p-value = 1
    r = wilcoxon_test([1.0], [0.0])
    assert (r.statistic, r.p_value, r.exact) == (1.0, 1.0, True)


def test_wilcoxon_all_differences_zero():
    r = wilcoxon_test([1, 2, 3], [1, 2, 3])
    assert (r.statistic, r.p_value, r.significant, r.exact) == (0.0, 1.0, False, False)


@pytest.mark.parametrize(
    ("a", "b", "kwargs", "message"),
    [
        ([], [], {}, "a and b must hold at least 1 pair; got 0"),
        ([1, 2, 3], [1, 2], {}, "a and b must be paired (the same length); got 3 and 2 values"),
        ([float("nan"), 2], [1, 2], {}, "a must not contain NaN; found one at position 0"),
        ([1, 2], [3, 4], {"exact": 1}, "exact must be True, False or None; got 1"),
        ([1, 2], [3, 4], {"correction": "no"}, "correction must be True or False; got 'no'"),
    ],
)
def test_wilcoxon_bad_input_names_the_argument(a, b, kwargs, message):
    with pytest.raises(InputError) as info:
        wilcoxon_test(a, b, **kwargs)
    assert str(info.value) == message


def test_wilcoxon_frame_and_html():
    r = wilcoxon_test(HW_X, HW_Y)
    assert isinstance(r, WilcoxonResult)
    assert list(r.to_frame().columns) == ["test", "n", "statistic", "p_value", "significant", "exact"]
    assert r.to_frame().loc[0, ["test", "n", "statistic"]].tolist() == ["wilcoxon", 9, 40.0]  # R: V = 40
    assert "WilcoxonResult" in r._repr_html_()


def test_results_of_different_tests_stack_into_one_tidy_table():
    import pandas as pd

    rows = pd.concat([paired_t_test(SLEEP_1, SLEEP_2).to_frame(), mcnemars_test(86, 150).to_frame(),
                      wilcoxon_test(HW_X, HW_Y).to_frame()], ignore_index=True)
    assert list(rows.columns[:4]) == ["test", "n", "statistic", "p_value"]
    # R: t.test(sleep) t = -4.0621, p = 0.002833; mcnemar.test 16.818, 4.115e-05; wilcox.test V = 40, p = 0.03906
    assert rows["test"].tolist() == ["t", "mcnemar", "wilcoxon"] and rows["n"].tolist() == [10, 236, 9]
    assert rows["statistic"].tolist() == pytest.approx([-4.0621, 16.818, 40.0], abs=5e-4)
    assert rows["p_value"].tolist() == pytest.approx([0.002833, 4.115e-05, 0.03906], abs=5e-6)


def test_results_are_frozen():
    r = paired_t_test(SLEEP_1, SLEEP_2)
    assert isinstance(r, TTestResult)
    with pytest.raises(AttributeError):
        r.p_value = 0.5  # type: ignore[misc]


def test_importing_the_tests_does_not_load_scipy_stats_or_statsmodels():
    code = (
        "import sys, cogeval.stats.paired, cogeval.stats.multitest; "
        "print(sorted(m for m in ('scipy.stats', 'statsmodels') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
