"""cluster_se and clustered_t_test against R (sandwich, clubSandwich, estimatr), statsmodels and Inspect AI.

Each reference number was computed once in R 4.x with the call beside it
(sandwich, clubSandwich and estimatr from Debian's r-cran-* packages).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
import pytest

from cogeval.errors import InputError
from cogeval.stats import ClusteredTTestResult, Interval, cluster_se, clustered_t_test, paired_t_test

# R datasets::sleep: extra[group == 1], extra[group == 2]; d = a - b
SLEEP_1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
SLEEP_2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]
SLEEP_D = list(np.subtract(SLEEP_1, SLEEP_2))
EQUAL = [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]  # R: g <- rep(1:5, each = 2)
UNEQUAL = [1, 1, 1, 2, 2, 3, 4, 4, 4, 4]  # R: g <- c(1, 1, 1, 2, 2, 3, 4, 4, 4, 4)

# clusrank::crsdUnb, four clusters of each size 2..6 (18 clusters, 74 units); R:
#   sz <- table(crsdUnb$id); pick <- unlist(lapply(2:6, function(s) head(names(sz)[sz == s], 4)))
#   sub <- crsdUnb[as.character(crsdUnb$id) %in% pick, ]; d <- sub$z; g <- sub$id
UNB_Z = [-2.15, 3.90, 0.26, 0.65, -1.05, -0.93, -0.91, -0.66, 0.94, -4.23, -0.97, 1.13, -0.43, -0.78, -0.96, -0.86,
         -0.62, 0.44, -0.59, 0.22, 29.60, -0.43, -1.09, -2.05, 1.64, 2.79, 6.83, 1.36, -0.11, -1.14, -2.36, -3.31,
         -3.14, -0.65, -0.88, -3.18, 2.90, 2.39, 4.26, 2.77, 2.99, 2.26, 2.16, 4.46, 5.99, 2.20, -1.45, -2.03, -3.57,
         5.85, 1.27, 1.35, 1.00, -0.62, -0.73, -0.29, -0.90, 1.32, 3.61, 1.99, 4.00, -5.48, -6.80, -6.01, -6.37,
         -2.68, -4.70, -5.74, -2.12, -1.73, -1.88, -1.50, -2.19, -3.69]
UNB_ID = [8] * 6 + [16] * 6 + [19] * 6 + [21] * 6 + [173] * 5 + [262] * 4 + [288] * 4 + [322] * 5 + [328] * 2 + \
    [332] * 5 + [380] * 4 + [430] * 5 + [468] * 3 + [497] * 4 + [552] * 3 + [675] * 2 + [934] * 2 + [1042] * 2


# --- cluster_se -------------------------------------------------------------


@pytest.mark.parametrize(("clusters", "cr1", "cr2"), [
    # R: sqrt(sandwich::vcovCL(lm(d ~ 1), cluster = ~g, type = "HC1"))  (its (n-1)/(n-k) is 1 for one coefficient)
    # R: estimatr::lm_robust(d ~ 1, clusters = g, se_type = "CR2")$std.error (= clubSandwich::vcovCR(..., "CR2"))
    (EQUAL, 0.411582312545133, 0.411582312545134),
    (UNEQUAL, 0.346794848097065, 0.3660443853735392),
])
def test_cluster_se_sleep_matches_r(clusters, cr1, cr2):
    assert cluster_se(SLEEP_D, clusters, kind="CR1") == pytest.approx(cr1, rel=1e-13)
    assert cluster_se(SLEEP_D, clusters, kind="CR2") == pytest.approx(cr2, rel=1e-13)
    assert cluster_se(SLEEP_D, clusters) == cluster_se(SLEEP_D, clusters, kind="cr2")  # the default, any case


def test_cluster_se_unbalanced_clusrank_data_matches_r():
    # R: sqrt(sandwich::vcovCL(lm(d ~ 1), cluster = ~g, type = "HC1")) -> 0.654112764829069
    # R: clubSandwich::coef_test(lm(d ~ 1), vcov = "CR2", cluster = g, test = "Satterthwaite")$SE -> 0.656227382089884
    assert cluster_se(UNB_Z, UNB_ID, kind="CR1") == pytest.approx(0.654112764829069, rel=1e-13)
    assert cluster_se(UNB_Z, UNB_ID, kind="CR2") == pytest.approx(0.656227382089884, rel=1e-13)


def test_cluster_se_cr1_equals_statsmodels_cluster_bse():
    import statsmodels.api as sm

    rng = np.random.default_rng(7)
    groups = rng.integers(0, 30, 400)
    values = rng.normal(size=400) + rng.normal(size=30)[groups]
    fit = sm.OLS(values, np.ones(400)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    assert cluster_se(values, groups, kind="CR1") == pytest.approx(float(fit.bse[0]), rel=1e-12)
    fit = sm.OLS(UNB_Z, np.ones(len(UNB_Z))).fit(cov_type="cluster", cov_kwds={"groups": pd.factorize(np.array(UNB_ID))[0]})
    assert cluster_se(UNB_Z, UNB_ID, kind="CR1") == pytest.approx(float(fit.bse[0]), rel=1e-12)


def test_cluster_se_cr1_equals_inspect_ai_clustered_stderr():
    from inspect_ai.scorer import SampleScore, Score, stderr

    # Inspect's own clustered stderr, called as its metrics are: one SampleScore per sample, cluster id in metadata
    values = [1, 0, 1, 1, 0, 0, 1, 1, 1, 0, 0.5, 1]
    labels = ["q1", "q1", "q1", "q2", "q2", "q3", "q3", "q3", "q3", "q4", "q4", "q5"]
    scores = [SampleScore(score=Score(value=v), sample_id=i, sample_metadata={"passage": c})
              for i, (v, c) in enumerate(zip(values, labels))]
    inspect_se = stderr(cluster="passage")(scores)
    assert cluster_se(values, labels, kind="CR1") == pytest.approx(float(inspect_se), rel=1e-12)


def test_cluster_se_singletons_is_the_ordinary_standard_error():
    expected = np.std(SLEEP_D, ddof=1) / math.sqrt(10)
    assert cluster_se(SLEEP_D, range(10), kind="CR1") == pytest.approx(expected, rel=1e-13)
    assert cluster_se(SLEEP_D, range(10), kind="CR2") == pytest.approx(expected, rel=1e-13)


def test_cluster_se_fewer_than_two_clusters_is_nan_with_a_warning():
    with pytest.warns(UserWarning, match=r"^cluster_se needs at least 2 clusters; got 1: the result is NaN$"):
        assert math.isnan(cluster_se([1.0, 2.0, 3.0], ["x", "x", "x"]))


def test_cluster_se_names_the_bad_kind():
    with pytest.raises(InputError, match=r"^kind must be one of 'CR1', 'CR2' \(case-insensitive\); got 'HC3'$"):
        cluster_se(SLEEP_D, EQUAL, kind="HC3")


# --- cluster labels ---------------------------------------------------------


def test_any_hashable_labels_give_the_same_answer():
    by_int = cluster_se(SLEEP_D, UNEQUAL)
    assert cluster_se(SLEEP_D, [f"passage-{g}" for g in UNEQUAL]) == by_int
    assert cluster_se(SLEEP_D, pd.Series(UNEQUAL).astype("category")) == by_int
    assert cluster_se(SLEEP_D, [(g, "x") for g in UNEQUAL]) == by_int
    assert cluster_se(SLEEP_D, np.array(UNEQUAL) * 1000 + 7) == by_int


def test_integer_codes_fast_path():
    codes = np.array(UNEQUAL) - 1
    assert cluster_se(SLEEP_D, codes, codes=True) == cluster_se(SLEEP_D, UNEQUAL)
    r = clustered_t_test(SLEEP_1, SLEEP_2, codes, codes=True)
    assert r.p_value == clustered_t_test(SLEEP_1, SLEEP_2, UNEQUAL).p_value
    with pytest.raises(InputError, match=r"^clusters must use every code 0..G-1 when codes=True; code 1 has no unit$"):
        cluster_se([1.0, 2.0, 3.0], np.array([0, 2, 2]), codes=True)
    with pytest.raises(InputError, match=r"^clusters must be a one-dimensional integer array of codes when codes=True"):
        cluster_se([1.0, 2.0], ["a", "b"], codes=True)


@pytest.mark.parametrize("missing", [None, float("nan"), np.nan])
def test_a_missing_label_is_an_error_naming_its_position(missing):
    labels = ["a", "a", "b", missing, "c"]
    with pytest.raises(InputError, match=r"^clusters must give every unit a label; position 3 has (None|nan)$"):
        clustered_t_test([1, 2, 3, 4, 5], [0, 0, 0, 0, 0], labels)


def test_lengths_that_differ_are_errors_naming_the_arguments():
    with pytest.raises(InputError, match=r"^clusters must give one label per unit; got 9 labels for 10 units$"):
        clustered_t_test(SLEEP_1, SLEEP_2, EQUAL[:9])
    with pytest.raises(InputError, match=r"^a and b must be paired \(the same length\); got 10 and 9 values$"):
        clustered_t_test(SLEEP_1, SLEEP_2[:9], EQUAL)
    with pytest.raises(InputError, match=r"^clusters must be a sequence of labels, one per unit; got 'abc'$"):
        cluster_se([1.0, 2.0, 3.0], "abc")


# --- clustered_t_test -------------------------------------------------------


def test_cr2_t_test_sleep_unequal_clusters_matches_clubsandwich_and_estimatr():
    # R: fit <- lm(d ~ 1); clubSandwich::coef_test(fit, vcov = "CR2", cluster = g, test = "Satterthwaite")
    #    beta -1.58, SE 0.366044385373539, tstat -4.31641643236147, df_Satt 2.39240506329114, p_Satt 0.035750128194115
    # R: estimatr::lm_robust(d ~ 1, clusters = g, se_type = "CR2"): conf.low -2.9315610629039486, conf.high -0.2284389370960511
    r = clustered_t_test(SLEEP_1, SLEEP_2, UNEQUAL)
    assert isinstance(r, ClusteredTTestResult)
    assert r.statistic == pytest.approx(-4.31641643236147, rel=1e-12)
    assert r.df == pytest.approx(2.39240506329114, rel=1e-12)
    assert r.p_value == pytest.approx(0.035750128194115, rel=1e-10)
    assert r.se == pytest.approx(0.366044385373539, rel=1e-12)
    assert r.ci == pytest.approx((-2.9315610629039486, -0.2284389370960511), rel=1e-10)
    assert isinstance(r.ci, Interval)
    assert (r.clusters, r.n, r.kind, r.significant, r.test) == (4, 10, "CR2", True, "clustered-t")
    assert r.mean_difference == pytest.approx(-1.58)


def test_cr2_t_test_sleep_equal_clusters_has_g_minus_1_df():
    # R: clubSandwich::coef_test(fit, vcov = "CR2", cluster = rep(1:5, each = 2), test = "Satterthwaite")
    #    tstat -3.83884329292391, df_Satt 4, p_Satt 0.0184777987945209
    # R: estimatr::lm_robust(d ~ 1, clusters = g, se_type = "CR2"): -2.722735697051924 -0.437264302948075;
    #    with alpha = 0.1: -2.457430430308233 -0.702569569691766
    r = clustered_t_test(SLEEP_1, SLEEP_2, EQUAL)
    assert r.statistic == pytest.approx(-3.83884329292391, rel=1e-12)
    assert r.df == pytest.approx(4, rel=1e-13)
    assert r.p_value == pytest.approx(0.0184777987945209, rel=1e-10)
    assert r.ci == pytest.approx((-2.722735697051924, -0.437264302948075), rel=1e-10)
    r90 = clustered_t_test(SLEEP_1, SLEEP_2, EQUAL, confidence=0.90)
    assert r90.ci == pytest.approx((-2.457430430308233, -0.702569569691766), rel=1e-10)


def test_cr1_t_test_matches_estimatr_stata():
    # R: estimatr::lm_robust(d ~ 1, clusters = g, se_type = "stata"): se 0.3467948480970653, df 3,
    #    p 0.0198195386313017, conf.low -2.6836559830179301, conf.high -0.4763440169820696, t -4.5560077050445953
    r = clustered_t_test(SLEEP_1, SLEEP_2, UNEQUAL, kind="CR1")
    assert (r.df, r.kind) == (3.0, "CR1")
    assert r.se == pytest.approx(0.3467948480970653, rel=1e-12)
    assert r.statistic == pytest.approx(-4.5560077050445953, rel=1e-12)
    assert r.p_value == pytest.approx(0.0198195386313017, rel=1e-10)
    assert r.ci == pytest.approx((-2.6836559830179301, -0.4763440169820696), rel=1e-10)


def test_t_test_unbalanced_clusrank_data_matches_r():
    # R: clubSandwich::coef_test(lm(d ~ 1), vcov = "CR2", cluster = g, test = "Satterthwaite")
    #    tstat 0.17647969891471, df_Satt 15.0162461510913, p_Satt 0.862275234368633
    # R: estimatr::lm_robust(d ~ 1, clusters = g, se_type = "CR2"): -1.282772954116186 1.514394575737807
    # R: estimatr::lm_robust(d ~ 1, clusters = g, se_type = "stata"): p 0.861561230689978, -1.264246490085179 1.495868111706800
    r = clustered_t_test(UNB_Z, [0] * len(UNB_Z), UNB_ID)
    assert r.statistic == pytest.approx(0.17647969891471, rel=1e-12)
    assert r.df == pytest.approx(15.0162461510913, rel=1e-12)
    assert r.p_value == pytest.approx(0.862275234368633, rel=1e-12)
    assert r.ci == pytest.approx((-1.282772954116186, 1.514394575737807), rel=1e-12)
    r = clustered_t_test(UNB_Z, [0] * len(UNB_Z), UNB_ID, kind="CR1")
    assert r.df == 17
    assert r.p_value == pytest.approx(0.861561230689978, rel=1e-12)
    assert r.ci == pytest.approx((-1.264246490085179, 1.495868111706800), rel=1e-12)


def test_bell_mccaffrey_closed_form_equals_the_matrix_formula():
    # The Satterthwaite df of clubSandwich for lm(d ~ 1): with A_k = (I - H_kk)^(-1/2), the CR2 variance is
    # Σ_k (1' A_k e_k)² / n² and df = tr(Ω)² / tr(Ω²), Ω = G'(I - H)G for columns g_k = (I - H)' A_k' 1 on cluster k.
    rng = np.random.default_rng(3)
    for _ in range(20):
        sizes = rng.integers(1, 7, rng.integers(2, 9))
        n = int(sizes.sum())
        labels = np.repeat(np.arange(len(sizes)), sizes)
        h = np.full((n, n), 1 / n)
        columns = []
        for k in range(len(sizes)):
            block = labels == k
            values, vectors = np.linalg.eigh(np.eye(block.sum()) - h[np.ix_(block, block)])
            adjust = vectors @ np.diag(values**-0.5) @ vectors.T
            column = np.zeros(n)
            column[block] = adjust @ np.ones(block.sum())
            columns.append((np.eye(n) - h) @ column)
        omega = np.array(columns) @ np.array(columns).T
        expected = np.trace(omega) ** 2 / np.trace(omega @ omega)
        d = rng.normal(size=n)
        assert clustered_t_test(d, np.zeros(n), labels).df == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("kind", ["CR1", "CR2"])
def test_singleton_clusters_are_the_paired_t_test(kind):
    rng = np.random.default_rng(11)
    for a, b in [(SLEEP_1, SLEEP_2), (rng.normal(size=37), rng.normal(size=37))]:
        paired = paired_t_test(a, b, confidence=0.9)
        r = clustered_t_test(a, b, [f"case-{i}" for i in range(len(a))], kind=kind, confidence=0.9)
        assert r.df == paired.degrees_of_freedom
        assert r.statistic == pytest.approx(paired.t_statistic, rel=1e-12)
        assert r.p_value == pytest.approx(paired.p_value, rel=1e-12)
        assert r.ci == pytest.approx(tuple(paired.confidence_interval), rel=1e-12)
        assert r.significant == paired.significant


def test_interval_excludes_zero_exactly_when_significant():
    rng = np.random.default_rng(5)
    for _ in range(200):
        g = rng.integers(0, rng.integers(2, 12), 40)
        d = rng.normal(rng.normal(0, 0.4), 1, 40) + rng.normal(size=12)[g]
        r = clustered_t_test(d, np.zeros(40), g)
        if not math.isnan(r.p_value) and abs(r.p_value - 0.05) > 1e-9:
            assert (r.ci.low > 0 or r.ci.high < 0) == (r.p_value < 0.05)


def test_all_differences_zero_gives_p_one():
    r = clustered_t_test([0.2, 0.5, 0.9, 0.1], [0.2, 0.5, 0.9, 0.1], ["a", "a", "b", "c"])
    assert (r.statistic, r.p_value, r.significant, r.mean_difference, r.se) == (0.0, 1.0, False, 0.0, 0.0)
    assert r.ci == (0.0, 0.0)


def test_constant_nonzero_differences_are_nan_with_a_warning_never_p_zero():
    # R: lm_robust(rep(1, 4) ~ 1, clusters = ...) gives se 0; R's t.test stops: "data are essentially constant"
    with pytest.warns(UserWarning, match=r"^clustered_t_test: the differences are constant within and across clusters"):
        r = clustered_t_test([2, 3, 4, 5], [1, 2, 3, 4], ["a", "a", "b", "c"])
    assert math.isnan(r.statistic) and math.isnan(r.p_value)
    assert r.significant is False
    assert r.mean_difference == 1.0


def test_fewer_than_two_clusters_is_nan_with_a_warning():
    with pytest.warns(UserWarning, match=r"^clustered_t_test needs at least 2 clusters; got 1: the result is NaN$"):
        r = clustered_t_test([1.0, 2.0, 4.0], [0.0, 0.0, 0.0], [7, 7, 7])
    assert math.isnan(r.statistic) and math.isnan(r.p_value) and math.isnan(r.df)
    assert (r.clusters, r.significant, r.n) == (1, False, 3)


def test_arguments_are_checked():
    with pytest.raises(InputError, match=r"^alpha must be a number in \[0, 1\]; got 2$"):
        clustered_t_test(SLEEP_1, SLEEP_2, EQUAL, alpha=2)
    with pytest.raises(InputError, match=r"^confidence must be a number in \(0, 1\); got 1$"):
        clustered_t_test(SLEEP_1, SLEEP_2, EQUAL, confidence=1)
    with pytest.raises(InputError, match=r"^a must not contain NaN; found one at position 0$"):
        clustered_t_test([math.nan] * 10, SLEEP_2, EQUAL)


def test_result_row_stacks_with_other_tests():
    row = clustered_t_test(SLEEP_1, SLEEP_2, UNEQUAL).to_frame()
    assert list(row.columns) == ["test", "n", "statistic", "p_value", "df", "se", "ci_low", "ci_high", "clusters",
                                 "significant", "mean_difference", "kind"]
    assert row.loc[0, "test"] == "clustered-t"


def test_large_input_is_fast():
    rng = np.random.default_rng(0)
    g = rng.integers(0, 1000, 100_000)
    a, b = rng.normal(size=100_000) + rng.normal(0, 0.3, 1000)[g], rng.normal(size=100_000)
    clustered_t_test(a, b, g)  # scipy imported once
    seconds = []
    for _ in range(3):  # the best of three, so a busy machine does not fail it
        start = time.perf_counter()
        clustered_t_test(a, b, g)
        cluster_se(a - b, g, kind="CR1")
        seconds.append(time.perf_counter() - start)
    assert min(seconds) < 0.1  # about 5 ms on an idle machine
