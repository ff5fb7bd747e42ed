"""clustered_mcnemar_test against R's clust.bin.pair 0.1.2 and the values Durkalski et al. (2003) and Yang et al. (2010) publish.

clust.bin.pair is not in Debian; it was installed from its CRAN sources into a
private library (``R CMD INSTALL -l /tmp/rlib``) to compute each number once.
The data sets are its ``thyroids`` (Obuchowski 1998: PET and SPECT on the glands
of 21 patients) and ``psychiatry`` (Donner & Petryshen 1989: 29 psychiatrists
and their 135 patients), unnested to one row per unit.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest

from cogeval.errors import InputError
from cogeval.stats import ClusteredMcNemarResult, Interval, clustered_flips, clustered_mcnemar_test, mcnemars_test

# R: tc <- nested.to.contingency(thyroids$x.pet, thyroids$x.spect); rows (ak, bk, ck, dk), ak = both 1,
# bk = PET 1 and SPECT 0, ck = PET 0 and SPECT 1, dk = both 0
THYROIDS = [(0, 0, 2, 1), (2, 0, 1, 0), (3, 0, 0, 0), (1, 0, 0, 0), (2, 0, 1, 0), (4, 0, 0, 0), (3, 0, 0, 0),
            (2, 0, 0, 0), (1, 1, 0, 0), (1, 0, 0, 0), (2, 0, 0, 1), (2, 0, 0, 0), (3, 0, 0, 0), (2, 0, 0, 0),
            (0, 0, 2, 0), (2, 0, 0, 1), (2, 0, 0, 1), (2, 0, 1, 0), (2, 0, 0, 0), (1, 0, 0, 0), (2, 0, 0, 0)]
# R: psychiatry[, c("ah", "bh", "ch", "dh")]; bh = patient 1 and psychiatrist 0, ch = patient 0 and psychiatrist 1
PSYCHIATRY = [(1, 0, 4, 2), (1, 1, 2, 2), (3, 1, 3, 0), (2, 1, 2, 1), (2, 0, 1, 1), (0, 3, 3, 0), (0, 3, 0, 2),
              (0, 3, 2, 3), (0, 1, 2, 1), (0, 0, 4, 3), (1, 0, 2, 0), (1, 1, 4, 0), (1, 0, 3, 3), (2, 0, 2, 2),
              (2, 0, 1, 2), (1, 0, 3, 0), (2, 0, 1, 3), (1, 0, 2, 2), (0, 3, 0, 1), (2, 1, 0, 0), (1, 1, 0, 3),
              (0, 2, 2, 0), (1, 0, 1, 2), (0, 0, 2, 0), (0, 0, 2, 1), (0, 0, 0, 2), (0, 0, 0, 2), (1, 0, 1, 1),
              (0, 0, 1, 0)]


def units(table):
    """(a, b, clusters) with one row per unit from per-cluster counts (both 1, a only, b only, both 0)."""
    a, b, g = [], [], []
    for k, counts in enumerate(table):
        for (x, y), count in zip([(1, 1), (1, 0), (0, 1), (0, 0)], counts):
            a += [x] * count
            b += [y] * count
            g += [f"cluster-{k}"] * count
    return np.array(a), np.array(b), np.array(g)


def brute_force_p(sums):
    """P(|Σ ε_k S_k| >= |Σ S_k|) over all 2^G sign vectors, by listing them."""
    sums = np.asarray(sums, dtype=float)
    observed = abs(sums.sum())
    hits = sum(abs(np.dot(signs, sums)) >= observed - 1e-9 for signs in itertools.product([1, -1], repeat=len(sums)))
    return hits / 2 ** len(sums)


@pytest.mark.parametrize(("table", "method", "statistic", "p_value"), [
    # R: clust.bin.pair(tc$ak, tc$bk, tc$ck, tc$dk, method = m)$statistic, $p.value
    (THYROIDS, "obuchowski", 2.85714285714286, 0.0909689479753576),
    (THYROIDS, "durkalski", 2.31506849315068, 0.128125656744295),
    (THYROIDS, "yang", 3.13165974354344, 0.0767855289629937),
    # R: with(psychiatry, clust.bin.pair(ah, bh, ch, dh, method = m))
    (PSYCHIATRY, "obuchowski", 7.1858407079646, 0.0073481114682773),
    (PSYCHIATRY, "durkalski", 7.5422668704764, 0.00602681705857311),
    (PSYCHIATRY, "yang", 8.4285592646689, 0.00369372897391596),
])
def test_chi_square_methods_match_clust_bin_pair(table, method, statistic, p_value):
    a, b, g = units(table)
    r = clustered_mcnemar_test(a, b, g, method=method, exact=False)
    assert isinstance(r, ClusteredMcNemarResult)
    assert r.statistic == pytest.approx(statistic, rel=1e-13)
    assert r.p_value == pytest.approx(p_value, rel=1e-11)
    assert (r.method, r.exact, r.test) == (method, False, "clustered-mcnemar")


def test_published_values():
    # Durkalski et al. (2003) and Yang et al. (2010), as clust.bin.pair's tests quote them: thyroids Obuchowski
    # 2.86 (Obuchowski 1998 printed 2.88), Durkalski 2.32, Yang 3.13, McNemar 4.5; psychiatry Obuchowski 7.19,
    # Durkalski 7.542, Yang 8.43, McNemar 11.8451
    published = {("thyroids", "obuchowski"): (2.86, 2), ("thyroids", "durkalski"): (2.32, 2),
                 ("thyroids", "yang"): (3.13, 2), ("psychiatry", "obuchowski"): (7.19, 2),
                 ("psychiatry", "durkalski"): (7.542, 3), ("psychiatry", "yang"): (8.43, 2)}
    tables = {"thyroids": THYROIDS, "psychiatry": PSYCHIATRY}
    for (name, method), (value, digits) in published.items():
        a, b, g = units(tables[name])
        assert round(clustered_mcnemar_test(a, b, g, method=method, exact=False).statistic, digits) == value
    # McNemar's uncorrected statistic of the pooled table: mcnemars_test(b, c, correction=False)
    for name, value in (("thyroids", 4.5), ("psychiatry", 11.8451)):
        r = clustered_mcnemar_test(*units(tables[name]), exact=False)
        assert round(mcnemars_test(*r.discordant, correction=False).chi_square, 4) == value


def test_counts_and_fields():
    a, b, g = units(PSYCHIATRY)
    r = clustered_mcnemar_test(a, b, g)
    assert (r.n, r.clusters, r.discordant) == (135, 29, (21, 50))  # R: sum(psychiatry$bh), sum(psychiatry$ch)
    assert r.mean_difference == pytest.approx((21 - 50) / 135)
    assert r.exact is False  # 25 psychiatrists have bh != ch: not fewer than 25
    assert r.significant is True
    row = r.to_frame()
    assert list(row.columns) == ["test", "n", "statistic", "p_value", "ci_low", "ci_high", "method", "exact",
                                 "clusters", "significant", "mean_difference", "discordant"]


def test_few_discordant_clusters_use_the_exact_sign_flip_test():
    a, b, g = units(THYROIDS)  # six patients with S_k != 0: (-2, -1, -1, 1, -2, -1)
    r = clustered_mcnemar_test(a, b, g)
    assert (r.exact, r.test) == (True, "clustered-mcnemar-exact")
    assert r.p_value == pytest.approx(brute_force_p([-2, -1, -1, 1, -2, -1]), abs=1e-15)
    assert r.p_value == 10 / 64  # ten of the 64 sign patterns give |T*| >= |-6|
    assert r.statistic == pytest.approx(3.13165974354344, rel=1e-13)  # the yang statistic is still reported


def test_exact_p_values_equal_brute_force_enumeration():
    rng = np.random.default_rng(2)
    for _ in range(60):
        clusters = int(rng.integers(1, 11))
        g = rng.integers(0, clusters, 40)
        a = (rng.random(40) < rng.uniform(0.2, 0.8)).astype(int)
        b = (rng.random(40) < rng.uniform(0.2, 0.8)).astype(int)
        r = clustered_mcnemar_test(a, b, g, exact=True)
        sums = np.bincount(np.unique(g, return_inverse=True)[1], weights=a - b)
        assert r.p_value == pytest.approx(brute_force_p(sums), abs=1e-14)


def test_singleton_clusters_reduce_to_mcnemar():
    rng = np.random.default_rng(4)
    for n in (12, 30, 80, 300):
        a = (rng.random(n) < 0.55).astype(int)
        b = (rng.random(n) < 0.45).astype(int)
        cases = range(n)
        r = clustered_mcnemar_test(a, b, cases, exact=True)
        bb, cc = r.discordant
        assert r.p_value == pytest.approx(mcnemars_test(bb, cc, exact=True).p_value, rel=1e-12)  # binom.test(b, b + c)
        durkalski = clustered_mcnemar_test(a, b, cases, method="durkalski", exact=False)
        assert durkalski.statistic == pytest.approx((bb - cc) ** 2 / (bb + cc), rel=1e-13)
        assert durkalski.statistic == pytest.approx(mcnemars_test(bb, cc, correction=False).chi_square, rel=1e-13)
        obuchowski = clustered_mcnemar_test(a, b, cases, method="obuchowski", exact=False)
        assert obuchowski.statistic == pytest.approx((n - 1) / n * (bb - cc) ** 2 / (bb + cc), rel=1e-13)
        yang = clustered_mcnemar_test(a, b, cases, exact=False)
        assert yang.statistic == pytest.approx((n - 1) / n * (bb - cc) ** 2 / ((bb + cc) - (bb - cc) ** 2 / (2 * n)),
                                               rel=1e-13)


@pytest.mark.parametrize(("method", "exact"), [("yang", False), ("obuchowski", False), ("durkalski", False),
                                               ("yang", True)])  # the exact test does not depend on the method
def test_interval_excludes_zero_exactly_when_p_is_below_the_level(method, exact):
    rng = np.random.default_rng(17)
    for _ in range(150 if not exact else 80):
        n = int(rng.integers(5, 120))
        g = rng.integers(0, int(rng.integers(2, 40)), n)
        effect = rng.normal(0, 0.15)
        a = (rng.random(n) < 0.5 + effect).astype(int)
        b = (rng.random(n) < 0.5 - effect).astype(int)
        confidence = float(rng.choice([0.8, 0.9, 0.95]))
        r = clustered_mcnemar_test(a, b, g, method=method, exact=exact, confidence=confidence)
        assert -1 <= r.ci.low <= r.ci.high <= 1
        assert (r.ci.low > 0 or r.ci.high < 0) == (r.p_value < 1 - confidence), (r, n)
        if not exact and r.statistic > 0:
            centre = r.mean_difference if method != "durkalski" else None
            if centre is not None:
                assert r.ci.low <= centre <= r.ci.high


def test_chi_square_interval_ends_are_where_the_statistic_reaches_the_critical_value():
    from scipy import stats

    a, b, g = units(PSYCHIATRY)
    r = clustered_mcnemar_test(a, b, g, method="obuchowski")
    # Obuchowski's statistic of the shifted cluster sums S_k - n_k·δ, by hand
    sums = np.array([bk - ck for _, bk, ck, _ in PSYCHIATRY], dtype=float)
    sizes = np.array([sum(row) for row in PSYCHIATRY], dtype=float)
    chi = [28 / 29 * (sums - sizes * end).sum() ** 2 / ((sums - sizes * end) ** 2).sum() for end in r.ci]
    assert chi == pytest.approx([stats.chi2.isf(0.05, 1)] * 2, rel=1e-9)


def test_exact_interval_is_reproducible_and_seeded():
    a, b, g = units(THYROIDS)
    first = clustered_mcnemar_test(a, b, g, seed=1)
    assert clustered_mcnemar_test(a, b, g, seed=1).ci == first.ci
    assert isinstance(first.ci, Interval)
    assert first.ci.low > -1 and first.ci.high < 0.2


def test_monte_carlo_when_enumeration_is_infeasible(monkeypatch):
    rng = np.random.default_rng(8)
    g = rng.integers(0, 60, 600)
    a = (rng.random(600) < 0.55).astype(int)
    b = (rng.random(600) < 0.5).astype(int)
    exact = clustered_mcnemar_test(a, b, g, exact=True)
    monkeypatch.setattr(clustered_flips, "_EXACT_LIMIT", 0.0)
    monkeypatch.setattr(clustered_flips, "_CONVOLUTION_LIMIT", 0.0)
    sampled = clustered_mcnemar_test(a, b, g, exact=True, seed=3)
    assert sampled.p_value == clustered_mcnemar_test(a, b, g, exact=True, seed=3).p_value
    assert sampled.p_value == pytest.approx(exact.p_value, abs=0.02)
    assert (sampled.p_value * 10_001) == pytest.approx(round(sampled.p_value * 10_001))  # (1 + hits) / (1 + draws)


def test_no_discordant_unit_gives_statistic_zero_and_p_one():
    a = [1, 0, 1, 1, 0, 0]
    for exact in (False, True):
        r = clustered_mcnemar_test(a, a, ["x", "x", "y", "y", "z", "z"], exact=exact)
        assert (r.statistic, r.p_value, r.significant, r.discordant) == (0.0, 1.0, False, (0, 0))


def test_fewer_than_two_clusters():
    with pytest.warns(UserWarning, match=r"^clustered_mcnemar_test needs at least 2 clusters; got 1: the result is NaN$"):
        r = clustered_mcnemar_test([1, 1, 0], [0, 0, 0], ["x"] * 3, exact=False)
    assert math.isnan(r.statistic) and math.isnan(r.p_value)
    r = clustered_mcnemar_test([1, 1, 0], [0, 0, 0], ["x"] * 3)  # exact: a single cluster's sign flip is no evidence
    assert (r.exact, r.p_value) == (True, 1.0)


def test_inputs_are_checked():
    with pytest.raises(InputError, match=r"^b must hold only 0 and 1; got 0.5 at position 2$"):
        clustered_mcnemar_test([1, 0, 1], [1, 0, 0.5], [1, 2, 3])
    with pytest.raises(InputError, match=r"^method must be one of 'yang', 'obuchowski', 'durkalski'; got 'eliasziw'$"):
        clustered_mcnemar_test([1, 0], [0, 0], [1, 2], method="eliasziw")
    with pytest.raises(InputError, match=r"^a and b must be paired \(the same length\); got 3 and 2 values$"):
        clustered_mcnemar_test([1, 0, 1], [0, 0], [1, 2, 3])
    with pytest.raises(InputError, match=r"^clusters must give one label per unit; got 2 labels for 3 units$"):
        clustered_mcnemar_test([1, 0, 1], [0, 0, 1], [1, 2])
    with pytest.raises(InputError, match=r"^exact must be True, False or None; got 'yes'$"):
        clustered_mcnemar_test([1, 0], [0, 0], [1, 2], exact="yes")
    assert clustered_mcnemar_test([True, False], [False, False], [1, 2], method="YANG").method == "yang"


def test_large_input_is_fast():
    rng = np.random.default_rng(0)
    g = rng.integers(0, 1000, 100_000)
    a = (rng.random(100_000) < 0.7).astype(float)
    b = (rng.random(100_000) < 0.69).astype(float)
    clustered_mcnemar_test(a, b, g)  # scipy imported once
    for method in ("yang", "obuchowski", "durkalski"):
        seconds = []
        for _ in range(3):  # the best of three, so a busy machine does not fail it
            start = time.perf_counter()
            r = clustered_mcnemar_test(a, b, g, method=method)
            seconds.append(time.perf_counter() - start)
        assert min(seconds) < 0.1  # about 2 ms on an idle machine
        assert r.exact is False


@pytest.mark.parametrize("exact", [True, False])
def test_confidence_none_gives_the_same_test_without_an_interval(exact):
    rng = np.random.default_rng(4)
    a, b, g = rng.integers(0, 2, 80), rng.integers(0, 2, 80), np.repeat(np.arange(16), 5)
    full = clustered_mcnemar_test(a, b, g, exact=exact)
    alone = clustered_mcnemar_test(a, b, g, exact=exact, confidence=None)
    assert (alone.statistic, alone.p_value, alone.exact) == (full.statistic, full.p_value, full.exact)
    assert math.isnan(alone.ci.low) and math.isnan(alone.ci.high)
