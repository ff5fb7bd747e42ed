"""bootstrap_ci and wilson_interval against scipy, statsmodels and Newcombe (1998)."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from cogeval.errors import InputError
from cogeval.stats import Interval, bootstrap_ci, intervals, wilson_interval

SKEWED = np.random.default_rng(3).exponential(size=40)

SCIPY_STATISTICS = [("mean", np.mean), ("median", np.median), (np.std, np.std)]


# --- bootstrap_ci: agreement with scipy.stats.bootstrap ----------------------------------------


@pytest.mark.parametrize(("method", "scipy_method"), [("percentile", "percentile"), ("bca", "BCa")])
@pytest.mark.parametrize(("statistic", "function"), SCIPY_STATISTICS)
def test_bootstrap_matches_scipy_for_the_same_generator(method, scipy_method, statistic, function):
    # scipy.stats.bootstrap (batch=None) draws rng.integers(0, n, (n_resamples, n)) once, the same
    # stream bootstrap_ci draws chunk by chunk, so with the same seed both see the same resamples
    # and must agree to rounding.
    ours = bootstrap_ci(SKEWED, statistic=statistic, method=method, n_resamples=5_000, seed=11)
    theirs = stats.bootstrap(
        (SKEWED,), function, method=scipy_method, n_resamples=5_000, rng=np.random.default_rng(11)
    ).confidence_interval
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)


@pytest.mark.parametrize(("method", "scipy_method"), [("percentile", "percentile"), ("bca", "BCa")])
@pytest.mark.parametrize(("statistic", "function"), [("mean", np.mean), (np.std, np.std)])
def test_bootstrap_agrees_with_scipy_on_independent_streams(method, scipy_method, statistic, function):
    # Different random streams, many resamples: a smooth statistic agrees to about 1e-2 relative.
    ours = bootstrap_ci(SKEWED, statistic=statistic, method=method, n_resamples=100_000, seed=1)
    theirs = stats.bootstrap(
        (SKEWED,), function, method=scipy_method, n_resamples=100_000, rng=2
    ).confidence_interval
    np.testing.assert_allclose(ours, theirs, rtol=1e-2)


def test_bootstrap_median_is_the_quantile_of_resampled_medians():
    values = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
    indices = np.random.default_rng(7).integers(0, len(values), size=(2_000, len(values)))
    expected = np.quantile(np.median(values[indices], axis=1), [0.05, 0.95])
    assert bootstrap_ci(values, statistic="median", confidence=0.9, n_resamples=2_000, seed=7) == tuple(expected)


def test_bootstrap_callable_statistic_over_an_axis():
    def trimmed_mean(sample, axis):
        return stats.trim_mean(sample, 0.1, axis=axis)

    low, high = bootstrap_ci(SKEWED, statistic=trimmed_mean, n_resamples=2_000, seed=1)
    assert low < stats.trim_mean(SKEWED, 0.1) < high


# --- bootstrap_ci: determinism and chunking ------------------------------------------------------


def test_bootstrap_is_reproducible_for_a_seed_and_differs_for_another():
    first = bootstrap_ci(SKEWED, n_resamples=1_000, seed=42)
    assert bootstrap_ci(SKEWED, n_resamples=1_000, seed=42) == first
    assert bootstrap_ci(SKEWED, n_resamples=1_000, seed=43) != first
    assert bootstrap_ci(SKEWED, n_resamples=1_000, seed=np.random.default_rng(42)) == first


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("statistic", ["mean", "median", np.std])
def test_bootstrap_does_not_depend_on_the_chunk_size(monkeypatch, method, statistic):
    values = np.random.default_rng(5).normal(size=37)
    results = []
    for chunk in (1, 37, 37 * 5 + 3, 10**9):  # one resample per chunk ... everything in one chunk
        monkeypatch.setattr(intervals, "CHUNK_ELEMENTS", chunk)
        results.append(bootstrap_ci(values, statistic=statistic, method=method, n_resamples=1_001, seed=5))
    assert all(result == results[0] for result in results)


def test_bootstrap_memory_is_bounded_by_the_chunk(monkeypatch):
    values = np.random.default_rng(0).normal(size=2_000)
    monkeypatch.setattr(intervals, "CHUNK_ELEMENTS", 1 << 16)
    tracemalloc.start()
    bootstrap_ci(values, n_resamples=5_000, seed=0)  # 10 million elements unchunked: 160 MB of indices and values
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 5_000_000


# --- bootstrap_ci: edge cases --------------------------------------------------------------------


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_bootstrap_constant_data_gives_the_constant_exactly(method, statistic):
    assert bootstrap_ci([0.1] * 7, statistic=statistic, method=method, seed=0) == Interval(0.1, 0.1)


def test_bootstrap_constant_data_with_a_callable_gives_its_value():
    assert bootstrap_ci([2.5] * 4, statistic=np.std, method="bca") == (0.0, 0.0)


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_one_value(method):
    assert bootstrap_ci([3.25], method=method) == (3.25, 3.25)


def test_bootstrap_returns_an_ordered_interval_of_floats_and_accepts_a_series():
    interval = bootstrap_ci(pd.Series(SKEWED), n_resamples=500, seed=0)
    assert isinstance(interval, Interval)
    assert type(interval.low) is float and interval.low < SKEWED.mean() < interval.high


def test_bootstrap_wider_at_higher_confidence():
    narrow = bootstrap_ci(SKEWED, confidence=0.8, n_resamples=2_000, seed=0)
    wide = bootstrap_ci(SKEWED, confidence=0.99, n_resamples=2_000, seed=0)
    assert wide.low < narrow.low < narrow.high < wide.high


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"values": [1.0, math.nan]}, "values must not contain NaN; found one at position 1"),
        ({"values": []}, "values must hold at least one number; got none"),
        ({"values": [1, 2], "method": "bootstrap-t"}, "method must be one of 'percentile', 'bca'; got 'bootstrap-t'"),
        ({"values": [1, 2], "statistic": "mode"}, "statistic must be one of 'mean', 'median'; got 'mode'"),
        ({"values": [1, 2], "confidence": 95}, "confidence must be a number in (0, 1); got 95"),
        ({"values": [1, 2], "n_resamples": 0}, "n_resamples must be an integer >= 1; got 0"),
        ({"values": [1, 2], "seed": 1.5}, "seed must be None, an integer >= 0, a string or a numpy Generator; got 1.5"),
    ],
)
def test_bootstrap_bad_input_names_the_argument(kwargs, message):
    values = kwargs.pop("values")
    with pytest.raises(InputError) as caught:
        bootstrap_ci(values, **kwargs)
    assert str(caught.value) == message


def test_bootstrap_callable_must_reduce_along_the_axis():
    with pytest.raises(InputError, match="statistic must reduce an array along axis=-1"):
        bootstrap_ci([1.0, 2.0, 3.0], statistic=lambda sample, axis: sample)


def test_bca_undefined_levels_give_nan_like_scipy():
    # Distinct values of a resample are almost never all 10, so every resample lies below the observed statistic.
    def distinct(sample, axis):
        return (np.diff(np.sort(sample, axis=axis), axis=axis) != 0).sum(axis=axis)

    low, high = bootstrap_ci(np.arange(10.0), statistic=distinct, method="bca", n_resamples=1_000, seed=0)
    assert math.isnan(low) and math.isnan(high)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_coverage_of_the_mean(method):
    # 1,000 normal samples of n = 30, 2,000 resamples each. The percentile interval of the mean is
    # about mean ± z·sd·sqrt((n-1)/n)/sqrt(n), so its coverage is P(|t_29| < 1.96·sqrt(29/30)) = 0.936
    # (too narrow: z instead of t, and the plug-in sd). The tolerance is 3 binomial standard errors
    # of a rate of 0.936 over 1,000 trials (0.0077 each): [0.913, 0.959].
    rng = np.random.default_rng(2024)
    samples = rng.normal(loc=1.0, scale=2.0, size=(1_000, 30))
    covered = [low <= 1.0 <= high for low, high in
               (bootstrap_ci(sample, n_resamples=2_000, method=method, seed=rng) for sample in samples)]
    expected = 2 * stats.t.cdf(stats.norm.ppf(0.975) * math.sqrt(29 / 30), 29) - 1
    tolerance = 3 * math.sqrt(expected * (1 - expected) / len(samples))
    assert abs(np.mean(covered) - expected) < tolerance


# --- wilson_interval ---------------------------------------------------------------------------

# Newcombe (1998), Stat Med 17:857-872, Table I (4 dp): methods 3 (Wilson) and 4 (continuity corrected).
NEWCOMBE = [
    (81, 263, (0.2553, 0.3662), (0.2535, 0.3682)),
    (15, 148, (0.0624, 0.1605), (0.0598, 0.1644)),
    (0, 20, (0.0000, 0.1611), (0.0000, 0.2005)),
    (1, 29, (0.0061, 0.1718), (0.0018, 0.1963)),
]


@pytest.mark.parametrize(("x", "n", "wilson", "corrected"), NEWCOMBE)
def test_wilson_matches_newcombe_table_1(x, n, wilson, corrected):
    np.testing.assert_allclose(wilson_interval(x, n), wilson, atol=5e-5)
    np.testing.assert_allclose(wilson_interval(x, n, correction=True), corrected, atol=5e-5)


@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
@pytest.mark.parametrize(("x", "n"), [(0, 1), (1, 1), (0, 10), (3, 10), (5, 10), (10, 10), (81, 263), (999, 1000)])
def test_wilson_matches_statsmodels(x, n, confidence):
    expected = proportion_confint(x, n, alpha=1 - confidence, method="wilson")
    np.testing.assert_allclose(wilson_interval(x, n, confidence=confidence), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("correction", [False, True])
def test_wilson_is_clamped_ordered_and_symmetric(correction):
    for n in range(1, 31):
        for x in range(n + 1):
            low, high = wilson_interval(x, n, correction=correction)
            assert 0 <= low <= x / n <= high <= 1
            mirror = wilson_interval(n - x, n, correction=correction)
            assert low == pytest.approx(1 - mirror.high) and high == pytest.approx(1 - mirror.low)


def test_wilson_correction_applies_at_half_unlike_r():
    # R's prop.test drops the correction at x = n/2 (YATES = min(0.5, abs(x - n*p))); we do not.
    plain, corrected = wilson_interval(10, 20), wilson_interval(10, 20, correction=True)
    assert corrected.low < plain.low and corrected.high > plain.high


def test_wilson_no_trials_gives_no_interval():
    low, high = wilson_interval(0, 0)
    assert math.isnan(low) and math.isnan(high)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((5, 4), {}, "successes must be at most n; got successes=5 and n=4"),
        ((-1, 4), {}, "successes must be an integer >= 0; got -1"),
        ((2.5, 4), {}, "successes must be an integer >= 0; got 2.5"),
        ((True, 4), {}, "successes must be an integer >= 0; got True"),
        ((1, 4.0), {}, "n must be an integer >= 0; got 4.0"),
        ((1, 4), {"confidence": 1.0}, "confidence must be a number in (0, 1); got 1.0"),
    ],
)
def test_wilson_bad_input_names_the_argument(args, kwargs, message):
    with pytest.raises(InputError) as caught:
        wilson_interval(*args, **kwargs)
    assert str(caught.value) == message


def test_wilson_accepts_numpy_integers():
    assert wilson_interval(np.int64(3), np.int32(10)) == wilson_interval(3, 10)
