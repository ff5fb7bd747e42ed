"""bootstrap_ci of a mean from multinomial counts: the same bootstrap as index resampling, and as scipy's."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from cogeval.stats import bootstrap_ci, intervals

BINARY = (np.random.default_rng(1).random(400) < 0.3).astype(float)
THREE = np.random.default_rng(2).choice([-1.0, 0.0, 1.0], size=300, p=[0.2, 0.5, 0.3])  # paired 0/1 differences


@pytest.mark.parametrize("values", [BINARY, THREE], ids=["binary", "differences"])
def test_counts_give_the_distribution_of_index_resampling(values):
    # Two independent streams of 40,000 resampled means each: the two-sample KS test (conservative for
    # a discrete distribution) and the 2.5 / 50 / 97.5 % quantiles agree within Monte-Carlo error.
    distinct, counts = np.unique(values, return_counts=True)
    by_counts = intervals._resample_mean_counts(distinct, counts, 40_000, np.random.default_rng(3), 1 << 16)
    by_index = intervals._resample(values, np.mean, 40_000, np.random.default_rng(4), 1 << 16)
    assert stats.ks_2samp(by_counts, by_index).pvalue > 0.01
    step = 1 / len(values)  # resampled means lie on a grid of 1/n: one step is the quantiles' resolution
    np.testing.assert_allclose(np.quantile(by_counts, [0.025, 0.5, 0.975]),
                               np.quantile(by_index, [0.025, 0.5, 0.975]), atol=step)
    assert abs(by_counts.mean() - by_index.mean()) < 4 * values.std() / np.sqrt(len(values) * 20_000)


@pytest.mark.parametrize("values", [BINARY, THREE], ids=["binary", "differences"])
def test_counts_agree_with_scipy_bootstrap(values):
    # Independent reference: scipy.stats.bootstrap resamples indices; 100,000 resamples each, endpoints
    # within one grid step (1/n) of each other.
    ours = bootstrap_ci(values, n_resamples=100_000, seed=5)
    theirs = stats.bootstrap((values,), np.mean, method="percentile", n_resamples=100_000, rng=6).confidence_interval
    np.testing.assert_allclose(ours, theirs, atol=1 / len(values))


def test_counts_are_used_only_for_few_distinct_values(monkeypatch):
    def refuse(*args):
        raise AssertionError("index resampling was used")

    monkeypatch.setattr(intervals, "_resample", refuse)
    bootstrap_ci(BINARY, seed=0)  # 2 distinct values <= 400 // 16
    bootstrap_ci(np.arange(32.0) % 2, seed=0)  # 32 values: 2 <= 32 // 16
    for values, kwargs in [(np.arange(31.0) % 2, {}), (BINARY, {"method": "bca"}), (BINARY, {"statistic": "median"}),
                           (np.arange(400.0) % 26, {})]:  # 26 > 400 // 16 = 25 distinct values
        with pytest.raises(AssertionError, match="index resampling"):
            bootstrap_ci(values, seed=0, **kwargs)


def test_index_resampling_below_the_ratio_still_matches_scipy_draw_for_draw():
    values = (np.random.default_rng(7).random(20) < 0.5).astype(float)  # 2 > 20 // 16 distinct values
    ours = bootstrap_ci(values, n_resamples=5_000, seed=11)
    theirs = stats.bootstrap((values,), np.mean, method="percentile", n_resamples=5_000,
                             rng=np.random.default_rng(11)).confidence_interval
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_counts_do_not_depend_on_the_chunk_size(monkeypatch):
    results = []
    for chunk in (1, 3, 2 * 1_001 + 1, 10**9):
        monkeypatch.setattr(intervals, "CHUNK_ELEMENTS", chunk)
        results.append(bootstrap_ci(THREE, n_resamples=1_001, seed=5))
    assert all(result == results[0] for result in results)
