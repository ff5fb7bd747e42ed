"""clustered_wilcoxon_test against R's clusrank 1.0-4 (normal paths) and brute-force enumeration (exact path).

clusrank is not in Debian; it was installed from its CRAN sources into a private
library (``R CMD INSTALL -l /tmp/rlib``) to compute each number once. Its data
sets are ``crsd`` (20 clusters of 2) and ``crsdUnb`` (unequal clusters), from
Rosner's sample data. clusrank's exact path is not a reference (it never counts
a score of 1 and its upper tail is off by one): exact p-values are checked
against listing all 2^G sign patterns here.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest
from scipy import stats

from cogeval.errors import InputError
from cogeval.stats import ClusteredWilcoxonResult, clustered_wilcoxon_test, wilcoxon_interval, wilcoxon_test
from tests.stats.test_clustered import UNB_ID, UNB_Z

# R: data(crsd, package = "clusrank"); crsd$z, crsd$id
CRSD_Z = [1.4052, 6.1523, 1.0391, -1.3904, -1.1344, 5.2481, 1.7378, -24.3555, -1.9616, -1.501, -1.6034, -2.8387, 1.3581,
          -1.7799, -1.3515, 1.9111, -1.4412, -1.5097, -1.5473, 2.7537, -2.1795, -4.4136, -3.3840, -3.3624, 10.8053,
          4.3206, 5.4009, -1.1826, -1.355, -2.5307, 1.2694, -1.9784, 1.2852, 12.4491, 1.1235, -2.3626, -2.1383, -4.3457,
          1.6196, 1.8914]
CRSD_ID = [k for k in range(1, 21) for _ in range(2)]

# Hollander & Wolfe (1973), p. 29, the depression example of R's ?wilcox.test
HW_X = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
HW_Y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]


def brute_force_p(d, clusters):
    """The sign-flip p-value of the cluster sums of the signed ranks of d (zeros dropped), listing all patterns."""
    d, clusters = np.asarray(d, dtype=float), np.asarray(clusters)
    keep = d != 0
    ranks = stats.rankdata(np.abs(d[keep])) * np.sign(d[keep])
    sums = np.array([ranks[clusters[keep] == k].sum() for k in np.unique(clusters[keep])])
    observed = abs(sums.sum())
    hits = sum(abs(np.dot(s, sums)) >= observed - 1e-9 for s in itertools.product([1, -1], repeat=len(sums)))
    return hits / 2 ** len(sums)


@pytest.mark.parametrize(("z", "ids", "method", "statistic", "p_value"), [
    # R: clusWilcox.test(z, cluster = id, data = crsd, paired = TRUE, method = m)  (balanced: 20 clusters of 2)
    (CRSD_Z, CRSD_ID, "rgl", -0.633209552673461, 0.526596808378066),
    (CRSD_Z, CRSD_ID, "ds", -0.643001211399161, 0.520223313837673),
    # R: the same with z = round(crsd$z): ties and zeros
    (list(np.round(CRSD_Z)), CRSD_ID, "rgl", -0.549031179713492, 0.582984052472212),
    (list(np.round(CRSD_Z)), CRSD_ID, "ds", -0.563672960711664, 0.572976722510339),
    # R: clusWilcox.test(z, cluster = id, data = sub, paired = TRUE, method = m), sub = four crsdUnb clusters of each
    #    size 2..6 (tests/stats/test_clustered.py UNB_Z): unbalanced, RGL's intraclass-weighted version
    (UNB_Z, UNB_ID, "rgl", -0.601487932266849, 0.54751504710066),
    (UNB_Z, UNB_ID, "ds", -0.596216086552709, 0.551030880417542),
    # R: clusWilcox.test(round(sub$z), cluster = sub$id, paired = TRUE, method = m)
    (list(np.round(UNB_Z)), UNB_ID, "rgl", -0.665899289949917, 0.505475474398663),
    (list(np.round(UNB_Z)), UNB_ID, "ds", -0.72944640280545, 0.465728641923137),
])
def test_normal_paths_match_clusrank(z, ids, method, statistic, p_value):
    r = clustered_wilcoxon_test(z, [0] * len(z), ids, method=method, exact=False)
    assert isinstance(r, ClusteredWilcoxonResult)
    assert r.statistic == pytest.approx(statistic, rel=1e-12)
    assert r.p_value == pytest.approx(p_value, rel=1e-12)
    assert (r.method, r.exact, r.test, r.n) == (method, False, "clustered-wilcoxon", len(z))


def test_cluster_order_does_not_matter():
    # clusrank's ds slices the units by cumulative cluster size, so it needs them sorted by cluster; this does not
    order = np.random.default_rng(1).permutation(len(UNB_Z))
    for method in ("rgl", "ds"):
        shuffled = clustered_wilcoxon_test(np.array(UNB_Z)[order], np.zeros(len(UNB_Z)), np.array(UNB_ID)[order],
                                           method=method, exact=False)
        assert shuffled.statistic == pytest.approx(clustered_wilcoxon_test(UNB_Z, [0] * 74, UNB_ID, method=method,
                                                                           exact=False).statistic, rel=1e-12)


def test_singletons_rgl_is_the_uncorrected_normal_signed_rank_test():
    # R: wilcox.test(x, y, paired = TRUE, exact = FALSE, correct = FALSE)$p.value -> 0.0381517101734152
    # R: clusWilcox.test(x - y, cluster = 1:9, paired = TRUE, method = "rgl"): Z = 2.0732210721568229
    r = clustered_wilcoxon_test(HW_X, HW_Y, range(9), exact=False)
    assert r.statistic == pytest.approx(2.0732210721568229, rel=1e-12)
    assert r.p_value == pytest.approx(0.0381517101734152, rel=1e-12)
    # and its interval is the Hodges–Lehmann interval of that test
    expected = wilcoxon_interval(HW_X, HW_Y, exact=False, correction=False)
    assert r.ci == pytest.approx(tuple(expected), abs=1e-8)


def test_singletons_exact_path_is_the_exact_signed_rank_test():
    rng = np.random.default_rng(6)
    for n in (5, 9, 16, 24):
        a, b = rng.normal(0.4, 1, n), rng.normal(size=n)
        for method in ("rgl", "ds"):
            r = clustered_wilcoxon_test(a, b, range(n), method=method)
            assert r.exact is True and r.test == "clustered-wilcoxon-exact"
            assert r.p_value == pytest.approx(wilcoxon_test(a, b, exact=True).p_value, rel=1e-12)
        assert r.ci == pytest.approx(tuple(wilcoxon_interval(a, b, exact=True)), abs=1e-8)


def test_exact_p_values_equal_brute_force_enumeration():
    rng = np.random.default_rng(9)
    for _ in range(25):
        g = rng.integers(0, int(rng.integers(1, 11)), 30)
        d = np.round(rng.normal(0.3, 1, 30), 1)  # ties and zeros
        r = clustered_wilcoxon_test(d, np.zeros(30), g, exact=True)
        assert r.p_value == pytest.approx(brute_force_p(d, g), abs=1e-14)
    # balanced crsd: 20 clusters, so exact by default
    r = clustered_wilcoxon_test(CRSD_Z, [0] * 40, CRSD_ID)
    assert r.exact is True
    assert r.p_value == pytest.approx(brute_force_p(CRSD_Z, CRSD_ID), abs=1e-14)
    assert r.statistic == pytest.approx(-0.633209552673461, rel=1e-12)  # Σ R_k / √(Σ R_k²): RGL's balanced Z


def test_ds_exact_path_flips_its_own_cluster_scores():
    # Datta–Satten's cluster scores depend on the signs only through a sign per unit, so flipping a whole cluster
    # flips its score; the exact p-value is the share of the 2^G flipped data sets whose score sum is as extreme
    from cogeval.stats.clustered import _cluster_codes
    from cogeval.stats.clustered_rank import _ds, _Shifted

    rng = np.random.default_rng(12)
    g = np.repeat(np.arange(8), rng.integers(1, 5, 8))
    d = rng.normal(0.5, 1, len(g))
    groups = _cluster_codes(g, len(g))

    def score_sum(values):
        return _ds(_Shifted(values, groups), 0.0)[0].sum()

    observed = abs(score_sum(d))
    hits = sum(abs(score_sum(d * np.array(s)[g])) >= observed - 1e-9 for s in itertools.product([1, -1], repeat=8))
    r = clustered_wilcoxon_test(d, np.zeros(len(d)), g, method="ds")
    assert r.exact is True
    assert r.p_value == pytest.approx(hits / 256, abs=1e-14)


@pytest.mark.parametrize(("method", "exact"), [("rgl", False), ("ds", False), ("rgl", True), ("ds", True)])
def test_interval_excludes_zero_exactly_when_p_is_below_the_level(method, exact):
    rng = np.random.default_rng(21)
    for _ in range(60 if not exact else 25):
        n = int(rng.integers(6, 60))
        g = rng.integers(0, int(rng.integers(2, 30)), n)
        d = rng.normal(rng.normal(0, 0.5), 1, n) + rng.normal(0, 0.5, 30)[g]
        confidence = float(rng.choice([0.8, 0.9, 0.95]))
        r = clustered_wilcoxon_test(d, np.zeros(n), g, method=method, exact=exact, confidence=confidence)
        assert r.ci.low <= r.ci.high
        assert (r.ci.low > 0 or r.ci.high < 0) == (r.p_value < 1 - confidence), (r, n)


def test_monte_carlo_is_seeded(monkeypatch):
    from cogeval.stats import clustered_flips

    rng = np.random.default_rng(2)
    g = rng.integers(0, 60, 300)
    d = rng.normal(0.1, 1, 300)
    exact = clustered_wilcoxon_test(d, np.zeros(300), g, exact=True)
    monkeypatch.setattr(clustered_flips, "_EXACT_LIMIT", 0.0)
    monkeypatch.setattr(clustered_flips, "_CONVOLUTION_LIMIT", 0.0)
    first = clustered_wilcoxon_test(d, np.zeros(300), g, exact=True, seed="nightly")
    assert first.p_value == clustered_wilcoxon_test(d, np.zeros(300), g, exact=True, seed="nightly").p_value
    assert first.p_value == pytest.approx(exact.p_value, abs=0.02)
    assert first.p_value * 10_001 == pytest.approx(round(first.p_value * 10_001))  # (1 + hits) / (1 + draws)


def test_all_differences_zero_gives_p_one():
    for exact in (False, True):
        r = clustered_wilcoxon_test([0.3, 0.5, 0.1, 0.2], [0.3, 0.5, 0.1, 0.2], ["a", "a", "b", "c"], exact=exact)
        assert (r.statistic, r.p_value, r.significant) == (0.0, 1.0, False)


def test_fewer_than_two_clusters():
    with pytest.warns(UserWarning, match=r"^clustered_wilcoxon_test needs at least 2 clusters; got 1: the result is NaN$"):
        r = clustered_wilcoxon_test([1.0, 2.0, -0.5], [0.0, 0.0, 0.0], [5, 5, 5], exact=False)
    assert math.isnan(r.statistic) and math.isnan(r.p_value)
    r = clustered_wilcoxon_test([1.0, 2.0, -0.5], [0.0, 0.0, 0.0], [5, 5, 5])
    assert (r.exact, r.p_value) == (True, 1.0)


def test_inputs_are_checked():
    with pytest.raises(InputError, match=r"^method must be one of 'rgl', 'ds'; got 'dd'$"):
        clustered_wilcoxon_test([1.0, 2.0], [0.0, 0.0], [1, 2], method="dd")
    with pytest.raises(InputError, match=r"^clusters must give every unit a label; position 1 has None$"):
        clustered_wilcoxon_test([1.0, 2.0], [0.0, 0.0], [1, None])
    with pytest.raises(InputError, match=r"^seed must be None, an integer >= 0, a string or a numpy Generator; got -2$"):
        clustered_wilcoxon_test([1.0, 2.0], [0.0, 0.0], [1, 2], seed=-2)
    assert clustered_wilcoxon_test([1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [1, 2, 2], method="RGL").method == "rgl"


def test_result_row():
    row = clustered_wilcoxon_test(CRSD_Z, [0] * 40, CRSD_ID).to_frame()
    assert list(row.columns) == ["test", "n", "statistic", "p_value", "ci_low", "ci_high", "method", "exact",
                                 "clusters", "significant"]
    assert row.loc[0, "clusters"] == 20


@pytest.mark.parametrize("method", ["rgl", "ds"])
def test_large_input_with_its_interval_is_fast(method):
    rng = np.random.default_rng(0)
    g = rng.integers(0, 1000, 100_000)
    a, b = rng.normal(size=100_000) + rng.normal(0, 0.3, 1000)[g], rng.normal(size=100_000)
    clustered_wilcoxon_test(a[:100], b[:100], g[:100])  # scipy imported once
    seconds = []
    for _ in range(2):  # the best of two, so a busy machine does not fail it
        start = time.perf_counter()
        r = clustered_wilcoxon_test(a, b, g, method=method)
        seconds.append(time.perf_counter() - start)
    assert min(seconds) < (1.0 if method == "rgl" else 1.5)  # about 0.3 s and 0.5 s on an idle machine
    assert r.exact is False and r.ci.low < r.ci.high


@pytest.mark.parametrize("exact", [True, False])
def test_confidence_none_gives_the_same_test_without_an_interval(exact):
    rng = np.random.default_rng(3)
    d, g = rng.normal(0.2, 1, 60), np.repeat(np.arange(12), 5)
    full = clustered_wilcoxon_test(d, np.zeros(60), g, exact=exact)
    alone = clustered_wilcoxon_test(d, np.zeros(60), g, exact=exact, confidence=None)
    assert (alone.statistic, alone.p_value, alone.exact) == (full.statistic, full.p_value, full.exact)
    assert math.isnan(alone.ci.low) and math.isnan(alone.ci.high)
